"""JAX lowerings of the special-function primitives (primitives/special.py): jax.scipy.special.

The derivatives of the regularized incomplete gamma and beta functions in their shape parameters
(`gammainc_da`, `betainc_dab`) are series and continued fractions in truncated Taylor arithmetic
with data-dependent iteration counts (backends/numpy/special.py); JAX has no counterpart, so they
run on the host through `jax.pure_callback` (registry.host_callback).
"""
from __future__ import annotations

import jax.scipy.special as jss

from ...primitives import special
from .registry import LOWERINGS, host_callback, lowering

for _primitive, _function in {
    special.erfc_p: jss.erfc, special.erfinv_p: jss.erfinv, special.ndtri_p: jss.ndtri,
    special.log_ndtr_p: jss.log_ndtr, special.gammaln_p: jss.gammaln, special.digamma_p: jss.digamma,
    special.i0e_p: jss.i0e, special.i1e_p: jss.i1e, special.xlogy_p: jss.xlogy, special.xlog1py_p: jss.xlog1py,
    special.betaln_p: jss.betaln, special.gammainc_p: jss.gammainc, special.gammaincc_p: jss.gammaincc,
    special.betainc_p: jss.betainc,
}.items():
    LOWERINGS[_primitive] = (lambda function: lambda *args: function(*args))(_function)


@lowering(special.polygamma_p)
def _polygamma(x, *, order):
    return jss.polygamma(order, x)


host_callback(special.gammainc_da_p, special.betainc_dab_p)
