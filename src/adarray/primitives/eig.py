"""The eigendecomposition of a general square matrix: eig[compute_v] a -> (w, V) or (w,).

A V = V diag(w) with complex w and V (also for real a), as numpy.linalg.eig (LAPACK geev): each
eigenvector has norm 1 and its largest component (the first at a tie) real. With K = V^-1 dA V and
F_ij = 1/(w_j - w_i) (0 on the diagonal and where eigenvalues are degenerate, as for eigh):

    dw = diag(K)                                   (Magnus 1985; JAX's eigenvalue rule)
    dV = dV0 + V diag(c),  dV0 = V (F o K),        c_j = -Re(v_j^H dv0_j) - i Im(dv0_rj) / v_rj

where r_j is the row of v_j's largest component: the first term of c keeps |v_j| = 1, the second
keeps v_rj real, so that dV is the derivative of the V that LAPACK returns (finite differences of
numpy.linalg.eig reproduce it, wherever r_j does not change). The reverse rule is the transpose under
JAX's pairing Re(sum u * v), with real parts taken for a real a:

    A_bar = V^-T (diag(w_bar) + F o (V^T V0_bar)) V^T,
    V0_bar = V_bar - conj(V) diag(Re c_bar) - i E_r diag(Im c_bar / v_r),  c_bar = diag(V^T V_bar),

E_r the one-hot rows r_j. JAX differentiates only the eigenvalues; autograd's eigenvector rule
keeps the norm but not the phase of LAPACK's vectors (the same for phase-free functions like |V|).
Degenerate eigenvalues (a defective or derogatory matrix) have no eigenvector derivative; there
the F_ij = 0 convention gives one.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import complex_dtype, is_complex
from . import complex as cp
from . import elementwise as ew
from .factorizations import solve
from .matrices import batch_matrices, diag_embed, diagonal, gap_inverse, like, matmul, mT, scale_columns
from .reduce import argmax, reduce_sum
from .rules import aval_of_value
from .structural import broadcast_in_dim
from .taylor import FROM_JVP


def _eig_abstract_eval(a, *, compute_v):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"eig: a must be a square matrix or a stack of them (..., n, n), got {a}")
    if not np.issubdtype(a.dtype, np.inexact):
        raise ShapeError(f"eig: a must be float32, float64, complex64 or complex128, got {a}")
    dtype = complex_dtype(a.dtype)
    values = a.update(shape=a.shape[:-1], dtype=dtype)
    return [values, a.update(dtype=dtype)] if compute_v else [values]


eig_p = Primitive("eig", _eig_abstract_eval, multiple_results=True)


def eig(a, compute_v: bool = True):
    """[w, V] (or [w]) with a V = V diag(w); complex, as numpy.linalg.eig."""
    return eig_p.bind(a, compute_v=bool(compute_v))


def _largest_rows(vectors):
    """E_r: for each column j, the one-hot column marking the row of its largest |v_ij| (a constant)."""
    aval = aval_of_value(vectors)
    magnitude = ew.abs(vectors)
    rows = argmax(magnitude, aval.ndim - 2)                                        # (..., n)
    n = aval.shape[-1]
    index = broadcast_in_dim(np.arange(n), aval.shape, (aval.ndim - 2,))
    chosen = broadcast_in_dim(rows, aval.shape, tuple(range(aval.ndim - 2)) + (aval.ndim - 1,))
    return ew.convert(ew.eq(index, chosen), aval.dtype)


def _column_sums(x):
    return reduce_sum(x, (aval_of_value(x).ndim - 2,))


def _eig_jvp(tangents, primals, outputs, *, compute_v):
    (da,), a = tangents, primals[0]
    values, vectors = outputs if compute_v else eig(a)
    da = like(da, vectors)
    projected = solve(vectors, matmul(da, vectors))                                # K = V^-1 dA V
    d_values = diagonal(projected)
    if not compute_v:
        return [d_values]
    d_vectors = matmul(vectors, ew.mul(gap_inverse(values), projected))          # dV0 = V (F o K)
    pick = _largest_rows(vectors)
    norm_part = cp.real(_column_sums(ew.mul(cp.conj(vectors), d_vectors)))       # Re(v_j^H dv0_j)
    phase_part = ew.div(cp.imag(_column_sums(ew.mul(pick, d_vectors))), cp.real(_column_sums(ew.mul(pick, vectors))))
    correction = cp.complex(ew.neg(norm_part), ew.neg(phase_part))
    return [d_values, ew.add(d_vectors, scale_columns(vectors, correction))]


def _eig_vjp(cotangents, primals, outputs, needs, *, compute_v):
    a = primals[0]
    values, vectors = outputs if compute_v else eig(a)
    ct_values, ct_vectors = cotangents if compute_v else (cotangents[0], Zero(aval_of_value(vectors)))
    inner = None if is_zero(ct_values) else diag_embed(ct_values)
    if not is_zero(ct_vectors):
        transposed = diagonal(matmul(mT(vectors), ct_vectors))                   # c_bar = diag(V^T V_bar)
        pick = _largest_rows(vectors)
        leading = cp.real(_column_sums(ew.mul(pick, vectors)))                   # v_rj (real)
        through_phase = cp.complex(ew.zeros_like(leading), ew.neg(ew.div(cp.imag(transposed), leading)))
        through_norm = like(ew.neg(cp.real(transposed)), vectors)
        ct_rotated = ew.add(ct_vectors, ew.add(scale_columns(cp.conj(vectors), through_norm),
                                               scale_columns(pick, through_phase)))
        rotation = ew.mul(gap_inverse(values), matmul(mT(vectors), ct_rotated))
        inner = rotation if inner is None else ew.add(inner, rotation)
    vectors_t = mT(vectors)
    ct_a = solve(vectors_t, matmul(inner, vectors_t))                           # V^-T inner V^T
    return [ct_a if is_complex(aval_of_value(a).dtype) else cp.real(ct_a)]


eig_p.jvp, eig_p.vjp = _eig_jvp, _eig_vjp


def _set_taylor_rule():
    """Taylor mode: the series of the jvp rule (exact; it re-binds eig once per order)."""
    eig_p.taylor = FROM_JVP


_set_taylor_rule()
batch_matrices(eig_p)


def matrix_with_eigenvalues(rng, shape, values, dtype=np.complex128):
    """X diag(values) X^-1 with a random well-conditioned X: a matrix with known eigenvalues."""
    n = shape[-1]
    x = rng.normal(size=shape) + n * np.eye(n)
    if is_complex(dtype):
        x = x + 1j * rng.normal(size=shape)
    return ((x * np.asarray(values)[..., None, :]) @ np.linalg.inv(x)).astype(dtype)


eig_p.sample = lambda rng: [
    ([matrix_with_eigenvalues(rng, (3, 3), [2.0 + 1j, -1.0, 0.5 - 0.5j])], {"compute_v": True}),
    ([matrix_with_eigenvalues(rng, (3, 3), [2.0, -1.5, 0.5], np.float64)], {"compute_v": True}),
    ([np.array([[0.5, -2.0, 0.3], [1.5, 0.2, -0.4], [0.1, 0.7, 1.2]])], {"compute_v": True}),  # a complex pair
    ([matrix_with_eigenvalues(rng, (2, 3, 3), [3.0, 1.0 + 2j, -1.0])], {"compute_v": False}),
    ([rng.normal(size=(1, 1))], {"compute_v": True}),
    ([rng.normal(size=(0, 2, 2))], {"compute_v": True}),
    ([matrix_with_eigenvalues(rng, (2, 2), [1.0, -2.0 + 0.5j], np.complex64)], {"compute_v": True}),
]
