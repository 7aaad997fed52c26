"""The Numba backend: programs generated as Python source and compiled by Numba into fused native loops.

    run = compile_program(program)     # the same contract as the NumPy backend's
    outputs = run(*arrays)

A fusion plan groups what moves data (elementwise chains, elementwise into reductions and scans,
gathers feeding elementwise operations) into loop nests; fold, while and cond bodies are emitted
inline, so a loop runs as one native loop, and so does a while loop's reverse mode (while_grad:
`checkpointing.py`); large contractions call BLAS. A primitive without a
lowering here runs on the NumPy backend's implementation, and the compiled groups are cut there
(`coverage()` lists both kinds). Scalar kernels and their mixed-mode derivatives are kernel calls,
written by the same generator (their standalone execution mode, for calls made on the NumPy
backend, is `kernels.py`).

Optional: this package imports without numba; `compile_program` then raises a BackendError that
says how to install it.
"""
from ...core.engines import numba_available
from ...core.errors import BackendError
from ...core.primitive import REGISTRY
from . import (  # noqa: F401  (each module registers its lowerings)
    arithmetic,
    arrays,
    checkpointing,
    complex,
    contraction,
    control,
    elementwise,
    linalg,
    parallel,
    reductions,
    sorting,
    special,
)
from .runtime import compile_program as compile_with_numba
from .table import LOWERINGS, lowerable


def compile_program(program, name: str = "program"):
    """A callable running `program` on NumPy arrays, compiled by Numba (NumPy where there is no lowering)."""
    require()
    return compile_with_numba(program, name)


def require() -> None:
    """Raise a BackendError (an adarray.Error) if numba cannot be imported."""
    if not numba_available():
        raise BackendError("the 'numba' backend needs the numba package, which is not installed: "
                           "pip install 'adarray[numba]' (or pip install numba)")


def coverage() -> dict:
    """{'compiled': [...], 'numpy': [...], 'percent': float}: the primitives with a Numba lowering, those that
    run on the NumPy backend's implementation (groups are cut at them), and the share of the registry compiled.

        >>> coverage()["percent"] >= 95.0
        True
    """
    compiled = sorted(name for name, prim in REGISTRY.items() if prim in LOWERINGS)
    fallback = sorted(name for name, prim in REGISTRY.items() if prim not in LOWERINGS)
    percent = round(100.0 * len(compiled) / max(1, len(REGISTRY)), 1)
    return {"compiled": compiled, "numpy": fallback, "percent": percent}


__all__ = ["LOWERINGS", "compile_program", "coverage", "lowerable", "require"]
