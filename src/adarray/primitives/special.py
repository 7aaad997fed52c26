"""Special-function primitives: elementwise maps, each with its scalar partials beside it.

    unary     erfc erfinv ndtri log_ndtr gammaln digamma i0e i1e, polygamma[order]
    binary    xlogy xlog1py betaln gammainc gammaincc, gammainc_da[order]
    ternary   betainc, betainc_dab[da, db]

Operands of one primitive have equal shapes and dtypes (adarray.scipy.special broadcasts and
promotes first); a Python scalar operand takes the shape and dtype of the others. Each map's partial
derivatives are written where it is made and registered in the table of scalar partials
(`scalar.PARTIALS`), in a math namespace that holds the binders of `elementwise` and of this module.
The regularized incomplete gamma P(a, x) and beta I_x(a, b) have no closed-form derivative in their
shape parameters: `gammainc_da[order=k]` is d^k P / da^k and `betainc_dab[da=i, db=j]` is
d^(i+j) I / da^i db^j (series and continued fractions in truncated Taylor arithmetic, in the NumPy
backend); their own partials are the same primitives one order up, so derivatives of any order
close over this family.

    >>> gammaln(np.array([0.5, 4.0]))      # log Gamma, eagerly on NumPy arrays
    array([0.57236494, 1.79175947])
"""
from __future__ import annotations

import math

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.types import is_complex, is_real_float
from . import elementwise as ew
from .rules import aval_of_value, batch_elementwise, elementwise
from .scalar import register_partials, register_singular_points

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


def _map(name, arity, partials, *, singular=False):
    """A primitive of `arity` float operands whose jvp/vjp come from `partials` (registered in scalar.PARTIALS)."""
    prim = Primitive(name, _same_shape_floats(name))
    register_partials(prim, partials, singular=singular)
    elementwise(prim, lambda m, *args, **params: partials(MATH, *args, **params), singular=singular)
    batch_elementwise(prim)
    prim.elementwise = True
    return prim


# --- partial derivatives ---------------------------------------------------------------------------
# Here `m` also holds the special binders (digamma, polygamma, xlogy, gammainc_da, betainc_dab, ...).
# The derivatives of the regularized incomplete gamma P(a, x) and beta I_x(a, b) in their shape
# parameters have no closed form: they are primitives of their own (gammainc_da, betainc_dab, with a
# static derivative order) whose own partials are again primitives of the same kind, so the tower closes.

SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0
SQRT_2PI = math.sqrt(2.0 * math.pi)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def exp_derivative(m, g, i: int, j: int = 0):
    """d^i/da^i d^j/db^j exp(g) divided by exp(g), from the mixed partials g(p, q) of g (p + q >= 1).

    Leibniz on d_a^i d_b^j e^g = d_a^(i-1) d_b^j (g_a e^g) (and likewise in b when i = 0): the
    complete Bell polynomials in two variables. Returns None for the empty derivative (i = j = 0: 1).
    """
    table = {(0, 0): None}

    def term(coefficient, factor, rest):
        product = factor if rest is None else m.mul(factor, rest)
        return product if coefficient == 1 else m.mul(float(coefficient), product)

    def total(parts):
        out = parts[0]
        for part in parts[1:]:
            out = m.add(out, part)
        return out

    for p in range(i + 1):
        for q in range(j + 1):
            if (p, q) == (0, 0):
                continue
            if p >= 1:
                parts = [term(math.comb(p - 1, s) * math.comb(q, t), g(s + 1, t), table[(p - 1 - s, q - t)])
                         for s in range(p) for t in range(q + 1)]
            else:
                parts = [term(math.comb(q - 1, t), g(0, t + 1), table[(0, q - 1 - t)]) for t in range(q)]
            table[(p, q)] = total(parts)
    return table[(i, j)]


def gamma_density_da(m, a, x, order: int):
    """d^order/da^order of the gamma density x^(a-1) e^(-x) / Gamma(a): the x-partial of gammainc_da."""
    density = m.exp(m.sub(m.sub(m.xlogy(m.sub(a, 1.0), x), x), m.gammaln(a)))
    log_derivative = lambda p, q: (m.sub(m.log(x), m.digamma(a)) if p == 1
                                   else m.neg(m.polygamma(a, p - 1)))
    factor = exp_derivative(m, log_derivative, order)
    return density if factor is None else m.mul(density, factor)


def beta_density_dab(m, a, b, x, da: int, db: int):
    """d^da/da d^db/db of the beta density x^(a-1) (1-x)^(b-1) / B(a, b): the x-partial of betainc_dab."""
    density = m.exp(m.sub(m.add(m.xlogy(m.sub(a, 1.0), x), m.xlog1py(m.sub(b, 1.0), m.neg(x))), m.betaln(a, b)))
    total = m.add(a, b)

    def log_derivative(p, q):  # mixed partials of (a-1) log x + (b-1) log(1-x) - betaln(a, b)
        if (p, q) == (1, 0):
            return m.add(m.sub(m.log(x), m.digamma(a)), m.digamma(total))
        if (p, q) == (0, 1):
            return m.add(m.sub(m.log1p(m.neg(x)), m.digamma(b)), m.digamma(total))
        shared = m.polygamma(total, p + q - 1)
        if q == 0:
            return m.sub(shared, m.polygamma(a, p - 1))
        if p == 0:
            return m.sub(shared, m.polygamma(b, q - 1))
        return shared

    factor = exp_derivative(m, log_derivative, da, db)
    return density if factor is None else m.mul(density, factor)


def _i1e_partials(m, x, out):
    # i1e' = i0e - i1e (sign x + 1/x); its limit at x = 0 is 1/2 (a removable singularity)
    at_zero = m.eq(x, 0.0)
    safe = m.select(at_zero, m.full_like(x, 1.0), x)
    general = m.sub(m.i0e(x), m.mul(out, m.add(m.sign(x), m.div(1.0, safe))))
    return (m.select(at_zero, m.full_like(x, 0.5), general),)


# --- maps without parameters --------------------------------------------------------------------

erfc_p = _map("erfc", 1, lambda m, x, out: (m.mul(-ew.TWO_OVER_SQRT_PI, m.exp(m.neg(m.mul(x, x)))),))
erfinv_p = _map("erfinv", 1, lambda m, x, out: (m.mul(SQRT_PI_OVER_2, m.exp(m.mul(out, out))),), singular=True)
ndtri_p = _map("ndtri", 1, lambda m, x, out: (m.mul(SQRT_2PI, m.exp(m.mul(0.5, m.mul(out, out)))),), singular=True)
# phi(x) / Phi(x) = exp(-x^2/2 - log sqrt(2 pi) - log Phi(x)): no overflow or 0/0 in the lower tail
log_ndtr_p = _map("log_ndtr", 1,
                  lambda m, x, out: (m.exp(m.sub(m.sub(m.mul(-0.5, m.mul(x, x)), HALF_LOG_2PI), out)),))
gammaln_p = _map("gammaln", 1, lambda m, x, out: (m.digamma(x),), singular=True)
digamma_p = _map("digamma", 1, lambda m, x, out: (m.polygamma(x, 1),), singular=True)
i0e_p = _map("i0e", 1, lambda m, x, out: (m.sub(m.i1e(x), m.mul(m.sign(x), out)),))
i1e_p = _map("i1e", 1, _i1e_partials, singular=True)
# JAX's convention: d/dx x log y = log y and d/dy = x / y, also where x == 0
xlogy_p = _map("xlogy", 2, lambda m, x, y, out: (m.log(y), m.div(x, y)), singular=True)
xlog1py_p = _map("xlog1py", 2, lambda m, x, y, out: (m.log1p(y), m.div(x, m.add(y, 1.0))), singular=True)
betaln_p = _map("betaln", 2, lambda m, a, b, out: (m.sub(m.digamma(a), m.digamma(m.add(a, b))),
                                                   m.sub(m.digamma(b), m.digamma(m.add(a, b)))), singular=True)
gammainc_p = _map("gammainc", 2, lambda m, a, x, out: (m.gammainc_da(a, x, 1), gamma_density_da(m, a, x, 0)),
                  singular=True)
gammaincc_p = _map("gammaincc", 2, lambda m, a, x, out: (m.neg(m.gammainc_da(a, x, 1)),
                                                         m.neg(gamma_density_da(m, a, x, 0))), singular=True)
betainc_p = _map("betainc", 3, lambda m, a, b, x, out: (m.betainc_dab(a, b, x, 1, 0), m.betainc_dab(a, b, x, 0, 1),
                                                        beta_density_dab(m, a, b, x, 0, 0)), singular=True)


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

def _ordered(name, arity, check, partials):
    prim = _map(name, arity, partials, singular=True)
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


polygamma_p = _ordered("polygamma", 1, _check_order, lambda m, x, out, *, order: (m.polygamma(x, order + 1),))
gammainc_da_p = _ordered("gammainc_da", 2, _check_order, lambda m, a, x, out, *, order: (
    m.gammainc_da(a, x, order + 1), gamma_density_da(m, a, x, order)))
betainc_dab_p = _ordered("betainc_dab", 3, _check_orders, lambda m, a, b, x, out, *, da, db: (
    m.betainc_dab(a, b, x, da + 1, db), m.betainc_dab(a, b, x, da, db + 1), beta_density_dab(m, a, b, x, da, db)))


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
# Where a partial is infinite, NaN or undefined (scalar.SINGULAR_POINTS): the rule tests check that forward and
# reverse mode agree there.
for _prim, _points in {
    gammaln_p: [((0.0,), {}), ((-1.0,), {})], digamma_p: [((0.0,), {}), ((-2.0,), {})],
    polygamma_p: [((0.0,), {"order": 1})], erfinv_p: [((1.0,), {}), ((-1.0,), {})],
    ndtri_p: [((0.0,), {}), ((1.0,), {})], xlogy_p: [((0.0, 0.0), {}), ((1.0, 0.0), {})],
    xlog1py_p: [((0.0, -1.0), {}), ((1.0, -1.0), {})], betaln_p: [((0.0, 1.0), {})],
    gammainc_p: [((1.0, 0.0), {})], gammaincc_p: [((1.0, 0.0), {})], i1e_p: [((0.0,), {})],
}.items():
    register_singular_points(_prim, *_points)

_BINDERS = frozenset(("erfc", "erfinv", "ndtri", "log_ndtr", "gammaln", "digamma", "i0e", "i1e", "xlogy", "xlog1py",
                      "betaln", "gammainc", "gammaincc", "betainc", "polygamma", "gammainc_da", "betainc_dab"))
__all__ = ["MATH", "erfc", "erfinv", "ndtri", "log_ndtr", "gammaln", "digamma", "i0e", "i1e", "xlogy", "xlog1py",
           "betaln", "gammainc", "gammaincc", "betainc", "polygamma", "gammainc_da", "betainc_dab"] + [
    f"{n}_p" for n in sorted(_BINDERS)]
