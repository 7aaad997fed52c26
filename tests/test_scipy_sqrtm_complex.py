"""scipy.linalg.sqrtm and logm of real matrices with negative eigenvalues (complex results, as SciPy gives, where the
values are known: eagerly and under un-jitted transformations) and of complex matrices: values against SciPy,
derivatives against central differences, the guard that re-traces when the answer changes, jit's clear error."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.linalg as asl
from adarray.testing import check_grads, numerical_derivative, numerical_gradient

rng = np.random.default_rng(3)
INDEFINITE = np.array([[1.0, 2.0, 0.5], [2.0, -1.0, 0.3], [0.5, 0.3, 2.0]])    # one negative eigenvalue
ROTATION_LIKE = np.array([[-1.0, -2.0], [2.0, -1.0]])                            # -1 +- 2i: a real principal root


def _symmetrised(fn):
    return lambda x: fn(0.5 * (x + x.T))


@pytest.mark.parametrize("name", ["sqrtm", "logm"])
def test_values_match_scipy(name):
    fn, reference = getattr(asl, name), getattr(sl, name)
    for matrix in (INDEFINITE, np.diag([1.0, -2.0]), np.diag([-1.0, -3.0]), ROTATION_LIKE, 2 * np.eye(2)):
        want = reference(matrix)
        got = fn(matrix)
        assert got.dtype == want.dtype, (matrix, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    z = 2 * np.eye(3) + 0.5 * (rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3)))
    np.testing.assert_allclose(fn(z), reference(z), rtol=1e-12)
    np.testing.assert_allclose(fn(np.stack([INDEFINITE, 3 * np.eye(3)])),
                               np.stack([reference(INDEFINITE), reference(3 * np.eye(3))]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["sqrtm", "logm"])
def test_derivatives_of_the_complex_result(name):
    fn, reference = getattr(asl, name), getattr(sl, name)
    weights = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))

    def loss(x):
        return anp.real(anp.sum(fn(x) * weights))

    gradient = ad.grad(loss)(INDEFINITE)
    for _ in range(3):
        direction = rng.normal(size=(3, 3))
        along = lambda t, e=direction: np.real(np.sum(reference(INDEFINITE + t * e) * weights))  # noqa: E731
        numeric = numerical_derivative(along, 0.0)
        np.testing.assert_allclose(np.sum(gradient * direction), numeric, rtol=1e-6)
    _, tangent = ad.jvp(fn, (INDEFINITE,), (np.eye(3),))
    assert np.iscomplexobj(tangent)


def test_autograds_sqrtm_check():
    # autograd: combo_check(symmetrize_matrix_arg(spla.sqrtm, 0), modes=["fwd", "rev"], order=2)([R(3, 3)])
    matrix = np.array([[0.3, -1.2, 0.4], [0.8, -0.5, 1.1], [-0.2, 0.9, 0.1]])
    assert np.min(np.linalg.eigvalsh(0.5 * (matrix + matrix.T))) < 0
    check_grads(_symmetrised(asl.sqrtm), (matrix,), order=2, rng=np.random.default_rng(0))


def test_the_answer_is_guarded():
    # one traced program per answer: a positive definite matrix after an indefinite one is real again
    grad = ad.grad(lambda x: anp.real(anp.sum(asl.sqrtm(x))))
    spd = np.array([[2.0, 0.3], [0.3, 1.0]])
    for matrix in (np.diag([1.0, -2.0]), spd, np.diag([1.0, -2.0])):
        numeric = numerical_gradient(lambda m: np.real(np.sum(sl.sqrtm(m))), matrix)
        np.testing.assert_allclose(grad(matrix), numeric, rtol=1e-6, atol=1e-8)
        assert np.iscomplexobj(sl.sqrtm(matrix)) == (matrix[1, 1] < 0)


def test_under_jit_the_dtype_follows_the_input():
    with pytest.raises(asl.LinAlgError, match="astype\\(complex\\)"):
        ad.jit(asl.sqrtm)(np.diag([1.0, -2.0]))
    np.testing.assert_allclose(ad.jit(asl.sqrtm)(np.diag([1.0, -2.0]).astype(complex)),
                               sl.sqrtm(np.diag([1.0, -2.0])), rtol=1e-14)
    np.testing.assert_allclose(ad.jit(asl.sqrtm)(ROTATION_LIKE), sl.sqrtm(ROTATION_LIKE), rtol=1e-12)


def test_complex_inputs_differentiate():
    z = 2 * np.eye(2) + 0.4 * (rng.normal(size=(2, 2)) + 1j * rng.normal(size=(2, 2)))
    check_grads(asl.sqrtm, (z,), order=2, rng=np.random.default_rng(1))
    check_grads(asl.logm, (z,), order=1, rng=np.random.default_rng(2))


def test_jax_backend_complex_matrices():
    pytest.importorskip("jax")
    z = 2 * np.eye(3) + 0.3 * (rng.normal(size=(2, 3, 3)) + 1j * rng.normal(size=(2, 3, 3)))
    for fn, reference in ((asl.sqrtm, sl.sqrtm), (asl.logm, sl.logm)):
        got = np.asarray(ad.jit(fn, backend="jax")(z))
        np.testing.assert_allclose(got, np.stack([reference(m) for m in z]), rtol=1e-12, atol=1e-14)
    with pytest.raises(asl.LinAlgError, match="NumPy backend"):
        ad.jit(asl.sqrtm, backend="jax")(np.diag([1.0, -2.0]).astype(complex))
