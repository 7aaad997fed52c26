"""Test helpers: the numerical oracles for derivative rules and passes (one tolerance policy), central
differences (`differences`, the one finite-difference oracle), and the coverage matrix of every primitive's
tables (`coverage_matrix`, `checklist`)."""
from .check_grads import check_grads
from .coverage import checklist, coverage_matrix
from .differences import numerical_derivative, numerical_gradient, numerical_hessian, numerical_jacobian, numerical_jvp
from .oracles import (
    Tolerance,
    check_jvp,
    check_passes,
    check_second_order,
    check_vjp,
    check_vmap,
    program_tolerance,
    tolerances,
)

__all__ = [
    "Tolerance",
    "check_grads",
    "checklist",
    "coverage_matrix",
    "check_jvp",
    "check_passes",
    "check_second_order",
    "check_vjp",
    "check_vmap",
    "numerical_derivative",
    "numerical_gradient",
    "numerical_hessian",
    "numerical_jacobian",
    "numerical_jvp",
    "program_tolerance",
    "tolerances",
]
