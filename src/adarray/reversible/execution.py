"""How reversible programs run: the mode that the engine choice reads (adarray.api.tiering).

`ADARRAY_REVERSIBLE_BACKEND` (or `rv.set_reversible_backend`) = "auto" (the default: interpreted Python over
NumPy values, and a program is compiled by Numba, when installed, once one of its interpreted calls took
NUMBA_AFTER_SECONDS: a compilation costs about a second, which many short calls never repay), "numpy" (always
interpreted) or "numba" (always compiled; an error without Numba).

    >>> previous = set_reversible_backend("numpy")  # doctest: +SKIP
"""
from __future__ import annotations

from ..core.config import config

NUMBA_AFTER_SECONDS = 0.25


def set_reversible_backend(mode: str) -> str:
    """Choose how reversible programs run: 'auto', 'numpy' or 'numba' (an ArgumentError otherwise). Returns the
    previous mode."""
    return config.update("reversible_backend", mode)


def reversible_backend() -> str:
    return config.reversible_backend
