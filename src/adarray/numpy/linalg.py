"""adarray.numpy.linalg: numpy.linalg on traced values and plain arrays, with derivatives.

    import adarray.numpy as anp
    anp.linalg.solve(a, b); anp.linalg.slogdet(a); anp.linalg.eigh(a); anp.linalg.norm(x, ord=2)
    anp.linalg.eig(a)      # complex eigenvalues and eigenvectors of a general matrix, with derivatives

Every function takes stacks of matrices (..., m, n) of float32, float64, complex64 or complex128 (integers compute in
float64), with NumPy's semantics and results. Derivatives come from matrix identities, never from
differentiating a factorisation loop: the primitives are cholesky, triangular_solve, solve, lu,
qr, eigh, svd, det (with adjugate), pinv and expm (adarray.primitives.triangular, factorizations,
spectral, matrix_functions), and everything else here is a composition of them:

    inv(a)          solve(a, I)
    slogdet(a)      LU with partial pivoting: sign = parity(pivots) prod sign(u_ii), log|det| = sum log|u_ii|
    det(a)          its own primitive (LAPACK's LU); gradient adj(A)^T, exact for singular matrices
    lstsq(a, b)     pinv(a, rcond) @ b, with the residuals, rank and singular values NumPy returns
    matrix_power    repeated squaring (inv first for negative powers)
    norm            sums, maxima and square roots of |x|; the singular values for ord 2, -2, 'nuc'

Functions of a symmetric (Hermitian) matrix, cholesky, eigh and eigvalsh, see its symmetric part
(a + a^H) / 2, as JAX's do by default (symmetrize_input=True): the same matrix for a symmetric a
(bit for bit), and a symmetric gradient, so that a gradient step keeps a symmetric parameter
symmetric. NumPy reads one triangle instead (LAPACK's UPLO); symmetrize_input=False does that, with
the gradient with respect to that triangle (zero in the other). The two differ in value only for a
non-symmetric a.

Conventions where the derivative does not exist:
  * eigh / svd with repeated eigenvalues (singular values): eigenvalue derivatives are exact;
    eigenvectors of a degenerate eigenspace are taken not to rotate within it (the 1/(w_j - w_i)
    terms are 0 there), which is exact for anything that sees the eigenspace only through its
    projector; second derivatives of spectral functions at a repeated eigenvalue are not (they
    miss the within-eigenspace terms); see adarray.primitives.spectral for the precise statement.
  * norm(x) (ord None, 2, 'fro') and every vector p-norm with p > 0 have gradient 0 at x = 0 (a
    subgradient; JAX and PyTorch give NaN).
  * qr, cholesky, lu at rank-deficient matrices: values as LAPACK gives them (cholesky raises
    LinAlgError when the matrix is not positive definite, as NumPy does); derivatives divide by the
    zero pivots and are inf or NaN.
  * solve and inv of a singular matrix raise LinAlgError, as NumPy does.
"""
from __future__ import annotations

import builtins

import numpy as np

from ..core.errors import ArgumentError, ShapeError, UnsupportedError
from ..core.types import is_complex, real_dtype
from ..primitives import eig as eig_primitives
from ..primitives import elementwise as ew
from ..primitives import factorizations, matrix_functions, spectral
from ..primitives import triangular as triangular_primitives
from ..primitives.matrices import LinAlgError, diagonal
from ..tracing import ARRAY_METHODS, Tracer
from ._complex import conj, imag, real
from ._contractions import matmul
from ._core import asvalue, broadcast_shapes, cast, dtype, normalize_axis, result_dtype, shape
from ._math import abs, not_equal, power, sign, sqrt, where
from ._reductions import max, min, prod, sum
from ._shape import broadcast_to, moveaxis, reshape, squeeze, stack

__all__ = [
    "LinAlgError", "cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matrix_norm",
    "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
    "vector_norm",
]


def _result(name, fields):
    """A tuple with named fields, like NumPy's result types, that pytrees see as a plain tuple."""
    namespace = {"__slots__": (), "__new__": lambda cls, *values: tuple.__new__(cls, values),
                 "__repr__": lambda self: f"{name}({', '.join(f'{f}={v!r}' for f, v in zip(fields, self))})"}
    for index, field in enumerate(fields):
        namespace[field] = property(lambda self, index=index: self[index])
    return type(name, (tuple,), namespace)


EigResult = _result("EigResult", ("eigenvalues", "eigenvectors"))
EighResult = _result("EighResult", ("eigenvalues", "eigenvectors"))
QRResult = _result("QRResult", ("Q", "R"))
SlogdetResult = _result("SlogdetResult", ("sign", "logabsdet"))
SVDResult = _result("SVDResult", ("U", "S", "Vh"))


# --- checks and promotion ------------------------------------------------------------------------


def _holds_tracer(x) -> bool:
    return isinstance(x, Tracer) or (isinstance(x, (list, tuple)) and builtins.any(_holds_tracer(v) for v in x))


def _asarray(x):
    """asvalue, and nested lists holding traced values stacked (NumPy would ask them for their values)."""
    if isinstance(x, (list, tuple)) and _holds_tracer(x):
        return stack([_asarray(v) for v in x])
    return asvalue(x)


def as_float(x, *others):
    """x as an array of the float dtype the operation computes in (NumPy: integers -> float64; complex
    stays complex)."""
    x = _asarray(x)
    others = [_asarray(o) for o in others]
    target = result_dtype(x, *others) if others else dtype(x)
    if not np.issubdtype(target, np.inexact):
        target = np.dtype(np.float64)
    if np.dtype(target).itemsize < 4:
        target = np.dtype(np.float32)
    return cast(x, target)


def check_matrix(name, a, square=False):
    a_shape = shape(a)
    if len(a_shape) < 2:
        raise ShapeError(f"linalg.{name}: needs a matrix or a stack of matrices (..., m, n), got shape {a_shape}")
    if square and a_shape[-1] != a_shape[-2]:
        raise ShapeError(f"linalg.{name}: needs square matrices (..., n, n), got shape {a_shape}")
    return a


def _mH(a):  # noqa: N802
    """The conjugate transpose of the last two axes (the transpose of a real a)."""
    ndim = len(shape(a))
    return conj(moveaxis(a, ndim - 1, ndim - 2))


def _batch_together(name, a, b):
    """a (..., n, n) and b (..., n, k) with their batch axes broadcast to one shape."""
    batch = broadcast_shapes(f"linalg.{name}", shape(a)[:-2], shape(b)[:-2])
    return broadcast_to(a, batch + shape(a)[-2:]), broadcast_to(b, batch + shape(b)[-2:])


def as_columns(name, a, b):
    """NumPy 2's rule: a 1-d b is one vector, anything else a stack of (n, k) matrices."""
    n = shape(a)[-1]
    vector = len(shape(b)) == 1
    if vector:
        if shape(b)[0] != n:
            raise ShapeError(f"linalg.{name}: a of shape {shape(a)} and b of shape {shape(b)} do not fit "
                             f"(b needs {n} rows)")
        b = reshape(b, (n, 1))
    elif len(shape(b)) < 1 or shape(b)[-2] != n:
        raise ShapeError(f"linalg.{name}: a of shape {shape(a)} and b of shape {shape(b)} do not fit "
                         f"(b needs shape (..., {n}, k) or ({n},))")
    a, b = _batch_together(name, a, b)
    return a, b, vector


def from_columns(x, vector):
    return reshape(x, shape(x)[:-1]) if vector else x


# --- solving and inverting -----------------------------------------------------------------------


def solve(a, b):
    """x with a @ x == b; a (..., n, n), b (n,) or (..., n, k) (batch axes broadcast)."""
    a, b = as_float(a, b), as_float(b, a)
    check_matrix("solve", a, square=True)
    a, b, vector = as_columns("solve", a, b)
    return from_columns(factorizations.solve(a, b), vector)


def inv(a):
    """The inverse, as solve(a, I)."""
    a = check_matrix("inv", as_float(a), square=True)
    n = shape(a)[-1]
    return factorizations.solve(a, broadcast_to(np.eye(n, dtype=dtype(a)), shape(a)))


def det(a):
    """The determinant; its gradient adj(a)^T is exact for singular matrices too."""
    return matrix_functions.det(check_matrix("det", as_float(a), square=True))


def _pivot_parity(pivots):
    """(-1) ** (number of row interchanges), as the float dtype of the matrix."""
    n = shape(pivots)[-1]
    swaps = sum(not_equal(pivots, np.arange(n, dtype=np.int32)), axis=-1)
    return 1 - 2 * (swaps % 2)


def slogdet(a):
    """(sign, log|det|) from the LU factorisation with partial pivoting, as NumPy."""
    a = check_matrix("slogdet", as_float(a), square=True)
    packed, pivots, _ = factorizations.lu(a)
    pivot_values = diagonal(packed)
    parity = cast(_pivot_parity(pivots), dtype(a))
    with np.errstate(divide="ignore"):  # eagerly, log(0) = -inf is the answer, not a warning
        logabsdet = sum(ew.log(ew.abs(pivot_values)), axis=-1)
    return SlogdetResult(parity * prod(sign(pivot_values), axis=-1), logabsdet)


def symmetric_part(a):
    """(a + a^H) / 2 of a stack of square matrices: a itself, bit for bit, when a is symmetric
    (Hermitian); the function of a symmetric matrix that JAX evaluates (symmetrize_input=True)."""
    return (a + _mH(a)) * 0.5


def _symmetric_argument(name, a, symmetrize_input):
    a = check_matrix(name, as_float(a), square=True)
    return symmetric_part(a) if symmetrize_input else a


def cholesky(a, upper=False, *, symmetrize_input=True):
    """The Cholesky factor of the symmetric part of a: lower L with L L^H = (a + a^H) / 2 (upper=True:
    U with U^H U = ...). symmetrize_input=False reads only a's lower (upper) triangle, as NumPy. Raises
    LinAlgError unless the matrix is positive definite.

    >>> L = cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))  # doctest: +SKIP
    array([[2., 0.], [1., 2.]])
    """
    a = _symmetric_argument("cholesky", a, symmetrize_input)
    if upper:
        return _mH(triangular_primitives.cholesky(_mH(a)))
    return triangular_primitives.cholesky(a)


def matrix_power(a, n):
    """a ** n by repeated squaring; negative n inverts first (n = 0 gives the identity)."""
    a = _asarray(a)
    check_matrix("matrix_power", a, square=True)
    if not isinstance(n, (int, np.integer)):
        raise ArgumentError(f"linalg.matrix_power: the exponent must be an integer, got {n!r}")
    n = int(n)
    if n == 0:
        return broadcast_to(np.eye(shape(a)[-1], dtype=dtype(a)), shape(a))
    if n < 0:
        a, n = inv(a), -n
    result, power_of_a = None, a
    while n:
        if n & 1:
            result = power_of_a if result is None else matmul(result, power_of_a)
        n >>= 1
        if n:
            power_of_a = matmul(power_of_a, power_of_a)
    return result


def multi_dot(arrays):
    """a @ b @ c ... in the cheapest order (NumPy's dynamic programme); the first array may be a
    row vector and the last a column vector (1-d)."""
    arrays = [_asarray(x) for x in arrays]
    if len(arrays) < 2:
        raise ShapeError(f"linalg.multi_dot: needs at least two arrays, got {len(arrays)}")
    first_vector, last_vector = len(shape(arrays[0])) == 1, len(shape(arrays[-1])) == 1
    if first_vector:
        arrays[0] = reshape(arrays[0], (1, -1))
    if last_vector:
        arrays[-1] = reshape(arrays[-1], (-1, 1))
    for x in arrays:
        if len(shape(x)) != 2:
            raise ShapeError(f"linalg.multi_dot: every array must be 2-d (the first and last may be 1-d), "
                             f"got shapes {[shape(y) for y in arrays]}")
    for left, right in zip(arrays, arrays[1:]):
        if shape(left)[1] != shape(right)[0]:
            raise ShapeError(f"linalg.multi_dot: shapes {shape(left)} and {shape(right)} do not align "
                             f"(all shapes {[shape(x) for x in arrays]})")
    sizes = [shape(arrays[0])[0]] + [shape(x)[1] for x in arrays]
    order = _chain_order(sizes)

    def product(i, j):
        if i == j:
            return arrays[i]
        return matmul(product(i, order[i][j]), product(order[i][j] + 1, j))

    result = product(0, len(arrays) - 1)
    if first_vector and last_vector:
        return reshape(result, ())
    if first_vector or last_vector:
        return reshape(result, (-1,))
    return result


def _chain_order(sizes):
    """split[i][j]: where the cheapest product of arrays i..j splits (matrix-chain ordering)."""
    count = len(sizes) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                candidate = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if cost[i][j] is None or candidate < cost[i][j]:
                    cost[i][j], split[i][j] = candidate, k
    return split


# --- factorisations ------------------------------------------------------------------------------


def qr(a, mode="reduced"):
    """Householder QR: mode 'reduced' (q (m, k), r (k, n)), 'complete' (q (m, m), r (m, n)) or 'r'."""
    a = check_matrix("qr", as_float(a))
    if mode not in ("reduced", "complete", "r"):
        raise UnsupportedError(f"linalg.qr: mode={mode!r} is not supported (use 'reduced', 'complete' or 'r')")
    q, r = factorizations.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def _symmetric_input(name, a, uplo, symmetrize_input):
    if uplo is None:
        uplo = "L"
    if uplo not in ("L", "U"):
        raise ArgumentError(f"linalg.{name}: UPLO must be 'L' or 'U', got {uplo!r}")
    a = _symmetric_argument(name, a, symmetrize_input)
    return a if uplo == "L" or symmetrize_input else _mH(a)   # the upper triangle of a is the lower one of a^H


def eigh(a, UPLO="L", *, symmetrize_input=True):  # noqa: N803 - NumPy's name
    """(eigenvalues ascending, eigenvectors as columns) of the symmetric part (a + a^H) / 2 of a;
    symmetrize_input=False: of the symmetric matrix whose UPLO triangle is a's, as NumPy."""
    values, vectors = spectral.eigh(_symmetric_input("eigh", a, UPLO, symmetrize_input))
    return EighResult(values, vectors)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):  # noqa: N803 - NumPy's name
    """The eigenvalues, ascending, of the symmetric part (a + a^H) / 2 of a; symmetrize_input=False:
    of the symmetric matrix whose UPLO triangle is a's, as NumPy."""
    return spectral.eigh(_symmetric_input("eigvalsh", a, UPLO, symmetrize_input), compute_v=False)[0]


def eig(a):
    """(eigenvalues, eigenvectors as columns) of a general square matrix: a @ v[:, j] = w[j] v[:, j].

    Complex always, also for real a and real eigenvalues (as JAX: NumPy returns real arrays then, but
    a traced result's dtype cannot depend on values). Each eigenvector has norm 1 and its largest
    component real, as LAPACK gives them, and its derivative keeps both (adarray.primitives.eig).
    """
    values, vectors = eig_primitives.eig(check_matrix("eig", as_float(a), square=True))
    return EigResult(values, vectors)


def eigvals(a):
    """The eigenvalues of a general square matrix, complex (see eig)."""
    return eig_primitives.eig(check_matrix("eigvals", as_float(a), square=True), compute_v=False)[0]


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """(U, S, Vh) with a = U diag(S) Vh and S descending; only S if compute_uv is False."""
    a = check_matrix("svd", as_float(a))
    if not compute_uv:
        return spectral.svd(a, compute_uv=False)[0]
    u, s, vh = spectral.svd(a, full_matrices=bool(full_matrices))
    return SVDResult(u, s, vh)


def svdvals(x):
    """The singular values, descending."""
    return svd(x, compute_uv=False)


def _static_float(name, value, what):
    if isinstance(value, Tracer) or np.ndim(value) != 0:
        raise ArgumentError(f"linalg.{name}: {what} must be a Python or NumPy scalar, got {value!r}")
    return float(value)


_DEFAULT = object()


def pinv(a, rcond=None, hermitian=False, *, rtol=_DEFAULT):
    """The Moore-Penrose pseudo-inverse: singular values <= rcond * max are dropped (NumPy's default
    rcond 1e-15; rtol=None means max(m, n) * eps). Derivatives are exact where the rank is constant."""
    a = check_matrix("pinv", as_float(a))
    if rtol is not _DEFAULT and rcond is not None:
        raise ArgumentError("linalg.pinv: give rcond or rtol, not both")
    if rtol is not _DEFAULT:
        cutoff = builtins.max(shape(a)[-2:]) * np.finfo(dtype(a)).eps if rtol is None else rtol
    else:
        cutoff = 1e-15 if rcond is None else rcond
    return matrix_functions.pinv(a, _static_float("pinv", cutoff, "rcond"))



def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):  # noqa: N803 - NumPy's name
    """The number of singular values above tol (default max(m, n) * eps * the largest), as NumPy."""
    A = _asarray(A)
    if len(shape(A)) < 2:
        return cast(sum(not_equal(A, 0)) > 0, np.int64)
    values = svdvals(A)
    if tol is None:
        factor = rtol if rtol is not None else builtins.max(shape(A)[-2:]) * np.finfo(dtype(values)).eps
        tol = max(values, axis=-1, keepdims=True) * factor
    else:
        tol = reshape(asvalue(tol), shape(tol) + (1,))
    return sum(values > tol, axis=-1)


def lstsq(a, b, rcond=None):
    """(x, residuals, rank, s): the minimum-norm least-squares solution pinv(a, rcond) @ b, the sums of
    squared residuals (empty unless m > n and the rank is n), the rank and the singular values.
    a is one (m, n) matrix, b (m,) or (m, k), as in NumPy. rcond defaults to max(m, n) * eps
    (negative: eps).
    Traced (inside grad or jit), the rank is not known when shapes are fixed, so for m > n the
    residuals are always returned (a NumPy call on a rank-deficient a returns an empty array)."""
    a, b = as_float(a, b), as_float(b, a)
    if len(shape(a)) != 2 or len(shape(b)) not in (1, 2) or shape(b)[0] != shape(a)[0]:
        raise ShapeError(f"linalg.lstsq: needs a (m, n) and b (m,) or (m, k) with the same m, got shapes "
                         f"{shape(a)} and {shape(b)}")
    m, n = shape(a)
    eps = np.finfo(dtype(a)).eps
    cutoff = eps * builtins.max(m, n) if rcond is None else _static_float("lstsq", rcond, "rcond")
    cutoff = eps if cutoff < 0 else cutoff      # LAPACK gelsd: a negative rcond means machine precision
    values = svdvals(a)
    rank = sum(values > max(values) * cutoff) if n and m else np.asarray(0, np.int64)
    x = matmul(matrix_functions.pinv(a, cutoff), b)
    residuals = sum(_squared_magnitude(b - matmul(a, x)), axis=0)
    if len(shape(b)) == 1:
        residuals = reshape(residuals, (1,))
    full_rank = m > n and (isinstance(rank, Tracer) or int(rank) == n)
    if not full_rank:
        residuals = np.zeros((0,), real_dtype(dtype(a)))
    return x, residuals, cast(rank, np.int32), values


# --- norms ---------------------------------------------------------------------------------------


def _squared_magnitude(x):
    """|x|^2: x * x, or re^2 + im^2 for complex x (squares that the square-root guard recognises)."""
    if not is_complex(dtype(x)):
        return x * x
    re, im = real(x), imag(x)
    return re * re + im * im


def _sum_of_squares_root(x, axis, keepdims):
    # sqrt(sum(|x|^2)) in exactly this form: the square-root guard (passes/guards.py) recognises it
    # and gives the gradient 0 at x = 0.
    return sqrt(sum(_squared_magnitude(x), axis=axis, keepdims=keepdims))


def _vector_norm(x, ord, axis, keepdims):  # noqa: A002 - NumPy's name
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return _sum_of_squares_root(x, axis, keepdims)
    if isinstance(ord, str):
        raise ArgumentError(f"linalg.norm: invalid norm order {ord!r} for vectors")
    if ord == np.inf:
        return max(abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return min(abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum(cast(not_equal(x, 0), real_dtype(dtype(x))), axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(abs(x), axis=axis, keepdims=keepdims)
    p = float(ord)
    magnitude = abs(x)
    if p < 0:
        return power(sum(power(magnitude, p), axis=axis, keepdims=keepdims), 1.0 / p)
    # As for ord 2: 0 at 0 with the subgradient 0. The powers' derivatives at 0 are infinite (p < 1) or their
    # sum's root's is: a slice of zeros is summed as ones instead, so only structural zeros reach them.
    all_zero = sum(magnitude, axis=axis, keepdims=True) == 0
    total = sum(power(where(all_zero, 1.0, magnitude), p), axis=axis, keepdims=keepdims)
    all_zero = all_zero if keepdims else squeeze(all_zero, axis=axis)
    return where(all_zero, 0.0, power(total, 1.0 / p))


def _singular_values_over(x, row_axis, col_axis):
    return svdvals(moveaxis(x, (row_axis, col_axis), (-2, -1)))


def _matrix_norm(x, ord, row_axis, col_axis):  # noqa: A002 - NumPy's name
    if ord in (None, "fro", "f"):
        return _sum_of_squares_root(x, (row_axis, col_axis), False)
    if ord == "nuc":
        return sum(_singular_values_over(x, row_axis, col_axis), axis=-1)
    if isinstance(ord, str):
        raise ArgumentError(f"linalg.norm: invalid norm order {ord!r} for matrices")
    if ord in (2, -2):
        reduce_ = max if ord == 2 else min
        return reduce_(_singular_values_over(x, row_axis, col_axis), axis=-1)
    if ord in (1, -1):
        reduce_ = max if ord == 1 else min
        if col_axis > row_axis:
            col_axis -= 1
        return reduce_(sum(abs(x), axis=row_axis), axis=col_axis)
    if ord in (np.inf, -np.inf):
        reduce_ = max if ord == np.inf else min
        if row_axis > col_axis:
            row_axis -= 1
        return reduce_(sum(abs(x), axis=col_axis), axis=row_axis)
    raise ArgumentError(f"linalg.norm: invalid norm order {ord!r} for matrices")


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's name
    """Vector and matrix norms with NumPy's `ord`, `axis` (an int or a 2-tuple) and `keepdims`.

    >>> norm(np.array([3.0, 4.0]))  # doctest: +SKIP
    5.0
    """
    x = as_float(x)
    ndim = len(shape(x))
    if axis is None:
        if ord is None or (ord in ("f", "fro") and ndim == 2) or (not isinstance(ord, str) and ord == 2 and ndim == 1):
            result = _sum_of_squares_root(reshape(x, (-1,)), 0, False)
            return reshape(result, (1,) * ndim) if keepdims else result
        axis = tuple(range(ndim))
    elif not isinstance(axis, (tuple, list)):
        if isinstance(axis, Tracer) or not isinstance(axis, (int, np.integer)):
            raise ArgumentError(f"linalg.norm: axis must be None, an integer or a tuple of integers, got {axis!r}")
        axis = (int(axis),)
    axis = tuple(normalize_axis(int(a), ndim, "linalg.norm") for a in axis)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis[0], keepdims)
    if len(axis) != 2:
        raise ShapeError(f"linalg.norm: improper number of dimensions to norm: axis {axis} of shape {shape(x)}")
    if axis[0] == axis[1]:
        raise ShapeError(f"linalg.norm: duplicate axes {axis}")
    result = _matrix_norm(x, ord, *axis)
    if keepdims:
        kept = list(shape(x))
        kept[axis[0]] = kept[axis[1]] = 1
        result = reshape(result, tuple(kept))
    return result


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002 - NumPy's name
    """The Array API's vector norm: axis None (all axes) or any tuple of axes count as one vector."""
    x = as_float(x)
    ndim = len(shape(x))
    axes = tuple(range(ndim)) if axis is None else (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    axes = tuple(normalize_axis(int(a), ndim, "linalg.vector_norm") for a in axes)
    rest = [i for i in range(ndim) if i not in axes]
    moved = moveaxis(x, axes, tuple(range(ndim - len(axes), ndim)))
    flat = reshape(moved, tuple(shape(x)[i] for i in rest) + (-1,))
    result = _vector_norm(flat, ord, len(rest), False)
    if keepdims:
        result = reshape(result, tuple(1 if i in axes else n for i, n in enumerate(shape(x))))
    return result


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002 - NumPy's name
    """The Array API's matrix norm over the last two axes."""
    ndim = len(shape(x))
    return norm(x, ord=ord, axis=(ndim - 2, ndim - 1), keepdims=keepdims)


# --- condition numbers and tensor equations -----------------------------------------------------


def cond(x, p=None):
    """The condition number of x in the norm p (numpy.linalg.cond): s_max / s_min from the singular
    values for p None or 2 (s_min / s_max for -2; any (..., m, n)), else norm(x, p) norm(inv(x), p) for
    square x with p in 'fro', 'nuc', inf, -inf, 1, -1. Differentiable through svd / inv and norm;
    a singular matrix gives inf for p None, 2 and -2 (0 for -2) and raises LinAlgError otherwise
    (inv raises, as in solve)."""
    x = check_matrix("cond", as_float(x))
    if 0 in shape(x)[-2:]:
        raise LinAlgError("linalg.cond: cond is not defined on empty arrays")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        values = svd(x, compute_uv=False)
        largest, smallest = values[..., 0], values[..., -1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return smallest / largest if p == -2 else largest / smallest
    check_matrix("cond", x, square=True)
    ndim = len(shape(x))
    return norm(x, p, axis=(ndim - 2, ndim - 1)) * norm(inv(x), p, axis=(ndim - 2, ndim - 1))


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b (numpy.linalg.tensorsolve): a reshaped to a square
    matrix; `axes` are moved to the end of a first."""
    a, b = as_float(_asarray(a), b), as_float(_asarray(b), a)
    ndim = len(shape(a))
    if axes is not None:
        order = [k for k in range(ndim) if k not in [normalize_axis(int(q), ndim, "linalg.tensorsolve")
                                                     for q in axes]]
        order += [normalize_axis(int(q), ndim, "linalg.tensorsolve") for q in axes]
        a = moveaxis(a, order, list(range(ndim)))
    unknown_shape = tuple(shape(a)[len(shape(b)):])
    count = int(np.prod(unknown_shape))
    if int(np.prod(shape(a))) != count * count:
        raise LinAlgError(f"linalg.tensorsolve: a of shape {shape(a)} and b of shape {shape(b)} do not give a "
                          "square system (prod(a.shape[b.ndim:]) ** 2 must equal a.size)")
    x = solve(reshape(a, (count, count)), reshape(b, (count,)))
    return reshape(x, unknown_shape)


def tensorinv(a, ind=2):
    """The inverse of a with respect to tensordot over its first `ind` axes
    (numpy.linalg.tensorinv): inv of a reshaped to a square matrix, reshaped back."""
    a = as_float(_asarray(a))
    if int(ind) <= 0:
        raise ArgumentError(f"linalg.tensorinv: ind must be a positive integer, got {ind!r}")
    ind = int(ind)
    old_shape = tuple(shape(a))
    rows = int(np.prod(old_shape[ind:]))
    if rows * rows != int(np.prod(old_shape)):
        raise LinAlgError(f"linalg.tensorinv: a of shape {old_shape} with ind={ind} is not square "
                          "(prod(a.shape[:ind]) must equal prod(a.shape[ind:]))")
    return reshape(inv(reshape(a, (rows, rows))), old_shape[ind:] + old_shape[:ind])


__all__ += ["cond", "tensorinv", "tensorsolve"]
ARRAY_METHODS.update({f"function.{name}": globals()[name] for name in __all__ if name != "LinAlgError"})
