"""Structural primitives and indexing on the Numba backend: index arithmetic, never a copy.

broadcast, reshape, transpose, slice, unslice and concatenate read their input at an index
computed from the output's (static shapes: the arithmetic is on constants); gather reads its index
arrays and then its operand (negative indices wrap as in NumPy, an index out of range raises
IndexError, which the runtime reports as an ExecutionError naming the equation, as the NumPy
backend does). scatter copies its operand once and updates it in a loop over the updates.
"""
from __future__ import annotations

import numpy as np

from ...core.ir import Literal
from ...primitives import indexing, structural
from . import scalar
from .table import elemental, opaque, plain_dtypes
from .writer import Buffer, index_names


def _larger(eqn, position) -> bool:
    return eqn.outputs[0].aval.size > eqn.inputs[position].aval.size


@elemental(structural.broadcast_in_dim_p, cost=0.0, duplicates=_larger)
def _broadcast_in_dim(em, eqn, index):
    (x,) = eqn.inputs
    shape, dims = eqn.params["shape"], eqn.params["dims"]
    inner = [index[d] if size == shape[d] else "0" for size, d in zip(x.aval.shape, dims)]
    return [em.read(x, inner)]


def reshape_index(index, out_shape, in_shape) -> list[str]:
    """The index into an array of `in_shape` holding the same flat element as `index` into `out_shape`.

    Both shapes split into the shortest runs of axes with equal products; inside a run the index is
    linearised and unravelled (an axis that stays as it is maps straight through)."""
    if 0 in out_shape:  # no element: the loop body never runs (and the runs below need no zero)
        return ["0"] * len(in_shape)
    out_axes = [(i, n) for i, n in zip(index, out_shape) if n != 1]
    in_axes = [d for d, n in enumerate(in_shape) if n != 1]
    result = ["0"] * len(in_shape)
    a = b = 0
    while a < len(out_axes) and b < len(in_axes):
        out_run, in_run = [out_axes[a]], [in_axes[b]]
        out_size, in_size = out_axes[a][1], in_shape[in_axes[b]]
        a, b = a + 1, b + 1
        while out_size != in_size:
            if out_size < in_size:
                out_run.append(out_axes[a])
                out_size *= out_axes[a][1]
                a += 1
            else:
                in_run.append(in_axes[b])
                in_size *= in_shape[in_axes[b]]
                b += 1
        if len(out_run) == 1 and len(in_run) == 1:
            result[in_run[0]] = out_run[0][0]
            continue
        flat, stride = [], 1
        for i, n in reversed(out_run):
            flat.append(i if stride == 1 else f"{i} * {stride}")
            stride *= n
        linear = f"({' + '.join(reversed(flat))})"
        stride = 1
        for position, d in enumerate(reversed(in_run)):
            n = in_shape[d]
            term = linear if stride == 1 else f"({linear} // {stride})"
            result[d] = term if position == len(in_run) - 1 else f"({term} % {n})"
            stride *= n
    return result


@elemental(structural.reshape_p, cost=0.0)
def _reshape(em, eqn, index):
    (x,) = eqn.inputs
    return [em.read(x, reshape_index(index, eqn.outputs[0].aval.shape, x.aval.shape))]


@elemental(structural.transpose_p, cost=0.0)
def _transpose(em, eqn, index):
    (x,) = eqn.inputs
    inner = [None] * len(index)
    for position, axis in enumerate(eqn.params["perm"]):
        inner[axis] = index[position]
    return [em.read(x, inner)]


def affine(i: str, start: int, step: int) -> str:
    if step == 1:
        return i if start == 0 else f"({i} + {start})"
    return f"({i} * {step})" if start == 0 else f"({start} + {i} * {step})"


def _normalized(params, shape):
    return [slice(*s).indices(n) for s, n in zip(zip(params["starts"], params["stops"], params["steps"]), shape)]


@elemental(structural.slice_p, cost=0.0)
def _slice(em, eqn, index):
    (x,) = eqn.inputs
    bounds = _normalized(eqn.params, x.aval.shape)
    return [em.read(x, [affine(i, start, step) for i, (start, _, step) in zip(index, bounds)])]


@elemental(structural.unslice_p, cost=1.0)
def _unslice(em, eqn, index):
    """Zero outside the slice: the input is read only inside it (a branch, so nothing out of range runs)."""
    (x,) = eqn.inputs
    shape = eqn.params["shape"]
    bounds = _normalized(eqn.params, shape)
    tests, inner = [], []
    for i, n, m, (start, _, step) in zip(index, shape, x.aval.shape, bounds):
        if m == n and step == 1:
            inner.append(i)
            continue
        last = start + step * (m - 1)
        low, high = (start, last) if step > 0 else (last, start)
        tests.append(f"{low} <= {i} <= {high}" if m > 0 else "False")
        if step not in (1, -1):
            tests.append(f"({i} - {start}) % {step} == 0")
        inner.append(f"({i} - {start})" if step == 1 else f"({i} - {start}) // {step}")
    if not tests:
        return [em.read(x, inner)]
    name = em.fresh("u")
    with em.block(f"if {' and '.join(tests)}:"):
        em.emit(f"{name} = {em.read(x, inner)}")
    with em.block("else:"):
        em.emit(f"{name} = {scalar.constant(0, x.aval.dtype)}")
    return [name]


@elemental(structural.concatenate_p, cost=1.0)
def _concatenate(em, eqn, index):
    axis = eqn.params["axis"]
    name, offset = em.fresh("u"), 0
    pieces = [x for x in eqn.inputs if x.aval.shape[axis] > 0]
    for k, x in enumerate(pieces):
        size = x.aval.shape[axis]
        inner = list(index)
        inner[axis] = affine(index[axis], -offset, 1) if offset else index[axis]
        header = "else:" if k == len(pieces) - 1 else f"{'if' if k == 0 else 'elif'} {index[axis]} < {offset + size}:"
        if len(pieces) == 1:
            em.emit(f"{name} = {em.read(x, inner)}")
            break
        with em.block(header):
            em.emit(f"{name} = {em.read(x, inner)}")
        offset += size
    return [name]


# --- gather and scatter ------------------------------------------------------------------------------


def _advanced_layout(spec, index_shapes):
    """(broadcast shape of the index arrays, output axis where its axes start) per NumPy's rules:
    adjacent array entries put the broadcast axes in their place, separated ones put them first."""
    positions = [k for k, entry in enumerate(spec) if entry[0] == "array"]
    broadcast = tuple(np.broadcast_shapes(*index_shapes)) if index_shapes else ()
    adjacent = positions and positions == list(range(positions[0], positions[-1] + 1))
    if not positions:
        return broadcast, None
    if not adjacent:
        return broadcast, 0
    return broadcast, positions[0]  # a slice or a newaxis before them makes one output axis each


def gather_index(em, eqn, spec, x, arrays, index, check: bool = True) -> list[str]:
    """The index into `x` of output element `index` of `x[spec, arrays]` (emits the index reads and
    their checks)."""
    index_shapes = [a.aval.shape for a in arrays]
    broadcast, start = _advanced_layout(spec, index_shapes)
    index = list(index)
    if start is not None:
        advanced = index[start:start + len(broadcast)]
        rest = index[:start] + index[start + len(broadcast):]
    else:
        advanced, rest = [], index
    rest = iter(rest)
    inner, axis, array_number = [], 0, 0
    for entry in spec:
        if entry[0] == "newaxis":
            next(rest)
            continue
        size = x.aval.shape[axis]
        if entry[0] == "slice":
            begin, _, step = slice(*entry[1:]).indices(size)
            inner.append(affine(next(rest), begin, step))
        else:
            array = arrays[array_number]
            array_number += 1
            shape = array.aval.shape
            lead = len(broadcast) - len(shape)
            at = [advanced[lead + d] if n != 1 else "0" for d, n in enumerate(shape)]
            # the same index read again (another gather of it, or a scatter) reuses the checked value: each
            # raise site costs Numba compile time (they doubled BA's)
            inner.append(em.once(("index", id(array), tuple(at), size, check),
                                 _checked_index, em, eqn, axis, size, array, at, check))
        axis += 1
    inner.extend(rest)
    return inner


def _checked_index(em, eqn, axis, size, array, at, check) -> str:
    value = em.let(em.read(array, at), "g")
    if np.dtype(array.aval.dtype).kind != "u":
        value = em.let(f"{value} + {size} if {value} < 0 else {value}", "g")
    if check and not _constant_in_range(array, size):
        em.emit(f"if {value} < 0 or {value} >= {size}:")
        em.emit(f"    raise IndexError({_message(eqn, axis, size)!r})")
        em.raises = True
    return value


def _constant_in_range(array, size) -> bool:
    """A literal index array (a batched pass's seed indices) is checked here, once, not per element."""
    if not isinstance(array, Literal):
        return False
    values = np.asarray(array.value)
    return bool(values.size == 0 or (values.min() >= -size and values.max() < size))


def _message(eqn, axis, size) -> str:
    return f"index out of range in `{str(eqn)[:300]}`: an index of axis {axis} is outside [-{size}, {size})"


@elemental(indexing.gather_p, cost=1.0, duplicates=lambda eqn, position: True)
def _gather(em, eqn, index):
    x, *arrays = eqn.inputs
    return [em.read(x, gather_index(em, eqn, eqn.params["spec"], x, arrays, index))]


_UPDATES = {"set": "{1}", "add": "{0} + {1}", "mul": "{0} * {1}", "min": "_minimum({0}, {1})",
            "max": "_maximum({0}, {1})"}


@opaque(indexing.scatter_p)
def _scatter(em, eqn):
    """A copy of x, then the updates in order (a later duplicate wins for `set`, as in NumPy)."""
    x, updates, *arrays = eqn.inputs
    out = em.allocate(eqn.outputs[0].aval)
    em.copy(x, Buffer(out))
    shape = updates.aval.shape
    names = index_names(em.depth, len(shape), "s")
    blocks = [em.block(f"for {names[d]} in range({n}):") for d, n in enumerate(shape)]
    for block in blocks:
        block.__enter__()
    target = ", ".join(gather_index(em, eqn, eqn.params["spec"], x, arrays, names))
    value = em.read(updates, names)
    em.emit(f"{out}[{target}] = " + _UPDATES[eqn.params["op"]].format(f"{out}[{target}]", value))
    for block in reversed(blocks):
        block.__exit__(None, None, None)
    return [Buffer(out)]


# --- the per-slot work of scatter-mul and scatter-min/max: native kernels (indexlib.py) -------------


def _float_values(eqn) -> bool:
    return plain_dtypes(eqn) and np.dtype(eqn.inputs[0].aval.dtype).kind == "f"


def _checked_call(em, eqn, call: str) -> None:
    """`call` returns False when a target is out of range: an IndexError naming the equation."""
    size = eqn.inputs[0].aval.shape[0]
    em.emit(f"if not {call}:")
    em.emit(f"    raise IndexError({_message(eqn, 0, size)!r})")
    em.raises = True


@opaque(indexing.scatter_winner_p, materialized=lambda eqn: range(4), supports=_float_values)
def _scatter_winner(em, eqn):
    """One pass over the slots, one over the updates (the first equal update wins)."""
    x, updates, output, targets = (em.array(atom) for atom in eqn.inputs)
    result = em.allocate(eqn.outputs[0].aval, "w")
    _checked_call(em, eqn, f"_ix.scatter_winner({x}, {updates}, {output}, {targets}, {result})")
    return [Buffer(result)]


@opaque(indexing.scatter_mul_partials_p, materialized=lambda eqn: range(len(eqn.inputs)), supports=_float_values)
def _scatter_mul_partials(em, eqn):
    """Zero counting and a division per update, or the exact prefix and suffix products (indexlib); with
    the scatter's output as a hint, only the division per update where no slot has a zero."""
    operands = [em.array(atom) for atom in eqn.inputs]
    px, pu = (em.allocate(var.aval, "partial") for var in eqn.outputs)
    dtype = eqn.inputs[0].aval.dtype
    tiny = scalar.constant(np.finfo(dtype).tiny, dtype)
    kernel = "scatter_mul_partials_from_output" if len(operands) == 5 else "scatter_mul_partials"
    _checked_call(em, eqn, f"_ix.{kernel}({', '.join(operands)}, {px}, {pu}, {tiny})")
    return [Buffer(px), Buffer(pu)]
