"""Optional engines: whether one is installed, asked without importing it.

Every layer may ask (the kernels' and reversible programs' execution modes, the Numba backend, the tier
that compiles hot programs), so the answer lives here, at the bottom, once.

    >>> numba_available() in (True, False)
    True
"""
from __future__ import annotations

import importlib.util
import sys


def numba_available() -> bool:
    """Is Numba importable (without importing it)? A `sys.modules["numba"] = None` entry, which makes an
    import fail, counts as absent."""
    if "numba" in sys.modules:
        return sys.modules["numba"] is not None
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False
