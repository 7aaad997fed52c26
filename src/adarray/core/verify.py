"""The IR checker: single assignment, every variable bound before use, and every
equation's output types equal to its primitive's shape rule. Nested programs are
checked too. Run after every transformation and pass in the tests.
"""
from __future__ import annotations

from .errors import VerifyError
from .ir import Literal, Program, Var


def verify(program: Program) -> Program:
    """Check `program` and return it; raise VerifyError naming the faulty equation."""
    bound: set[int] = set()

    def bind(var, where: str) -> None:
        if not isinstance(var, Var):
            raise VerifyError(f"{where}: {var!r} is not a Var")
        if id(var) in bound:
            raise VerifyError(f"{where}: variable assigned twice")
        bound.add(id(var))

    def check_atom(atom, where: str) -> None:
        if isinstance(atom, Literal):
            if atom.value.shape != atom.aval.shape or atom.value.dtype != atom.aval.dtype:
                raise VerifyError(f"{where}: literal value does not match its type {atom.aval}")
        elif not isinstance(atom, Var) or id(atom) not in bound:
            raise VerifyError(f"{where}: {atom!r} is used before it is assigned")

    for var in program.inputs:
        bind(var, "program input")
    for eqn in program.eqns:
        where = f"in `{eqn!r}`"
        for atom in eqn.inputs:
            check_atom(atom, where)
        for value in eqn.params.values():
            for nested in value if isinstance(value, tuple) else (value,):
                if isinstance(nested, Program):
                    verify(nested)
        expected = eqn.prim.abstract_eval(*[a.aval for a in eqn.inputs], **eqn.params)
        expected = tuple(expected) if eqn.prim.multiple_results else (expected,)
        actual = tuple(v.aval for v in eqn.outputs)
        if expected != actual:
            raise VerifyError(f"{where}: outputs typed {actual}, the shape rule gives {expected}")
        for var in eqn.outputs:
            bind(var, where)
    for atom in program.outputs:
        check_atom(atom, "program output")
    return program
