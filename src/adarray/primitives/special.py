"""Special-function primitives: elementwise maps with partials from the scalar table.

    unary     erfc erfinv ndtri log_ndtr gammaln digamma i0e i1e, polygamma[order]
    binary    xlogy xlog1py betaln gammainc gammaincc, gammainc_da[order]
    ternary   betainc, betainc_dab[da, db]

Operands of one primitive have equal shapes and dtypes (adarray.scipy.special broadcasts and
promotes first); a Python scalar operand takes the shape and dtype of the others. The partial
derivatives live in `scalar.PARTIALS`, written in a math namespace that holds the binders of
`elementwise` and of this module. The regularized incomplete gamma P(a, x) and beta I_x(a, b) have
no closed-form derivative in their shape parameters: `gammainc_da[order=k]` is d^k P / da^k and
`betainc_dab[da=i, db=j]` is d^(i+j) I / da^i db^j (series and continued fractions in truncated
Taylor arithmetic, in the NumPy backend); their own partials are the same primitives one order up,
so derivatives of any order close over this family.

    >>> gammaln(np.array([0.5, 4.0]))      # log Gamma, eagerly on NumPy arrays
    array([0.57236494, 1.79175947])
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.types import is_complex, is_real_float
from . import elementwise as ew
from .rules import aval_of_value, batch_elementwise, elementwise
from .scalar import PARTIALS, SINGULAR

# The maps that also take complex operands: their partials are their complex derivatives (holomorphic), so
# the same rules serve complex values under JAX's convention, as for scalar.HOLOMORPHIC.
COMPLEX_SPECIAL = ("erfc",)


class _Math:
    """The math namespace of the special partials: this module's binders, then `elementwise`'s."""

    def __getattr__(self, name):
        return globals()[name] if name in _BINDERS else getattr(ew, name)


MATH = _Math()


def _same_shape_floats(name):
    def abstract_eval(*avals, **params):
        first = avals[0]
        for other in avals[1:]:
            if other.shape != first.shape or other.dtype != first.dtype:
                raise ShapeError(f"{name}: operands {', '.join(map(str, avals))} differ in shape or dtype")
        if not (is_real_float(first.dtype) or (name in COMPLEX_SPECIAL and is_complex(first.dtype))):
            kind = "floating-point (real or complex)" if name in COMPLEX_SPECIAL else "real floating-point"
            raise ShapeError(f"{name}: needs {kind} operands, got {first}")
        return first

    return abstract_eval


def _coerce(values):
    """Give Python scalars the shape and dtype of the first array operand."""
    arrays = [v for v in values if not isinstance(v, (int, float)) or hasattr(v, "aval")]
    if not arrays:
        return [np.asarray(v, np.float64) for v in values]
    like = aval_of_value(arrays[0])
    return [np.broadcast_to(np.asarray(v, like.dtype), like.shape)
            if isinstance(v, (int, float)) and not hasattr(v, "aval") else v for v in values]


def _map(name, arity):
    """A primitive of `arity` float operands whose jvp/vjp come from PARTIALS[name]."""
    prim = Primitive(name, _same_shape_floats(name))
    table = PARTIALS[name]
    elementwise(prim, lambda m, *args, **params: table(MATH, *args, **params), singular=name in SINGULAR)
    batch_elementwise(prim)
    prim.elementwise = True
    return prim


# --- maps without parameters --------------------------------------------------------------------

_UNARY = ("erfc", "erfinv", "ndtri", "log_ndtr", "gammaln", "digamma", "i0e", "i1e")
_BINARY = ("xlogy", "xlog1py", "betaln", "gammainc", "gammaincc")

erfc_p, erfinv_p, ndtri_p, log_ndtr_p, gammaln_p, digamma_p, i0e_p, i1e_p = (_map(n, 1) for n in _UNARY)
xlogy_p, xlog1py_p, betaln_p, gammainc_p, gammaincc_p = (_map(n, 2) for n in _BINARY)
betainc_p = _map("betainc", 3)


def erfc(x):
    """1 - erf(x), accurate where erf(x) is close to 1 (real or complex x)."""
    return erfc_p.bind(x)


def erfinv(x):
    return erfinv_p.bind(x)


def ndtri(x):
    """The inverse of the standard normal CDF."""
    return ndtri_p.bind(x)


def log_ndtr(x):
    """log of the standard normal CDF, accurate far into the lower tail."""
    return log_ndtr_p.bind(x)


def gammaln(x):
    """log |Gamma(x)|."""
    return gammaln_p.bind(x)


def digamma(x):
    return digamma_p.bind(x)


def i0e(x):
    """exp(-|x|) I_0(x)."""
    return i0e_p.bind(x)


def i1e(x):
    """exp(-|x|) I_1(x)."""
    return i1e_p.bind(x)


def xlogy(x, y):
    """x log(y), 0 where x == 0."""
    return xlogy_p.bind(*_coerce((x, y)))


def xlog1py(x, y):
    """x log(1 + y), 0 where x == 0."""
    return xlog1py_p.bind(*_coerce((x, y)))


def betaln(a, b):
    """log |B(a, b)|."""
    return betaln_p.bind(*_coerce((a, b)))


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return gammainc_p.bind(*_coerce((a, x)))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), accurate near P = 1."""
    return gammaincc_p.bind(*_coerce((a, x)))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return betainc_p.bind(*_coerce((a, b, x)))


# --- maps with a static derivative order ----------------------------------------------------------

def _ordered(name, arity, check):
    prim = _map(name, arity)
    shape_rule = prim.abstract_eval

    def abstract_eval(*avals, **params):
        check(**params)
        return shape_rule(*avals)

    prim.abstract_eval = abstract_eval
    return prim


def _check_order(*, order):
    if not (isinstance(order, int) and order >= 1):
        raise ShapeError(f"polygamma / gammainc_da: the order must be an integer >= 1, got {order!r}")


def _check_orders(*, da, db):
    if not (isinstance(da, int) and isinstance(db, int) and da >= 0 and db >= 0 and da + db >= 1):
        raise ShapeError(f"betainc_dab: the orders must be integers >= 0, not both 0; got da={da!r}, db={db!r}")


polygamma_p = _ordered("polygamma", 1, _check_order)
gammainc_da_p = _ordered("gammainc_da", 2, _check_order)
betainc_dab_p = _ordered("betainc_dab", 3, _check_orders)


def polygamma(x, order: int):
    """The polygamma function psi^(order)(x), order >= 1 (digamma is order 0)."""
    return polygamma_p.bind(x, order=int(order))


def gammainc_da(a, x, order: int):
    """d^order/da^order of the regularized lower incomplete gamma P(a, x)."""
    return gammainc_da_p.bind(*_coerce((a, x)), order=int(order))


def betainc_dab(a, b, x, da: int, db: int):
    """d^(da+db)/(da^da db^db) of the regularized incomplete beta I_x(a, b)."""
    return betainc_dab_p.bind(*_coerce((a, b, x)), da=int(da), db=int(db))


# --- test samplers: domains where the functions are smooth and finite differences are accurate ----

_DOMAINS = {
    erfc_p: [(-3.0, 3.0)], erfinv_p: [(-0.9, 0.9)], ndtri_p: [(0.05, 0.95)], log_ndtr_p: [(-6.0, 4.0)],
    gammaln_p: [(0.3, 6.0)], digamma_p: [(0.3, 6.0)], i0e_p: [(-3.0, 3.0)], i1e_p: [(-3.0, 3.0)],
    xlogy_p: [(-2.0, 2.0), (0.3, 3.0)], xlog1py_p: [(-2.0, 2.0), (-0.6, 3.0)],
    betaln_p: [(0.4, 5.0), (0.4, 5.0)], gammainc_p: [(0.5, 4.0), (0.2, 6.0)],
    gammaincc_p: [(0.5, 4.0), (0.2, 6.0)], betainc_p: [(0.5, 4.0), (0.5, 4.0), (0.1, 0.9)],
    polygamma_p: [(0.5, 4.0)], gammainc_da_p: [(0.6, 3.0), (0.3, 5.0)],
    betainc_dab_p: [(0.6, 3.0), (0.6, 3.0), (0.15, 0.85)],
}
_SHAPES = [(), (3,), (2, 3), (0, 2)]
_PARAMS = {polygamma_p: [{"order": 1}, {"order": 2}], gammainc_da_p: [{"order": 1}, {"order": 2}],
           betainc_dab_p: [{"da": 1, "db": 0}, {"da": 0, "db": 1}, {"da": 1, "db": 1}]}


def _sampler(prim):
    domains, variants = _DOMAINS[prim], _PARAMS.get(prim, [{}])

    def sample(rng):
        cases = []
        for params in variants:
            for shape in _SHAPES if len(variants) == 1 else _SHAPES[1:3]:
                cases.append(([rng.uniform(low, high, shape) for low, high in domains], params))
        return cases

    return sample


for _prim in _DOMAINS:
    _prim.sample = _sampler(_prim)
# Edge values: i1e's removable singularity at 0, xlogy at x == 0, the tails of erfc and log_ndtr.
i1e_p.sample = lambda rng, _plain=i1e_p.sample: _plain(rng) + [([np.array([0.0, -1e-3, 2.5])], {})]
xlogy_p.sample = lambda rng, _plain=xlogy_p.sample: _plain(rng) + [([np.array([0.0, 1.0]), np.array([2.0, 0.5])], {})]
log_ndtr_p.sample = lambda rng, _plain=log_ndtr_p.sample: _plain(rng) + [([np.array([-40.0, -12.0, 9.0])], {})]
erfc_p.sample = lambda rng, _plain=erfc_p.sample: _plain(rng) + [
    ([rng.uniform(-2.0, 2.0, shape) + 1j * rng.uniform(-1.5, 1.5, shape)], {}) for shape in [(), (2, 3)]] + [
    ([(rng.uniform(-1, 1, (3,)) + 1j * rng.uniform(-1, 1, (3,))).astype(np.complex64)], {})]

_BINDERS = frozenset(("erfc", "erfinv", "ndtri", "log_ndtr", "gammaln", "digamma", "i0e", "i1e", "xlogy", "xlog1py",
                      "betaln", "gammainc", "gammaincc", "betainc", "polygamma", "gammainc_da", "betainc_dab"))
__all__ = ["MATH", "erfc", "erfinv", "ndtri", "log_ndtr", "gammaln", "digamma", "i0e", "i1e", "xlogy", "xlog1py",
           "betaln", "gammainc", "gammaincc", "betainc", "polygamma", "gammainc_da", "betainc_dab"] + [
    f"{n}_p" for n in (*_UNARY, *_BINARY, "betainc", "polygamma", "gammainc_da", "betainc_dab")]
