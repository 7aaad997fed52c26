"""Sharp one-dimensional Taylor enclosures of elementwise functions (Streeter & Dillon, "Sharp Taylor
Polynomial Enclosures in One Dimension", arXiv:2308.00679).

For f, a centre y0 and a range Y = [l, u] containing it, the degree-k enclosure is the Taylor
coefficients c_0..c_(k-1) of f at y0 and an interval I with

    f(y) - sum_{i<k} c_i (y - y0)^i  in  I (y - y0)^k     for every y in Y.

The tightest I is the range of R(y) = (f(y) - sum_{i<k} c_i (y - y0)^i) / (y - y0)^k on Y. When
f^(k) is monotone on Y, R is monotone (their Theorem 3), so I = [R(l), R(u)] (increasing) or
[R(u), R(l)] (decreasing): two evaluations, and the polynomial touches f at both ends. Otherwise I is
the classical Lagrange range [min f^(k), max f^(k)] / k! over Y. The monotonicity test and the
Lagrange range come from interval enclosures of f^(k+1) and f^(k) over Y (series.py, on 8 pieces of Y
for the functions whose recurrences overestimate); the sharp interval is intersected with the
Lagrange one, so it is never wider. This covers exp, log, powers (negative and fractional too),
sqrt, sin, cos, tanh, arctan, erf, logistic (sigmoid), softplus, swish; abs and relu (the kinks)
have their own exact rule below.

A rule maps (Intervals, y0, (l, u), degree) to degree + 1 intervals (c_0, ..., c_(k-1), I), arrays
shaped like y0.
"""
from __future__ import annotations

import numpy as np

from . import critical
from . import series as s
from .interval import Intervals


def _pieces(y, count: int):
    """`count` consecutive subintervals covering y, stacked on a new leading axis (neighbours share their
    endpoint exactly, so together they cover y)."""
    lo, hi = y
    fractions = (np.arange(count + 1) / count).reshape((-1,) + (1,) * np.ndim(lo))
    cuts = lo + (hi - lo) * fractions
    cuts[0], cuts[-1] = lo, hi
    return cuts[:-1], cuts[1:]


def _hull_of_pieces(interval):
    return np.min(interval[0], axis=0), np.max(interval[1], axis=0)


def _over(series, iv: Intervals, y, m: int, pieces: int):
    """series over the whole interval y: the hull over its pieces (tighter for recurrences that repeat y).
    Unbounded intervals are not cut."""
    if pieces <= 1:
        return series(iv, y, m)
    finite = np.isfinite(y[0]) & np.isfinite(y[1])
    safe = (np.where(finite, y[0], 0.0), np.where(finite, y[1], 0.0))
    parts = [_hull_of_pieces(c) for c in series(iv, _pieces(safe, pieces), m)]
    if np.all(finite):
        return parts
    whole = series(iv, y, m)
    return [(np.where(finite, p[0], w[0]), np.where(finite, p[1], w[1])) for p, w in zip(parts, whole)]


def _taylor_form_range(series, iv: Intervals, y, m: int, pieces: int):
    """f^(m) / m! over y, piece by piece, by its second-order Taylor form around each piece's midpoint:
    c_m(t) = c_m(mid) + (m+1) c_(m+1)(mid) h + (m+1)(m+2) c_(m+2)(xi) h^2 with h = t - mid, intersected
    with the natural extension c_m(piece). The point terms are tight and the interval one is multiplied
    by h^2, so the hull over the pieces approaches the exact range quadratically in the piece width (the
    recurrences' own overestimate, which repeats y, shrinks only linearly)."""
    a, b = _pieces(y, pieces)
    mid = np.clip(0.5 * a + 0.5 * b, a, b)
    at_mid = series(iv, (mid, mid), m + 1)
    over = series(iv, (a, b), m + 2)
    h = iv.sub((a, b), (mid, mid))
    linear = iv.mul(iv.scale(at_mid[m + 1], float(m + 1)), h)
    quadratic = iv.mul(iv.scale(over[m + 2], float((m + 1) * (m + 2))), iv.square(h))
    lo, hi = iv.intersect(iv.add(at_mid[m], iv.add(linear, quadratic)), over[m])
    return _hull_of_pieces((np.minimum(lo, hi), np.maximum(lo, hi)))


def remainder_at(series, iv: Intervals, point, y0, y, degree: int):
    """R(y) as an interval (point: the coefficients at y0; y == y0 gives c_k)."""
    value = series(iv, (y, y), 0)[0]
    h = iv.sub((y, y), (y0, y0))
    poly = (np.zeros_like(y), np.zeros_like(y))
    for i in reversed(range(degree)):  # Horner: ((c_(k-1) h + c_(k-2)) h + ...) + c_0
        poly = iv.add(iv.mul(poly, h), point[i])
    with np.errstate(all="ignore"):
        r = iv.div(iv.sub(value, poly), iv.integer_power(h, degree))
    at_centre = y == y0
    return np.where(at_centre, point[degree][0], r[0]), np.where(at_centre, point[degree][1], r[1])


def _remainder_by_tail(series, iv: Intervals, point, y0, y, degree: int, terms: int):
    """R(y) = sum_{j=k}^{k+t-1} c_j h^(j-k) + h^t [f^(k+t)/(k+t)! over the segment y0..y]: no cancellation
    (the direct quotient (f - poly) / h^k loses all digits at high degree), tight where h is small."""
    h = iv.sub((y, y), (y0, y0))
    segment = (np.minimum(y, y0), np.maximum(y, y0))
    tail = series(iv, segment, degree + terms)[degree + terms]
    total = tail
    for j in reversed(range(degree, degree + terms)):
        total = iv.add(iv.mul(total, h), point[j])
    return total


def _exact_lagrange(series, iv: Intervals, family: str, y, degree: int):
    """The range of f^(k)/k! over y from the table of its extrema (critical.py): the ends, and each
    extremum inside by its mean-value form on the extremum's bracket."""
    table = critical.extrema_inside(family, degree + 1, y[0], y[1])
    if table is None:
        return None
    ends = [series(iv, (end, end), degree)[degree] for end in y]
    lo, hi = np.minimum(ends[0][0], ends[1][0]), np.maximum(ends[0][1], ends[1][1])
    zeros_lo, zeros_hi, inside = table
    if len(zeros_lo):
        mid = 0.5 * (zeros_lo + zeros_hi)
        at_mid = series(iv, (mid, mid), degree)[degree]
        slope = series(iv, (zeros_lo, zeros_hi), degree + 1)[degree + 1]
        spread = iv.mul(iv.scale(slope, float(degree + 1)), iv.sub((zeros_lo, zeros_hi), (mid, mid)))
        extreme = iv.add(at_mid, spread)
        lo = np.minimum(lo, np.min(np.where(inside, extreme[0], np.inf), axis=-1))
        hi = np.maximum(hi, np.max(np.where(inside, extreme[1], -np.inf), axis=-1))
    return lo, hi


def monotone_rule(series, pieces: int = 1, mirror: bool = False, refine: bool = False, family: str | None = None):
    """The enclosure rule of a smooth function from its interval series. Where f^(k) is not monotone on
    Y, the Lagrange range is recomputed on 64 pieces of Y (close to the exact range of f^(k)). With
    `mirror` (softplus, whose f'' is even and decreasing in |y|; Streeter & Dillon sec. 4), degree 2
    is sharp there too: R is largest at the mirror point -y0 (clipped into Y), smallest at an end.
    `refine` marks series computed by recurrences that repeat y (their natural extension overestimates);
    the others (powers, exp, log, sin, cos, ...) give the exact range of each derivative already.
    `family` (sigmoid, softplus, tanh, swish) names a table of the zeros of f^(k+1) (critical.py): it
    decides monotonicity exactly and gives the exact Lagrange range, at every degree."""
    def rule(iv: Intervals, y0, y, degree: int):
        # y0 may lie outside y (x0 outside the box): f^(k) matters on the segments from y0, their hull
        segment = (np.minimum(y[0], y0), np.maximum(y[1], y0))
        terms = _tail_terms(degree)
        point = series(iv, (y0, y0), degree + terms)
        known = critical.monotone_on(family, degree + 1, *segment) if family else None
        lagrange = _exact_lagrange(series, iv, family, segment, degree) if known is not None else None
        if known is not None and lagrange is not None:
            increasing, decreasing = known
        else:
            over = _over(series, iv, segment, degree + 1, pieces)
            lagrange = over[degree]
            increasing, decreasing = over[degree + 1][0] >= 0, over[degree + 1][1] <= 0
        at_low = remainder_at(series, iv, point, y0, y[0], degree)
        at_high = remainder_at(series, iv, point, y0, y[1], degree)
        if terms:  # the direct quotient cancels: intersect with the tail form
            at_low = _intersect_points(iv, at_low, _remainder_by_tail(series, iv, point, y0, y[0], degree, terms))
            at_high = _intersect_points(iv, at_high, _remainder_by_tail(series, iv, point, y0, y[1], degree, terms))
        sharp_lo = np.where(increasing, at_low[0], np.where(decreasing, at_high[0], -np.inf))
        sharp_hi = np.where(increasing, at_high[1], np.where(decreasing, at_low[1], np.inf))
        neither = ~(increasing | decreasing)
        if np.any(neither):
            if mirror and degree == 2:
                at_mirror = remainder_at(series, iv, point, y0, np.clip(-y0, *segment), degree)
                low_end = np.minimum(at_low[0], at_high[0])  # R's minimum on the segment is at one of its ends
                low_end = np.where((y0 < y[0]) | (y0 > y[1]), np.minimum(low_end, point[degree][0]), low_end)
                sharp_lo = np.where(neither, low_end, sharp_lo)
                sharp_hi = np.where(neither, at_mirror[1], sharp_hi)
            if refine and known is None:
                finite_y = np.isfinite(y[0]) & np.isfinite(y[1])
                with np.errstate(all="ignore"):
                    closer = _taylor_form_range(series, iv, (np.where(finite_y, segment[0], 0.0),
                                                             np.where(finite_y, segment[1], 0.0)), degree, 64)
                finite = np.isfinite(closer[0]) & np.isfinite(closer[1]) & finite_y
                lagrange = iv.intersect(lagrange, (np.where(finite, closer[0], -np.inf),
                                                   np.where(finite, closer[1], np.inf)))
        lo, hi = iv.intersect(lagrange, (sharp_lo, sharp_hi))
        return list(point[:degree]) + [(np.minimum(lo, hi), np.maximum(lo, hi))]

    rule.outside = True  # holds for y0 outside y (compose passes the range itself)
    return rule


def _tail_terms(degree: int) -> int:
    """Terms of R's Taylor tail at the box's ends. The direct quotient (f - poly) / h^k loses about k
    digits' worth of h; the tail's interval term shrinks like (h / distance to f's singularity)^terms, so
    high degrees need many (log at degree 18 on [1, 2] around 1.5: 12 terms leave R(1) 1.2e-6 wide in
    relative terms, 48 give it to the last digit)."""
    return 0 if degree < 4 else 12 if degree < 10 else 48


def _intersect_points(iv: Intervals, a, b):
    lo, hi = iv.intersect(a, b)
    return np.where(lo <= hi, lo, a[0]), np.where(lo <= hi, hi, a[1])


def kink_rule(slope_left: float, slope_right: float):
    """A piecewise-linear function with one kink at 0 and f(0) = 0: relu (slopes 0, 1), abs (-1, 1).

    Where Y does not cross 0 it is linear (exact). With the kink inside Y and y0 != 0, the remainder is
    0 on y0's side and jump * |y| / (y - y0)^k on the other (jump = the change of slope), whose extreme
    is at |y| = |y0| / (k - 1) or at the far end. With y0 on the kink, degree 1 gives the slopes'
    range and degree >= 2 an unbounded top coefficient (-inf, inf): no polynomial of degree >= 1 with
    a finite (y - y0)^k remainder follows a kink at its centre.
    """
    jump = slope_right - slope_left

    def f(y):
        return np.where(y >= 0, slope_right * y, slope_left * y)  # exact: the slopes are 0 and +-1

    def rule(iv: Intervals, y0, y, degree: int):
        lo, hi = y
        crosses = (lo < 0) & (hi > 0)
        if degree == 0:
            ends = np.stack([f(lo), f(hi)] + ([np.where(crosses, 0.0, f(lo))]))
            return [(np.min(ends, axis=0), np.max(ends, axis=0))]
        zero = (np.zeros_like(y0), np.zeros_like(y0))
        value = f(y0)
        slope = np.where(crosses, np.where(y0 > 0, slope_right, np.where(y0 < 0, slope_left, 0.0)),
                         np.where(lo >= 0, slope_right, slope_left))
        coefficients = [(value, value)] + ([(slope, slope)] if degree >= 2 else [])
        coefficients += [zero] * (degree - len(coefficients))
        # the far side: |y| in (0, A], A = -lo if y0 > 0 else hi; c = |y0|
        reach, c = np.where(y0 > 0, -lo, hi), np.abs(y0)
        with np.errstate(all="ignore"):
            a = np.minimum(reach, c / (degree - 1)) if degree >= 2 else reach
            top = iv.div(iv.scale((a, a), abs(jump)), iv.integer_power(iv.add((a, a), (c, c)), degree))[1]
        negative = (y0 > 0) & (degree % 2 == 1)  # (y - y0)^k < 0 on the far side
        top_lo, top_hi = np.where(negative, -top, 0.0), np.where(negative, 0.0, top)
        if degree == 1:  # R is the secant slope: the own side's slope, down to the secant to the far end
            far = np.where(y0 > 0, lo, hi)
            with np.errstate(all="ignore"):
                secant = iv.div(iv.sub((f(far), f(far)), (value, value)), iv.sub((far, far), (y0, y0)))
            own = np.where(y0 > 0, slope_right, slope_left)
            top_lo, top_hi = np.minimum(own, secant[0]), np.maximum(own, secant[1])
            kink = (min(slope_left, slope_right), max(slope_left, slope_right))
            top_lo, top_hi = np.where(y0 == 0, kink[0], top_lo), np.where(y0 == 0, kink[1], top_hi)
            linear = np.where(lo >= 0, slope_right, slope_left)
        else:
            top_lo, top_hi = np.where(y0 == 0, -np.inf, top_lo), np.where(y0 == 0, np.inf, top_hi)
            linear = np.zeros_like(y0)
        top_lo, top_hi = np.where(crosses, top_lo, linear), np.where(crosses, top_hi, linear)
        return coefficients + [(top_lo, top_hi)]

    return rule


def step_rule(function):
    """A piecewise-constant non-decreasing function (floor, ceil, round, sign): its range over Y as the
    constant coefficient, zeros above (exact where Y holds one step)."""
    def rule(iv: Intervals, y0, y, degree: int):
        zero = (np.zeros_like(y0), np.zeros_like(y0))
        return [(function(y[0]), function(y[1]))] + [zero] * degree

    return rule


# Enclosures of elementary functions, by the function's name: not a table of primitives (relu, softplus
# and swish are none); bounds/rules.py installs them as the `enclosure` rules of the primitive objects.
FUNCTIONS = {
    "exp": monotone_rule(s.exp_series), "expm1": monotone_rule(s.expm1_series),
    "log": monotone_rule(s.log_series), "log1p": monotone_rule(lambda iv, y, m: s.log_series(iv, y, m, 1.0)),
    "sqrt": monotone_rule(s.sqrt_series), "cbrt": monotone_rule(s.cbrt_series),
    "sin": monotone_rule(s.sin_series), "cos": monotone_rule(s.cos_series),
    "sinh": monotone_rule(s.sinh_series), "cosh": monotone_rule(s.cosh_series),
    "tanh": monotone_rule(s.tanh_series, pieces=8, refine=True, family="tanh"),
    "logistic": monotone_rule(s.logistic_series, pieces=8, refine=True, family="sigmoid"),
    "softplus": monotone_rule(s.softplus_series, pieces=8, mirror=True, refine=True, family="softplus"),
    "swish": monotone_rule(s.swish_series, pieces=8, refine=True, family="swish"),
    "arctan": monotone_rule(s.arctan_series, pieces=8, refine=True),
    "erf": monotone_rule(s.erf_series, pieces=8, refine=True),
    "relu": kink_rule(0.0, 1.0), "abs": kink_rule(-1.0, 1.0),
    "floor": step_rule(np.floor), "ceil": step_rule(np.ceil), "round": step_rule(np.round), "sign": step_rule(np.sign),
}


def power_rule(exponent: float):
    """x^p for a constant p: integer (any sign of x; unbounded where a negative power meets 0) or real
    (x >= 0)."""
    if float(exponent) == 0.5:
        return monotone_rule(s.sqrt_series)
    return monotone_rule(s.power_series(exponent))
