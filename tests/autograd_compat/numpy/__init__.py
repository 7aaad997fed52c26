"""autograd.numpy -> adarray.numpy. Names adarray.numpy lacks raise AttributeError (never NumPy's)."""
import importlib

from adarray.numpy import *  # noqa: F403

from .._missing import forwarding

# Submodules by import, not `from . import`: the star import has bound adarray's own `linalg` already.
# autograd.numpy.random is NumPy's (tests draw data with it).
linalg, random, fft = (importlib.import_module(f"{__name__}.{name}") for name in ("linalg", "random", "fft"))

__getattr__ = forwarding("autograd.numpy", "adarray.numpy")
