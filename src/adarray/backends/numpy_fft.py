"""NumPy implementation of the fft primitive (primitives/fft.py): numpy.fft's n-dimensional transforms."""
from __future__ import annotations

import numpy as np

from .numpy_backend import impl


@impl("fft")
def _fft(x, *, kind, axes, norm, n=None):
    if kind == "fft":
        return np.fft.fftn(x, axes=axes, norm=norm)
    if kind == "ifft":
        return np.fft.ifftn(x, axes=axes, norm=norm)
    if kind == "rfft":
        return np.fft.rfftn(x, axes=axes, norm=norm)
    lengths = [np.shape(x)[a] for a in axes[:-1]] + [n]
    return np.fft.irfftn(x, s=lengths, axes=axes, norm=norm)
