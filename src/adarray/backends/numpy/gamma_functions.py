"""NumPy implementations of the gamma family (primitives/gamma_functions.py).

Values come from scipy.special. `zeta_ds[order=k]`, d^k/ds^k of the Hurwitz zeta function, is the
Euler-Maclaurin formula with N direct terms and M Bernoulli corrections, a = N + q,

    zeta(s, q) = sum_{n<N} (n + q)^-s + a^(1-s) / (s - 1) + a^-s / 2
                 + sum_{j=1..M} B_2j / (2j)! s (s + 1) ... (s + 2j - 2) a^(-s-2j+1) + R,

evaluated in truncated Taylor arithmetic in s (each term's series in ds to order k), so the
derivative is that of the formula, exact term by term. With N = 20 and M = 8 the remainder is below
1e-20 relative for the s and q of interest (s > 1 - 2M, q > 0). It is NaN for q <= 0, and where
SciPy's zeta is NaN (s < 1 with q != 1).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ...primitives import gamma_functions as gf
from .registry import IMPLS

DIRECT_TERMS = 20
BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)   # B_2 .. B_16


def _zeta(s, q):
    """Hurwitz zeta; the Riemann function (analytically continued to s < 1) where q == 1."""
    s, q = np.broadcast_arrays(np.asarray(s), np.asarray(q))
    with np.errstate(all="ignore"):
        return np.where(q == 1.0, sc.zeta(s), sc.zeta(s, q)).astype(s.dtype)


IMPLS[gf.gamma_p] = lambda x: sc.gamma(x)
IMPLS[gf.beta_p] = lambda a, b: sc.beta(a, b)
IMPLS[gf.binom_p] = lambda n, k: sc.binom(n, k)
IMPLS[gf.zeta_p] = _zeta
IMPLS[gf.expn_p] = lambda x, *, n: sc.expn(n, x).astype(np.asarray(x).dtype)


# --- truncated Taylor series in ds: arrays of shape (order + 1, *elements) -----------------------

def _product(a, b):
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape))
    for i in range(out.shape[0]):
        out[i:] += a[i] * b[: out.shape[0] - i]
    return out


def _power_series(base, s0, order):
    """base^-(s0 + ds) = base^-s0 exp(-ds log base): coefficients base^-s0 (-log base)^k / k!."""
    log_base = np.log(base)
    first = np.exp(-s0 * log_base)
    return np.stack([first * (-log_base) ** k / math.factorial(k) for k in range(order + 1)])


def _linear(c, order):
    """The series of c + ds."""
    out = np.zeros((order + 1,) + np.shape(c))
    out[0] = c
    if order:
        out[1] = 1.0
    return out


def _reciprocal_linear(c, order):
    """The series of 1 / (c + ds) = sum_k (-1)^k ds^k / c^(k+1)."""
    return np.stack([(-1.0) ** k / c ** (k + 1) for k in range(order + 1)])


def _zeta_series(s, q, order):
    a = DIRECT_TERMS + q
    total = np.zeros((order + 1,) + s.shape)
    for n in range(DIRECT_TERMS):
        total += _power_series(n + q, s, order)
    tail = _power_series(a, s, order)                                     # a^-s
    total += _product(a * tail, _reciprocal_linear(s - 1.0, order))       # a^(1-s) / (s - 1)
    total += 0.5 * tail
    rising = _linear(s, order)                                            # s (s + 1) ... (s + 2j - 2)
    power = tail / a                                                      # a^(-s-1)
    for j, bernoulli in enumerate(BERNOULLI, start=1):
        if j > 1:
            rising = _product(_product(rising, _linear(s + 2 * j - 3, order)), _linear(s + 2 * j - 2, order))
            power = power / (a * a)
        total += bernoulli / math.factorial(2 * j) * _product(rising, power)
    return total


def _zeta_ds(s, q, *, order):
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    dtype = np.result_type(s, np.float64)
    if s.size == 0:
        return np.zeros(s.shape, dtype)
    with np.errstate(all="ignore"):
        valid = (q > 0) & ((s >= 1.0) | (q == 1.0))
        series = _zeta_series(s, np.where(valid, q, 1.0), order)
        return np.where(valid, math.factorial(order) * series[order], np.nan)


IMPLS[gf.zeta_ds_p] = lambda s, q, *, order: _zeta_ds(s, q, order=order).astype(np.asarray(s).dtype)
