"""Reverse mode: vjp_program(program, wrt) -> program of (primals, output cotangents).

A forward sweep re-binds the equations (keeping every value the backward sweep
reads, which is whatever the rules reference; a primitive with a
`forward_with_residuals` method, such as a loop, computes its outputs and its
own residuals, e.g. its tape, in one go), then a backward sweep visits the
equations in reverse and calls each primitive's vjp rule, accumulating
cotangents. Equations that do not depend on a differentiated input, or whose
output cotangents are all symbolic zeros, are skipped.

Structural zeros (primitives/rules.py): a cotangent that the program's structure proves zero in
places, such as the branch a select does not take, is `Masked`; through an elementwise equation the
mask stays on its input cotangents (the rule multiplies the unmasked value by the partials, and the
untaken branch's infinite partials are masked out afterwards), anywhere else it is materialised as a
select. Products with partial derivatives are IEEE otherwise: 0 * inf = NaN.
"""
from __future__ import annotations

from ..core.errors import NonDifferentiableError
from ..core.ir import Program, walk
from ..core.primitive import Marker, Zero, is_zero
from ..core.types import is_float
from ..passes.guards import guard_square_roots
from ..primitives.rules import POINTWISE_VJP, Masked, add_tangents, instantiate, masked
from ..tracing import trace_program


def vjp_program(program: Program, wrt, seeds=None) -> Program:
    """Reverse-mode derivative of `program` with respect to the inputs flagged in `wrt`.

    Inputs: the original inputs, then one cotangent per output; or, if `seeds`
    is given (one constant array or None per output, as `grad` seeds its
    output with 1), only the original inputs.
    Outputs: the original outputs, then one cotangent per flagged input.
    """
    wrt = tuple(bool(w) for w in wrt)
    for var, flag in zip(program.inputs, wrt):
        if flag and not is_float(var.aval.dtype):
            raise NonDifferentiableError(f"cannot differentiate with respect to a {var.aval} input")
    program = guard_square_roots(program)
    n = len(program.inputs)
    cotangent_avals = [] if seeds is not None else list(program.out_avals)

    def sweep(*args):
        primals = args[:n]
        if seeds is not None:
            cotangents = [Zero(a) if s is None else s for s, a in zip(seeds, program.out_avals)]
        else:
            cotangents = list(args[n:])
        outputs, input_cotangents = backpropagate(program, primals, wrt, cotangents)
        return outputs + input_cotangents

    new_program, _, _ = trace_program(sweep, list(program.in_avals) + cotangent_avals, "vjp")
    return new_program


def backpropagate(program: Program, primals, wrt, output_cotangents):
    """Forward sweep on `primals`, then the backward sweep from `output_cotangents`."""
    tape = []

    def forward(eqn, pairs):
        """Values carry whether they depend on a differentiated input (are active)."""
        ins, needs = [value for value, _ in pairs], tuple(active for _, active in pairs)
        residuals = None
        if any(needs) and eqn.prim.forward_with_residuals is not None:
            # Loops decide themselves what the backward sweep keeps (their tape, checkpoints).
            outs, residuals = eqn.prim.forward_with_residuals(*ins, **eqn.params)
        else:
            outs = eqn.prim.bind(*ins, **eqn.params)
        if any(needs):
            tape.append((eqn, ins, outs, residuals, needs))
        return [(value, any(needs) and is_float(var.aval.dtype))
                for value, var in zip(outs if eqn.prim.multiple_results else [outs], eqn.outputs)]

    outputs = walk(program, list(zip(primals, wrt)), forward, literal=lambda literal: (literal.value, False))

    cotangent_env = {}
    for atom, (_, active), cotangent in zip(program.outputs, outputs, output_cotangents):
        if active and not is_zero(cotangent):
            cotangent_env[id(atom)] = add_tangents(cotangent_env.get(id(atom), Zero(atom.aval)), cotangent)

    for eqn, ins, outs, residuals, needs in reversed(tape):
        cts = [cotangent_env.pop(id(v), Zero(v.aval)) for v in eqn.outputs]
        if all(is_zero(c) for c in cts):
            continue
        rule = eqn.prim.rule("vjp")
        if isinstance(rule, Marker):
            continue
        mask = _sinking_mask(eqn, cts)
        if mask is not None:  # the mask sinks through the pointwise rule
            cts = [c.value if isinstance(c, Masked) else c for c in cts]
        else:
            cts = [instantiate(c) if isinstance(c, Masked) else c for c in cts]
        extra = {} if residuals is None else {"residuals": residuals}
        results = rule(cts if eqn.prim.multiple_results else cts[0], ins, outs, needs, **extra, **eqn.params)
        if mask is not None:
            results = [masked(mask, ct) for ct in results]
        for atom, need, ct in zip(eqn.inputs, needs, results):
            if need and ct is not None and not is_zero(ct):
                cotangent_env[id(atom)] = add_tangents(cotangent_env.get(id(atom), Zero(atom.aval)), ct)

    input_cotangents = [
        instantiate(cotangent_env.get(id(var), Zero(var.aval)))
        for var, flag in zip(program.inputs, wrt) if flag
    ]
    return [value for value, _ in outputs], input_cotangents


def _sinking_mask(eqn, cotangents):
    """The mask of the equation's output cotangents if it can sink through the vjp rule, else None: every
    nonzero output cotangent is Masked by the same mask, and the rule is pointwise (an elementwise
    primitive, or one registered in POINTWISE_VJP, with every operand and output of one shape), so each
    input cotangent element depends only on the same output cotangent elements."""
    masks = {id(c.keep): c.keep for c in cotangents if isinstance(c, Masked)}
    if len(masks) != 1 or any(not is_zero(c) and not isinstance(c, Masked) for c in cotangents):
        return None
    if not (eqn.prim.elementwise or eqn.prim in POINTWISE_VJP):
        return None
    shapes = {a.aval.shape for a in eqn.inputs} | {v.aval.shape for v in eqn.outputs}
    return next(iter(masks.values())) if len(shapes) == 1 else None

