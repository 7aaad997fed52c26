"""General solves and the LU and QR factorisations.

solve a b -> x            A x = b for (..., n, n) a and (..., n, k) b (same batch axes).
    dx = A^-1 (db - dA x);  b_bar = A^-T x_bar,  a_bar = -b_bar x^T  (Giles 2008, sec. 3.1).
lu a -> (lu, pivots, permutation)
    partial pivoting, as LAPACK getrf / scipy.linalg.lu_factor: a[permutation] = L U with L unit
    lower and U upper, both packed in `lu`; `pivots` are LAPACK's row interchanges (0-based).
    With P the permutation matrix and X = L^-1 P dA U^-1:  dL = L tril(X, -1), dU = triu(X) U;
    and P A_bar = L^-T (tril(L^T L_bar, -1) + triu(U_bar U^T)) U^-T. Square matrices only.
qr[full_matrices] a -> (q, r)
    Householder QR (numpy.linalg.qr, modes 'reduced' / 'complete'). For m >= n, with
    C = Q^T dA R^-1 and Omega = tril(C, -1) - tril(C, -1)^T (Walter and Lehmann 2018; JAX):
        dQ = Q (Omega - C) + dA R^-1,   dR = (C - Omega) R,
        A_bar = [Q_bar + Q (tril(M - M^T, -1) - M)] R^-T,  M = Q^T Q_bar - R_bar R^T.
    m < n: A = [X | Y] with Q R1 = X (square) and R2 = Q^T Y. Complete mode with m > n: the extra
    columns Q2 of Q are one orthonormal basis of the complement, not unique; they move by the
    smallest rotation that keeps them orthogonal to Q1, dQ2 = -Q1 dQ1^T Q2, so quantities that do
    not depend on the choice of basis (Q2 Q2^T) have exact derivatives.
Complex matrices: solve and lu are holomorphic, so their rules hold unchanged (JAX's reverse mode is
the linear transpose, no conjugate). qr uses conjugate transposes, and Omega also takes the imaginary
part of diag(C), since LAPACK's R has a real diagonal (JAX's rule); its reverse rule is the
transpose under JAX's pairing (matrices.jax_cotangent).
Rank-deficient input: values are LAPACK's; derivatives divide by the diagonal of R (or U) and are
inf or NaN there, as the factors are not differentiable (not even unique) at such matrices.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import Aval
from . import elementwise as ew
from .matrices import (
    batch_matrices,
    columns,
    complex_normal,
    eye_like,
    float_matrix,
    hstack,
    is_complex_matrix,
    jax_cotangent,
    matmul,
    mH,
    mT,
    real_part,
    rows,
    square_matrix,
    tril,
    triu,
    vstack,
    zeros,
)
from .rules import add_tangents, aval_of_value, nondifferentiable
from .structural import broadcast_in_dim
from .taylor import FROM_JVP, sub, total
from .triangular import triangular_solve

# --- solve ---------------------------------------------------------------------------------------


def _solve_abstract_eval(a, b):
    square_matrix("solve", a)
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"solve: b must have shape {a.shape[:-1]} + (k,) to match a {a}, got {b}")
    if b.dtype != a.dtype:
        raise ShapeError(f"solve: a {a} and b {b} differ in dtype")
    return b


solve_p = Primitive("solve", _solve_abstract_eval)


def solve(a, b):
    """x with a x = b, for (..., n, n) a and (..., n, k) b with the same batch axes."""
    return solve_p.bind(a, b)


def _solve_jvp(tangents, primals, output):
    (ta, tb), (a, _) = tangents, primals
    rhs = Zero(aval_of_value(output)) if is_zero(tb) else tb
    if not is_zero(ta):
        rhs = add_tangents(rhs, ew.neg(matmul(ta, output)))
    return solve(a, rhs)


def _solve_vjp(cotangent, primals, output, needs):
    a, _ = primals
    ct_b = solve(mT(a), cotangent)
    ct_a = ew.neg(matmul(ct_b, mT(output))) if needs[0] else None
    return [ct_a, ct_b if needs[1] else None]


solve_p.jvp, solve_p.vjp = _solve_jvp, _solve_vjp
batch_matrices(solve_p)
solve_p.sample = lambda rng: [
    ([rng.normal(size=(3, 3)) + 3 * np.eye(3), rng.normal(size=(3, 2))], {}),
    ([rng.normal(size=(2, 4, 4)) + 4 * np.eye(4), rng.normal(size=(2, 4, 1))], {}),
    ([rng.normal(size=(1, 1)) + 2.0, rng.normal(size=(1, 3))], {}),
    ([rng.normal(size=(0, 2, 2)), rng.normal(size=(0, 2, 2))], {}),
    ([(rng.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float32), rng.normal(size=(3, 2)).astype(np.float32)],
     {}),
    ([complex_normal(rng, (3, 3)) + 3 * np.eye(3), complex_normal(rng, (3, 2))], {}),
]

# --- lu ------------------------------------------------------------------------------------------


def _lu_abstract_eval(a):
    square_matrix("lu", a)
    index = Aval(a.shape[:-1], np.int32)
    return [a, index, index]


lu_p = Primitive("lu", _lu_abstract_eval, multiple_results=True)


def lu(a):
    """(lu, pivots, permutation) of a square matrix (stack); see the module docstring."""
    return lu_p.bind(a)


def permutation_matrix(permutation, dtype):
    """P with P[..., i, j] = (permutation[..., i] == j), so that P @ a == a[permutation]."""
    aval = aval_of_value(permutation)
    n = aval.shape[-1]
    shape = aval.shape + (n,)
    rows_ = broadcast_in_dim(permutation, shape, tuple(range(aval.ndim)))
    targets = broadcast_in_dim(np.arange(n, dtype=aval.dtype), shape, (aval.ndim,))
    return ew.convert(ew.eq(rows_, targets), dtype)


def unpack_lu(packed):
    """(L, U) from the packed factor: L unit lower triangular, U upper triangular."""
    return ew.add(tril(packed, -1), eye_like(packed)), triu(packed)


def _lu_jvp(tangents, primals, outputs):
    packed, pivots, permutation = outputs
    lower, upper = unpack_lu(packed)
    moved = matmul(permutation_matrix(permutation, aval_of_value(packed).dtype), tangents[0])  # P dA
    left = triangular_solve(packed, moved, lower=True, unit_diagonal=True)                      # L^-1 P dA
    x = mT(triangular_solve(packed, mT(left), lower=False, transpose_a=True))                  # ... U^-1
    d_packed = ew.add(matmul(lower, tril(x, -1)), matmul(triu(x), upper))
    return [d_packed, Zero(aval_of_value(pivots)), Zero(aval_of_value(permutation))]


def _lu_vjp(cotangents, primals, outputs, needs):
    packed, _, permutation = outputs
    if is_zero(cotangents[0]):
        return [None]
    ct = cotangents[0]
    lower, upper = unpack_lu(packed)
    inner = ew.add(tril(matmul(mT(lower), tril(ct, -1)), -1), triu(matmul(triu(ct), mT(upper))))
    left = triangular_solve(packed, inner, lower=True, transpose_a=True, unit_diagonal=True)   # L^-T G
    moved = mT(triangular_solve(packed, mT(left), lower=False))                                # ... U^-T
    return [matmul(mT(permutation_matrix(permutation, aval_of_value(packed).dtype)), moved)]


lu_p.jvp, lu_p.vjp = _lu_jvp, _lu_vjp
batch_matrices(lu_p)


def _pivots_abstract_eval(pivots, *, permutation_size):
    if pivots.ndim < 1 or not np.issubdtype(pivots.dtype, np.integer):
        raise ShapeError(f"lu_pivots_to_permutation: pivots must be integers (..., k), got {pivots}")
    return pivots.update(shape=pivots.shape[:-1] + (permutation_size,), dtype=np.int32)


lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation", _pivots_abstract_eval)


def lu_pivots_to_permutation(pivots, size: int):
    """The permutation that LAPACK's row interchanges (row i swapped with pivots[i], in order) make
    of range(size): a[permutation] = L U."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(size))


nondifferentiable(lu_pivots_to_permutation_p)
lu_pivots_to_permutation_p.batch = lambda args, batched, size, **params: (
    lu_pivots_to_permutation_p.bind(args[0], **params), True)
lu_pivots_to_permutation_p.sample = lambda rng: [
    ([np.array([2, 1, 2], np.int32)], {"permutation_size": 3}),
    ([np.array([[1, 1], [0, 1]], np.int32)], {"permutation_size": 3}),
]
lu_p.sample = lambda rng: [
    ([rng.normal(size=(4, 4))], {}),
    ([rng.normal(size=(2, 3, 3))], {}),
    ([rng.normal(size=(1, 1)) + 1.0], {}),
    ([rng.normal(size=(0, 2, 2))], {}),
    ([rng.normal(size=(3, 3)).astype(np.float32)], {}),
    ([complex_normal(rng, (3, 3))], {}),
]

# --- qr ------------------------------------------------------------------------------------------


def _qr_abstract_eval(a, *, full_matrices):
    float_matrix("qr", a)
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    return [a.update(shape=a.shape[:-2] + (m, k)), a.update(shape=a.shape[:-2] + (k, n))]


qr_p = Primitive("qr", _qr_abstract_eval, multiple_results=True)


def qr(a, full_matrices: bool = False):
    """(q, r) with q r = a, q orthonormal columns, r upper triangular (numpy.linalg.qr)."""
    return qr_p.bind(a, full_matrices=bool(full_matrices))


def _right_solve_upper(x, r):
    """x R^-1 for upper triangular R."""
    return mT(triangular_solve(r, mT(x), lower=False, transpose_a=True))


def _imaginary_diagonal(x):
    """i Im(diag(x)) as a diagonal matrix (0 for real x): the rotation of Q that keeps diag(R) real."""
    if not is_complex_matrix(x):
        return None
    diagonal_part = ew.mul(x, eye_like(x))
    return ew.sub(diagonal_part, ew.convert(real_part(diagonal_part), aval_of_value(x).dtype))


def _tall_jvp(q, r, da):
    """(dQ, dR) for a = q r with q (m, n), r (n, n), m >= n."""
    b = _right_solve_upper(da, r)                  # dA R^-1
    c = matmul(mH(q), b)                           # Q^H dA R^-1
    below = tril(c, -1)
    omega = ew.sub(below, mH(below))
    imaginary = _imaginary_diagonal(c)
    if imaginary is not None:
        omega = ew.add(omega, imaginary)
    dq = ew.add(matmul(q, ew.sub(omega, c)), b)
    dr = matmul(ew.sub(c, omega), r)
    return dq, dr


def _tall_vjp(q, r, ct_q, ct_r):
    """The Hilbert adjoint of _tall_jvp (a_bar for a real a): a = q r with q (m, n), r (n, n), m >= n;
    ct_q, ct_r may be None (zero)."""
    if ct_q is None:
        ct_q = zeros(aval_of_value(q).shape, aval_of_value(q).dtype)
    qt_ct = matmul(mH(q), ct_q)
    m = qt_ct if ct_r is None else ew.sub(qt_ct, matmul(ct_r, mH(r)))
    inner = ew.sub(tril(ew.sub(m, mH(m)), -1), m)
    imaginary = _imaginary_diagonal(m)
    if imaginary is not None:
        inner = ew.add(inner, imaginary)
    return mH(triangular_solve(r, mH(ew.add(ct_q, matmul(q, inner))), lower=False))   # (...) R^-H


def _qr_jvp(tangents, primals, outputs, *, full_matrices):
    (da,), (q, r) = tangents, outputs
    m, n = aval_of_value(da).shape[-2:]
    if m < n:
        dq, dr1 = _tall_jvp(q, columns(r, 0, m), columns(da, 0, m))
        dr2 = ew.add(matmul(mH(dq), columns(primals[0], m, None)), matmul(mH(q), columns(da, m, None)))
        return [dq, hstack([dr1, dr2])]
    if full_matrices and m > n:
        q1, q2 = columns(q, 0, n), columns(q, n, None)
        dq1, dr1 = _tall_jvp(q1, rows(r, 0, n), da)
        dq2 = ew.neg(matmul(q1, matmul(mH(dq1), q2)))
        zero_rows = zeros(aval_of_value(r).shape[:-2] + (m - n, n), aval_of_value(r).dtype)
        return [hstack([dq1, dq2]), vstack([dr1, zero_rows])]
    return list(_tall_jvp(q, r, da))


def _qr_vjp(cotangents, primals, outputs, needs, *, full_matrices):
    ct_q, ct_r = [None if is_zero(c) else c for c in cotangents]
    return jax_cotangent(lambda ct_q, ct_r: _qr_adjoint(ct_q, ct_r, primals, outputs, full_matrices), ct_q, ct_r)


def _qr_adjoint(ct_q, ct_r, primals, outputs, full_matrices):
    """The Hilbert adjoint of _qr_jvp (for real matrices the reverse rule itself)."""
    q, r = outputs
    m, n = aval_of_value(primals[0]).shape[-2:]
    if m < n:
        y_part = columns(primals[0], m, None)
        ct_r1 = None if ct_r is None else columns(ct_r, 0, m)
        ct_y = None
        if ct_r is not None:
            ct_r2 = columns(ct_r, m, None)
            through_r2 = matmul(y_part, mH(ct_r2))                  # R2 = Q^H Y
            ct_q = through_r2 if ct_q is None else ew.add(ct_q, through_r2)
            ct_y = matmul(q, ct_r2)
        ct_x = _tall_vjp(q, columns(r, 0, m), ct_q, ct_r1)
        if ct_y is None:
            ct_y = zeros(aval_of_value(y_part).shape, aval_of_value(y_part).dtype)
        return [hstack([ct_x, ct_y])]
    if full_matrices and m > n:
        q1, q2 = columns(q, 0, n), columns(q, n, None)
        if ct_q is not None:
            ct_q2 = columns(ct_q, n, None)
            ct_q = ew.sub(columns(ct_q, 0, n), matmul(q2, matmul(mH(ct_q2), q1)))
        return [_tall_vjp(q1, rows(r, 0, n), ct_q, None if ct_r is None else rows(ct_r, 0, n))]
    return [_tall_vjp(q, r, ct_q, ct_r)]


qr_p.jvp, qr_p.vjp = _qr_jvp, _qr_vjp
batch_matrices(qr_p)
qr_p.sample = lambda rng: [
    ([rng.normal(size=(4, 3))], {"full_matrices": False}),
    ([rng.normal(size=(3, 3))], {"full_matrices": True}),
    ([rng.normal(size=(3, 5))], {"full_matrices": False}),
    ([rng.normal(size=(2, 3, 5))], {"full_matrices": True}),
    ([rng.normal(size=(2, 5, 2))], {"full_matrices": False}),
    ([rng.normal(size=(1, 1))], {"full_matrices": False}),
    ([rng.normal(size=(0, 3, 2))], {"full_matrices": False}),
    ([rng.normal(size=(4, 3)).astype(np.float32)], {"full_matrices": False}),
    ([complex_normal(rng, (4, 3))], {"full_matrices": False}),
    ([complex_normal(rng, (2, 4))], {"full_matrices": True}),
    ([complex_normal(rng, (3, 3))], {"full_matrices": True}),
]


# --- Taylor mode ----------------------------------------------------------------------------------------
# solve: A(t) X(t) = B(t) gives X_k = A_0^-1 (B_k - sum_{j=1}^k A_j X_(k-j)), K solves with A_0.
# lu and qr take the series of their jvp rules (exact; they re-bind the factorisation once).

def _solve_taylor(series, output):
    a, b = series
    x = [output]
    for k in range(1, len(a)):
        rhs = sub(b[k], total([matmul(a[j], x[k - j]) for j in range(1, k + 1) if not is_zero(a[j])],
                              aval_of_value(output)))
        x.append(rhs if is_zero(rhs) else solve(a[0], rhs))
    return x[1:]


def _set_taylor_rules():
    solve_p.taylor = _solve_taylor
    lu_p.taylor = qr_p.taylor = FROM_JVP


_set_taylor_rules()
