"""Symmetric eigendecomposition and singular value decomposition.

eigh[compute_v] a -> (w, V) or (w,)
    A = V diag(w) V^T for the symmetric A whose lower triangle is a's (LAPACK's UPLO='L'; the
    derivative is taken with respect to that triangle; anp.linalg.eigh and eigvalsh pass the
    symmetric part (a + a^H) / 2 by default, so theirs is symmetric). w ascending. With K = V^T dA V
    (Giles 2008, sec. 3.1; Magnus 1985):
        dw = diag(K),  dV = V (F o K),  F_ij = 1/(w_j - w_i) (0 on the diagonal),
        A_bar = V (diag(w_bar) + F o (V^T V_bar)) V^T  (then onto the lower triangle).
svd[full_matrices, compute_uv] a -> (U, s, Vh) or (s,)
    A = U diag(s) Vh, s descending. With P = U^T dA V (k = min(m, n) columns; Townsend 2016,
    "Differentiating the singular value decomposition"), ds = diag(P) and
        dU = U Omega_U + (I - U U^T) dA V S^-1,   dV = V Omega_V + (I - V V^T) dA^T U S^-1,
        Omega_U = (F- o (P + P^T) + F+ o (P - P^T)) / 2,   Omega_V = (F- o (P + P^T) - F+ o (P - P^T)) / 2,
    F-_ij = 1/(s_j - s_i), F+_ij = 1/(s_j + s_i): the usual F_ij = 1/(s_j^2 - s_i^2) terms split
    into the part that rotates U and V together (F-) and the part that rotates them against each
    other (F+). The reverse rule is the transpose of these formulas.

Degenerate spectra. Where two eigenvalues (singular values) are equal, the eigenvectors
(singular vectors) of that eigenspace are any orthonormal basis of it, and have no derivative.
Differences |w_j - w_i| at most 16 n eps max|w| count as equal, and their F_ij is set to 0: the
basis of a degenerate eigenspace is taken not to rotate within it. Eigenvalue and singular value
derivatives stay exact, and so does anything that sees a degenerate eigenspace only through its
projector (V_k V_k^T summed over the whole eigenspace, or the U V^T of a singular subspace). A
function V f(w) V^T with f'(w) != 0 at a repeated eigenvalue misses its within-subspace terms
f'(w) (V^T dA V)_ij there: use a dedicated primitive (expm, pinv) for such functions. In
particular the second derivative of a spectral function sum g(w) (whose gradient is V g'(w) V^T)
misses its g''(w) terms inside a repeated eigenspace (e.g. the Hessian of sum(eigvalsh(A)**2) at
A = I); first derivatives are exact there. The same
tolerance makes S^-1 and F+ zero at zero singular values (for those, the singular vectors of a
rectangular matrix are not determined either). In full_matrices mode the extra columns of U (or
rows of Vh) move by the smallest rotation that keeps them orthogonal to the others, as in qr.

Complex matrices: eigh takes the Hermitian matrix whose lower triangle is a's (real eigenvalues),
svd any complex matrix (real singular values). The formulas above hold with conjugate transposes
(K = V^H dA V, dw = Re diag(K); P = U^H dA V, ds = Re diag(P)); the reverse rules are their
transposes under JAX's pairing (matrices.jax_cotangent). Eigenvectors and singular vectors have a
phase of their own (any v e^(i phi) will do); the rules fix it as JAX's do, by taking each to move
orthogonally to itself in the complex sense (diag(V^H dV) = 0 for eigh; for svd the imaginary part
of diag(P) / s is shared by U and V, half each). LAPACK's phases need not follow that, so only
functions that do not depend on the phases (|V|, V f(w) V^H, U V^H, ...) have derivatives that
finite differences of LAPACK's values reproduce.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Eqn
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import real_dtype
from . import elementwise as ew
from .matrices import (
    batch_matrices,
    columns,
    complex_normal,
    conjugate,
    diag_embed,
    diagonal,
    float_matrix,
    gap_inverse,
    hstack,
    jax_cotangent,
    like,
    lower_cotangent,
    matmul,
    mH,
    mT,
    real_part,
    rows,
    safe_inverse,
    scale_columns,
    spd,
    square_matrix,
    sum_inverse,
    symmetric_from_lower,
)
from .rules import aval_of_value
from .taylor import FROM_JVP

# --- eigh ----------------------------------------------------------------------------------------


def _eigh_abstract_eval(a, *, compute_v):
    square_matrix("eigh", a)
    values = a.update(shape=a.shape[:-1], dtype=real_dtype(a.dtype))
    return [values, a] if compute_v else [values]


eigh_p = Primitive("eigh", _eigh_abstract_eval, multiple_results=True)


def eigh(a, compute_v: bool = True):
    """[w, V] (or [w]) of the symmetric matrix whose lower triangle is a's."""
    return eigh_p.bind(a, compute_v=bool(compute_v))


def _eigh_jvp(tangents, primals, outputs, *, compute_v):
    values, vectors = outputs if compute_v else eigh(primals[0])
    projected = matmul(mH(vectors), matmul(symmetric_from_lower(tangents[0]), vectors))   # V^H dA V
    d_values = real_part(diagonal(projected))
    if not compute_v:
        return [d_values]
    return [d_values, matmul(vectors, ew.mul(like(gap_inverse(values), projected), projected))]


def _eigh_vjp(cotangents, primals, outputs, needs, *, compute_v):
    # For complex A the transpose of the jvp is conj(V) (diag(w_bar) + F o (V^T V_bar)) V^T, then onto the
    # lower triangle (for real A the familiar V (...) V^T).
    values, vectors = outputs if compute_v else eigh(primals[0])
    ct_values, ct_vectors = cotangents if compute_v else (cotangents[0], Zero(aval_of_value(vectors)))
    inner = None if is_zero(ct_values) else like(diag_embed(ct_values), vectors)
    if not is_zero(ct_vectors):
        transposed = matmul(mT(vectors), ct_vectors)
        rotation = ew.mul(like(gap_inverse(values), transposed), transposed)
        inner = rotation if inner is None else ew.add(inner, rotation)
    return [lower_cotangent(matmul(conjugate(vectors), matmul(inner, mT(vectors))))]


def _eigh_prune(eqn, used):
    """Only the eigenvalues are read: compute only them (eigvalsh)."""
    if not used[0] or not eqn.params["compute_v"]:
        return eqn
    return Eqn(eqn.prim, eqn.inputs, {**eqn.params, "compute_v": False}, eqn.outputs[:1])


eigh_p.jvp, eigh_p.vjp, eigh_p.prune = _eigh_jvp, _eigh_vjp, _eigh_prune
batch_matrices(eigh_p)


def symmetric_with_spectrum(rng, shape, spectrum, dtype=np.float64):
    """Q diag(spectrum) Q^T with a random orthogonal Q: a symmetric matrix with known eigenvalues."""
    q, _ = np.linalg.qr(rng.normal(size=shape))
    return ((q * np.asarray(spectrum)[..., None, :]) @ np.swapaxes(q, -1, -2)).astype(dtype)


def _with_noise_above(rng, matrix):
    return np.tril(matrix) + np.triu(rng.normal(size=matrix.shape), 1)


eigh_p.sample = lambda rng: [
    ([_with_noise_above(rng, symmetric_with_spectrum(rng, (3, 3), [-2.0, 0.5, 3.0]))], {"compute_v": True}),
    ([symmetric_with_spectrum(rng, (2, 4, 4), [-3.0, -1.0, 1.5, 4.0])], {"compute_v": True}),
    ([symmetric_with_spectrum(rng, (3, 3), [1.0, 2.5, 4.0])], {"compute_v": False}),
    ([rng.normal(size=(1, 1))], {"compute_v": True}),
    ([rng.normal(size=(0, 2, 2))], {"compute_v": True}),
    ([symmetric_with_spectrum(rng, (3, 3), [-2.0, 0.5, 3.0], np.float32)], {"compute_v": True}),
    # complex (Hermitian) matrices: eigenvalues only here, as the phases of LAPACK's eigenvectors are its
    # own (tests/test_complex_linalg.py checks the eigenvectors through functions free of them)
    ([_with_noise_above(rng, spd(rng, (3, 3), np.complex128))], {"compute_v": False}),
]

# --- svd -----------------------------------------------------------------------------------------


def _svd_abstract_eval(a, *, full_matrices, compute_uv):
    float_matrix("svd", a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    values = a.update(shape=batch + (k,), dtype=real_dtype(a.dtype))
    if not compute_uv:
        return [values]
    rows_u, rows_vh = (m, n) if full_matrices else (k, k)
    return [a.update(shape=batch + (m, rows_u)), values, a.update(shape=batch + (rows_vh, n))]


svd_p = Primitive("svd", _svd_abstract_eval, multiple_results=True)


def svd(a, full_matrices: bool = False, compute_uv: bool = True):
    """[U, s, Vh] (or [s]) with a = U diag(s) Vh."""
    return svd_p.bind(a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


def _reduced(u, vh, m, n):
    """The first k = min(m, n) columns of U and rows of Vh (V as columns)."""
    k = min(m, n)
    return columns(u, 0, k), mH(rows(vh, 0, k))


def _svd_jvp(tangents, primals, outputs, *, full_matrices, compute_uv):
    (da,), a = tangents, primals[0]
    m, n = aval_of_value(a).shape[-2:]
    k = min(m, n)
    u_full, values, vh_full = outputs if compute_uv else svd(a)
    u, v = _reduced(u_full, vh_full, m, n)
    projected = matmul(mH(u), matmul(da, v))                                        # P = U^H dA V
    d_values = real_part(diagonal(projected))
    if not compute_uv:
        return [d_values]
    together = ew.mul(like(gap_inverse(values), projected), ew.add(projected, mH(projected)))
    against = ew.mul(like(sum_inverse(values), projected), ew.sub(projected, mH(projected)))
    du = matmul(u, ew.mul(0.5, ew.add(together, against)))
    dv = matmul(v, ew.mul(0.5, ew.sub(together, against)))
    inverse = like(safe_inverse(values), projected)
    if m > k:
        du = ew.add(du, scale_columns(ew.sub(matmul(da, v), matmul(u, projected)), inverse))
    if n > k:
        dv = ew.add(dv, scale_columns(ew.sub(matmul(mH(da), u), matmul(v, mH(projected))), inverse))
    if full_matrices and m > k:
        complement = columns(u_full, k, None)
        du = hstack([du, ew.neg(matmul(u, matmul(mH(du), complement)))])
    if full_matrices and n > k:
        complement = mH(rows(vh_full, k, None))
        dv = hstack([dv, ew.neg(matmul(v, matmul(mH(dv), complement)))])
    return [du, d_values, mH(dv)]


def _svd_vjp(cotangents, primals, outputs, needs, *, full_matrices, compute_uv):
    a = primals[0]
    u_full, values, vh_full = outputs if compute_uv else svd(a)
    if compute_uv:
        ct_u, ct_values, ct_vh = [None if is_zero(c) else c for c in cotangents]
    else:
        ct_u, ct_values, ct_vh = None, cotangents[0], None

    def adjoint(ct_u, ct_values, ct_vh):  # the Hilbert adjoint of the jvp (the real rule with mT -> mH)
        return [_svd_adjoint(a, u_full, values, vh_full, ct_u, ct_values, ct_vh, full_matrices)]

    return jax_cotangent(adjoint, ct_u, ct_values, ct_vh)


def _svd_adjoint(a, u_full, values, vh_full, ct_u, ct_values, ct_vh, full_matrices):
    m, n = aval_of_value(a).shape[-2:]
    k = min(m, n)
    u, v = _reduced(u_full, vh_full, m, n)
    ct_v = None if ct_vh is None else mH(ct_vh)
    if full_matrices and m > k and ct_u is not None:      # dU2 = -U dU^H U2
        complement = columns(u_full, k, None)
        ct_u = ew.sub(columns(ct_u, 0, k), matmul(complement, matmul(mH(columns(ct_u, k, None)), u)))
    if full_matrices and n > k and ct_v is not None:
        complement = mH(rows(vh_full, k, None))
        ct_v = ew.sub(columns(ct_v, 0, k), matmul(complement, matmul(mH(columns(ct_v, k, None)), v)))
    inner = None if ct_values is None else like(diag_embed(ct_values), u)
    inverse = like(safe_inverse(values), u)
    extra = None
    if ct_u is not None or ct_v is not None:
        j_u = None if ct_u is None else matmul(mH(u), ct_u)
        j_v = None if ct_v is None else matmul(mH(v), ct_v)
        both = j_u if j_v is None else j_v if j_u is None else ew.add(j_u, j_v)
        apart = j_u if j_v is None else ew.neg(j_v) if j_u is None else ew.sub(j_u, j_v)
        together = ew.mul(like(gap_inverse(values), both), both)
        against = ew.mul(like(sum_inverse(values), apart), apart)
        rotation = ew.mul(0.5, ew.add(ew.add(together, mH(together)), ew.sub(against, mH(against))))
        inner = rotation if inner is None else ew.add(inner, rotation)
        if m > k and ct_u is not None:
            extra = matmul(scale_columns(ew.sub(ct_u, matmul(u, j_u)), inverse), mH(v))
        if n > k and ct_v is not None:
            extra = matmul(u, mH(scale_columns(ew.sub(ct_v, matmul(v, j_v)), inverse)))
    ct_a = matmul(u, matmul(inner, mH(v)))
    return ct_a if extra is None else ew.add(ct_a, extra)


def _svd_prune(eqn, used):
    """Only the singular values are read: compute only them."""
    if not eqn.params["compute_uv"] or not used[1] or used[0] or used[2]:
        return eqn
    return Eqn(eqn.prim, eqn.inputs, {**eqn.params, "compute_uv": False, "full_matrices": False},
               eqn.outputs[1:2])


svd_p.jvp, svd_p.vjp, svd_p.prune = _svd_jvp, _svd_vjp, _svd_prune
batch_matrices(svd_p)


def matrix_with_singular_values(rng, shape, values, dtype=np.float64):
    """U diag(values) V^T with random orthonormal U, V: a matrix with known singular values."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(rng.normal(size=shape[:-2] + (m, k)))
    v, _ = np.linalg.qr(rng.normal(size=shape[:-2] + (n, k)))
    return ((u * np.asarray(values)[..., None, :]) @ np.swapaxes(v, -1, -2)).astype(dtype)


svd_p.sample = lambda rng: [
    ([matrix_with_singular_values(rng, (3, 3), [3.0, 2.0, 0.7])], {"full_matrices": False, "compute_uv": True}),
    ([matrix_with_singular_values(rng, (4, 2), [2.5, 1.0])], {"full_matrices": False, "compute_uv": True}),
    ([matrix_with_singular_values(rng, (2, 4), [2.5, 1.0])], {"full_matrices": False, "compute_uv": True}),
    ([matrix_with_singular_values(rng, (2, 3, 3), [3.0, 1.5, 0.5])], {"full_matrices": True, "compute_uv": True}),
    ([matrix_with_singular_values(rng, (4, 3), [3.0, 2.0, 1.0])], {"full_matrices": False, "compute_uv": False}),
    ([rng.normal(size=(1, 1)) + 2.0], {"full_matrices": False, "compute_uv": True}),
    ([rng.normal(size=(0, 3, 2))], {"full_matrices": False, "compute_uv": True}),
    ([matrix_with_singular_values(rng, (3, 2), [2.0, 1.0], np.float32)], {"full_matrices": False, "compute_uv": True}),
    ([complex_normal(rng, (3, 2))], {"full_matrices": False, "compute_uv": False}),  # (phases: see eigh)
]


def _set_taylor_rules():
    """Taylor mode: the series of the jvp rules (exact; each re-binds its decomposition once)."""
    eigh_p.taylor = svd_p.taylor = FROM_JVP


_set_taylor_rules()
