"""Interval arithmetic on NumPy arrays, rounded outward.

An interval is a pair ``(lo, hi)`` of float64 arrays of one shape. Every operation rounds its
bounds outward with `numpy.nextafter` (the exact result of +, -, *, / lies within half an ulp of
the computed one, so one step outward encloses it; library functions (exp, log, sin, ...) are
within one ulp in glibc and get two steps), so an enclosure computed here holds for the exact
real values, not just up to round-off. Sums of m terms add the classical error bound
gamma_m * sum |x_i| (Higham, "Accuracy and Stability of Numerical Algorithms", 4.2), valid for
any summation order. With ``verified=False`` nothing is widened (faster, sound up to round-off,
as AutoBound is).

    >>> Intervals(verified=True).mul((np.array(0.1), np.array(0.1)), (np.array(3.0), np.array(3.0)))
    (array(0.3), array(0.30000000000000004))
"""
from __future__ import annotations

import math

import numpy as np

UNIT_ROUNDOFF = 2.0 ** -53
TINY = 2.0 ** -1074  # the smallest subnormal: bounds an underflowed product


def interval(value):
    """A point interval (the value, twice) as float64 arrays."""
    array = np.asarray(value, np.float64)
    return array, array


def gamma(count) -> float:
    """gamma_m = m u / (1 - m u): the relative error bound of a sum of m + 1 terms (of m operations)."""
    count = float(count)
    return count * UNIT_ROUNDOFF / (1.0 - count * UNIT_ROUNDOFF)


class Intervals:
    """Interval operations, rounded outward unless `verified` is False."""

    def __init__(self, verified: bool = True):
        self.verified = bool(verified)

    # --- rounding -------------------------------------------------------------------------------

    def down(self, x, steps: int = 1):
        if not self.verified:
            return x
        for _ in range(steps):
            x = np.nextafter(x, -np.inf)
        return x

    def up(self, x, steps: int = 1):
        if not self.verified:
            return x
        for _ in range(steps):
            x = np.nextafter(x, np.inf)
        return x

    def outward(self, lo, hi, steps: int = 1):
        """Round outward, and make NaN bounds (inf - inf, 0 * inf) unbounded: never a silent NaN."""
        lo = np.where(np.isnan(lo), -np.inf, self.down(lo, steps))
        hi = np.where(np.isnan(hi), np.inf, self.up(hi, steps))
        return lo, hi

    # --- arithmetic -----------------------------------------------------------------------------

    def add(self, a, b):
        return self.outward(a[0] + b[0], a[1] + b[1])

    def sub(self, a, b):
        return self.outward(a[0] - b[1], a[1] - b[0])

    def neg(self, a):
        return -a[1], -a[0]

    def scale(self, a, factor: float):
        """a times an exact float."""
        lo, hi = a[0] * factor, a[1] * factor
        return self.outward(np.minimum(lo, hi), np.maximum(lo, hi))

    def mul(self, a, b):
        """Elementwise (broadcasting) product."""
        with np.errstate(invalid="ignore"):
            products = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
        lo = np.minimum(np.minimum(products[0], products[1]), np.minimum(products[2], products[3]))
        hi = np.maximum(np.maximum(products[0], products[1]), np.maximum(products[2], products[3]))
        # 0 * inf is NaN in IEEE but 0 in interval arithmetic (a point 0 times anything bounded below inf)
        nan = np.isnan(lo) | np.isnan(hi)
        if np.any(nan):
            lo, hi = np.where(nan, -np.inf, lo), np.where(nan, np.inf, hi)
        return self.outward(lo, hi)

    def square(self, a):
        lo, hi = a
        low = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(lo * lo, hi * hi))
        high = np.maximum(lo * lo, hi * hi)
        return self.down(low).clip(0.0), self.up(high)

    def reciprocal(self, a):
        """1 / a; unbounded where a contains 0."""
        lo, hi = a
        with np.errstate(divide="ignore", over="ignore"):
            r_lo, r_hi = 1.0 / hi, 1.0 / lo
        straddles = (lo <= 0) & (hi >= 0)
        r_lo, r_hi = self.outward(r_lo, r_hi)
        return np.where(straddles, -np.inf, r_lo), np.where(straddles, np.inf, r_hi)

    def div(self, a, b):
        return self.mul(a, self.reciprocal(b))

    def integer_power(self, a, n: int):
        """a^n by repeated squaring (each product rounded outward); n may be negative."""
        if n == 0:
            return np.ones_like(a[0]), np.ones_like(a[0])
        if n < 0:
            return self.reciprocal(self.integer_power(a, -n))
        result, base = None, a
        while n:
            if n & 1:
                result = base if result is None else self.mul(result, base)
            n >>= 1
            if n:
                base = self.square(base)
        return result

    def sum(self, a, axis):
        """Sum over `axis` (an int or tuple) with the error bound of floating-point summation."""
        lo, hi = a
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        count = math.prod(lo.shape[x] for x in axes) if axes else 1
        s_lo, s_hi = np.sum(lo, axis=axes), np.sum(hi, axis=axes)
        if not self.verified or count <= 1:
            return s_lo, s_hi
        error = gamma(count) * 1.01
        with np.errstate(invalid="ignore", over="ignore"):
            e_lo = self.up(np.sum(np.abs(lo), axis=axes) * error + count * TINY)
            e_hi = self.up(np.sum(np.abs(hi), axis=axes) * error + count * TINY)
        return self.outward(s_lo - e_lo, s_hi + e_hi)

    def hull(self, a, b):
        return np.minimum(a[0], b[0]), np.maximum(a[1], b[1])

    def intersect(self, a, b):
        return np.maximum(a[0], b[0]), np.minimum(a[1], b[1])

    # --- monotone functions: endpoints, two ulps outward (library functions are within one ulp) --------

    def increasing(self, function, a):
        with np.errstate(all="ignore"):
            return self.outward(function(a[0]), function(a[1]), steps=2)

    def decreasing(self, function, a):
        with np.errstate(all="ignore"):
            return self.outward(function(a[1]), function(a[0]), steps=2)

    def exp(self, a):
        lo, hi = self.increasing(np.exp, a)
        return np.maximum(lo, 0.0), hi

    def log(self, a):
        """log a; unbounded below where a reaches 0, NaN-free (-inf .. inf) where a goes negative."""
        lo, hi = self.increasing(np.log, (np.maximum(a[0], 0.0), np.maximum(a[1], 0.0)))
        negative = a[0] < 0
        return np.where(negative, -np.inf, lo), np.where(a[1] < 0, np.inf, hi)

    def power(self, a, exponent: float):
        """a^p for a real exponent p on a >= 0 (unbounded where a goes negative)."""
        lo, hi = np.maximum(a[0], 0.0), np.maximum(a[1], 0.0)
        with np.errstate(divide="ignore"):
            r = self.increasing(lambda v: np.power(v, exponent), (lo, hi)) if exponent >= 0 else \
                self.decreasing(lambda v: np.power(v, exponent), (lo, hi))
        negative = a[0] < 0
        return np.where(negative, -np.inf, np.maximum(r[0], 0.0)), np.where(negative, np.inf, r[1])

    def sin(self, a):
        return self._periodic(np.sin, a, peak=0.5 * np.pi, trough=-0.5 * np.pi)

    def cos(self, a):
        return self._periodic(np.cos, a, peak=0.0, trough=np.pi)

    def _periodic(self, function, a, peak, trough):
        """sin or cos of an interval: the endpoints, and +-1 where the interval (within a margin for
        the rounding of pi) reaches a peak or a trough."""
        lo, hi = a
        with np.errstate(invalid="ignore"):
            ends = self.outward(np.minimum(function(lo), function(hi)), np.maximum(function(lo), function(hi)), 2)
            margin = 1e-12 * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi)))
            period = 2.0 * np.pi

            def reaches(point):
                k = np.ceil((lo - margin - point) / period)
                return point + k * period <= hi + margin

            wide = ~np.isfinite(lo) | ~np.isfinite(hi) | (hi - lo >= period)
            low = np.where(reaches(trough) | wide, -1.0, np.maximum(ends[0], -1.0))
            high = np.where(reaches(peak) | wide, 1.0, np.minimum(ends[1], 1.0))
        return low, high

    def constant(self, value: float):
        """An interval enclosing the real number that `value` (a float, maybe rounded) stands for."""
        return self.down(np.float64(value)), self.up(np.float64(value))
