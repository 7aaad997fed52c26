"""JAX lowerings of the gamma family (primitives/gamma_functions.py): jax.scipy.special where it has
the function with SciPy's conventions (gamma, beta, expn), and SciPy's own formulas where it has not:

    binom    scipy.special.binom's cases, as selects: NaN at negative integer n; the product formula
             for integer k < 20 (k reduced by symmetry for integer n > 0); otherwise 1 / ((n + 1) B(1 + n - k,
             1 + k)), 1 / B from gammaln (Stirling's series for the ratio of large arguments) and gammasgn,
             exactly 0 where a Gamma of the denominator has a pole; SciPy's asymptotic forms for n >= 1e10 k
             and k > 1e8 |n|. Measured against scipy.special.binom: 1e-13 relative for |n|, |k| < 40; where
             a Gamma argument exceeds 1e3 SciPy's lbeta cancels (up to 1e-8 relative off the exact product
             formula, which ours meets to 1e-14); for k > 1e6 with small n both inherit the rounding of
             1 + n - k (the two differ by up to 3e-6 there).
    zeta     jax.scipy.special.zeta (Hurwitz, s > 1), and where q == 1 the Riemann function continued to
             s < 1 as SciPy does: the reflection formula for s < 0 (0 at the negative even integers),
             the Euler-Maclaurin sum for 0 <= s < 1 (its terms are analytic in s).
    zeta_ds  d^k/ds^k zeta(s, q): the Euler-Maclaurin formula in truncated Taylor arithmetic in s that the
             NumPy backend uses (backends/hurwitz_zeta.py), in jnp: a fixed number of terms, so no loop; NaN
             for q <= 0 and where the Hurwitz function is (s < 1, q != 1).
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import jax.scipy.special as jss

from ...primitives import gamma_functions as gf
from ..hurwitz_zeta import BERNOULLI, zeta_derivative
from .registry import lowering

LARGE = 1e3  # arguments of Gamma from which Stirling's series is used for ratios
BINOM_PRODUCT_TERMS = 20  # SciPy multiplies out binom(n, k) for integer 0 <= k < 20
EULER_MACLAURIN_TERMS = 12  # sum_{n < N} n^-s, then the tail: N^-17 ~ 1e-18 relative for 0 <= s < 1


@lowering(gf.gamma_p)
def _gamma(x):
    return jss.gamma(x)


@lowering(gf.beta_p)
def _beta(a, b):
    return jss.beta(a, b)


@lowering(gf.expn_p)
def _expn(x, *, n):
    return jss.expn(n, x)


def _binom_product(n, k):
    """prod_{i=1..k} (i + n - k) / i for integer 0 <= k < 20, rescaled as SciPy does past 1e50."""
    num, den = jnp.ones_like(n), jnp.ones_like(n)
    for i in range(1, BINOM_PRODUCT_TERMS):
        active = i <= k
        num = jnp.where(active, num * (i + n - k), num)
        den = jnp.where(active, den * i, den)
        large = active & (jnp.abs(num) > 1e50)
        num, den = jnp.where(large, num / den, num), jnp.where(large, 1.0, den)
    return num / den


def _stirling_correction(x):
    """log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) for x >= LARGE (error below 1e-20)."""
    return 1 / (12 * x) - 1 / (360 * x ** 3) + 1 / (1260 * x ** 5)


def _log_gamma_ratio(x, d):
    """log Gamma(x + d) - log Gamma(x) for x >= LARGE and |d| <= x / 2, from Stirling's series with its leading
    terms cancelled by hand: (x - 1/2) log1p(d / x) + d log(x + d) - d + the corrections' difference (gammaln's
    of large arguments would cancel: SciPy loses up to 1e-8 relative there)."""
    return ((x - 0.5) * jnp.log1p(d / x) + d * jnp.log(x + d) - d + _stirling_correction(x + d)
            - _stirling_correction(x))


def _reciprocal_beta(a, b):
    """1 / B(a, b) = Gamma(a + b) / (Gamma(a) Gamma(b)), with the Gammas' signs; 0 where Gamma(a) or Gamma(b)
    has a pole (a non-positive integer). Where one argument is large: Gamma(a + b) / Gamma(big) as a ratio, or,
    if the other is negative, Gamma(a + b) sin(pi small) Gamma(1 - small) / (pi Gamma(big)) (reflection)."""
    big, small = jnp.maximum(a, b), jnp.minimum(a, b)
    safe_big = jnp.maximum(big, LARGE)
    direct = (jss.gammasgn(a + b) * jss.gammasgn(a) * jss.gammasgn(b)
              * jnp.exp(jss.gammaln(a + b) - jss.gammaln(a) - jss.gammaln(b)))
    shift = jnp.where(big >= LARGE, small, 0.0)
    ratio = jss.gammasgn(small) * jnp.exp(_log_gamma_ratio(safe_big, shift) - jss.gammaln(small))
    reflected_shift = jnp.clip(1 - small - big, -0.5 * safe_big, 0.5 * safe_big)
    reflected = (jss.gamma(a + b) * jnp.sin(jnp.pi * jnp.mod(small, 2.0)) / jnp.pi
                 * jnp.exp(_log_gamma_ratio(safe_big, reflected_shift)))
    large = big >= LARGE
    value = jnp.where(large & (small > 0) & (small <= 0.5 * big), ratio,
                      jnp.where(large & (small < 0) & (jnp.abs(1 - small - big) <= 0.5 * big), reflected, direct))
    pole = ((a <= 0) & (a == jnp.floor(a))) | ((b <= 0) & (b == jnp.floor(b)))
    return jnp.where(pole, 0.0, value)


@lowering(gf.binom_p)
def _binom(n, k):
    n, k = jnp.broadcast_arrays(n, k)
    n_floor, k_floor = jnp.floor(n), jnp.floor(k)
    integer_n = n == n_floor
    # the integer case, for |n| > 1e-8 or n == 0 (small nonzero n would lose precision in the product)
    integer_case = (k == k_floor) & ((jnp.abs(n) > 1e-8) | (n == 0))
    kx = jnp.where(integer_n & (k_floor > n_floor / 2) & (n_floor > 0), n_floor - k_floor, k_floor)
    product_case = integer_case & (kx >= 0) & (kx < BINOM_PRODUCT_TERMS)
    product = _binom_product(n, jnp.where(product_case, kx, 0.0))
    # the general case and its two asymptotic forms
    safe_k = jnp.where(k == 0, 1.0, k)
    large_n = (n >= 1e10 * k) & (k > 0)
    from_lbeta = _reciprocal_beta(1 + n - k, 1 + k) / (n + 1)  # SciPy: exp(-lbeta - log(n + 1)), no overflow
    large_k = k > 1e8 * jnp.abs(n)
    num = (jss.gamma(1 + n) / jnp.abs(safe_k) + jss.gamma(1 + n) * n / (2 * safe_k ** 2)) / (
        jnp.pi * jnp.abs(safe_k) ** n)
    # k > 1e8 |n| >= 0: SciPy takes sin((k - n) pi) from k's fractional part where floor(k) fits an int
    fits = k_floor < 2.0 ** 31
    sign = jnp.where(fits & (jnp.mod(k_floor, 2) == 1), -1.0, 1.0)
    asymptotic_k = num * jnp.sin((jnp.where(fits, k - k_floor, k) - n) * jnp.pi) * sign
    general = 1 / (n + 1) * _reciprocal_beta(1 + n - k, 1 + k)
    value = jnp.where(large_n, from_lbeta, jnp.where(large_k, asymptotic_k, general))
    value = jnp.where(product_case, product, value)
    return jnp.where((n < 0) & integer_n, jnp.nan, value)


def _riemann_zeta_near_zero(s):
    """zeta(s) for 0 <= s < 1 by Euler-Maclaurin: sum_{n<N} n^-s + N^(1-s)/(s-1) + N^-s/2 + the Bernoulli terms."""
    big_n = float(EULER_MACLAURIN_TERMS)
    total = sum(jnp.power(float(m), -s) for m in range(1, EULER_MACLAURIN_TERMS))
    total = total + jnp.power(big_n, 1 - s) / (s - 1) + 0.5 * jnp.power(big_n, -s)
    rising = s  # s (s + 1) ... (s + 2j - 2)
    for j, bernoulli in enumerate(BERNOULLI, start=1):
        total = total + bernoulli / math.factorial(2 * j) * rising * jnp.power(big_n, 1 - s - 2 * j)
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
    return total


def _riemann_zeta_negative(s):
    """zeta(s) for s < 0 by the reflection formula: 2^s pi^(s-1) sin(pi s / 2) Gamma(1 - s) zeta(1 - s), the
    powers and Gamma(1 - s) as one exponential (each alone overflows or underflows for s < -170), the sine's
    argument reduced exactly (s / 2 mod 2) first."""
    scale = jnp.exp(s * math.log(2.0) + (s - 1) * math.log(math.pi) + jss.gammaln(1 - s))
    reflected = scale * jnp.sin(jnp.pi * jnp.mod(s / 2, 2.0)) * jss.zeta(1 - s, 1.0)
    even = jnp.floor(s / 2) * 2 == s
    return jnp.where(even, 0.0, reflected)  # the trivial zeros, exactly


@lowering(gf.zeta_p)
def _zeta(s, q):
    s, q = jnp.broadcast_arrays(s, q)
    hurwitz = jss.zeta(s, q)
    continued = jnp.where(s < 0, _riemann_zeta_negative(jnp.where(s < 0, s, -0.5)),  # each branch on its domain
                          _riemann_zeta_near_zero(jnp.where((s >= 0) & (s < 1), s, 0.5)))
    return jnp.where((q == 1.0) & (s < 1), continued, hurwitz).astype(s.dtype)


@lowering(gf.zeta_ds_p)
def _zeta_ds(s, q, *, order):
    dtype = jnp.result_type(s)
    s, q = jnp.broadcast_arrays(jnp.asarray(s, jnp.float64), jnp.asarray(q, jnp.float64))
    return zeta_derivative(s, q, order, jnp).astype(dtype)
