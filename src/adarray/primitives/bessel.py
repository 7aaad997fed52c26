"""Bessel functions: elementwise maps of an order operand and a real argument.

    jn  n x -> J_n(x)              integer n (a float order that is not an integer gives NaN)
    yn  n x -> Y_n(x)              integer n; -inf at x = 0 (for n >= 0), NaN for x < 0
    iv  v x -> I_v(x)              real v; NaN for x < 0 unless v is an integer
    ive v x -> I_v(x) exp(-|x|)    the same, scaled (no overflow)

The order and the argument have equal shapes (adarray.scipy.special broadcasts first); the order
may have an integer or a floating dtype, the result has the argument's. Derivatives in the argument,
to every order, by the recurrences (DLMF 10.6.1 and 10.29.1), which stay in the family:
    J_n' = (J_(n-1) - J_(n+1)) / 2        Y_n' = (Y_(n-1) - Y_(n+1)) / 2
    I_v' = (I_(v-1) + I_(v+1)) / 2        ive' = (ive(v-1) + ive(v+1)) / 2 - sign(x) ive(v)
(exact at x = 0 too, where J_0' = -J_1 = 0 and I_1' = 1/2; ive has the kink of exp(-|x|) there, and
takes sign(0) = 0, as i0e). The derivative with respect to the order is not implemented: a nonzero
tangent or a needed cotangent of the order raises UnsupportedError (ORDER_NOT_DIFFERENTIABLE), never
a silent zero. An integer order, or a constant one, has no tangent, so the usual calls never meet it.

    >>> round(float(jn(np.array(1), np.array(2.0))), 12)
    0.576724807757
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError, UnsupportedError
from ..core.primitive import Primitive, is_zero, unsupported
from ..core.types import is_real_float
from . import elementwise as ew
from .rules import batch_elementwise, elementwise

ORDER_NOT_DIFFERENTIABLE = unsupported(
    "the derivative with respect to the order is not implemented (only the argument x is differentiable); "
    "pass the order as an integer or a constant, not computed from a differentiated argument")


def _abstract_eval(name):
    def abstract_eval(order, x):
        if order.shape != x.shape:
            raise ShapeError(f"{name}: the order {order} and the argument {x} differ in shape")
        if not is_real_float(x.dtype):
            raise ShapeError(f"{name}: needs a real floating-point argument, got {x}")
        if order.dtype.kind not in "iuf":
            raise ShapeError(f"{name}: needs a real (integer or floating) order, got {order}")
        return x

    return abstract_eval


def _map(name, partial, singular=False):
    """A Bessel map whose derivative in x is `partial(order, x, out)` (the rule kind `elementwise`, its
    conventions for singular partials included); the order's derivative is a raising marker."""
    prim = Primitive(name, _abstract_eval(name))
    elementwise(prim, lambda m, order, x, out: (None, partial(order, x, out)), singular=singular)
    x_jvp, x_vjp = prim.jvp, prim.vjp

    def refuse():
        raise UnsupportedError(f"'{name}' does not support differentiation in its order: "
                               f"{ORDER_NOT_DIFFERENTIABLE.reason}")

    def jvp(tangents, primals, output):
        if not is_zero(tangents[0]):
            refuse()
        return x_jvp(tangents, primals, output)

    def vjp(cotangent, primals, output, needs):
        if needs[0]:
            refuse()
        return x_vjp(cotangent, primals, output, needs)

    prim.jvp, prim.vjp = jvp, vjp
    batch_elementwise(prim)
    prim.elementwise = True
    return prim


def _shifted(order, step):
    return ew.add(order, step)


jn_p = _map("jn", lambda n, x, out: ew.mul(0.5, ew.sub(jn(_shifted(n, -1), x), jn(_shifted(n, 1), x))))
yn_p = _map("yn", lambda n, x, out: ew.mul(0.5, ew.sub(yn(_shifted(n, -1), x), yn(_shifted(n, 1), x))),
            singular=True)
iv_p = _map("iv", lambda v, x, out: ew.mul(0.5, ew.add(iv(_shifted(v, -1), x), iv(_shifted(v, 1), x))))
ive_p = _map("ive", lambda v, x, out: ew.sub(ew.mul(0.5, ew.add(ive(_shifted(v, -1), x), ive(_shifted(v, 1), x))),
                                             ew.mul(ew.sign(x), out)))


def jn(n, x):
    """The Bessel function of the first kind J_n(x) of integer order n (operands of one shape)."""
    return jn_p.bind(n, x)


def yn(n, x):
    """The Bessel function of the second kind Y_n(x) of integer order n (operands of one shape)."""
    return yn_p.bind(n, x)


def iv(v, x):
    """The modified Bessel function of the first kind I_v(x) of real order v (operands of one shape)."""
    return iv_p.bind(v, x)


def ive(v, x):
    """I_v(x) exp(-|x|), the exponentially scaled modified Bessel function of the first kind."""
    return ive_p.bind(v, x)


# --- test samplers: integer orders (a float order would be differentiated by the generated tests, which
# its marker refuses; tests/test_scipy_bessel.py covers real orders), arguments where finite differences
# are accurate -------------------------------------------------------------------------------------------

_SHAPES = [(), (3,), (2, 3), (0, 2)]
_DOMAINS = {jn_p: (-8.0, 12.0), yn_p: (0.5, 12.0), iv_p: (-4.0, 6.0), ive_p: (-4.0, 6.0)}


def _sampler(prim):
    low, high = _DOMAINS[prim]

    def sample(rng):
        cases = [([rng.integers(-3, 5, shape), rng.uniform(low, high, shape)], {}) for shape in _SHAPES]
        edge = {yn_p: [0.3, 25.0, 40.0, 0.7], ive_p: [0.05, -0.05, 30.0, 0.7]}.get(prim, [0.0, 0.0, 3.0, 0.7])
        cases.append(([np.array([0, 1, 2, 5]), np.array(edge)], {}))  # x = 0 (J, I: ive has a kink there), large x
        cases.append(([np.array([0, 1, 3], np.int32), rng.uniform(low, high, 3).astype(np.float32)], {}))
        return cases

    return sample


for _prim in _DOMAINS:
    _prim.sample = _sampler(_prim)

__all__ = ["ORDER_NOT_DIFFERENTIABLE", "iv", "iv_p", "ive", "ive_p", "jn", "jn_p", "yn", "yn_p"]
