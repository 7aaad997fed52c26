"""Partial evaluation: split a program into the part computable from its first
inputs (known now) and the rest (run later), as `vjp` needs to run the forward
sweep once and the backward sweep on demand.
"""
from __future__ import annotations

from ..core.ir import Literal, Program, Var


def split_program(program: Program, num_known: int):
    """Split `program` into (known, unknown).

    known:   first `num_known` inputs -> (outputs computable from them, residuals)
    unknown: (residuals, remaining inputs) -> the other outputs
    The outputs' positions are given by `known_outputs`, a list of booleans.
    Returns (known, unknown, known_outputs).
    """
    known_vars = {id(v) for v in program.inputs[:num_known]}

    def is_known(atom) -> bool:
        return isinstance(atom, Literal) or id(atom) in known_vars

    known_eqns, unknown_eqns = [], []
    for eqn in program.eqns:
        if all(is_known(a) for a in eqn.inputs):
            known_eqns.append(eqn)
            known_vars.update(id(v) for v in eqn.outputs)
        else:
            unknown_eqns.append(eqn)
    known_outputs = [is_known(a) for a in program.outputs]
    residuals, seen = [], set()
    for atom in [a for eqn in unknown_eqns for a in eqn.inputs] + [
        a for a, k in zip(program.outputs, known_outputs) if not k
    ]:
        if isinstance(atom, Var) and id(atom) in known_vars and id(atom) not in seen:
            seen.add(id(atom))
            residuals.append(atom)
    known = Program(
        program.inputs[:num_known],
        tuple(known_eqns),
        tuple(a for a, k in zip(program.outputs, known_outputs) if k) + tuple(residuals),
    )
    unknown = Program(
        tuple(residuals) + program.inputs[num_known:],
        tuple(unknown_eqns),
        tuple(a for a, k in zip(program.outputs, known_outputs) if not k),
    )
    return known, unknown, known_outputs
