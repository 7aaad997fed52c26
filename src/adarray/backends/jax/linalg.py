"""JAX lowerings of the linear-algebra primitives (jax.lax.linalg, jax.numpy.linalg).

Differences from the NumPy backend, all from XLA's routines: a failed factorization (cholesky of
a matrix that is not positive definite, solve with a singular matrix) gives NaN or inf instead of
raising LinAlgError; `eig` (a general, non-symmetric eigenproblem) is implemented by XLA on the
CPU only. The higher derivatives of the adjugate (exact jets at every rank) run on the host.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ...primitives import eig, factorizations, matrix_functions, spectral, triangular
from .registry import host_callback, lowering

_HIGHEST = jax.lax.Precision.HIGHEST


@lowering(triangular.triangular_solve_p)
def _triangular_solve(a, b, *, lower, transpose_a, unit_diagonal):
    if a.size == 0 or b.size == 0:
        return jnp.zeros(b.shape, b.dtype)
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    return jax.lax.linalg.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=transpose_a,
                                           conjugate_a=False, unit_diagonal=unit_diagonal)


@lowering(triangular.cholesky_p)
def _cholesky(a):
    return jax.lax.linalg.cholesky(a, symmetrize_input=False)  # the lower triangle only, as LAPACK


@lowering(factorizations.solve_p)
def _solve(a, b):
    return jnp.linalg.solve(a, b)


@lowering(factorizations.lu_p)
def _lu(a):
    n, batch = a.shape[-1], a.shape[:-2]
    if a.size == 0:
        return [jnp.zeros(a.shape, a.dtype), jnp.zeros(batch + (n,), jnp.int32),
                jnp.broadcast_to(jnp.arange(n, dtype=jnp.int32), batch + (n,))]
    packed, pivots, permutation = jax.lax.linalg.lu(a)
    return [packed, pivots.astype(jnp.int32), permutation.astype(jnp.int32)]


@lowering(factorizations.lu_pivots_to_permutation_p)
def _pivots_to_permutation(pivots, *, permutation_size):
    return jax.lax.linalg.lu_pivots_to_permutation(pivots.astype(jnp.int32), permutation_size)


@lowering(factorizations.qr_p)
def _qr(a, *, full_matrices):
    q, r = jnp.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return [q, r]


@lowering(spectral.eigh_p)
def _eigh(a, *, compute_v):
    # The lower triangle only, as LAPACK (and the NumPy backend): no symmetrization of the input.
    values, vectors = jnp.linalg.eigh(a, UPLO="L", symmetrize_input=False)
    return [values, vectors] if compute_v else [values]


@lowering(spectral.svd_p)
def _svd(a, *, full_matrices, compute_uv):
    if not compute_uv:
        return [jnp.linalg.svd(a, compute_uv=False)]
    u, s, vh = jnp.linalg.svd(a, full_matrices=full_matrices)
    return [u, s, vh]


@lowering(matrix_functions.det_p)
def _det(a):
    return jnp.linalg.det(a)


def _adjoint(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


@lowering(matrix_functions.adjugate_p)
def _adjugate(a):
    """det(U) det(V^H) V diag(prod_{j != i} s_j) U^H: no inverse, exact at every rank."""
    n = a.shape[-1]
    if n == 0:
        return jnp.zeros(a.shape, a.dtype)
    u, s, vh = jnp.linalg.svd(a)
    ones = jnp.ones(s.shape[:-1] + (1,), s.dtype)
    before = jnp.cumprod(jnp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = jnp.flip(jnp.cumprod(jnp.concatenate([ones, jnp.flip(s[..., 1:], -1)], axis=-1), axis=-1), -1)
    sign = jnp.linalg.det(u) * jnp.linalg.det(vh)
    adj = jnp.matmul(_adjoint(vh) * (before * after)[..., None, :], _adjoint(u), precision=_HIGHEST)
    return adj * sign[..., None, None]


@lowering(matrix_functions.pinv_p)
def _pinv(a, *, rcond):
    if a.size == 0:
        return jnp.zeros(a.shape[:-2] + a.shape[:-3:-1], a.dtype)
    return jnp.linalg.pinv(a, rtol=rcond)


@lowering(matrix_functions.expm_p)
def _expm(a):
    if a.size == 0:
        return jnp.zeros(a.shape, a.dtype)
    return jax.scipy.linalg.expm(a)


@lowering(eig.eig_p)
def _eig(a, *, compute_v):
    if not compute_v:
        return [jnp.linalg.eigvals(a)]
    values, vectors = jnp.linalg.eig(a)
    return [values, vectors]


host_callback(matrix_functions.adjugate_derivative_p)
