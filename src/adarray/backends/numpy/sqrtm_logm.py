"""NumPy implementations of sqrtm and logm (primitives/sqrtm_logm.py): scipy.linalg's, per matrix of a stack,
computed in float64 (complex128 for complex matrices) and returned in the input's dtype (complex for
complex_result=True).

For a real matrix, a result that is not real (an eigenvalue on the negative real axis) raises LinAlgError unless
complex_result=True; so does a result that is not finite, and logm of a matrix with an exactly zero eigenvalue
(where SciPy returns log(1e-20) in its place).

Eigenvalues on the negative real axis, the branch cut, get the principal branch's limit from above (the root
+i sqrt|lambda|, the logarithm's imaginary part +pi), as SciPy's real Schur method gives them. Rounding can
split such an eigenvalue into a pair lambda +- i delta (the Frechet blocks [[A, E], [0, A]] of the derivatives
repeat every eigenvalue, and a repeated eigenvalue splits by sqrt(eps)), whose members a Schur method would send
to opposite branches: an error of order sqrt|lambda| / delta. So when an eigenvalue lies within
CUT_TOLERANCE |lambda| of the negative real axis, the function is taken of the rotated matrix e^(-i theta) A,
whose eigenvalues lie off the cut (theta up to pi/4, less than half the angle between the cut and any other
eigenvalue): sqrtm(A) = e^(i theta / 2) sqrtm(e^(-i theta) A), logm(A) = logm(e^(-i theta) A) + i theta I.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from ...primitives.matrices import LinAlgError
from ...primitives.sqrtm_logm import logm_p, sqrtm_p
from .registry import impl

CUT_TOLERANCE = 1e-6   # |Im lambda| / |lambda| below which an eigenvalue with Re lambda < 0 is on the cut
MAX_ROTATION = np.pi / 4


def _on_the_cut(name, function, matrix):
    """function(matrix) with the eigenvalues on (or split around) the negative real axis on its upper side."""
    values = np.linalg.eigvals(matrix)
    size = np.abs(values)
    on_cut = (values.real < 0) & (np.abs(values.imag) <= CUT_TOLERANCE * size)
    if not np.any(on_cut):
        return function(matrix)
    others = values[~on_cut & (values.real < 0)]
    gaps = np.pi - np.abs(np.angle(others))        # the angles between the cut and the other eigenvalues
    theta = min(MAX_ROTATION, 0.5 * float(gaps.min())) if gaps.size else MAX_ROTATION
    value = function(np.exp(-1j * theta) * matrix)
    if name == "sqrtm":
        return np.exp(0.5j * theta) * value
    return value + 1j * theta * np.eye(matrix.shape[-1])


def _root(name, function, a, complex_result=False):
    a = np.asarray(a)
    out = np.zeros(a.shape, np.result_type(a.dtype, np.complex64) if complex_result else a.dtype)
    if a.size == 0:
        return out
    wide = np.complex128 if np.iscomplexobj(a) else np.float64
    for index in np.ndindex(a.shape[:-2]):
        matrix = np.asarray(a[index], wide)
        if name == "logm" and np.any(np.linalg.eigvals(matrix) == 0.0):   # SciPy would return log(1e-20)
            raise LinAlgError(f"logm: the matrix {index if index else ''} of shape {matrix.shape} is singular: "
                              "it has no logarithm")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = np.asarray(_on_the_cut(name, function, matrix) if complex_result or wide == np.complex128
                               else function(matrix))
        if not np.all(np.isfinite(value)):
            raise LinAlgError(f"{name}: the matrix {index if index else ''} of shape {matrix.shape} has no finite "
                              f"principal {_what(name)} (it has a zero eigenvalue)")
        if np.iscomplexobj(value) and not (complex_result or wide == np.complex128):
            scale = max(float(np.abs(value).max()), 1.0)
            if float(np.abs(value.imag).max()) > 1e-10 * scale:
                raise LinAlgError(f"{name}: the matrix {index if index else ''} of shape {matrix.shape} has a "
                                  f"negative real eigenvalue, so its principal {_what(name)} is not real (under jit "
                                  "and vmap the result's dtype follows the input's: pass a complex matrix, "
                                  "a.astype(complex))")
            value = value.real
        out[index] = value
    return out


def _what(name):
    return "square root" if name == "sqrtm" else "logarithm"


@impl(sqrtm_p)
def _sqrtm(a, complex_result=False):
    return _root("sqrtm", scipy.linalg.sqrtm, a, complex_result)


@impl(logm_p)
def _logm(a, complex_result=False):
    return _root("logm", scipy.linalg.logm, a, complex_result)
