"""scipy.linalg.solve_sylvester (a primitive whose derivatives solve the same equation) and solve_banded (the band
gathered into a dense solve): values against SciPy, derivatives to second order against central differences, the
JAX backend against the NumPy one, errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.linalg as asl
from adarray.testing import check_grads

rng = np.random.default_rng(11)
R = rng.normal


@pytest.mark.parametrize("m, n", [(3, 3), (2, 4), (1, 1), (5, 2)])
def test_sylvester_matches_scipy(m, n):
    a, b, q = R(size=(m, m)), R(size=(n, n)), R(size=(m, n))
    expected = sl.solve_sylvester(a, b, q)
    np.testing.assert_allclose(asl.solve_sylvester(a, b, q), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ad.jit(asl.solve_sylvester)(a, b, q), expected, rtol=1e-10, atol=1e-12)
    x = asl.solve_sylvester(a, b, q)
    np.testing.assert_allclose(a @ x + x @ b, q, atol=1e-10)


def test_sylvester_complex_float32_and_stacks():
    a, b = R(size=(3, 3)) + 1j * R(size=(3, 3)), R(size=(2, 2)) + 1j * R(size=(2, 2))
    q = R(size=(3, 2)) + 1j * R(size=(3, 2))
    np.testing.assert_allclose(asl.solve_sylvester(a, b, q), sl.solve_sylvester(a, b, q), rtol=1e-10)
    a32, b32, q32 = (v.astype(np.float32) for v in (R(size=(3, 3)) + 3 * np.eye(3), R(size=(3, 3)), R(size=(3, 3))))
    out = asl.solve_sylvester(a32, b32, q32)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, sl.solve_sylvester(a32.astype(float), b32.astype(float), q32.astype(float)),
                               rtol=1e-4)
    stack_a, qs = R(size=(4, 3, 3)), R(size=(4, 3, 2))
    b = R(size=(2, 2))
    got = asl.solve_sylvester(stack_a, b, qs)   # b broadcasts over the stack
    for k in range(4):
        np.testing.assert_allclose(got[k], sl.solve_sylvester(stack_a[k], b, qs[k]), rtol=1e-10, atol=1e-12)


def test_sylvester_derivatives_as_autograds_test():
    # autograd: combo_check(spla.solve_sylvester, [0, 1, 2], modes=["rev", "fwd"], order=2)([R(3, 3)] * 3)
    check_grads(asl.solve_sylvester, (R(size=(3, 3)), R(size=(3, 3)), R(size=(3, 3))), order=2,
                rng=np.random.default_rng(0))
    check_grads(asl.solve_sylvester, (R(size=(2, 2)) + 1j * R(size=(2, 2)), R(size=(3, 3)), R(size=(2, 3))),
                order=1, rng=np.random.default_rng(1))


def test_sylvester_gradient_formula():
    a, b, q = R(size=(3, 3)), R(size=(2, 2)), R(size=(3, 2))
    g = R(size=(3, 2))
    x = sl.solve_sylvester(a, b, q)
    lam = sl.solve_sylvester(a.T, b.T, g)
    ga, gb, gq = ad.grad(lambda *v: anp.sum(asl.solve_sylvester(*v) * g), argnums=(0, 1, 2))(a, b, q)
    np.testing.assert_allclose(gq, lam, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ga, -lam @ x.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb, -x.T @ lam, rtol=1e-10, atol=1e-12)


def test_sylvester_singular_equation_is_an_error():
    with pytest.raises(asl.LinAlgError, match="singular"):
        asl.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2)))
    with pytest.raises(ad.ShapeError, match="solve_sylvester"):
        asl.solve_sylvester(np.eye(2), np.eye(3), np.ones((2, 2)))


def test_sylvester_on_the_jax_backend():
    pytest.importorskip("jax")
    a, b, q = R(size=(2, 4, 4)) + 4 * np.eye(4), R(size=(2, 3, 3)), R(size=(2, 4, 3))
    f = lambda a, b, q: asl.solve_sylvester(a, b, q)  # noqa: E731
    np.testing.assert_allclose(np.asarray(ad.jit(f, backend="jax")(a, b, q)), f(a, b, q), rtol=1e-10, atol=1e-12)
    grad = lambda a, b, q: ad.grad(lambda *v: anp.sum(f(*v) ** 2), argnums=(0, 1, 2))(a, b, q)  # noqa: E731
    for got, want in zip(ad.jit(grad, backend="jax")(a, b, q), grad(a, b, q)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=1e-11)


# --- solve_banded ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("lower, upper, n, k", [(1, 1, 5, None), (2, 1, 6, 2), (0, 0, 4, None), (0, 2, 5, 3),
                                                 (3, 0, 4, None), (1, 1, 1, None)])
def test_banded_matches_scipy(lower, upper, n, k):
    ab = R(size=(lower + upper + 1, n))
    ab[upper] += 4.0   # a dominant diagonal
    b = R(size=(n,) if k is None else (n, k))
    expected = sl.solve_banded((lower, upper), ab, b)
    np.testing.assert_allclose(asl.solve_banded((lower, upper), ab, b), expected, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(ad.jit(lambda ab, b: asl.solve_banded((lower, upper), ab, b))(ab, b), expected,
                               rtol=1e-12, atol=1e-13)


def test_banded_derivatives_as_autograds_test():
    # autograd: combo_check(spla.solve_banded, [1, 2], modes=["rev"], order=1)([(1, 1)], [R(3, 5)], [R(5)])
    ab = R(size=(3, 5))
    ab[1] += 3.0
    check_grads(lambda ab, b: asl.solve_banded((1, 1), ab, b), (ab, R(size=5)), order=2,
                rng=np.random.default_rng(2))
    # the corners of ab outside the matrix are not read: their derivative is 0, as their value changes nothing
    gradient = ad.grad(lambda ab: anp.sum(asl.solve_banded((1, 1), ab, np.ones(5))))(ab)
    assert gradient[0, 0] == 0.0 and gradient[2, -1] == 0.0
    changed = ab.copy()
    changed[0, 0], changed[2, -1] = 99.0, -7.0
    np.testing.assert_array_equal(asl.solve_banded((1, 1), changed, np.ones(5)),
                                  asl.solve_banded((1, 1), ab, np.ones(5)))


def test_banded_errors():
    with pytest.raises(ad.ShapeError, match="l \\+ u \\+ 1"):
        asl.solve_banded((1, 1), np.ones((2, 4)), np.ones(4))
    with pytest.raises(ad.ShapeError, match="b must"):
        asl.solve_banded((1, 1), np.ones((3, 4)), np.ones(3))
    with pytest.raises(ad.ArgumentError, match="static"):
        asl.solve_banded((1.5, 1), np.ones((3, 4)), np.ones(4))
    with pytest.raises(asl.LinAlgError):
        asl.solve_banded((0, 0), np.zeros((1, 3)), np.ones(3))
