"""adarray.scipy.linalg: scipy.linalg look-alikes on the adarray linear-algebra primitives.

    import adarray.scipy.linalg as asl
    c_and_lower = asl.cho_factor(a); x = asl.cho_solve(c_and_lower, b)

SciPy's conventions: `cholesky` and `cho_factor` default to the upper factor (lower=False);
`solve_triangular` defaults to lower=False; b may be (n,) or (..., n, k), and stacks of matrices
broadcast. Functions of a symmetric (Hermitian) matrix, `cholesky`, `cho_factor`, `eigh` and `solve`
and `inv` with assume_a 'sym', 'her' or 'pos', see its symmetric part (a + a^T) / 2 ((a + a^H) / 2
for a Hermitian one), as adarray.numpy.linalg and JAX's eigh do: the same matrix for a symmetric a,
and a symmetric gradient. SciPy reads one triangle (`lower`) instead; symmetrize_input=False does
that, with the gradient with respect to that triangle. Derivatives come from the primitives' rules
(triangular solves, Murray's Cholesky rule, the LU rule, the Frechet derivative of expm).
Unlike SciPy, solve_triangular of a singular triangle returns inf/NaN instead of raising (its
values are not inspected while tracing); cholesky and cho_factor raise LinAlgError for a matrix
that is not positive definite, as SciPy does. Complex matrices work throughout: cholesky is then
A = U^H U (L L^H), and trans=2 ('C') the conjugate transpose.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import numpy as _np
from ..core.errors import ArgumentError, ShapeError, TracingError, UnsupportedError
from ..numpy import argsort
from ..numpy import linalg as _np_linalg
from ..numpy._core import asvalue, dtype, shape
from ..numpy._shape import broadcast_to
from ..primitives import factorizations, matrix_functions, sqrtm_logm, sylvester
from ..primitives import triangular as _triangular
from ..primitives.matrices import LinAlgError, conjugate, matmul, mH, mT, tril, triu

__all__ = ["LinAlgError", "cho_factor", "cho_solve", "cholesky", "expm", "lu_factor", "lu_solve",
           "solve_triangular"]
__all__ += ["det", "eigh", "inv", "logm", "lu", "qr", "solve", "sqrtm", "svd"]
__all__ += ["solve_banded", "solve_sylvester"]


def _prepare(name, a, b):
    """a (..., n, n) and b (n,) or (..., n, k) as float arrays with one batch shape, and whether b was 1-d."""
    a, b = _np_linalg.as_float(a, b), _np_linalg.as_float(b, a)
    _np_linalg.check_matrix(name, a, square=True)
    return _np_linalg.as_columns(name, a, b)


def _trans(name, trans):
    """0 (T), 1 (T^T) or 2 (T^H, the same as 1 for real matrices)."""
    if trans in (0, "N"):
        return 0
    if trans in (1, "T"):
        return 1
    if trans in (2, "C"):
        return 2
    raise ArgumentError(f"{name}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")


def _triangular_solve(a, b, *, lower, trans, unit_diagonal=False):
    """op(T) x = b; T^H x = b is conj(T^-T conj(b))."""
    if trans == 2:
        return conjugate(_triangular.triangular_solve(a, conjugate(b), lower=lower, transpose_a=True,
                                                      unit_diagonal=unit_diagonal))
    return _triangular.triangular_solve(a, b, lower=lower, transpose_a=bool(trans), unit_diagonal=unit_diagonal)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    """x with op(T) x = b, T the lower (lower=True) or upper triangle of a, op(T) = T, T^T or T^H (trans)."""
    a, b, vector = _prepare("solve_triangular", a, b)
    x = _triangular_solve(a, b, lower=lower, trans=_trans("solve_triangular", trans), unit_diagonal=unit_diagonal)
    return _np_linalg.from_columns(x, vector)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True, *, symmetrize_input=True):
    """The Cholesky factor of the symmetric part of a: upper U with U^H U = A (default) or lower L
    (symmetrize_input=False: of the matrix whose `lower` (or upper) triangle is a's, as SciPy)."""
    a = _np_linalg.check_matrix("cholesky", _np_linalg.as_float(a), square=True)
    if symmetrize_input:
        a = _np_linalg.symmetric_part(a)
    if lower:
        return _triangular.cholesky(a)
    return mH(_triangular.cholesky(mH(a)))   # the upper triangle of a is the lower one of a^H


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True, *, symmetrize_input=True):
    """(c, lower): the factor in c's `lower` triangle; the other triangle holds a's entries, as in SciPy."""
    a = _np_linalg.check_matrix("cho_factor", _np_linalg.as_float(a), square=True)
    factor = cholesky(a, lower=lower, symmetrize_input=symmetrize_input)
    other = triu(a, 1) if lower else tril(a, -1)
    return factor + other, bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with A x = b from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    c, b, vector = _prepare("cho_solve", c, b)
    if lower:                                                             # A = L L^H
        y = _triangular.triangular_solve(c, b, lower=True)
        x = _triangular_solve(c, y, lower=True, trans=2)
    else:                                                                 # A = U^H U
        y = _triangular_solve(c, b, lower=False, trans=2)
        x = _triangular.triangular_solve(c, y, lower=False)
    return _np_linalg.from_columns(x, vector)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): L (unit diagonal, below) and U packed in lu; piv are LAPACK's 0-based row interchanges."""
    a = _np_linalg.check_matrix("lu_factor", _np_linalg.as_float(a), square=True)
    packed, pivots, _ = factorizations.lu(a)
    return packed, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with A x = b (trans=0), A^T x = b (trans=1) or A^H x = b (trans=2) from lu_factor's (lu, piv)."""
    packed, pivots = lu_and_piv
    pivots = asvalue(pivots)
    packed, b, vector = _prepare("lu_solve", packed, b)
    if shape(pivots) != shape(packed)[:-1]:
        if shape(pivots)[-1:] != shape(packed)[-1:]:
            raise ShapeError(f"lu_solve: piv of shape {shape(pivots)} does not fit lu of shape {shape(packed)}")
        pivots = broadcast_to(pivots, shape(packed)[:-1])
    permutation = factorizations.lu_pivots_to_permutation(pivots, shape(packed)[-1])
    p = factorizations.permutation_matrix(permutation, packed.dtype)     # P A = L U
    mode = _trans("lu_solve", trans)
    if not mode:
        y = _triangular.triangular_solve(packed, matmul(p, b), lower=True, unit_diagonal=True)
        x = _triangular.triangular_solve(packed, y, lower=False)
    else:                                                                  # A^T = U^T L^T P (or ^H)
        y = _triangular_solve(packed, b, lower=False, trans=mode)
        z = _triangular_solve(packed, y, lower=True, trans=mode, unit_diagonal=True)
        x = matmul(mH(p), z)
    return _np_linalg.from_columns(x, vector)


def expm(A):  # noqa: N803 - SciPy's name
    """The matrix exponential of a square matrix (stack); derivatives by the Frechet derivative."""
    a = _np_linalg.check_matrix("expm", _np_linalg.as_float(A), square=True)
    return matrix_functions.expm(a)



# --- SciPy's signatures over adarray.numpy.linalg: lu, inv, det, solve, eigh, svd, qr, sqrtm, logm ---


def _symmetric(a, lower, hermitian, symmetrize_input):
    """The symmetric (Hermitian) matrix a function of one sees: a's symmetric part (a + a^T) / 2
    ((a + a^H) / 2), or the matrix whose `lower` (or upper) triangle is a's, as SciPy's drivers read it."""
    flip = mH if hermitian else mT
    if symmetrize_input:
        return (a + flip(a)) * 0.5
    if lower:
        return tril(a) + flip(tril(a, -1))
    return triu(a) + flip(triu(a, 1))


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """(p, l, u) with a = p @ l @ u, l unit lower triangular and u upper triangular (partial pivoting,
    LAPACK's getrf); (p @ l, u) with permute_l; p as row indices (a = l[p] @ u) with p_indices.
    Square matrices (stacks) only; derivatives by the LU rule."""
    a = _np_linalg.check_matrix("lu", _np_linalg.as_float(a))
    if shape(a)[-1] != shape(a)[-2]:
        raise UnsupportedError(f"scipy.linalg.lu: only square matrices are supported, got shape {shape(a)}")
    packed, _, permutation = factorizations.lu(a)             # P A = L U, P @ x == x[permutation]
    lower, upper = factorizations.unpack_lu(packed)
    p = mT(factorizations.permutation_matrix(permutation, dtype(packed)))
    if permute_l:
        return matmul(p, lower), upper
    if p_indices:
        return argsort(permutation, axis=-1), lower, upper
    return p, lower, upper


def inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False, symmetrize_input=True):
    """The inverse. With assume_a 'sym'/'her'/'pos' that of a's symmetric part (symmetrize_input=False:
    only the `lower` (or upper) triangle is read, as SciPy does); 'upper triangular' and 'lower
    triangular' read that triangle."""
    a = _np_linalg.check_matrix("inv", _np_linalg.as_float(a), square=True)
    return _np_linalg.inv(_structured("inv", a, assume_a, lower, symmetrize_input))


def _structured(name, a, assume_a, lower, symmetrize_input):
    """a with only the entries SciPy's driver for `assume_a` reads (a symmetric one: see _symmetric)."""
    kind = _ASSUME.get(assume_a)
    if kind is None:
        raise ArgumentError(f"{name}: assume_a must be one of {sorted(k for k in _ASSUME if k)}, got {assume_a!r}")
    if kind in ("symmetric", "hermitian"):
        return _symmetric(a, lower, kind == "hermitian", symmetrize_input)
    if kind == "diagonal":
        return tril(triu(a))
    if kind == "tridiagonal":
        return tril(triu(a, -1), 1)
    if kind in ("upper", "lower"):
        return triu(a) if kind == "upper" else tril(a)
    return a


_ASSUME = {None: "general", "gen": "general", "general": "general", "sym": "symmetric", "symmetric": "symmetric",
           "her": "hermitian", "hermitian": "hermitian", "pos": "hermitian", "positive definite": "hermitian",
           "diagonal": "diagonal", "tridiagonal": "tridiagonal", "upper triangular": "upper",
           "lower triangular": "lower"}


def det(a, overwrite_a=False, check_finite=True):
    """The determinant; its gradient adj(a)^T is exact for singular matrices too."""
    return _np_linalg.det(a)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False, *, symmetrize_input=True):
    """x with a @ x == b (a.T @ x == b if transposed); b (n,) or (..., n, k). assume_a picks the entries
    read, as in SciPy: 'sym', 'her', 'pos' the symmetric part of a (symmetrize_input=False: one triangle,
    `lower`), 'diagonal', 'tridiagonal', 'upper triangular', 'lower triangular'; 'pos' solves by
    Cholesky (LinAlgError if not positive definite)."""
    a, b, vector = _prepare("solve", a, b)
    a = _structured("solve", a, assume_a, lower, symmetrize_input)
    if transposed:
        a = mT(a)
    kind = _ASSUME[assume_a]
    if kind in ("upper", "lower"):
        x = _triangular.triangular_solve(a, b, lower=(kind == "lower") != bool(transposed))
    elif assume_a in ("pos", "positive definite"):
        factor = _triangular.cholesky(a)
        x = _triangular.triangular_solve(factor, _triangular.triangular_solve(factor, b, lower=True),
                                         lower=True, transpose_a=True)
    else:
        x = factorizations.solve(a, b)
    return _np_linalg.from_columns(x, vector)


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,  # noqa: A002
         check_finite=True, subset_by_index=None, subset_by_value=None, driver=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of the symmetric part of a (symmetrize_input=False:
    of the symmetric matrix whose `lower` (or upper) triangle is a's, as SciPy); with b (symmetric positive
    definite, read the same way) the generalized problem a v = w b v (type 1), with v.T b v = I, through
    the Cholesky factor of b. subset_by_index=(lo, hi)
    keeps eigenvalues lo..hi (inclusive). Eigenvectors are unique up to sign (SciPy's LAPACK driver may
    pick the other one)."""
    if type != 1:
        raise UnsupportedError(f"scipy.linalg.eigh: only type=1 (a v = w b v) is supported, got type={type}")
    if subset_by_value is not None:
        raise UnsupportedError("scipy.linalg.eigh: subset_by_value gives a number of eigenvalues that depends on "
                               "the values; use subset_by_index, or select from all eigenvalues")
    a = _np_linalg.check_matrix("eigh", _np_linalg.as_float(a), square=True)
    uplo = "L" if lower else "U"
    if b is None:
        values, vectors = _np_linalg.eigh(a, UPLO=uplo, symmetrize_input=symmetrize_input)
    else:
        b = _np_linalg.check_matrix("eigh", _np_linalg.as_float(b, a), square=True)
        if shape(b)[-1] != shape(a)[-1]:
            raise ShapeError(f"scipy.linalg.eigh: a of shape {shape(a)} and b of shape {shape(b)} differ in size")
        factor = _triangular.cholesky(_symmetric(b, lower, True, symmetrize_input))          # B = L L^H
        a = _symmetric(a, lower, True, symmetrize_input)
        half = _triangular.triangular_solve(factor, a, lower=True)                          # L^-1 A
        reduced = _triangular.triangular_solve(factor, mH(half), lower=True)                 # L^-1 A L^-H
        values, rotated = _np_linalg.eigh(reduced)
        vectors = _triangular_solve(factor, rotated, lower=True, trans=2)                    # L^-H y
    if subset_by_index is not None:
        first, last = (int(i) for i in subset_by_index)
        n = shape(a)[-1]
        if not 0 <= first <= last < n:
            raise ArgumentError(f"scipy.linalg.eigh: subset_by_index {subset_by_index!r} is outside [0, {n - 1}]")
        values, vectors = values[..., first:last + 1], vectors[..., first:last + 1]
    return values if eigvals_only else (values, vectors)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """(U, s, Vh) with a = U diag(s) Vh, s descending; only s if compute_uv is False."""
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ArgumentError(f"scipy.linalg.svd: lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    result = _np_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return result if not compute_uv else tuple(result)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """Householder QR in SciPy's modes: 'full' (Q (m, m), R (m, n)), 'economic' (Q (m, k), R (k, n)) and
    'r' ((R,), R (m, n)). Column pivoting and mode 'raw' are not supported."""
    if pivoting:
        raise UnsupportedError("scipy.linalg.qr: pivoting=True is not supported")
    if mode not in ("full", "economic", "r"):
        raise UnsupportedError(f"scipy.linalg.qr: mode={mode!r} is not supported (use 'full', 'economic' or 'r')")
    q, r = _np_linalg.qr(a, mode="reduced" if mode == "economic" else "complete")
    return (r,) if mode == "r" else (q, r)


def _has_negative_real_eigenvalue(a):
    """Whether some matrix of the real stack `a` has a real eigenvalue below 0 (its principal root and logarithm
    are then not real), when the values are known: concrete arrays, or traced ones under an un-jitted
    transformation (a guard: a new value that answers differently traces again); None under jit and vmap."""
    if not np.issubdtype(dtype(a), np.floating) or 0 in shape(a):
        return False
    eigenvalues = _np.linalg.eigvals(_np.stop_gradient(a))   # LAPACK gives real eigenvalues an exact 0 imaginary part
    negative = _np.any(_np.logical_and(_np.equal(_np.imag(eigenvalues), 0.0), _np.less(_np.real(eigenvalues), 0.0)))
    try:
        return bool(negative)
    except TracingError:
        return None


def _principal(name, function, A):  # noqa: N803 - SciPy's name
    a = _np_linalg.check_matrix(name, _np_linalg.as_float(A), square=True)
    return function(a, complex_result=bool(_has_negative_real_eigenvalue(a)))


def sqrtm(A, disp=True, blocksize=64):  # noqa: N803 - SciPy's name
    """The principal square root of a square matrix (stack); derivatives by the Frechet derivative, to any order.
    As SciPy, complex when a real matrix has a negative eigenvalue (where the values are known: eagerly and under
    un-jitted transformations; under jit and vmap the result has the input's dtype, and such a matrix raises
    LinAlgError: pass it as complex). A matrix with a zero eigenvalue has no derivative.

    >>> sqrtm(np.array([[4.0, 0.0], [0.0, 9.0]]))  # doctest: +SKIP
    array([[2., 0.],
           [0., 3.]])
    """
    return _principal("sqrtm", sqrtm_logm.sqrtm, A)


def logm(A, disp=True):  # noqa: N803 - SciPy's name
    """The principal logarithm of a square matrix (stack), complex when a real matrix has a negative eigenvalue
    (as sqrtm); LinAlgError for a singular matrix; derivatives by the Frechet derivative, to any order."""
    return _principal("logm", sqrtm_logm.logm, A)


def solve_sylvester(a, b, q):
    """x with a @ x + x @ b == q: a (..., m, m), b (..., n, n), q (..., m, n), batch axes broadcast (SciPy takes
    single matrices). A primitive (SciPy's Bartels-Stewart on the NumPy backend) whose derivatives solve the
    same equation again: dX = S^-1(dQ - dA X - X dB), so every order works.

    >>> solve_sylvester(np.eye(2), 2 * np.eye(2), np.ones((2, 2)))  # doctest: +SKIP
    array([[0.33333333, 0.33333333],
           [0.33333333, 0.33333333]])
    """
    a, b, q = (_np_linalg.as_float(v, *others) for v, others in ((a, (b, q)), (b, (a, q)), (q, (a, b))))
    for name, value in (("a", a), ("b", b)):
        _np_linalg.check_matrix(f"solve_sylvester ({name})", value, square=True)
    _np_linalg.check_matrix("solve_sylvester (q)", q)
    m, n = shape(a)[-1], shape(b)[-1]
    if shape(q)[-2:] != (m, n):
        raise ShapeError(f"scipy.linalg.solve_sylvester: a {shape(a)} and b {shape(b)} need q of shape (..., {m}, "
                         f"{n}), got {shape(q)}")
    try:
        batch = np.broadcast_shapes(shape(a)[:-2], shape(b)[:-2], shape(q)[:-2])
    except ValueError:
        raise ShapeError(f"scipy.linalg.solve_sylvester: the batch axes of a {shape(a)}, b {shape(b)} and q "
                         f"{shape(q)} do not broadcast") from None
    a, b, q = (broadcast_to(v, batch + shape(v)[-2:]) for v in (a, b, q))
    return sylvester.solve_sylvester(a, b, q)


def _band_entries(lower, upper, n):
    """(rows, columns, inside) of the (n, n) matrix in SciPy's banded storage: A[i, j] = ab[u + i - j, j]
    where -u <= i - j <= l."""
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    rows = upper + i - j
    inside = (rows >= 0) & (rows <= lower + upper)
    return np.clip(rows, 0, lower + upper), j, inside


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """x with A x = b for the band matrix A in SciPy's storage: ab[u + i - j, j] = A[i, j] (l sub- and u
    super-diagonals, ab of shape (l + u + 1, n)); b (n,) or (n, k). The entries of ab outside the matrix are
    not read (their derivative is 0). Solved densely: the band is gathered into the (n, n) matrix (O(n^2)
    memory, O(n^3) work, where SciPy's banded LU takes O(n (l + u)^2)), with solve's derivative rules.

    >>> float(solve_banded((1, 1), np.array([[0.0, 1.0], [2.0, 2.0], [1.0, 0.0]]), np.array([3.0, 3.0]))[0])
    1.0
    """
    try:
        lower, upper = (operator.index(v) for v in l_and_u)
    except TypeError:
        raise ArgumentError(f"scipy.linalg.solve_banded: (l, u) must be two Python integers (static), got "
                            f"{l_and_u!r}") from None
    ab = _np_linalg.as_float(ab, b)
    b = _np_linalg.as_float(b, ab)
    if lower < 0 or upper < 0 or len(shape(ab)) != 2 or shape(ab)[0] != lower + upper + 1:
        raise ShapeError(f"scipy.linalg.solve_banded: ab must have shape (l + u + 1, n) = ({lower + upper + 1}, n) "
                         f"for (l, u) = ({lower}, {upper}), got {shape(ab)}")
    n = shape(ab)[1]
    if len(shape(b)) not in (1, 2) or shape(b)[0] != n:
        raise ShapeError(f"scipy.linalg.solve_banded: b must have shape ({n},) or ({n}, k) for ab {shape(ab)}, got "
                         f"{shape(b)}")
    rows, columns, inside = _band_entries(lower, upper, n)
    matrix = _np.where(inside, asvalue(ab)[rows, columns], 0.0)
    return _np_linalg.solve(matrix, b)
