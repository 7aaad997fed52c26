"""Forward mode: jvp_program(program, wrt) -> program of (primals, tangents).

The new program takes the original inputs followed by one tangent per input
marked in `wrt`, and returns the original outputs followed by one tangent per
output. Tangents are propagated equation by equation with each primitive's jvp
rule; symbolic zeros are skipped and only materialised at the outputs.
"""
from __future__ import annotations

from ..core.errors import NonDifferentiableError
from ..core.ir import Program, walk
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
    def step(eqn, pairs):
        ins = [primal for primal, _ in pairs]
        outs = eqn.prim.bind(*ins, **eqn.params)
        out_list = outs if eqn.prim.multiple_results else [outs]
        tangents_in = [tangent for _, tangent in pairs]
        rule = None if all(is_zero(t) for t in tangents_in) else eqn.prim.rule("jvp")
        if rule is None or isinstance(rule, Marker):
            return [(out, Zero(var.aval)) for out, var in zip(out_list, eqn.outputs)]
        result = rule(tangents_in, ins, outs, **eqn.params)
        result = result if eqn.prim.multiple_results else [result]
        return [(out, tangent if is_float(var.aval.dtype) else Zero(var.aval))
                for out, tangent, var in zip(out_list, result, eqn.outputs)]

    pairs = [(primal, Zero(var.aval) if tangent is None else tangent)
             for var, primal, tangent in zip(program.inputs, primals, tangents)]
    outputs = walk(program, pairs, step, literal=lambda literal: (literal.value, Zero(literal.aval)))
    return [primal for primal, _ in outputs] + [instantiate(tangent, atom.aval)
                                                 for (_, tangent), atom in zip(outputs, program.outputs)]
