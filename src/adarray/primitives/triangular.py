"""Triangular solves and the Cholesky factorisation.

triangular_solve[lower, transpose_a, unit_diagonal] a b -> x
    solves op(T) x = b for (..., n, n) a and (..., n, k) b with the same batch axes, where T is
    the lower (or upper) triangle of a, with ones on the diagonal if unit_diagonal (the other
    elements of a are never read), and op(T) is T or T^T. Linear in b; in a,
    dx = -op(T)^-1 op(dT) x, so  b_bar = op(T)^-T x_bar  and  a_bar = -tri(b_bar x^T)
    (or -tri(x b_bar^T) when transposed), tri the same triangle.

cholesky a -> L
    L L^T = A for the symmetric A whose lower triangle is a's (LAPACK reads only that triangle,
    so the derivative is taken with respect to it, and the upper triangle gets a zero cotangent;
    anp.linalg.cholesky passes the symmetric part (a + a^H) / 2 by default, as JAX does).
    Murray (2016), "Differentiation of the Cholesky decomposition", eqs. 8 and 10:
        dL = L Phi(L^-1 dA L^-T),   A_bar = L^-T Phi(L^T L_bar) L^-1 (then onto the lower triangle),
    Phi = the lower triangle with the diagonal halved. Both are triangular solves and products,
    so the rules differentiate again. A complex a gives L L^H = A for the Hermitian A whose lower
    triangle is a's, with conjugate transposes in the formulas; the reverse rule is their transpose
    under JAX's pairing, A_bar = L^-T Phi(L^T L_bar) conj(L)^-1 (then onto the lower triangle).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from . import elementwise as ew
from .matrices import (
    batch_matrices,
    complex_normal,
    conjugate,
    lower_cotangent,
    matmul,
    mH,
    mT,
    spd,
    square_matrix,
    symmetric_from_lower,
    tril,
    triu,
)
from .rules import aval_of_value, instantiate
from .structural import broadcast_in_dim
from .taylor import FROM_JVP, sub, total

# --- triangular_solve ----------------------------------------------------------------------------


def _triangular_solve_abstract_eval(a, b, *, lower, transpose_a, unit_diagonal):
    square_matrix("triangular_solve", a)
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"triangular_solve: b must have shape {a.shape[:-1]} + (k,) to match a {a}, got {b}")
    if b.dtype != a.dtype:
        raise ShapeError(f"triangular_solve: a {a} and b {b} differ in dtype")
    return b


triangular_solve_p = Primitive("triangular_solve", _triangular_solve_abstract_eval)


def triangular_solve(a, b, *, lower: bool = True, transpose_a: bool = False, unit_diagonal: bool = False):
    """x with op(T) x = b, T the lower (upper) triangle of a; see the module docstring.

    >>> triangular_solve(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], [3.0]]))  # doctest: +SKIP
    array([[1.], [2.]])
    """
    return triangular_solve_p.bind(a, b, lower=bool(lower), transpose_a=bool(transpose_a),
                                   unit_diagonal=bool(unit_diagonal))


def triangle(x, lower: bool, unit_diagonal: bool):
    """The elements of x that triangular_solve reads (strictly below/above the diagonal if unit)."""
    if lower:
        return tril(x, -1 if unit_diagonal else 0)
    return triu(x, 1 if unit_diagonal else 0)


def _triangular_solve_jvp(tangents, primals, output, *, lower, transpose_a, unit_diagonal):
    (ta, tb), (a, _) = tangents, primals
    rhs = None if is_zero(tb) else tb
    if not is_zero(ta):
        moved = triangle(ta, lower, unit_diagonal)
        term = matmul(mT(moved) if transpose_a else moved, output)
        rhs = ew.neg(term) if rhs is None else ew.sub(rhs, term)
    if rhs is None:
        return Zero(aval_of_value(output))
    return triangular_solve(a, rhs, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)


def _triangular_solve_vjp(cotangent, primals, output, needs, *, lower, transpose_a, unit_diagonal):
    a, _ = primals
    ct_b = triangular_solve(a, cotangent, lower=lower, transpose_a=not transpose_a, unit_diagonal=unit_diagonal)
    ct_a = None
    if needs[0]:
        outer = matmul(output, mT(ct_b)) if transpose_a else matmul(ct_b, mT(output))
        ct_a = ew.neg(triangle(outer, lower, unit_diagonal))
    return [ct_a, ct_b if needs[1] else None]


triangular_solve_p.jvp, triangular_solve_p.vjp = _triangular_solve_jvp, _triangular_solve_vjp
batch_matrices(triangular_solve_p)


def _triangular_matrix(rng, shape):
    """Random entries everywhere (the unread triangle too), a diagonal well away from zero."""
    n = shape[-1]
    a = rng.normal(size=shape)
    return a + np.eye(n) * (3.0 * np.sign(rng.normal(size=shape[:-1]))[..., None, :])


def _triangular_solve_sample(rng):
    cases = []
    for lower in (True, False):
        for transpose_a in (False, True):
            for unit in (False, True):
                params = {"lower": lower, "transpose_a": transpose_a, "unit_diagonal": unit}
                cases.append(([_triangular_matrix(rng, (3, 3)), rng.normal(size=(3, 2))], params))
    params = {"lower": True, "transpose_a": False, "unit_diagonal": False}
    cases += [
        ([_triangular_matrix(rng, (2, 4, 4)), rng.normal(size=(2, 4, 3))], params),
        ([_triangular_matrix(rng, (1, 1)), rng.normal(size=(1, 1))], params),
        ([_triangular_matrix(rng, (3, 3)), rng.normal(size=(3, 0))], params),
        ([_triangular_matrix(rng, (0, 2, 2)), rng.normal(size=(0, 2, 1))], params),
        ([_triangular_matrix(rng, (3, 3)).astype(np.float32), rng.normal(size=(3, 2)).astype(np.float32)],
         {"lower": False, "transpose_a": True, "unit_diagonal": False}),
        ([_triangular_matrix(rng, (3, 3)) + 1j * rng.normal(size=(3, 3)), complex_normal(rng, (3, 2))],
         {"lower": True, "transpose_a": True, "unit_diagonal": False}),
    ]
    return cases


triangular_solve_p.sample = _triangular_solve_sample

# --- cholesky ------------------------------------------------------------------------------------


def _cholesky_abstract_eval(a):
    square_matrix("cholesky", a)
    return a


cholesky_p = Primitive("cholesky", _cholesky_abstract_eval)


def cholesky(a):
    """The lower Cholesky factor L of the symmetric matrix whose lower triangle is a's (L L^T = A)."""
    return cholesky_p.bind(a)


def _phi(x):
    """The lower triangle with the diagonal halved."""
    aval = aval_of_value(x)
    n = aval.shape[-1]
    weights = (np.tri(n) - 0.5 * np.eye(n)).astype(aval.dtype)
    return ew.mul(tril(x), broadcast_in_dim(weights, aval.shape, (aval.ndim - 2, aval.ndim - 1)))


def _cholesky_jvp(tangents, primals, output):
    (ta,), factor = tangents, output
    half = triangular_solve(factor, symmetric_from_lower(ta), lower=True)          # L^-1 dA
    middle = triangular_solve(factor, mH(half), lower=True)                         # L^-1 dA L^-H
    return matmul(factor, _phi(middle))


def _cholesky_vjp(cotangent, primals, output, needs):
    factor = output
    inner = _phi(matmul(mT(factor), instantiate(cotangent)))                        # Phi(L^T L_bar)
    left = triangular_solve(factor, inner, lower=True, transpose_a=True)            # L^-T Phi
    both = mT(triangular_solve(conjugate(factor), mT(left), lower=True, transpose_a=True))  # L^-T Phi conj(L)^-1
    return [lower_cotangent(both)]


cholesky_p.jvp, cholesky_p.vjp = _cholesky_jvp, _cholesky_vjp
batch_matrices(cholesky_p)


def _with_noise_above(rng, matrix):
    """An SPD matrix with random numbers in its strict upper triangle, which cholesky never reads."""
    noise = rng.normal(size=matrix.shape)
    if np.iscomplexobj(matrix):
        noise = noise + 1j * rng.normal(size=matrix.shape)
    return np.tril(matrix) + np.triu(noise, 1)


cholesky_p.sample = lambda rng: [
    ([_with_noise_above(rng, spd(rng, (3, 3)))], {}),
    ([_with_noise_above(rng, spd(rng, (2, 4, 4)))], {}),
    ([spd(rng, (1, 1))], {}),
    ([spd(rng, (0, 2, 2))], {}),
    ([spd(rng, (3, 3), np.float32)], {}),
    ([_with_noise_above(rng, spd(rng, (3, 3), np.complex128))], {}),
]


# --- Taylor mode ----------------------------------------------------------------------------------------
# triangular_solve reads only its triangle: X_k = T_0^-1 (B_k - sum_{j>=1} op(triangle(A_j)) X_(k-j)).
# cholesky takes the series of its jvp rule (exact; it re-binds cholesky once).

def _triangular_solve_taylor(series, output, *, lower, transpose_a, unit_diagonal):
    a, b = series
    x = [output]
    for k in range(1, len(a)):
        terms = []
        for j in range(1, k + 1):
            if not is_zero(a[j]):
                moved = triangle(a[j], lower, unit_diagonal)
                terms.append(matmul(mT(moved) if transpose_a else moved, x[k - j]))
        rhs = sub(b[k], total(terms, aval_of_value(output)))
        x.append(rhs if is_zero(rhs) else triangular_solve(a[0], rhs, lower=lower, transpose_a=transpose_a,
                                                            unit_diagonal=unit_diagonal))
    return x[1:]


def _set_taylor_rules():
    triangular_solve_p.taylor = _triangular_solve_taylor
    cholesky_p.taylor = FROM_JVP


_set_taylor_rules()
