"""Interval Taylor coefficients of the elementwise functions: enclosures of f^(j)(y) / j! for every y in
an interval Y, j = 0..m (the natural interval extension of the Taylor recurrences, Moore 1966).

Each function maps (Intervals, Y, m) to a list of m + 1 intervals. On a point Y = [y0, y0] they are the
Taylor coefficients at y0 (thin, rounded outward); on a wide Y they bound the derivatives over it:
the Lagrange remainder and the monotonicity test of the sharp enclosures (elementwise.py) read them.
Recurrences of the kind y' = d(y) x' repeat y in d, so over a wide Y they overestimate; sound anyway.

    >>> exp_series(Intervals(), (np.array(0.0), np.array(0.0)), 2)   # [1, 1, 1/2] as thin intervals
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from .interval import Intervals, product_error

ZERO = [(0.0, 0.0)]  # the odd functions' exact value at 0


def _divide_exactly(iv: Intervals, a, denominator: int):
    """a / n for a positive integer n (a factorial past 2^53, like 19!, is not a float: it becomes an
    interval first)."""
    if denominator <= 2 ** 53:
        with np.errstate(invalid="ignore"):
            lo, hi = a[0] / denominator, a[1] / denominator
        return iv.outward(lo, hi)
    near = float(denominator)
    enclosure = (np.nextafter(near, 0.0), np.nextafter(near, np.inf)) if iv.verified else (near, near)
    return iv.div(a, enclosure)


def _sum(iv: Intervals, terms, like):
    total = (np.zeros_like(like), np.zeros_like(like))
    for term in terms:
        total = iv.add(total, term)
    return total


def series_product(iv: Intervals, a, b):
    """The Cauchy product of two interval series (same length)."""
    return [_sum(iv, [iv.mul(a[i], b[k - i]) for i in range(k + 1)], a[0][0]) for k in range(len(a))]


def _integrated(iv: Intervals, value, derivative):
    """y with y(t) = y_0 + int d: y_k = d_(k-1) / k, for x(t) = y + t (x_1 = 1)."""
    return [value] + [_divide_exactly(iv, derivative[k - 1], k) for k in range(1, len(derivative) + 1)]


def _line(y, m):
    """The series of x(t) = y + t, as intervals (zeros beyond order 1)."""
    zero = (np.zeros_like(y[0]), np.zeros_like(y[0]))
    one = (np.ones_like(y[0]), np.ones_like(y[0]))
    return [y] + [one if k == 1 else zero for k in range(1, m + 1)]


def exp_series(iv: Intervals, y, m):
    value = iv.exp(y)
    return [value] + [_divide_exactly(iv, value, math.factorial(j)) for j in range(1, m + 1)]


def expm1_series(iv: Intervals, y, m):
    value = iv.exp(y)
    return [iv.increasing(np.expm1, y, ZERO)] + [_divide_exactly(iv, value, math.factorial(j)) for j in range(1, m + 1)]


def _exp_of(iv: Intervals, u):
    """exp(u(t)) for an interval series u: e_k = (1/k) sum_j j u_j e_(k-j)."""
    e = [iv.exp(u[0])]
    for k in range(1, len(u)):
        terms = [iv.scale(iv.mul(u[j], e[k - j]), float(j)) for j in range(1, k + 1)]
        e.append(_divide_exactly(iv, _sum(iv, terms, u[0][0]), k))
    return e


def log_series(iv: Intervals, y, m, shift: float = 0.0):
    """log(y + shift) (shift 1: log1p): c_j = (-1)^(j+1) / (j (y + shift)^j)."""
    base = y if shift == 0.0 else iv.add(y, (np.full_like(y[0], shift), np.full_like(y[0], shift)))
    value = iv.log(base) if shift == 0.0 else iv.increasing(np.log1p, y, ZERO)
    inverse = iv.reciprocal(base)
    result, power = [value], inverse
    for j in range(1, m + 1):
        term = _divide_exactly(iv, power, j)
        result.append(term if j % 2 else iv.neg(term))
        power = iv.mul(power, inverse)
    return result


def power_series(exponent):
    """y^p: c_j = binom(p, j) y^(p - j); an integer p >= 0 gives a polynomial (exact at every y)."""
    integral = float(exponent).is_integer()

    def series(iv: Intervals, y, m):
        result = []
        binomial = (np.float64(1.0), np.float64(1.0))
        for j in range(m + 1):
            if integral and exponent >= 0 and j > exponent:
                result.append((np.zeros_like(y[0]), np.zeros_like(y[0])))
                continue
            power = iv.integer_power(y, int(exponent) - j) if integral else iv.power(y, exponent - j)
            result.append(iv.mul(binomial, power))
            factor = iv.constant(float(exponent - j))  # exact for integer and dyadic exponents, else rounded
            binomial = _divide_exactly(iv, iv.mul(binomial, factor), j + 1)
        return result

    return series


def sqrt_series(iv: Intervals, y, m):
    result = power_series(0.5)(iv, y, m)
    lo, hi = np.maximum(y[0], 0.0), np.maximum(y[1], 0.0)
    root_lo, root_hi = np.sqrt(lo), np.sqrt(hi)  # correctly rounded; exact where the root squares back
    value = iv.directed(root_lo, lo - root_lo * root_lo - product_error(root_lo, root_lo, root_lo * root_lo),
                        root_hi, hi - root_hi * root_hi - product_error(root_hi, root_hi, root_hi * root_hi))
    negative = y[0] < 0
    result[0] = np.where(negative, -np.inf, np.maximum(value[0], 0.0)), np.where(negative, np.inf, value[1])
    return result


def cbrt_series(iv: Intervals, y, m):
    """The real cube root, odd: c_j = binom(1/3, j) cbrt(y) y^(-j) for either sign of y (unbounded for
    j >= 1 where y reaches 0, where the derivative is infinite)."""
    root = iv.increasing(np.cbrt, y, ZERO)
    result, binomial = [root], (np.float64(1.0), np.float64(1.0))
    third = iv.constant(1.0 / 3.0)
    for j in range(1, m + 1):
        factor = iv.sub(third, (np.float64(j - 1), np.float64(j - 1)))
        binomial = _divide_exactly(iv, iv.mul(binomial, factor), j)
        term = iv.mul(binomial, iv.mul(root, iv.integer_power(y, -j)))
        touches_zero = (y[0] <= 0) & (y[1] >= 0)
        result.append((np.where(touches_zero, -np.inf, term[0]), np.where(touches_zero, np.inf, term[1])))
    return result


def _cyclic(iv: Intervals, y, m, first):
    """sin (first = 0) or cos (first = 1): the derivatives cycle sin, cos, -sin, -cos."""
    s, c = iv.sin(y), iv.cos(y)
    cycle = [s, c, iv.neg(s), iv.neg(c)]
    return [_divide_exactly(iv, cycle[(first + j) % 4], math.factorial(j)) for j in range(m + 1)]


def sin_series(iv, y, m):
    return _cyclic(iv, y, m, 0)


def cos_series(iv, y, m):
    return _cyclic(iv, y, m, 1)


def _hyperbolic(iv: Intervals, y, m, first):
    """sinh (first = 0) or cosh (first = 1): the derivatives alternate."""
    s = iv.increasing(np.sinh, y, ZERO)
    lo, hi = y
    c_hi = np.maximum(np.cosh(lo), np.cosh(hi))
    c_lo = np.where((lo <= 0) & (hi >= 0), 1.0, np.minimum(np.cosh(lo), np.cosh(hi)))
    c = iv.outward(c_lo, c_hi, steps=2)
    c = (np.maximum(c[0], 1.0), c[1])
    return [_divide_exactly(iv, (s, c)[(first + j) % 2], math.factorial(j)) for j in range(m + 1)]


def sinh_series(iv, y, m):
    return _hyperbolic(iv, y, m, 0)


def cosh_series(iv, y, m):
    return _hyperbolic(iv, y, m, 1)


def _online(iv: Intervals, value, m, derivative):
    """y with y' = d(y) (x_1 = 1), d_k from y_0..y_k: y_k = d_(k-1) / k."""
    y = [value]
    for k in range(1, m + 1):
        y.append(_divide_exactly(iv, derivative(y, k - 1), k))
    return y


def _square_coefficient(iv, y, k):
    return _sum(iv, [iv.mul(y[i], y[k - i]) for i in range(k + 1)], y[0][0])


def tanh_series(iv: Intervals, y, m):
    def derivative(c, k):  # 1 - y^2
        if k == 0:
            return iv.sub((np.ones_like(c[0][0]),) * 2, iv.square(c[0]))
        return iv.neg(_square_coefficient(iv, c, k))

    value = iv.increasing(np.tanh, y, ZERO)
    return _online(iv, (np.maximum(value[0], -1.0), np.minimum(value[1], 1.0)), m, derivative)


def logistic_series(iv: Intervals, y, m):
    def derivative(c, k):  # y - y^2 = y (1 - y)
        if k == 0:
            one = (np.ones_like(c[0][0]),) * 2
            return iv.mul(c[0], iv.sub(one, c[0]))
        return iv.sub(c[k], _square_coefficient(iv, c, k))

    value = iv.increasing(special.expit, y, [(0.0, 0.5)])
    return _online(iv, (np.maximum(value[0], 0.0), np.minimum(value[1], 1.0)), m, derivative)


def softplus_series(iv: Intervals, y, m):
    """log(1 + e^y): its derivative is the logistic function."""
    value = iv.increasing(lambda v: np.logaddexp(v, 0.0), y)
    value = (np.maximum(value[0], 0.0), value[1])
    if m == 0:
        return [value]
    return _integrated(iv, value, logistic_series(iv, y, m - 1))


def swish_series(iv: Intervals, y, m):
    """y * logistic(y) as the product of the series of y + t and of the logistic."""
    return series_product(iv, _line(y, m), logistic_series(iv, y, m))


def arctan_series(iv: Intervals, y, m):
    value = iv.increasing(np.arctan, y, ZERO)
    if m == 0:
        return [value]
    # 1 / (1 + x^2) with x = y + t: 1 + x^2 = (1 + y^2) + 2 y t + t^2
    one = (np.ones_like(y[0]), np.ones_like(y[0]))
    zero = (np.zeros_like(y[0]), np.zeros_like(y[0]))
    q = [iv.add(one, iv.square(y)), iv.scale(y, 2.0), one] + [zero] * m
    d = [iv.reciprocal(q[0])]
    for k in range(1, m):
        terms = [iv.mul(q[j], d[k - j]) for j in range(1, min(k, 2) + 1)]
        d.append(iv.neg(iv.mul(_sum(iv, terms, y[0]), iv.reciprocal(q[0]))))
    return _integrated(iv, value, d)


def erf_series(iv: Intervals, y, m):
    value = iv.increasing(special.erf, y, ZERO)
    value = (np.maximum(value[0], -1.0), np.minimum(value[1], 1.0))
    if m == 0:
        return [value]
    zero = (np.zeros_like(y[0]), np.zeros_like(y[0]))
    minus_one = (-np.ones_like(y[0]), -np.ones_like(y[0]))
    u = [iv.neg(iv.square(y)), iv.scale(y, -2.0), minus_one] + [zero] * m
    e = _exp_of(iv, u[:m])
    factor = iv.outward(np.float64(2.0 / math.sqrt(math.pi)), np.float64(2.0 / math.sqrt(math.pi)), steps=2)
    return _integrated(iv, value, [iv.mul(factor, c) for c in e])
