"""NumPy implementations of sqrtm and logm (primitives/sqrtm_logm.py): scipy.linalg's, per matrix
of a stack, computed in float64 and returned in the input's dtype. A result that is not real (an
eigenvalue on the negative real axis) or not finite raises LinAlgError, and so does logm of a matrix
with an exactly zero eigenvalue (where SciPy returns log(1e-20) in its place)."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from ...primitives.matrices import LinAlgError
from ...primitives.sqrtm_logm import logm_p, sqrtm_p
from .registry import impl


def _real_root(name, function, a):
    a = np.asarray(a)
    out = np.zeros(a.shape, a.dtype)
    if a.size == 0:
        return out
    for index in np.ndindex(a.shape[:-2]):
        matrix = np.asarray(a[index], np.float64)
        if name == "logm" and np.any(np.linalg.eigvals(matrix) == 0.0):   # SciPy would return log(1e-20)
            raise LinAlgError(f"logm: the matrix {index if index else ''} of shape {matrix.shape} is singular: "
                              "it has no logarithm")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = np.asarray(function(matrix))
        if not np.all(np.isfinite(value)):
            raise LinAlgError(f"{name}: the matrix {index if index else ''} of shape {matrix.shape} has no finite "
                              f"principal {_what(name)} (it has a zero eigenvalue)")
        if np.iscomplexobj(value):
            scale = max(float(np.abs(value).max()), 1.0)
            if float(np.abs(value.imag).max()) > 1e-10 * scale:
                raise LinAlgError(f"{name}: the matrix {index if index else ''} of shape {matrix.shape} has a "
                                  f"negative real eigenvalue, so its principal {_what(name)} is not real (adarray "
                                  "computes in real arithmetic)")
            value = value.real
        out[index] = value
    return out


def _what(name):
    return "square root" if name == "sqrtm" else "logarithm"


@impl(sqrtm_p)
def _sqrtm(a):
    return _real_root("sqrtm", scipy.linalg.sqrtm, a)


@impl(logm_p)
def _logm(a):
    return _real_root("logm", scipy.linalg.logm, a)
