"""rgamma (1 / Gamma, entire: its derivatives are finite at the poles of Gamma) and erf / erfc of complex arguments:
values against scipy.special on the NumPy and JAX backends, derivatives against central differences and closed
forms, at the poles and zeros too."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.special as sc

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.special as sps
from adarray.testing import check_grads, numerical_hessian

rng = np.random.default_rng(77)


def _jax(f, *args):
    pytest.importorskip("jax")
    return np.asarray(ad.jit(f, backend="jax")(*args))


def test_rgamma_values():
    x = np.concatenate([rng.uniform(-30, 60, 500), [-200.5, -200.0, -170.5, -3.0, -2.5, -1.0, 0.0, 1e-300, 0.5, 1.0,
                                                     50.0, 51.0, 100.0, 171.0, np.inf, -np.inf, np.nan]])
    want = sc.rgamma(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no warning in eager evaluation at inf, NaN or the far poles
        got = sps.rgamma(x)
    np.testing.assert_allclose(got, want, rtol=2e-13, equal_nan=True)
    np.testing.assert_allclose(_jax(sps.rgamma, x), want, rtol=2e-13, equal_nan=True)
    assert sps.rgamma(np.float32(2.5)).dtype == np.float32


@pytest.mark.parametrize("pole", [0.0, -1.0, -2.0, -3.0, -7.0])
def test_rgamma_derivatives_at_the_poles(pole):
    n = -int(pole)
    # 1/Gamma(x) = (-1)^n n! (x + n) + O((x + n)^2) near x = -n
    assert ad.grad(sps.rgamma)(pole) == pytest.approx((-1) ** n * float(np.prod(np.arange(1, n + 1))), rel=1e-13)
    second = numerical_hessian(lambda x: sc.rgamma(x[0]), np.array([pole]), eps=1e-4, richardson=True)[0, 0]
    assert ad.grad(ad.grad(sps.rgamma))(pole) == pytest.approx(second, rel=1e-6)


def test_rgamma_gradients():
    # autograd: unary_ufunc_check(special.rgamma, lims=[0.3, 2.0])
    check_grads(sps.rgamma, (rng.uniform(0.3, 2.0, 5),), order=2, rng=np.random.default_rng(0))
    check_grads(sps.rgamma, (np.array([-3.7, -2.2, -0.4, 0.45, 0.55, 7.0, 49.9, 50.1, 80.0]),), order=3,
                rng=np.random.default_rng(1))
    x = np.array([0.3, 1.0, 2.5, 60.0])
    np.testing.assert_allclose(ad.vmap(ad.grad(sps.rgamma))(x), -sc.rgamma(x) * sc.digamma(x), rtol=1e-12)


# --- erf and erfc of complex arguments ---------------------------------------------------------------------

Z = np.concatenate([(rng.normal(size=400) + 1j * rng.normal(size=400)) * rng.choice([0.05, 0.5, 1.0, 3.0], 400),
                    np.array([0j, 1e-8 + 1e-8j, 1j, -1j, 2.0 + 0j, -3.0 + 0.5j, 0.9 + 0.5j, 5.0 - 5.0j])])


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_complex_values(name):
    fn, reference = getattr(sps, name), getattr(sc, name)
    want = reference(Z)
    np.testing.assert_allclose(fn(Z), want, rtol=1e-15)
    np.testing.assert_allclose(_jax(fn, Z), want, rtol=1e-12)       # jax.scipy.special.wofz: 3e-13 relative
    assert fn(Z.astype(np.complex64)).dtype == np.complex64
    np.testing.assert_allclose(_jax(fn, Z[:50].astype(np.complex64)), want[:50], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, sign", [("erf", 1.0), ("erfc", -1.0)])
def test_complex_derivatives(name, sign):
    fn = getattr(sps, name)
    # autograd: unary_ufunc_check(special.erf, lims=[-3.0, 3.0], test_complex=True)
    check_grads(fn, (rng.uniform(-3, 3, 4) + 1j * rng.uniform(-3, 3, 4),), order=2, rng=np.random.default_rng(2))
    z = Z[:20]
    derivative = sign * 2.0 / np.sqrt(np.pi) * np.exp(-z * z)
    _, tangent = ad.jvp(fn, (z,), (np.ones_like(z),))
    np.testing.assert_allclose(tangent, derivative, rtol=1e-13)
    _, pullback = ad.vjp(fn, z)
    np.testing.assert_allclose(pullback(np.ones_like(z))[0], derivative, rtol=1e-13)   # JAX's pairing: no conjugate
    holomorphic = ad.grad(lambda w: fn(w), holomorphic=True)(0.3 + 0.4j)
    np.testing.assert_allclose(holomorphic, sign * 2.0 / np.sqrt(np.pi) * np.exp(-(0.3 + 0.4j) ** 2), rtol=1e-13)


def test_real_erf_is_unchanged():
    x = np.linspace(-6, 6, 101)
    np.testing.assert_array_equal(sps.erf(x), sc.erf(x))
    np.testing.assert_array_equal(sps.erfc(x), sc.erfc(x))
    assert anp.erf(np.float32(0.5)).dtype == np.float32
