"""scan[op, axis, reverse]: inclusive prefix sums and products along one axis
(cumsum, cumprod).

cumsum is linear; its transpose is the cumsum running the other way.
cumprod's rules are zero-safe (never NaN): with z_i zeros among x_0..x_i,
P_i the prefix product and Q_i the prefix product of the nonzero elements,
    d y_i / d x_k = [z_i = 0] P_i / x_k + [x_k = 0][z_i = 1] Q_i      (k <= i)
so a vjp is two reverse cumsums and a jvp two forward ones.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import is_float
from . import elementwise as ew
from .rules import aval_of_value, instantiate


def _scan_abstract_eval(x, *, op, axis, reverse):
    if op not in ("add", "mul"):
        raise ShapeError(f"scan: unknown operator {op!r}")
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"scan: axis {axis} out of range for {x}")
    if op == "mul" and reverse:
        raise ShapeError("scan: a reversed product scan is not supported; flip the input instead")
    return x


scan_p = Primitive("scan", _scan_abstract_eval)


def cumsum(x, axis: int, reverse: bool = False):
    return scan_p.bind(x, op="add", axis=int(axis), reverse=bool(reverse))


def cumprod(x, axis: int):
    return scan_p.bind(x, op="mul", axis=int(axis), reverse=False)


def _product_terms(x, axis):
    """(z == 0 mask, z == 1 mask, P, Q, safe x, x == 0) for the zero-safe cumprod rules."""
    dtype = aval_of_value(x).dtype
    is_zero_element = ew.eq(x, 0.0)
    safe = ew.select(is_zero_element, ew.full_like(x, 1.0), x)
    zeros_so_far = cumsum(ew.convert(is_zero_element, dtype), axis)
    nonzero_product = cumprod(safe, axis)
    product = ew.select(ew.eq(zeros_so_far, 0.0), nonzero_product, ew.zeros_like(x))
    return ew.eq(zeros_so_far, 0.0), ew.eq(zeros_so_far, 1.0), product, nonzero_product, safe, is_zero_element


def _scan_jvp(tangents, primals, output, *, op, axis, reverse):
    (tangent,), (x,) = tangents, primals
    if is_zero(tangent) or not is_float(aval_of_value(x).dtype):
        return Zero(aval_of_value(output))
    if op == "add":
        return cumsum(tangent, axis, reverse)
    no_zero, one_zero, product, nonzero_product, safe, is_zero_element = _product_terms(x, axis)
    zero = ew.zeros_like(x)
    from_nonzero = ew.mul(product, cumsum(ew.select(is_zero_element, zero, ew.div(tangent, safe)), axis))
    from_zero = ew.mul(nonzero_product, cumsum(ew.select(is_zero_element, tangent, zero), axis))
    return ew.add(ew.select(no_zero, from_nonzero, zero), ew.select(one_zero, from_zero, zero))


def _scan_vjp(cotangent, primals, output, needs, *, op, axis, reverse):
    (x,) = primals
    if is_zero(cotangent) or not is_float(aval_of_value(x).dtype):
        return [None]
    if op == "add":
        return [cumsum(cotangent, axis, not reverse)]
    no_zero, one_zero, product, nonzero_product, safe, is_zero_element = _product_terms(x, axis)
    zero = ew.zeros_like(x)
    to_nonzero = cumsum(ew.select(no_zero, ew.mul(cotangent, product), zero), axis, reverse=True)
    to_zero = cumsum(ew.select(one_zero, ew.mul(cotangent, nonzero_product), zero), axis, reverse=True)
    return [ew.select(is_zero_element, to_zero, ew.div(to_nonzero, safe))]


def _scan_transpose(cotangent, avals, *, op, axis, reverse):
    assert op == "add", "only scan[op=add] is linear"
    return [cumsum(instantiate(cotangent), axis, not reverse)]


scan_p.jvp, scan_p.vjp, scan_p.transpose = _scan_jvp, _scan_vjp, _scan_transpose
scan_p.sample = lambda rng: [
    ([rng.normal(size=(5,))], {"op": "add", "axis": 0, "reverse": False}),
    ([rng.normal(size=(2, 4))], {"op": "add", "axis": 1, "reverse": True}),
    ([rng.normal(size=(2, 4))], {"op": "mul", "axis": 1, "reverse": False}),
    ([np.array([2.0, 0.0, 0.0, 3.0])], {"op": "mul", "axis": 0, "reverse": False}),
    ([np.array([2.0, 0.5, 0.0, 3.0])], {"op": "mul", "axis": 0, "reverse": False}),
]
