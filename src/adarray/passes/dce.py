"""Dead-code elimination: drop equations none of whose outputs is used (all primitives are pure),
and let a primitive with a `prune` rule drop the outputs of an equation that nobody reads."""
from __future__ import annotations

from ..core.ir import Eqn, Program, Var


def eliminate_dead_code(program: Program) -> Program:
    live = {id(a) for a in program.outputs if isinstance(a, Var)}
    kept = []
    for eqn in reversed(program.eqns):
        used = [id(v) in live for v in eqn.outputs]
        if not any(used):
            continue
        if not all(used) and eqn.prim.prune is not None:
            eqn = eqn.prim.prune(eqn, used)
        kept.append(eqn)
        live.update(id(a) for a in eqn.inputs if isinstance(a, Var))
    return Program(program.inputs, tuple(reversed(kept)), program.outputs)


def prune_nested(eqn: Eqn, used, param: str) -> Eqn:
    """`eqn` computing only its outputs flagged in `used`, for a primitive whose outputs are those of
    the nested program(s) in `params[param]` (a kernel, every branch of a cond): each nested program
    loses the other outputs and the code only they needed. A ready-made `prune` rule."""
    def keep(program: Program) -> Program:
        outputs = tuple(o for o, u in zip(program.outputs, used) if u)
        return eliminate_dead_code(Program(program.inputs, program.eqns, outputs))

    nested = eqn.params[param]
    nested = keep(nested) if isinstance(nested, Program) else tuple(keep(p) for p in nested)
    return Eqn(eqn.prim, eqn.inputs, {**eqn.params, param: nested}, tuple(v for v, u in zip(eqn.outputs, used) if u))
