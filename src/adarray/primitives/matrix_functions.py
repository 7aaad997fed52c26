"""Functions of a whole matrix with their own derivative rules: det, adjugate, pinv, expm.

det a -> d
    LAPACK's LU with partial pivoting (numpy.linalg.det). d det = tr(adj(A) dA) (Jacobi's formula
    in its adjugate form), so the gradient adj(A)^T = det(A) A^-T is right for singular matrices
    too: the rank n-1 ones get the (nonzero, rank one) adjugate, lower ranks get 0.
adjugate a -> adj(A)
    adj(A) = det(A) A^-1, computed from the SVD A = U S V^T as det(U) det(V) V diag(prod_{j!=i} s_j) U^T,
    which needs no inverse and is exact at every rank. Its derivative: for n = 1 it is constant; for
    n = 2 it is linear (adj [[a, b], [c, d]] = [[d, -b], [-c, a]]) and exact everywhere; for n >= 3,
    d adj = (tr(adj dA) adj - adj dA adj) / det on well-conditioned matrices, and near singular
    ones (where that is 0/0) a formula from the SVD that is exact at every rank (_adjugate_jvp), so
    the Hessian of det is right at singular matrices too. For complex matrices the SVD frame carries a
    phase, sign = det(U) det(V^H), which is differentiated with the SVD; at a singular complex matrix
    the relative phase of the null vectors is not determined, so there d adj (the Hessian of det) is
    exact but its own derivative is not.
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

from ..core.primitive import Primitive, Zero
from . import elementwise as ew
from .linalg import einsum
from .matrices import (
    batch_matrices,
    columns,
    complex_normal,
    conjugate,
    diag_embed,
    diagonal,
    float_matrix,
    hstack,
    is_complex_matrix,
    jax_cotangent,
    like,
    matmul,
    mH,
    mT,
    rows,
    square_matrix,
    trace_product,
    vstack,
    zeros,
)
from .reduce import reduce
from .rules import aval_of_value
from .spectral import matrix_with_singular_values, svd
from .structural import broadcast_in_dim

# --- det and adjugate ----------------------------------------------------------------------------


def _det_abstract_eval(a):
    square_matrix("det", a)
    return a.update(shape=a.shape[:-2])


det_p = Primitive("det", _det_abstract_eval)
adjugate_p = Primitive("adjugate", lambda a: (square_matrix("adjugate", a), a)[1])


def det(a):
    """The determinant of a square matrix (stack)."""
    return det_p.bind(a)


def adjugate(a):
    """adj(A), with A adj(A) = det(A) I; exact for singular A."""
    return adjugate_p.bind(a)


def _per_matrix(value, like):
    """A (...,) value broadcast to the (..., n, n) shape of `like`."""
    aval = aval_of_value(like)
    return broadcast_in_dim(value, aval.shape, tuple(range(aval.ndim - 2)))


det_p.jvp = lambda tangents, primals, output: trace_product(adjugate(primals[0]), tangents[0])
det_p.vjp = lambda cotangent, primals, output, needs: [
    ew.mul(_per_matrix(cotangent, primals[0]), mT(adjugate(primals[0])))]

# adj of a 2x2 matrix is linear: adj(E)[i, j] = sum_kl _ADJ2[i, j, k, l] E[k, l] (and self-adjoint).
_ADJ2 = np.zeros((2, 2, 2, 2))
_ADJ2[0, 0, 1, 1] = _ADJ2[1, 1, 0, 0] = 1.0
_ADJ2[0, 1, 0, 1] = _ADJ2[1, 0, 1, 0] = -1.0


def _adjugate_2x2(e):
    aval = aval_of_value(e)
    batch = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: aval.ndim - 2]
    return einsum(f"{batch}kl,ijkl->{batch}ij", e, _ADJ2.astype(aval.dtype))


def _pair_products(values):
    """W[..., i, j] = prod_{k != i, j} values_k off the diagonal, 0 on it (no division)."""
    aval = aval_of_value(values)
    n, batch = aval.shape[-1], tuple(range(aval.ndim - 1))
    cube_shape = aval.shape[:-1] + (n, n, n)
    cube = broadcast_in_dim(values, cube_shape, batch + (aval.ndim + 1,))
    i, j, k = np.indices((n, n, n))
    skipped = broadcast_in_dim((k == i) | (k == j), cube_shape, (aval.ndim - 1, aval.ndim, aval.ndim + 1))
    products = reduce(ew.select(skipped, ew.full_like(cube, 1.0), cube), "mul", (aval.ndim + 1,))
    return ew.select(_eye_mask(products), ew.zeros_like(products), products)


def _eye_mask(x):
    aval = aval_of_value(x)
    n = aval.shape[-1]
    return broadcast_in_dim(np.eye(n, dtype=bool), aval.shape, (aval.ndim - 2, aval.ndim - 1))


def _svd_frame(a):
    """(U, V, W, sign) with A = U diag(s) V^H, W = _pair_products(s) (in a's dtype), sign = det(U) det(V^H):
    +-1 for real A (locally constant), the phase of det(A) for complex A (so it is differentiated)."""
    u, values, vh = svd(a)
    sign = ew.mul(det(u), det(vh))
    if not is_complex_matrix(a):
        sign = ew.stop_gradient(sign)
    return u, mH(vh), like(_pair_products(values), a), _per_matrix(sign, a)


def _well_conditioned(a):
    """Per matrix: min s > sqrt(eps) max s, where the 1/det formulas are accurate."""
    values = svd(a, compute_uv=False)[0]
    last = aval_of_value(values).ndim - 1
    floor = ew.mul(float(np.sqrt(np.finfo(aval_of_value(a).dtype).eps)), reduce(values, "max", (last,)))
    return _per_matrix(ew.gt(reduce(values, "min", (last,)), floor), a)


def _adjugate_jvp(tangents, primals, output):
    """d adj(A)[E]. Away from singular matrices (tr(adj E) adj - adj E adj) / det; near and at them,
    with E' = U^T E V and W from _svd_frame, sign V (-E' o W + diag(W diag(E'))) U^T, which is
    exact at every rank (adj(U S V^T) = sign V adj(S) U^T, and adj of a diagonal matrix is
    differentiated entry by entry)."""
    (da,), a = tangents, primals[0]
    n = aval_of_value(a).shape[-1]
    if n <= 1:
        return Zero(aval_of_value(output))
    if n == 2:
        return _adjugate_2x2(da)
    scaled = ew.mul(_per_matrix(trace_product(output, da), a), output)
    by_inverse = ew.div(ew.sub(scaled, matmul(output, matmul(da, output))), _per_matrix(det(a), a))
    u, v, weights, sign = _svd_frame(a)
    rotated = matmul(mH(u), matmul(da, v))
    diagonal_part = diag_embed(einsum(_vector_spec(weights), weights, diagonal(rotated)))
    inner = ew.sub(diagonal_part, ew.mul(rotated, weights))
    by_svd = ew.mul(sign, matmul(v, matmul(inner, mH(u))))
    return ew.select(_well_conditioned(a), by_inverse, by_svd)


def _vector_spec(matrix):
    batch = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: aval_of_value(matrix).ndim - 2]
    return f"{batch}ij,{batch}j->{batch}i"


def _adjugate_vjp(cotangent, primals, output, needs):
    a = primals[0]
    n = aval_of_value(a).shape[-1]
    if n <= 1:
        return [None]
    if n == 2:
        return [_adjugate_2x2(cotangent)]
    adj_t = mT(output)
    scaled = ew.mul(_per_matrix(trace_product(mT(cotangent), output), a), adj_t)
    by_inverse = ew.div(ew.sub(scaled, matmul(adj_t, matmul(cotangent, adj_t))), _per_matrix(det(a), a))
    u, v, weights, sign = _svd_frame(a)
    u = conjugate(u)  # the transpose of E -> U^H E V is G -> conj(U) G V^T (no conjugate on V)
    rotated = ew.mul(sign, matmul(mT(v), matmul(cotangent, u)))               # sign V^T G conj(U)
    diagonal_part = diag_embed(einsum(_vector_spec(weights), weights, diagonal(rotated)))
    inner = ew.sub(diagonal_part, ew.mul(rotated, weights))
    by_svd = matmul(u, matmul(inner, mT(v)))
    return [ew.select(_well_conditioned(a), by_inverse, by_svd)]


adjugate_p.jvp, adjugate_p.vjp = _adjugate_jvp, _adjugate_vjp
batch_matrices(det_p)
batch_matrices(adjugate_p)


def _singular(rng, shape, rank):
    """A random matrix of the given rank."""
    n = shape[-1]
    values = np.concatenate([rng.uniform(0.8, 2.0, size=rank), np.zeros(n - rank)])
    return matrix_with_singular_values(rng, shape, values)


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
    ([complex_normal(rng, (3, 3)) + 2 * np.eye(3)], {}),
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
