"""reduce[op, axes]: reduction of an array over static axes with a known monoid,
and argmax/argmin.

Reverse-mode rules (Futhark's specialisations, see shared/design/papers):
  * add: the cotangent is broadcast back (linear; transpose = broadcast_in_dim);
  * mul: the partial of x_i is the product of the others, computed as exclusive
    prefix times exclusive suffix products (no division: exact with any number
    of zeros, never NaN, and differentiable again at zeros, which zero counting
    is not);
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
from .scan import cumprod, shift
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


def _flatten_reduced(x, axes):
    """Move the reduced axes last and merge them: (kept..., count); returns the inverse too."""
    aval = aval_of_value(x)
    kept = [i for i in range(aval.ndim) if i not in axes]
    kept_shape = tuple(aval.shape[i] for i in kept)
    count = int(np.prod([aval.shape[a] for a in axes], dtype=np.int64))
    flat = reshape(transpose(x, kept + list(axes)), kept_shape + (count,))

    def restore(value):
        moved = reshape(value, tuple(aval.shape[i] for i in kept + list(axes)))
        return transpose(moved, tuple(np.argsort(kept + list(axes))))

    return flat, kept_shape, count, restore


def _first_winner(x, out, axes):
    """1.0 at the first element (row-major over `axes`) equal to the reduced result, else 0.0."""
    flat, kept_shape, count, restore = _flatten_reduced(x, axes)
    leading = tuple(range(len(kept_shape)))
    hits = ew.eq(flat, broadcast_in_dim(out, kept_shape + (count,), leading))
    first = argmax(hits, len(kept_shape))
    positions = np.broadcast_to(np.arange(count), kept_shape + (count,))
    onehot = ew.eq(positions, broadcast_in_dim(first, kept_shape + (count,), leading))
    return restore(ew.convert(onehot, aval_of_value(x).dtype))


def _product_partials(x, axes):
    """d prod(x) / d x_i = (product before i) * (product after i): exclusive prefix and suffix
    products, so exact with zeros, division-free and differentiable to any order."""
    flat, kept_shape, count, restore = _flatten_reduced(x, axes)
    last = len(kept_shape)
    before = shift(cumprod(flat, last), last, fill=1.0)
    after = shift(cumprod(flat, last, reverse=True), last, reverse=True, fill=1.0)
    return restore(ew.mul(before, after))


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


reduce_p.batch = lambda args, batched, size, *, op, axes: (reduce(args[0], op, tuple(a + 1 for a in axes)), True)
argmax_p.batch = lambda args, batched, size, *, axis: (argmax(args[0], axis + 1), True)
argmin_p.batch = lambda args, batched, size, *, axis: (argmin(args[0], axis + 1), True)
