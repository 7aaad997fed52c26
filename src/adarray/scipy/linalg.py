"""adarray.scipy.linalg: scipy.linalg look-alikes on the adarray linear-algebra primitives.

    import adarray.scipy.linalg as asl
    c_and_lower = asl.cho_factor(a); x = asl.cho_solve(c_and_lower, b)

SciPy's conventions: `cholesky` and `cho_factor` default to the upper factor (lower=False) and
read only the triangle they factor; `solve_triangular` defaults to lower=False; b may be (n,) or
(..., n, k), and stacks of matrices broadcast. Derivatives come from the primitives' rules
(triangular solves, Murray's Cholesky rule, the LU rule, the Frechet derivative of expm).
Unlike SciPy, solve_triangular of a singular triangle returns inf/NaN instead of raising (its
values are not inspected while tracing); cholesky and cho_factor raise LinAlgError for a matrix
that is not positive definite, as SciPy does. Complex matrices work throughout: cholesky is then
A = U^H U (L L^H), and trans=2 ('C') the conjugate transpose.
"""
from __future__ import annotations

from ..core.errors import ArgumentError, ShapeError
from ..numpy import linalg as _np_linalg
from ..numpy._core import asvalue, shape
from ..numpy._shape import broadcast_to
from ..primitives import factorizations, matrix_functions
from ..primitives import triangular as _triangular
from ..primitives.matrices import LinAlgError, conjugate, matmul, mH, tril, triu

__all__ = ["LinAlgError", "cho_factor", "cho_solve", "cholesky", "expm", "lu_factor", "lu_solve",
           "solve_triangular"]


def _prepare(name, a, b):
    """a (..., n, n) and b (n,) or (..., n, k) as float arrays with one batch shape, and whether b was 1-d."""
    a, b = _np_linalg._float(a, b), _np_linalg._float(b, a)
    _np_linalg._matrix(name, a, square=True)
    return _np_linalg._as_columns(name, a, b)


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
    return _np_linalg._from_columns(x, vector)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor reading one triangle of a: upper U with U^H U = A (default) or lower L."""
    a = _np_linalg._matrix("cholesky", _np_linalg._float(a), square=True)
    if lower:
        return _triangular.cholesky(a)
    return mH(_triangular.cholesky(mH(a)))   # the upper triangle of a is the lower one of a^H


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower): the factor in c's `lower` triangle; the other triangle holds a's entries, as in SciPy."""
    a = _np_linalg._matrix("cho_factor", _np_linalg._float(a), square=True)
    factor = cholesky(a, lower=lower)
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
    return _np_linalg._from_columns(x, vector)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): L (unit diagonal, below) and U packed in lu; piv are LAPACK's 0-based row interchanges."""
    a = _np_linalg._matrix("lu_factor", _np_linalg._float(a), square=True)
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
    return _np_linalg._from_columns(x, vector)


def expm(A):  # noqa: N803 - SciPy's name
    """The matrix exponential of a square matrix (stack); derivatives by the Frechet derivative."""
    a = _np_linalg._matrix("expm", _np_linalg._float(A), square=True)
    return matrix_functions.expm(a)

