"""The JAX/XLA backend: programs lowered to `jax.lax` / `jax.numpy` and compiled by XLA (CPUs, GPUs,
TPUs; one program over many devices with shardings). Optional: needs the `jax` extra.

A table of lowerings keyed by the Primitive object (`registry.LOWERINGS`), one module per family,
and `compile_program(program)`, which lowers a program to one function and wraps it in `jax.jit`
with 64-bit types enabled for it only. The user-facing entry points are `adarray.jit(f,
backend="jax")`, `adarray.lower(f, backend="jax")` and `adarray.data_parallel`.

    run = compile_program(program)
    outputs = run(*arrays)          # jax.Array results
"""
from . import (  # noqa: F401  (each module registers the lowerings of its family)
    arithmetic,
    arrays,
    bessel,
    complex,
    control,
    elementwise,
    gamma_functions,
    kernels,
    linalg,
    parallel,
    reductions,
    reversible,
    sorting,
    special,
    sqrtm_logm,
    sylvester,
)
from .interpreter import Compiled, compile_program, lower_program, x64
from .registry import HOST_CALLBACKS, LOWERINGS, lowering, lowering_of

__all__ = ["Compiled", "HOST_CALLBACKS", "LOWERINGS", "compile_program", "lower_program", "lowering", "lowering_of",
           "x64"]
