"""argsort and searchsorted on the Numba backend: calls of the native kernels in indexlib.py.

argsort sorts each row along its axis (copied into a scratch row allocated once, so a loop body
allocates nothing per iteration): a counting sort when the keys are integers of a short range
(reduce_by_index's slots), a stable merge sort otherwise, as the NumPy backend's kind="stable".
searchsorted runs one binary search per value in its own row (rows are views of whole arrays).
"""
from __future__ import annotations

import contextlib

import numpy as np

from ...core.types import Aval
from ...primitives import sort
from .table import opaque
from .writer import Buffer, index_names


def _argsort_kernel(dtype) -> str:
    """Counting sort for keys that widen to int64 exactly and in order (not uint64)."""
    dtype = np.dtype(dtype)
    counted = dtype.kind in "bi" or (dtype.kind == "u" and dtype.itemsize < 8)
    return "_ix.argsort_integers" if counted else "_ix.argsort_any"


@contextlib.contextmanager
def _outer_loops(em, shape, skip, letter):
    """Loops over every axis of `shape` but `skip`; yields the index with None at `skip`."""
    names = index_names(em.depth, len(shape), letter)
    with contextlib.ExitStack() as stack:
        for d, n in enumerate(shape):
            if d != skip:
                stack.enter_context(em.block(f"for {names[d]} in range({n}):"))
        yield [None if d == skip else names[d] for d in range(len(shape))]


@opaque(sort.argsort_p, materialized=lambda eqn: [0])
def _argsort(em, eqn):

    (x,) = eqn.inputs
    axis, aval = eqn.params["axis"], eqn.outputs[0].aval
    kernel = _argsort_kernel(x.aval.dtype)
    out = em.allocate(aval, "o")
    if aval.ndim == 1:
        em.emit(f"{kernel}({em.array(x)}, {out})")
        return [Buffer(out)]
    n = aval.shape[axis]
    row = em.allocate(Aval((n,), x.aval.dtype), "row")
    order = em.allocate(Aval((n,), np.int64), "order")
    k = em.fresh("k")
    with _outer_loops(em, aval.shape, axis, "a") as index:
        at = [k if i is None else i for i in index]
        with em.block(f"for {k} in range({n}):"):
            em.emit(f"{row}[{k}] = {em.read(x, at)}")
        em.emit(f"{kernel}({row}, {order})")
        with em.block(f"for {k} in range({n}):"):
            em.emit(f"{out}[{', '.join(at)}] = {order}[{k}]")
    return [Buffer(out)]


@opaque(sort.searchsorted_p, materialized=lambda eqn: [0, 1])
def _searchsorted(em, eqn):

    sorted_seq, values = (em.array(atom) for atom in eqn.inputs)
    aval = eqn.outputs[0].aval
    right = eqn.params["side"] == "right"
    out = em.allocate(aval, "o")
    if aval.ndim == 1:
        em.emit(f"_ix.searchsorted({sorted_seq}, {values}, {out}, {right})")
        return [Buffer(out)]
    with _outer_loops(em, aval.shape, aval.ndim - 1, "a") as index:
        batch = ", ".join(index[:-1])
        em.emit(f"_ix.searchsorted({sorted_seq}[{batch}], {values}[{batch}], {out}[{batch}], {right})")
    return [Buffer(out)]
