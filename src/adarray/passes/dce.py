"""Dead-code elimination: drop equations none of whose outputs is used (all primitives are pure),
and let a primitive with a `prune` rule drop the outputs of an equation that nobody reads."""
from __future__ import annotations

from ..core.ir import Program, Var


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
