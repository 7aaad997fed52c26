"""Forward mode: jvp_program(program, wrt) -> program of (primals, tangents).

The new program takes the original inputs followed by one tangent per input
marked in `wrt`, and returns the original outputs followed by one tangent per
output. Tangents are propagated equation by equation with each primitive's jvp
rule; symbolic zeros are skipped and only materialised at the outputs.
"""
from __future__ import annotations

from ..core.errors import NonDifferentiableError
from ..core.ir import Literal, Program
from ..core.primitive import Marker, Zero, is_zero
from ..core.types import is_float
from ..passes.guards import guard_square_roots
from ..primitives.rules import instantiate
from ..tracing import trace_program


def jvp_program(program: Program, wrt) -> Program:
    """Forward-mode derivative of `program` with respect to the inputs flagged in `wrt`."""
    wrt = tuple(bool(w) for w in wrt)
    for var, flag in zip(program.inputs, wrt):
        if flag and not is_float(var.aval.dtype):
            raise NonDifferentiableError(f"cannot differentiate with respect to a {var.aval} input")
    tangent_avals = [v.aval for v, w in zip(program.inputs, wrt) if w]
    program = guard_square_roots(program)

    def forward(*args):
        primals, tangents = args[: len(program.inputs)], iter(args[len(program.inputs):])
        return propagate(program, primals, [next(tangents) if w else None for w in wrt])

    new_program, _, _ = trace_program(forward, list(program.in_avals) + tangent_avals, "jvp")
    return new_program


def propagate(program: Program, primals, tangents):
    """Bind `program`'s equations on `primals`, carrying tangents (None or Zero = zero)."""
    env, tangent_env = {}, {}
    for var, value, tangent in zip(program.inputs, primals, tangents):
        env[id(var)] = value
        if tangent is not None and not is_zero(tangent):
            tangent_env[id(var)] = tangent

    def read(atom):
        return atom.value if isinstance(atom, Literal) else env[id(atom)]

    def read_tangent(atom):
        if isinstance(atom, Literal):
            return Zero(atom.aval)
        return tangent_env.get(id(atom), Zero(atom.aval))

    for eqn in program.eqns:
        ins = [read(a) for a in eqn.inputs]
        outs = eqn.prim.bind(*ins, **eqn.params)
        out_list = outs if eqn.prim.multiple_results else [outs]
        for var, value in zip(eqn.outputs, out_list):
            env[id(var)] = value
        tangents_in = [read_tangent(a) for a in eqn.inputs]
        if all(is_zero(t) for t in tangents_in):
            continue
        rule = eqn.prim.rule("jvp")
        if isinstance(rule, Marker):
            continue
        result = rule(tangents_in, ins, outs, **eqn.params)
        for var, tangent in zip(eqn.outputs, result if eqn.prim.multiple_results else [result]):
            if not is_zero(tangent) and is_float(var.aval.dtype):
                tangent_env[id(var)] = tangent
    out_primals = [read(a) for a in program.outputs]
    out_tangents = [instantiate(read_tangent(a), a.aval) for a in program.outputs]
    return out_primals + out_tangents
