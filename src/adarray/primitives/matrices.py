"""Matrix helpers that the linear-algebra rules are written in, and the linear-algebra error.

Every matrix has shape (..., m, n): the leading axes are a batch, and both operands of a
product carry the same batch axes. The helpers emit IR through binders (einsum, select,
transpose, ...), so a rule written with them can be differentiated again; on plain arrays
they compute at once.

    matmul(a, b)        a @ b over the batch          mT(a)             swap the last two axes
    tril(a, k), triu    one triangle (select, so inf/NaN elsewhere never leak in)
    diagonal(a)         (..., n, n) -> (..., n)       diag_embed(d)     (..., n) -> (..., n, n)
    symmetric_from_lower(a)   tril(a) + tril(a, -1)^T: the symmetric matrix a routine that reads
                              only the lower triangle (LAPACK's UPLO='L') works on (Hermitian for
                              complex a: tril(a, -1) + tril(a, -1)^H + Re diag(a))
    lower_cotangent(s)  its adjoint: the cotangent of `a` given the cotangent `s` of that matrix
    scale_columns(a, s) a * s[..., None, :]           gap_inverse(w)    1/(w_j - w_i), 0 when degenerate

Complex matrices (JAX's conventions, see primitives/complex.py): mH(a) is the conjugate transpose
(mT for real a), conjugate(a) and real_part(a) are the identity on real a. The holomorphic
routines (solve, lu, triangular_solve, det, expm) use their real rules unchanged: a linear
transpose needs no conjugate. The others (eigh, svd, qr, cholesky, pinv) write their jvp with mH
and get their vjp from the Hilbert adjoint of that jvp (the real rule with mT -> mH) as
vjp(c) = conj(adjoint(conj(c))) (`jax_cotangent`), which is the transpose under Re(sum u * v).
"""
from __future__ import annotations

import string

import numpy as np

from ..core.errors import ExecutionError, ShapeError
from ..core.types import Aval, is_complex, is_float
from . import elementwise as ew
from .complex import conj, real
from .linalg import einsum
from .reduce import reduce, reduce_sum
from .rules import aval_of_value, batch_all
from .structural import broadcast_in_dim, concatenate, slice_array, transpose


class LinAlgError(ExecutionError, np.linalg.LinAlgError):
    """A matrix routine failed on its values: a singular matrix in solve, a matrix that is not
    positive definite in cholesky, an SVD or eigendecomposition that did not converge. It is an
    `adarray.ExecutionError` and also a `numpy.linalg.LinAlgError`, so code written for NumPy
    catches it."""


_BATCH_LETTERS = string.ascii_uppercase


def _batch(x) -> str:
    return _BATCH_LETTERS[: aval_of_value(x).ndim - 2]


def matmul(a, b):
    """a @ b for (..., m, k) and (..., k, n) with the same batch axes."""
    batch = _batch(a)
    return einsum(f"{batch}ij,{batch}jk->{batch}ik", a, b)


def trace_product(a, b):
    """tr(a @ b) per batch element: sum_ij a_ij b_ji."""
    batch = _batch(a)
    return einsum(f"{batch}ij,{batch}ji->{batch}", a, b)


def mT(a):  # noqa: N802 - the Array API's name for the matrix transpose
    ndim = aval_of_value(a).ndim
    return transpose(a, tuple(range(ndim - 2)) + (ndim - 1, ndim - 2))


def is_complex_matrix(x) -> bool:
    return is_complex(aval_of_value(x).dtype)


def conjugate(x):
    """conj(x) of a complex x; a real x itself."""
    if not is_complex_matrix(x):
        return x

    return conj(x)


def real_part(x):
    """real(x) of a complex x; a real x itself."""
    if not is_complex_matrix(x):
        return x

    return real(x)


def mH(a):  # noqa: N802 - the Array API's name for the conjugate transpose
    """The conjugate transpose of the last two axes (the transpose for real a)."""
    return conjugate(mT(a))


def like(x, other):
    """x (real) in the dtype of `other` (complex for complex matrices), to combine with it."""
    return ew.convert(x, aval_of_value(other).dtype)


def jax_cotangent(adjoint, *cotangents):
    """JAX's cotangents (the transpose under Re(sum u * v)) from a Hilbert-adjoint formula `adjoint`
    (the transpose under Re(sum conj(u) v), which is the real rule with mT -> mH): conj(adjoint(conj(c))).
    None cotangents stay None; the conjugates cost nothing for real values."""
    results = adjoint(*[None if c is None else conjugate(c) for c in cotangents])
    if isinstance(results, list):
        return [None if r is None else conjugate(r) for r in results]
    return conjugate(results)


def _mask(x, mask_2d):
    aval = aval_of_value(x)
    return broadcast_in_dim(np.asarray(mask_2d, bool), aval.shape, (aval.ndim - 2, aval.ndim - 1))


def _select_mask(x, mask_2d):
    return ew.select(_mask(x, mask_2d), x, ew.zeros_like(x))


def tril(x, k: int = 0):
    m, n = aval_of_value(x).shape[-2:]
    return _select_mask(x, np.tri(m, n, k, dtype=bool))


def triu(x, k: int = 0):
    m, n = aval_of_value(x).shape[-2:]
    return _select_mask(x, ~np.tri(m, n, k - 1, dtype=bool))


def eye_like(x):
    """The identity of x's matrix shape, broadcast over x's batch (a constant)."""
    aval = aval_of_value(x)
    m, n = aval.shape[-2:]
    return broadcast_in_dim(np.eye(m, n, dtype=aval.dtype), aval.shape, (aval.ndim - 2, aval.ndim - 1))


def diagonal(x):
    """(..., n, n) -> (..., n)."""
    aval = aval_of_value(x)
    m, n = aval.shape[-2:]
    return reduce_sum(_select_mask(x, np.eye(m, n, dtype=bool)), (aval.ndim - 1,))


def diag_embed(d):
    """(..., n) -> (..., n, n) with d on the diagonal."""
    aval = aval_of_value(d)
    n = aval.shape[-1]
    rows = broadcast_in_dim(d, aval.shape + (n,), tuple(range(aval.ndim - 1)) + (aval.ndim,))
    return _select_mask(rows, np.eye(n, dtype=bool))


def scale_columns(x, s):
    """x * s[..., None, :]: column j scaled by s_j."""
    aval = aval_of_value(x)
    return ew.mul(x, broadcast_in_dim(s, aval.shape, tuple(range(aval.ndim - 2)) + (aval.ndim - 1,)))


def _real_diagonal(x):
    """The real parts of x's diagonal, as a diagonal matrix of x's (complex) dtype."""
    m, n = aval_of_value(x).shape[-2:]
    return like(real_part(_select_mask(x, np.eye(m, n, dtype=bool))), x)


def symmetric_from_lower(x):
    """The symmetric (complex: Hermitian) matrix whose lower triangle is x's, as LAPACK reads it with
    UPLO='L' (the imaginary parts of a complex diagonal are ignored)."""
    if not is_complex_matrix(x):
        return ew.add(tril(x), mT(tril(x, -1)))
    strict = tril(x, -1)
    return ew.add(ew.add(strict, mH(strict)), _real_diagonal(x))


def lower_cotangent(s):
    """The adjoint of symmetric_from_lower: <s, symmetric_from_lower(x)> = <lower_cotangent(s), x>
    (for complex values, the transpose under Re(sum u * v): s_ij + conj(s_ji) below the diagonal,
    Re(s_ii) on it)."""
    if not is_complex_matrix(s):
        return ew.add(tril(s), tril(mT(s), -1))
    return ew.add(ew.add(tril(s, -1), tril(mH(s), -1)), _real_diagonal(s))


def columns(x, start, stop):
    ndim = aval_of_value(x).ndim
    return slice_array(x, (0,) * (ndim - 1) + (start,), (None,) * (ndim - 1) + (stop,), (1,) * ndim)


def rows(x, start, stop):
    ndim = aval_of_value(x).ndim
    starts = (0,) * (ndim - 2) + (start, 0)
    stops = (None,) * (ndim - 2) + (stop, None)
    return slice_array(x, starts, stops, (1,) * ndim)


def hstack(xs):
    return concatenate(xs, aval_of_value(xs[0]).ndim - 1)


def vstack(xs):
    return concatenate(xs, aval_of_value(xs[0]).ndim - 2)


def zeros(shape, dtype):
    return np.broadcast_to(np.zeros((), dtype), tuple(shape))


def degeneracy_tolerance(values, n: int):
    """Differences below this count as zero: 16 n eps times the largest |value| of each batch element
    (about the accuracy LAPACK computes eigenvalues and singular values with)."""
    aval = aval_of_value(values)
    scale = reduce(ew.abs(values), "max", (aval.ndim - 1,)) if n else ew.zeros_like(values)
    return ew.mul(float(16 * max(n, 1) * np.finfo(aval.dtype).eps), scale)


def _pairwise(values, combine):
    """combine(v_j, v_i) at [..., i, j]."""
    aval = aval_of_value(values)
    n = aval.shape[-1]
    shape = aval.shape + (n,)
    batch = tuple(range(aval.ndim - 1))
    by_column = broadcast_in_dim(values, shape, batch + (aval.ndim,))
    by_row = broadcast_in_dim(values, shape, batch + (aval.ndim - 1,))
    return combine(by_column, by_row)


def _tolerance_matrix(values):
    aval = aval_of_value(values)
    n = aval.shape[-1]
    tolerance = degeneracy_tolerance(values, n)
    return broadcast_in_dim(tolerance, aval.shape + (n,), tuple(range(aval.ndim - 1)))


def safe_reciprocal(x, zero_where):
    """1/x where `zero_where` is false, else 0; never divides by the values it discards."""
    one, zero = ew.full_like(x, 1.0), ew.zeros_like(x)
    return ew.select(zero_where, zero, ew.div(one, ew.select(zero_where, one, x)))


def gap_inverse(values):
    """F[..., i, j] = 1/(v_j - v_i), and 0 where |v_j - v_i| <= degeneracy_tolerance (the diagonal
    included): the convention for the eigenvector and singular-vector derivatives of a degenerate
    spectrum (see adarray.numpy.linalg)."""
    gaps = _pairwise(values, ew.sub)
    return safe_reciprocal(gaps, ew.le(ew.abs(gaps), _tolerance_matrix(values)))


def sum_inverse(values):
    """1/(v_j + v_i), and 0 where v_j + v_i <= degeneracy_tolerance (both singular values zero)."""
    sums = _pairwise(values, ew.add)
    return safe_reciprocal(sums, ew.le(sums, _tolerance_matrix(values)))


def safe_inverse(values):
    """1/v, and 0 where v <= degeneracy_tolerance (zero singular values)."""
    aval = aval_of_value(values)
    tolerance = broadcast_in_dim(degeneracy_tolerance(values, aval.shape[-1]), aval.shape,
                                 tuple(range(aval.ndim - 1)))
    return safe_reciprocal(values, ew.le(values, tolerance))


def square_matrix(name: str, aval: Aval, what: str = "a"):
    """Raise ShapeError unless aval is a float (..., n, n) stack."""
    if aval.ndim < 2 or aval.shape[-1] != aval.shape[-2]:
        raise ShapeError(f"{name}: {what} must be a square matrix or a stack of them (..., n, n), got {aval}")
    float_matrix(name, aval, what)


def float_matrix(name: str, aval: Aval, what: str = "a"):
    if aval.ndim < 2:
        raise ShapeError(f"{name}: {what} must be a matrix or a stack of them (..., m, n), got {aval}")
    if not is_float(aval.dtype):
        raise ShapeError(f"{name}: {what} must be float32, float64, complex64 or complex128, got {aval}")


def batch_matrices(prim):
    """The batching rule of a primitive over (..., m, n) operands: unbatched operands get the
    batch axis, then the primitive runs with one more leading axis."""

    def batch(args, batched, size, **params):
        out = prim.bind(*batch_all(args, batched, size), **params)
        return out, ([True] * len(out) if prim.multiple_results else True)

    prim.batch = batch


def complex_normal(rng, shape, dtype=np.complex128):
    """Normal real and imaginary parts (for samplers and tests)."""
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)


def spd(rng, shape, dtype=np.float64):
    """Well-conditioned symmetric (complex dtype: Hermitian) positive definite matrices B B^H + n I
    (for samplers and tests)."""
    n = shape[-1]
    b = rng.normal(size=shape)
    if is_complex(dtype):
        b = b + 1j * rng.normal(size=shape)
    return (b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)).astype(dtype)
