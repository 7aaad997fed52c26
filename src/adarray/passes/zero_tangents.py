"""with_zero_tangents: a derivative program specialised to some of its tangent inputs being zero.

The inputs at the given positions become symbolic zeros (`Zero`) and flow through the equations
that are linear in them, as the transformations' own zeros do: a product, quotient or contraction
with one is zero, a sum skips it, a move or a sum of it is zero. Any other equation gets them
materialised (zero-strided arrays, literal zeros in the program). This is the algebra of tangents,
x * 0 -> 0 where 0 is a zero *tangent*: the simplifier may not apply it to a program's values (inf
* 0 is NaN), so a pass that knows some inputs are zero tangents (passes/one_hot_loops.py) uses this.

    >>> with_zero_tangents(jvp_program_of_sin, [1])  # doctest: +SKIP   (x, t) -> (sin x, 0.0)
"""
from __future__ import annotations

from ..core.ir import Program, walk
from ..core.primitive import Zero, is_zero
from ..primitives import elementwise as ew
from ..primitives import indexing, linalg, reduce, scan, structural
from ..primitives.rules import add_tangents, aval_of_value, instantiate
from ..tracing import trace_program

# Linear in their first operand: zero when it is.
_LINEAR_IN_FIRST = frozenset({ew.neg_p, ew.convert_p, ew.div_p, ew.safe_mul_p, structural.reshape_p,
                              structural.transpose_p, structural.broadcast_in_dim_p, structural.slice_p,
                              structural.unslice_p, indexing.gather_p})


def with_zero_tangents(program: Program, positions) -> Program:
    """`program` with its inputs at `positions` read as zero tangents (still inputs, now unused)."""
    positions = set(positions)

    def step(eqn, ins):
        zeros = [is_zero(v) for v in ins]
        if any(zeros) and len(eqn.outputs) == 1:
            result = _linear_zero(eqn, ins, zeros)
            if result is not None:
                return [result]
        outs = eqn.prim.bind(*[instantiate(v) for v in ins], **eqn.params)
        return outs if eqn.prim.multiple_results else [outs]

    def run(*args):
        values = [Zero(var.aval) if k in positions else arg for k, (var, arg) in enumerate(zip(program.inputs, args))]
        outputs = walk(program, values, step)
        return [instantiate(value, atom.aval) for value, atom in zip(outputs, program.outputs)]

    result, _, _ = trace_program(run, list(program.in_avals), "zero tangents")
    return result


def _linear_zero(eqn, ins, zeros):
    """The output of an equation linear in its zero operands, or None (materialise them)."""
    prim, aval = eqn.prim, eqn.outputs[0].aval
    if prim in (ew.mul_p, linalg.einsum_p) or (prim in _LINEAR_IN_FIRST and zeros[0]):
        return Zero(aval)
    if prim in (reduce.reduce_p, scan.scan_p) and eqn.params["op"] == "add":
        return Zero(aval)
    if prim is ew.add_p:
        return add_tangents(*ins)
    if prim is ew.sub_p:
        return ins[0] if zeros[1] else ew.neg(ins[1])
    if prim is ew.select_p and zeros[1] and zeros[2]:
        return Zero(aval_of_value(eqn.outputs[0]))
    return None
