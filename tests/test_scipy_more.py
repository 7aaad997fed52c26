"""The remaining common SciPy names (issue 10) against SciPy itself: scipy.special (gamma, gammasgn,
loggamma, beta, factorial, comb, zeta, expn, erfcinv), scipy.linalg (lu, inv, det, solve, eigh, svd,
qr, sqrtm, logm) and scipy.stats (lognorm, weibull_min, halfnorm, truncnorm, vonmises); numpy.linalg's
cond, tensorsolve and tensorinv against NumPy. Values on random inputs and edge values, derivatives
by check_grads (forward and reverse against central differences, to second order), vmap against a
loop, and the errors."""
import numpy as np
import pytest
import scipy.linalg as sl
import scipy.special as sc
import scipy.stats as ss

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.linalg as asl
import adarray.scipy.special as sps
from adarray.scipy import stats
from adarray.testing import check_grads

rng = np.random.default_rng(2020)
POS = rng.uniform(0.3, 5.0, size=(2, 3))
EDGES = np.array([-2.0, -1.5, -1.0, -0.5, 0.0, -0.0, 0.5, np.nan, np.inf, -np.inf, 3.0, 171.5, 1e-300])
SQUARE = rng.normal(size=(4, 4)) + 3.0 * np.eye(4)
SPD = SQUARE @ SQUARE.T + np.eye(4)
POSITIVE_SPECTRUM = 2.0 * np.eye(3) + 0.3 * rng.normal(size=(3, 3))
RHS = rng.normal(size=(4, 2))

# --- scipy.special ------------------------------------------------------------------------------

SPECIAL_VALUES = {
    "gamma": (sps.gamma, sc.gamma, (EDGES,), 1e-15),
    "gammasgn": (sps.gammasgn, sc.gammasgn, (EDGES,), 0.0),
    "loggamma": (sps.loggamma, sc.loggamma, (np.abs(EDGES),), 1e-15),
    "erfcinv": (sps.erfcinv, sc.erfcinv, (np.array([0.0, 1e-300, 0.1, 0.5, 1.0, 1.5, 1.99, 2.0, 2.5]),), 1e-14),
    "beta": (sps.beta, sc.beta, (POS, POS[::-1]), 1e-15),
    "beta_negative": (sps.beta, sc.beta, (np.array([-0.5, -1.5, 2.5]), np.array([1.2, 0.7, -0.3])), 1e-14),
    "factorial": (sps.factorial, sc.factorial, (np.array([-1.0, 0.0, 3.0, 2.5, 10.0, 170.0]),), 1e-15),
    "comb": (sps.comb, sc.comb, (np.array([5.0, 10.0, 3.0, -1.0, 4.5, 2.0, 0.0]),
                                 np.array([2.0, 3.0, 4.0, 1.0, 1.5, 0.0, 0.0])), 1e-15),
    "comb_repetition": (lambda n, k: sps.comb(n, k, repetition=True), lambda n, k: sc.comb(n, k, repetition=True),
                        (np.array([5.0, 10.0, 3.0, 4.5, 2.0, 0.0]), np.array([2.0, 3.0, 4.0, 1.5, 0.0, 0.0])), 1e-15),
    "zeta": (sps.zeta, sc.zeta, (np.array([2.0, 0.5, -1.0, -2.5, 1.0, 1.5, 30.0]),), 1e-15),
    "zeta_hurwitz": (sps.zeta, sc.zeta, (np.array([2.0, 3.5, 1.2, 8.0]), np.array([0.5, 3.0, 1.0, 0.1])), 1e-15),
    "expn": (lambda x: sps.expn(3, x), lambda x: sc.expn(3, x), (np.array([0.0, 0.1, 1.0, 30.0, np.inf]),), 1e-15),
    "expn_0": (lambda x: sps.expn(0, x), lambda x: sc.expn(0, x), (np.array([0.1, 1.0, 30.0]),), 1e-15),
}


@pytest.mark.parametrize("name", sorted(SPECIAL_VALUES))
def test_special_values_match_scipy(name):
    ours, theirs, args, rtol = SPECIAL_VALUES[name]
    with np.errstate(all="ignore"):
        expected = theirs(*args)
        for actual in (ours(*args), ad.jit(ours)(*args)):
            assert np.asarray(actual).dtype == np.float64
            np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0.0)
            assert np.array_equal(np.signbit(actual), np.signbit(expected)) or name == "erfcinv"


def test_exact_integers_match_scipy():
    assert sps.factorial(20, exact=True) == sc.factorial(20, exact=True) == 2432902008176640000
    assert sps.comb(60, 30, exact=True) == sc.comb(60, 30, exact=True)
    assert sps.comb(4, 2, exact=True, repetition=True) == sc.comb(4, 2, exact=True, repetition=True)
    with pytest.raises(ad.TracingError, match="exact=False"):
        ad.jit(lambda n: sps.factorial(n, exact=True))(np.array(3))


SPECIAL_GRADS = {
    "gamma": (sps.gamma, (np.array([0.5, 2.5, 4.0, -0.5, -2.3]),)),
    "loggamma": (sps.loggamma, (POS,)),
    "beta": (sps.beta, (POS, POS[::-1])),
    "factorial": (sps.factorial, (np.array([0.3, 2.5, 4.0]),)),
    "comb": (sps.comb, (np.array([5.0, 7.5, 10.0]), np.array([2.0, 1.5, 3.3]))),
    "comb_repetition": (lambda n, k: sps.comb(n, k, repetition=True), (np.array([5.0, 7.5]), np.array([2.0, 1.5]))),
    "zeta": (sps.zeta, (np.array([1.5, 2.0, 3.7, 0.5, -1.5]),)),
    "zeta_hurwitz": (sps.zeta, (np.array([1.6, 2.0, 4.5]), np.array([0.4, 1.0, 2.5]))),
    "expn": (lambda x: sps.expn(2, x) + sps.expn(0, x), (np.array([0.2, 1.0, 3.0]),)),
    "erfcinv": (sps.erfcinv, (np.array([0.05, 0.7, 1.0, 1.6]),)),
}


@pytest.mark.parametrize("name", sorted(SPECIAL_GRADS))
def test_special_derivatives_match_finite_differences(name):
    fn, args = SPECIAL_GRADS[name]
    check_grads(fn, args, order=2)


def test_special_derivatives_against_closed_forms():
    x = np.array([0.5, 2.5, -0.5])
    assert np.allclose(ad.grad(lambda v: anp.sum(sps.gamma(v)))(x), sc.gamma(x) * sc.digamma(x), rtol=1e-13)
    assert np.allclose(ad.grad(lambda q: anp.sum(sps.zeta(3.0, q)))(np.array([0.5, 2.0])),
                       -3.0 * sc.zeta(4.0, np.array([0.5, 2.0])), rtol=1e-13)
    assert ad.grad(sps.zeta)(2.0) == pytest.approx(-0.93754825431584375, rel=1e-14)   # zeta'(2)
    assert np.all(ad.grad(lambda v: anp.sum(sps.gammasgn(v)))(x) == 0.0)
    assert np.allclose(ad.grad(lambda v: anp.sum(sps.expn(1, v)))(x[:2]), -np.exp(-x[:2]) / x[:2], rtol=1e-13)
    # comb is 0 outside 0 <= k <= N, and so is its derivative
    assert np.array_equal(ad.grad(lambda n: anp.sum(sps.comb(n, 4.0)))(np.array([3.0, -1.0])), [0.0, 0.0])


def test_special_vmap_matches_a_loop():
    for fn in (sps.gamma, sps.gammasgn, lambda x: sps.zeta(x + 3.0, 0.7), lambda x: sps.comb(10.0, x + 2.0),
               lambda x: sps.expn(2, anp.abs(x)), lambda x: sps.beta(x + 2.5, 1.5)):
        batch = rng.normal(size=(3, 4))
        np.testing.assert_allclose(ad.vmap(fn)(batch), np.stack([fn(x) for x in batch]), rtol=1e-14)


def test_special_bad_arguments():
    with pytest.raises(ad.ArgumentError, match="expn"):
        sps.expn(np.array([1, 2]), 1.0)
    with pytest.raises(ad.ArgumentError, match="expn"):
        sps.expn(-1, 1.0)


# --- numpy.linalg: cond, tensorsolve, tensorinv ---------------------------------------------------

@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", np.inf, -np.inf, 1, -1])
def test_cond_matches_numpy(p):
    stack = rng.normal(size=(2, 3, 3))
    np.testing.assert_allclose(anp.linalg.cond(stack, p), np.linalg.cond(stack, p), rtol=1e-12)
    np.testing.assert_allclose(ad.jit(lambda a: anp.linalg.cond(a, p))(stack), np.linalg.cond(stack, p), rtol=1e-12)
    check_grads(lambda a: anp.linalg.cond(a, p), (SQUARE,), order=2)
    if p in (None, 2, -2):
        tall = rng.normal(size=(5, 3))
        np.testing.assert_allclose(anp.linalg.cond(tall, p), np.linalg.cond(tall, p), rtol=1e-12)


def test_tensorsolve_and_tensorinv_match_numpy():
    a, b = rng.normal(size=(2, 3, 6)) + np.eye(6).reshape(6, 6)[:6].reshape(2, 3, 6), rng.normal(size=(2, 3))
    np.testing.assert_allclose(anp.linalg.tensorsolve(a, b), np.linalg.tensorsolve(a, b), rtol=1e-12)
    a4 = rng.normal(size=(2, 3, 2, 3)) + np.eye(6).reshape(2, 3, 2, 3)
    np.testing.assert_allclose(anp.linalg.tensorsolve(a4, b, axes=(0,)), np.linalg.tensorsolve(a4, b, axes=(0,)),
                               rtol=1e-12)
    np.testing.assert_allclose(anp.linalg.tensorinv(a4, 2), np.linalg.tensorinv(a4, 2), rtol=1e-12)
    inverse = rng.normal(size=(4, 6, 8, 3))
    np.testing.assert_allclose(anp.linalg.tensorinv(inverse, 2), np.linalg.tensorinv(inverse, 2), rtol=1e-10)
    check_grads(lambda m, r: anp.linalg.tensorsolve(m, r), (a4, b), order=2)
    check_grads(lambda m: anp.linalg.tensorinv(m, 1), (SQUARE.reshape(4, 2, 2),), order=2)
    with pytest.raises(anp.linalg.LinAlgError, match="square"):
        anp.linalg.tensorinv(rng.normal(size=(2, 3)), 1)
    with pytest.raises(ad.ArgumentError, match="ind"):
        anp.linalg.tensorinv(SQUARE, 0)


# --- scipy.linalg -------------------------------------------------------------------------------

def _up_to_sign(ours, theirs):
    """Columns (singular or eigen-vectors) are unique up to sign: compare after fixing it."""
    signs = np.sign(np.sum(ours * theirs, axis=-2, keepdims=True))
    np.testing.assert_allclose(ours * signs, theirs, rtol=1e-9, atol=1e-11)


def test_scipy_linalg_values_match_scipy():
    stack = rng.normal(size=(2, 3, 3))
    for ours, theirs in zip(asl.lu(stack), sl.lu(stack)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    for kwargs in ({"permute_l": True}, {"p_indices": True}):
        for ours, theirs in zip(asl.lu(SQUARE, **kwargs), sl.lu(SQUARE, **kwargs)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(asl.inv(SQUARE), sl.inv(SQUARE), rtol=1e-12)
    np.testing.assert_allclose(asl.det(SQUARE), sl.det(SQUARE), rtol=1e-12)
    upper_only = np.triu(SPD) + np.tril(rng.normal(size=(4, 4)), -1)    # SciPy reads one triangle
    for assume_a in (None, "gen", "sym", "her", "pos", "diagonal", "tridiagonal", "upper triangular",
                     "lower triangular"):
        for transposed in (False, True):
            for lower in (False, True):
                matrix = SPD if assume_a in ("pos",) and lower else upper_only
                if assume_a == "pos" and lower:
                    matrix = np.tril(SPD) + np.triu(rng.normal(size=(4, 4)), 1)
                try:
                    expected = sl.solve(matrix, RHS, lower=lower, assume_a=assume_a, transposed=transposed)
                except (np.linalg.LinAlgError, ValueError, NotImplementedError):
                    continue
                actual = asl.solve(matrix, RHS, lower=lower, assume_a=assume_a, transposed=transposed,
                                   symmetrize_input=False)
                np.testing.assert_allclose(actual, expected, rtol=1e-10, err_msg=f"{assume_a} {transposed} {lower}")
    np.testing.assert_allclose(asl.solve(SQUARE, RHS[:, 0]), sl.solve(SQUARE, RHS[:, 0]), rtol=1e-12)
    np.testing.assert_allclose(asl.inv(upper_only, assume_a="sym", symmetrize_input=False),
                               sl.inv(upper_only, assume_a="sym"), rtol=1e-12)
    values, vectors = asl.eigh(upper_only, lower=False, symmetrize_input=False)
    expected_values, expected_vectors = sl.eigh(upper_only, lower=False)
    np.testing.assert_allclose(values, expected_values, rtol=1e-12)
    _up_to_sign(vectors, expected_vectors)
    b = 2.0 * np.eye(4) + 0.1 * (SQUARE + SQUARE.T)
    values, vectors = asl.eigh(SPD, b)
    expected_values, expected_vectors = sl.eigh(SPD, b)
    np.testing.assert_allclose(values, expected_values, rtol=1e-12)
    _up_to_sign(vectors, expected_vectors)
    np.testing.assert_allclose(asl.eigh(SPD, eigvals_only=True, subset_by_index=(1, 2)),
                               sl.eigh(SPD, eigvals_only=True, subset_by_index=(1, 2)), rtol=1e-12)
    tall = rng.normal(size=(5, 3))
    u, s, vh = asl.svd(tall)
    expected_u, expected_s, expected_vh = sl.svd(tall)
    np.testing.assert_allclose(s, expected_s, rtol=1e-12)
    _up_to_sign(u[:, :3], expected_u[:, :3])
    assert u.shape == (5, 5) and asl.svd(tall, full_matrices=False)[0].shape == (5, 3)
    for mode in ("full", "economic", "r"):
        ours, theirs = asl.qr(tall, mode=mode), sl.qr(tall, mode=mode)
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for x, y in zip(ours, theirs):
            np.testing.assert_allclose(np.abs(x), np.abs(y), rtol=1e-10, atol=1e-12)
    for matrix in (POSITIVE_SPECTRUM, SPD, np.array([[1.0, -0.8], [0.8, 1.0]]), np.eye(2)):
        np.testing.assert_allclose(asl.sqrtm(matrix), sl.sqrtm(matrix), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(asl.logm(matrix), sl.logm(matrix), rtol=1e-12, atol=1e-14)
    batch = np.stack([POSITIVE_SPECTRUM, SPD[:3, :3]])
    np.testing.assert_allclose(ad.jit(asl.sqrtm)(batch), sl.sqrtm(batch), rtol=1e-12)


SCIPY_LINALG_GRADS = {
    "lu": (lambda a: asl.lu(a)[1] @ asl.lu(a)[2] + asl.lu(a, permute_l=True)[0], (SQUARE,)),
    "inv_sym": (lambda a: asl.inv(a, assume_a="sym", lower=True), (SPD,)),
    "det": (asl.det, (SQUARE,)),
    "solve": (lambda a, b: asl.solve(a, b, transposed=True), (SQUARE, RHS)),
    "solve_pos": (lambda a, b: asl.solve(a, b, assume_a="pos"), (SPD, RHS)),
    "solve_triangular": (lambda a, b: asl.solve(a, b, assume_a="lower triangular"), (SQUARE, RHS)),
    "eigh_values": (lambda a: asl.eigh(a + a.T, eigvals_only=True), (SQUARE,)),
    "eigh_generalized": (lambda a, b: asl.eigh(a + a.T, b @ b.T + 4.0 * np.eye(4), eigvals_only=True),
                         (SQUARE, SQUARE)),
    "svd": (lambda a: asl.svd(a, compute_uv=False), (rng.normal(size=(4, 3)),)),
    "qr": (lambda a: asl.qr(a, mode="r")[0] ** 2, (rng.normal(size=(4, 3)),)),
    "sqrtm": (asl.sqrtm, (POSITIVE_SPECTRUM,)),
    "sqrtm_spd": (asl.sqrtm, (SPD / 10.0,)),
    "logm": (asl.logm, (POSITIVE_SPECTRUM,)),
    "logm_rotation": (asl.logm, (np.array([[1.0, -0.8], [0.8, 1.0]]),)),
}


@pytest.mark.parametrize("name", sorted(SCIPY_LINALG_GRADS))
def test_scipy_linalg_derivatives_match_finite_differences(name):
    fn, args = SCIPY_LINALG_GRADS[name]
    check_grads(fn, args, order=2)


def test_sqrtm_and_logm_identities():
    """d sqrtm solves the Sylvester equation S dS + dS S = dA; d logm(A) is the inverse of d expm at logm(A)."""
    direction = rng.normal(size=(3, 3))
    root, droot = ad.jvp(asl.sqrtm, (POSITIVE_SPECTRUM,), (direction,))
    np.testing.assert_allclose(root @ droot + droot @ root, direction, rtol=1e-10, atol=1e-12)
    log, dlog = ad.jvp(asl.logm, (POSITIVE_SPECTRUM,), (direction,))
    _, back = ad.jvp(asl.expm, (log,), (dlog,))
    np.testing.assert_allclose(back, direction, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ad.vmap(asl.sqrtm)(np.stack([POSITIVE_SPECTRUM, SPD[:3, :3]])),
                               np.stack([sl.sqrtm(POSITIVE_SPECTRUM), sl.sqrtm(SPD[:3, :3])]), rtol=1e-12)


def test_scipy_linalg_errors():
    with pytest.raises(asl.LinAlgError, match="negative real eigenvalue"):   # complex eagerly, as SciPy
        ad.jit(asl.sqrtm)(np.diag([1.0, -2.0]))
    with pytest.raises(asl.LinAlgError, match="singular"):
        asl.logm(np.diag([1.0, 0.0]))
    with pytest.raises(ad.UnsupportedError, match="square"):
        asl.lu(rng.normal(size=(3, 4)))
    with pytest.raises(ad.UnsupportedError, match="pivoting"):
        asl.qr(SQUARE, pivoting=True)
    with pytest.raises(ad.UnsupportedError, match="mode"):
        asl.qr(SQUARE, mode="raw")
    with pytest.raises(ad.ArgumentError, match="assume_a"):
        asl.solve(SQUARE, RHS, assume_a="banana")
    with pytest.raises(ad.UnsupportedError, match="subset_by_value"):
        asl.eigh(SPD, subset_by_value=(0.0, 1.0))
    with pytest.raises(ad.ShapeError, match="sqrtm"):
        asl.sqrtm(rng.normal(size=(2, 3)))


# --- scipy.stats --------------------------------------------------------------------------------

POINTS = np.array([-1.0, 0.0, 0.3, 1.0, 2.5, 7.0, 40.0])
QUANTILES = np.array([0.01, 0.3, 0.5, 0.99])
METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
DISTRIBUTIONS = {   # label -> (name, parameters after x, methods, also ppf and isf?)
    "lognorm": ("lognorm", (0.7, -0.2, 1.3), METHODS, True),
    "lognorm_default": ("lognorm", (1.5,), METHODS, True),
    "weibull_min": ("weibull_min", (1.7, -0.2, 1.3), METHODS, True),
    "weibull_min_below_1": ("weibull_min", (0.6,), METHODS, True),
    "weibull_min_exponential": ("weibull_min", (1.0,), METHODS, True),
    "halfnorm": ("halfnorm", (-0.2, 1.3), METHODS, True),
    "truncnorm": ("truncnorm", (-0.5, 2.0, 0.1, 1.2), METHODS, False),
    "truncnorm_upper_tail": ("truncnorm", (8.0, 14.0), METHODS, False),
    "truncnorm_lower_tail": ("truncnorm", (-14.0, -8.0), METHODS, False),
    "truncnorm_half_line": ("truncnorm", (0.2, np.inf), METHODS, False),
    "vonmises": ("vonmises", (2.5, 0.1), ("logpdf", "pdf"), False),
}


@pytest.mark.parametrize("label", sorted(DISTRIBUTIONS))
def test_distribution_values_match_scipy(label):
    name, params, methods, quantiles = DISTRIBUTIONS[label]
    points = POINTS if "tail" not in label else np.array([8.5, 9.0, 12.0, 15.0, 7.0, -8.5, -9.0, -13.0])
    calls = [(m, points) for m in methods] + ([(m, QUANTILES) for m in ("ppf", "isf")] if quantiles else [])
    for method, first in calls:
        with np.errstate(all="ignore"):
            expected = getattr(getattr(ss, name), method)(first, *params)
        actual = getattr(getattr(stats, name), method)(first, *params)
        np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-300, err_msg=f"{label}.{method}")


def test_invalid_parameters_give_nan():
    assert np.isnan(stats.lognorm.logpdf(1.0, -1.0))
    assert np.isnan(stats.weibull_min.cdf(1.0, 0.0))
    assert np.isnan(stats.halfnorm.pdf(1.0, scale=-1.0))
    assert np.isnan(stats.truncnorm.logpdf(0.0, 1.0, 0.5))
    assert np.isnan(stats.vonmises.logpdf(0.0, -1.0))


STATS_GRADS = {   # every float argument differentiated, inside the support
    "lognorm": ("lognorm", [np.array([0.5, 1.2, 3.0]), 0.7, -0.2, 1.3], METHODS),
    "weibull_min": ("weibull_min", [np.array([0.5, 1.2, 3.0]), 1.7, -0.2, 1.3], METHODS),
    "halfnorm": ("halfnorm", [np.array([0.5, 1.2, 3.0]), -0.2, 1.3], METHODS),
    "truncnorm": ("truncnorm", [np.array([-0.2, 0.4, 1.5]), -0.5, 2.0, 0.1, 1.2], METHODS),
    "truncnorm_tail": ("truncnorm", [np.array([8.3, 8.7]), 8.0, 10.0, 0.0, 1.0], METHODS),
    "vonmises": ("vonmises", [np.array([-2.0, 0.4, 3.0]), 2.5, 0.1, 1.1], ("logpdf", "pdf")),
    "lognorm_quantiles": ("lognorm", [QUANTILES, 0.7, -0.2, 1.3], ("ppf", "isf")),
    "weibull_min_quantiles": ("weibull_min", [QUANTILES, 1.7, -0.2, 1.3], ("ppf", "isf")),
    "halfnorm_quantiles": ("halfnorm", [QUANTILES, -0.2, 1.3], ("ppf", "isf")),
}


@pytest.mark.parametrize("label", sorted(STATS_GRADS))
def test_distribution_derivatives_match_finite_differences(label):
    name, args, methods = STATS_GRADS[label]
    args = [np.asarray(a, np.float64) for a in args]
    for method in methods:
        check_grads(getattr(getattr(stats, name), method), args, order=2)


def test_distributions_vmap_matches_a_loop():
    batch = rng.uniform(0.2, 3.0, size=(3, 4))
    for fn in (lambda x: stats.lognorm.logpdf(x, 0.8), lambda x: stats.weibull_min.cdf(x, 1.3),
               lambda x: stats.truncnorm.logsf(x, 0.1, 2.5), lambda x: stats.vonmises.pdf(x, 1.5),
               lambda x: stats.halfnorm.logcdf(x)):
        np.testing.assert_allclose(ad.vmap(fn)(batch), np.stack([fn(x) for x in batch]), rtol=1e-14)
