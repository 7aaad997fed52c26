"""The principal matrix square root and logarithm, with their Frechet derivatives.

sqrtm a -> S with S S = A, the eigenvalues of S in the open right half plane
logm a  -> X with exp(X) = A, the eigenvalues of X with imaginary parts in (-pi, pi)
    scipy.linalg.sqrtm and logm (Schur methods; Higham's inverse scaling and squaring for logm).
    The result has the input's dtype: a real matrix with no eigenvalue on the closed negative real
    axis (0 included) has a real principal root and logarithm; for a real matrix with a negative
    eigenvalue the implementation raises LinAlgError, unless complex_result=True: then the result is
    complex, as SciPy's (scipy.linalg.sqrtm and logm pass it where the values are known). Complex
    matrices: any without an eigenvalue at 0 on the NumPy backend (the JAX backend's iteration also
    needs none on the negative real axis, and does not compute complex_result=True).

Derivatives: for a primary matrix function f (one given by a power series with real coefficients,
as these are), the Frechet derivative L_f(A, E) is the upper right block of
f([[A, E], [0, A]]) (Mathias 1996; Higham, Functions of Matrices, Thm. 3.6), and the adjoint of
E -> L_f(A, E) is G -> L_f(A^T, G), since f(A)^T = f(A^T) (for complex matrices too, under JAX's
pairing sum(u * v) without a conjugate: f is a power series). The block matrix has A's eigenvalues,
so it has a principal root and logarithm whenever A does. Both rules call the primitive again, so
every order works (the k-th derivative takes the function of a 2^k n x 2^k n matrix).
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.types import complex_dtype, is_complex
from . import elementwise as ew
from .complex import imag, real
from .matrices import batch_matrices, columns, complex_normal, hstack, mT, rows, square_matrix, vstack, zeros
from .matrix_functions import primary_function_taylor
from .rules import aval_of_value


def _square(name):
    def abstract_eval(a, *, complex_result=False):
        square_matrix(name, a)
        if complex_result:
            if is_complex(a.dtype):
                raise ShapeError(f"{name}: complex_result=True is for real matrices, got {a}")
            return a.update(dtype=complex_dtype(a.dtype))
        return a

    return abstract_eval


sqrtm_p = Primitive("sqrtm", _square("sqrtm"))
logm_p = Primitive("logm", _square("logm"))


def sqrtm(a, complex_result: bool = False):
    """The principal square root of a square matrix (stack); complex_result: of a real one, as a complex one."""
    return sqrtm_p.bind(a, complex_result=bool(complex_result))


def logm(a, complex_result: bool = False):
    """The principal logarithm of a square matrix (stack); complex_result: of a real one, as a complex one."""
    return logm_p.bind(a, complex_result=bool(complex_result))


def frechet(function, a, e):
    """L_f(a, e): the upper right block of f([[a, e], [0, a]])."""
    aval = aval_of_value(a)
    n = aval.shape[-1]
    block = vstack([hstack([a, e]), hstack([zeros(aval.shape, aval.dtype), a])])
    return columns(rows(function(block), 0, n), n, None)


def _rules(prim, function):
    def jvp(tangents, primals, output, *, complex_result=False):
        return frechet(functools.partial(function, complex_result=complex_result), primals[0], tangents[0])

    def vjp(cotangent, primals, output, needs, *, complex_result=False):
        transposed = mT(primals[0])
        if not complex_result:
            return [frechet(function, transposed, cotangent)]
        # A real matrix with a complex result: L(A^T, .) is complex-linear, and the cotangent of the real A is
        # Re L(A^T, G) = Re L(A^T, Re G) - Im L(A^T, Im G), each with real blocks, so that the branch of every
        # eigenvalue on the negative real axis stays the one the real Schur form gives (+i sqrt|lambda|).
        real_function = functools.partial(function, complex_result=True)
        return [ew.sub(real(frechet(real_function, transposed, real(cotangent))),
                       imag(frechet(real_function, transposed, imag(cotangent))))]

    def taylor(series, output, *, complex_result=False):
        return primary_function_taylor(functools.partial(function, complex_result=complex_result))(series, output)

    prim.jvp, prim.vjp = jvp, vjp
    prim.taylor = taylor
    batch_matrices(prim)


_rules(sqrtm_p, sqrtm)
_rules(logm_p, logm)


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
        ([2.0 * np.eye(3) + 0.3 * complex_normal(rng, (3, 3))], {}),            # complex, spectrum near 2
        ([(2.0 * np.eye(2) + 0.3 * complex_normal(rng, (2, 2, 2))).astype(np.complex64)], {}),
        ([_positive_spectrum(rng, (3, 3))], {"complex_result": True}),         # a real root, as a complex one
    ]


sqrtm_p.sample = logm_p.sample = _sample
