"""Builder: the one way programs are assembled, equation by equation, with shape rules applied.

The staging tracer builds on it (tracing/tracer.py); so can code that writes IR directly:

    >>> from adarray.primitives.elementwise import mul_p, sin_p
    >>> b = Builder()
    >>> x = b.input(Aval((3,), np.dtype("float64")))
    >>> (s,) = b.emit(sin_p, [x])
    >>> (y,) = b.emit(mul_p, [s, x])
    >>> print(b.build([y]))  # doctest: +NORMALIZE_WHITESPACE
    { lambda a:f64[3] .
        b:f64[3] = sin a
        c:f64[3] = mul b a
      in (c) }

Every equation's output avals come from its primitive's `abstract_eval`, so a built program is
well typed by construction (a shape error is raised at `emit`, naming the primitive).
"""
from __future__ import annotations

import numpy as np

from .ir import Eqn, Literal, Program, Var
from .types import Aval, aval_of


class Builder:
    """A program under construction: inputs, then equations in order, then `build(outputs)`."""

    def __init__(self):
        self.inputs: list[Var] = []
        self.eqns: list[Eqn] = []

    def input(self, aval: Aval) -> Var:
        """A new program input of type `aval`."""
        var = Var(aval)
        self.inputs.append(var)
        return var

    def emit(self, prim, atoms, params=None) -> list[Var]:
        """Append `outputs = prim[params] atoms` and return its output variables.

        Atoms are `Var`s of this program, `Literal`s, or NumPy values (which become literals).
        """
        params = params or {}
        atoms = tuple(a if isinstance(a, (Var, Literal)) else Literal(np.asarray(a), aval_of(a)) for a in atoms)
        out_avals = prim.abstract_eval(*[a.aval for a in atoms], **params)
        outs = tuple(Var(a) for a in (out_avals if prim.multiple_results else (out_avals,)))
        self.eqns.append(Eqn(prim, atoms, params, outs))
        return list(outs)

    def build(self, outputs, extra_inputs=()) -> Program:
        """The closed program computing `outputs` (atoms) from the inputs, then `extra_inputs`."""
        return Program(tuple(self.inputs) + tuple(extra_inputs), tuple(self.eqns), tuple(outputs))
