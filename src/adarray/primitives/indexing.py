"""Indexing primitives: gather (NumPy advanced indexing) and scatter (`x.at[idx].op(u)`).

Both take a static `spec`, one entry per axis position of the index tuple:
``("slice", start, stop, step)``, ``("newaxis",)`` or ``("array",)``; the array
entries are integer operands after `x` (and after `updates` for scatter).
Results follow NumPy's rules exactly (the shape rule asks NumPy on dummy arrays).

scatter ops: set, add, mul, min, max; duplicates are allowed. Reverse-mode rules:
  * set: only the update NumPy keeps (the last one) gets a cotangent; the overwritten values get a zero by
    structure (a masked cotangent, rules.Masked: their infinite partials never meet it);
  * add: linear (gather the cotangent);
  * mul: scatter_mul_partials, with the cotangent as its weights and the scatter's result as a hint
    (the whole vjp in one step, one pass over the updates where no slot has a zero): zero
    counting per slot (exact with any number of zeros, never NaN); its own derivatives go through
    segmented exclusive prefix and suffix products (a sort by slot, two linear recurrences), so
    they are exact at zeros to any order;
  * min/max: scatter_winner picks one winner per slot: the destination's own value at a tie, else
    the lowest-index update equal to the result; the cotangent goes to it (a scatter into the
    updates' shape), the tangent comes from it (a gather).
Both helper primitives work on flat operands (x (m,), updates (n,), the slot of each update); each
backend implements them natively (backends/numpy/arrays.py, backends/numba/indexlib.py, the JAX
lowerings), and both take the scatter's result, so that the vjp does not compute it again.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import Aval, is_float
from . import elementwise as ew
from .rules import (
    aval_of_value,
    batch_all,
    broadcast_batch,
    instantiate,
    masked,
    nondifferentiable,
    refuse_complex,
)
from .structural import concatenate, reshape, slice_array, transpose
from .taylor import FROM_JVP, piecewise_linear_taylor

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
    if op in ("min", "max"):
        refuse_complex(f"scatter[op={op}]", x)
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


def _flat_targets(x, spec, indices, count: int):
    """For every update element, the flat position of x it lands on, as a (count,) integer array
    (negative positions of a plain 1-d index are left for the primitives below to wrap)."""
    aval = aval_of_value(x)
    if tuple(spec) == (("array",),) and aval.ndim == 1:
        return reshape(indices[0], (count,))
    ids = np.arange(aval.size, dtype=np.int64).reshape(aval.shape)
    return reshape(gather(ids, spec, indices), (count,))


def _flat(x):
    return reshape(x, (aval_of_value(x).size,))


def _set_masks(x, spec, indices, updates):
    """Which values scatter-set keeps: (the destination's, shaped like x; the updates', shaped like them).
    The others are overwritten: their derivatives are zero by structure (a select, a masked cotangent)."""
    x_aval, u_aval = aval_of_value(x), aval_of_value(updates)
    x_keeps = scatter(np.ones(x_aval.shape, np.bool_), spec, indices, np.zeros(u_aval.shape, np.bool_), "set")
    return x_keeps, _set_winners(x, spec, indices, updates)


def _weighted_product_partials(x, spec, indices, updates, weights, output):
    """weights * d output / d x and weights[slot] * d output / d updates of scatter-mul, shaped like x and
    updates (from scatter_mul_partials: exact with zeros, to any order). `output` is the scatter's result,
    passed on as the hint that spares the partials the product per slot."""
    x_aval, u_aval = aval_of_value(x), aval_of_value(updates)
    targets = _flat_targets(x, spec, indices, u_aval.size)
    px, pu = scatter_mul_partials(_flat(x), _flat(updates), targets, _flat(weights), _flat(output))
    return reshape(px, x_aval.shape), reshape(pu, u_aval.shape)


def _winner_scatter_jvp(tx, tu, x, spec, indices, updates, output):
    """Tangent of scatter-min/max: each slot takes the tangent of its winner (dest or one update)."""
    x_aval, n = aval_of_value(x), aval_of_value(updates).size
    targets = _flat_targets(x, spec, indices, n)
    winner = scatter_winner(_flat(x), _flat(updates), _flat(output), targets)
    padded = concatenate([_flat(tu), np.zeros(1, x_aval.dtype)], 0)  # slot n: nobody (a NaN slot)
    taken = gather(padded, (("array",),), [ew.select(ew.ge(winner, 0), winner,
                                                        np.full(x_aval.size, n, np.int64))])
    own = ew.eq(winner, np.full(x_aval.size, -1, np.int64))
    return reshape(ew.select(own, _flat(tx), taken), x_aval.shape)


def _winner_scatter_vjp(cotangent, x, spec, indices, updates, output, needs):
    x_aval, u_aval = aval_of_value(x), aval_of_value(updates)
    n = u_aval.size
    targets = _flat_targets(x, spec, indices, n)
    winner = scatter_winner(_flat(x), _flat(updates), _flat(output), targets)
    ct = _flat(cotangent)
    ct_x = ct_u = None
    if needs[0]:  # a destination value that an update beat is zero by structure: masked (rules.Masked)
        own = ew.eq(winner, np.full(x_aval.size, -1, np.int64))
        ct_x = masked(reshape(own, x_aval.shape), cotangent)
    if needs[1]:
        slot = ew.select(ew.ge(winner, 0), winner, np.full(x_aval.size, n, np.int64))
        spread = scatter(np.zeros(n + 1, x_aval.dtype), (("array",),), [slot], ct, "add")
        ct_u = reshape(slice_array(spread, (0,), (n,), (1,)), u_aval.shape)
    return ct_x, ct_u


def _scatter_jvp(tangents, primals, output, *, spec, op):
    x, updates, *indices = primals
    tx, tu = tangents[0], tangents[1]
    if (is_zero(tx) and is_zero(tu)) or not is_float(aval_of_value(x).dtype):
        return Zero(aval_of_value(output))
    tx, tu = instantiate(tx), instantiate(tu)
    if op == "add":
        return scatter(tx, spec, indices, tu, "add")
    if op in ("min", "max"):
        return _winner_scatter_jvp(tx, tu, x, spec, indices, updates, output)
    if op == "mul":
        px, pu = _weighted_product_partials(x, spec, indices, updates, ew.full_like(x, 1.0), output)
        return scatter(ew.mul(tx, px), spec, indices, ew.mul(tu, pu), "add")
    x_keeps, u_keeps = _set_masks(x, spec, indices, updates)
    return scatter(ew.select(x_keeps, tx, ew.zeros_like(tx)), spec, indices, ew.select(u_keeps, tu, ew.zeros_like(tu)),
                   "add")


def _scatter_vjp(cotangent, primals, output, needs, *, spec, op):
    x, updates, *indices = primals
    if is_zero(cotangent) or not is_float(aval_of_value(x).dtype):
        return [None] * len(primals)
    rest = [None] * len(indices)
    if op == "add":
        return [cotangent, gather(cotangent, spec, indices)] + rest
    if op in ("min", "max"):
        return list(_winner_scatter_vjp(cotangent, x, spec, indices, updates, output, needs)) + rest
    if op == "mul":  # one fused step: the partials weighted by the cotangent
        ct_x, ct_u = _weighted_product_partials(x, spec, indices, updates, cotangent, output)
        return [ct_x if needs[0] else None, ct_u if needs[1] else None] + rest
    x_keeps, u_keeps = _set_masks(x, spec, indices, updates)  # the overwritten values: masked (rules.Masked)
    return [masked(x_keeps, cotangent) if needs[0] else None,
            masked(u_keeps, gather(cotangent, spec, indices)) if needs[1] else None] + rest


scatter_p.jvp, scatter_p.vjp = _scatter_jvp, _scatter_vjp


# --- scatter_mul_partials and scatter_winner: the per-slot work of scatter-mul and scatter-min/max --
# Both take flat operands: x (m,), updates (n,) and targets (n,), the slot of x each update lands on
# (a negative target t means m + t, as in NumPy). scatter_winner needs the scatter's result (the value
# each slot's winner equals); scatter_mul_partials may take it as a hint (see its docstring).

def _flat_abstract_eval(name, floats_only):
    def check(x, updates, targets):
        if x.ndim != 1 or updates.ndim != 1 or targets.shape != updates.shape or x.dtype != updates.dtype:
            raise ShapeError(f"{name}: needs x (m,), updates (n,) and targets (n,), got {x}, {updates}, {targets}")
        if not np.issubdtype(targets.dtype, np.integer) or (floats_only and not is_float(x.dtype)):
            raise ShapeError(f"{name}: targets must be integers and the values floats, got {targets}, {x}")

    return check


def _mul_partials_abstract_eval(x, updates, targets, weights, *output):
    _flat_abstract_eval("scatter_mul_partials", False)(x, updates, targets)
    if weights != x:
        raise ShapeError(f"scatter_mul_partials: the weights {weights} must match x {x}")
    if len(output) > 1 or (output and output[0] != x):
        raise ShapeError(f"scatter_mul_partials: takes at most one output hint shaped like x {x}, got {output}")
    return [x, updates]


def _winner_abstract_eval(x, updates, output, targets):
    _flat_abstract_eval("scatter_winner", True)(x, updates, targets)
    refuse_complex("scatter_winner", x)
    if output != x:
        raise ShapeError(f"scatter_winner: the output {output} must match x {x}")
    return Aval(x.shape, np.int64)


scatter_mul_partials_p = Primitive("scatter_mul_partials", _mul_partials_abstract_eval, multiple_results=True)
scatter_winner_p = Primitive("scatter_winner", _winner_abstract_eval)


def scatter_mul_partials(x, updates, targets, weights, output=None):
    """The partials of ``out = x.at[targets].multiply(updates)``, weighted per slot: (weights times the
    product of the updates of each slot, weights[t] * x[t] times the product of the other updates of slot
    t), exact with any zeros. With the cotangent as weights this is the whole vjp, in one pass.

    `output`, if given, must be ``out`` itself (as the scatter computed it): a hint, not an operand of
    the function. Where every slot of it is a nonzero normal number (no zero and no overflow in any slot)
    the partials are out / x and out / updates, one pass over the updates instead of two; elsewhere it is
    ignored. The result is a function of x, updates and weights alone, so the rules below give the hint
    no derivative (its own is already counted through x and updates).

    Computed by zero counting; its own derivatives go through segmented exclusive prefix and suffix
    products over the slots (a stable sort by slot and two linear recurrences), which stay exact at
    zeros to any order.

        >>> updates, targets = np.array([2.0, 3.0, 0.0]), np.array([0, 0, 1])
        >>> scatter_mul_partials(np.ones(2), updates, targets, np.ones(2))  # doctest: +SKIP
        [array([6., 0.]), array([3., 2., 1.])]
    """
    operands = (x, updates, targets, weights) + (() if output is None else (output,))
    return scatter_mul_partials_p.bind(*operands)


def scatter_winner(x, updates, output, targets):
    """For every slot of a scatter-min/max with result `output`: -1 if x keeps it (x wins every tie),
    else the index of the first update equal to the result, or -2 if nothing is (a NaN slot)."""
    return scatter_winner_p.bind(x, updates, output, targets)


def wrapped_slots(targets, m):
    slots = ew.convert(targets, np.int64)
    shape = aval_of_value(slots).shape
    return ew.select(ew.lt(slots, np.zeros(shape, np.int64)), ew.add(slots, np.full(shape, m, np.int64)), slots)


nondifferentiable(scatter_winner_p)


def _batched_slots(args, batched, size, first_m, first_n):
    """Batched flat operands as one flat problem: the slots of batch b offset by b * m. `args` are the
    operands with targets last; first_m and first_n pick an operand of each length."""
    *values, targets = batch_all(args, batched, size)
    m, n = aval_of_value(values[first_m]).shape[1], aval_of_value(values[first_n]).shape[1]
    offsets = np.broadcast_to(np.arange(size, dtype=np.int64)[:, None] * m, (size, n))
    flat = [reshape(v, (size * aval_of_value(v).shape[1],)) for v in values]
    return flat, reshape(ew.add(wrapped_slots(targets, m), offsets), (size * n,)), m, n


def _mul_partials_batch(args, batched, size):
    x, updates, targets, weights, *output = args
    flags = [batched[0], batched[1], batched[3], *batched[4:], batched[2]]
    (x, updates, weights, *output), targets, m, n = _batched_slots([x, updates, weights, *output, targets], flags,
                                                                   size, 0, 1)
    px, pu = scatter_mul_partials(x, updates, targets, weights, *output)
    return [reshape(px, (size, m)), reshape(pu, (size, n))], [True, True]


def _winner_batch(args, batched, size):
    (x, updates, output), targets, m, n = _batched_slots(args, batched, size, 0, 1)
    winner = reshape(scatter_winner(x, updates, output, targets), (size, m))
    offsets = np.broadcast_to(np.arange(size, dtype=np.int64)[:, None] * n, (size, m))
    return ew.select(ew.ge(winner, np.zeros((size, m), np.int64)), ew.sub(winner, offsets), winner), True


scatter_mul_partials_p.batch, scatter_winner_p.batch = _mul_partials_batch, _winner_batch




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


def _mul_partials_sampler(rng):
    slots = np.array([0, 2, 2, 0, 1, 2])
    return [
        ([rng.normal(size=3), rng.normal(size=6), slots, rng.normal(size=3)], {}),
        # one zero in slot 0, two in slot 2, a zero destination in slot 1, a negative (wrapped) target
        ([np.array([1.5, 0.0, -0.7]), np.array([0.0, 0.0, 2.0, 1.2, 0.8, 0.0]), np.array([0, 2, -1, 0, 1, 2]),
          rng.normal(size=3)], {}),
        ([rng.normal(size=2), np.array([0.0, 0.5, -1.5]), np.array([1, 1, 1], np.int32), np.ones(2)], {}),
        ([rng.normal(size=3), np.zeros(0), np.zeros(0, np.int64), rng.normal(size=3)], {}),
    ]


def _winner_sampler(rng):
    x, updates, slots = np.array([1.0, 0.5, 3.0]), np.array([2.0, 0.5, 0.2, 0.2, 3.0]), np.array([0, 1, 2, 2, 0])
    output = x.copy()
    np.minimum.at(output, slots, updates)
    return [([x, updates, output, slots], {}), ([x, updates, rng.normal(size=3), slots], {})]


scatter_mul_partials_p.sample = _mul_partials_sampler
scatter_winner_p.sample = _winner_sampler
gather_p.sample = _index_sampler
scatter_p.sample = _scatter_sampler


# --- batching ------------------------------------------------------------------------------------
# The batch axis becomes one more advanced index (an arange) in front of the others. NumPy then puts
# the broadcast index block first: (batch, index block, other axes). Where the unbatched gather kept
# its index block in place after `before` other axes, a transpose restores that layout.

def _batched_indexing(args, batched, size, spec, first_index):
    """(operand, batched spec, batched index arrays, permutation from NumPy's layout to ours)."""
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
    x, batched_spec, arrays, perm = _batched_indexing(args, batched, size, spec, 1)
    return transpose(gather(x, batched_spec, arrays), perm), True


def _scatter_batch(args, batched, size, *, spec, op):
    x, batched_spec, arrays, perm = _batched_indexing(
        [args[0]] + list(args[2:]), [batched[0]] + list(batched[2:]), size, spec, 1)
    updates = args[1] if batched[1] else broadcast_batch(args[1], size)
    updates = transpose(updates, tuple(np.argsort(perm)))
    return scatter(x, batched_spec, arrays, updates, op), True


gather_p.batch, scatter_p.batch = _gather_batch, _scatter_batch


# --- Taylor mode: gather and scatter-add/set are linear in the values, scatter-min/max follow their
# winner (all: the jvp applied to every coefficient); scatter-mul is the series of its jvp. ------------

def _scatter_taylor(series, output, *, spec, op):
    if op == "mul":
        return FROM_JVP
    return piecewise_linear_taylor(scatter_p)(series, output, spec=spec, op=op)


def _set_taylor_rules():
    gather_p.taylor = piecewise_linear_taylor(gather_p)
    scatter_p.taylor = _scatter_taylor
    scatter_mul_partials_p.taylor = FROM_JVP


_set_taylor_rules()
