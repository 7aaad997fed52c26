"""NumPy implementations of the arithmetic family (primitives/arithmetic.py): NumPy's own ufuncs."""
from __future__ import annotations

import numpy as np

from .numpy_backend import impl

for _name, _fn in {
    "cbrt": np.cbrt, "fmod": np.fmod, "nextafter": np.nextafter, "ldexp": np.ldexp, "signbit": np.signbit,
    "gcd": np.gcd, "lcm": np.lcm,
}.items():
    impl(_name)((lambda fn: lambda *args: fn(*args))(_fn))


@impl("frexp_exponent")
def _frexp_exponent(x):
    return np.frexp(x)[1].astype(np.int32)
