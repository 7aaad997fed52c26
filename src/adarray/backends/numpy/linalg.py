"""NumPy implementations of the linear-algebra primitives (LAPACK through NumPy and SciPy).

Every routine takes stacks of matrices (..., m, n), empty stacks and 0x0 matrices included,
returns arrays of its input's dtype, and never writes into its inputs. Failures of the routine
itself (a singular matrix in solve, a matrix that is not positive definite in cholesky) raise
`adarray.primitives.matrices.LinAlgError`, an ExecutionError that is also NumPy's LinAlgError.
A singular triangular matrix is not an error: substitution gives inf or NaN, as IEEE arithmetic does.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import scipy.linalg
from scipy.linalg import lapack

from ...primitives import eig, factorizations, matrix_functions, spectral, triangular
from ...primitives.matrices import LinAlgError
from .. import nilpotent
from .registry import impl


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


@impl(triangular.triangular_solve_p)
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


@impl(triangular.cholesky_p)
@_raising("cholesky", "the matrix is not positive definite")
def _cholesky(a):
    return np.linalg.cholesky(a)


@impl(factorizations.solve_p)
@_raising("solve", "the matrix is singular")
def _solve(a, b):
    return np.linalg.solve(a, b)


@impl(factorizations.lu_p)
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


@impl(factorizations.lu_pivots_to_permutation_p)
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


@impl(factorizations.qr_p)
def _qr(a, *, full_matrices):
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return [q, r]


@impl(spectral.eigh_p)
@_raising("eigh", "the eigenvalue iteration did not converge")
def _eigh(a, *, compute_v):
    if not compute_v:
        return [np.linalg.eigvalsh(a, UPLO="L")]
    values, vectors = np.linalg.eigh(a, UPLO="L")
    return [values, vectors]


@impl(spectral.svd_p)
@_raising("svd", "the SVD did not converge")
def _svd(a, *, full_matrices, compute_uv):
    if not compute_uv:
        return [np.linalg.svd(a, compute_uv=False)]
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return [u, s, vh]


@impl(matrix_functions.det_p)
def _det(a):
    return np.asarray(np.linalg.det(a), a.dtype)


@impl(matrix_functions.adjugate_p)
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


# --- the derivatives of the adjugate -------------------------------------------------------------
# d^k adj(A)[E1..Ek] is the coefficient of t1 t2 ... tk in adj(A + t1 E1 + ... + tk Ek). We compute
# in the ring of polynomials in t1..tk with tm^2 = 0: a "jet" is a dict from a bit mask R of the
# directions to the coefficient of prod_{m in R} tm (absent masks are 0), and every truncation in
# that ring is exact. With A = U S V^T, adj(A + T) = det(U) det(V) V adj(S + U^T T V) U^T, so the
# matrix is M = diag(s) + Y with Y at nonempty masks only. Split s (descending) into the leading
# block P of the singular values above _BLOCK_RATIO * s_max and the rest Q. Block elimination,
# with inv_P = (diag(s_P) + Y_PP)^-1 (a Neumann series, exact in the ring), det_P, L = inv_P Y_PQ,
# R = Y_QP inv_P and the Schur complement C = diag(s_Q) + Y_QQ - Y_QP L, gives
#     adj(M) = det_P [[det(C) inv_P + L adj(C) R, -L adj(C)], [-adj(C) R, adj(C)]],
# an identity of polynomials wherever the block P is invertible, which it is in the ring. adj(C) and
# det(C) come from the expansion in principal minors of a diagonal plus a perturbation, whose
# weights are products of the small singular values and which needs minors of size <= k + 1 only
# (_minor_adjugate_and_det). Nothing divides by a small singular value: the result is exact at every
# rank and about as accurate as the SVD allows (tests/test_adjugate.py compares with exact rational
# arithmetic). A well-conditioned matrix is the block P alone: the inverse-based formula.

_BLOCK_RATIO = 1e-2


def _matrices(x, y):
    return nilpotent.product(x, y, np.matmul)


def _block(x, rows, cols):
    return {mask: value[..., rows, cols] for mask, value in x.items()}


def _assemble(blocks, sizes):
    """The jet of the block matrix [[pp, pq], [qp, qq]] (jets) with blocks of `sizes` = (p, q)."""
    out = {}
    for mask in set().union(*[set(b) for row in blocks for b in row]):
        parts = [[b.get(mask) for b in row] for row in blocks]
        present = [v for row in parts for v in row if v is not None]
        batch = np.broadcast_shapes(*[v.shape[:-2] for v in present])
        dtype = np.result_type(*present)
        filled = [[np.broadcast_to(v, batch + v.shape[-2:]) if v is not None
                   else np.zeros(batch + (sizes[i], sizes[j]), dtype) for j, v in enumerate(row)]
                  for i, row in enumerate(parts)]
        out[mask] = np.concatenate([np.concatenate(row, axis=-1) for row in filled], axis=-2)
    return out


def _pivot_inverse_and_det(values, perturbation):
    """(diag(values) + Y)^-1 and det(diag(values) + Y) as jets, for values > 0 and Y at nonempty masks."""
    inverse_values = 1.0 / values
    z = {mask: inverse_values[..., :, None] * y for mask, y in perturbation.items()}   # diag(values)^-1 Y
    identity = {0: np.eye(values.shape[-1], dtype=values.dtype)}
    series, term = dict(identity), identity
    while term:                                     # (I + Z)^-1 = sum_r (-Z)^r; Z is nilpotent
        term = nilpotent.scale(_matrices(z, term), -1.0)
        series = nilpotent.add(series, term)
    inverse = {mask: value * inverse_values[..., None, :] for mask, value in series.items()}
    log_det, power, order = {}, z, 1               # log det(I + Z) = sum_r (-1)^(r+1) tr(Z^r) / r
    while power:
        log_det = nilpotent.add(log_det, nilpotent.trace(power, np), (-1.0) ** (order + 1) / order)
        power, order = _matrices(z, power), order + 1
    det = term = {0: np.prod(values, axis=-1)}
    order = 1
    while term:                                     # det = prod(values) exp(log det(I + Z))
        term = nilpotent.scale(nilpotent.product(log_det, term, np.multiply), 1.0 / order)
        det, order = nilpotent.add(det, term), order + 1
    return inverse, det


def _minor_adjugate_and_det(values, perturbation, order):
    """adj and det of diag(values) + Y (Y at nonempty masks) as jets, by the expansion in principal
    minors: with w_J = prod_{l not in J} values_l,
        det(D + Y) = sum_J w_J det(Y_JJ),   adj(D + Y)[J, J] = sum_J w_J adj(Y_JJ) (embedded),
    where adj(Y_JJ) and det(Y_JJ) vanish for |J| > order + 1 and |J| > order. No division, and the
    weights are products of singular values: exact at every rank, accurate for graded ones."""
    size = values.shape[-1]
    batch = np.broadcast_shapes(values.shape[:-1], *[y.shape[:-2] for y in perturbation.values()])
    adjugate, det = {}, {}
    for count in range(min(size, order + 1) + 1):
        for subset in itertools.combinations(range(size), count):
            weight = np.prod(values[..., [l for l in range(size) if l not in subset]], axis=-1)
            if not np.any(weight):
                continue
            if count == 0:
                det = nilpotent.add(det, {0: weight})
                continue
            index = np.array(subset)
            minor = {mask: y[..., index[:, None], index[None, :]] for mask, y in perturbation.items()}
            adj_minor, det_minor = nilpotent.adjugate_and_det(minor, count, order, np, _matrices)
            det = nilpotent.add(det, nilpotent.product({0: weight}, det_minor, np.multiply))
            for mask, value in nilpotent.scaled_matrices({0: weight}, adj_minor).items():
                embedded = np.zeros(batch + (size, size), value.dtype)
                embedded[..., index[:, None], index[None, :]] = value
                adjugate = nilpotent.add(adjugate, {mask: embedded})
    return adjugate, det


def _diagonal_form(values, rotated, lead_size):
    """d^k adj(diag(values))[rotated] with the leading block of `lead_size` values; values (..., n)
    broadcast with the directions (..., n, n)."""
    n, order = values.shape[-1], len(rotated)
    perturbation = {1 << m: x for m, x in enumerate(rotated)}
    lead, rest = slice(0, lead_size), slice(lead_size, n)
    if lead_size == 0:                              # the zero matrix (or _BLOCK_RATIO >= 1): no pivot block
        adjugate, _ = _minor_adjugate_and_det(values, perturbation, order)
    else:
        inverse, det_p = _pivot_inverse_and_det(values[..., lead], _block(perturbation, lead, lead))
        if lead_size == n:
            adjugate = nilpotent.scaled_matrices(det_p, inverse)
        else:
            left = _matrices(inverse, _block(perturbation, lead, rest))
            right = _matrices(_block(perturbation, rest, lead), inverse)
            schur = nilpotent.add(_block(perturbation, rest, rest), _matrices(_block(perturbation, rest, lead), left),
                                  -1.0)
            adj_c, det_c = _minor_adjugate_and_det(values[..., rest], schur, order)
            left_adj = _matrices(left, adj_c)
            top_left = nilpotent.add(nilpotent.scaled_matrices(det_c, inverse), _matrices(left_adj, right))
            blocks = [[top_left, nilpotent.scale(left_adj, -1.0)],
                      [nilpotent.scale(_matrices(adj_c, right), -1.0), adj_c]]
            adjugate = nilpotent.scaled_matrices(det_p, _assemble(blocks, (lead_size, n - lead_size)))
    batch = np.broadcast_shapes(values.shape[:-1], *[x.shape[:-2] for x in rotated])
    return np.broadcast_to(adjugate.get((1 << order) - 1, np.zeros((), values.dtype)), batch + (n, n))


def _unbroadcast(x):
    """x with its zero-stride (broadcast) leading axes cut to length 1."""
    index = tuple(slice(0, 1) if stride == 0 and size > 1 else slice(None)
                  for stride, size in zip(x.strides[:-2], x.shape[:-2]))
    return x[index]


@impl(matrix_functions.adjugate_derivative_p)
@_raising("adjugate_derivative", "the SVD did not converge")
def _adjugate_derivative(a, *directions):
    """d^k adj(A)[E1..Ek] = det(U) det(V^H) V d^k adj(S)[U^H E1 V, ...] U^H, exact at every rank."""
    n, order = a.shape[-1], len(directions)
    if a.size == 0:
        return np.zeros(a.shape, a.dtype)
    # vmap and reverse mode broadcast operands (zero strides): work on the distinct matrices only.
    directions = [_unbroadcast(e) for e in directions]
    if order == n - 1:                              # constant in A: the polarised adjugate of the directions
        polarised = {1 << m: e for m, e in enumerate(directions)}
        adjugate, _ = nilpotent.adjugate_and_det(polarised, n, order, np, _matrices)
        return np.broadcast_to(adjugate[(1 << order) - 1], a.shape).astype(a.dtype)
    u, values, vh = np.linalg.svd(_unbroadcast(a))
    phase = np.linalg.det(u) * np.linalg.det(vh)  # +-1, or a unit complex number (A = U S V^H)
    sign = (phase / np.abs(phase) if np.iscomplexobj(phase) else np.where(phase < 0, -1.0, 1.0)).astype(a.dtype)
    ut, v = np.conj(np.swapaxes(u, -1, -2)), np.conj(np.swapaxes(vh, -1, -2))
    rotated = [ut @ e @ v for e in directions]
    lead_sizes = np.sum(values > _BLOCK_RATIO * values[..., :1], axis=-1)
    if np.all(lead_sizes == lead_sizes.flat[0]):
        inner = _diagonal_form(values, rotated, int(lead_sizes.flat[0]))
    else:                                           # one group of matrices per size of the leading block
        batch = a.shape[:-2]
        flat_sizes = np.broadcast_to(lead_sizes, batch).reshape(-1)
        flat_values = np.broadcast_to(values, batch + (n,)).reshape(-1, n)
        flat_rotated = [np.broadcast_to(x, a.shape).reshape(-1, n, n) for x in rotated]
        inner = np.zeros((flat_values.shape[0], n, n), a.dtype)
        for lead_size in np.unique(flat_sizes):
            members = np.flatnonzero(flat_sizes == lead_size)
            inner[members] = _diagonal_form(flat_values[members], [x[members] for x in flat_rotated], int(lead_size))
        inner = inner.reshape(a.shape)
    out = sign[..., None, None] * (v @ inner @ ut)
    return np.broadcast_to(out, a.shape).astype(a.dtype)


@impl(matrix_functions.pinv_p)
@_raising("pinv", "the SVD did not converge")
def _pinv(a, *, rcond):
    return np.linalg.pinv(a, rcond=rcond)


@impl(matrix_functions.expm_p)
def _expm(a):
    if a.size == 0:
        return np.zeros(a.shape, a.dtype)
    return np.asarray(scipy.linalg.expm(a), a.dtype)


@impl(eig.eig_p)
@_raising("eig", "the eigenvalue iteration did not converge")
def _eig(a, *, compute_v):
    dtype = np.result_type(a.dtype, np.complex64)
    if not compute_v:
        return [np.linalg.eigvals(a).astype(dtype, copy=False)]
    values, vectors = np.linalg.eig(a)
    return [values.astype(dtype, copy=False), vectors.astype(dtype, copy=False)]
