"""Shared helpers of the control-flow layer: tracing user bodies into closed programs."""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import Literal, Program
from ..core.pytree import leaf_paths, unflatten
from ..core.types import Aval, is_float
from ..passes import simplify
from ..primitives.rules import instantiate
from ..tracing import Tracer, eval_program, trace_program


def aval_of(value) -> Aval:
    if isinstance(value, Tracer):
        return value.aval
    array = np.asarray(value)
    return Aval(array.shape, np.float64 if isinstance(value, float) else array.dtype)


def trace_body(fn, in_tree, avals, name: str):
    """Trace fn(*pytree args) on leaves of `avals`: (program, out_tree, closed-over tracers)."""
    def flat(*leaves):
        return fn(*unflatten(in_tree, leaves))

    flat.__name__ = name
    return trace_program(flat, avals, name)


def with_consts(program: Program, own: list, everything: list) -> Program:
    """`program` (inputs: operands then its own closure) taking every closure in `everything` instead."""
    n_operands = len(program.inputs) - len(own)
    positions = [next(i for i, t in enumerate(everything) if t is c) for c in own]
    avals = list(program.in_avals[:n_operands]) + [t.aval for t in everything]

    def call(*args):
        consts = args[n_operands:]
        return eval_program(program, list(args[:n_operands]) + [consts[p] for p in positions])

    result, _, _ = trace_program(call, avals, "closure")
    return result


def unify_closures(traced) -> tuple[list[Program], list]:
    """Programs that all take the union of the closures (in one order) after their operands."""
    everything: list = []
    for _, closure in traced:
        for tracer in closure:
            if not any(tracer is t for t in everything):
                everything.append(tracer)
    programs = [program if _same_tracers(closure, everything) else with_consts(program, closure, everything)
                for program, closure in traced]
    return programs, everything


def _same_tracers(these, those) -> bool:
    """Identity, not `==`: comparing tracers with `==` traces an elementwise comparison."""
    return len(these) == len(those) and all(a is b for a, b in zip(these, those))


def check_same_structure(what: str, name_a: str, tree_a, avals_a, name_b: str, tree_b, avals_b) -> None:
    """Raise a ShapeError naming the first leaf whose structure, shape or dtype differs."""
    if tree_a != tree_b:
        raise ShapeError(f"{what}: {name_a} returns the structure {tree_a} but {name_b} returns {tree_b}")
    for path, a, b in zip(leaf_paths(tree_a), avals_a, avals_b):
        if a != b:
            raise ShapeError(f"{what}: leaf {path} is {a} in {name_a} but {b} in {name_b}")


def float_flags(avals) -> list[bool]:
    return [is_float(a.dtype) for a in avals]


def zeros_for(avals) -> list:
    return [np.zeros(a.shape, a.dtype) for a in avals]


def select_outputs(program: Program, indices) -> Program:
    """The same program returning only the chosen outputs (then simplified)."""
    return simplify(Program(program.inputs, program.eqns, tuple(program.outputs[i] for i in indices)))


def instantiate_all(values, avals) -> list:
    return [instantiate(v, a) for v, a in zip(values, avals)]




def sample_equation(fn, args, prim_name: str):
    """(args, params) of the `prim_name` equation in the trace of fn(*args), for the rule tests.

    The equation's operands must be the traced function's inputs (or literals)."""
    avals = [aval_of(a) for a in args]
    program, _, _ = trace_program(fn, avals, "sample")
    eqn = next(e for e in reversed(program.eqns) if e.prim.name == prim_name)
    values = {id(v): np.asarray(a) for v, a in zip(program.inputs, args)}
    operands = [a.value if isinstance(a, Literal) else values[id(a)] for a in eqn.inputs]
    return operands, dict(eqn.params)
