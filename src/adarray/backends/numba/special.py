"""The special functions (primitives/special.py, primitives/gamma_functions.py, primitives/bessel.py) on the
Numba backend: one call per element of a native scalar function (gammalib.py, speciallib.py, incompletelib.py;
bessellib.py calls SciPy's compiled Bessel functions), inlined into the fused loops like any elementwise
primitive.

The functions compute in float64; a float32 equation rounds the result, as SciPy's float32 loops do (they
compute in double). Static orders (polygamma's, zeta_ds's, expn's n, the derivative orders of gammainc_da and
betainc_dab) are literal arguments.

    >>> _CALLS[special.erfinv_p]
    '_sp.erfinv'
"""
from __future__ import annotations

from ...primitives import bessel, special
from ...primitives import gamma_functions as gf
from . import scalar
from .table import elemental

# A special function costs tens to thousands of adds per element (series, continued fractions): counted as
# this many, so that the planner stores a value read twice instead of computing it again.
SPECIAL_COST = 200.0

_CALLS = {
    special.erfc_p: "_sp.erfc", special.erfinv_p: "_sp.erfinv", special.ndtri_p: "_sp.ndtri",
    special.log_ndtr_p: "_sp.log_ndtr", special.i0e_p: "_sp.i0e", special.i1e_p: "_sp.i1e",
    special.xlogy_p: "_sp.xlogy", special.xlog1py_p: "_sp.xlog1py",
    special.gammaln_p: "_g.gammaln", special.digamma_p: "_g.digamma", special.betaln_p: "_g.betaln",
    special.gammainc_p: "_inc.gammainc", special.gammaincc_p: "_inc.gammaincc", special.betainc_p: "_inc.betainc",
    gf.gamma_p: "_g.gamma", gf.beta_p: "_g.beta", gf.binom_p: "_g.binom", gf.zeta_p: "_g.zeta",
}
# (function, the params passed after the operands, or before them for polygamma's and expn's SciPy order)
_ORDERED = {
    special.polygamma_p: ("_g.polygamma", ("order",), True),
    gf.expn_p: ("_inc.expn", ("n",), True),
    gf.zeta_ds_p: ("_g.zeta_ds", ("order",), False),
    special.gammainc_da_p: ("_inc.gammainc_da", ("order",), False),
    special.betainc_dab_p: ("_inc.betainc_dab", ("da", "db"), False),
}


@elemental(*_CALLS, *_ORDERED, cost=SPECIAL_COST)
def _special(em, eqn, index):
    args = [f"float({em.read(atom, index)})" for atom in eqn.inputs]
    if eqn.prim in _CALLS:
        text = f"{_CALLS[eqn.prim]}({', '.join(args)})"
    else:
        function, names, leading = _ORDERED[eqn.prim]
        orders = [str(int(eqn.params[name])) for name in names]
        text = f"{function}({', '.join(orders + args if leading else args + orders)})"
    dtype = eqn.outputs[0].aval.dtype
    return [text if scalar.type_name(dtype) == "np.float64" else f"{scalar.type_name(dtype)}({text})"]


# order dtype kind -> function: an integer order needs no check; a float one is NaN unless it is an integer (jn, yn)
_BESSEL = {bessel.jn_p: {"i": "_bl.jn_integer", "f": "_bl.jn"}, bessel.yn_p: {"i": "_bl.yn_integer", "f": "_bl.yn"},
           bessel.iv_p: {"i": "_bl.iv", "f": "_bl.iv"}, bessel.ive_p: {"i": "_bl.ive", "f": "_bl.ive"}}


@elemental(*_BESSEL, cost=SPECIAL_COST)
def _bessel(em, eqn, index):
    order, x = eqn.inputs
    integer = order.aval.dtype.kind in "iu"
    function = _BESSEL[eqn.prim]["i" if integer else "f"]
    order_text = f"np.int64({em.read(order, index)})" if integer else f"float({em.read(order, index)})"
    text = f"{function}({order_text}, float({em.read(x, index)}))"
    dtype = eqn.outputs[0].aval.dtype
    return [text if scalar.type_name(dtype) == "np.float64" else f"{scalar.type_name(dtype)}({text})"]
