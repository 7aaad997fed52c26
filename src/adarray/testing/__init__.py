"""Test helpers: the numerical oracles for derivative rules and passes (one tolerance policy)."""
from .check_grads import check_grads
from .oracles import (
    Tolerance,
    check_jvp,
    check_passes,
    check_second_order,
    check_vjp,
    check_vmap,
    numerical_gradient,
    numerical_jvp,
    program_tolerance,
    tolerances,
)

__all__ = [
    "Tolerance",
    "check_grads",
    "check_jvp",
    "check_passes",
    "check_second_order",
    "check_vjp",
    "check_vmap",
    "numerical_gradient",
    "numerical_jvp",
    "program_tolerance",
    "tolerances",
]
