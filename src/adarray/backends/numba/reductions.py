"""Reductions, scans and recurrences on the Numba backend.

A reduction is elemental when its reduced axes come after the kept ones or are short: each output
element runs an inner loop with an accumulator in a register, and the producers of its operand
are inlined into that loop (elementwise into reductions). A long reduction over leading axes is
a loop over the operand in memory order instead, accumulating into the output (opaque). max and
min propagate NaN as NumPy's do; argmax/argmin return the first maximum (or the first NaN).
Scans and linear recurrences run their axis in place in the loop nest, reading the previous
element of the output.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ...primitives import reduce, scan
from . import options, scalar
from .symbolic import planned, product
from .table import LOWERINGS, ByEquation, Elemental, Opaque, elemental, opaque, plain_dtypes
from .writer import Buffer, index_names

# Reductions over leading axes longer than this (elements per output) accumulate in memory order.
STRIDED_REDUCTION = 64


def identity(op, dtype) -> str:
    dtype = np.dtype(dtype)
    if op in ("max", "min"):
        if dtype.kind == "f":
            return "(-np.inf)" if op == "max" else "np.inf"
        info = np.iinfo(dtype) if dtype.kind in "iu" else None
        if info is None:
            return "False" if op == "max" else "True"
        return scalar.constant(info.min if op == "max" else info.max, dtype)
    return {"add": scalar.constant(0, dtype), "mul": scalar.constant(1, dtype), "and": "True", "or": "False"}[op]


def combine(op, acc, value, dtype) -> str:
    """`op` of the accumulator and an element, as NumPy's ufunc reductions (max/min keep a NaN once
    met, and take the later element at a tie, as np.maximum does)."""
    if op == "add":
        text = f"{acc} + {value}"
    elif op == "mul":
        text = f"{acc} * {value}"
    elif op == "max":
        return f"{acc} if ({acc} > {value} or {acc} != {acc}) else {value}"
    elif op == "min":
        return f"{acc} if ({acc} < {value} or {acc} != {acc}) else {value}"
    elif op == "and":
        return f"{acc} and {value}"
    else:
        return f"{acc} or {value}"
    dtype = np.dtype(dtype)
    return text if dtype in (np.dtype(np.float64), np.dtype(np.int64)) else f"{scalar.type_name(dtype)}({text})"


@contextlib.contextmanager
def loops(em, names, sizes, orders=None):
    """Nested loops over `sizes` with index variables `names` (reversed where `orders` says so)."""
    with contextlib.ExitStack() as stack:
        for k, (name, size) in enumerate(zip(names, sizes)):
            backwards = orders is not None and orders[k]
            header = f"for {name} in range({size - 1}, -1, -1):" if backwards else f"for {name} in range({size}):"
            stack.enter_context(em.block(header))
        yield


def _reduced(eqn):
    x = eqn.inputs[0]
    return int(np.prod([x.aval.shape[a] for a in eqn.params["axes"]], dtype=np.int64))


def _reduce_elemental(em, eqn, index):
    (x,) = eqn.inputs
    op, axes = eqn.params["op"], eqn.params["axes"]
    dtype = eqn.outputs[0].aval.dtype
    names = tuple(em.fresh("r") for _ in axes)
    kept, reduced = iter(index), iter(names)
    inner = [next(reduced) if d in axes else next(kept) for d in range(x.aval.ndim)]
    acc = em.fresh("acc")
    em.emit(f"{acc} = {identity(op, dtype)}")
    with loops(em, names, [x.aval.shape[a] for a in axes]):
        value = em.read(x, inner)
        em.emit(f"{acc} = {combine(op, acc, value, dtype)}")
    return [acc]


def _reduce_in_order(em, eqn):
    """Accumulate into the output while reading the operand in memory order (the output starts at
    the identity: no test for the first element inside the loop, which then vectorises)."""
    (x,) = eqn.inputs
    op, axes = eqn.params["op"], eqn.params["axes"]
    aval = eqn.outputs[0].aval
    out = Buffer(em.allocate(aval))
    names = index_names(em.depth, x.aval.ndim, "r")
    kept = tuple(n for d, n in enumerate(names) if d not in axes)
    with loops(em, kept, aval.shape):
        em.emit(out.write(kept, identity(op, aval.dtype)))
    with loops(em, names, x.aval.shape):
        value = em.read(x, names)
        em.emit(out.write(kept, combine(op, out.read(kept), value, aval.dtype)))
    return [out]


_REDUCE_ELEMENTAL = Elemental(_reduce_elemental, reads=_reduced)
_REDUCE_IN_ORDER = Opaque(_reduce_in_order)


def _choose_reduce(eqn):
    x = eqn.inputs[0]
    axes = eqn.params["axes"]
    kept = [d for d in range(x.aval.ndim) if d not in axes]
    trailing = not kept or min(axes, default=x.aval.ndim) > max(kept)
    extent = planned(product(x.aval.shape[a] for a in axes))  # a batch size counts as long (symbolic.py)
    if trailing or extent <= STRIDED_REDUCTION or not kept or x.aval.size == 0:
        return _REDUCE_ELEMENTAL
    return _REDUCE_IN_ORDER


LOWERINGS[reduce.reduce_p] = ByEquation(_choose_reduce)


def _arg(em, eqn, index, better):
    (x,) = eqn.inputs
    axis = eqn.params["axis"]
    size = x.aval.shape[axis]
    at = list(index)
    at.insert(axis, "0")
    best, where = em.fresh("best"), em.fresh("arg")
    em.emit(f"{best} = {em.read(x, at)}")
    em.emit(f"{where} = 0")
    r = em.fresh("r")
    at[axis] = r
    with em.block(f"for {r} in range(1, {size}):"):
        value = em.let(em.read(x, at))
        em.emit(f"if {value} {better} {best} or ({value} != {value} and {best} == {best}):")
        em.emit(f"    {best} = {value}")
        em.emit(f"    {where} = {r}")
    return [where]


def _arg_reads(eqn):
    return eqn.inputs[0].aval.shape[eqn.params["axis"]]


@elemental(reduce.argmax_p, reads=_arg_reads)
def _argmax(em, eqn, index):
    return _arg(em, eqn, index, ">")


@elemental(reduce.argmin_p, reads=_arg_reads)
def _argmin(em, eqn, index):
    return _arg(em, eqn, index, "<")


def _along(em, aval, axis, reverse, body):
    """A loop nest over `aval` with `axis` in its place (backwards if `reverse`): body(index, previous
    index or None at the first element)."""
    names = index_names(em.depth, aval.ndim, "q")
    orders = [reverse and d == axis for d in range(aval.ndim)]
    with loops(em, names, aval.shape, orders):
        first = aval.shape[axis] - 1 if reverse else 0
        previous = list(names)
        previous[axis] = f"{names[axis]} + 1" if reverse else f"{names[axis]} - 1"
        em.emit(f"if {names[axis]} == {first}:")
        with em.block():
            body(names, None)
        em.emit("else:")
        with em.block():
            body(names, tuple(previous))


def _running(em, aval, reverse, first, step):
    """A 1-d scan with its running value in a local (not re-read from the output: no store-to-load
    chain through memory, no first-element test per iteration): `first(index)` gives the first
    element's value, `step(running, index)` the next one."""
    out = Buffer(em.allocate(aval))
    n = aval.shape[0]
    if n == 0:
        return out
    start, rest = (n - 1, f"range({n - 2}, -1, -1)") if reverse else (0, f"range(1, {n})")
    running = em.fresh("acc")
    em.emit(f"{running} = {first((str(start),))}")
    em.emit(out.write((str(start),), running))
    q = em.fresh("q")
    with em.block(f"for {q} in {rest}:"):
        em.emit(f"{running} = {step(running, (q,))}")
        em.emit(out.write((q,), running))
    return out


@opaque(scan.scan_p)
def _scan(em, eqn):

    (x,) = eqn.inputs
    op, axis, reverse = eqn.params["op"], eqn.params["axis"], eqn.params["reverse"]
    aval = eqn.outputs[0].aval
    if aval.ndim == 1:
        start = identity(op, aval.dtype)
        return [_running(em, aval, reverse, lambda index: combine(op, start, em.read(x, index), aval.dtype),
                         lambda running, index: combine(op, running, em.read(x, index), aval.dtype))]
    out = Buffer(em.allocate(aval))

    def body(index, previous):
        value = em.read(x, index)
        start = identity(op, aval.dtype) if previous is None else out.read(previous)
        em.emit(out.write(index, combine(op, start, value, aval.dtype)))

    _along(em, aval, axis, reverse, body)
    return [out]


@opaque(scan.linear_recurrence_p)
def _linear_recurrence(em, eqn):

    a, b = eqn.inputs
    axis, reverse = eqn.params["axis"], eqn.params["reverse"]

    zero = scalar.constant(0, eqn.outputs[0].aval.dtype)

    def step(state, index):  # a_k s_(k-1) is 0 where either is 0 (a restart after an inf state: not NaN)
        gain = em.let(em.read(a, index))
        return f"({gain} * {state} if {gain} != 0 and {state} != 0 else {zero}) + {em.read(b, index)}"

    if eqn.outputs[0].aval.ndim == 1:
        return [_running(em, eqn.outputs[0].aval, reverse, lambda index: em.read(b, index), step)]
    out = Buffer(em.allocate(eqn.outputs[0].aval))

    def body(index, previous):
        em.emit(out.write(index, em.read(b, index) if previous is None else step(out.read(previous), index)))

    _along(em, eqn.outputs[0].aval, axis, reverse, body)
    return [out]


@opaque(scan.matrix_recurrence_p)
def _matrix_recurrence(em, eqn):
    """s_k = A_k s_(k-1) + b_k along axis -2 of b: a small matrix-vector product per step."""
    a, b = eqn.inputs
    aval = eqn.outputs[0].aval
    axis, size = aval.ndim - 2, aval.shape[-1]
    out = Buffer(em.allocate(aval))

    def body(index, previous):
        acc = em.fresh("acc")
        em.emit(f"{acc} = {em.read(b, index)}")
        if previous is not None:
            column = em.fresh("r")
            with em.block(f"for {column} in range({size}):"):
                matrix = em.read(a, index + (column,))
                em.emit(f"{acc} = {acc} + {matrix} * {out.read(previous[:-1] + (column,))}")
        em.emit(out.write(index, acc))

    _along(em, aval, axis, eqn.params["reverse"], body)
    return [out]


def _kept_and_reduced(aval, axes, prefix, em):

    names = index_names(em.depth, aval.ndim, prefix)
    return names, [names[d] for d in range(aval.ndim) if d not in axes]


@opaque(reduce.product_others_p, supports=lambda eqn: plain_dtypes(eqn) and eqn.inputs[0].aval.dtype.kind == "f")
def _product_others(em, eqn):
    """Zero counting per reduced slice, as the NumPy backend: no zero -> prod / x; one zero -> the
    product of the others at the zero; more -> 0. Times the scale (inlined: a broadcast
    cotangent costs nothing), so a reduce's gradient is this one pass."""
    x, scale = eqn.inputs
    axes = eqn.params["axes"]
    aval = eqn.outputs[0].aval
    out = Buffer(em.allocate(aval))
    kept_axes = [d for d in range(aval.ndim) if d not in axes]
    outer = index_names(em.depth, aval.ndim, "p")
    inner = index_names(em.depth + 1, aval.ndim, "p")
    zero = scalar.constant(0, aval.dtype)
    with loops(em, [outer[d] for d in kept_axes], [aval.shape[d] for d in kept_axes]):
        at = [outer[d] if d in kept_axes else inner[d] for d in range(aval.ndim)]
        product, zeros = em.fresh("acc"), em.fresh("n")
        em.emit(f"{product} = {scalar.constant(1, aval.dtype)}")
        em.emit(f"{zeros} = 0")
        with loops(em, [inner[d] for d in axes], [aval.shape[d] for d in axes]):
            # selects, not branches: the product and the count then vectorise (reassoc)
            value = em.let(em.read(x, at))
            em.emit(f"{zeros} += 1 if {value} == 0 else 0")
            em.emit(f"{product} = {product} * ({value} if {value} != 0 else {scalar.constant(1, aval.dtype)})")
        # the zero count is tested once per slice, outside the loops, so that the common case is a
        # branch-free division that vectorises; it is bound by the divider, not by memory, so a long
        # one at the top level runs on threads
        with em.block(f"if {zeros} == 0:"):
            header = len(em.writer.lines)
            with loops(em, [inner[d] for d in axes], [aval.shape[d] for d in axes]):
                em.emit(f"{out.read(at)} = {em.read(scale, at)} * {product} / {em.read(x, at)}")
            if em.depth == 0 and not kept_axes and aval.size >= options.PARALLEL_MIN_WORK and options.parallel():
                em.run_on_threads(header)
        with em.block("else:"):
            with loops(em, [inner[d] for d in axes], [aval.shape[d] for d in axes]):
                value = em.let(em.read(x, at))
                others = f"({product} if {zeros} == 1 and {value} == 0 else {zero})"
                em.emit(f"{out.read(at)} = {em.read(scale, at)} * {others}")
    return [out]
