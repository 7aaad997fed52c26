"""multivariate_normal: logpdf by one Cholesky factorization and one triangular solve (a program whose size does not
grow with d), allow_singular=True and entropy as SciPy, values against scipy.stats and derivatives against central
differences (directions that keep a singular covariance's rank, as its derivative needs)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import adarray as ad
import adarray.numpy as anp
from adarray.scipy.stats import multivariate_normal as mvn
from adarray.testing import numerical_derivative

rng = np.random.default_rng(21)


def _psd(d, rank=None):
    factor = rng.normal(size=(d, d if rank is None else rank))
    return factor @ factor.T + (np.eye(d) if rank is None else 0.0)


def _central(f, x, direction):
    """The derivative of f at x along `direction`, by adarray.testing's central differences."""
    return numerical_derivative(lambda t: f(x + t * direction), 0.0)


def _symmetric(d):
    e = rng.normal(size=(d, d))
    return e + e.T


def test_program_size_does_not_grow_with_the_dimension():
    # The Cholesky loop of the previous version traced 2,609 equations at d = 90 (31,293 for the gradient); now 19 (38).
    sizes = {}
    for d in (5, 90):
        cov, x, mean = _psd(d), rng.normal(size=(7, d)), rng.normal(size=d)
        f = lambda x, m, c: anp.sum(mvn.logpdf(x, m, c))  # noqa: E731
        sizes[d] = (len(ad.make_ir(f)(x, mean, cov).eqns),
                    len(ad.make_ir(ad.grad(f, argnums=(0, 1, 2)))(x, mean, cov).eqns))
    assert sizes[90] == sizes[5]
    assert sizes[90][0] <= 30 and sizes[90][1] <= 60, sizes


@pytest.mark.parametrize("d", [1, 3, 90])
def test_logpdf_matches_scipy(d):
    cov, mean = _psd(d), rng.normal(size=d)
    x = rng.normal(size=(5, d)) * 2
    np.testing.assert_allclose(mvn.logpdf(x, mean, cov), st.multivariate_normal.logpdf(x, mean, cov), rtol=1e-11)
    np.testing.assert_allclose(ad.jit(mvn.logpdf)(x, mean, cov), st.multivariate_normal.logpdf(x, mean, cov),
                               rtol=1e-11)


def test_logpdf_gradients_against_differences():
    d = 4
    cov, mean, x = _psd(d), rng.normal(size=d), rng.normal(size=(3, d))
    f = lambda x, m, c: anp.sum(mvn.logpdf(x, m, c))  # noqa: E731
    reference = lambda x, m, c: np.sum(st.multivariate_normal.logpdf(x, m, c))  # noqa: E731
    gx, gm, gc = ad.grad(f, argnums=(0, 1, 2))(x, mean, cov)
    for _ in range(3):
        v, u, e = rng.normal(size=x.shape), rng.normal(size=d), _symmetric(d)
        np.testing.assert_allclose(np.sum(gx * v), _central(lambda t: reference(t, mean, cov), x, v), rtol=1e-7)
        np.testing.assert_allclose(np.sum(gm * u), _central(lambda t: reference(x, t, cov), mean, u), rtol=1e-7)
        np.testing.assert_allclose(np.sum(gc * e), _central(lambda t: reference(x, mean, t), cov, e), rtol=1e-6)
    hessian = ad.hessian(lambda m: mvn.logpdf(x[0], m, cov))(mean)
    np.testing.assert_allclose(hessian, -np.linalg.inv(cov), rtol=1e-10)


def test_stacked_covariances_broadcast_against_points():
    covs = np.stack([_psd(3), _psd(3)])
    points = rng.normal(size=(4, 1, 3))
    out = mvn.logpdf(points, np.zeros(3), covs)
    assert out.shape == (4, 2)
    for k in range(2):
        np.testing.assert_allclose(out[:, k], st.multivariate_normal.logpdf(points[:, 0], np.zeros(3), covs[k]),
                                   rtol=1e-12)


# --- allow_singular=True --------------------------------------------------------------------------------


def test_singular_covariance_as_in_autograds_test():
    cov = np.zeros((4, 4))
    cov[0, 0] = cov[1, 1] = 1.0
    mean = np.concatenate((rng.normal(size=2), np.zeros(2)))
    x = np.concatenate((rng.normal(size=2), np.zeros(2)))
    for fn, reference in ((mvn.logpdf, st.multivariate_normal.logpdf), (mvn.pdf, st.multivariate_normal.pdf)):
        np.testing.assert_allclose(fn(x, mean, cov, allow_singular=True),
                                   reference(x, mean, cov, allow_singular=True), rtol=1e-13)

    def restricted(x, mean):  # x varies only where the distribution lives
        return mvn.logpdf(anp.concatenate([x[:2], mean[2:]]), mean, cov, allow_singular=True)

    gx, gm = ad.grad(restricted, argnums=(0, 1))(x, mean)
    np.testing.assert_allclose(gx, np.concatenate([-(x[:2] - mean[:2]), [0.0, 0.0]]), rtol=1e-13)
    np.testing.assert_allclose(gm, np.concatenate([x[:2] - mean[:2], [0.0, 0.0]]), rtol=1e-13)
    assert np.all(np.isfinite(ad.grad(lambda c: restricted(x, mean) + mvn.logpdf(x, mean, c, allow_singular=True))(
        cov)))


def test_singular_covariance_values_match_scipy():
    d, rank = 5, 3
    factor = rng.normal(size=(d, rank))
    cov, mean = factor @ factor.T, rng.normal(size=d)
    on = mean + rng.normal(size=(4, rank)) @ factor.T
    off = on + 0.1 * rng.normal(size=(4, d))
    points = np.concatenate([on, off])
    np.testing.assert_allclose(mvn.logpdf(points, mean, cov, allow_singular=True),
                               st.multivariate_normal.logpdf(points, mean, cov, allow_singular=True), rtol=1e-9)
    assert np.all(np.isneginf(mvn.logpdf(off, mean, cov, allow_singular=True)))
    # the same under jit, and for a diagonal with zeros
    np.testing.assert_allclose(ad.jit(lambda p: mvn.logpdf(p, mean, cov, allow_singular=True))(on),
                               st.multivariate_normal.logpdf(on, mean, cov, allow_singular=True), rtol=1e-9)
    diagonal = np.array([2.0, 0.0, 0.5])
    pts = np.array([[0.3, 0.0, -1.0], [0.3, 1e-3, -1.0]])
    np.testing.assert_allclose(mvn.logpdf(pts, None, diagonal, allow_singular=True),
                               st.multivariate_normal.logpdf(pts, None, np.diag(diagonal), allow_singular=True))
    # a full-rank covariance gives the Cholesky path's value
    full = _psd(d)
    np.testing.assert_allclose(mvn.logpdf(points, mean, full, allow_singular=True),
                               mvn.logpdf(points, mean, full), rtol=1e-11)


def test_singular_covariance_derivatives_keep_the_rank():
    d, rank = 4, 2
    factor = rng.normal(size=(d, rank))
    mean = rng.normal(size=d)
    x = mean + rng.normal(size=(3, rank)) @ factor.T

    def in_factor(f, m, pts):
        return anp.sum(mvn.logpdf(pts, m, f @ f.T, allow_singular=True))

    def reference(f):
        return np.sum(st.multivariate_normal.logpdf(x, mean, f @ f.T, allow_singular=True))

    gradient = ad.grad(in_factor)(factor, mean, x)
    for _ in range(3):
        direction = factor @ rng.normal(size=(rank, rank))  # keeps the span, so the points stay in the support
        np.testing.assert_allclose(np.sum(gradient * direction), _central(reference, factor, direction),
                                   rtol=1e-6, atol=1e-8)


def test_indefinite_covariance_gives_nan():
    cov = np.diag([1.0, -0.5, 2.0])
    assert np.isnan(mvn.logpdf(np.zeros(3), None, cov, allow_singular=True))
    assert np.isnan(mvn.entropy(None, cov))


# --- entropy ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cov", [np.eye(3) * 2.0, 2.5, np.array([1.0, 3.0, 0.5]), "psd", "singular"])
def test_entropy_matches_scipy(cov):
    cov = {"psd": _psd(4), "singular": _psd(4, rank=2)}.get(cov, cov) if isinstance(cov, str) else cov
    reference_cov = np.diag(cov) if np.ndim(cov) == 1 else cov
    np.testing.assert_allclose(mvn.entropy(None, cov), st.multivariate_normal.entropy(None, reference_cov),
                               rtol=1e-12)


def test_entropy_gradient_is_half_the_inverse():
    cov = _psd(3)
    gradient = ad.grad(lambda c: mvn.entropy(None, c))(cov)
    # the symmetric part is the same under both conventions for one-triangle inputs (lower triangle, symmetrised)
    np.testing.assert_allclose((gradient + gradient.T) @ cov, np.eye(3), atol=1e-12)
    e = _symmetric(3)
    np.testing.assert_allclose(np.sum(ad.grad(lambda c: mvn.entropy(np.zeros(3), c))(cov) * e),
                               _central(lambda c: st.multivariate_normal.entropy(None, c), cov, e), rtol=1e-7)
    stack = np.stack([cov, 3 * cov])
    np.testing.assert_allclose(mvn.entropy(None, stack),
                               [st.multivariate_normal.entropy(None, c) for c in stack], rtol=1e-12)
