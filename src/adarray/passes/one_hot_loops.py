"""jacfwd's symbolic tangents through `fold` (passes/one_hot.py): the loop keeps its one-hot entries.

Materialised, a fold in a jvp program runs its batched body on (n, *shape) tangents every step: the
constants' tangents are n x n identities pushed through the loop (O(n^2) per step). Here the body is
traced once by the one-hot interpreter instead, with every tangent of the carry held in a fixed
*layout*: its seed indices P (R, *shape) are the same at every step, so only the entries V travel in
the loop's carry. The constants' P are loop-invariant (hoisted: known at tracing time) and their V are
constants of the new fold. The layout is found by iteration: trace the body with the carry's layout,
and if a step produces entries at seeds the layout lacks, widen the layout to the union and trace
again (dense rows, R = n, when the union outgrows the seeds). ADBench's LSTM: every bit of the
state depends on the 9 or 17 weights of that bit (first or second layer), whatever the number of
characters, so the loop costs O(n) per step instead of O(n^2).

Not symbolic (the materialised path, as before): tangents of the scanned inputs `xs` (their seeds
change every step), traced seed indices, and layouts that do not settle within a few passes.

>>> import adarray as ad, adarray.numpy as anp, numpy as np
>>> f = lambda w: ad.fold(lambda c, x: (anp.tanh(c * w + x), anp.sum(c)), np.zeros(3), np.ones((4, 3)))[1]
>>> ad.jacfwd(f)(np.full(3, 0.5)).shape
(4, 3)
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Literal
from ..primitives.indexing import gather
from ..primitives.rules import aval_of_value
from ..primitives.structural import concatenate, transpose
from ..tracing import trace_program
from .one_hot_entries import PADDING, Tangent, densify, flat, index_is_known, merge_entries, zero
from .simplify import simplify
from .zero_tangents import with_zero_tangents

# Traces of the body tried before the layout of the carry's tangents must have settled.
LAYOUT_PASSES = 4


class _Widen(Exception):
    """A step produced tangent entries outside the carry's layout: trace again with the union."""


def fold_rule(interp, eqn, values):
    """The fold of a jvp program with its tangents symbolic, or None (the materialised fallback)."""
    params = eqn.params
    body, num_consts, num_carry = params["body"], params["num_consts"], params["num_carry"]
    consts, carry, xs = values[:num_consts], values[num_consts:num_consts + num_carry], values[num_consts + num_carry:]
    size = interp.size
    if any(isinstance(v, Tangent) for v in xs):
        return None  # the seeds of a scanned input change every step
    consts = [flat(v, size) if isinstance(v, Tangent) else v for v in consts]
    if any(isinstance(v, Tangent) and not v.is_zero and not v.dense and not index_is_known(v.index) for v in consts):
        return None
    # The carry's tangent slots: tangents coming in, and zero literals the body makes tangents.
    layouts = {}
    for k, value in enumerate(carry):
        if isinstance(value, Tangent):
            value = flat(value, size)
            if not value.is_zero and not value.dense and not index_is_known(value.index):
                return None
            carry[k] = value
            layouts[k] = _layout_of(value)
    for attempt in range(LAYOUT_PASSES):
        try:
            program, ys_layouts = _trace_body(interp, body, consts, carry, xs, layouts, num_carry, attempt == 0)
        except _Widen as widen:
            layouts = widen.args[0]
            if layouts is None:
                return None
            continue
        return _bind(eqn, program, consts, carry, xs, layouts, ys_layouts, size)
    return None


def _layout_of(tangent: Tangent):
    """"zero", "dense", or the constant P of the entries."""
    if tangent.is_zero:
        return "zero"
    return "dense" if tangent.dense else tangent.index


def _union(layout, tangent: Tangent, size: int):
    """The smallest layout holding both `layout` and the tangent's entries (None: traced seeds)."""
    other = _layout_of(merge_entries(tangent))
    if isinstance(other, str) and other == "zero":
        return layout
    if isinstance(layout, str) and layout == "zero":
        return other
    if isinstance(layout, str) or isinstance(other, str):
        return "dense"
    if not index_is_known(other):
        return None
    seen = {np.ascontiguousarray(row).tobytes() for row in layout}
    extra = [row for row in other if np.ascontiguousarray(row).tobytes() not in seen]
    if len(layout) + len(extra) > size:
        return "dense"
    return np.concatenate([layout, np.stack(extra)]) if extra else layout


def _align(tangent: Tangent, layout, size: int):
    """The tangent's entries V in `layout` (zero rows where it has none), or None if it does not fit."""
    tangent = merge_entries(flat(tangent, size))
    aval = tangent.aval
    if isinstance(layout, str) and layout == "zero":
        return None if not tangent.is_zero else ()
    if isinstance(layout, str):  # dense rows
        if tangent.is_zero:
            return np.zeros((size,) + aval.shape, aval.dtype)
        return densify(tangent, size).value
    rows = len(layout)
    if tangent.is_zero:
        return np.zeros((rows,) + aval.shape, aval.dtype)
    if tangent.dense or not index_is_known(tangent.index):
        return None
    where = {np.ascontiguousarray(row).tobytes(): r for r, row in enumerate(layout)}
    picks = np.full(rows, tangent.rank, np.int64)  # the appended zero row by default
    for r, row in enumerate(tangent.index):
        target = where.get(np.ascontiguousarray(row).tobytes())
        if target is None:
            if np.all(row == PADDING):
                continue  # padding: holds zeros
            return None
        if picks[target] != tangent.rank:
            return None  # two entries for one seed row (merged tangents never have them)
        picks[target] = r
    if tangent.rank == rows and np.array_equal(picks, np.arange(rows)):
        return tangent.value
    zeros = np.zeros((1,) + aval.shape, aval.dtype)
    value = tangent.value
    padded = np.concatenate([value, zeros]) if isinstance(value, np.ndarray) else concatenate([value, zeros], 0)
    return padded[picks] if isinstance(padded, np.ndarray) else gather(padded, (("array",),), [picks])


def _carried(layout, aval, size: int):
    """The aval of the entries a carry slot of `layout` holds in the loop (None: nothing)."""
    if isinstance(layout, str):
        return None if layout == "zero" else aval.update(shape=(size,) + aval.shape)
    return aval.update(shape=(len(layout),) + aval.shape)


def _trace_body(interp, body, consts, carry, xs, layouts, num_carry, discover=False):
    """The body as a program over (primal consts, the consts' traced V, the primal carry, the carry's V in
    its layout, xs); raises _Widen with the widened layouts when a step leaves them.

    Zero constants and zero scanned inputs (the jvp program's zero tangents of undifferentiated
    arguments) are zero literals in the body, as in the program around it, so the linear rules see them
    as zero tangents. The first trace (`discover`) also reads zero initial carries so, to find the
    carry's tangent slots; it always asks for another trace, since the carry changes after a step."""
    size = interp.size
    zeros = [k for k, v in enumerate(consts) if not isinstance(v, Tangent) and _zero_input(v)]
    zeros += [len(consts) + num_carry + j for j, v in enumerate(xs) if _zero_input(v)]
    if discover:
        zeros += [len(consts) + k for k, v in enumerate(carry) if k not in layouts and _zero_input(v)]
    body = _substituted(body, zeros)
    const_v = [k for k, v in enumerate(consts) if isinstance(v, Tangent) and not isinstance(v.value, np.ndarray)
               and v.value is not None]
    primal_c = [k for k, v in enumerate(consts) if not isinstance(v, Tangent)]
    primal_k = [k for k in range(num_carry) if k not in layouts]
    moving_k = [k for k in sorted(layouts) if _carried(layouts[k], body.inputs[len(consts) + k].aval, size)]
    avals = ([aval_of_value(consts[k]) for k in primal_c] + [aval_of_value(consts[k].value) for k in const_v]
             + [body.inputs[len(consts) + k].aval for k in primal_k]
             + [_carried(layouts[k], body.inputs[len(consts) + k].aval, size) for k in moving_k]
             + [v.aval for v in body.inputs[len(consts) + num_carry:]])
    found = {}

    def step(*inputs):
        it = iter(inputs)
        env = {}
        for k in primal_c:
            env[id(body.inputs[k])] = next(it)
        fixed = {k: consts[k] for k in range(len(consts)) if isinstance(consts[k], Tangent)}
        for k in const_v:
            t = consts[k]
            fixed[k] = Tangent(t.aval, next(it), t.index, t.rank)
        for k, t in fixed.items():
            env[id(body.inputs[k])] = t
        for k in primal_k:
            env[id(body.inputs[len(consts) + k])] = next(it)
        for k in sorted(layouts):
            aval = body.inputs[len(consts) + k].aval
            layout = layouts[k]
            if k in moving_k:
                v = next(it)
                index = None if isinstance(layout, str) else layout
                rank = size if isinstance(layout, str) else len(layout)
                env[id(body.inputs[len(consts) + k])] = Tangent(aval, v, index, rank)
            else:
                env[id(body.inputs[len(consts) + k])] = zero(aval, size)
        for var in body.inputs[len(consts) + num_carry:]:
            env[id(var)] = next(it)
        type(interp)(size).run(body, env)
        outs = [a.value if isinstance(a, Literal) else env[id(a)] for a in body.outputs]
        # The carry: tangents in their layouts (widened and traced again when they leave them).
        widened, results = dict(layouts), []
        for k in range(num_carry):
            out = outs[k]
            if k not in layouts:
                if isinstance(out, Tangent) and not out.is_zero:
                    widened[k] = _union("zero", flat(out, size), size)
                    if not _zero_input(carry[k]) or widened[k] is None:
                        raise _Widen(None)  # a tangent slot that starts with a traced or non-zero value
                    continue
                results.append(out.value if isinstance(out, Tangent) else out)
        if widened.keys() != layouts.keys() or discover:
            raise _Widen(widened)
        for k in moving_k + [k for k in sorted(layouts) if k not in moving_k]:
            out = outs[k]
            tangent = out if isinstance(out, Tangent) else zero(body.inputs[len(consts) + k].aval, size)
            aligned = _align(tangent, layouts[k], size)
            if aligned is None:
                widened[k] = _union(layouts[k], flat(tangent, size), size)
                if widened[k] is None:
                    raise _Widen(None)
            elif k in moving_k:
                results.append(aligned)
        if any(not _same(widened[k], layouts[k]) for k in layouts):
            raise _Widen(widened)
        # The ys: each in the layout this trace gives it (the same program runs every step).
        ys_layouts = []
        for out in outs[num_carry:]:
            if isinstance(out, Tangent):
                out = flat(out, size)
                if not out.is_zero and not out.dense and not index_is_known(out.index):
                    raise _Widen(None)
                ys_layouts.append(_layout_of(out))
                if not out.is_zero:
                    results.append(out.value)
            else:
                ys_layouts.append(None)
                results.append(out)
        found["ys"] = ys_layouts
        return results

    program, _, closure = trace_program(step, avals, "fold one-hot")
    if closure:
        raise _Widen(None)
    return program, found["ys"]


def _substituted(body, positions):
    """The body with its inputs at `positions` read as zero tangents (symbolic zeros through the linear
    equations, literal zeros elsewhere)."""
    if not positions:
        return body
    return simplify(with_zero_tangents(body, positions))


def _zero_input(value) -> bool:
    """A carry input that is zero: the tangent slot starts empty."""
    array = value.value if isinstance(value, Literal) else value
    return isinstance(array, np.ndarray) and not np.any(array)


def _same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    return a is b or (a.shape == b.shape and np.array_equal(a, b))


def _bind(eqn, program, consts, carry, xs, layouts, ys_layouts, size):
    """The new fold and its outputs as the interpreter's values (Tangents in their layouts)."""
    params = eqn.params
    num_carry = params["num_carry"]
    body = params["body"]
    n_consts = len(consts)
    const_args = [v for v in consts if not isinstance(v, Tangent)]
    const_args += [v.value for v in consts if isinstance(v, Tangent) and not isinstance(v.value, np.ndarray)
                   and v.value is not None]
    primal_k = [k for k in range(num_carry) if k not in layouts]
    moving_k = [k for k in sorted(layouts) if _carried(layouts[k], body.inputs[n_consts + k].aval, size)]
    initial = []
    for k in moving_k:
        start = carry[k] if isinstance(carry[k], Tangent) else zero(body.inputs[n_consts + k].aval, size)
        aligned = _align(start, layouts[k], size)
        if aligned is None:
            return None
        initial.append(aligned)
    args = const_args + [carry[k] for k in primal_k] + initial + list(xs)
    outs = eqn.prim.bind(*args, body=program, length=params["length"], reverse=params["reverse"],
                         num_consts=len(const_args), num_carry=len(primal_k) + len(moving_k))
    outs = list(outs)
    carried = iter(outs[:len(primal_k) + len(moving_k)])
    stacked = iter(outs[len(primal_k) + len(moving_k):])
    results = [None] * num_carry
    for k in primal_k:
        results[k] = next(carried)
    for k in sorted(layouts):
        aval = body.inputs[n_consts + k].aval
        layout = layouts[k]
        if k not in moving_k:
            results[k] = zero(aval, size)
        elif isinstance(layout, str):
            results[k] = Tangent(aval, next(carried), None, size)
        else:
            results[k] = Tangent(aval, next(carried), layout, len(layout))
    length = params["length"]
    for out_var, layout in zip(eqn.outputs[num_carry:], ys_layouts):
        aval = out_var.aval
        if layout is None:
            results.append(next(stacked))
            continue
        if isinstance(layout, str) and layout == "zero":
            results.append(zero(aval, size))
            continue
        value = next(stacked)  # (length, R, *y): the entry axis first
        ndim = len(aval_of_value(value).shape)
        value = transpose(value, (1, 0) + tuple(range(2, ndim)))
        if isinstance(layout, str):
            results.append(Tangent(aval, value, None, size))
        else:
            index = np.broadcast_to(layout[:, None], (layout.shape[0], length) + layout.shape[1:])
            results.append(Tangent(aval, value, index, layout.shape[0]))
    return results
