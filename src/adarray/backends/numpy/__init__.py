"""The NumPy backend: the reference interpreter and the default.

A table of implementations keyed by the Primitive object (`registry.IMPLS`), one module per
family of primitives, and the interpreter that runs a program with it (`compile_program`).
Importing this package fills the table and makes it the evaluator of eager calls: `bind` on
concrete arrays, and constant folding in the simplifier.

    run = compile_program(program)
    outputs = run(*arrays)
"""
from ...tracing import set_evaluator
from . import (  # noqa: F401  (each module registers the implementations of its family)
    arithmetic,
    arrays,
    complex,
    control,
    elementwise,
    gamma_functions,
    kernels,
    linalg,
    parallel,
    recurrences,
    reductions,
    reversible,
    sorting,
    special,
    sqrtm_logm,
    sylvester,
)
from .interpreter import compile_program, evaluate
from .registry import IMPLS, impl, implementation

set_evaluator(evaluate)

__all__ = ["IMPLS", "compile_program", "evaluate", "impl", "implementation"]
