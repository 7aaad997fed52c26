"""Backends turn a Program into a callable. One package per backend, each a table of
implementations keyed by the Primitive object: `numpy` (the reference interpreter, the default),
`numba` (fused native loops) and `jax` (lowering to XLA, sharding; optional, imported only when
used). A backend imports the primitives it implements; nothing below the top-level API imports a
backend.

`compiler(name)` is how the staging layer finds the `compile_program(program, name)` of the
NumPy and Numba backends (the JAX backend has its own entry, `adarray.api.xla`)."""
from __future__ import annotations

from ..core.errors import ArgumentError
from .numpy import compile_program as compile_on_numpy

NAMES = ("numpy", "numba")


def compiler(name: str):
    """The `compile_program(program, name)` of backend `name` ('numpy' or 'numba')."""
    if name == "numpy":
        return lambda program, label="program": compile_on_numpy(program)
    if name == "numba":
        from . import numba  # imports the optional engine: only when asked for

        numba.require()
        return numba.compile_program
    raise ArgumentError(f"unknown backend {name!r}; choose one of {', '.join(repr(n) for n in NAMES)}")
