"""Indexing primitives: gather (NumPy advanced indexing) and scatter (`x.at[idx].op(u)`).

Both take a static `spec`, one entry per axis position of the index tuple:
``("slice", start, stop, step)``, ``("newaxis",)`` or ``("array",)``; the array
entries are integer operands after `x` (and after `updates` for scatter).
Results follow NumPy's rules exactly (the shape rule asks NumPy on dummy arrays).

scatter ops: set, add, mul, min, max; duplicates are allowed. Reverse-mode rules:
  * set: only the update NumPy keeps (the last one) gets a cotangent;
  * add: linear (gather the cotangent);
  * mul: zero counting over the destination and all its updates, never NaN;
  * min/max: the whole cotangent goes to the destination's own value at a tie,
    else to the lowest-index update equal to the result.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import Aval, is_float
from . import elementwise as ew
from .rules import aval_of_value, broadcast_batch, instantiate

SCATTER_OPS = ("set", "add", "mul", "min", "max")


def numpy_index(spec, indices):
    """The NumPy index tuple for a spec and its integer index arrays."""
    arrays = iter(indices)
    index = []
    for entry in spec:
        if entry[0] == "slice":
            index.append(slice(*entry[1:]))
        elif entry[0] == "newaxis":
            index.append(None)
        else:
            index.append(next(arrays))
    return tuple(index)


def _dummy(aval: Aval):
    return np.lib.stride_tricks.as_strided(np.zeros(1, aval.dtype), aval.shape, (0,) * aval.ndim)


def gather_shape(x: Aval, spec, index_avals) -> tuple[int, ...]:
    for aval in index_avals:
        if not np.issubdtype(aval.dtype, np.integer):
            raise ShapeError(f"index arrays must be integers, got {aval}")
    try:
        return _dummy(x)[numpy_index(spec, [_dummy(a) for a in index_avals])].shape
    except IndexError as error:
        shapes = ", ".join(str(a) for a in index_avals)
        raise ShapeError(f"gather: cannot index {x} with {spec} and index arrays [{shapes}]: {error}") from None


def _gather_abstract_eval(x, *indices, spec):
    return x.update(shape=gather_shape(x, spec, indices))


gather_p = Primitive("gather", _gather_abstract_eval)


def gather(x, spec, indices):
    return gather_p.bind(x, *indices, spec=tuple(spec))


def _gather_jvp(tangents, primals, output, *, spec):
    if is_zero(tangents[0]):
        return Zero(aval_of_value(output))
    return gather(tangents[0], spec, primals[1:])


def _gather_vjp(cotangent, primals, output, needs, *, spec):
    x, *indices = primals
    zeros = ew.zeros_like(x)
    return [scatter(zeros, spec, indices, cotangent, "add") if needs[0] else None] + [None] * len(indices)


gather_p.jvp, gather_p.vjp = _gather_jvp, _gather_vjp


def _scatter_abstract_eval(x, updates, *indices, spec, op):
    if op not in SCATTER_OPS:
        raise ShapeError(f"scatter: unknown op {op!r}; known: {', '.join(SCATTER_OPS)}")
    shape = gather_shape(x, spec, indices)
    if updates.shape != shape or updates.dtype != x.dtype:
        raise ShapeError(f"scatter: updates {updates} do not match the indexed window {x.update(shape=shape)}")
    return x


scatter_p = Primitive("scatter", _scatter_abstract_eval)


def scatter(x, spec, indices, updates, op: str):
    return scatter_p.bind(x, updates, *indices, spec=tuple(spec), op=op)


def _update_ids(updates):
    shape = aval_of_value(updates).shape
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)


def _set_winners(x, spec, indices, updates):
    """True for the updates that NumPy's assignment keeps."""
    ids = _update_ids(updates)
    slots = scatter(np.full(aval_of_value(x).shape, -1, np.int64), spec, indices, ids, "set")
    return ew.eq(gather(slots, spec, indices), ids)


def _extremum_winners(x, spec, indices, updates, output):
    """(destination wins, update wins): the destination first, then the lowest-index update."""
    x_wins = ew.eq(x, output)
    ids = _update_ids(updates)
    big = np.iinfo(np.int64).max
    candidate = ew.logical_and(ew.eq(updates, gather(output, spec, indices)),
                               ew.logical_not(gather(x_wins, spec, indices)))
    first = scatter(np.full(aval_of_value(x).shape, big, np.int64), spec, indices,
                    ew.select(candidate, ids, np.full(ids.shape, big, np.int64)), "min")
    return x_wins, ew.logical_and(candidate, ew.eq(gather(first, spec, indices), ids))


def _product_partials(x, spec, indices, updates):
    dtype = aval_of_value(x).dtype
    x_zero, u_zero = ew.eq(x, 0.0), ew.eq(updates, 0.0)
    x_safe = ew.select(x_zero, ew.full_like(x, 1.0), x)
    u_safe = ew.select(u_zero, ew.full_like(updates, 1.0), updates)
    zero_count = scatter(ew.convert(x_zero, dtype), spec, indices, ew.convert(u_zero, dtype), "add")
    nonzero_product = scatter(x_safe, spec, indices, u_safe, "mul")

    def partial(count, product, is_zero_element, safe):
        zero = ew.zeros_like(safe)
        only_this = ew.select(is_zero_element, product, zero)
        return ew.select(ew.eq(count, 0.0), ew.div(product, safe),
                         ew.select(ew.eq(count, 1.0), only_this, zero))

    return (partial(zero_count, nonzero_product, x_zero, x_safe),
            partial(gather(zero_count, spec, indices), gather(nonzero_product, spec, indices),
                    u_zero, u_safe))


def _scatter_partials(x, spec, indices, updates, output, op):
    """Masks or partials (for x, for updates) of the non-linear scatter ops."""
    if op == "mul":
        return _product_partials(x, spec, indices, updates)
    dtype = aval_of_value(x).dtype
    if op == "set":
        x_keeps = scatter(np.ones(aval_of_value(x).shape, np.bool_), spec, indices,
                          np.zeros(aval_of_value(updates).shape, np.bool_), "set")
        return ew.convert(x_keeps, dtype), ew.convert(_set_winners(x, spec, indices, updates), dtype)
    x_wins, u_wins = _extremum_winners(x, spec, indices, updates, output)
    return ew.convert(x_wins, dtype), ew.convert(u_wins, dtype)


def _scatter_jvp(tangents, primals, output, *, spec, op):
    x, updates, *indices = primals
    tx, tu = tangents[0], tangents[1]
    if (is_zero(tx) and is_zero(tu)) or not is_float(aval_of_value(x).dtype):
        return Zero(aval_of_value(output))
    tx, tu = instantiate(tx), instantiate(tu)
    if op == "add":
        return scatter(tx, spec, indices, tu, "add")
    px, pu = _scatter_partials(x, spec, indices, updates, output, op)
    return scatter(ew.mul(tx, px), spec, indices, ew.mul(tu, pu), "add")


def _scatter_vjp(cotangent, primals, output, needs, *, spec, op):
    x, updates, *indices = primals
    if is_zero(cotangent) or not is_float(aval_of_value(x).dtype):
        return [None] * len(primals)
    rest = [None] * len(indices)
    if op == "add":
        return [cotangent, gather(cotangent, spec, indices)] + rest
    px, pu = _scatter_partials(x, spec, indices, updates, output, op)
    return [ew.mul(cotangent, px) if needs[0] else None,
            ew.mul(gather(cotangent, spec, indices), pu) if needs[1] else None] + rest


scatter_p.jvp, scatter_p.vjp = _scatter_jvp, _scatter_vjp


def _index_sampler(rng):
    rows = np.array([0, 2, 2, 1])
    return [
        ([rng.normal(size=(3, 2)), rows], {"spec": (("array",),)}),
        ([rng.normal(size=(3, 4)), np.array([[1], [0]]), np.array([3, 0])],
         {"spec": (("array",), ("array",))}),
        ([rng.normal(size=(3, 4)), np.array([1, 1])], {"spec": (("slice", 0, 3, 2), ("array",))}),
    ]


def _scatter_sampler(rng):
    rows = np.array([0, 2, 2, 0])
    cases = []
    for op in SCATTER_OPS:
        cases.append(([rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rows], {"spec": (("array",),), "op": op}))
    return cases


gather_p.sample = _index_sampler
scatter_p.sample = _scatter_sampler


# --- batching ------------------------------------------------------------------------------------
# The batch axis becomes one more advanced index (an arange) in front of the others. NumPy then puts
# the broadcast index block first: (batch, index block, other axes). Where the unbatched gather kept
# its index block in place after `before` other axes, a transpose restores that layout.

def _batched_indexing(args, batched, size, spec, first_index):
    """(operand, batched spec, batched index arrays, permutation from NumPy's layout to ours)."""
    from .structural import reshape

    def unbatched(value, is_batched):
        aval = aval_of_value(value)
        return aval.update(shape=aval.shape[1:]) if is_batched else aval

    indices = args[first_index:]
    index_avals = [unbatched(i, b) for i, b in zip(indices, batched[first_index:])]
    block = np.broadcast_shapes(*[a.shape for a in index_avals])
    rank = len(block)
    arrays = [np.arange(size, dtype=np.int64).reshape((size,) + (1,) * rank)]
    for index, aval, is_batched in zip(indices, index_avals, batched[first_index:]):
        arrays.append(reshape(index, (size,) + (1,) * (rank - aval.ndim) + aval.shape) if is_batched else index)
    positions = [i for i, entry in enumerate(spec) if entry[0] == "array"]
    in_place = not positions or positions == list(range(positions[0], positions[-1] + 1))
    before = positions[0] if positions and in_place else 0
    x = args[0] if batched[0] else broadcast_batch(args[0], size)
    out_ndim = len(gather_shape(unbatched(args[0], batched[0]), spec, index_avals)) + 1
    perm = [0] + list(range(rank + 1, rank + 1 + before)) + list(range(1, rank + 1))
    perm += list(range(rank + 1 + before, out_ndim))
    return x, (("array",),) + tuple(spec), arrays, tuple(perm)


def _gather_batch(args, batched, size, *, spec):
    from .structural import transpose

    x, batched_spec, arrays, perm = _batched_indexing(args, batched, size, spec, 1)
    return transpose(gather(x, batched_spec, arrays), perm), True


def _scatter_batch(args, batched, size, *, spec, op):
    from .structural import transpose

    x, batched_spec, arrays, perm = _batched_indexing(
        [args[0]] + list(args[2:]), [batched[0]] + list(batched[2:]), size, spec, 1)
    updates = args[1] if batched[1] else broadcast_batch(args[1], size)
    updates = transpose(updates, tuple(np.argsort(perm)))
    return scatter(x, batched_spec, arrays, updates, op), True


gather_p.batch, scatter_p.batch = _gather_batch, _scatter_batch
