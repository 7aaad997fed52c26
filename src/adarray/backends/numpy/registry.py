"""The NumPy backend's table: one implementation per primitive, keyed by the Primitive object.

    @impl(sin_p)
    def _sin(x):
        return np.sin(x)

An implementation takes NumPy arrays (one per input) and the equation's params as keywords, and
returns one array (a list of them for a primitive with several results). It never writes into its
inputs: they may be the caller's arrays, literals of a program, or read-only broadcast views.
"""
from __future__ import annotations

from ...core.errors import ExecutionError
from ...core.primitive import Primitive

IMPLS: dict[Primitive, object] = {}

# Faster engines for some calls of a primitive, keyed by the Primitive object: installed from above the
# backends (adarray.api.tiering chooses Numba for large kernel calls and for hot reversible programs), so that
# the reference imports no other backend and, without an entry, runs every call itself. What an entry takes
# and returns is for the implementation that asks it to say (kernels.py, reversible.py).
ACCELERATORS: dict[Primitive, object] = {}


def impl(*primitives: Primitive):
    """Register the decorated function as the NumPy implementation of `primitives`."""
    for primitive in primitives:
        if not isinstance(primitive, Primitive):
            raise TypeError(f"impl takes Primitive objects, got {primitive!r}")

    def register(fn):
        for primitive in primitives:
            IMPLS[primitive] = fn
        return fn

    return register


def implementation(primitive: Primitive):
    """The implementation of `primitive`, or an ExecutionError naming it."""
    fn = IMPLS.get(primitive)
    if fn is None:
        raise ExecutionError(f"the NumPy backend has no implementation of '{primitive.name}'")
    return fn
