"""The sharp enclosure of y^p for a constant integer p >= 0: an exact polynomial remainder.

At degree k around y0, with h = y - y0,

    y^p = sum_{i<k} c_i h^i + R(h) h^k,    R(h) = sum_{j=k}^{p} binom(p, j) y0^(p-j) h^(j-k)

so the tightest top coefficient is the range of the polynomial R over H = Y - y0. On each side of y0
where y^(p-k) is monotone (never across 0 for an even p - k), R is monotone (Streeter & Dillon's
theorem, side by side): the interval between c_k and R at the end. Elsewhere R's range is enclosed
by its expansion in exact interval powers of H (AutoBound's rule: x^4 at degree 2 around 0.5 on
[-2, 3] gives [-3.5, 12.75]), intersected with the Lagrange range; a quadratic R (p - k = 2) gets
its exact range from its vertex (there [0.5, 12.75]).

    >>> integer_power_rule(4)(Intervals(), np.array(0.5), (np.array(-2.0), np.array(3.0)), 2)[-1]
    (array(0.5), array(12.75))
"""
from __future__ import annotations

import numpy as np

from . import series as s
from .elementwise import monotone_rule, remainder_at
from .elementwise import power_rule as elementwise_power_rule
from .interval import Intervals


def _polynomial_range(iv: Intervals, d, h):
    """sum_i d_i h^i over the interval h (d: point-interval coefficients): the interval-power expansion,
    and for a quadratic with positive leading coefficient its exact minimum at the vertex."""
    total = d[0]
    for i in range(1, len(d)):
        total = iv.add(total, iv.mul(d[i], iv.integer_power(h, i)))
    if len(d) == 3:  # exact: the ends and the vertex -d1 / (2 d2), where d2 = 1 (binom(p, p) y0^0)
        ends = [_horner(iv, d, (end, end)) for end in h]
        low, high = np.minimum(ends[0][0], ends[1][0]), np.maximum(ends[0][1], ends[1][1])
        vertex = -0.5 * d[1][0]
        inside = (vertex > h[0]) & (vertex < h[1])
        minimum = iv.sub(d[0], iv.scale(iv.square(d[1]), 0.25))[0]
        low = np.where(inside, np.minimum(low, minimum), low)
        total = iv.intersect(total, (low, high))
    return total


def _horner(iv: Intervals, d, h):
    total = d[-1]
    for c in reversed(d[:-1]):
        total = iv.add(iv.mul(total, h), c)
    return total


def integer_power_rule(p: int):
    """The enclosure rule of y^p (p >= 0 an int)."""
    series = s.power_series(p)
    general = monotone_rule(series)

    def rule(iv: Intervals, y0, y, degree: int):
        out = general(iv, y0, y, degree)
        if degree >= p:  # the polynomial itself: exact
            return out
        point = series(iv, (y0, y0), p)
        d = point[degree:]
        ends = [remainder_at(series, iv, point, y0, end, degree) for end in y]
        # y0 outside y (x0 outside the box): one side only, and R's value nearest y0 is at y's near end
        near_low = np.where(y0 > y[1], ends[1][0], d[0][0]), np.where(y0 > y[1], ends[1][1], d[0][1])
        near_high = np.where(y0 < y[0], ends[0][0], d[0][0]), np.where(y0 < y[0], ends[0][1], d[0][1])
        sides = []
        for (a, b), remainder, near in (((y[0], np.minimum(y0, y[1])), ends[0], near_low),
                                        ((np.maximum(y0, y[0]), y[1]), ends[1], near_high)):
            slope = series(iv, (np.minimum(a, y0), np.maximum(b, y0)), degree + 1)[degree + 1]
            monotone = (slope[0] >= 0) | (slope[1] <= 0)
            h = iv.sub((a, a), (y0, y0))[0], iv.sub((b, b), (y0, y0))[1]
            enclosed = iv.intersect(_polynomial_range(iv, d, h),
                                    series(iv, (np.minimum(a, y0), np.maximum(b, y0)), degree)[degree])
            sharp = np.minimum(remainder[0], near[0]), np.maximum(remainder[1], near[1])
            sides.append((np.where(monotone, sharp[0], enclosed[0]), np.where(monotone, sharp[1], enclosed[1])))
        exact = iv.hull(*sides)
        lo, hi = iv.intersect(out[-1], exact)
        return out[:-1] + [(np.minimum(lo, hi), np.maximum(lo, hi))]

    rule.outside = True
    return rule


def power_rule(exponent: float):
    """x^p for a constant p: the exact polynomial rule for an integer p >= 0, else elementwise.power_rule
    (negative integers on either sign of x; real exponents on x >= 0)."""
    if float(exponent).is_integer() and exponent >= 0:
        return integer_power_rule(int(exponent))
    return elementwise_power_rule(exponent)
