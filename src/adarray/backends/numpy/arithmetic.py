"""NumPy implementations of the arithmetic family (primitives/arithmetic.py): NumPy's own ufuncs."""
from __future__ import annotations

import numpy as np

from ...primitives import arithmetic
from .registry import IMPLS, impl

IMPLS.update({
    arithmetic.cbrt_p: np.cbrt,
    arithmetic.fmod_p: np.fmod,
    arithmetic.nextafter_p: np.nextafter,
    arithmetic.ldexp_p: np.ldexp,
    arithmetic.signbit_p: np.signbit,
    arithmetic.gcd_p: np.gcd,
    arithmetic.lcm_p: np.lcm,
})


@impl(arithmetic.frexp_exponent_p)
def _frexp_exponent(x):
    return np.frexp(x)[1].astype(np.int32)
