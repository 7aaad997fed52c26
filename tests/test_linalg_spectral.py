"""eigh, svd, qr, det, pinv and expm where their derivatives are delicate: degenerate spectra,
singular and rank-deficient matrices, the extra columns of complete factorisations. Every
expected value is computed independently (finite differences, explicit cofactors, NumPy)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
import adarray.numpy.linalg as la
from adarray.testing import numerical_gradient, numerical_jacobian, numerical_jvp

RNG = np.random.default_rng(7)


def orthogonal(n, rng=RNG):
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


def with_spectrum(values, rng=RNG):
    q = orthogonal(len(values), rng)
    return (q * np.asarray(values)) @ q.T


def fd_gradient(loss, x, eps=1e-6):
    return numerical_gradient(lambda v: float(loss(v)), x, eps).reshape(np.shape(x))


def symmetric_fd_gradient(loss, a, eps=1e-6):
    """The symmetric gradient G (eigh sees the symmetric part of its argument) by finite differences
    along symmetric perturbations: e_i e_i^T moves the loss by G_ii, e_i e_j^T + e_j e_i^T by 2 G_ij."""
    grad = np.zeros_like(a)
    for i, j in itertools.product(range(a.shape[0]), repeat=2):
        if j > i:
            continue
        direction = np.zeros_like(a)
        direction[i, j] = direction[j, i] = 1.0
        (slope,) = numerical_jvp(lambda v: [float(loss(v))], [a], [direction], eps)
        grad[i, j] = grad[j, i] = slope if i == j else slope / 2
    return grad


# --- eigh with repeated eigenvalues -------------------------------------------------------------------

DEGENERATE = with_spectrum([1.0, 1.0, 3.0, -2.0])
WEIGHTS = RNG.normal(size=(4, 4))


def test_eigenvalue_gradients_are_exact_at_a_degenerate_spectrum():
    def loss(a):
        return anp.sum(anp.sin(la.eigvalsh(a)))           # a spectral function: smooth everywhere

    grad = ad.grad(loss)(DEGENERATE)
    w, v = np.linalg.eigh(DEGENERATE)
    exact = (v * np.cos(w)) @ v.T
    np.testing.assert_allclose(grad, exact, atol=1e-10)
    np.testing.assert_allclose(grad, symmetric_fd_gradient(loss, DEGENERATE), atol=1e-7)


def test_projector_onto_a_degenerate_eigenspace_has_its_exact_gradient():
    """P = V_k V_k^T over the whole eigenspace of eigenvalue 1 does not depend on the basis chosen."""
    def loss(a):
        _, v = la.eigh(a)
        block = v[:, 1:3]                                  # eigenvalues sorted: -2, 1, 1, 3
        return anp.sum(WEIGHTS * (block @ block.T))

    grad = ad.grad(loss)(DEGENERATE)
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, symmetric_fd_gradient(loss, DEGENERATE), atol=1e-7)
    # and the first-order forward mode agrees
    direction = RNG.normal(size=(4, 4))
    _, tangent = ad.jvp(loss, (DEGENERATE,), (direction,))
    assert np.isclose(tangent, np.sum(grad * direction))


def test_eigenvectors_of_a_degenerate_eigenspace_get_the_no_rotation_convention():
    """A loss that depends on which basis LAPACK picked has no derivative; what we return is finite
    and equals the derivative with the within-eigenspace terms dropped (F_ij = 0 there)."""
    def loss(a):
        return anp.sum(la.eigh(a)[1][:, 1] ** 4)

    grad = ad.grad(loss)(DEGENERATE)
    assert np.all(np.isfinite(grad))
    w, v = np.linalg.eigh(DEGENERATE)
    f = np.zeros((4, 4))
    for i, j in itertools.product(range(4), repeat=2):
        if abs(w[j] - w[i]) > 1e-8:
            f[i, j] = 1.0 / (w[j] - w[i])
    ct_v = np.zeros((4, 4))
    ct_v[:, 1] = 4 * v[:, 1] ** 3
    s = v @ (f * (v.T @ ct_v)) @ v.T
    np.testing.assert_allclose(grad, (s + s.T) / 2, atol=1e-10)


def test_nearly_degenerate_but_distinct_eigenvalues_keep_the_full_derivative():
    a = with_spectrum([1.0, 1.0 + 1e-4, 3.0])

    def loss(a):
        first = la.eigh(a)[1][:, :1]
        return anp.sum(WEIGHTS[:3, :3] * (first @ first.T))

    np.testing.assert_allclose(ad.grad(loss)(a), symmetric_fd_gradient(loss, a, eps=1e-9), rtol=1e-3, atol=1e-3)


# --- svd with repeated and zero singular values -----------------------------------------------------

def test_polar_factor_and_nuclear_norm_at_repeated_singular_values():
    """U V^T and sum(s) see a repeated singular value only through its subspace: exact gradients."""
    for a in (np.eye(3), orthogonal(3) @ np.diag([2.0, 2.0, 0.5]) @ orthogonal(3).T):
        weights = WEIGHTS[:3, :3]

        def polar(a, weights=weights):
            u, _, vh = la.svd(a, full_matrices=False)
            return anp.sum(weights * (u @ vh))

        grad = ad.grad(polar)(a)
        np.testing.assert_allclose(grad, fd_gradient(polar, a), atol=1e-7)
        np.testing.assert_allclose(ad.grad(lambda a: la.norm(a, "nuc"))(a),
                                   fd_gradient(lambda a: np.linalg.norm(a, "nuc"), a), atol=1e-7)
    # d(U V^T) at the identity is the antisymmetric part of the perturbation
    e = RNG.normal(size=(3, 3))
    _, tangent = ad.jvp(lambda a: (lambda u, s, vh: u @ vh)(*la.svd(a)), (np.eye(3),), (e,))
    np.testing.assert_allclose(tangent, (e - e.T) / 2, atol=1e-12)


def test_singular_subspace_projector_at_a_degenerate_pair():
    u0, _, vh0 = np.linalg.svd(RNG.normal(size=(5, 3)), full_matrices=False)
    a = (u0 * [3.0, 3.0, 1.0]) @ vh0
    weights = RNG.normal(size=(5, 5))

    def loss(a):
        u, _, _ = la.svd(a, full_matrices=False)
        return anp.sum(weights * (u[:, :2] @ u[:, :2].T))

    np.testing.assert_allclose(ad.grad(loss)(a), fd_gradient(loss, a), atol=1e-7)


def test_singular_values_of_rank_deficient_matrices():
    a = RNG.normal(size=(4, 2)) @ RNG.normal(size=(2, 3))          # rank 2 of 3
    grad = ad.grad(lambda a: anp.sum(la.svdvals(a)[:2]))(a)
    np.testing.assert_allclose(grad, fd_gradient(lambda a: np.sum(np.linalg.svd(a, compute_uv=False)[:2]), a),
                               atol=1e-7)

    def best_rank_two(a):
        u, s, vh = la.svd(a, full_matrices=False)
        return anp.sum(WEIGHTS[:, :3] * ((u[:, :2] * s[:2]) @ vh[:2]))

    np.testing.assert_allclose(ad.grad(best_rank_two)(a), fd_gradient(best_rank_two, a), atol=1e-7)


def test_full_matrices_complement_moves_by_the_smallest_rotation():
    """The extra columns of U (tall) or rows of Vh (wide) are one basis of the complement: the
    complement's projector has the exact derivative, and the extra columns stay orthogonal."""
    for shape in ((5, 2), (2, 5)):
        a = RNG.normal(size=shape)
        weights = RNG.normal(size=(max(shape), max(shape)))

        def loss(a, weights=weights, tall=shape[0] > shape[1]):
            u, s, vh = la.svd(a, full_matrices=True)
            extra = u[:, 2:] if tall else vh[2:].T
            return anp.sum(weights * (extra @ extra.T)) + anp.sum(s ** 3)

        np.testing.assert_allclose(ad.grad(loss)(a), fd_gradient(loss, a), atol=1e-6)
        direction = RNG.normal(size=shape)
        (u, s, vh), (du, ds, dvh) = ad.jvp(lambda a: tuple(la.svd(a)), (a,), (direction,))
        np.testing.assert_allclose(u.T @ du + du.T @ u, 0, atol=1e-12)          # stays orthogonal
        np.testing.assert_allclose(vh @ dvh.T + dvh @ vh.T, 0, atol=1e-12)


# --- qr ---------------------------------------------------------------------------------------------

def test_complete_qr_complement_projector_and_r():
    a = RNG.normal(size=(5, 3))
    weights = RNG.normal(size=(5, 5))

    def loss(a):
        q, r = la.qr(a, mode="complete")
        return anp.sum(weights * (q[:, 3:] @ q[:, 3:].T)) + anp.sum(anp.sin(r))

    np.testing.assert_allclose(ad.grad(loss)(a), fd_gradient(loss, a), atol=1e-6)


def test_qr_of_a_rank_deficient_matrix():
    """Values are NumPy's; the derivative divides by the zero diagonal of R (documented: not finite)."""
    a = np.array([[1.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    q, r = la.qr(a)
    np.testing.assert_allclose(r, np.linalg.qr(a)[1])
    grad = ad.grad(lambda a: anp.sum(la.qr(a)[0]))(a)
    assert not np.all(np.isfinite(grad))


def test_cholesky_of_a_semidefinite_matrix_raises():
    with pytest.raises(la.LinAlgError, match="positive definite"):
        la.cholesky(np.ones((3, 3)))
    with pytest.raises(la.LinAlgError):
        ad.grad(lambda a: anp.sum(la.cholesky(a)))(np.ones((2, 2)))


# --- det and slogdet at singular matrices -------------------------------------------------------------

def cofactors(a):
    """C[i, j] = (-1)^(i+j) det(a without row i and column j): the exact gradient of det."""
    n = a.shape[0]
    c = np.zeros_like(a)
    for i, j in itertools.product(range(n), repeat=2):
        minor = np.delete(np.delete(a, i, 0), j, 1)
        c[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return c


def exact_hessian_of_det(a, h=0.5):
    """Cofactors of a 3x3 matrix are quadratic, so central differences of them are exact for any h."""
    return numerical_jacobian(cofactors, a, h)


def rank(r, n=3, rng=RNG):
    values = np.concatenate([rng.uniform(0.8, 2.0, size=r), np.zeros(n - r)])
    return orthogonal(n, rng) @ np.diag(values) @ orthogonal(n, rng).T


@pytest.mark.parametrize("r", [0, 1, 2, 3])
def test_det_gradient_is_the_cofactor_matrix_at_every_rank(r):
    a = rank(r)
    np.testing.assert_allclose(ad.grad(la.det)(a), cofactors(a), atol=1e-12)
    np.testing.assert_allclose(ad.grad(la.det)(a[:2, :2] if r else np.zeros((2, 2))),
                               cofactors(a[:2, :2] if r else np.zeros((2, 2))), atol=1e-12)


@pytest.mark.parametrize("r", [1, 2, 3])
def test_det_hessian_is_exact_at_singular_matrices(r):
    a = rank(r)
    expected = exact_hessian_of_det(a)
    np.testing.assert_allclose(ad.hessian(la.det)(a), expected, atol=1e-10)
    np.testing.assert_allclose(ad.jacfwd(ad.jacfwd(la.det))(a), expected, atol=1e-10)
    np.testing.assert_allclose(ad.jacrev(ad.jacrev(la.det))(a), expected, atol=1e-10)


def test_third_derivative_of_det_at_a_rank_n_minus_1_matrix():
    a = rank(2)
    third = ad.jacfwd(ad.hessian(la.det))(a)
    expected = numerical_jacobian(exact_hessian_of_det, a, 0.5)  # exact too: the Hessian is linear in a
    np.testing.assert_allclose(third, expected, atol=1e-8)


def test_slogdet_of_a_singular_matrix_is_numpys():
    a = rank(2)
    a[:, 2] = a[:, 0] + a[:, 1]                                  # exactly singular in floating point too
    sign, logdet = la.slogdet(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert sign == 0.0 and logdet == -np.inf
    sign, logdet = la.slogdet(-np.eye(3))
    assert (sign, logdet) == tuple(np.linalg.slogdet(-np.eye(3)))


# --- pinv, lstsq ----------------------------------------------------------------------------------

def test_pinv_derivative_where_the_rank_is_constant():
    b, c = RNG.normal(size=(4, 2)), RNG.normal(size=(2, 3))

    def loss(b, c):
        return anp.sum(WEIGHTS[:3, :4] * la.pinv(b @ c))

    grads = ad.grad(loss, argnums=(0, 1))(b, c)
    np.testing.assert_allclose(grads[0], fd_gradient(lambda b: loss(b, c), b), atol=1e-7)
    np.testing.assert_allclose(grads[1], fd_gradient(lambda c: loss(b, c), c), atol=1e-7)
    # at matrices with repeated singular values (orthogonal, identity) the rule needs no SVD
    for a in (np.eye(3), 2 * orthogonal(3)):
        expected = -np.linalg.pinv(a).T @ WEIGHTS[:3, :3] @ np.linalg.pinv(a).T
        np.testing.assert_allclose(ad.grad(lambda a: anp.sum(WEIGHTS[:3, :3] * la.pinv(a)))(a), expected,
                                   atol=1e-12)


def test_lstsq_gradient_matches_the_normal_equations():
    a, b = RNG.normal(size=(6, 3)), RNG.normal(size=6)

    def loss(a, b):
        return anp.sum(la.lstsq(a, b)[0] ** 2)

    def reference(a, b):
        return np.sum(np.linalg.solve(a.T @ a, a.T @ b) ** 2)

    grads = ad.grad(loss, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(grads[0], fd_gradient(lambda a: reference(a, b), a), atol=1e-7)
    np.testing.assert_allclose(grads[1], fd_gradient(lambda b: reference(a, b), b), atol=1e-7)


def test_lstsq_traced_returns_residuals_for_tall_matrices():
    a = RNG.normal(size=(5, 2)) @ np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]) / 3   # rank 1
    b = RNG.normal(size=5)
    assert la.lstsq(a, b)[1].shape == np.linalg.lstsq(a, b)[1].shape == (0,)
    x, residuals, r, s = ad.jit(la.lstsq)(a, b)
    assert r == 1 and residuals.shape == (1,)                # documented: shapes cannot depend on values
    np.testing.assert_allclose(x, np.linalg.lstsq(a, b)[0], rtol=1e-8)


# --- expm ---------------------------------------------------------------------------------------------

def test_expm_values_derivatives_and_hessian():
    import scipy.linalg

    from adarray.scipy.linalg import expm

    a = 0.5 * RNG.normal(size=(2, 3, 3))
    np.testing.assert_allclose(expm(a), scipy.linalg.expm(a), rtol=1e-12)
    weights = RNG.normal(size=(3, 3))

    def loss(a):
        return anp.sum(weights * expm(a))

    x = a[0]
    np.testing.assert_allclose(ad.grad(loss)(x), fd_gradient(lambda a: np.sum(weights * scipy.linalg.expm(a)), x),
                               atol=1e-7)
    hessian = ad.hessian(loss)(x)
    np.testing.assert_allclose(hessian, numerical_gradient(ad.grad(loss), x, 1e-5).reshape(hessian.shape),
                               atol=1e-6)
    # d/dt expm(t A) = A expm(t A)
    _, tangent = ad.jvp(expm, (x,), (x,))
    np.testing.assert_allclose(tangent, x @ scipy.linalg.expm(x), atol=1e-12)
    np.testing.assert_allclose(ad.vmap(expm)(a), scipy.linalg.expm(a), rtol=1e-12)
