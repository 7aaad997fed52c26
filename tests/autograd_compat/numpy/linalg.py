"""autograd.numpy.linalg -> adarray.numpy.linalg, and two of autograd's own helpers its tests use."""
import adarray.numpy as _anp

from .._missing import forwarding


def _dot(a, b):
    """autograd.numpy.linalg's own helper (not NumPy's): matrix products over a batch."""
    return _anp.einsum("...ij,...jk->...ik", a, b)


def T(x):  # noqa: N802 - autograd's name
    """autograd.numpy.linalg's own helper: the transpose of the last two axes."""
    return _anp.swapaxes(x, -1, -2)


__getattr__ = forwarding("autograd.numpy.linalg", "adarray.numpy.linalg")
