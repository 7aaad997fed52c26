"""Incomplete gamma and beta functions and E_n as native scalar functions for the generated code
(float64 in, float64 out), with SciPy's values at the edges:

* gammainc P(a, x), gammaincc Q(a, x): the power series P = D sum_n x^n / ((a + 1) ... (a + n)) for
  x < a + 1 and Legendre's continued fraction Q = a D / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)) beyond
  (modified Lentz), the other as 1 minus it; D = x^a e^-x / Gamma(a + 1) is computed as
  exp(a log1pmx((x - a) / a) - S(a)) / sqrt(2 pi a) for a >= 10 (S: Stirling's correction), so no large
  logarithms cancel. Where P is close to 1 on the series side (a < 1, x < 2), Q is the series
  Q = -expm1(u) - e^u sum_(n>=1) a (-x)^n / (n! (a + n)), u = a log x - log Gamma(1 + a), and P = 1 - Q.
* betainc I_x(a, b): the continued fraction of I_x(a, b) B(a, b) a / (x^a (1 - x)^b) (modified Lentz) for
  x < (a + 1) / (a + b + 2), else 1 - I_(1-x)(b, a); the prefactor x^a (1 - x)^b / B(a, b) for a, b >= 10
  from log1pmx and Stirling's corrections (no large logarithms cancel);
* expn E_n(x): the continued fraction for x > 1, the series
  (-x)^(n-1) / (n-1)! (psi(n) - log x) - sum_(k != n-1) (-x)^k / ((k - n + 1) k!) below;
* gammainc_da, betainc_dab: the NumPy backend's expansions (backends/numpy/special.py) evaluated in truncated
  Taylor arithmetic in (da, db), the same branches and the same stopping rule, per element.

This module imports numba: only generated code imports it.

    >>> round(gammainc(2.0, 1.0), 12)   # 1 - 2 / e
    0.264241117657
"""
from __future__ import annotations

import math

import numba
import numpy as np
import scipy.special

from .gammalib import betaln, digamma, gammaln, log_gamma_ratio, polygamma, stirling_correction

_JIT = dict(cache=True, error_model="numpy", fastmath=False)
EPS = 2.0 ** -53
FPMIN = 1e-300
MAX_ITERATIONS = 100_000_000  # an element that has not converged by then is NaN (never met in the tests)
EULER = 0.57721566490153286061
MAX_LOG = 709.782712893384


@numba.njit(**_JIT)
def log1pmx(d):
    """log(1 + d) - d, accurate for small d (its series -d^2/2 + d^3/3 - ... for |d| < 1/4)."""
    if abs(d) < 0.25:
        term, total = d, 0.0
        for k in range(2, 80):
            term *= -d
            piece = term / k
            total += piece
            if abs(piece) < EPS * abs(total):
                break
        return total
    return math.log1p(d) - d


# zeta(k) / k, from SciPy (within 2 ulp of our hurwitz_zeta, whose interpreted calls added about 0.1 s to every
# process's first compiled call)
ZETA_OVER_K = (0.0, 0.0) + tuple(float(scipy.special.zeta(float(k))) / k for k in range(2, 60))


@numba.njit(**_JIT)
def lgamma1p(a):
    """log Gamma(1 + a), accurate for small a: -gamma a + sum_k (-1)^k zeta(k) a^k / k for |a| < 1/2."""
    if abs(a) >= 0.5:
        return gammaln(1.0 + a)
    total = -EULER * a
    power = -a                                     # (-a)^k
    for k in range(2, 60):
        power *= -a
        piece = power * ZETA_OVER_K[k]
        total += piece
        if abs(piece) < EPS * abs(total):
            break
    return total


@numba.njit(**_JIT)
def gamma_prefactor(a, x):
    """x^a e^-x / Gamma(a + 1)."""
    if a < 10.0:
        return math.exp(a * math.log(x) - x - lgamma1p(a))
    d = (x - a) / a
    # a (log(1 + d) - d): by log1pmx near x = a; far from it 1 + d = x / a would round (1e-5 relative at x / a = 1e-9)
    exponent = a * log1pmx(d) if abs(d) < 0.5 else a * math.log(x / a) + (a - x)
    return math.exp(exponent - stirling_correction(a)) / math.sqrt(2.0 * math.pi * a)


@numba.njit(**_JIT)
def _lower_series(a, x):
    """sum_n x^n / ((a + 1) ... (a + n))."""
    term, total = 1.0, 1.0
    n = 0
    while n < MAX_ITERATIONS:
        n += 1
        term *= x / (a + n)
        total += term
        if term < EPS * total:
            return total
    return np.nan


@numba.njit(**_JIT)
def _upper_fraction(a, x):
    """Legendre's continued fraction 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)), modified Lentz."""
    b = x + 1.0 - a
    c = 1.0 / FPMIN
    d = 1.0 / b
    value = d
    i = 0
    while i < MAX_ITERATIONS:
        i += 1
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = FPMIN if abs(d) < FPMIN else d
        c = b + an / c
        c = FPMIN if abs(c) < FPMIN else c
        d = 1.0 / d
        step = d * c
        value *= step
        if abs(step - 1.0) < EPS:
            return value
    return np.nan


@numba.njit(**_JIT)
def _upper_small_x(a, x):
    """Q(a, x) for a < 1, x < 2 where P is close to 1: -expm1(u) - e^u a sum_(n>=1) (-x)^n / (n! (a + n))."""
    u = a * math.log(x) - lgamma1p(a)
    power, total = 1.0, 0.0
    for n in range(1, 200):
        power *= -x / n
        piece = power / (a + n)
        total += piece
        if abs(piece) < EPS * abs(total):
            break
    return -math.expm1(u) - math.exp(u) * a * total


@numba.njit(**_JIT)
def _incomplete_gamma(a, x, upper):
    """P(a, x) (upper=False) or Q(a, x) (upper=True), SciPy's values at the edges."""
    if x != x or a != a or x < 0.0 or a < 0.0:
        return np.nan
    if a == 0.0:
        if x == 0.0:
            return np.nan
        return 0.0 if upper else 1.0
    if x == 0.0:
        return 1.0 if upper else 0.0
    if a == np.inf:
        if x == np.inf:
            return np.nan
        return 1.0 if upper else 0.0
    if x == np.inf:
        return 0.0 if upper else 1.0
    if x < a + 1.0:
        p = gamma_prefactor(a, x) * _lower_series(a, x)
        if p > 0.9 and x < 2.0:
            q = _upper_small_x(a, x)
            return q if upper else 1.0 - q
        return 1.0 - p if upper else p
    q = a * gamma_prefactor(a, x) * _upper_fraction(a, x)  # Gamma(a, x) / Gamma(a)
    return q if upper else 1.0 - q


@numba.njit(**_JIT)
def gammainc(a, x):
    return _incomplete_gamma(a, x, False)


@numba.njit(**_JIT)
def gammaincc(a, x):
    return _incomplete_gamma(a, x, True)


# --- I_x(a, b) ------------------------------------------------------------------------------------------


@numba.njit(**_JIT)
def beta_prefactor(a, b, x):
    """x^a (1 - x)^b / B(a, b) for 0 < x < 1. For a, b >= 10, with p0 = a / (a + b), d = x - p0:
    sqrt(a b / (2 pi (a + b))) exp(a log1pmx(d / p0) + b log1pmx(-d / (1 - p0)) + S(a + b) - S(a) - S(b))."""
    if a < 10.0 or b < 10.0:
        return math.exp(a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b))
    total = a + b
    p0 = a / total
    d = x - p0
    if abs(d) < 0.5 * min(p0, 1.0 - p0):  # the linear terms of log1pmx cancel: a d / p0 = b d / (1 - p0)
        exponent = a * log1pmx(d / p0) + b * log1pmx(-d / (1.0 - p0))
    else:  # far from p0, 1 + d / p0 = x / p0 would round
        exponent = a * math.log(x / p0) + b * math.log1p(-d / (1.0 - p0))
    exponent += stirling_correction(total) - stirling_correction(a) - stirling_correction(b)
    return math.sqrt(a * b / (2.0 * math.pi * total)) * math.exp(exponent)


@numba.njit(**_JIT)
def _log_beta(a, b):
    """log B(a, b) for a, b > 0; for a large and a small argument from Stirling's series for the ratio
    Gamma(big + small) / Gamma(big) (betaln's log-gamma difference loses |log Gamma(big)| ulps: 2e-10 at 1e5)."""
    big, small = max(a, b), min(a, b)
    if big >= 1e3 and small <= 0.5 * big:
        return gammaln(small) - log_gamma_ratio(big, small)
    return betaln(a, b)


@numba.njit(**_JIT)
def _beta_fraction(a, b, x):
    """The continued fraction of I_x(a, b) (the even and odd steps of its standard form), modified Lentz."""
    total, plus, minus = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - total * x / plus
    d = 1.0 / (FPMIN if abs(d) < FPMIN else d)
    value = d
    m = 0
    while m < MAX_ITERATIONS:
        m += 1
        m2 = 2.0 * m
        for coefficient in (m * (b - m) * x / ((minus + m2) * (a + m2)),
                            -(a + m) * (total + m) * x / ((a + m2) * (plus + m2))):
            d = 1.0 + coefficient * d
            d = 1.0 / (FPMIN if abs(d) < FPMIN else d)
            c = 1.0 + coefficient / c
            c = FPMIN if abs(c) < FPMIN else c
            value *= d * c
        if abs(d * c - 1.0) < EPS:
            return value
    return np.nan


@numba.njit(**_JIT)
def betainc(a, b, x):
    """The regularized incomplete beta function, SciPy's values at the edges."""
    if a != a or b != b or x != x or a < 0.0 or b < 0.0 or x < 0.0 or x > 1.0:
        return np.nan
    if (a == 0.0 and b == 0.0) or (a == np.inf and b == np.inf):
        return np.nan
    if a == 0.0 or b == np.inf:
        return 0.0 if x == 0.0 else 1.0
    if b == 0.0 or a == np.inf:
        return 1.0 if x == 1.0 else 0.0
    if x == 0.0 or x == 1.0:
        return x
    if x < (a + 1.0) / (a + b + 2.0):
        return beta_prefactor(a, b, x) * _beta_fraction(a, b, x) / a
    return 1.0 - beta_prefactor(b, a, 1.0 - x) * _beta_fraction(b, a, 1.0 - x) / b


# --- E_n(x) ------------------------------------------------------------------------------------------


@numba.njit(**_JIT)
def expn(n, x):
    """The generalized exponential integral E_n(x) = integral_1^inf e^(-x t) t^-n dt (n an integer)."""
    if x != x or n < 0 or x < 0.0:
        return np.nan
    if x > MAX_LOG:
        return 0.0
    if x == 0.0:
        return np.inf if n < 2 else 1.0 / (n - 1.0)
    if n == 0:
        return math.exp(-x) / x
    if x > 1.0:
        b = x + n
        c = 1.0 / FPMIN
        d = 1.0 / b
        value = d
        for i in range(1, MAX_ITERATIONS):
            an = -i * (n - 1.0 + i)
            b += 2.0
            d = 1.0 / (an * d + b)
            c = b + an / c
            step = c * d
            value *= step
            if abs(step - 1.0) < EPS:
                break
        return value * math.exp(-x)
    # the series; the k = n - 1 term is (-x)^(n-1) / (n-1)! (psi(n) - log x)
    total = 1.0 / (n - 1.0) if n != 1 else -math.log(x) - EULER
    factor = 1.0
    for k in range(1, MAX_ITERATIONS):
        factor *= -x / k
        if k != n - 1:
            piece = -factor / (k - n + 1.0)
        else:
            piece = factor * (digamma(float(n)) - math.log(x))
        total += piece
        if abs(piece) < EPS * abs(total):
            break
    return total



# --- derivatives in the shape parameters: truncated Taylor series in (da, db) ---------------------------------
# A series is a float64 array c of shape (I + 1, J + 1): c[i, j] is the coefficient of da^i db^j. The expansions
# and their stopping rule are the NumPy backend's (backends/numpy/special.py), element by element.

DERIVATIVE_EPS = 2.0 ** -52
DERIVATIVE_ITERATIONS = 100_000  # the NumPy backend's bound


@numba.njit(**_JIT)
def _series_mul(s, t):
    rows, cols = s.shape
    out = np.zeros((rows, cols))
    for i in range(rows):
        for j in range(cols):
            value = s[i, j]
            for k in range(rows - i):
                for m in range(cols - j):
                    out[i + k, j + m] += value * t[k, m]
    return out


@numba.njit(**_JIT)
def _series_constant(value, rows, cols):
    out = np.zeros((rows, cols))
    out[0, 0] = value
    return out


@numba.njit(**_JIT)
def _series_reciprocal(s):
    rows, cols = s.shape
    c0 = s[0, 0]
    u = -s / c0
    u[0, 0] = 0.0
    out = _series_constant(1.0, rows, cols)
    for _ in range(rows + cols - 2):  # 1 + u (1 + u (1 + ...)): Horner
        out = _series_mul(u, out)
        out[0, 0] += 1.0
    return out / c0


@numba.njit(**_JIT)
def _series_exp(s):
    rows, cols = s.shape
    rest = s.copy()
    rest[0, 0] = 0.0
    out = _series_constant(1.0, rows, cols)
    for k in range(rows + cols - 2, 0, -1):  # 1 + r (1 + r/2 (1 + ...))
        out = _series_mul(rest, out) / k
        out[0, 0] += 1.0
    return out * math.exp(s[0, 0])


@numba.njit(**_JIT)
def _guard(s):
    """Lentz's guard: a constant term that underflows to 0 becomes tiny instead."""
    if abs(s[0, 0]) < FPMIN:
        s[0, 0] = FPMIN
    return s


@numba.njit(**_JIT)
def _converged(new, old):
    rows, cols = new.shape
    for i in range(rows):
        for j in range(cols):
            if not abs(new[i, j] - old[i, j]) <= DERIVATIVE_EPS * (abs(new[i, j]) + 1e-10 * abs(new[0, 0])):
                return False
    return True


@numba.njit(**_JIT)
def _psi_order(k, x):
    """psi^(k)(x) (k = 0: digamma)."""
    return digamma(x) if k == 0 else polygamma(k, x)


@numba.njit(**_JIT)
def _gammaln_series(a, order):
    """log Gamma(a + da) as a series in da: psi^(k-1)(a) / k!."""
    out = np.zeros((order + 1, 1))
    out[0, 0] = gammaln(a)
    for k in range(1, order + 1):
        out[k, 0] = _psi_order(k - 1, a) / math.gamma(k + 1.0)
    return out


@numba.njit(**_JIT)
def _gamma_lower_series(a, x, order):
    """P(a + da, x) by its power series (x < a + 1)."""
    log_x = math.log(x)
    exponent = -_gammaln_series(a + 1.0, order)
    exponent[0, 0] += a * log_x - x
    exponent[1, 0] += log_x
    term = _series_constant(1.0, order + 1, 1)
    total = term.copy()
    step = np.empty((order + 1, 1))
    for n in range(1, DERIVATIVE_ITERATIONS):
        c = a + n  # term *= x / (c + da), 1 / (c + da) = sum_k (-da)^k / c^(k+1)
        for k in range(order + 1):
            step[k, 0] = (-1.0) ** k * x / c ** (k + 1)
        term = _series_mul(term, step)
        old, total = total, total + term
        if _converged(total, old):
            break
    return _series_mul(_series_exp(exponent), total)


@numba.njit(**_JIT)
def _gamma_upper_fraction(a, x, order):
    """Q(a + da, x) by Legendre's continued fraction (x >= a + 1), modified Lentz."""
    rows = order + 1
    log_x = math.log(x)
    exponent = -_gammaln_series(a, order)
    exponent[0, 0] += a * log_x - x
    exponent[1, 0] += log_x
    b = _series_constant(x + 1.0 - a, rows, 1)
    b[1, 0] = -1.0
    c = _series_constant(1.0 / FPMIN, rows, 1)
    d = _series_reciprocal(b)
    fraction = d
    for i in range(1, DERIVATIVE_ITERATIONS):
        an = _series_constant(-i * (i - a), rows, 1)
        an[1, 0] = float(i)
        b[0, 0] += 2.0
        d = _series_reciprocal(_guard(_series_mul(an, d) + b))
        c = _guard(b + _series_mul(an, _series_reciprocal(c)))
        old, fraction = fraction, _series_mul(fraction, _series_mul(c, d))
        if _converged(fraction, old):
            break
    return _series_mul(_series_exp(exponent), fraction)


@numba.njit(**_JIT)
def gammainc_da(a, x, order):
    """d^order P(a, x) / da^order (order >= 1); 0 at x = 0 and x = inf (P is constant in a there)."""
    if not (a > 0.0 and x >= 0.0):
        return np.nan
    if x == 0.0 or x == np.inf or a == np.inf:  # (the NumPy backend's 0 for an infinite a too)
        return 0.0
    scale = math.gamma(order + 1.0)
    if x < a + 1.0:
        return scale * _gamma_lower_series(a, x, order)[order, 0]
    return -scale * _gamma_upper_fraction(a, x, order)[order, 0]


@numba.njit(**_JIT)
def _beta_exponent(a, b, x, rows, cols):
    """(a + da) log x + (b + db) log(1 - x) - log B(a + da, b + db) as a series."""
    out = np.zeros((rows, cols))
    out[0, 0] = a * math.log(x) + b * math.log1p(-x) - betaln(a, b)
    for i in range(rows):
        for j in range(cols):
            if i + j == 0:
                continue
            coefficient = _psi_order(i + j - 1, a + b)
            if j == 0:
                coefficient -= _psi_order(i - 1, a)
            if i == 0:
                coefficient -= _psi_order(j - 1, b)
            out[i, j] = coefficient / (math.gamma(i + 1.0) * math.gamma(j + 1.0))
    if rows > 1:
        out[1, 0] += math.log(x)
    if cols > 1:
        out[0, 1] += math.log1p(-x)
    return out


@numba.njit(**_JIT)
def _beta_series_fraction(p, q, x):
    """Numerical Recipes' betacf(p, q, x) in series arithmetic (p, q are series)."""
    rows, cols = p.shape
    one = _series_constant(1.0, rows, cols)
    total, p_plus, p_minus = p + q, p + one, p - one
    c = one.copy()
    d = _series_reciprocal(_guard(one - _series_mul(total, _series_reciprocal(p_plus)) * x))
    fraction = d
    old = fraction
    for m in range(1, DERIVATIVE_ITERATIONS):
        shifted = p + 2 * m * one
        even = _series_mul(q - m * one, _series_reciprocal(_series_mul(p_minus + 2 * m * one, shifted))) * (m * x)
        odd = -_series_mul(_series_mul(p + m * one, total + m * one),
                           _series_reciprocal(_series_mul(shifted, p_plus + 2 * m * one))) * x
        for coefficient in (even, odd):
            d = _series_reciprocal(_guard(one + _series_mul(coefficient, d)))
            c = _guard(one + _series_mul(coefficient, _series_reciprocal(c)))
            old, fraction = fraction, _series_mul(fraction, _series_mul(c, d))
        if _converged(fraction, old):
            break
    return fraction


@numba.njit(**_JIT)
def betainc_dab(a, b, x, da, db):
    """d^(da+db) I_x(a, b) / da^da db^db (da + db >= 1); 0 at x = 0 and x = 1 (I is 0 or 1 there)."""
    if not (a > 0.0 and b > 0.0 and x >= 0.0 and x <= 1.0):
        return np.nan
    if x == 0.0 or x == 1.0 or a == np.inf or b == np.inf:  # (the NumPy backend's 0 for infinite a or b too)
        return 0.0
    rows, cols = da + 1, db + 1
    swap = x >= (a + 1.0) / (a + b + 2.0)  # there I = 1 - I_(1-x)(b, a)
    p = _series_constant(b if swap else a, rows, cols)  # the parameter in the fraction's first place
    q = _series_constant(a if swap else b, rows, cols)
    if da:
        p[1, 0], q[1, 0] = (0.0, 1.0) if swap else (1.0, 0.0)
    if db:
        p[0, 1], q[0, 1] = (1.0, 0.0) if swap else (0.0, 1.0)
    fraction = _beta_series_fraction(p, q, 1.0 - x if swap else x)
    value = _series_mul(_series_exp(_beta_exponent(a, b, x, rows, cols)),
                        _series_mul(fraction, _series_reciprocal(p)))[da, db]
    scale = math.gamma(da + 1.0) * math.gamma(db + 1.0)
    return -scale * value if swap else scale * value
