"""adarray.scipy.linalg: values against SciPy (batched, vector right-hand sides, float32),
derivatives against finite differences, vmap against loops, shape errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.linalg as asl
from adarray.core.types import Aval
from adarray.testing import check_jvp, check_second_order, check_vjp, check_vmap
from adarray.tracing import trace_program

RNG = np.random.default_rng(3)


def spd(shape, dtype=np.float64):
    b = RNG.normal(size=shape)
    return (b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def triangular_ish(shape, dtype=np.float64):
    """Entries everywhere, a diagonal well away from zero."""
    return (RNG.normal(size=shape) + 3 * np.eye(shape[-1])).astype(dtype)


def check_derivatives(fn, *args, vmap=True):
    args = [np.asarray(a) for a in args]
    program, _, _ = trace_program(fn, [Aval(a.shape, a.dtype) for a in args], "f")
    rng = np.random.default_rng(1)
    check_jvp(program, args, rng)
    check_vjp(program, args, rng)
    check_second_order(program, args, rng)
    if vmap:
        check_vmap(program, args, rng)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("b_shape", [(4,), (4, 2), (3, 4, 2)])
def test_values_equal_scipy(dtype, b_shape):
    a, s = triangular_ish((4, 4), dtype), spd((4, 4), dtype)
    b = RNG.normal(size=b_shape).astype(dtype)
    tol = dict(rtol=2e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    for lower in (True, False):
        for trans in (0, 1, "T", "N"):
            for unit in (False, True):
                np.testing.assert_allclose(
                    asl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit),
                    scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit), **tol)
        c, low = asl.cho_factor(s, lower=lower)
        c_ref, low_ref = scipy.linalg.cho_factor(s, lower=lower)
        assert low == low_ref and c.dtype == c_ref.dtype
        np.testing.assert_allclose(c, c_ref, **tol)
        np.testing.assert_allclose(asl.cho_solve((c, low), b), scipy.linalg.cho_solve((c_ref, low_ref), b), **tol)
        np.testing.assert_allclose(asl.cholesky(s, lower=lower), scipy.linalg.cholesky(s, lower=lower), **tol)
    lu, piv = asl.lu_factor(a)
    lu_ref, piv_ref = scipy.linalg.lu_factor(a)
    np.testing.assert_allclose(lu, lu_ref, **tol)
    np.testing.assert_array_equal(piv, piv_ref)
    for trans in (0, 1, 2):
        np.testing.assert_allclose(asl.lu_solve((lu, piv), b, trans=trans),
                                   scipy.linalg.lu_solve((lu_ref, piv_ref), b, trans=trans), **tol)
    np.testing.assert_allclose(asl.expm(0.3 * a), scipy.linalg.expm(0.3 * a), **tol)


def test_batched_values_equal_scipy():
    a, s, b = triangular_ish((2, 3, 3)), spd((2, 3, 3)), RNG.normal(size=(2, 3, 2))
    np.testing.assert_allclose(asl.solve_triangular(a, b, lower=True), scipy.linalg.solve_triangular(a, b, lower=True))
    np.testing.assert_allclose(asl.cholesky(s), scipy.linalg.cholesky(s))
    lu, piv = asl.lu_factor(a)
    np.testing.assert_allclose(asl.lu_solve((lu, piv), b), np.linalg.solve(a, b), rtol=1e-10)
    np.testing.assert_allclose(asl.cho_solve(asl.cho_factor(s), b), np.linalg.solve(s, b), rtol=1e-10)
    for shape in ((0, 3, 3), (1, 1)):
        x = triangular_ish(shape)
        rhs = RNG.normal(size=shape[:-1] + (2,))
        assert asl.solve_triangular(x, rhs).shape == rhs.shape
        np.testing.assert_allclose(asl.lu_solve(asl.lu_factor(x), rhs), np.linalg.solve(x, rhs), rtol=1e-12)


DERIVED = {
    "solve_triangular": (lambda a, b: asl.solve_triangular(a, b, lower=True), lambda: [triangular_ish((3, 3)),
                                                                                    RNG.normal(size=(3, 2))]),
    "solve_triangular_upper_trans": (lambda a, b: asl.solve_triangular(a, b, trans=1, unit_diagonal=True),
                                     lambda: [triangular_ish((2, 3, 3)), RNG.normal(size=3)]),
    "cholesky": (asl.cholesky, lambda: [spd((3, 3))]),
    "cho_factor": (lambda a: asl.cho_factor(a, lower=True)[0], lambda: [spd((3, 3))]),
    "cho_solve": (lambda a, b: asl.cho_solve(asl.cho_factor(a), b), lambda: [spd((3, 3)), RNG.normal(size=(3, 2))]),
    "cho_solve_lower": (lambda c, b: asl.cho_solve((c, True), b), lambda: [np.linalg.cholesky(spd((3, 3))),
                                                                          RNG.normal(size=3)]),
    "lu_factor": (lambda a: asl.lu_factor(a)[0], lambda: [RNG.normal(size=(2, 3, 3))]),
    "lu_solve": (lambda a, b: asl.lu_solve(asl.lu_factor(a), b), lambda: [triangular_ish((3, 3)),
                                                                        RNG.normal(size=(3, 2))]),
    "lu_solve_trans": (lambda a, b: asl.lu_solve(asl.lu_factor(a), b, trans=1), lambda: [triangular_ish((3, 3)),
                                                                                        RNG.normal(size=3)]),
    "expm": (asl.expm, lambda: [0.5 * RNG.normal(size=(3, 3))]),
}


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_derivatives(name):
    fn, make_args = DERIVED[name]
    check_derivatives(fn, *make_args())


def test_cho_solve_gradient_equals_solve_gradient():
    s, b = spd((4, 4)), RNG.normal(size=4)

    def by_cholesky(a):
        return anp.sum(asl.cho_solve(asl.cho_factor(a), b) ** 2)

    def by_solve(a):
        return anp.sum(anp.linalg.solve(a, b) ** 2)

    # cho_factor sees the symmetric part of a: its gradient is the symmetric part of solve's
    full = ad.grad(by_solve)(s)
    np.testing.assert_allclose(ad.grad(by_cholesky)(s), (full + full.T) / 2, rtol=1e-9)

    def by_upper_triangle(a):
        return anp.sum(asl.cho_solve(asl.cho_factor(a, symmetrize_input=False), b) ** 2)

    # reading only the upper triangle (SciPy's way): the symmetric gradient folded onto it
    np.testing.assert_allclose(ad.grad(by_upper_triangle)(s), np.triu(full + full.T) - np.diag(np.diag(full)),
                               rtol=1e-9)


def test_vmap_equals_a_loop():
    a, b = triangular_ish((4, 3, 3)), RNG.normal(size=(4, 3))
    for fn in (lambda a, b: asl.solve_triangular(a, b, lower=True), lambda a, b: asl.lu_solve(asl.lu_factor(a), b),
               lambda a, b: asl.cho_solve(asl.cho_factor(a @ a.T), b), lambda a, b: asl.expm(0.2 * a) @ b):
        np.testing.assert_allclose(ad.vmap(fn)(a, b), np.stack([fn(x, y) for x, y in zip(a, b)]), rtol=1e-10)


def test_shape_errors_name_the_function_and_shapes():
    with pytest.raises(ad.ShapeError, match=r"solve_triangular.*\(3, 3\).*\(4,\)"):
        asl.solve_triangular(np.eye(3), np.ones(4))
    with pytest.raises(ad.ShapeError, match=r"cho_factor.*\(2, 3\)"):
        asl.cho_factor(np.ones((2, 3)))
    with pytest.raises(ad.ShapeError, match=r"lu_factor.*\(3,\)"):
        ad.grad(lambda a: anp.sum(asl.lu_factor(a)[0]))(np.ones(3))
    with pytest.raises(ad.ShapeError, match="expm"):
        asl.expm(np.ones((2, 3)))
    with pytest.raises(ad.ArgumentError, match="trans"):
        asl.solve_triangular(np.eye(2), np.ones(2), trans=3)


def test_not_positive_definite_and_singular_triangles():
    with pytest.raises(asl.LinAlgError):
        asl.cho_factor(-np.eye(2))
    # a singular triangle is not an error here: substitution gives inf / NaN (SciPy raises)
    x = asl.solve_triangular(np.array([[1.0, 0.0], [1.0, 0.0]]), np.ones(2), lower=True)
    assert not np.all(np.isfinite(x))
