"""The principal matrix square root and logarithm, with their Frechet derivatives.

sqrtm a -> S with S S = A, the eigenvalues of S in the open right half plane
logm a  -> X with exp(X) = A, the eigenvalues of X with imaginary parts in (-pi, pi)
    scipy.linalg.sqrtm and logm (Schur methods; Higham's inverse scaling and squaring for logm),
    for real matrices with no eigenvalue on the closed negative real axis (0 included), whose
    principal square root and logarithm are real. For other matrices the result is not real:
    the implementation raises LinAlgError (adarray computes in real arithmetic).

Derivatives: for a primary matrix function f (one given by a power series with real coefficients,
as these are), the Frechet derivative L_f(A, E) is the upper right block of
f([[A, E], [0, A]]) (Mathias 1996; Higham, Functions of Matrices, Thm. 3.6), and the adjoint of
E -> L_f(A, E) is G -> L_f(A^T, G), since f(A)^T = f(A^T). The block matrix has A's eigenvalues,
so it has a principal root and logarithm whenever A does. Both rules call the primitive again, so
every order works (the k-th derivative takes the function of a 2^k n x 2^k n matrix).
"""
from __future__ import annotations

import numpy as np

from ..core.primitive import Primitive
from .matrices import batch_matrices, columns, hstack, mT, rows, square_matrix, vstack, zeros
from .matrix_functions import primary_function_taylor
from .rules import aval_of_value


def _square(name):
    def abstract_eval(a):
        square_matrix(name, a)
        return a

    return abstract_eval


sqrtm_p = Primitive("sqrtm", _square("sqrtm"))
logm_p = Primitive("logm", _square("logm"))


def sqrtm(a):
    """The principal square root of a square matrix (stack)."""
    return sqrtm_p.bind(a)


def logm(a):
    """The principal logarithm of a square matrix (stack)."""
    return logm_p.bind(a)


def frechet(function, a, e):
    """L_f(a, e): the upper right block of f([[a, e], [0, a]])."""
    aval = aval_of_value(a)
    n = aval.shape[-1]
    block = vstack([hstack([a, e]), hstack([zeros(aval.shape, aval.dtype), a])])
    return columns(rows(function(block), 0, n), n, None)


for _prim, _function in ((sqrtm_p, sqrtm), (logm_p, logm)):
    _prim.jvp = lambda tangents, primals, output, f=_function: frechet(f, primals[0], tangents[0])
    _prim.vjp = lambda cotangent, primals, output, needs, f=_function: [frechet(f, mT(primals[0]), cotangent)]
    batch_matrices(_prim)


def _positive_spectrum(rng, shape, dtype=np.float64):
    """Matrices 2 I + N(0, 0.3^2) noise: eigenvalues near 2, some in complex pairs (real roots)."""
    n = shape[-1]
    return (2.0 * np.eye(n) + 0.3 * rng.normal(size=shape)).astype(dtype)


def _sample(rng):
    return [
        ([_positive_spectrum(rng, (3, 3))], {}),
        ([_positive_spectrum(rng, (2, 2, 2))], {}),
        ([_positive_spectrum(rng, (1, 1))], {}),
        ([np.array([[4.0, 1.0], [0.0, 9.0]])], {}),
        ([np.array([[1.0, -0.8], [0.8, 1.0]])], {}),        # complex eigenvalues 1 +- 0.8i
        ([np.zeros((0, 2, 2))], {}),
        ([_positive_spectrum(rng, (3, 3), np.float32)], {}),
    ]


sqrtm_p.sample = logm_p.sample = _sample


def _set_taylor_rules():
    """Taylor mode: the function of one block Toeplitz matrix of size (K + 1) n (as for expm), not the
    2^K n of K nested Frechet derivatives."""
    sqrtm_p.taylor = primary_function_taylor(sqrtm)
    logm_p.taylor = primary_function_taylor(logm)


_set_taylor_rules()
