"""The stable extension surface: what a new primitive or a new transformation needs, in one place.

    from adarray.extend import Primitive, elementwise, impl, check_jvp, check_vjp

See docs/adding_a_primitive.md for a worked example. Everything here only re-exports.
"""
from .backends.numpy import impl
from .core.builder import Builder
from .core.ir import Eqn, Literal, Program, Var
from .core.primitive import NOT_DIFFERENTIABLE, REGISTRY, Primitive, Zero, is_zero, unsupported
from .core.types import Aval
from .primitives.rules import batch_elementwise, elementwise, linear, nondifferentiable, zero_derivative
from .testing import check_jvp, check_second_order, check_vjp, check_vmap, numerical_gradient, numerical_jvp
from .tracing import trace_program

__all__ = [
    "NOT_DIFFERENTIABLE", "REGISTRY", "Aval", "Builder", "Eqn", "Literal", "Primitive", "Program", "Var", "Zero",
    "batch_elementwise", "check_jvp", "check_second_order", "check_vjp", "check_vmap", "elementwise", "impl",
    "is_zero", "linear", "nondifferentiable", "numerical_gradient", "numerical_jvp", "trace_program",
    "unsupported", "zero_derivative",
]
