"""reduce[op, axes]: reduction of an array over static axes with a known monoid,
and argmax/argmin.

Reverse-mode rules (Futhark's specialisations, see shared/design/papers):
  * add: the cotangent is broadcast back (linear; transpose = broadcast_in_dim);
  * mul: zero counting, exact and never NaN: with no zero the partial is
    prod/x_i, with exactly one zero only that element gets the product of the
    others, with two or more zeros every partial is 0;
  * max/min: the whole cotangent goes to the first (lowest-index, in row-major
    order over the reduced axes) element equal to the result.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import Aval, is_float
from . import elementwise as ew
from .rules import aval_of_value, instantiate, nondifferentiable
from .structural import broadcast_in_dim, reshape, transpose

MONOIDS = ("add", "mul", "max", "min", "and", "or")


def _reduce_abstract_eval(x, *, op, axes):
    if op not in MONOIDS:
        raise ShapeError(f"reduce: unknown operator {op!r}; known: {', '.join(MONOIDS)}")
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"reduce: axes {tuple(axes)} out of range for {x}")
    if op in ("max", "min") and any(x.shape[a] == 0 for a in axes):
        raise ShapeError(f"reduce: {op} of an empty axis of {x} has no identity")
    if op in ("and", "or") and x.dtype != np.bool_:
        raise ShapeError(f"reduce: {op} needs a boolean operand, got {x}")
    return x.update(shape=tuple(n for i, n in enumerate(x.shape) if i not in axes))


reduce_p = Primitive("reduce", _reduce_abstract_eval)


def reduce(x, op: str, axes):
    axes = tuple(sorted(int(a) for a in axes))
    if not axes:
        return x
    return reduce_p.bind(x, op=op, axes=axes)


def reduce_sum(x, axes):
    return reduce(x, "add", axes)


def _expand(value, aval: Aval, axes):
    """Broadcast a reduced value back to the operand's shape."""
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    return broadcast_in_dim(value, aval.shape, kept)


def _first_winner(x, out, axes):
    """1.0 at the first element (row-major over `axes`) equal to the reduced result, else 0.0."""
    aval = aval_of_value(x)
    kept = [i for i in range(aval.ndim) if i not in axes]
    moved = transpose(x, kept + list(axes))
    kept_shape = tuple(aval.shape[i] for i in kept)
    count = int(np.prod([aval.shape[a] for a in axes], dtype=np.int64))
    flat = reshape(moved, kept_shape + (count,))
    hits = ew.eq(flat, broadcast_in_dim(out, kept_shape + (count,), tuple(range(len(kept)))))
    first = argmax(hits, len(kept))
    positions = np.broadcast_to(np.arange(count), kept_shape + (count,))
    onehot = ew.eq(positions, broadcast_in_dim(first, kept_shape + (count,), tuple(range(len(kept)))))
    onehot = reshape(ew.convert(onehot, aval.dtype), tuple(aval.shape[i] for i in kept + list(axes)))
    return transpose(onehot, tuple(np.argsort(kept + list(axes))))


def _product_partials(x, axes):
    """d prod(x) / d x_i by zero counting (no division by zero, no NaN)."""
    aval = aval_of_value(x)
    is_zero_element = ew.eq(x, 0.0)
    safe = ew.select(is_zero_element, ew.full_like(x, 1.0), x)
    zero_count = _expand(reduce_sum(ew.convert(is_zero_element, aval.dtype), axes), aval, axes)
    nonzero_product = _expand(reduce(safe, "mul", axes), aval, axes)
    none = ew.div(nonzero_product, safe)
    only_this = ew.select(is_zero_element, nonzero_product, ew.zeros_like(x))
    return ew.select(
        ew.eq(zero_count, 0.0), none, ew.select(ew.eq(zero_count, 1.0), only_this, ew.zeros_like(x))
    )


def _partials(x, out, op, axes):
    if op == "mul":
        return _product_partials(x, axes)
    return _first_winner(x, out, axes)


def _reduce_jvp(tangents, primals, output, *, op, axes):
    (tangent,), (x,) = tangents, primals
    if is_zero(tangent) or not is_float(aval_of_value(x).dtype):
        return Zero(aval_of_value(output))
    if op == "add":
        return reduce_sum(tangent, axes)
    return reduce_sum(ew.mul(tangent, _partials(x, output, op, axes)), axes)


def _reduce_vjp(cotangent, primals, output, needs, *, op, axes):
    (x,) = primals
    aval = aval_of_value(x)
    if not is_float(aval.dtype) or is_zero(cotangent):
        return [None]
    spread = _expand(cotangent, aval, axes)
    if op == "add":
        return [spread]
    return [ew.mul(spread, _partials(x, output, op, axes))]


def _reduce_transpose(cotangent, avals, *, op, axes):
    assert op == "add", "only reduce[op=add] is linear"
    return [_expand(instantiate(cotangent), avals[0], axes)]


reduce_p.jvp, reduce_p.vjp, reduce_p.transpose = _reduce_jvp, _reduce_vjp, _reduce_transpose


# --- argmax / argmin (first occurrence, like NumPy) ----------------------------------------------

def _arg_abstract_eval(name):
    def abstract_eval(x, *, axis):
        if not 0 <= axis < x.ndim or x.shape[axis] == 0:
            raise ShapeError(f"{name}: axis {axis} is empty or out of range for {x}")
        return Aval(tuple(n for i, n in enumerate(x.shape) if i != axis), np.int64)

    return abstract_eval


argmax_p = Primitive("argmax", _arg_abstract_eval("argmax"))
argmin_p = Primitive("argmin", _arg_abstract_eval("argmin"))
nondifferentiable(argmax_p)
nondifferentiable(argmin_p)


def argmax(x, axis: int):
    return argmax_p.bind(x, axis=int(axis))


def argmin(x, axis: int):
    return argmin_p.bind(x, axis=int(axis))


def _reduce_sampler(rng):
    cases = []
    for op in ("add", "mul", "max", "min"):
        cases.append(([rng.normal(size=(3, 4))], {"op": op, "axes": (1,)}))
        cases.append(([rng.normal(size=(2, 3, 2))], {"op": op, "axes": (0, 2)}))
    cases.append(([rng.normal(size=(0, 3))], {"op": "add", "axes": (0,)}))
    cases.append(([rng.normal(size=(0, 3))], {"op": "mul", "axes": (0,)}))
    return cases


reduce_p.sample = _reduce_sampler
argmax_p.sample = argmin_p.sample = lambda rng: [
    ([rng.normal(size=(3, 4))], {"axis": 1}),
    ([np.array([1.0, 3.0, 3.0])], {"axis": 0}),
]
