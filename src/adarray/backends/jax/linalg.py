"""JAX lowerings of the linear-algebra primitives (jax.lax.linalg, jax.numpy.linalg).

Differences from the NumPy backend, all from XLA's routines: a failed factorization (cholesky of
a matrix that is not positive definite, solve with a singular matrix) gives NaN or inf instead of
raising LinAlgError; `eig` (a general, non-symmetric eigenproblem) is implemented by XLA on the
CPU only.

`adjugate_derivative` (d^k adj(A)[E1..Ek], exact at every rank) is the NumPy backend's formula without
its data-dependent choice of a well-conditioned pivot block: A = U S V^H, the directions rotated to
U^H E V, and d^k adj(S + Y) from the expansion in principal minors (weights: products of singular
values; minors of size <= k + 1 by Faddeev-LeVerrier on nilpotent jets), so nothing divides by a
singular value. It needs sum_{c <= k+1} C(n, c) minors (batched per size): past MAX_MINORS (large n and k)
the equation runs on the host (the NumPy implementation, which pivots on the well-conditioned block).
"""
from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ...primitives import eig, factorizations, matrix_functions, spectral, triangular
from .. import nilpotent
from .registry import host_call, lowering

_HIGHEST = jax.lax.Precision.HIGHEST
MAX_MINORS = 50_000


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


# --- derivatives of the adjugate: jets in nilpotent directions (backends/nilpotent.py) ---

def _matrices(x, y):
    return nilpotent.product(x, y, lambda p, q: jnp.matmul(p, q, precision=_HIGHEST))


def _minor_adjugate(values, perturbation, order):
    """adj(diag(values) + Y) as a jet: sum over index sets J of prod_{l not in J} values_l adj(Y_JJ), embedded;
    the sets of one size as one batch (a gather, Faddeev-LeVerrier on the stack, one scatter-add)."""
    size = values.shape[-1]
    batch = jnp.broadcast_shapes(values.shape[:-1], *[y.shape[:-2] for y in perturbation.values()])
    adjugate = {}
    for count in range(1, min(size, order + 1) + 1):
        subsets = np.array(list(itertools.combinations(range(size), count)), dtype=np.int64)
        others = np.array([[l for l in range(size) if l not in subset] for subset in subsets], dtype=np.int64)
        weight = jnp.prod(values[..., others], axis=-1)  # (..., sets)
        rows, cols = subsets[:, :, None], subsets[:, None, :]
        minors = {mask: y[..., rows, cols] for mask, y in perturbation.items()}  # (..., sets, count, count)
        adj_minors, _ = nilpotent.adjugate_and_det(minors, count, order, jnp, _matrices)
        for mask, value in nilpotent.scaled_matrices({0: weight}, adj_minors).items():
            value = jnp.broadcast_to(value, batch + value.shape[-3:])
            embedded = jnp.zeros(batch + (size, size), value.dtype).at[..., rows, cols].add(value)
            adjugate = nilpotent.add(adjugate, {mask: embedded})
    return adjugate


def _minor_count(n, order) -> int:
    return sum(math.comb(n, c) for c in range(1, min(n, order + 1) + 1))


@lowering(matrix_functions.adjugate_derivative_p)
def _adjugate_derivative(a, *directions):
    """d^k adj(A)[E1..Ek] = det(U) det(V^H) V d^k adj(S)[U^H E1 V, ...] U^H (see the module docstring)."""
    n, order = a.shape[-1], len(directions)
    if a.size == 0:
        return jnp.zeros(a.shape, a.dtype)
    full = (1 << order) - 1
    if order == n - 1:  # constant in A: the polarised adjugate of the directions
        polarised = {1 << m: e for m, e in enumerate(directions)}
        adjugate, _ = nilpotent.adjugate_and_det(polarised, n, order, jnp, _matrices)
        return jnp.broadcast_to(adjugate[full], a.shape).astype(a.dtype)
    if _minor_count(n, order) > MAX_MINORS:
        return host_call(matrix_functions.adjugate_derivative_p, [jax.ShapeDtypeStruct(a.shape, a.dtype)],
                         [a, *directions], {})
    u, values, vh = jnp.linalg.svd(a)
    phase = jnp.linalg.det(u) * jnp.linalg.det(vh)  # +-1, or a unit complex number (A = U S V^H)
    sign = (phase / jnp.abs(phase) if jnp.iscomplexobj(phase) else jnp.where(phase < 0, -1.0, 1.0)).astype(a.dtype)
    ut, v = _adjoint(u), _adjoint(vh)
    rotated = {1 << m: jnp.matmul(jnp.matmul(ut, e, precision=_HIGHEST), v, precision=_HIGHEST)
               for m, e in enumerate(directions)}
    inner = _minor_adjugate(values.astype(a.dtype), rotated, order).get(full, jnp.zeros(a.shape, a.dtype))
    out = sign[..., None, None] * jnp.matmul(jnp.matmul(v, inner, precision=_HIGHEST), ut, precision=_HIGHEST)
    return jnp.broadcast_to(out, a.shape).astype(a.dtype)
