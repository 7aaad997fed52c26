"""NumPy implementations of the linear-algebra primitives (LAPACK through NumPy and SciPy).

Every routine takes stacks of matrices (..., m, n), empty stacks and 0x0 matrices included,
returns arrays of its input's dtype, and never writes into its inputs. Failures of the routine
itself (a singular matrix in solve, a matrix that is not positive definite in cholesky) raise
`adarray.primitives.matrices.LinAlgError`, an ExecutionError that is also NumPy's LinAlgError.
A singular triangular matrix is not an error: substitution gives inf or NaN, as IEEE arithmetic does.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
from scipy.linalg import lapack

from ..primitives.matrices import LinAlgError
from .numpy_backend import impl


def _stack(x):
    """x as a C-contiguous (batch, m, n) array, and a function restoring the batch axes."""
    shape = x.shape
    flat = np.ascontiguousarray(x).reshape((-1,) + shape[-2:])
    return flat, lambda y: y.reshape(shape[:-2] + y.shape[1:])


def _raising(name, what):
    def wrap(fn):
        def run(*args, **params):
            try:
                return fn(*args, **params)
            except np.linalg.LinAlgError as error:
                shapes = " and ".join(str(np.shape(a)) for a in args)
                raise LinAlgError(f"{name}: {what} ({error}; operands {shapes})") from None

        return run

    return wrap


# Below this size, substitution in NumPy (vectorised over the batch and the right-hand sides) beats
# one LAPACK call per matrix: a call costs microseconds, and OpenBLAS may wake its threads for it.
_SUBSTITUTION_MAX_N = 16


@impl("triangular_solve")
def _triangular_solve(a, b, *, lower, transpose_a, unit_diagonal):
    if a.size == 0 or b.size == 0:
        return np.zeros(b.shape, b.dtype)
    if a.shape[-1] <= _SUBSTITUTION_MAX_N:
        return _substitute(a, b, lower, transpose_a, unit_diagonal)
    (trtrs,) = lapack.get_lapack_funcs(("trtrs",), (a, b))
    flat_a, _ = _stack(a)
    flat_b, restore = _stack(b)
    out = np.empty_like(flat_b)
    for i in range(flat_a.shape[0]):
        x, info = trtrs(flat_a[i], flat_b[i], lower=int(lower), trans=int(transpose_a), unitdiag=int(unit_diagonal))
        out[i] = x if info == 0 else _substitute(flat_a[i], flat_b[i], lower, transpose_a, unit_diagonal)
    return restore(out)


def _substitute(a, b, lower, transpose_a, unit_diagonal):
    """Forward or back substitution over stacks in IEEE arithmetic (a singular triangle gives inf/NaN)."""
    t = np.swapaxes(a, -1, -2) if transpose_a else a
    lower = lower != transpose_a          # the transposed lower triangle is an upper one
    n = t.shape[-1]
    x = np.zeros(b.shape, b.dtype)
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in order:
            known = slice(0, i) if lower else slice(i + 1, n)
            rest = b[..., i, :] - np.sum(t[..., i, known, None] * x[..., known, :], axis=-2)
            x[..., i, :] = rest if unit_diagonal else rest / t[..., i, i, None]
    return x


@impl("cholesky")
@_raising("cholesky", "the matrix is not positive definite")
def _cholesky(a):
    return np.linalg.cholesky(a)


@impl("solve")
@_raising("solve", "the matrix is singular")
def _solve(a, b):
    return np.linalg.solve(a, b)


@impl("lu")
def _lu(a):
    n = a.shape[-1]
    batch = a.shape[:-2]
    if a.size == 0:
        return [np.zeros(a.shape, a.dtype), np.zeros(batch + (n,), np.int32),
                np.broadcast_to(np.arange(n, dtype=np.int32), batch + (n,)).copy()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a zero pivot is a singular matrix, not an error
        packed, pivots = scipy.linalg.lu_factor(a, check_finite=False)
    pivots = pivots.astype(np.int32)
    return [packed.astype(a.dtype, copy=False), pivots, _pivots_to_permutation(pivots, permutation_size=n)]


@impl("lu_pivots_to_permutation")
def _pivots_to_permutation(pivots, *, permutation_size):
    """Apply LAPACK's row interchanges (row i <-> row pivots[i], in order) to range(size)."""
    size, batch = permutation_size, pivots.shape[:-1]
    permutation = np.broadcast_to(np.arange(size, dtype=np.int32), batch + (size,)).copy()
    flat_pivots = pivots.reshape(-1, pivots.shape[-1])
    flat = permutation.reshape(-1, size)
    rows = np.arange(flat.shape[0])
    for i in range(min(pivots.shape[-1], size)):
        target = flat_pivots[:, i]
        swapped = flat[rows, target].copy()
        flat[rows, target] = flat[:, i]
        flat[:, i] = swapped
    return flat.reshape(batch + (size,))


@impl("qr")
def _qr(a, *, full_matrices):
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return [q, r]


@impl("eigh")
@_raising("eigh", "the eigenvalue iteration did not converge")
def _eigh(a, *, compute_v):
    if not compute_v:
        return [np.linalg.eigvalsh(a, UPLO="L")]
    values, vectors = np.linalg.eigh(a, UPLO="L")
    return [values, vectors]


@impl("svd")
@_raising("svd", "the SVD did not converge")
def _svd(a, *, full_matrices, compute_uv):
    if not compute_uv:
        return [np.linalg.svd(a, compute_uv=False)]
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return [u, s, vh]


@impl("det")
def _det(a):
    return np.asarray(np.linalg.det(a), a.dtype)


@impl("adjugate")
@_raising("adjugate", "the SVD did not converge")
def _adjugate(a):
    """det(U) det(V^H) V diag(prod_{j != i} s_j) U^H: no inverse, exact at every rank."""
    n = a.shape[-1]
    if n == 0:
        return np.zeros(a.shape, a.dtype)
    u, s, vh = np.linalg.svd(a)
    ones = np.ones(s.shape[:-1] + (1,), s.dtype)
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = before * after
    sign = np.linalg.det(u) * np.linalg.det(vh)
    adj = (np.conj(np.swapaxes(vh, -1, -2)) * others[..., None, :]) @ np.conj(np.swapaxes(u, -1, -2))
    return (adj * sign[..., None, None]).astype(a.dtype)


@impl("pinv")
@_raising("pinv", "the SVD did not converge")
def _pinv(a, *, rcond):
    return np.linalg.pinv(a, rcond=rcond)


@impl("expm")
def _expm(a):
    if a.size == 0:
        return np.zeros(a.shape, a.dtype)
    return np.asarray(scipy.linalg.expm(a), a.dtype)


@impl("eig")
@_raising("eig", "the eigenvalue iteration did not converge")
def _eig(a, *, compute_v):
    dtype = np.result_type(a.dtype, np.complex64)
    if not compute_v:
        return [np.linalg.eigvals(a).astype(dtype, copy=False)]
    values, vectors = np.linalg.eig(a)
    return [values.astype(dtype, copy=False), vectors.astype(dtype, copy=False)]
