"""NumPy implementations of the complex-value primitives (primitives/complex.py) and of the
discrete Fourier transforms (primitives/fft.py)."""
from __future__ import annotations

import numpy as np

from ...core.types import complex_dtype
from ...primitives import complex as complex_values
from ...primitives import fft
from .registry import IMPLS, impl

IMPLS[complex_values.real_p] = np.real
IMPLS[complex_values.imag_p] = np.imag
IMPLS[complex_values.conj_p] = np.conj


@impl(complex_values.complex_p)
def _complex(x, y):
    x, y = np.asarray(x), np.asarray(y)
    out = np.empty(x.shape, complex_dtype(x.dtype))
    out.real, out.imag = x, y
    return out


@impl(fft.fft_p)
def _fft(x, *, kind, axes, norm, n=None):
    if kind == "fft":
        return np.fft.fftn(x, axes=axes, norm=norm)
    if kind == "ifft":
        return np.fft.ifftn(x, axes=axes, norm=norm)
    if kind == "rfft":
        return np.fft.rfftn(x, axes=axes, norm=norm)
    lengths = [np.shape(x)[a] for a in axes[:-1]] + [n]
    return np.fft.irfftn(x, s=lengths, axes=axes, norm=norm)
