"""Interval arithmetic on NumPy arrays, rounded outward.

An interval is a pair ``(lo, hi)`` of float64 arrays of one shape. Every operation rounds its
bounds outward with `numpy.nextafter`, so an enclosure computed here holds for the exact real
values, not just up to round-off. + - and * round only where the result is inexact, and only in
the direction of the error: the error-free transformations TwoSum (Knuth) and TwoProduct (Dekker,
with Veltkamp's split) give the exact rounding error of each bound, so an exact result (0 - 0,
2 * 1.5, 3 + 1) stays exact and a box that ends at a domain edge (sqrt at 0) does not leave the
domain. Library functions (exp, log, sin, ...) are within one ulp in glibc and get two steps
(none at the points where their value is exact, like exp(0) = 1). Sums of m terms add the classical error bound
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
_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitting factor for float64
_SAFE_LOW, _SAFE_HIGH = 2.0 ** -960, 2.0 ** 995  # where TwoProduct's error term is itself exact


def sum_error(a, b, s):
    """The exact error of the float sum s = a + b: a + b = s + error (TwoSum; NaN where s overflowed)."""
    b_virtual = s - a
    a_virtual = s - b_virtual
    return (a - a_virtual) + (b - b_virtual)


def _split(a):
    c = _SPLIT * a
    high = c - (c - a)
    return high, a - high


def _product_error(a_parts, b_parts, p, a, b):
    (a_high, a_low), (b_high, b_low) = a_parts, b_parts
    error = ((a_high * b_high - p) + a_high * b_low + a_low * b_high) + a_low * b_low
    magnitude = np.abs(p)
    # outside [2^-960, 2^995] the split or the error term may overflow or underflow: unknown (NaN)
    error = np.where((magnitude >= _SAFE_LOW) & (magnitude <= _SAFE_HIGH), error, np.nan)
    return np.where((a == 0) | (b == 0) | np.isinf(p), 0.0, error)


def product_error(a, b, p):
    """The exact error of the float product p = a * b: a * b = p + error (TwoProduct); NaN where it cannot
    be trusted (an overflow, an underflow). A zero factor, or an infinite product, counts as exact."""
    return _product_error(_split(a), _split(b), p, a, b)


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

    def directed(self, lo, lo_error, hi, hi_error):
        """Bounds from rounded values and their exact errors (value_exact = value + error): a bound moves
        one ulp outward only where the error points outward (or is unknown: NaN)."""
        if not self.verified:
            return lo, hi
        lo = np.where(lo_error >= 0, lo, np.nextafter(lo, -np.inf))
        hi = np.where(hi_error <= 0, hi, np.nextafter(hi, np.inf))
        return np.where(np.isnan(lo), -np.inf, lo), np.where(np.isnan(hi), np.inf, hi)

    def outward(self, lo, hi, steps: int = 1):
        """Round outward, and make NaN bounds (inf - inf, 0 * inf) unbounded: never a silent NaN."""
        lo = np.where(np.isnan(lo), -np.inf, self.down(lo, steps))
        hi = np.where(np.isnan(hi), np.inf, self.up(hi, steps))
        return lo, hi

    # --- arithmetic -----------------------------------------------------------------------------

    def add(self, a, b):
        lo, hi = a[0] + b[0], a[1] + b[1]
        if not self.verified:
            return self.outward(lo, hi)
        return self.directed(lo, sum_error(a[0], b[0], lo), hi, sum_error(a[1], b[1], hi))

    def sub(self, a, b):
        return self.add(a, self.neg(b))

    def neg(self, a):
        return -a[1], -a[0]

    def scale(self, a, factor: float):
        """a times an exact float."""
        factor = np.float64(factor)
        return self.mul(a, (factor, factor))

    def mul(self, a, b):
        """Elementwise (broadcasting) product. An endpoint product 0 * inf counts as 0: the bounds of an
        interval are finite reals or its unbounded ends, so [0, 0] * [1, inf] = [0, 0] (a Taylor
        coefficient that is exactly 0 stays 0 when scaled by an unbounded one). Where one operand is a
        point (a constant, an exact coefficient) the bounds round only in the direction of their error;
        otherwise one ulp outward, except a bound that is an exact 0."""
        a0, a1, b0, b1 = (np.asarray(v, np.float64) for v in (a[0], a[1], b[0], b[1]))
        pairs = ((a0, b0), (a0, b1), (a1, b0), (a1, b1))
        products = [x * y for x, y in pairs]
        lo = np.minimum(np.minimum(products[0], products[1]), np.minimum(products[2], products[3]))
        hi = np.maximum(np.maximum(products[0], products[1]), np.maximum(products[2], products[3]))
        if np.isnan(lo).any() or np.isnan(hi).any():  # 0 * inf somewhere: it is 0
            products = [np.where((x == 0) | (y == 0), 0.0, p) for (x, y), p in zip(pairs, products)]
            lo = np.minimum(np.minimum(products[0], products[1]), np.minimum(products[2], products[3]))
            hi = np.maximum(np.maximum(products[0], products[1]), np.maximum(products[2], products[3]))
        if not self.verified:
            return lo, hi
        point_a, point_b = bool(np.all(a0 == a1)), bool(np.all(b0 == b1))
        if point_a or point_b:
            # two distinct products at most: their exact errors (TwoProduct), ties included
            candidates = [0, 2] if point_b else [0, 1]
            down = up = False
            for k in candidates:
                x, y = pairs[k]
                error = product_error(x, y, products[k])
                down = down | ((products[k] == lo) & ~(error >= 0))
                up = up | ((products[k] == hi) & ~(error <= 0))
            return np.where(down, np.nextafter(lo, -np.inf), lo), np.where(up, np.nextafter(hi, np.inf), hi)
        down, up = lo != 0, hi != 0
        if not (down.all() and up.all()):  # a bound 0 is exact if it comes from a zero factor, not an underflow
            underflow = False
            for (x, y), p in zip(pairs, products):
                underflow = underflow | ((p == 0) & (x != 0) & (y != 0))
            down, up = down | underflow, up | underflow
        return np.where(down, np.nextafter(lo, -np.inf), lo), np.where(up, np.nextafter(hi, np.inf), hi)

    def square(self, a):
        lo, hi = a
        magnitude = (np.where(lo >= 0, lo, np.where(hi <= 0, -hi, 0.0)), np.maximum(np.abs(lo), np.abs(hi)))
        low, high = self.mul(magnitude, magnitude)
        return np.maximum(low, 0.0), high

    def reciprocal(self, a):
        """1 / a; unbounded where a contains 0 inside ([0, b] gives [1/b, inf], [a, 0] gives [-inf, 1/a])."""
        lo, hi = a
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            r_lo, r_hi = 1.0 / hi, 1.0 / lo
            # 1 / v = r + e / v with e = 1 - r v exactly: the error has the sign of -(r v - 1) / v
            lo_error = -product_error(r_lo, hi, r_lo * hi) - (r_lo * hi - 1.0)
            hi_error = -product_error(r_hi, lo, r_hi * lo) - (r_hi * lo - 1.0)
            lo_error = np.where(np.isinf(hi), 0.0, lo_error * np.sign(hi))
            hi_error = np.where(np.isinf(lo), 0.0, hi_error * np.sign(lo))
        r_lo, r_hi = self.directed(r_lo, np.where(np.isfinite(r_lo), lo_error, 0.0),
                                   r_hi, np.where(np.isfinite(r_hi), hi_error, 0.0))
        straddles = (lo < 0) & (hi > 0)
        r_lo = np.where(straddles | (hi == 0), -np.inf, r_lo)
        r_hi = np.where(straddles | (lo == 0), np.inf, r_hi)
        return r_lo, r_hi

    def div(self, a, b):
        return self.mul(a, self.reciprocal(b))

    def _positive_power(self, a, n: int):
        """a^n for a >= 0 (each product rounded outward: monotone, so the bounds are the endpoints')."""
        result, base = None, a
        while n:
            if n & 1:
                result = base if result is None else self.mul(result, base)
            n >>= 1
            if n:
                base = self.mul(base, base)
        return result

    def integer_power(self, a, n: int):
        """a^n, the exact range rounded outward (odd n: monotone; even n: 0 where a holds 0); n may be
        negative."""
        lo, hi = np.asarray(a[0], np.float64), np.asarray(a[1], np.float64)
        if n == 0:
            return np.ones_like(lo), np.ones_like(lo)
        if n < 0:
            return self.reciprocal(self.integer_power((lo, hi), -n))
        low_end = self._positive_power((np.abs(lo), np.abs(lo)), n)    # |lo|^n
        high_end = self._positive_power((np.abs(hi), np.abs(hi)), n)   # |hi|^n
        if n % 2:
            return (np.where(lo >= 0, low_end[0], -low_end[1]), np.where(hi >= 0, high_end[1], -high_end[0]))
        holds_zero = (lo <= 0) & (hi >= 0)
        return (np.where(holds_zero, 0.0, np.minimum(low_end[0], high_end[0])), np.maximum(low_end[1], high_end[1]))

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

    def increasing(self, function, a, exact=()):
        """function over a, for an increasing function; `exact`: (x, f(x)) pairs where its value is exact
        (exp(0) = 1), kept without rounding."""
        with np.errstate(all="ignore"):
            lo, hi = self.outward(function(a[0]), function(a[1]), steps=2)
        for x, value in exact:
            lo, hi = np.where(a[0] == x, value, lo), np.where(a[1] == x, value, hi)
        return lo, hi

    def decreasing(self, function, a, exact=()):
        with np.errstate(all="ignore"):
            lo, hi = self.outward(function(a[1]), function(a[0]), steps=2)
        for x, value in exact:
            lo, hi = np.where(a[1] == x, value, lo), np.where(a[0] == x, value, hi)
        return lo, hi

    def exp(self, a):
        lo, hi = self.increasing(np.exp, a, exact=[(0.0, 1.0)])
        return np.maximum(lo, 0.0), hi

    def log(self, a):
        """log a; unbounded below where a reaches 0, NaN-free (-inf .. inf) where a goes negative."""
        lo, hi = self.increasing(np.log, (np.maximum(a[0], 0.0), np.maximum(a[1], 0.0)), exact=[(1.0, 0.0)])
        negative = a[0] < 0
        return np.where(negative, -np.inf, lo), np.where(a[1] < 0, np.inf, hi)

    def power(self, a, exponent: float):
        """a^p for a real exponent p on a >= 0 (unbounded where a goes negative)."""
        lo, hi = np.maximum(a[0], 0.0), np.maximum(a[1], 0.0)
        with np.errstate(divide="ignore"):
            exact = [(1.0, 1.0)] + ([(0.0, 0.0)] if exponent > 0 else [])
            r = self.increasing(lambda v: np.power(v, exponent), (lo, hi), exact) if exponent >= 0 else \
                self.decreasing(lambda v: np.power(v, exponent), (lo, hi), [(1.0, 1.0)])
        negative = a[0] < 0
        return np.where(negative, -np.inf, np.maximum(r[0], 0.0)), np.where(negative, np.inf, r[1])

    def sin(self, a):
        lo, hi = self._periodic(np.sin, a, peak=0.5 * np.pi, trough=-0.5 * np.pi)
        point_zero = (a[0] == 0) & (a[1] == 0)
        return np.where(point_zero, 0.0, lo), np.where(point_zero, 0.0, hi)

    def cos(self, a):
        lo, hi = self._periodic(np.cos, a, peak=0.0, trough=np.pi)
        point_zero = (a[0] == 0) & (a[1] == 0)
        return np.where(point_zero, 1.0, lo), np.where(point_zero, 1.0, hi)

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
