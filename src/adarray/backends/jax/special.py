"""JAX lowerings of the special-function primitives (primitives/special.py): jax.scipy.special.

On the host (`jax.pure_callback` into the NumPy implementation): the derivatives of the regularized
incomplete gamma and beta functions in their shape parameters (`gammainc_da`, `betainc_dab`). They are
series and continued fractions evaluated in truncated Taylor arithmetic in the parameter, with a term
count chosen per element by a convergence test (up to MAX_ITERATIONS = 100,000 in
backends/numpy/special.py): an XLA version would be a while loop of Taylor-arithmetic steps run to the
slowest element of a batch, and JAX has neither the functions' parameter derivatives nor a Taylor
arithmetic to build them from. Only the derivatives of gammainc/betainc in a and b bind them.
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
