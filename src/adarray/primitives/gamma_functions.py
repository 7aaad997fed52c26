"""Gamma-family primitives: gamma, beta, binom, zeta, zeta_ds[order], expn[n] (elementwise maps of
float operands of one shape and dtype; a Python scalar operand takes the others' shape and dtype).

    gamma x -> Gamma(x)              d = Gamma(x) digamma(x)
    beta a b -> B(a, b)              d/da = B (digamma(a) - digamma(a + b)), d/db likewise
    binom n k -> n! / (k! (n-k)!)    d/dn = binom (digamma(n + 1) - digamma(n - k + 1)),
                                     d/dk = binom (digamma(n - k + 1) - digamma(k + 1)); exact where the
                                     three gamma functions are finite (scipy.special.comb's domain)
    zeta s q -> sum_n (n + q)^-s     Hurwitz (Riemann where q == 1, continued to s < 1 as SciPy does);
                                     d/dq = -s zeta(s + 1, q), d/ds = zeta_ds[order=1](s, q)
    zeta_ds[order=k] s q             d^k/ds^k zeta(s, q) = sum_n (-log(n + q))^k (n + q)^-s; its own
                                     partials are zeta_ds[k + 1] and -(s zeta_ds[k](s + 1, q) +
                                     k zeta_ds[k - 1](s + 1, q)) (Leibniz on d/dq = -s zeta(s + 1, q)),
                                     so derivatives of every order close over the family
    expn[n] x -> E_n(x)              the generalized exponential integral; d = -E_(n-1)(x), and
                                     E_0(x) = e^-x / x, so d E_0 = -E_0 (1 + 1/x)

The values come from scipy.special; zeta_ds from the Euler-Maclaurin formula for zeta evaluated in
truncated Taylor arithmetic in s (the NumPy backend), which differentiates it exactly, term by term.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.types import is_float
from . import elementwise as ew
from . import special
from .rules import aval_of_value, batch_elementwise, elementwise


def _same_shape_floats(name, check=None):
    def abstract_eval(*avals, **params):
        if check is not None:
            check(**params)
        first = avals[0]
        for other in avals[1:]:
            if other.shape != first.shape or other.dtype != first.dtype:
                raise ShapeError(f"{name}: operands {', '.join(map(str, avals))} differ in shape or dtype")
        if not is_float(first.dtype):
            raise ShapeError(f"{name}: needs floating-point operands, got {first}")
        return first

    return abstract_eval


def _map(name, partials, check=None):
    prim = Primitive(name, _same_shape_floats(name, check))
    elementwise(prim, lambda m, *args, **params: partials(*args, **params), singular=True)
    batch_elementwise(prim)
    prim.elementwise = True
    return prim


def _check_order(*, order):
    if not (isinstance(order, int) and order >= 1):
        raise ShapeError(f"zeta_ds: the order must be an integer >= 1, got {order!r}")


def _check_n(*, n):
    if not (isinstance(n, int) and n >= 0):
        raise ShapeError(f"expn: n must be an integer >= 0, got {n!r}")


# --- partial derivatives -----------------------------------------------------------------------

def _gamma_partials(x, out):
    return (ew.mul(out, special.digamma(x)),)


def _beta_partials(a, b, out):
    shared = special.digamma(ew.add(a, b))
    return ew.mul(out, ew.sub(special.digamma(a), shared)), ew.mul(out, ew.sub(special.digamma(b), shared))


def _binom_partials(n, k, out):
    rest = special.digamma(ew.add(ew.sub(n, k), 1.0))
    return (ew.mul(out, ew.sub(special.digamma(ew.add(n, 1.0)), rest)),
            ew.mul(out, ew.sub(rest, special.digamma(ew.add(k, 1.0)))))


def _zeta_derivative(s, q, order):
    """d^order/ds^order zeta(s, q) (order 0 is zeta itself)."""
    return zeta(s, q) if order == 0 else zeta_ds(s, q, order)


def _zeta_dq(s, q, order):
    """d/dq of d^order/ds^order zeta(s, q) = -(s Z^(order)(s + 1, q) + order Z^(order - 1)(s + 1, q))."""
    shifted = ew.add(s, 1.0)
    total = ew.mul(s, _zeta_derivative(shifted, q, order))
    if order:
        total = ew.add(total, ew.mul(float(order), _zeta_derivative(shifted, q, order - 1)))
    return ew.neg(total)


def _expn_partials(x, out, *, n):
    if n == 0:   # E_0 = e^-x / x
        return (ew.neg(ew.mul(out, ew.add(ew.div(1.0, x), 1.0))),)
    return (ew.neg(expn(x, n - 1)),)


gamma_p = _map("gamma", _gamma_partials)
beta_p = _map("beta", _beta_partials)
binom_p = _map("binom", _binom_partials)
zeta_p = _map("zeta", lambda s, q, out: (zeta_ds(s, q, 1), _zeta_dq(s, q, 0)))
zeta_ds_p = _map("zeta_ds", lambda s, q, out, *, order: (zeta_ds(s, q, order + 1), _zeta_dq(s, q, order)),
                 _check_order)
expn_p = _map("expn", _expn_partials, _check_n)


def _coerce(values):
    """Give Python scalars the shape and dtype of the first array operand."""
    arrays = [v for v in values if not isinstance(v, (int, float)) or hasattr(v, "aval")]
    if not arrays:
        return [np.asarray(v, np.float64) for v in values]
    aval = aval_of_value(arrays[0])
    return [np.broadcast_to(np.asarray(v, aval.dtype), aval.shape)
            if isinstance(v, (int, float)) and not hasattr(v, "aval") else v for v in values]


def gamma(x):
    """The gamma function."""
    return gamma_p.bind(x)


def beta(a, b):
    """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    return beta_p.bind(*_coerce((a, b)))


def binom(n, k):
    """The binomial coefficient as a function of real n and k."""
    return binom_p.bind(*_coerce((n, k)))


def zeta(s, q):
    """The Hurwitz zeta function sum_n (n + q)^-s (the Riemann zeta function where q == 1)."""
    return zeta_p.bind(*_coerce((s, q)))


def zeta_ds(s, q, order: int):
    """d^order/ds^order of the Hurwitz zeta function."""
    return zeta_ds_p.bind(*_coerce((s, q)), order=int(order))


def expn(x, n: int):
    """The generalized exponential integral E_n(x) = int_1^inf e^(-x t) / t^n dt (static n >= 0)."""
    return expn_p.bind(x, n=int(n))


# --- test samplers: smooth regions, away from poles --------------------------------------------

_SHAPES = [(), (3,), (2, 3), (0, 2)]
gamma_p.sample = lambda rng: [([rng.uniform(0.4, 4.0, s)], {}) for s in _SHAPES] + [
    ([np.array([-0.5, -1.5, -2.3, 5.5])], {})]
beta_p.sample = lambda rng: [([rng.uniform(0.4, 4.0, s), rng.uniform(0.4, 4.0, s)], {}) for s in _SHAPES]
binom_p.sample = lambda rng: [([rng.uniform(3.0, 8.0, s), rng.uniform(0.2, 2.5, s)], {}) for s in _SHAPES] + [
    ([np.array([5.0, 10.0, 7.0]), np.array([2.0, 3.0, 0.0])], {})]
zeta_p.sample = lambda rng: [([rng.uniform(1.5, 4.0, s), rng.uniform(0.5, 3.0, s)], {}) for s in _SHAPES] + [
    ([np.array([2.0, 3.5, 1.3]), np.array([1.0, 1.0, 1.0])], {})]
zeta_ds_p.sample = lambda rng: [([rng.uniform(1.5, 4.0, s), rng.uniform(0.5, 3.0, s)], {"order": k})
                                for s in _SHAPES[1:3] for k in (1, 2)]
expn_p.sample = lambda rng: [([rng.uniform(0.3, 3.0, s)], {"n": n}) for s in _SHAPES[:3] for n in (0, 1, 3)] + [
    ([np.zeros((0, 2))], {"n": 2})]
