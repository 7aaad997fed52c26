"""Modules of the compatibility layer that forward to an adarray module, and say clearly what is missing."""
from __future__ import annotations

import importlib
import os

# For triage only (never set in CI): fall back to NumPy's (or SciPy's) function of the same name, to
# see what a test needs beyond the first missing name (NumPy functions work only on concrete values).
NUMPY_FALLBACK = os.environ.get("AUTOGRAD_COMPAT_NUMPY_FALLBACK") == "1"


def _resolve(dotted: str):
    """A module, or an attribute of one (adarray.numpy.linalg may be a namespace object)."""
    try:
        return importlib.import_module(dotted)
    except ImportError:
        parent, _, attribute = dotted.rpartition(".")
        try:
            return getattr(_resolve(parent), attribute)
        except AttributeError:
            raise ImportError(dotted) from None


def forwarding(autograd_name: str, adarray_name: str, extra: dict | None = None):
    """A module __getattr__: names of `adarray_name` (imported when first needed), else AttributeError
    naming both the autograd name and the adarray module that lacks it."""
    extra = extra or {}

    def __getattr__(name):
        if name in extra:
            return extra[name]
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            module = _resolve(adarray_name)
        except ImportError:
            if NUMPY_FALLBACK:
                return getattr(_resolve(adarray_name.replace("adarray.", "", 1)), name)
            raise AttributeError(f"{autograd_name}.{name}: adarray has no module {adarray_name}") from None
        try:
            return getattr(module, name)
        except AttributeError:
            if NUMPY_FALLBACK:
                fallback = _resolve(adarray_name.replace("adarray.", "", 1))
                if hasattr(fallback, name):
                    return getattr(fallback, name)
            raise AttributeError(f"{autograd_name}.{name}: {adarray_name} has no '{name}'") from None

    return __getattr__
