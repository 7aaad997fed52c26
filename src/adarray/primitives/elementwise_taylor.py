"""Taylor rules of the elementwise primitives: O(K^2) recurrences for the common maps.

Every other elementwise map keeps the generic exact rule of its kind (`FROM_JVP` from the partials
table, or zero / linear). The recurrences (Griewank & Walther, "Evaluating Derivatives", ch. 13)
follow from y' = d(x, y) x' with d the partial derivative:

    mul     y_k = sum_i a_i b_(k-i)                         (Cauchy product)
    div     q_k = (a_k - sum_{j>=1} b_j q_(k-j)) / b_0
    exp     y_k = (1/k) sum_j j x_j y_(k-j)
    log     y_k = (x_k - (1/k) sum_{j<k} j y_j x_(k-j)) / x_0
    sqrt    y_k = (x_k - sum_{0<j<k} y_j y_(k-j)) / (2 y_0)
The maps with a singular derivative (sqrt, log, div, pow) multiply by 1 / x_0 and by their outputs
through `guarded` products: where the direction does not move an input (all its coefficients 0), the
output's coefficients are exactly 0, as forward mode's tangent-guarded products give, even where
1 / x_0 is infinite (sqrt(x * x) at x = 0 along a direction that leaves that element alone).
    sin/cos s_k = (1/k) sum_j j x_j c_(k-j),  c_k = -(1/k) sum_j j x_j s_(k-j)   (sinh/cosh: + sign)
    tanh, logistic, tan: y' = d(y) x' with d = 1 - y^2, y - y^2, 1 + y^2 (computed online)
    pow     a^b = exp(b log a); a constant b: k a_0 y_k = sum_j (b j - (k - j)) a_j y_(k-j)
    integer_pow  repeated Cauchy products (exact at x_0 = 0), a reciprocal for negative n
Maps linear in the tangent once the primals fix their pieces (abs, maximum, minimum, select,
convert) apply their jvp to every coefficient. abs of a complex z is not piecewise linear:
|z| = sqrt(u) with u = Re(z conj(z)), u_k = Re(sum_i z_i conj(z_(k-i))), then the sqrt recurrence.
"""
from __future__ import annotations

import math

from ..core.primitive import Zero, is_zero
from ..core.types import is_complex
from . import elementwise as ew
from .complex import conj, real
from .rules import aval_of_value, instantiate
from .taylor import (
    cauchy,
    exp_series,
    guarded,
    higher,
    integrate,
    integrate_online,
    log_series,
    mul,
    piecewise_linear_taylor,
    scale,
    series_mul,
    series_reciprocal_times,
    sub,
    total,
)


def _shifted_first(x, value):
    """The series x with its constant term replaced (log1p: 1 + x; expm1: 1 + y)."""
    return [value] + list(x[1:])


def _exp_taylor(series, output):
    return higher(exp_series(series[0], output))


def _expm1_taylor(series, output):
    return higher(exp_series(series[0], ew.add(output, 1.0)))


def _exp2_taylor(series, output):
    return higher(exp_series([scale(c, math.log(2.0)) for c in series[0]], output))


def _log_taylor(series, output):
    return higher(log_series(series[0], output))


def _log1p_taylor(series, output):
    x = series[0]
    return higher(log_series(_shifted_first(x, ew.add(x[0], 1.0)), output))


def _scaled_log(factor):
    def taylor(series, output):
        natural = log_series(series[0], ew.mul(output, 1.0 / factor))
        return [scale(c, factor) for c in natural[1:]]

    return taylor


def _sqrt_taylor(series, output):
    x = series[0]
    y = [output]
    half_reciprocal = ew.div(0.5, output)  # 1 / (2 y_0), infinite at 0: the products with it are guarded
    for k in range(1, len(x)):
        rest = sub(x[k], cauchy(y + [Zero(aval_of_value(output))], y + [Zero(aval_of_value(output))], k, start=1))
        y.append(guarded(rest, half_reciprocal))
    return higher(y)


def _sin_cos_series(x, s0, c0, hyperbolic: bool):
    """The series of (sin x, cos x), or (sinh x, cosh x): both advance together."""
    aval = aval_of_value(s0)
    s, c = [s0], [c0]
    for k in range(1, len(x)):
        s.append(scale(total([scale(mul(x[j], c[k - j]), j) for j in range(1, k + 1)], aval), 1.0 / k))
        c.append(scale(total([scale(mul(x[j], s[k - j]), j) for j in range(1, k + 1)], aval),
                       (1.0 if hyperbolic else -1.0) / k))
    return s, c


def _sin_taylor(series, output):
    x = series[0]
    return higher(_sin_cos_series(x, output, ew.cos(x[0]), False)[0])


def _cos_taylor(series, output):
    x = series[0]
    return higher(_sin_cos_series(x, ew.sin(x[0]), output, False)[1])


def _sinh_taylor(series, output):
    x = series[0]
    return higher(_sin_cos_series(x, output, ew.cosh(x[0]), True)[0])


def _cosh_taylor(series, output):
    x = series[0]
    return higher(_sin_cos_series(x, ew.sinh(x[0]), output, True)[1])


def _square_coefficient(y, m):
    """Coefficient m of y^2 from y_0..y_m."""
    return cauchy(y, y, m)


def _tanh_taylor(series, output):
    def derivative(y, m):  # 1 - y^2
        square = _square_coefficient(y, m)
        return ew.sub(1.0, square) if m == 0 else scale(square, -1.0)

    return higher(integrate_online(series[0], output, derivative))


def _logistic_taylor(series, output):
    def derivative(y, m):  # y - y^2
        return sub(y[m], _square_coefficient(y, m))

    return higher(integrate_online(series[0], output, derivative))


def _tan_taylor(series, output):
    def derivative(y, m):  # 1 + y^2
        square = _square_coefficient(y, m)
        return ew.add(square, 1.0) if m == 0 else square

    return higher(integrate_online(series[0], output, derivative))


def _arctan_taylor(series, output):
    x = series[0]
    one_plus_square = series_mul(x, x)
    one_plus_square[0] = ew.add(one_plus_square[0], 1.0)
    ones = [ew.full_like(x[0], 1.0)] + [Zero(aval_of_value(x[0]))] * (len(x) - 1)
    d = series_reciprocal_times(ones, one_plus_square)
    return higher(integrate(x, d, output))


def _mul_taylor(series, output):
    a, b = series
    return [cauchy(a, b, k) for k in range(1, len(a))]


def _safe_mul_taylor(series, output):
    a, b = series
    return [cauchy(a, b, k, product=_safe_product) for k in range(1, len(a))]


def _safe_product(a, b):
    if is_zero(a) or is_zero(b):
        return Zero(aval_of_value(a if not is_zero(a) else b))
    return ew.safe_mul(a, b)


def _div_taylor(series, output):
    a, b = series
    return higher(series_reciprocal_times(a, b, q0=output))


def _pow_taylor(series, output):
    a, b = series
    if any(not is_zero(c) for c in b[1:]):  # a^b = exp(b log a)
        logarithm = log_series(a, ew.log(a[0]))
        return higher(exp_series(series_mul(b, logarithm), output))
    y = [output]
    reciprocal = ew.div(1.0, a[0])  # infinite at a_0 = 0: the products with it are guarded
    for k in range(1, len(a)):
        terms = []
        for j in range(1, k + 1):
            if is_zero(a[j]) or is_zero(y[k - j]):
                continue
            weight = ew.sub(ew.mul(b[0], float(j)), float(k - j))
            terms.append(ew.mul(weight, guarded(a[j], y[k - j])))
        rest = total(terms, aval_of_value(output))
        y.append(guarded(rest, scale(reciprocal, 1.0 / k)))
    return higher(y)


def _power_series(x, n: int):
    """x^n for n >= 1 by repeated squaring of series (no division: exact at x_0 = 0)."""
    result, base = None, list(x)
    while n:
        if n & 1:
            result = base if result is None else series_mul(result, base)
        n >>= 1
        if n:
            base = series_mul(base, base)
    return result


def _integer_pow_taylor(series, output, *, n):
    x = series[0]
    order = len(x) - 1
    if n == 0:
        return [Zero(aval_of_value(output))] * order
    power = _power_series(x, abs(n))
    if n < 0:
        ones = [ew.full_like(x[0], 1.0)] + [Zero(aval_of_value(output))] * order
        power = series_reciprocal_times(ones, power)
    return [instantiate(c) if not is_zero(c) else c for c in power[1:]]


_real_abs_taylor = piecewise_linear_taylor(ew.abs_p)


def _abs_taylor(series, output):
    """Real x: piecewise linear (sign(x_0) x_k). Complex z: |z| = sqrt(Re(z conj z)), with the jvp
    rule's convention at z = 0 (a denominator made 1 there, so the coefficients stay finite)."""
    z = series[0]
    if not is_complex(aval_of_value(z[0]).dtype):
        return _real_abs_taylor(series, output)

    aval = aval_of_value(output)
    conjugate = [c if is_zero(c) else conj(c) for c in z]
    squared = [None]  # the coefficients k >= 1 of |z|^2 = Re(z conj z) (its value is output^2)
    for k in range(1, len(z)):
        product = cauchy(z, conjugate, k)
        squared.append(Zero(aval) if is_zero(product) else real(product))
    twice = ew.mul(ew.select(ew.eq(output, 0.0), ew.full_like(output, 1.0), output), 2.0)
    y = [output]
    for k in range(1, len(z)):
        rest = sub(squared[k], cauchy(y + [Zero(aval)], y + [Zero(aval)], k, start=1))
        y.append(rest if is_zero(rest) else ew.div(rest, twice))
    return higher(y)


# The hand recurrences, keyed by the primitive object (the others keep FROM_JVP, set by their rule kind).
TAYLOR_RULES = {
    ew.exp_p: _exp_taylor, ew.expm1_p: _expm1_taylor, ew.exp2_p: _exp2_taylor, ew.log_p: _log_taylor,
    ew.log1p_p: _log1p_taylor, ew.log2_p: _scaled_log(1.0 / math.log(2.0)),
    ew.log10_p: _scaled_log(1.0 / math.log(10.0)), ew.sqrt_p: _sqrt_taylor, ew.sin_p: _sin_taylor,
    ew.cos_p: _cos_taylor, ew.sinh_p: _sinh_taylor, ew.cosh_p: _cosh_taylor, ew.tanh_p: _tanh_taylor,
    ew.logistic_p: _logistic_taylor, ew.tan_p: _tan_taylor, ew.arctan_p: _arctan_taylor, ew.mul_p: _mul_taylor,
    ew.safe_mul_p: _safe_mul_taylor, ew.div_p: _div_taylor, ew.pow_p: _pow_taylor,
    ew.integer_pow_p: _integer_pow_taylor, ew.abs_p: _abs_taylor,
}
for _prim, _rule in TAYLOR_RULES.items():
    _prim.taylor = _rule
for _prim in (ew.maximum_p, ew.minimum_p, ew.select_p, ew.convert_p):
    _prim.taylor = piecewise_linear_taylor(_prim)
