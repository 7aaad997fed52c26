"""Enclosure rules of reductions, scans, indexing, einsum and control flow.

    reduce     add: an interval sum (rounding bound included); mul, max, min: element by element
    scan       add: running interval sums; mul, max, min: step by step along the axis
    gather, scatter (set, add, min, max, mul) with constant indices: the same selection of every
               coefficient (scatter-add and reduce_by_index sum with the rounding bound; min, max and
               mul go round by round, one update per slot each)
    einsum     bilinear: the Cauchy product of the operands' coefficients, contracted in intervals
    fold       unrolled over its fixed length; while_loop while its condition is decided over the box
    cond       the branch the index picks, or the hull of every branch it may pick
    custom_jvp, custom_vjp, checkpoint: the function itself; general reduce and scan: the user's
               operator, element after element
"""
from __future__ import annotations

import numpy as np

from ..control.cond import cond_p
from ..control.custom import checkpoint_call_p, custom_jvp_call_p, custom_vjp_call_p
from ..control.loops import fold_p
from ..control.while_loop import while_p
from ..core.errors import UnsupportedError
from ..core.types import Aval
from ..parallel.general import general_reduce_p, general_scan_p, identity_values
from ..primitives import indexing as ix
from ..primitives import reduce as rd
from ..primitives import scan as sc
from ..primitives.linalg import einsum_p, parse_spec
from .enclosure import Enclosure
from .interpreter import Undecided, decided, truth
from .interval import TINY, gamma
from .rules import install_enclosure, maximum, minimum


def _coefficient(context, e: Enclosure, i):
    c = e.coefficients[i]
    if c is None:
        z = np.zeros(e.shape + (context.arith.n,) * i)
        return z, z
    return c


def _take(context, value, index, axis: int):
    """value[..., index, ...] along `axis` (an enclosure or a constant)."""
    if not isinstance(value, Enclosure):
        return np.take(np.asarray(value), index, axis=axis)
    shape = value.shape[:axis] + value.shape[axis + 1:]
    return context.arith.map_bounds(value, lambda arr, i: np.take(arr, index, axis=axis), shape)


def _stack(context, values, axis: int = 0):
    """Stack enclosures (or constants) along a new axis."""
    if not any(isinstance(v, Enclosure) for v in values):
        return np.stack([np.asarray(v) for v in values], axis)
    parts = [context.enclose(v) for v in values]
    out = []
    for i in range(context.degree + 1):
        if all(p.coefficients[i] is None for p in parts):
            out.append(None)
            continue
        pieces = [_coefficient(context, p, i) for p in parts]
        out.append((np.stack([q[0] for q in pieces], axis), np.stack([q[1] for q in pieces], axis)))
    shape = list(parts[0].shape)
    shape.insert(axis, len(parts))
    return Enclosure(out, tuple(shape))


def _combine(op: str):
    if op == "add":
        return lambda context, a, b: context.arith.add(context.enclose(a), context.enclose(b))
    if op == "mul":
        return lambda context, a, b: context.arith.mul(context.enclose(a), context.enclose(b))
    return maximum if op == "max" else minimum


# --- reductions and scans --------------------------------------------------------------------------------

def _reduce(context, eqn, ins):
    (x,) = ins
    op, axes = eqn.params["op"], tuple(eqn.params["axes"])
    if op in ("and", "or"):
        maybe_true, maybe_false = truth(x)
        if op == "and":
            return [_decided(np.all(maybe_true, axes), np.any(maybe_false, axes))]
        return [_decided(np.any(maybe_true, axes), np.all(maybe_false, axes))]
    x = context.enclose(x)
    shape = tuple(n for a, n in enumerate(x.shape) if a not in axes)
    if op == "add":
        out = [None if c is None else context.iv.sum(c, axes) for c in x.coefficients]
        return [Enclosure(out, shape)]
    kept = [a for a in range(len(x.shape)) if a not in axes]
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    moved = context.arith.map_bounds(
        x, lambda arr, i: arr.transpose(list(axes) + kept + list(range(len(x.shape), arr.ndim))).reshape(
            (count,) + shape + arr.shape[len(x.shape):]), (count,) + shape)
    combine = _combine(op)
    total = _take(context, moved, 0, 0)
    for k in range(1, count):
        total = combine(context, total, _take(context, moved, k, 0))
    return [total]


def _decided(maybe_true, maybe_false):
    return decided(maybe_true, maybe_false)


def _argextreme(largest: bool):
    def rule(context, eqn, ins):
        lo, hi = context.range(ins[0])
        axis = eqn.params["axis"]
        if not largest:
            lo, hi = -hi, -lo
        best = np.argmax(lo, axis=axis)
        best_lo = np.take_along_axis(lo, np.expand_dims(best, axis), axis)
        others = np.where(np.arange(lo.shape[axis]).reshape([-1 if d == axis else 1 for d in range(lo.ndim)])
                          == np.expand_dims(best, axis), -np.inf, hi)
        if np.all(best_lo > np.max(others, axis=axis, keepdims=True)):
            return [best.astype(np.int64)]
        raise UnsupportedError(f"adarray.bounds: {eqn.prim.name} of a value that depends on x is not decided over the "
                               f"box in '{context.name}' (its candidates' ranges overlap); shrink the box")

    return rule


def _scan(context, eqn, ins):
    (x,) = ins
    op, axis, reverse = eqn.params["op"], eqn.params["axis"], eqn.params["reverse"]
    x = context.enclose(x)
    if op == "add":
        out = [None if c is None else _interval_cumsum(context, c, axis, reverse) for c in x.coefficients]
        return [Enclosure(out, x.shape)]
    combine = _combine(op)
    n = x.shape[axis]
    order = range(n - 1, -1, -1) if reverse else range(n)
    results, running = {}, None
    for k in order:
        item = _take(context, x, k, axis)
        running = item if running is None else combine(context, running, item)
        results[k] = running
    return [_stack(context, [results[k] for k in range(n)], axis)]


def _interval_cumsum(context, c, axis, reverse):
    lo, hi = c
    if reverse:
        lo, hi = np.flip(lo, axis), np.flip(hi, axis)
    s_lo, s_hi = np.cumsum(lo, axis), np.cumsum(hi, axis)
    iv = context.iv
    if iv.verified and lo.shape[axis] > 1:
        error = gamma(lo.shape[axis]) * 1.01
        e_lo = iv.up(np.cumsum(np.abs(lo), axis) * error + lo.shape[axis] * TINY)
        e_hi = iv.up(np.cumsum(np.abs(hi), axis) * error + lo.shape[axis] * TINY)
        s_lo, s_hi = iv.outward(s_lo - e_lo, s_hi + e_hi)
    if reverse:
        s_lo, s_hi = np.flip(s_lo, axis), np.flip(s_hi, axis)
    return s_lo, s_hi


# --- indexing with constant indices ----------------------------------------------------------------------

def _constant_indices(context, eqn, indices):
    if any(isinstance(i, (Enclosure, Undecided)) for i in indices):
        raise UnsupportedError(f"adarray.bounds: {eqn.prim.name} with indices that depend on x in '{context.name}'")
    return [np.asarray(i) for i in indices]


def _gather(context, eqn, ins):
    x, *indices = ins
    indices = _constant_indices(context, eqn, indices)
    index = ix.numpy_index(eqn.params["spec"], indices)
    if isinstance(x, Undecided):
        return [_decided(x.maybe_true[index], x.maybe_false[index])]
    x = context.enclose(x)
    shape = ix.gather_shape(_aval(x.shape), eqn.params["spec"], [_aval(np.shape(i), i.dtype) for i in indices])
    return [context.arith.map_bounds(x, lambda arr, i: arr[index + (Ellipsis,)], shape)]


def _aval(shape, dtype=np.float64):
    return Aval(shape, dtype)


def _scatter(context, eqn, ins):
    x, updates, *indices = ins
    indices = _constant_indices(context, eqn, indices)
    op, spec = eqn.params["op"], eqn.params["spec"]
    x, updates = context.enclose(x), context.enclose(updates)
    ids = np.arange(int(np.prod(x.shape, dtype=np.int64))).reshape(x.shape)
    targets = ids[ix.numpy_index(spec, indices)].reshape(-1)
    size, count = ids.size, targets.size
    flat_x = context.arith.map_bounds(x, lambda arr, i: arr.reshape((size,) + arr.shape[len(x.shape):]), (size,))
    flat_u = context.arith.map_bounds(updates, lambda arr, i: arr.reshape((count,) + arr.shape[len(updates.shape):]),
                                      (count,))
    if op == "add":
        result = _scatter_add(context, flat_x, flat_u, targets)
    else:
        result = _scatter_rounds(context, flat_x, flat_u, targets, op)
    return [context.arith.map_bounds(result, lambda arr, i: arr.reshape(x.shape + arr.shape[1:]), x.shape)]


def _scatter_add(context, x: Enclosure, u: Enclosure, targets):
    """Sums per slot, with the rounding bound of the longest sum."""
    iv = context.iv
    terms = 1 + int(np.max(np.bincount(targets, minlength=x.shape[0]))) if targets.size else 1

    def add(x_bounds, u_bounds):
        (x_lo, x_hi), (u_lo, u_hi) = x_bounds, u_bounds
        lo, hi = np.array(x_lo, copy=True), np.array(x_hi, copy=True)
        np.add.at(lo, targets, u_lo)
        np.add.at(hi, targets, u_hi)
        if iv.verified and terms > 1:
            a_lo, a_hi = np.abs(x_lo).copy(), np.abs(x_hi).copy()
            np.add.at(a_lo, targets, np.abs(u_lo))
            np.add.at(a_hi, targets, np.abs(u_hi))
            error = gamma(terms) * 1.01
            lo, hi = iv.outward(lo - iv.up(a_lo * error + terms * TINY), hi + iv.up(a_hi * error + terms * TINY))
        return lo, hi

    return _per_coefficient(context, x, u, add)


def _scatter_rounds(context, x: Enclosure, u: Enclosure, targets, op):
    """set: the last update of each slot wins; min, max, mul: rounds with one update per slot each."""
    occurrence = np.zeros(targets.size, np.int64)
    seen: dict = {}
    for k, t in enumerate(targets):
        occurrence[k] = seen.get(int(t), 0)
        seen[int(t)] = occurrence[k] + 1
    if op == "set":
        last = {int(t): k for k, t in enumerate(targets)}
        keep = np.array(sorted(last.values()), np.int64)
        return _assign(context, x, targets[keep], _take_rows(context, u, keep))
    combine = _combine(op)
    for r in range(int(occurrence.max()) + 1 if targets.size else 0):
        rows = np.nonzero(occurrence == r)[0]
        slots = targets[rows]
        current = _take_rows(context, x, slots)
        x = _assign(context, x, slots, combine(context, current, _take_rows(context, u, rows)))
    return x


def _take_rows(context, e: Enclosure, rows):
    return context.arith.map_bounds(e, lambda arr, i: arr[rows], (len(rows),) + e.shape[1:])


def _assign(context, x: Enclosure, slots, values: Enclosure) -> Enclosure:
    def assign(x_bounds, v_bounds):
        lo, hi = np.array(x_bounds[0], copy=True), np.array(x_bounds[1], copy=True)
        lo[slots], hi[slots] = v_bounds
        return lo, hi

    return _per_coefficient(context, x, values, assign)


def _per_coefficient(context, x: Enclosure, y: Enclosure, combine) -> Enclosure:
    """An enclosure of x's shape whose Taylor coefficient i is combine(x's (lo, hi), y's (lo, hi)), and absent
    (zero) where both are."""
    out = []
    for i in range(context.degree + 1):
        if x.coefficients[i] is None and y.coefficients[i] is None:
            out.append(None)
        else:
            out.append(combine(_coefficient(context, x, i), _coefficient(context, y, i)))
    return Enclosure(out, x.shape)


# --- einsum: bilinear ---------------------------------------------------------------------------------------

def _einsum(context, eqn, ins):
    (sa, sb), so = parse_spec(eqn.params["spec"])
    a, b = (context.enclose(v) for v in ins)
    letters = list(so) + [c for c in dict.fromkeys(sa + sb) if c not in so]
    sizes = {c: n for c, n in zip(sa, a.shape)} | {c: n for c, n in zip(sb, b.shape)}
    contracted = tuple(range(len(so), len(letters)))
    iv = context.iv

    def align(arr, own, before, after):
        """arr (own letters + trailing axes) laid out as letters + (1,)*before + trailing + (1,)*after."""
        trailing = arr.shape[len(own):]
        order = [own.index(c) for c in letters if c in own]
        moved = arr.transpose(order + list(range(len(own), arr.ndim)))
        shape = [sizes[c] if c in own else 1 for c in letters]
        return moved.reshape(shape + [1] * before + list(trailing) + [1] * after)

    def product(x, i, y, j):
        n = context.arith.n
        x = (align(x[0], sa, 0, j), align(x[1], sa, 0, j))
        y = (align(y[0], sb, i, 0), align(y[1], sb, i, 0))
        full = iv.mul(x, y)
        if not contracted:
            return full
        summed = iv.sum(full, contracted)
        return summed[0].reshape(tuple(sizes[c] for c in so) + (n,) * (i + j)), \
            summed[1].reshape(tuple(sizes[c] for c in so) + (n,) * (i + j))

    shape = tuple(sizes[c] for c in so)
    return [context.arith.mul(a, b, product=product, shape=shape)]


# --- control flow ------------------------------------------------------------------------------------------

def _fold(context, eqn, ins):
    p = eqn.params
    body, length, reverse, num_consts, num_carry = p["body"], p["length"], p["reverse"], p["num_consts"], p["num_carry"]
    consts, carry, xs = ins[:num_consts], list(ins[num_consts:num_consts + num_carry]), ins[num_consts + num_carry:]
    ys = {}
    for k in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = context.run(body, list(consts) + carry + [_take(context, x, k, 0) for x in xs])
        carry, ys[k] = list(outs[:num_carry]), outs[num_carry:]
    stacked = []
    for j, aval in enumerate(body.out_avals[num_carry:]):
        if length == 0:
            stacked.append(np.zeros((0,) + aval.shape, aval.dtype))
        else:
            stacked.append(_stack(context, [ys[k][j] for k in range(length)]))
    return carry + stacked


def _while(context, eqn, ins):
    p = eqn.params
    num_consts = p["num_consts"]
    consts, carry = list(ins[:num_consts]), list(ins[num_consts:])
    for _ in range(1_000_000):
        (go,) = context.run(p["cond"], consts + carry)
        if isinstance(go, Undecided):
            raise UnsupportedError(f"adarray.bounds: a while_loop in '{context.name}' whose condition is not decided "
                                   "over the box (the trip count depends on x there); use fold with a fixed length")
        if not bool(go):
            return carry
        carry = list(context.run(p["body"], consts + carry))
    raise UnsupportedError(f"adarray.bounds: a while_loop in '{context.name}' ran a million steps")


def _cond(context, eqn, ins):
    index, *operands = ins
    branches = eqn.params["branches"]
    if isinstance(index, Enclosure):
        raise UnsupportedError(f"adarray.bounds: a cond index that depends on x in '{context.name}'")
    if isinstance(index, Undecided):  # a converted comparison: 0, 1 or both
        maybe_true, maybe_false = truth(index)
        candidates = [k for k, possible in ((0, bool(maybe_false)), (1, bool(maybe_true))) if possible]
    else:
        candidates = [int(np.clip(np.asarray(index), 0, len(branches) - 1))]
    results = [context.run(branches[k], operands) for k in candidates]
    out = results[0]
    for other in results[1:]:
        out = [_hull(context, a, b) for a, b in zip(out, other)]
    return out


def _hull(context, a, b):
    if isinstance(a, Enclosure) or isinstance(b, Enclosure):
        return context.arith.hull(context.enclose(a), context.enclose(b))
    a, b = np.asarray(a), np.asarray(b)
    if np.array_equal(a, b):
        return a
    return context.arith.interval_constant((np.minimum(a, b), np.maximum(a, b)))


def _call(name):
    def rule(context, eqn, ins):
        return context.run(eqn.params[name], ins)

    return rule


def _general(scan: bool):
    def rule(context, eqn, ins):
        op = eqn.params["op"]
        n = np.shape(ins[0])[0] if not isinstance(ins[0], Enclosure) else ins[0].shape[0]
        if n == 0:
            if scan:
                return list(ins)
            return [np.asarray(v) for v in identity_values(eqn.params["identity"])]
        running, results = None, []
        for k in range(n):
            item = [_take(context, x, k, 0) for x in ins]
            running = item if running is None else context.run(op, list(running) + item)
            results.append(running)
        if not scan:
            return list(running)
        return [_stack(context, [r[j] for r in results]) for j in range(len(ins))]

    return rule


def install() -> None:
    for prim, rule in [
        (rd.reduce_p, _reduce), (rd.argmax_p, _argextreme(True)), (rd.argmin_p, _argextreme(False)),
        (sc.scan_p, _scan), (ix.gather_p, _gather), (ix.scatter_p, _scatter), (einsum_p, _einsum),
        (fold_p, _fold), (while_p, _while), (cond_p, _cond), (checkpoint_call_p, _call("fun")),
        (custom_jvp_call_p, _call("fun")), (custom_vjp_call_p, _call("fun")),
        (general_reduce_p, _general(False)), (general_scan_p, _general(True)),
    ]:
        install_enclosure(prim, rule)
