"""The parallel building blocks: reduce, scan and reduce_by_index with any associative operator.

`op` is a known monoid name ("add", "mul", "min", "max", "and", "or", "logaddexp") or a
Python function of two elements (pytrees of arrays, possibly with trailing axes) that you
declare associative, with its `identity`. Known monoids, and functions recognised as one of
them (a lambda whose traced program is a single add, multiply, maximum or minimum, elementwise
over whole elements), use the specialised rules; anything else uses the general rules.

A user operator that is elementwise over the elements' trailing axes (e.g. `anp.logaddexp` on
vectors) is recognised as vectorised: its derivatives work lane by lane (see general.py).

Conventions: min/max send the whole derivative to one winner, the lowest index (in
reduce_by_index the destination's own value first); reduce_by_index ignores indices outside
[0, len(dest)), negative ones included (unlike NumPy, which wraps them around), and takes any
integer index dtype. "logaddexp" of nothing but -inf (an empty bin, an all -inf prefix) is -inf
with zero gradient, never NaN.
"""
from __future__ import annotations

import numpy as np

from ..control.common import aval_of
from ..core.errors import ArgumentError, ShapeError
from ..core.pytree import flatten, unflatten
from ..core.types import Aval
from ..numpy import (
    _indexing,  # noqa: F401  (registers the array methods used below)
    asarray,
    concatenate,
    cumprod,
    cumsum,
    flip,
    full,
    logcumsumexp,
    logsumexp,
    maximum,
    moveaxis,
    prod,
    take,
    where,
)
from ..numpy import (
    all as all_,
)
from ..numpy import (
    any as any_,
)
from ..numpy import (
    max as max_,
)
from ..numpy import (
    min as min_,
)
from ..numpy import (
    sum as sum_,
)
from ..numpy._core import cast, dtype, normalize_axis, shape
from ..primitives import elementwise as ew
from ..primitives.indexing import scatter
from ..primitives.scan import cumulative
from ..primitives.sort import argsort
from ..primitives.structural import broadcast_in_dim, slice_array
from ..tracing import Tracer, eval_program, trace_program
from .general import general_reduce, general_scan, lanes, map_program, shifted_by_one

MONOIDS = ("add", "mul", "min", "max", "and", "or", "logaddexp")
_IDENTITY = {"add": 0, "mul": 1, "max": -np.inf, "min": np.inf, "and": True, "or": False, "logaddexp": -np.inf}


def _identity_of(op, like_dtype):
    value = _IDENTITY[op]
    if np.issubdtype(like_dtype, np.integer) and op in ("max", "min"):
        info = np.iinfo(like_dtype)
        value = info.min if op == "max" else info.max
    return np.asarray(value, like_dtype)


def _trace_operator(op, element_avals, tree):
    """The operator's program on (a leaves, b leaves), checked to return one element."""
    k = len(element_avals)

    def combine(*leaves):
        return op(unflatten(tree, leaves[:k]), unflatten(tree, leaves[k:]))

    combine.__name__ = getattr(op, "__name__", "operator")
    program, out_tree, closure = trace_program(combine, list(element_avals) * 2, combine.__name__)
    if closure:
        raise ArgumentError(f"operator '{combine.__name__}' closes over traced values; pass them as elements")
    if out_tree != tree or program.out_avals != tuple(element_avals):
        raise ShapeError(f"operator '{combine.__name__}' must return one element like its inputs "
                         f"({tree}: {tuple(element_avals)}), got {out_tree}: {program.out_avals}")
    return program


def recognize(program) -> str | None:
    """"add", "mul", "max" or "min" if the operator is that monoid elementwise over whole elements."""
    names = {"add": "add", "mul": "mul", "maximum": "max", "minimum": "min"}
    if len(program.outputs) != 1 or len(program.eqns) != 1:
        return None
    (eqn,) = program.eqns
    a, b = program.inputs
    if eqn.prim.name in names and eqn.outputs[0] is program.outputs[0] and set(map(id, eqn.inputs)) == {id(a), id(b)}:
        if eqn.prim.name in ("maximum", "minimum") and eqn.inputs[0] is not a:
            return None  # b-first ties would differ from the policy; keep it general
        return names[eqn.prim.name]
    return None


def _prepare(op, xs, axis, what):
    """(monoid name or None, program or None, leaves moved to axis 0, tree, element avals)."""
    leaves, tree = flatten(xs)
    if not leaves:
        raise ArgumentError(f"{what}: no arrays given")
    leaves = [asarray(x) for x in leaves]
    ndim = len(shape(leaves[0]))
    axis = normalize_axis(axis, ndim, what)
    moved = [moveaxis(x, axis, 0) if axis else x for x in leaves]
    element_avals = [aval_of(x).update(shape=shape(x)[1:]) for x in moved]
    if isinstance(op, str):
        if op not in MONOIDS:
            raise ArgumentError(f"{what}: unknown operator {op!r}; known: {', '.join(MONOIDS)}, or pass a function")
        if len(leaves) != 1:
            raise ArgumentError(f"{what}: the monoid {op!r} takes a single array")
        return op, None, moved, tree, element_avals, axis
    program = _trace_operator(op, element_avals, tree)
    return recognize(program), program, moved, tree, element_avals, axis


def _identity_leaves(identity, tree, element_avals, what, why="a user operator needs"):
    if identity is None:
        raise ArgumentError(f"{what}: {why} its identity element (identity=...)")
    leaves, given = flatten(identity)
    if given != tree:
        raise ShapeError(f"{what}: the identity's structure {given} differs from the elements' {tree}")
    if any(isinstance(e, Tracer) for e in leaves):
        raise ArgumentError(f"{what}: the identity must be a constant, not a traced value")
    return [np.broadcast_to(np.asarray(e, a.dtype), a.shape) for e, a in zip(leaves, element_avals)]


def _adjoin_identity(program, element_avals):
    """The operator on (present, element) pairs, whose identity is (0, anything): a semigroup made a
    monoid, so that a reduce, an inclusive scan or a histogram needs no identity from the user.
    An absent operand is replaced by the other one before the operator runs, so the operator only
    ever sees data, never the placeholder (whose values could make its derivatives NaN). The flag is
    a float with the lanes of a lane-wise operator, which keeps the lifted operator lane-wise.

    Returns (lifted program, flag aval, identity leaves)."""
    k = len(element_avals)
    floats = [a.dtype for a in element_avals if np.issubdtype(a.dtype, np.floating)]
    flag = Aval(lanes(program) or (), np.result_type(*floats) if floats else np.dtype(np.float64))

    def combine(*args):
        has_a, a, has_b, b = args[0], args[1:k + 1], args[k + 1], args[k + 2:]
        present_a, present_b = (ew.gt(f, np.zeros(flag.shape, flag.dtype)) for f in (has_a, has_b))

        def where(present, x, y):
            return ew.select(broadcast_in_dim(present, shape(x), tuple(range(len(flag.shape)))), x, y)

        left = [where(present_a, x, y) for x, y in zip(a, b)]
        right = [where(present_b, y, x) for x, y in zip(left, b)]
        combined = eval_program(program, left + right)
        both = ew.logical_and(present_a, present_b)
        return [ew.maximum(has_a, has_b)] + [where(both, c, x) for c, x in zip(combined, left)]

    avals = [flag] + list(element_avals) + [flag] + list(element_avals)
    lifted, _, _ = trace_program(combine, avals, "operator with identity")
    return lifted, flag, [np.zeros(flag.shape, flag.dtype)] + [np.zeros(a.shape, a.dtype) for a in element_avals]


def _present(flag, count):
    return np.ones((count,) + flag.shape, flag.dtype)


def reduce(op, xs, axis=0, identity=None):
    """Combine the elements of `xs` along `axis` with an associative operator.

    >>> reduce("mul", x)                                      # doctest: +SKIP
    >>> reduce(lambda a, b: a @ b, matrices, identity=anp.eye(2))   # non-commutative  # doctest: +SKIP
    """
    monoid, program, moved, tree, element_avals, _ = _prepare(op, xs, axis, "reduce")
    if monoid is not None:
        (x,) = moved
        if shape(x)[0] == 0:
            base = _identity_of(monoid, dtype(x)) if identity is None else identity
            return unflatten(tree, [full(shape(x)[1:], base, dtype(x))])
        reducer = {"add": sum_, "mul": prod, "max": max_, "min": min_, "and": all_, "or": any_,
                   "logaddexp": logsumexp}[monoid]
        return unflatten(tree, [reducer(x, axis=0)])
    n = shape(moved[0])[0]
    if identity is None and n:
        lifted, flag, identities = _adjoin_identity(program, element_avals)
        return unflatten(tree, general_reduce(lifted, [_present(flag, n)] + moved, identities)[1:])
    identities = _identity_leaves(identity, tree, element_avals, "reduce", "an empty axis with a user operator needs")
    return unflatten(tree, general_reduce(program, moved, identities))


def scan(op, xs, axis=0, reverse=False, inclusive=True, identity=None):
    """Prefix combination along `axis`: inclusive (x0, x0.x1, ...) or exclusive (e, x0, ...).

    >>> scan("max", x)                                          # cummax  # doctest: +SKIP
    >>> scan(compose, (a, b), identity=(1.0, 0.0))             # linear recurrences  # doctest: +SKIP
    """
    monoid, program, moved, tree, element_avals, axis = _prepare(op, xs, axis, "scan")
    if monoid is not None:
        (x,) = moved
        base = _identity_of(monoid, dtype(x)) if identity is None else np.asarray(identity, dtype(x))
        result = _monoid_scan(monoid, x, reverse)
        identities = [broadcast_in_dim(base, shape(x)[1:], ())]
        outs = [result]
    else:
        ordered = [flip(x, 0) for x in moved] if reverse else moved
        if identity is None and inclusive:
            lifted, flag, lifted_identities = _adjoin_identity(program, element_avals)
            outs = general_scan(lifted, [_present(flag, shape(moved[0])[0])] + ordered, lifted_identities)[1:]
        else:
            identities = _identity_leaves(identity, tree, element_avals, "scan",
                                          "an exclusive scan starts from")
            outs = general_scan(program, ordered, identities)
        outs = [flip(o, 0) for o in outs] if reverse else outs
    if not inclusive:
        outs = shifted_by_one(outs, identities, later=reverse) if shape(outs[0])[0] else outs
    outs = [moveaxis(o, 0, axis) if axis else o for o in outs]
    return unflatten(tree, outs)


def _monoid_scan(monoid, x, reverse):
    if monoid in ("add", "mul", "max", "min"):
        if monoid in ("add", "mul") and not reverse:
            return (cumsum if monoid == "add" else cumprod)(x, axis=0)
        return cumulative(x, monoid, 0, reverse)
    if monoid in ("and", "or"):
        as_int = cast(x, np.int64)
        return cast(cumulative(as_int, "min" if monoid == "and" else "max", 0, reverse), np.bool_)
    return logcumsumexp(x, 0, reverse)


# --- reduce_by_index -----------------------------------------------------------------------------

def reduce_by_index(dest, op, indices, values, identity=None):
    """A histogram: ``dest[indices[i]] = op(dest[indices[i]], values[i])`` for every i.

    Indices outside [0, len(dest)), negative ones included, are ignored. dest has shape
    (bins, ...) and values (n, ...) with the same trailing shape; for a user operator they are
    pytrees of such arrays.
    """
    indices = asarray(indices)
    if not np.issubdtype(dtype(indices), np.integer) or len(shape(indices)) != 1:
        raise ShapeError(f"reduce_by_index: indices must be a 1-d integer array, got {aval_of(indices)}")
    # one index dtype from here on (uint64 indices too large for int64 turn negative: ignored, as they should be)
    indices = cast(indices, np.int64)
    dest_leaves, dest_tree = flatten(dest)
    value_leaves, value_tree = flatten(values)
    if dest_tree != value_tree:
        raise ShapeError(f"reduce_by_index: dest {dest_tree} and values {value_tree} differ in structure")
    bins, n = shape(asarray(dest_leaves[0]))[0], shape(indices)[0]
    for d, v in zip(dest_leaves, value_leaves):
        if shape(asarray(v))[0] != n or shape(asarray(v))[1:] != shape(asarray(d))[1:]:
            raise ShapeError(f"reduce_by_index: values {shape(asarray(v))} do not fit {n} indices into "
                             f"dest {shape(asarray(d))}")
    inside = ew.logical_and(ew.ge(indices, np.zeros(n, np.int64)), ew.lt(indices, np.full(n, bins, np.int64)))
    target = ew.select(inside, indices, np.full(n, bins, np.int64))
    if isinstance(op, str):
        if op not in MONOIDS or len(dest_leaves) != 1:
            raise ArgumentError(f"reduce_by_index: unknown operator {op!r} (or a monoid with several arrays)")
        return _monoid_by_index(op, asarray(dest_leaves[0]), target, asarray(value_leaves[0]), bins)
    element_avals = [aval_of(asarray(d)).update(shape=shape(asarray(d))[1:]) for d in dest_leaves]
    program = _trace_operator(op, element_avals, dest_tree)
    monoid = recognize(program)
    if monoid is not None:
        return unflatten(dest_tree, [_monoid_by_index(monoid, asarray(dest_leaves[0]), target,
                                                      asarray(value_leaves[0]), bins)])
    dests, values = [asarray(d) for d in dest_leaves], [asarray(v) for v in value_leaves]
    if identity is None:  # the destination supplies the initial values: no identity is needed
        program, flag, identities = _adjoin_identity(program, element_avals)
        dests, values = [_present(flag, bins)] + dests, [_present(flag, n)] + values
    else:
        identities = _identity_leaves(identity, dest_tree, element_avals, "reduce_by_index")
    partial = _segmented(program, target, values, identities, bins, n)
    outs = map_program(program, bins, dests + partial)
    return unflatten(dest_tree, outs[1:] if identity is None else outs)


def _with_extra_bin(x, fill):
    """x with one more bin at the end (where out-of-range indices land)."""
    row = broadcast_in_dim(np.asarray(fill, dtype(x)), (1,) + shape(x)[1:], ())
    return concatenate([x, row], 0)


def _drop_extra_bin(x, bins):
    return slice_array(x, (0,) * len(shape(x)), (bins,) + shape(x)[1:], (1,) * len(shape(x)))


def _monoid_by_index(op, dest, target, values, bins):
    values = cast(values, dtype(dest))
    spec = (("array",),)
    if op == "logaddexp":  # each bin shifted by its own maximum; an all -inf bin: -inf, zero gradient

        peak = ew.stop_gradient(_monoid_by_index("max", dest, target, ew.stop_gradient(values), bins))
        finite = ew.isfinite(peak)
        base = where(finite, peak, 0.0)
        in_range = take(_with_extra_bin(finite, False), target, axis=0)
        at_value = take(_with_extra_bin(base, 0.0), target, axis=0)
        shifted = ew.exp(where(in_range, values - at_value, -np.inf))
        total = _monoid_by_index("add", ew.exp(where(finite, dest - base, -np.inf)), target, shifted, bins)
        return where(finite, ew.add(ew.log(where(finite, total, 1.0)), base), peak)
    if op in ("and", "or"):
        as_int = cast(dest, np.int64)
        result = _monoid_by_index("min" if op == "and" else "max", as_int, target, cast(values, np.int64), bins)
        return cast(result, np.bool_)
    scatter_op = {"add": "add", "mul": "mul", "max": "max", "min": "min"}[op]
    extended = _with_extra_bin(dest, _identity_of(op, dtype(dest)))
    return _drop_extra_bin(scatter(extended, spec, [target], values, scatter_op), bins)


def _segmented(program, target, values, identities, bins, n):
    """Per bin, the ordered combination of its values (identity for empty bins): a stable sort by
    index, a segmented scan (the operator lifted to (segment start flag, element)), and a scatter
    of each segment's last running value. Everything here is differentiable, division-free.
    For a lane-wise operator the flag is given every lane too, so the lifted operator stays lane-wise."""
    if n == 0:
        return [broadcast_in_dim(e, (bins,) + shape(e), tuple(range(1, len(shape(e)) + 1))) for e in identities]

    order = argsort(target, 0)
    keys = take(target, order, axis=0)
    sorted_values = [take(v, order, axis=0) for v in values]
    previous_key = shifted_by_one([keys], [np.asarray(-1, np.int64)])[0]
    next_key = shifted_by_one([keys], [np.asarray(-1, np.int64)], later=True)[0]
    dtype_ = np.result_type(*[dtype(v) for v in values])
    flag_shape = lanes(program) or ()
    starts = broadcast_in_dim(cast(ew.ne(keys, previous_key), dtype_), (n,) + flag_shape, (0,))
    ends = ew.ne(keys, next_key)
    lifted = _lifted(program, [aval_of(v).update(shape=shape(v)[1:]) for v in values], Aval(flag_shape, dtype_))
    running = general_scan(lifted, [starts] + sorted_values, [np.zeros(flag_shape, dtype_)] + list(identities))[1:]
    slot = ew.select(ends, keys, np.full(n, bins, np.int64))
    partial = []
    for r, e in zip(running, identities):
        base = broadcast_in_dim(e, (bins + 1,) + shape(e), tuple(range(1, len(shape(e)) + 1)))
        partial.append(_drop_extra_bin(scatter(base, (("array",),), [slot], r, "set"), bins))
    return partial


def _lifted(program, element_avals, flag):
    """((f1, a), (f2, b)) -> (max(f1, f2), b if f2 else a . b): a segmented scan's operator."""
    k = len(element_avals)

    def combine(*args):
        f1, a, f2, b = args[0], args[1:k + 1], args[k + 1], args[k + 2:]
        combined = eval_program(program, list(a) + list(b))
        restart = ew.gt(f2, np.zeros(flag.shape, flag.dtype))
        picked = [ew.select(broadcast_in_dim(restart, shape(c), tuple(range(len(flag.shape)))), bb, c)
                  for bb, c in zip(b, combined)]
        return [ew.maximum(f1, f2)] + picked

    lifted, _, _ = trace_program(combine, [flag] + list(element_avals) + [flag] + list(element_avals),
                                 "segmented operator")
    return lifted


# --- sugar ---------------------------------------------------------------------------------------

def _segment(op, data, segment_ids, num_segments):
    data = asarray(data)
    base = _identity_of(op, dtype(data))
    dest = broadcast_in_dim(base, (int(num_segments),) + shape(data)[1:], ())
    return reduce_by_index(dest, op, segment_ids, data)


def segment_sum(data, segment_ids, num_segments):
    """Sum of data rows per segment id (ids outside [0, num_segments) are ignored)."""
    return _segment("add", data, segment_ids, num_segments)


def segment_prod(data, segment_ids, num_segments):
    """Product per segment; the gradient is exact with zeros and duplicate ids."""
    return _segment("mul", data, segment_ids, num_segments)


def segment_max(data, segment_ids, num_segments):
    """Maximum per segment (-inf for an empty one); the gradient goes to the first maximal row."""
    return _segment("max", data, segment_ids, num_segments)


def segment_min(data, segment_ids, num_segments):
    return _segment("min", data, segment_ids, num_segments)


def segment_mean(data, segment_ids, num_segments):
    """Mean per segment (0 for an empty one)."""
    data = asarray(data)
    total = segment_sum(data, segment_ids, num_segments)
    count = segment_sum(np.ones(shape(data)[:1], dtype(total)), segment_ids, num_segments)
    count = maximum(count, 1.0)
    return total / broadcast_in_dim(count, shape(total), (0,))


