"""Extended-precision inputs: NumPy's longdouble and clongdouble.

NumPy's longdouble is the x87 80-bit format on x86 (float128 in NumPy's names), IEEE quadruple on some
ARM and POWER systems, and float64 on Windows and Apple silicon. adarray computes in float64 at most:
none of its engines has a long double (LAPACK, scipy.special, Numba, XLA), and an IR whose values
silently changed precision between backends would be worse than one precision. So a longdouble
(clongdouble) array that enters adarray, as an argument of a transformation, a constant in a traced
function, or an operand of an eager adarray.numpy call, is converted to float64 (complex128), as
autograd users expect their longdouble arrays to be accepted, and an ExtendedPrecisionWarning says so
(once per place it happens, Python's default for warnings). Results, gradients included, are float64:
their dtype shows the precision they have.

    >>> grad(lambda x: anp.sum(x ** 2))(np.ones(2, np.longdouble)).dtype   # doctest: +SKIP
    dtype('float64')
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # .../adarray

# Only where longdouble is wider than float64 (elsewhere it is float64 itself, and nothing changes).
NARROWED = {} if np.dtype(np.longdouble) == np.dtype(np.float64) else {
    np.dtype(np.longdouble): np.dtype(np.float64), np.dtype(np.clongdouble): np.dtype(np.complex128)}


class ExtendedPrecisionWarning(UserWarning):
    """A longdouble or clongdouble value was converted to float64 or complex128 (see adarray.core.precision)."""


def narrow(value):
    """`value` itself, or its float64 (complex128) copy if it is a longdouble (clongdouble) array or scalar."""
    source = getattr(value, "dtype", None)
    if source is None or not NARROWED or source not in NARROWED or not isinstance(value, (np.ndarray, np.generic)):
        return value
    target = NARROWED[source]
    warnings.warn(f"adarray computes in at most 64-bit floats: a {source} array of shape {np.shape(value)} was "
                  f"converted to {target} (its results are {target})", ExtendedPrecisionWarning,
                  stacklevel=_first_frame_outside_adarray())
    return np.asarray(value, target)


def narrow_dtype(dtype) -> np.dtype:
    """The dtype adarray computes in: float64 (complex128) for longdouble (clongdouble), with the warning."""
    dtype = np.dtype(dtype)
    if dtype not in NARROWED:
        return dtype
    warnings.warn(f"adarray computes in at most 64-bit floats: {dtype} was replaced by {NARROWED[dtype]}",
                  ExtendedPrecisionWarning, stacklevel=_first_frame_outside_adarray())
    return NARROWED[dtype]


def _first_frame_outside_adarray() -> int:
    """The stacklevel of the caller's code, so that the warning names the user's line, not adarray's."""
    frame, level = sys._getframe(2), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE + os.sep):
        frame, level = frame.f_back, level + 1
    return level
