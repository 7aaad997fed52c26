"""The Hurwitz zeta function as a truncated Taylor series in s, shared by the backends' `zeta_ds` (NumPy's and
jax.numpy's: `xp` is the array module). Euler-Maclaurin with N direct terms and M Bernoulli corrections, a = N + q,

    zeta(s, q) = sum_{n<N} (n + q)^-s + a^(1-s) / (s - 1) + a^-s / 2
                 + sum_{j=1..M} B_2j / (2j)! s (s + 1) ... (s + 2j - 2) a^(-s-2j+1) + R,

each term's series in ds to the order asked, so a derivative is that of the formula, exact term by term. With
N = 20 and M = 8 the remainder is below 1e-20 relative for s > 1 - 2M, q > 0. A series is an array of shape
(order + 1, *elements).

    >>> import numpy as np
    >>> zeta_series(np.array([2.0]), np.array([1.0]), 1, np)[0]  # pi^2 / 6
    array([1.64493407])
"""
from __future__ import annotations

import math

DIRECT_TERMS = 20
BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)   # B_2 .. B_16


def zeta_derivative(s, q, order: int, xp):
    """d^order/ds^order zeta(s, q) (s, q: float64 arrays of one shape); NaN for q <= 0 and where the Hurwitz
    function is (s < 1 with q != 1: only the Riemann function, q == 1, is continued there)."""
    valid = (q > 0) & ((s >= 1.0) | (q == 1.0))
    series = zeta_series(s, xp.where(valid, q, 1.0), order, xp)
    return xp.where(valid, math.factorial(order) * series[order], xp.nan)


def zeta_series(s, q, order: int, xp):
    """The series of zeta(s + ds, q) in ds to `order` (s, q: arrays of one shape)."""
    a = DIRECT_TERMS + q
    total = sum(_power_series(n + q, s, order, xp) for n in range(DIRECT_TERMS))
    tail = _power_series(a, s, order, xp)                                              # a^-s
    total = total + _product(a * tail, _reciprocal_linear(s - 1.0, order, xp), xp)     # a^(1-s) / (s - 1)
    total = total + 0.5 * tail
    rising = _linear(s, order, xp)                                                     # s (s + 1) ... (s + 2j - 2)
    power = tail / a                                                                   # a^(-s-1)
    for j, bernoulli in enumerate(BERNOULLI, start=1):
        if j > 1:
            rising = _product(rising, _linear(s + 2 * j - 3, order, xp), xp)
            rising = _product(rising, _linear(s + 2 * j - 2, order, xp), xp)
            power = power / (a * a)
        total = total + bernoulli / math.factorial(2 * j) * _product(rising, power, xp)
    return total


def _product(a, b, xp):
    return xp.stack([sum(a[i] * b[k - i] for i in range(k + 1)) for k in range(a.shape[0])])


def _power_series(base, s0, order, xp):
    """base^-(s0 + ds) = base^-s0 exp(-ds log base): coefficients base^-s0 (-log base)^k / k!."""
    log_base = xp.log(base)
    first = xp.exp(-s0 * log_base)
    return xp.stack([first * (-log_base) ** k / math.factorial(k) for k in range(order + 1)])


def _linear(c, order, xp):
    """The series of c + ds."""
    return xp.stack([c] + [xp.ones_like(c)] * (order > 0) + [xp.zeros_like(c)] * (order - 1))


def _reciprocal_linear(c, order, xp):
    """The series of 1 / (c + ds) = sum_k (-1)^k ds^k / c^(k+1)."""
    return xp.stack([(-1.0) ** k / c ** (k + 1) for k in range(order + 1)])
