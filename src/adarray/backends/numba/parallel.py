"""The general scan and reduce (a user operator, adarray/parallel) on the Numba backend: one native
loop applying the operator program inline, element after element (n - 1 applications, against the
NumPy backend's log2(n) batched passes over whole arrays, which exist to amortise the interpreter).
The results associate differently from the NumPy backend's tree, so they agree to rounding (the
operator is declared associative)."""
from __future__ import annotations

from ...parallel.general import general_reduce_p, general_scan_p
from . import scalar
from .control import nested, row_source, swap
from .table import opaque
from .writer import Buffer, Local


def _element_storage(em, avals):
    """(current, next) storage per leaf of an element: locals for rank 0, two arrays otherwise."""
    current, following = [], []
    for aval in avals:
        if aval.ndim == 0:
            current.append(Local(em.fresh("c")))
            following.append(Local(em.fresh("c")))
        else:
            current.append(Buffer(em.allocate(aval, "c")))
            following.append(Buffer(em.allocate(aval, "c")))
    return current, following


@opaque(general_scan_p, materialized=lambda eqn: range(len(eqn.inputs)))
def _general_scan(em, eqn):
    """y_0 = x_0, y_t = op(y_(t-1), x_t), written in place into the outputs."""
    op = eqn.params["op"]
    n = eqn.inputs[0].aval.shape[0]
    ys = [Buffer(em.allocate(var.aval, "y")) for var in eqn.outputs]
    if n == 0:
        return ys
    for x, y in zip(eqn.inputs, ys):
        first = row_source(em, x, "0")
        em.copy_from(first, Buffer(y.name, ("0",)), x.aval.shape[1:])
    t = em.fresh("t")
    with em.block(f"for {t} in range(1, {n}):"):
        previous = [Buffer(y.name, (f"{t} - 1",)) for y in ys]
        rows = [row_source(em, x, t) for x in eqn.inputs]
        nested(em, op, previous + rows, [Buffer(y.name, (t,)) for y in ys])
    return ys


@opaque(general_reduce_p, materialized=lambda eqn: range(len(eqn.inputs)))
def _general_reduce(em, eqn):
    """acc = x_0, then acc = op(acc, x_t); the identity when there is no element."""
    op, identity = eqn.params["op"], eqn.params["identity"]
    n = eqn.inputs[0].aval.shape[0]
    avals = [var.aval for var in eqn.outputs]
    current, following = _element_storage(em, avals)
    if n == 0:
        for store, atom, aval in zip(current, identity.outputs, avals):
            if isinstance(store, Local):
                em.emit(f"{store.text} = {scalar.constant(atom.value.reshape(-1)[0], aval.dtype)}"
                        if atom.uniform is not None else f"{store.text} = {em.read(atom, ())}")
            else:
                em.copy(atom, store)
        return current
    for store, x in zip(current, eqn.inputs):
        first = row_source(em, x, "0")
        if isinstance(store, Local):
            em.emit(f"{store.text} = {first.read(())}")
        else:
            em.copy_from(first, store, x.aval.shape[1:])
    t = em.fresh("t")
    with em.block(f"for {t} in range(1, {n}):"):
        rows = [row_source(em, x, t) for x in eqn.inputs]
        nested(em, op, current + rows, following)
        swap(em, current, following)
    return current
