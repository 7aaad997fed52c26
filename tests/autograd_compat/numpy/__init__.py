"""autograd.numpy -> adarray.numpy. Names adarray.numpy lacks raise AttributeError (never NumPy's)."""
import importlib

from adarray.numpy import *  # noqa: F403

from .._missing import forwarding

# Submodules by import, not `from . import`: the star import has bound adarray's own `linalg` already.
# autograd.numpy.random is NumPy's (tests draw data with it).
linalg, random, fft = (importlib.import_module(f"{__name__}.{name}") for name in ("linalg", "random", "fft"))



def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """autograd's own extension of NumPy (the inverse of diagonal(D, axis1=-1, axis2=-2)): D's last axis
    spread on the diagonal of a new trailing square, on adarray.numpy; autograd supports only offset=0,
    axis1=-1, axis2=-2."""
    import numpy as _onp

    import adarray.numpy as _anp

    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError(f"make_diagonal: only offset=0, axis1=-1, axis2=-2 are supported (as in autograd), "
                                  f"not offset={offset}, axis1={axis1}, axis2={axis2}")
    return _anp.expand_dims(D, -1) * _onp.eye(_onp.shape(D)[-1])


__getattr__ = forwarding("autograd.numpy", "adarray.numpy")
