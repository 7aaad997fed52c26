"""Functions of a whole matrix with their own derivative rules: det, adjugate, pinv, expm.

det a -> d
    LAPACK's LU with partial pivoting (numpy.linalg.det). d det = tr(adj(A) dA) (Jacobi's formula
    in its adjugate form), so the gradient adj(A)^T = det(A) A^-T is right for singular matrices
    too: the rank n-1 ones get the (nonzero, rank one) adjugate, lower ranks get 0.
adjugate a -> adj(A)
    adj(A) = det(A) A^-1, computed from the SVD A = U S V^H as det(U) det(V^H) V diag(prod_{j!=i} s_j) U^H,
    which needs no inverse and is exact at every rank.
adjugate_derivative a e1 ... ek -> d^k adj(A)[E1, ..., Ek]
    The derivatives of the adjugate, one primitive for every order k >= 1. adj(A) is a polynomial of
    degree n - 1 in the entries of A, so its k-th derivative is a symmetric k-linear form in the
    directions, defined at every A (every rank, repeated singular values, the zero matrix), constant
    for k = n - 1 and zero for k >= n. Its own derivative is the next form plus the form with each
    direction's tangent in place of the direction:
        d D_k(A; E1..Ek) = D_(k+1)(A; E1..Ek, dA) + sum_m D_k(A; E1..dEm..Ek),
    so derivatives of every order are exact by construction: no rule differentiates an SVD, a
    select between formulas, or a division by det(A). Reverse mode uses the symmetry of the forms of
    det: adj(A)_ji = d det / dA_ij, so <G, D_k(A; E1..Ek)> = d^(k+1) det(A)[E1, ..., Ek, G^T], and
        cotangent of Em = D_k(A; E1..G^T..Ek)^T,   cotangent of A = D_(k+1)(A; E1..Ek, G^T)^T.
    Why a primitive rather than a formula in IR: the formulas that are polynomials in IR (Faddeev-
    LeVerrier, cofactor sums) lose accuracy on graded or nearly singular matrices or cost n!, and
    the accurate ones (the inverse, the SVD) have derivatives that are wrong where they are singular
    or degenerate. Inside the primitive the NumPy implementation (backends/numpy/linalg.py) is free
    to pick the accurate way per matrix (block elimination on the SVD-rotated matrix: the inverse on
    the well-conditioned block, products of singular values for the rest): it chooses how to
    compute, never what, so the choice cannot change a derivative of any order.
pinv[rcond] a -> A^+
    numpy.linalg.pinv. Golub and Pereyra (1973), eq. 4.12, with X = A^+:
        dX = -X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X,
    exact wherever the rank (the number of singular values above rcond * max s) does not change,
    repeated singular values included.
expm a -> exp(A)
    scipy.linalg.expm (Pade approximation with scaling and squaring). Its derivative in direction E
    is the Frechet derivative, the upper right block of exp([[A, E], [0, A]]) (Mathias 1996); the
    reverse rule is the same with A^T. Both call expm again, so every order works.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from . import elementwise as ew
from .matrices import (
    batch_matrices,
    columns,
    complex_normal,
    float_matrix,
    hstack,
    jax_cotangent,
    matmul,
    mH,
    mT,
    rows,
    square_matrix,
    trace_product,
    vstack,
    zeros,
)
from .rules import add_tangents, aval_of_value, instantiate
from .spectral import matrix_with_singular_values
from .structural import broadcast_in_dim
from .taylor import FROM_JVP

# --- det, adjugate and the derivatives of the adjugate ------------------------------------------


def _det_abstract_eval(a):
    square_matrix("det", a)
    return a.update(shape=a.shape[:-2])


def _adjugate_derivative_abstract_eval(a, *directions):
    square_matrix("adjugate_derivative", a)
    if not 1 <= len(directions) < a.shape[-1]:
        raise ShapeError(f"adjugate_derivative: needs between 1 and n - 1 directions for {a}, got {len(directions)} "
                         "(the 0th derivative is adjugate, those of order n and more are 0)")
    for index, direction in enumerate(directions):
        if direction.shape != a.shape or direction.dtype != a.dtype:
            raise ShapeError(f"adjugate_derivative: direction {index} must be like the matrix {a}, got {direction}")
    return a


det_p = Primitive("det", _det_abstract_eval)
adjugate_p = Primitive("adjugate", lambda a: (square_matrix("adjugate", a), a)[1])
adjugate_derivative_p = Primitive("adjugate_derivative", _adjugate_derivative_abstract_eval)


def det(a):
    """The determinant of a square matrix (stack)."""
    return det_p.bind(a)


def adjugate(a):
    """adj(A), with A adj(A) = det(A) I; exact for singular A."""
    return adjugate_p.bind(a)


def adjugate_derivative(a, *directions):
    """d^k adj(A)[E1, ..., Ek] for k = len(directions) >= 1: the k-th derivative of the adjugate,
    a symmetric k-linear form in the directions (zero for k >= n), exact at every rank.

    >>> a, e = np.diag([2.0, 3.0, 0.0]), np.eye(3)
    >>> adjugate_derivative(a, e)          # d/dt adj(A + t I) at t = 0
    array([[3., 0., 0.],
           [0., 2., 0.],
           [0., 0., 5.]])
    """
    form = _adjugate_form(a, list(directions))
    return zeros(form.aval.shape, form.aval.dtype) if is_zero(form) else form


def _adjugate_form(a, directions):
    """d^k adj(A)[directions], or a symbolic zero where it vanishes identically (k >= n)."""
    aval = aval_of_value(a)
    if len(directions) >= aval.shape[-1]:
        return Zero(aval)
    return adjugate_derivative_p.bind(a, *[instantiate(d, aval) for d in directions])


def _transposed_form(a, directions):
    """mT of _adjugate_form, or None (no cotangent) where the form vanishes."""
    form = _adjugate_form(a, directions)
    return None if is_zero(form) else mT(form)


def _per_matrix(value, like):
    """A (...,) value broadcast to the (..., n, n) shape of `like`."""
    aval = aval_of_value(like)
    return broadcast_in_dim(value, aval.shape, tuple(range(aval.ndim - 2)))


# d det = tr(adj(A) dA); the gradient is adj(A)^T.
det_p.jvp = lambda tangents, primals, output: trace_product(adjugate(primals[0]), tangents[0])
det_p.vjp = lambda cotangent, primals, output, needs: [
    ew.mul(_per_matrix(cotangent, primals[0]), mT(adjugate(primals[0])))]
# d adj(A) = D_1(A; dA); <G, D_1(A; dA)> = d^2 det(A)[dA, G^T] = <D_1(A; G^T)^T, dA>.
adjugate_p.jvp = lambda tangents, primals, output: _adjugate_form(primals[0], [tangents[0]])
adjugate_p.vjp = lambda cotangent, primals, output, needs: [_transposed_form(primals[0], [mT(cotangent)])]


def _adjugate_derivative_jvp(tangents, primals, output):
    """D_(k+1)(A; E.., dA) + sum_m D_k(A; E1..dEm..Ek): the form is a polynomial in A and linear in
    each direction."""
    a, directions = primals[0], list(primals[1:])
    total = Zero(aval_of_value(output))
    if not is_zero(tangents[0]):
        total = _adjugate_form(a, directions + [tangents[0]])
    for m, tangent in enumerate(tangents[1:]):
        if not is_zero(tangent):
            total = add_tangents(total, _adjugate_form(a, directions[:m] + [tangent] + directions[m + 1:]))
    return total


def _adjugate_derivative_vjp(cotangent, primals, output, needs):
    """By the symmetry of d^(k+1) det: the cotangent of a direction is the form with G^T in its place,
    transposed; the cotangent of A is the next form with G^T appended, transposed."""
    a, directions, flipped = primals[0], list(primals[1:]), mT(cotangent)
    cotangents = [_transposed_form(a, directions + [flipped]) if needs[0] else None]
    for m, need in enumerate(needs[1:]):
        cotangents.append(_transposed_form(a, directions[:m] + [flipped] + directions[m + 1:]) if need else None)
    return cotangents


adjugate_derivative_p.jvp, adjugate_derivative_p.vjp = _adjugate_derivative_jvp, _adjugate_derivative_vjp
batch_matrices(det_p)
batch_matrices(adjugate_p)
batch_matrices(adjugate_derivative_p)


def _singular(rng, shape, rank, repeated=False):
    """A random matrix of the given rank (with all nonzero singular values equal if `repeated`)."""
    n = shape[-1]
    large = np.full(rank, 1.5) if repeated else rng.uniform(0.8, 2.0, size=rank)
    return matrix_with_singular_values(rng, shape, np.concatenate([large, np.zeros(n - rank)]))


det_p.sample = lambda rng: [
    ([rng.normal(size=(3, 3))], {}),
    ([rng.normal(size=(2, 4, 4))], {}),
    ([rng.normal(size=(1, 1))], {}),
    ([rng.normal(size=(2, 2))], {}),
    ([_singular(rng, (3, 3), 2)], {}),
    ([_singular(rng, (3, 3), 1)], {}),
    ([rng.normal(size=(0, 2, 2))], {}),
    ([rng.normal(size=(3, 3)).astype(np.float32)], {}),
    ([complex_normal(rng, (3, 3))], {}),
    ([_singular(rng, (3, 3), 2) * np.exp(0.7j)], {}),
]
adjugate_p.sample = lambda rng: [
    ([rng.normal(size=(3, 3)) + 2 * np.eye(3)], {}),
    ([rng.normal(size=(2, 2))], {}),
    ([_singular(rng, (2, 2), 1)], {}),
    ([rng.normal(size=(2, 4, 4)) + 2 * np.eye(4)], {}),
    ([rng.normal(size=(1, 1))], {}),
    ([_singular(rng, (4, 4), 2)], {}),
    ([_singular(rng, (3, 3), 1)], {}),
    ([complex_normal(rng, (3, 3)) + 2 * np.eye(3)], {}),
    ([_singular(rng, (3, 3), 1) * np.exp(0.7j)], {}),
]
adjugate_derivative_p.sample = lambda rng: [
    ([rng.normal(size=(3, 3)), rng.normal(size=(3, 3))], {}),
    ([_singular(rng, (4, 4), 3), rng.normal(size=(4, 4))], {}),
    ([_singular(rng, (4, 4), 2, repeated=True), rng.normal(size=(4, 4)), rng.normal(size=(4, 4))], {}),
    ([np.stack([_singular(rng, (4, 4), rank) for rank in (4, 2, 1, 0)]), rng.normal(size=(4, 4, 4)),
      rng.normal(size=(4, 4, 4))], {}),
    ([_singular(rng, (3, 3), 1), rng.normal(size=(3, 3)), rng.normal(size=(3, 3))], {}),
    ([rng.normal(size=(2, 2)), rng.normal(size=(2, 2))], {}),
    ([np.zeros((3, 3)), rng.normal(size=(3, 3)), rng.normal(size=(3, 3))], {}),
    ([rng.normal(size=(0, 3, 3)), rng.normal(size=(0, 3, 3))], {}),
    ([rng.normal(size=(3, 3)).astype(np.float32), rng.normal(size=(3, 3)).astype(np.float32)], {}),
    ([complex_normal(rng, (3, 3)), complex_normal(rng, (3, 3))], {}),
]

# --- pinv ----------------------------------------------------------------------------------------


def _pinv_abstract_eval(a, *, rcond):
    float_matrix("pinv", a)
    return a.update(shape=a.shape[:-2] + (a.shape[-1], a.shape[-2]))


pinv_p = Primitive("pinv", _pinv_abstract_eval)


def pinv(a, rcond: float = 1e-15):
    """The Moore-Penrose pseudo-inverse; singular values <= rcond * max s count as zero."""
    return pinv_p.bind(a, rcond=float(rcond))


def _pinv_jvp(tangents, primals, output, *, rcond):
    (da,), a, x = tangents, primals[0], output
    dat = mH(da)
    first = ew.neg(matmul(x, matmul(da, x)))
    second = matmul(matmul(x, mH(x)), ew.sub(dat, matmul(matmul(dat, a), x)))          # X X^H dA^H (I - A X)
    third = matmul(ew.sub(dat, matmul(x, matmul(a, dat))), matmul(mH(x), x))            # (I - X A) dA^H X^H X
    return ew.add(first, ew.add(second, third))


def _pinv_vjp(cotangent, primals, output, needs, *, rcond):
    a, x = primals[0], output

    def adjoint(ct):  # the Hilbert adjoint of the jvp (complex: conjugate transposes)
        ctt, xt = mH(ct), mH(x)
        first = ew.neg(matmul(xt, matmul(ct, xt)))
        second = matmul(ew.sub(ctt, matmul(a, matmul(x, ctt))), matmul(x, xt))           # (I - A X) G^H X X^H
        third = matmul(matmul(xt, x), ew.sub(ctt, matmul(matmul(ctt, x), a)))           # X^H X G^H (I - X A)
        return ew.add(first, ew.add(second, third))

    return [jax_cotangent(adjoint, cotangent)]


pinv_p.jvp, pinv_p.vjp = _pinv_jvp, _pinv_vjp
batch_matrices(pinv_p)
pinv_p.sample = lambda rng: [
    ([rng.normal(size=(3, 3)) + 2 * np.eye(3)], {"rcond": 1e-15}),
    ([rng.normal(size=(4, 2))], {"rcond": 1e-15}),
    ([rng.normal(size=(2, 3, 4))], {"rcond": 1e-15}),
    ([rng.normal(size=(1, 1)) + 2.0], {"rcond": 1e-15}),
    ([rng.normal(size=(0, 2, 3))], {"rcond": 1e-15}),
    ([complex_normal(rng, (4, 2))], {"rcond": 1e-15}),
]

# --- expm ----------------------------------------------------------------------------------------


def _expm_abstract_eval(a):
    square_matrix("expm", a)
    return a


expm_p = Primitive("expm", _expm_abstract_eval)


def expm(a):
    """The matrix exponential."""
    return expm_p.bind(a)


def frechet_expm(a, e):
    """The Frechet derivative of expm at a in direction e: the upper right block of
    expm([[a, e], [0, a]])."""
    n = aval_of_value(a).shape[-1]
    lower_left = zeros(aval_of_value(a).shape, aval_of_value(a).dtype)
    block = vstack([hstack([a, e]), hstack([lower_left, a])])
    return columns(rows(expm(block), 0, n), n, None)


expm_p.jvp = lambda tangents, primals, output: frechet_expm(primals[0], tangents[0])
expm_p.vjp = lambda cotangent, primals, output, needs: [frechet_expm(mT(primals[0]), cotangent)]
batch_matrices(expm_p)
expm_p.sample = lambda rng: [
    ([0.5 * rng.normal(size=(3, 3))], {}),
    ([0.5 * rng.normal(size=(2, 2, 2))], {}),
    ([rng.normal(size=(1, 1))], {}),
    ([rng.normal(size=(0, 2, 2))], {}),
    ([(0.5 * rng.normal(size=(3, 3))).astype(np.float32)], {}),
    ([0.5 * complex_normal(rng, (3, 3))], {}),
]


# --- Taylor mode ----------------------------------------------------------------------------------------
# expm (and sqrtm, logm: any primary matrix function): a matrix series A(t) = sum_j A_j t^j maps to the
# block upper triangular Toeplitz matrix T(A) with blocks T_(ij) = A_(j-i), an algebra homomorphism
# (mod t^(K+1)), so f(T(A)) = T(f(A(t))) and the first block row of f of one matrix of size (K+1) n
# holds every coefficient (Mathias 1996; the Frechet derivative above is the case K = 1). det, adjugate,
# adjugate_derivative and pinv take the series of their jvp rules: exact, and finite, since the forms of
# order n and more are zero.

def primary_function_taylor(function):
    """The Taylor rule of a primary matrix function f (expm, sqrtm, logm): f(T(A)) = T(f(A(t))) for the
    block Toeplitz T, so the first block row of `function` of one (K+1) n matrix holds every coefficient."""
    def taylor(series, output):
        (a,) = series
        order, n = len(a) - 1, aval_of_value(output).shape[-1]
        blocks = [instantiate(c) for c in a]
        zero = zeros(aval_of_value(output).shape, aval_of_value(a[0]).dtype)   # the input's (a real one may
        # have a complex result: sqrtm[complex_result=True])
        block_rows = [hstack([zero] * i + blocks[:order + 1 - i]) for i in range(order + 1)]
        first_row = rows(function(vstack(block_rows)), 0, n)
        return [columns(first_row, k * n, (k + 1) * n) for k in range(1, order + 1)]

    return taylor


def _set_taylor_rules():
    expm_p.taylor = primary_function_taylor(expm)
    det_p.taylor = adjugate_p.taylor = adjugate_derivative_p.taylor = pinv_p.taylor = FROM_JVP


_set_taylor_rules()
