"""The `kernel` primitive on the NumPy backend: a vectorised interpreter of the scalar IR.

Every equation of the scalar IR runs as one NumPy operation over all the elements at once
(arguments keep their broadcast shapes while the code is straight-line). Control flow is masked,
never `where` of both sides:
  * cond: the elements are partitioned by branch index; each branch runs only on its own elements
    (gathered, then scattered back), so an expensive branch taken by 10% of the elements costs 10%;
  * while: the loop keeps running on the elements whose condition holds, dropping the others as
    they finish, until every element is done (each element does its own number of iterations).
A call may run on a faster engine instead, chosen above the backends: `ACCELERATORS[kernel_p]`
(kernel, name, size) -> a runner (args, shape) -> outputs (None where it cannot run), or None. adarray.api.tiering
installs it: with Numba installed, large calls run compiled fused loops (backends/numba/kernels.py), as the
kernel backend says (auto: Numba from NUMBA_MIN_SIZE elements on, numpy or numba).
"""
from __future__ import annotations

import numpy as np

from ...control.cond import cond_p
from ...control.while_loop import while_p
from ...core.ir import Literal, dead_after
from ...kernels.primitive import kernel_p
from .registry import ACCELERATORS, IMPLS, implementation


def run_kernel(*args, kernel, name):
    """Apply the scalar program `kernel` to the broadcast of `args`; one array per output."""
    args = [np.asarray(a) for a in args]
    shape = np.broadcast_shapes(*[a.shape for a in args]) if args else ()
    size = int(np.prod(shape, dtype=np.int64))
    accelerate = ACCELERATORS.get(kernel_p)
    compiled = None if accelerate is None else accelerate(kernel, name, size)
    with np.errstate(all="ignore"):
        outs = compiled(args, shape) if compiled is not None else None
        if outs is not None:
            return outs
        outs = interpret(kernel, args)
    return [_shaped(o, shape, a.dtype) for o, a in zip(outs, kernel.out_avals)]


def _shaped(value, shape, dtype):
    value = np.asarray(value)
    if value.dtype != dtype:
        value = value.astype(dtype)
    if value.shape != tuple(shape):
        value = np.broadcast_to(value, shape)
    return value


def interpret(program, args):
    """Run a scalar program on arrays of elements (any broadcast-compatible shapes)."""
    env = {id(v): a for v, a in zip(program.inputs, args)}

    def read(atom):
        return atom.value if isinstance(atom, Literal) else env[id(atom)]

    for eqn, release in zip(program.eqns, _releases(program)):
        ins = [read(a) for a in eqn.inputs]
        if eqn.prim is cond_p:
            outs = _cond(ins[0], ins[1:], eqn.params["branches"])
        elif eqn.prim is while_p:
            outs = _while(ins, **eqn.params)
        else:
            outs = implementation(eqn.prim)(*ins, **eqn.params)
        for var, value in zip(eqn.outputs, outs if eqn.prim.multiple_results else [outs]):
            env[id(var)] = value
        for key in release:  # arrays of elements are dropped after their last use, as in the interpreter
            del env[key]
    return [read(a) for a in program.outputs]


_RELEASES: dict = {}


def _releases(program) -> list[tuple[int, ...]]:
    """For each equation, the ids of the variables dead after it (computed once per program)."""
    cached = _RELEASES.get(program)
    if cached is None:
        cached = _RELEASES[program] = [tuple(id(v) for v in dead) for dead in dead_after(program)]
    return cached


def _used_inputs(program):
    used = {id(a) for e in program.eqns for a in e.inputs} | {id(a) for a in program.outputs}
    return [id(v) in used for v in program.inputs]


class _Gather:
    """Picks the elements `selected` (flat indices into `shape`) out of arrays broadcast to `shape`."""

    def __init__(self, selected, shape):
        self.selected, self.shape, self._unravelled = selected, shape, None

    def __call__(self, value):
        value = np.asarray(value)
        if value.size == 1:
            return value.reshape(())
        if value.shape == self.shape:
            return value.reshape(-1)[self.selected]
        if self._unravelled is None:
            self._unravelled = np.unravel_index(self.selected, self.shape)
        return np.broadcast_to(value, self.shape)[self._unravelled]


def _cond(index, operands, branches):
    index = np.clip(np.asarray(index), 0, len(branches) - 1)
    if index.size == 1 or np.all(index == index.reshape(-1)[0]):  # every element takes one branch
        return interpret(branches[int(index.reshape(-1)[0]) if index.size else 0], operands)
    shape = np.broadcast_shapes(index.shape, *[np.shape(o) for o in operands])
    flat = np.broadcast_to(index, shape).reshape(-1)
    out_avals = branches[0].out_avals
    results = [np.empty(flat.shape, a.dtype) for a in out_avals]
    for k, branch in enumerate(branches):
        selected = np.flatnonzero(flat == k)
        if selected.size == 0:
            continue
        gather = _Gather(selected, shape)
        ins = [gather(o) if used else None for o, used in zip(operands, _used_inputs(branch))]
        for result, value in zip(results, interpret(branch, ins)):
            result[selected] = value
    return [r.reshape(shape) for r in results]


def _while(args, *, cond, body, num_consts, checkpoint):
    shape = np.broadcast_shapes(*[np.shape(a) for a in args])
    size = int(np.prod(shape, dtype=np.int64))

    def flat(value):
        value = np.asarray(value)
        return value.reshape(()) if value.size == 1 else np.broadcast_to(value, shape).reshape(-1)

    consts = [flat(a) for a in args[:num_consts]]
    state = [flat(a) for a in args[num_consts:]]
    results = [np.empty(size, a.dtype) for a in body.out_avals]
    active = np.arange(size)
    while active.size:
        running = np.broadcast_to(np.asarray(interpret(cond, consts + state)[0], bool), active.shape)
        if not running.all():
            finished = ~running
            for result, value in zip(results, state):
                result[active[finished]] = value[finished] if np.ndim(value) else value
            active = active[running]
            consts = [c[running] if np.ndim(c) else c for c in consts]
            state = [s[running] if np.ndim(s) else s for s in state]
            if not active.size:
                break
        state = [np.broadcast_to(s, active.shape) if np.ndim(s) == 0 else s for s in interpret(body, consts + state)]
    return [r.reshape(shape) for r in results]


IMPLS[kernel_p] = run_kernel
