"""The gamma family as native scalar functions for the generated code (float64 in, float64 out).

Written from the formulas, with SciPy's conventions at poles, infinities and NaN (scipy.special is the
NumPy backend's reference; tests/test_numba_special.py compares on dense grids):

* gamma, gammaln: libm's tgamma and lgamma (gammaln(-inf) = -inf, as SciPy);
* digamma: psi(x) = psi(x + n) - sum 1 / (x + k) up to x + n >= 10, then the asymptotic series
  log x - 1 / 2x - sum B_2k / (2k x^2k); near its positive zero x0 the Taylor series
  psi(x0 + h) = sum_n (-1)^(n+1) zeta(n + 1, x0) h^n (relative accuracy at the zero); reflection
  psi(x) = psi(1 - x) - pi cot(pi x) for x < 0;
* hurwitz_zeta(s, q): Euler-Maclaurin (direct terms until q + N >= 10, then the integral, half the last
  term and 12 Bernoulli corrections), SciPy's domain (s > 1; q <= 0 only for integer s, inf at
  non-positive integer q); riemann_zeta continues q = 1 to s < 1 (Euler-Maclaurin for -1 <= s < 1, the
  reflection formula in logarithms for s < 0);
* polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x), as SciPy;
* zeta_ds(s, q, k): the k-th s-derivative of zeta, the Euler-Maclaurin formula in truncated Taylor
  arithmetic in s of backends/hurwitz_zeta.py (the NumPy and JAX backends'), with its constants;
* beta, betaln: Gamma(a) Gamma(b) / Gamma(a + b) (log-gammas where a Gamma overflows, Stirling's series
  for the ratio when one argument is a million times the other), SciPy's limits at negative integers;
* binom: SciPy's cases (the product for integer k < 20, asymptotic forms, else 1 / ((n + 1) B)).

This module imports numba: only generated code imports it.

    >>> round(digamma(1.0), 12)   # -Euler's gamma
    -0.577215664902
"""
from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numba
import numpy as np

from ..hurwitz_zeta import BERNOULLI as ZETA_BERNOULLI
from ..hurwitz_zeta import DIRECT_TERMS as ZETA_DIRECT_TERMS

_JIT = dict(cache=True, error_model="numpy", fastmath=False)
INT_LIMIT = 2.0 ** 31
EPS = 2.0 ** -53


def bernoulli_numbers(count: int) -> list[Fraction]:
    """B_2, B_4, ..., B_2count exactly (the Akiyama-Tanigawa algorithm)."""
    size = 2 * count + 1
    row, numbers = [Fraction(0)] * (size + 1), []
    for m in range(size + 1):
        row[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])  # B_m (B_1 = +1/2 in this convention; odd ones unused)
    return [numbers[2 * k] for k in range(1, count + 1)]


_B = bernoulli_numbers(12)
# log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) = sum_k B_2k / (2k (2k - 1) x^(2k-1))
STIRLING = tuple(float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(_B[:10], start=1))
# psi(x) - log x + 1 / 2x = -sum_k B_2k / (2k x^2k)
PSI_ASYMPTOTIC = tuple(float(b / (2 * k)) for k, b in enumerate(_B[:10], start=1))
# Euler-Maclaurin: B_2k / (2k)!
EULER_MACLAURIN = tuple(float(b / math.factorial(2 * k)) for k, b in enumerate(_B, start=1))
HALF_LOG_TWO_PI = 0.91893853320467274178
LOG_PI = 1.14472988584940017414
LOG_TWO = 0.69314718055994530942
ZETA_BERNOULLI_TERMS = tuple(b / math.factorial(2 * j) for j, b in enumerate(ZETA_BERNOULLI, start=1))


@numba.njit(**_JIT)
def _gamma_sign(x):
    if x > 0.0:
        return 1.0
    return -1.0 if np.floor(x) % 2.0 == 1.0 else 1.0  # Gamma < 0 on (-2k-1, -2k)


@numba.njit(**_JIT)
def gamma(x):
    value = math.gamma(x)
    if value == 0.0 and x < 0.0:  # underflow: a zero of Gamma's sign (SciPy's -0.0 where -x exceeds a C int)
        return -0.0 if -x >= INT_LIMIT else _gamma_sign(x) * 0.0
    return value


@numba.njit(**_JIT)
def gammaln(x):
    if x == -np.inf or math.isinf(1.0 / x):  # SciPy's values (inf once 1 / x overflows)
        return -np.inf if x == -np.inf else np.inf
    return math.lgamma(x)


@numba.njit(**_JIT)
def stirling_correction(x):
    """log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) for x >= 10 (error below 1e-17)."""
    inverse = 1.0 / x
    square = inverse * inverse
    total = 0.0
    for k in range(len(STIRLING) - 1, -1, -1):
        total = total * square + STIRLING[k]
    return total * inverse


@numba.njit(**_JIT)
def log_gamma_ratio(x, d):
    """log Gamma(x + d) - log Gamma(x) for x >= 1e3 and |d| <= x / 2: Stirling's series with its leading
    terms cancelled by hand ((x - 1/2) log1p(d / x) + d log(x + d) - d), no difference of large logs."""
    return ((x - 0.5) * math.log1p(d / x) + d * math.log(x + d) - d
            + stirling_correction(x + d) - stirling_correction(x))


@numba.njit(**_JIT)
def cot_pi(x):
    """cot(pi x) for a non-integer x: of r = x - round(x) (exact), exactly 0 at half-integers (tan(pi (1/2 - |r|))
    there)."""
    r = x - np.round(x)
    if abs(r) <= 0.25:
        return 1.0 / math.tan(math.pi * r)
    return math.copysign(math.tan(math.pi * (0.5 - abs(r))), r)


# --- digamma -------------------------------------------------------------------------------------

getcontext().prec = 40
_ROOT = Decimal("1.4616321449683623412626595423257213284681962040064463512959884086")
ROOT_HI = float(_ROOT)
ROOT_LO = float(_ROOT - Decimal(ROOT_HI))
ROOT_RADIUS = 0.125


@numba.njit(**_JIT)
def _psi_positive(x):
    """psi(x) for x > 0 by recurrence and the asymptotic series."""
    shift = 0.0
    while x < 10.0:
        shift -= 1.0 / x
        x += 1.0
    inverse_square = 1.0 / (x * x)
    series = 0.0
    for k in range(len(PSI_ASYMPTOTIC) - 1, -1, -1):
        series = series * inverse_square + PSI_ASYMPTOTIC[k]
    return shift + math.log(x) - 0.5 / x - series * inverse_square


@numba.njit(**_JIT)
def hurwitz_zeta(s, q):
    """zeta(s, q) = sum_n (n + q)^-s, SciPy's domain: s > 1 (inf at s = 1, NaN below); q <= 0 only for an
    integer s (inf at a non-positive integer q)."""
    if s == 1.0:
        return np.inf
    if s < 1.0:
        return np.nan
    if q <= 0.0:
        if q == np.floor(q):
            return np.inf
        if s != np.floor(s):
            return np.nan
    if s == np.inf:  # SciPy's values (0 * inf in its first step for 1 < q <= 1e8)
        return np.inf if q < 1.0 else 1.0 if q == 1.0 else 0.0 if q > 1e8 else np.nan
    if q == np.inf:
        return 0.0 if s == s else np.nan
    if q < REFLECT_BELOW and s <= REFLECT_MAX_ORDER:
        return _zeta_reflected(s, q)
    return _hurwitz_sum(s, q)


@numba.njit(**_JIT)
def _hurwitz_sum(s, q):
    """zeta(s, q) for s > 1 by Euler-Maclaurin (q > 0, or q < 0 for an integer s: the direct terms pass the poles)."""
    if q > 1e8:  # three terms of Euler-Maclaurin with no direct sum (DLMF 25.11.43)
        return q ** (1.0 - s) / (s - 1.0) + 0.5 * q ** -s + s * q ** (-s - 1.0) / 12.0
    total = q ** -s
    a = q
    n = 0
    while n < 9 or a < 10.0:
        n += 1
        a += 1.0
        term = a ** -s
        total += term
        if abs(term) < EPS * abs(total):
            return total
    # sum_{m >= a} m^-s = integral + half the first term - the Bernoulli corrections
    power = a ** -s
    total += power * a / (s - 1.0) - 0.5 * power
    rising = s                      # s (s + 1) ... (s + 2k - 2)
    power /= a                      # a^(-s-2k+1)
    for k in range(len(EULER_MACLAURIN)):
        correction = EULER_MACLAURIN[k] * rising * power
        total += correction
        if abs(correction) < EPS * abs(total):
            break
        rising *= (s + 2 * k + 1) * (s + 2 * k + 2)
        power /= a * a
    return total


REFLECT_BELOW = -20.0    # for q below, an integer s: the reflection instead of summing -q terms one by one
REFLECT_MAX_ORDER = 60.0  # (the cotangent's derivative polynomials overflow for higher s)


@numba.njit(**_JIT)
def _zeta_reflected(s, q):
    """zeta(s, q) for an integer s >= 2 and a non-integer q < 0, from the sum over all integers:
    sum_m (q + m)^-s = (-1)^(s-1) / (s-1)! pi^s cot^(s-1)(pi q) = zeta(s, q) + (-1)^s zeta(s, 1 - q), where
    cot^(j)(y) = P_j(cot y), P_0(c) = c, P_(j+1)(c) = -(1 + c^2) P_j'(c) (odd or even in c: evaluated at |c|)."""
    order = int(s) - 1
    c = cot_pi(q)
    coefficients = np.zeros(order + 2)
    coefficients[1] = 1.0
    derivative = np.empty(order + 2)
    for _ in range(order):                         # P <- -(1 + c^2) P'
        for k in range(order + 1):
            derivative[k] = (k + 1) * coefficients[k + 1]
        derivative[order + 1] = 0.0
        for k in range(order + 1, -1, -1):
            coefficients[k] = -(derivative[k] + (derivative[k - 2] if k >= 2 else 0.0))
    value = 0.0
    magnitude = abs(c)
    for k in range(order + 1, -1, -1):
        value = value * magnitude + coefficients[k]
    if c < 0.0 and order % 2 == 0:                 # P_j is odd in c for even j
        value = -value
    sign = 1.0 if order % 2 == 0 else -1.0
    every = sign / math.gamma(s) * math.pi ** s * value
    mirrored = _hurwitz_sum(s, 1.0 - q)
    return every - mirrored if order % 2 == 1 else every + mirrored


def _root_series():
    """(-1)^(n+1) zeta(n + 1, x0), the Taylor coefficients of psi at its positive zero (computed once)."""
    return tuple((-1.0) ** (n + 1) * _hurwitz_sum.py_func(n + 1.0, ROOT_HI) for n in range(1, 24))


PSI_AT_ROOT = _root_series()


@numba.njit(**_JIT)
def digamma(x):
    if x != x or x == -np.inf:
        return np.nan
    if x == np.inf:
        return np.inf
    if x == 0.0:
        return -np.inf if math.copysign(1.0, x) > 0 else np.inf
    if x < 0.0:
        if x == np.floor(x):
            return np.nan
        return _digamma_positive(1.0 - x) - math.pi * cot_pi(x)
    return _digamma_positive(x)


@numba.njit(**_JIT)
def _digamma_positive(x):
    h = (x - ROOT_HI) - ROOT_LO
    if abs(h) < ROOT_RADIUS:
        total = 0.0
        for k in range(len(PSI_AT_ROOT) - 1, -1, -1):
            total = (total + PSI_AT_ROOT[k]) * h
        return total
    return _psi_positive(x)


@numba.njit(**_JIT)
def polygamma(n, x):
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1 (SciPy's formula, its values for x <= 0)."""
    sign = 1.0 if n % 2 == 1 else -1.0
    return sign * math.gamma(n + 1.0) * hurwitz_zeta(n + 1.0, x)


# --- the Riemann zeta function, continued -------------------------------------------------------------


@numba.njit(**_JIT)
def _zeta_near_zero(s):
    """zeta(s) for -1 <= s < 1: Euler-Maclaurin with N = 12 (its terms are analytic in s)."""
    big = 12.0
    total = 0.0
    for m in range(1, 12):
        total += float(m) ** -s
    total += big ** (1.0 - s) / (s - 1.0) + 0.5 * big ** -s
    rising = s
    power = big ** (-s - 1.0)
    for k in range(len(EULER_MACLAURIN)):
        total += EULER_MACLAURIN[k] * rising * power
        rising *= (s + 2 * k + 1) * (s + 2 * k + 2)
        power /= big * big
    return total


@numba.njit(**_JIT)
def riemann_zeta(s):
    """zeta(s) continued to s < 1: 0 at the negative even integers; the reflection formula
    2^s pi^(s-1) sin(pi s / 2) Gamma(1 - s) zeta(1 - s) for s < 0, its powers and Gamma as one exponential."""
    if s != s or s == -np.inf:
        return np.nan
    if s >= 1.0:
        return 1.0 if s == np.inf else hurwitz_zeta(s, 1.0)
    if s >= -1.0:  # (1 - s would round: zeta(1 - s) ~ -1 / s loses digits near 0)
        return _zeta_near_zero(s)
    half = 0.5 * s
    if half == np.floor(half):
        return 0.0
    reduced = half - 2.0 * np.floor(half / 2.0)  # s / 2 mod 2, exactly
    sine = math.sin(math.pi * reduced)
    log_scale = s * LOG_TWO + (s - 1.0) * LOG_PI + math.lgamma(1.0 - s) + math.log(abs(sine))
    return math.copysign(math.exp(log_scale), sine) * hurwitz_zeta(1.0 - s, 1.0)


@numba.njit(**_JIT)
def zeta(s, q):
    """The zeta primitive: Hurwitz, and Riemann's continued function where q == 1 (as the NumPy backend)."""
    return riemann_zeta(s) if q == 1.0 else hurwitz_zeta(s, q)


# --- zeta_ds: Euler-Maclaurin in Taylor arithmetic in s (backends/hurwitz_zeta.py) -----------------------


@numba.njit(**_JIT)
def _add_power_series(total, base, s, scale):
    """total += scale * base^-(s + ds) as a series: base^-s (-log base)^k / k!."""
    log_base = math.log(base)
    term = math.exp(-s * log_base) * scale
    for k in range(total.shape[0]):
        total[k] += term
        term *= -log_base / (k + 1)


@numba.njit(**_JIT)
def zeta_ds(s, q, order):
    """d^order/ds^order zeta(s, q); NaN for q <= 0 and where the Hurwitz function is (s < 1 with q != 1)."""
    if not (q > 0.0 and (s >= 1.0 or q == 1.0)):
        return np.nan
    size = order + 1
    total = np.zeros(size)
    a = ZETA_DIRECT_TERMS + q
    for n in range(ZETA_DIRECT_TERMS):
        _add_power_series(total, n + q, s, 1.0)
    tail = np.zeros(size)                          # a^-s
    _add_power_series(tail, a, s, 1.0)
    reciprocal = np.empty(size)                    # 1 / (s - 1 + ds)
    c = s - 1.0
    for k in range(size):
        reciprocal[k] = (-1.0) ** k / c ** (k + 1)
    for k in range(size):                          # a^(1-s) / (s - 1)
        acc = 0.0
        for i in range(k + 1):
            acc += a * tail[i] * reciprocal[k - i]
        total[k] += acc
    for k in range(size):
        total[k] += 0.5 * tail[k]
    rising = np.zeros(size)                        # s (s + 1) ... (s + 2j - 2) as a series
    rising[0] = s
    if size > 1:
        rising[1] = 1.0
    power = tail / a                               # a^(-s-1)
    scratch = np.empty(size)
    for j in range(1, len(ZETA_BERNOULLI_TERMS) + 1):
        if j > 1:
            for c0 in (s + 2 * j - 3, s + 2 * j - 2):  # times (c0 + ds)
                for k in range(size - 1, -1, -1):
                    scratch[k] = rising[k] * c0 + (rising[k - 1] if k > 0 else 0.0)
                rising[:] = scratch
            power = power / (a * a)
        weight = ZETA_BERNOULLI_TERMS[j - 1]
        for k in range(size):
            acc = 0.0
            for i in range(k + 1):
                acc += rising[i] * power[k - i]
            total[k] += weight * acc
    return math.gamma(order + 1.0) * total[order]


# --- beta, betaln ------------------------------------------------------------------------------------

MAX_GAMMA = 171.61447887182298  # Gamma overflows beyond
LARGE_RATIO = 1e6


@numba.njit(**_JIT)
def _is_nonpositive_integer(x):
    return x <= 0.0 and x == np.floor(x)


@numba.njit(**_JIT)
def _beta_at_negative_integer(a, b):
    """B(a, b) for a non-positive integer a: the limit (-1)^b B(1 - a - b, b) for an integer b with
    a + b < 1, else a pole (SciPy's values)."""
    if a > -INT_LIMIT and b == np.floor(b) and 1.0 - a - b > 0.0:  # (SciPy: where a fits a C int)
        sign = 1.0 if b % 2.0 == 0.0 else -1.0
        return sign * (np.inf if b <= 0.0 else _beta_finite(1.0 - a - b, b))  # (B(., b) has a pole at b <= 0)
    return np.inf


@numba.njit(**_JIT)
def _log_beta_large(big, small):
    """log |B(big, small)| for big > 1e6 |small| and big > 1e6: Stirling's series for the ratio of Gammas."""
    return math.lgamma(small) - log_gamma_ratio(big, small)


@numba.njit(**_JIT)
def beta(a, b):
    if a == -np.inf or b == -np.inf:
        return np.inf
    if _is_nonpositive_integer(a):
        return _beta_at_negative_integer(a, b)
    if _is_nonpositive_integer(b):
        return _beta_at_negative_integer(b, a)
    if a != a or b != b:
        return np.nan
    return _beta_finite(a, b)


@numba.njit(**_JIT)
def _beta_finite(a, b):
    """B(a, b) where neither a nor b is a non-positive integer or NaN."""
    big, small = (a, b) if abs(a) >= abs(b) else (b, a)
    if big == np.inf:  # Gamma(small) big^-small (NaN where SciPy's series overflows: b (1 - b) / 2a)
        if math.isinf(small * (1.0 - small)):
            return np.nan
        return 0.0 if small > 0.0 else _gamma_sign(small) * np.inf
    if big > LARGE_RATIO * abs(small) and big > LARGE_RATIO:
        return _gamma_sign(small) * math.exp(_log_beta_large(big, small))
    total = a + b
    if _is_nonpositive_integer(total):  # a pole of Gamma(a + b) only: a zero with the other Gammas' sign
        return _gamma_sign(a) * _gamma_sign(b) * 0.0
    if abs(total) > MAX_GAMMA or abs(a) > MAX_GAMMA or abs(b) > MAX_GAMMA:
        sign = _gamma_sign(a) * _gamma_sign(b) * _gamma_sign(total)
        value = math.lgamma(a) + math.lgamma(b) - math.lgamma(total)
        return sign * math.exp(value)
    g_total, g_a, g_b = math.gamma(total), math.gamma(a), math.gamma(b)
    if g_total == 0.0:
        return np.inf
    if abs(g_a - g_total) > abs(g_b - g_total):  # divide the factor nearer the total by it
        return g_b / g_total * g_a
    return g_a / g_total * g_b


@numba.njit(**_JIT)
def betaln(a, b):
    """log |B(a, b)|."""
    if a == -np.inf or b == -np.inf:
        return np.inf
    if _is_nonpositive_integer(a):
        return math.log(abs(_beta_at_negative_integer(a, b)))
    if _is_nonpositive_integer(b):
        return math.log(abs(_beta_at_negative_integer(b, a)))
    if a != a or b != b:
        return np.nan
    big, small = (a, b) if abs(a) >= abs(b) else (b, a)
    if big == np.inf:
        if math.isinf(small * (1.0 - small)):
            return np.nan
        return -np.inf if small > 0.0 else np.inf
    if big > LARGE_RATIO * abs(small) and big > LARGE_RATIO:
        return _log_beta_large(big, small)
    total = a + b
    if abs(total) > MAX_GAMMA or abs(a) > MAX_GAMMA or abs(b) > MAX_GAMMA:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(total)
    return math.log(abs(beta(a, b)))


# --- binom --------------------------------------------------------------------------------------------

PRODUCT_TERMS = 20  # binom(n, k) is multiplied out for integer 0 <= k < 20


@numba.njit(**_JIT)
def binom(n, k):
    """The binomial coefficient of real n and k, with SciPy's cases."""
    if n != n or k != k:
        return np.nan
    if n < 0.0 and n == np.floor(n):
        return np.nan
    k_floor = np.floor(k)
    if k == k_floor and (abs(n) > 1e-8 or n == 0.0):
        n_floor = np.floor(n)
        kx = k_floor
        if n_floor == n and kx > n_floor / 2.0 and n_floor > 0.0:
            kx = n_floor - kx  # symmetry
        if 0.0 <= kx < PRODUCT_TERMS:
            numerator, denominator = 1.0, 1.0
            for i in range(1, int(kx) + 1):
                numerator *= i + n - kx
                denominator *= i
                if abs(numerator) > 1e50:
                    numerator /= denominator
                    denominator = 1.0
            return numerator / denominator
    if n >= 1e10 * k and k > 0.0:
        return math.exp(-betaln(1.0 + n - k, 1.0 + k) - math.log(n + 1.0))
    if k > 1e8 * abs(n):
        numerator = math.gamma(1.0 + n) / abs(k) + math.gamma(1.0 + n) * n / (2.0 * k * k)
        numerator /= math.pi * abs(k) ** n
        if k_floor < 2.0 ** 31:  # k > 0 here; the sine's argument reduced by k's integer part
            sign = -1.0 if k_floor % 2.0 == 1.0 else 1.0
            return numerator * math.sin((k - k_floor - n) * math.pi) * sign
        return numerator * math.sin((k - n) * math.pi)
    return 1.0 / (n + 1.0) / beta(1.0 + n - k, 1.0 + k)
