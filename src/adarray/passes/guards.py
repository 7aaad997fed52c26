"""guard_square_roots: a pass run before differentiation.

sqrt(s) (or s ** 0.5) of a sum of squares s (x*x or x**2 summed or added,
optionally scaled by a positive constant; x @ x) has an infinite derivative at s = 0 that, multiplied by the zero
partials of the squares, gives NaN. The pass rewrites it into the same value
with a documented subgradient of 0 at s = 0 (the "double where"):

    sqrt(s)  ->  select(s == 0, 0, sqrt(select(s == 0, 1, s)))

so anp.linalg.norm(x), sqrt(sum(x**2)) and std of constant data have gradient 0
at zero, where JAX and PyTorch give NaN (jax#21723, jax#4177, autograd#151).
"""
from __future__ import annotations

from ..core.ir import Literal, Program, Var, walk
from ..core.types import is_real_float
from ..primitives import elementwise as ew
from ..tracing import trace_program


def _is_sum_of_squares(atom, producers) -> bool:
    """Squares, and what sums, positive multiples, broadcasts and reshapes make of them (x @ x too)."""
    eqn = producers.get(id(atom)) if isinstance(atom, Var) else None
    if eqn is None:
        return False
    name, inputs = eqn.prim.name, eqn.inputs
    if name in ("mul", "div") and isinstance(inputs[1], Literal) and inputs[1].uniform is not None:
        return inputs[1].uniform > 0 and _is_sum_of_squares(inputs[0], producers)
    if name == "mul" and isinstance(inputs[0], Literal) and inputs[0].uniform is not None:
        return inputs[0].uniform > 0 and _is_sum_of_squares(inputs[1], producers)
    if name == "add":
        return all(_is_sum_of_squares(a, producers) for a in inputs)
    if (name == "reduce" and eqn.params["op"] == "add") or name in ("reshape", "broadcast_in_dim"):
        return _is_sum_of_squares(inputs[0], producers)
    if name == "einsum":  # x . x: both operands the same, every index summed
        return inputs[0] is inputs[1] and eqn.params["spec"].replace(" ", "") in ("i,i->", "ij,ij->")
    return _is_square(atom, producers)


def _is_square_root(eqn) -> bool:
    if eqn.prim.name == "sqrt":
        return True
    exponent = eqn.inputs[1] if eqn.prim.name == "pow" else None
    return isinstance(exponent, Literal) and exponent.uniform == 0.5


def _is_square(atom, producers) -> bool:
    eqn = producers.get(id(atom)) if isinstance(atom, Var) else None
    if eqn is None:
        return False
    if eqn.prim.name == "integer_pow":
        return eqn.params["n"] == 2
    return eqn.prim.name == "mul" and eqn.inputs[0] is eqn.inputs[1]


def guard_square_roots(program: Program) -> Program:
    """The program with every sqrt of a sum of squares guarded at zero (values unchanged)."""
    producers = {id(v): eqn for eqn in program.eqns for v in eqn.outputs}
    guarded = [eqn for eqn in program.eqns if _is_square_root(eqn) and is_real_float(eqn.inputs[0].aval.dtype)
               and _is_sum_of_squares(eqn.inputs[0], producers)]  # complex squares are not >= 0
    if not guarded:
        return program
    chosen = {id(eqn) for eqn in guarded}

    def step(eqn, ins):
        if id(eqn) in chosen:
            s = ins[0]
            at_zero = ew.eq(s, ew.zeros_like(s))
            root = ew.sqrt(ew.select(at_zero, ew.full_like(s, 1.0), s))
            return [ew.select(at_zero, ew.zeros_like(s), root)]
        outs = eqn.prim.bind(*ins, **eqn.params)
        return outs if eqn.prim.multiple_results else [outs]

    def run(*args):
        return walk(program, args, step)

    result, _, _ = trace_program(run, list(program.in_avals), "guarded")
    return result
