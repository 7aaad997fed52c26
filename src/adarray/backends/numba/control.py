"""Control flow and nested programs on the Numba backend: one native loop per fold or while.

* fold: `for t in range(length)`, the body emitted inline (its own fusion plan). A rank-0 carry is
  a local variable; an array carry lives in two arrays allocated once (current and next) that are
  swapped after each step, and the body writes the next carry straight into its array. The xs are
  read in place (`xs[t, ...]`), the ys are written in place (`ys[t, ...] = ...`): a step allocates
  nothing, whatever the body's arrays (allocated once before the outermost loop).
* while: `while True:` with the condition program, then the body, as fold.
* cond: if/elif over the clamped index, each branch writing the same outputs.
* custom_jvp_call, custom_vjp_call, checkpoint_call: their `fun` is inlined into the caller before
  the fusion plan (passes/inline_calls.py), so it fuses with its surroundings.
* kernel (a scalar kernel applied elementwise): elemental; its scalar program is written inline
  per element, branches as if/else and loops as while loops (mixed-mode derivatives are kernel
  calls too, so they compile the same way).
"""
from __future__ import annotations

from ...control.cond import cond_p
from ...control.loops import fold_p
from ...control.while_loop import while_p
from ...core.ir import Eqn, Literal
from ...kernels.primitive import kernel_p
from ...passes.inline_calls import CALLS
from . import scalar
from .codegen import ProgramEmitter
from .elementwise import TRANSCENDENTAL_COST
from .table import elemental, opaque
from .writer import Buffer, Local


@opaque(*CALLS, materialized=lambda eqn: range(len(eqn.inputs)), programs=lambda eqn: [eqn.params["fun"]])
def _call(em, eqn):
    """Only reached where a call was not inlined beforehand (runtime.py inlines every program's calls)."""
    return ProgramEmitter(em.writer, eqn.params["fun"], [em.source(a) for a in eqn.inputs], depth=em.depth,
                          indent=em.indent, silent=em.silent).run()


def carry_storage(em, init_atoms, avals):
    """(current, next) storage per carry: locals for rank 0, two arrays otherwise."""
    current, following = [], []
    for atom, aval in zip(init_atoms, avals):
        if aval.ndim == 0:
            name = em.fresh("c")
            em.emit(f"{name} = {_typed(em.read(atom, ()), aval)}")
            current.append(Local(name))
            following.append(Local(em.fresh("c")))
        else:
            buffer = Buffer(em.allocate(aval, "c"))
            em.copy(atom, buffer)
            current.append(buffer)
            following.append(Buffer(em.allocate(aval, "c")))
    return current, following


def _typed(text, aval) -> str:
    return f"{scalar.type_name(aval.dtype)}({text})"


def swap(em, current, following) -> None:

    for now, after in zip(current, following):
        if isinstance(now, Local):
            em.emit(f"{now.text} = {after.text}")
        else:
            em.emit(f"{now.name}, {after.name} = {after.name}, {now.name}")


def nested(em, program, inputs, targets=None):
    return ProgramEmitter(em.writer, program, inputs, depth=em.depth + 1, indent=em.indent, targets=targets,
                          silent=em.silent).run()


def row_source(em, atom, t):
    """The source of `atom[t]` (an xs leaf read in place)."""
    source = em.source(atom)
    if not isinstance(source, Buffer):
        source = Buffer(em.array(atom))
    return Buffer(source.name, source.prefix + (t,))


def _fold_materialized(eqn):
    num_consts, num_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    return [k for k in range(len(eqn.inputs)) if k < num_consts or k >= num_consts + num_carry]


@opaque(fold_p, materialized=_fold_materialized)
def _fold(em, eqn):

    body, length, reverse = eqn.params["body"], eqn.params["length"], eqn.params["reverse"]
    num_consts, num_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    consts = [em.source(a) for a in eqn.inputs[:num_consts]]
    init = eqn.inputs[num_consts:num_consts + num_carry]
    xs = eqn.inputs[num_consts + num_carry:]
    current, following = carry_storage(em, init, body.out_avals[:num_carry])
    ys = [Buffer(em.allocate(var.aval, "y")) for var in eqn.outputs[num_carry:]]
    if length == 0:
        return current + ys
    t = em.fresh("t")
    header = f"for {t} in range({length - 1}, -1, -1):" if reverse else f"for {t} in range({length}):"
    with em.block(header):
        rows = [row_source(em, x, t) for x in xs]
        nested(em, body, consts + current + rows, following + [Buffer(y.name, (t,)) for y in ys])
        swap(em, current, following)
    return current + ys


@opaque(while_p, materialized=lambda eqn: range(eqn.params["num_consts"]))
def _while(em, eqn):
    cond, body, num_consts = eqn.params["cond"], eqn.params["body"], eqn.params["num_consts"]
    consts = [em.source(a) for a in eqn.inputs[:num_consts]]
    current, following = carry_storage(em, eqn.inputs[num_consts:], body.out_avals)
    with em.block("while True:"):
        (test,) = nested(em, cond, consts + current)
        em.emit(f"if not {test.read(())}:")
        em.emit("    break")
        nested(em, body, consts + current, following)
        swap(em, current, following)
    return current


@opaque(cond_p, materialized=lambda eqn: range(1, len(eqn.inputs)))
def _cond(em, eqn):

    branches = eqn.params["branches"]
    operands = [em.source(a) for a in eqn.inputs[1:]]
    outputs = [Local(em.fresh("o")) if v.aval.ndim == 0 else Buffer(em.allocate(v.aval, "o")) for v in eqn.outputs]
    index = em.fresh("k")
    em.emit(f"{index} = min(max({em.read(eqn.inputs[0], ())}, 0), {len(branches) - 1})")
    for k, branch in enumerate(branches):
        header = "else:" if k == len(branches) - 1 and k > 0 else f"{'if' if k == 0 else 'elif'} {index} == {k}:"
        with em.block(header):
            nested(em, branch, operands, outputs)
    return outputs


def _kernel_cost(eqn) -> float:
    total = 0.0
    for inner in eqn.params["kernel"].eqns:
        if inner.prim in scalar.TRANSCENDENTAL:
            total += TRANSCENDENTAL_COST
        elif inner.prim in (cond_p, while_p):
            total += 10.0 + sum(_kernel_cost_of(p) for p in (inner.params.get("branches") or (inner.params["body"],)))
        else:
            total += 1.0
    return total


def _kernel_cost_of(program) -> float:
    return _kernel_cost(Eqn(kernel_p, (), {"kernel": program}, ()))


def _kernel_broadcast(eqn, position) -> bool:
    return eqn.outputs[0].aval.size > eqn.inputs[position].aval.size


@elemental(kernel_p, cost=_kernel_cost, duplicates=_kernel_broadcast)
def _kernel(em, eqn, index):

    shape = eqn.outputs[0].aval.shape
    arguments = []
    for atom in eqn.inputs:
        lead = len(shape) - atom.aval.ndim
        at = [index[lead + d] if n == shape[lead + d] else "0" for d, n in enumerate(atom.aval.shape)]
        value = em.read(atom, at)
        arguments.append(Local(value if isinstance(atom, Literal) else em.let(value)))
    return [source.read(()) for source in nested(em, eqn.params["kernel"], arguments)]
