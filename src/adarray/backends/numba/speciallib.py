"""Error-function and Bessel special functions as native scalar functions for the generated code
(float64 in, float64 out), written from the formulas with SciPy's values at the edges:

* erfc: libm's; erfcx(t) = exp(t^2) erfc(t) by Laplace's continued fraction for t >= 10;
* erfinv: Winitzki's closed-form estimate (2e-3 relative), then Halley steps on erf(y) - x for |x| <= 1/2
  (f''/f' = -2y, so a step is d / (1 + y d) with d = f / f'); for |x| > 1/2 through ndtri, as
  erfinv(x) = -ndtri((1 - x) / 2) / sqrt(2) (1 - x is exact there);
* ndtri: sqrt(2) erfinv(2p - 1) for 1/4 <= p <= 3/4 (2p - 1 exact); below, Newton's method on
  log_ndtr(y) = log p from Abramowitz and Stegun's 26.2.23 estimate (the derivative
  sqrt(2/pi) / erfcx(-y / sqrt(2)) never underflows, so p down to 5e-324 converges); above, -ndtri(1 - p);
* log_ndtr: log1p(-ndtr(-x)) for x > 0, log(erfc(-x / sqrt 2) / 2) until erfc underflows, then
  -t^2 + log(erfcx(t) / 2);
* i0e, i1e: e^-|x| I_nu(x) by the power series sum (x/2)^(2k+nu) / (k! (k+nu)!) for |x| <= 20, the
  asymptotic series e^-x I_nu(x) ~ sum_k (-1)^k a_k(nu) / x^k / sqrt(2 pi x) beyond;
* xlogy, xlog1py: 0 where x == 0 and y is not NaN.

This module imports numba: only generated code imports it.

    >>> round(erfinv(0.5), 15)
    0.476936276204470
"""
from __future__ import annotations

import math

import numba
import numpy as np

_JIT = dict(cache=True, error_model="numpy", fastmath=False)
SQRT2 = 1.4142135623730950488
SQRT_PI_OVER_2 = 0.88622692545275801365
TWO_OVER_SQRT_PI = 1.1283791670955125739
SQRT_2_OVER_PI = 0.79788456080286535588
LOG_HALF = -0.69314718055994530942
WINITZKI = 0.147


@numba.njit(**_JIT)
def erfc(x):
    return math.erfc(x)


@numba.njit(**_JIT)
def erfcx(t):
    """exp(t^2) erfc(t): directly below 10, by Laplace's continued fraction
    erfc(t) = exp(-t^2) / sqrt(pi) / (t + (1/2) / (t + 1 / (t + (3/2) / (t + ...)))) beyond (60 levels)."""
    if t < 10.0:
        return math.exp(t * t) * math.erfc(t)
    if t == np.inf:
        return 0.0
    fraction = t
    for k in range(60, 0, -1):
        fraction = t + 0.5 * k / fraction
    return 1.0 / (math.sqrt(math.pi) * fraction)


@numba.njit(**_JIT)
def _erfinv_central(x):
    """erfinv(x) for |x| <= 1/2 (x not NaN)."""
    if abs(x) < 1e-150:
        return SQRT_PI_OVER_2 * x  # the series' next term is below the last bit
    log_term = math.log1p(-x * x)
    c = 2.0 / (math.pi * WINITZKI) + 0.5 * log_term
    y = math.copysign(math.sqrt(math.sqrt(c * c - log_term / WINITZKI) - c), x)
    for _ in range(3):
        step = (math.erf(y) - x) / (TWO_OVER_SQRT_PI * math.exp(-y * y))
        y -= step / (1.0 + y * step)
    return y


@numba.njit(**_JIT)
def _ndtri_lower(p):
    """ndtri(p) for 0 < p < 1/4: Newton on log_ndtr(y) - log p."""
    t = math.sqrt(-2.0 * math.log(p))
    y = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    target = math.log(p)
    for _ in range(50):
        slope = SQRT_2_OVER_PI / erfcx(-y / SQRT2)  # d log ndtr / dy
        step = (log_ndtr(y) - target) / slope
        y -= step
        if abs(step) <= 1e-15 * abs(y):
            break
    return y


@numba.njit(**_JIT)
def ndtri(p):
    """The inverse of the standard normal CDF."""
    if p != p or p < 0.0 or p > 1.0:
        return np.nan
    if p == 0.0:
        return -np.inf
    if p == 1.0:
        return np.inf
    if p < 0.25:
        return _ndtri_lower(p)
    if p > 0.75:
        return -_ndtri_lower(1.0 - p)
    return SQRT2 * _erfinv_central(2.0 * p - 1.0)


@numba.njit(**_JIT)
def erfinv(x):
    if x != x or abs(x) > 1.0:
        return np.nan
    if abs(x) == 1.0:
        return math.copysign(np.inf, x)
    if x == 0.0:
        return 0.0  # SciPy's +0.0 for -0.0 too
    if abs(x) <= 0.5:
        return _erfinv_central(x)
    return math.copysign(-_ndtri_lower(0.5 * (1.0 - abs(x))) / SQRT2, x)


@numba.njit(**_JIT)
def upper_tail(x):
    """1 - ndtr(x) = erfc(x / sqrt 2) / 2 for x > 0. From x / sqrt 2 = 10 on, as exp(-x^2 / 2) erfcx(x / sqrt 2) with
    x^2 split exactly into hi^2 + (2 hi lo + lo^2) (Dekker): erfc of the rounded x / sqrt 2 would be off by
    x^2 ulp (1e-13 at x = 35)."""
    t = x / SQRT2
    if t < 10.0 or t > 28.0:  # (erfc underflows to 0 before 28)
        return 0.5 * math.erfc(t)
    scaled = 134217729.0 * x  # 2^27 + 1: hi keeps the upper 26 bits of x, so hi^2 is exact
    hi = scaled - (scaled - x)
    lo = x - hi
    return 0.5 * math.exp(-0.5 * hi * hi) * math.exp(-0.5 * (2.0 * hi * lo + lo * lo)) * erfcx(t)


@numba.njit(**_JIT)
def log_ndtr(x):
    """log of the standard normal CDF."""
    if x > 0.0:  # log(1 - q) for the upper tail q
        return math.log1p(-upper_tail(x))
    t = -x / SQRT2
    if t < 20.0:
        return math.log(0.5 * math.erfc(t))
    return LOG_HALF - t * t + math.log(erfcx(t))


# --- exp(-|x|) I_0(x) and exp(-|x|) I_1(x) --------------------------------------------------------------

SERIES_LIMIT = 20.0


@numba.njit(**_JIT)
def _bessel_i_scaled(x, nu):
    """e^-x I_nu(x) for x >= 0 and nu = 0 or 1."""
    if x == np.inf:
        return 0.0
    if x <= SERIES_LIMIT:
        quarter = 0.25 * x * x
        term = 1.0 if nu == 0 else 0.5 * x
        total = term
        k = 0
        while term > 1e-17 * total:
            k += 1
            term *= quarter / (k * (k + nu))
            total += term
        return total * math.exp(-x)
    mu = 4.0 * nu * nu
    term, total = 1.0, 1.0
    for k in range(1, 40):
        term *= -(mu - (2 * k - 1) ** 2) / (8.0 * k * x)
        total += term
        if abs(term) < 1e-17 * abs(total):
            break
    return total / math.sqrt(2.0 * math.pi * x)


@numba.njit(**_JIT)
def i0e(x):
    if x != x:
        return np.nan
    return _bessel_i_scaled(abs(x), 0)


@numba.njit(**_JIT)
def i1e(x):
    if x != x:
        return np.nan
    if x == 0.0:
        return 0.0
    value = _bessel_i_scaled(abs(x), 1)
    return value if x > 0.0 else -value


@numba.njit(**_JIT)
def xlogy(x, y):
    if x == 0.0 and y == y:
        return 0.0
    return x * math.log(y)


@numba.njit(**_JIT)
def xlog1py(x, y):
    if x == 0.0 and y == y:
        return 0.0
    return x * math.log1p(y)
