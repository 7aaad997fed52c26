"""JAX lowerings of the gamma family (primitives/gamma_functions.py): jax.scipy.special where it has
the function with SciPy's conventions (gamma, beta, expn). On the host (`jax.pure_callback` into the
NumPy implementation): `binom` (no jax.scipy.special.binom), `zeta` (JAX's Hurwitz zeta has no
analytic continuation of the Riemann function to s < 1, which ours has at q = 1) and `zeta_ds`
(Euler-Maclaurin in truncated Taylor arithmetic)."""
from __future__ import annotations

import jax.scipy.special as jss

from ...primitives import gamma_functions as gf
from .registry import host_callback, lowering


@lowering(gf.gamma_p)
def _gamma(x):
    return jss.gamma(x)


@lowering(gf.beta_p)
def _beta(a, b):
    return jss.beta(a, b)


@lowering(gf.expn_p)
def _expn(x, *, n):
    return jss.expn(n, x)


host_callback(gf.binom_p, gf.zeta_p, gf.zeta_ds_p)
