"""Native kernels of the linear-algebra primitives for the generated code: LAPACK (lapack.py) per matrix of a
stack, as numpy.linalg and scipy.linalg call it for the NumPy backend, so both backends agree to rounding.

Every kernel takes C-contiguous stacks (batch, m, n), writes into output stacks the caller allocated, and
returns 0, or 1 + the index of the first matrix where the routine failed (the caller raises the NumPy
backend's LinAlgError). Matrices are copied into column-major scratch arrays (LAPACK's order) and back.

* cholesky: potrf (lower), the upper triangle zeroed, as numpy.linalg.cholesky;
* solve: gesv; det: getrf, sign * exp(sum log |u_ii|) as numpy.linalg.det (0 at an exact zero pivot);
* lu: getrf (scipy.linalg.lu_factor's packed factors, 0-based pivots) and the permutation of its swaps;
* qr: geqrf then orgqr / ungqr (numpy.linalg.qr's "reduced" or "complete");
* eigh: syevd / heevd on the lower triangle; svd: gesdd ("A", "S" or "N"); pinv: numpy.linalg.pinv's
  formula on gesdd of conj(a); eig: geev, a real matrix's conjugate pairs unpacked into complex vectors;
* adjugate: det(U) det(V^H) V diag(prod_(j != i) s_j) U^H from gesdd (the NumPy backend's formula);
* triangular_solve: substitution in IEEE arithmetic (a singular triangle gives inf or NaN, as the NumPy
  backend's; LAPACK's trtrs refuses those).

This module imports numba and scipy: only generated code imports it.
"""
from __future__ import annotations

import numba
import numpy as np

from .lapack import call, character, from_fortran, integer, to_fortran

_JIT = dict(cache=True, error_model="numpy", fastmath=False)
LOWER, UPPER, VECTORS, NONE, ALL, SOME = ord("L"), ord("U"), ord("V"), ord("N"), ord("A"), ord("S")


@numba.njit(**_JIT)
def _work_size(work):
    return max(1, int(work[0].real))


@numba.njit(**_JIT)
def dot_into(a, b, out):
    """np.dot(a, b, out): the contractions' BLAS call (contraction.py). Numba compiles its np.dot for each layout
    of the operands in every process that compiles a new caller (0.15-0.25 s each; GMM's gradient has three);
    as a function of this library it is loaded from the disk cache instead."""
    np.dot(a, b, out)


# --- cholesky, solve, det, lu ----------------------------------------------------------------------------------


@numba.njit(**_JIT)
def cholesky(a, out):
    batch, n = a.shape[0], a.shape[1]
    f = np.empty((n, n), a.dtype)
    info = integer(0)
    for b in range(batch):
        to_fortran(a[b], f)
        call("potrf", f, character(LOWER), integer(n), f, integer(max(1, n)), info)
        if info[0] > 0:
            return b + 1
        for i in range(n):
            for j in range(n):
                out[b, i, j] = f[j, i] if j <= i else 0.0
    return 0


@numba.njit(**_JIT)
def solve(a, rhs, out):
    batch, n, k = rhs.shape
    f = np.empty((n, n), a.dtype)
    g = np.empty((k, n), a.dtype)
    pivots = np.empty(max(1, n), np.int32)
    info = integer(0)
    for b in range(batch):
        to_fortran(a[b], f)
        to_fortran(rhs[b], g)
        call("gesv", f, integer(n), integer(k), f, integer(max(1, n)), pivots, g, integer(max(1, n)), info)
        if info[0] > 0:
            return b + 1
        from_fortran(g, out[b])
    return 0


@numba.njit(**_JIT)
def _factor(matrix, f, pivots, info):
    """getrf of one matrix into the column-major scratch `f`."""
    n = matrix.shape[0]
    to_fortran(matrix, f)
    call("getrf", f, integer(n), integer(n), f, integer(max(1, n)), pivots, info)


@numba.njit(**_JIT)
def _det_of_factors(f, pivots, info, n):
    """numpy.linalg.det from getrf's factors: sign * exp(sum log |u_ii|), 0 where a pivot is exactly zero."""
    one = np.ones(1, f.dtype)[0]
    if info > 0:
        return one * 0.0
    sign = one
    log_det = 0.0
    for i in range(n):
        if pivots[i] != i + 1:
            sign = -sign
        d = f[i, i]
        magnitude = abs(d)
        sign = sign * (d / magnitude)
        log_det += np.log(magnitude)
    return sign * np.exp(log_det)


@numba.njit(**_JIT)
def det(a, out):
    batch, n = a.shape[0], a.shape[1]
    f = np.empty((n, n), a.dtype)
    pivots = np.empty(max(1, n), np.int32)
    info = integer(0)
    for b in range(batch):
        if n == 0:
            out[b] = 1.0
            continue
        _factor(a[b], f, pivots, info)
        out[b] = _det_of_factors(f, pivots, info[0], n)
    return 0


@numba.njit(**_JIT)
def lu(a, packed, pivots, permutation):
    batch, n = a.shape[0], a.shape[1]
    f = np.empty((n, n), a.dtype)
    own = np.empty(max(1, n), np.int32)
    info = integer(0)
    for b in range(batch):
        _factor(a[b], f, own, info)  # info > 0: an exact zero pivot, a singular matrix (not an error)
        from_fortran(f, packed[b])
        for i in range(n):
            pivots[b, i] = own[i] - 1
            permutation[b, i] = i
        for i in range(n):
            target = pivots[b, i]
            permutation[b, i], permutation[b, target] = permutation[b, target], permutation[b, i]
    return 0


@numba.njit(**_JIT)
def pivots_to_permutation(pivots, out):
    """Apply the row interchanges (i <-> pivots[i], in order, negative ones from the end) to range(size);
    returns False where a pivot is out of range."""
    batch, count = pivots.shape
    size = out.shape[1]
    for b in range(batch):
        for i in range(size):
            out[b, i] = i
        for i in range(min(count, size)):
            target = np.int64(pivots[b, i])
            if target < 0:
                target += size
            if target < 0 or target >= size:
                return False
            out[b, i], out[b, target] = out[b, target], out[b, i]
    return True


# --- qr, eigh, svd, pinv, eig -------------------------------------------------------------------------------


@numba.njit(**_JIT)
def _orthogonal(is_complex, f, m, columns, k, tau):
    """orgqr / ungqr: the first `columns` columns of Q from geqrf's reflectors in `f` (column-major)."""
    work = np.empty(1, f.dtype)
    info = integer(0)
    for query in (True, False):
        lwork = integer(-1 if query else work.size)
        if is_complex:
            call("ungqr", f, integer(m), integer(columns), integer(k), f, integer(max(1, m)), tau, work, lwork, info)
        else:
            call("orgqr", f, integer(m), integer(columns), integer(k), f, integer(max(1, m)), tau, work, lwork, info)
        if query:
            work = np.empty(_work_size(work), f.dtype)


@numba.njit(**_JIT)
def qr(a, q, r, is_complex):
    """q (batch, m, m or k), r (batch, m or k, n): numpy.linalg.qr's complete or reduced factors."""
    batch, m, n = a.shape
    k = min(m, n)
    columns = q.shape[2]
    width = max(n, columns)
    f = np.zeros((width, m), a.dtype)  # column-major, room for Q's columns beyond n
    tau = np.empty(max(1, k), a.dtype)
    info = integer(0)
    for b in range(batch):
        f[:] = 0.0
        to_fortran(a[b], f[:n])
        work = np.empty(1, a.dtype)
        call("geqrf", f, integer(m), integer(n), f, integer(max(1, m)), tau, work, integer(-1), info)
        work = np.empty(_work_size(work), a.dtype)
        call("geqrf", f, integer(m), integer(n), f, integer(max(1, m)), tau, work, integer(work.size), info)
        for i in range(r.shape[1]):
            for j in range(n):
                r[b, i, j] = f[j, i] if j >= i else 0.0
        if k == 0:
            for i in range(m):
                for j in range(columns):
                    q[b, i, j] = 1.0 if i == j else 0.0
            continue
        _orthogonal(is_complex, f, m, columns, k, tau)
        for i in range(m):
            for j in range(columns):
                q[b, i, j] = f[j, i]
    return 0


@numba.njit(**_JIT)
def eigh_real(a, w, v, compute_v):
    batch, n = a.shape[0], a.shape[1]
    f = np.empty((n, n), a.dtype)
    values = np.empty(max(1, n), a.dtype)
    job = character(VECTORS if compute_v else NONE)
    info = integer(0)
    work = np.empty(1, a.dtype)
    iwork = np.empty(1, np.int32)
    for b in range(batch):
        to_fortran(a[b], f)
        call("syevd", f, job, character(LOWER), integer(n), f, integer(max(1, n)), values, work, integer(-1),
             iwork, integer(-1), info)
        work = np.empty(_work_size(work), a.dtype)
        iwork = np.empty(max(1, iwork[0]), np.int32)
        call("syevd", f, job, character(LOWER), integer(n), f, integer(max(1, n)), values, work,
             integer(work.size), iwork, integer(iwork.size), info)
        if info[0] != 0:
            return b + 1
        w[b, :] = values[:n]
        if compute_v:
            from_fortran(f, v[b])
    return 0


@numba.njit(**_JIT)
def eigh_complex(a, w, v, compute_v):
    batch, n = a.shape[0], a.shape[1]
    f = np.empty((n, n), a.dtype)
    values = np.empty(max(1, n), w.dtype)
    job = character(VECTORS if compute_v else NONE)
    info = integer(0)
    work = np.empty(1, a.dtype)
    rwork = np.empty(1, w.dtype)
    iwork = np.empty(1, np.int32)
    for b in range(batch):
        to_fortran(a[b], f)
        call("heevd", f, job, character(LOWER), integer(n), f, integer(max(1, n)), values, work, integer(-1),
             rwork, integer(-1), iwork, integer(-1), info)
        work = np.empty(_work_size(work), a.dtype)
        rwork = np.empty(max(1, int(rwork[0])), w.dtype)
        iwork = np.empty(max(1, iwork[0]), np.int32)
        call("heevd", f, job, character(LOWER), integer(n), f, integer(max(1, n)), values, work,
             integer(work.size), rwork, integer(rwork.size), iwork, integer(iwork.size), info)
        if info[0] != 0:
            return b + 1
        w[b, :] = values[:n]
        if compute_v:
            from_fortran(f, v[b])
    return 0


@numba.njit(**_JIT)
def svd(a, s, u, vh, job, is_complex):
    """gesdd of every matrix: job "A" (u m x m, vh n x n), "S" (m x k, k x n) or "N" (s only)."""
    batch, m, n = a.shape
    k = min(m, n)
    f = np.empty((n, m), a.dtype)
    u_rows = m if job != NONE else 1
    u_columns = u.shape[2] if job != NONE else 1
    vh_rows = vh.shape[1] if job != NONE else 1
    fu = np.empty((u_columns, u_rows), a.dtype)
    fv = np.empty((n if job != NONE else 1, vh_rows), a.dtype)
    values = np.empty(max(1, k), s.dtype)
    iwork = np.empty(max(1, 8 * k), np.int32)
    larger = max(m, n)
    if job == NONE:
        rsize = max(1, 7 * k)
    else:
        rsize = max(1, max(5 * k * k + 5 * k, 2 * larger * k + 2 * k * k + k))
    rwork = np.empty(rsize, s.dtype)
    info = integer(0)
    jobz = character(job)
    for b in range(batch):
        to_fortran(a[b], f)
        work = np.empty(1, a.dtype)
        for query in (True, False):
            lwork = integer(-1 if query else work.size)
            if is_complex:
                call("gesdd_complex", f, jobz, integer(m), integer(n), f, integer(max(1, m)), values, fu,
                     integer(max(1, u_rows)), fv, integer(max(1, vh_rows)), work, lwork, rwork, iwork, info)
            else:
                call("gesdd_real", f, jobz, integer(m), integer(n), f, integer(max(1, m)), values, fu,
                     integer(max(1, u_rows)), fv, integer(max(1, vh_rows)), work, lwork, iwork, info)
            if query:
                work = np.empty(_work_size(work), a.dtype)
        if info[0] != 0:
            return b + 1
        s[b, :] = values[:k]
        if job != NONE:
            from_fortran(fu, u[b])
            from_fortran(fv, vh[b])
    return 0


@numba.njit(**_JIT)
def pinv(a, rcond, out, is_complex):
    """numpy.linalg.pinv: gesdd ("S") of conj(a) = U S V^T, then V^T^T diag(1/s where s > rcond max(s)) U^T."""
    batch, m, n = a.shape
    k = min(m, n)
    s = np.empty((batch, k), np.real(a[:1, :1, :1]).dtype)
    u = np.empty((batch, m, k), a.dtype)
    vh = np.empty((batch, k, n), a.dtype)
    if k > 0:
        failed = svd(np.ascontiguousarray(np.conj(a)), s, u, vh, SOME, is_complex)
        if failed:
            return failed
    zero = np.zeros(1, out.dtype)[0]  # (not out[...] * 0: out is uninitialised, maybe NaN)
    for b in range(batch):
        largest = -np.inf
        for i in range(k):
            largest = max(largest, s[b, i])
        cutoff = rcond * largest
        for i in range(n):
            for j in range(m):
                total = zero
                for t in range(k):
                    if s[b, t] > cutoff:
                        total += vh[b, t, i] * ((1.0 / s[b, t]) * u[b, j, t])
                out[b, i, j] = total
    return 0


@numba.njit(**_JIT)
def _all_finite(a):
    for value in a.ravel():
        if not np.isfinite(value):
            return False
    return True


@numba.njit(**_JIT)
def eig_real(a, w, v, compute_v):
    """geev of real matrices: w and V complex; a conjugate pair (wi > 0, then wi < 0) gives vr_j +- i vr_(j+1).
    Returns -1 where the input holds inf or NaN (numpy.linalg.eig refuses it)."""
    batch, n = a.shape[0], a.shape[1]
    if not _all_finite(a):
        return -1
    f = np.empty((n, n), a.dtype)
    wr = np.empty(max(1, n), a.dtype)
    wi = np.empty(max(1, n), a.dtype)
    vr = np.empty((n if compute_v else 1, n if compute_v else 1), a.dtype)
    vl = np.empty((1, 1), a.dtype)
    info = integer(0)
    job = character(VECTORS if compute_v else NONE)
    for b in range(batch):
        to_fortran(a[b], f)
        work = np.empty(1, a.dtype)
        for query in (True, False):
            call("geev_real", f, character(NONE), job, integer(n), f, integer(max(1, n)), wr, wi, vl, integer(1),
                 vr, integer(max(1, n) if compute_v else 1), work, integer(-1 if query else work.size), info)
            if query:
                work = np.empty(_work_size(work), a.dtype)
        if info[0] != 0:
            return b + 1
        for j in range(n):
            w[b, j] = wr[j] + 1j * wi[j]
        if compute_v:
            j = 0
            while j < n:
                if wi[j] != 0.0 and j + 1 < n:
                    for i in range(n):
                        v[b, i, j] = vr[j, i] + 1j * vr[j + 1, i]
                        v[b, i, j + 1] = vr[j, i] - 1j * vr[j + 1, i]
                    j += 2
                else:
                    for i in range(n):
                        v[b, i, j] = vr[j, i]
                    j += 1
    return 0


@numba.njit(**_JIT)
def eig_complex(a, w, v, compute_v):
    batch, n = a.shape[0], a.shape[1]
    if not _all_finite(a):
        return -1
    f = np.empty((n, n), a.dtype)
    values = np.empty(max(1, n), a.dtype)
    vr = np.empty((n if compute_v else 1, n if compute_v else 1), a.dtype)
    vl = np.empty((1, 1), a.dtype)
    rwork = np.empty(max(1, 2 * n), np.real(values[:1]).dtype)
    info = integer(0)
    job = character(VECTORS if compute_v else NONE)
    for b in range(batch):
        to_fortran(a[b], f)
        work = np.empty(1, a.dtype)
        for query in (True, False):
            call("geev_complex", f, character(NONE), job, integer(n), f, integer(max(1, n)), values, vl,
                 integer(1), vr, integer(max(1, n) if compute_v else 1), work, integer(-1 if query else work.size),
                 rwork, info)
            if query:
                work = np.empty(_work_size(work), a.dtype)
        if info[0] != 0:
            return b + 1
        w[b, :] = values[:n]
        if compute_v:
            from_fortran(vr, v[b])
    return 0


# --- adjugate, triangular_solve -----------------------------------------------------------------------------


@numba.njit(**_JIT)
def adjugate(a, out, is_complex):
    """det(U) det(V^H) V diag(prod_(j != i) s_j) U^H: no inverse, exact at every rank."""
    batch, n = a.shape[0], a.shape[1]
    if n == 0:
        return 0
    s = np.empty((1, n), np.real(a[:1, :1, :1]).dtype)
    u = np.empty((1, n, n), a.dtype)
    vh = np.empty((1, n, n), a.dtype)
    others = np.empty(n, s.dtype)
    zero = np.zeros(1, out.dtype)[0]
    f = np.empty((n, n), a.dtype)
    pivots = np.empty(n, np.int32)
    info = integer(0)
    for b in range(batch):
        failed = svd(np.ascontiguousarray(a[b:b + 1]), s, u, vh, ALL, is_complex)
        if failed:
            return b + 1
        before = 1.0
        for i in range(n):
            others[i] = before
            before *= s[0, i]
        after = 1.0
        for i in range(n - 1, -1, -1):
            others[i] *= after
            after *= s[0, i]
        _factor(u[0], f, pivots, info)
        sign = _det_of_factors(f, pivots, info[0], n)
        _factor(vh[0], f, pivots, info)
        sign = sign * _det_of_factors(f, pivots, info[0], n)
        for i in range(n):
            for j in range(n):
                total = zero
                for t in range(n):
                    total += np.conj(vh[0, t, i]) * others[t] * np.conj(u[0, j, t])
                out[b, i, j] = total * sign
    return 0


@numba.njit(**_JIT)
def triangular_solve(a, rhs, out, lower, transpose_a, unit_diagonal):
    """Forward or back substitution in IEEE arithmetic, per matrix of the stack (a: (batch, n, n),
    rhs and out: (batch, n, k))."""
    batch, n, k = rhs.shape
    lower_effective = lower != transpose_a  # the transposed lower triangle is an upper one
    for b in range(batch):
        for step in range(n):
            i = step if lower_effective else n - 1 - step
            for c in range(k):
                total = rhs[b, i, c]
                if lower_effective:
                    known = range(0, i)
                else:
                    known = range(i + 1, n)
                for j in known:
                    coefficient = a[b, j, i] if transpose_a else a[b, i, j]
                    total -= coefficient * out[b, j, c]
                out[b, i, c] = total if unit_diagonal else total / (a[b, i, i])
    return 0
