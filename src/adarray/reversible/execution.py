"""How reversible programs run: the mode that the backends read.

`ADARRAY_REVERSIBLE_BACKEND` (or `rv.set_reversible_backend`) = "auto" (the default: interpreted Python over
NumPy values, and a program is compiled by Numba, when installed, once one of its interpreted calls took
NUMBA_AFTER_SECONDS: a compilation costs about a second, which many short calls never repay), "numpy" (always
interpreted) or "numba" (always compiled; an error without Numba).

    >>> previous = set_reversible_backend("numpy")  # doctest: +SKIP
"""
from __future__ import annotations

import os

MODES = ("auto", "numpy", "numba")
NUMBA_AFTER_SECONDS = 0.25
_mode = os.environ.get("ADARRAY_REVERSIBLE_BACKEND", "auto")


def set_reversible_backend(mode: str) -> str:
    """Choose how reversible programs run: 'auto', 'numpy' or 'numba'. Returns the previous mode."""
    global _mode
    if mode not in MODES:
        raise ValueError(f"the reversible backend must be one of {MODES}, got {mode!r}")
    previous, _mode = _mode, mode
    return previous


def reversible_backend() -> str:
    return _mode
