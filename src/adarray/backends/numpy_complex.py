"""NumPy implementations of the complex-value primitives (primitives/complex.py)."""
from __future__ import annotations

import numpy as np

from ..core.types import complex_dtype
from .numpy_backend import impl

impl("real")(lambda x: np.real(x))
impl("imag")(lambda x: np.imag(x))
impl("conj")(lambda x: np.conj(x))


@impl("complex")
def _complex(x, y):
    x, y = np.asarray(x), np.asarray(y)
    out = np.empty(x.shape, complex_dtype(x.dtype))
    out.real, out.imag = x, y
    return out
