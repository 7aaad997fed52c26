"""NumPy implementations of the gamma family (primitives/gamma_functions.py).

Values come from scipy.special. `zeta_ds[order=k]`, d^k/ds^k of the Hurwitz zeta function, is the
Euler-Maclaurin formula in truncated Taylor arithmetic in s (backends/hurwitz_zeta.py, shared with the
JAX backend). It is NaN for q <= 0, and where SciPy's zeta is NaN (s < 1 with q != 1).
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from ...primitives import gamma_functions as gf
from ..hurwitz_zeta import zeta_derivative
from .registry import IMPLS


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


def _zeta_ds(s, q, *, order):
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    dtype = np.result_type(s, np.float64)
    if s.size == 0:
        return np.zeros(s.shape, dtype)
    with np.errstate(all="ignore"):
        return zeta_derivative(s, q, order, np)


IMPLS[gf.zeta_ds_p] = lambda s, q, *, order: _zeta_ds(s, q, order=order).astype(np.asarray(s).dtype)
