"""Rule kinds named for the math, so most primitives need no hand-written rule, in one place for the
families above the core ones (and for extensions):

    elementwise(prim, partials)   jvp/vjp from a table of scalar partials
    linear(prim, transpose)       jvp applies the primitive to tangents; vjp is the transpose
    nondifferentiable(prim)       integer/boolean outputs: zero tangent, no cotangent
    zero_derivative(prim)         piecewise-constant float outputs (floor, sign, ...)
    batch_elementwise(prim)       vmap of a map: every operand gets the batch axis

with the helpers rules are written with (symbolic zeros, masked cotangents, batch axes). Each is
defined where the primitives it binds are: kinds.py (binds none), structural.py (batching, which
broadcasts), elementwise.py (the partials kind and the cotangent helpers, which add and select).
"""
from __future__ import annotations

from .elementwise import Masked, add_tangents, elementwise, instantiate, masked
from .kinds import (
    POINTWISE_VJP,
    aval_of_value,
    linear,
    nondifferentiable,
    refuse_complex,
    zero_derivative,
    zeros,
)
from .structural import batch_all, batch_elementwise, broadcast_batch

__all__ = [
    "POINTWISE_VJP", "Masked", "add_tangents", "aval_of_value", "batch_all", "batch_elementwise", "broadcast_batch",
    "elementwise", "instantiate", "linear", "masked", "nondifferentiable", "refuse_complex", "zero_derivative",
    "zeros",
]
