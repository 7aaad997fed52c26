"""adarray.scipy.special against scipy.special: values on random and edge inputs, gradients in every
argument against central differences of the SciPy function, second order, vmap, stability cases."""
import numpy as np
import pytest
import scipy.special as sc

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.special as sps
from adarray.testing import numerical_derivative, numerical_hessian

rng = np.random.default_rng(7)


def uniform(low, high, size=(7,)):
    return rng.uniform(low, high, size)


def derivative(f, x, h=1e-3):
    """Central differences with one Richardson step (adarray.testing): error O(h^4) + O(eps / h)."""
    return numerical_derivative(f, x, h, richardson=True)


def partial(f, args, index, direction):
    """The derivative of f(*args) along `direction` in argument `index`, by central differences."""
    return derivative(lambda t: f(*[a + t * direction if i == index else a for i, a in enumerate(args)]), 0.0)


# name -> (ours, SciPy's, argument samples (the last arguments are differentiated), derivative step)
CASES = {
    "erf": (sps.erf, sc.erf, [uniform(-4, 4)], 1e-3),
    "erfc": (sps.erfc, sc.erfc, [uniform(-4, 9)], 1e-3),
    "erfinv": (sps.erfinv, sc.erfinv, [uniform(-0.97, 0.97)], 1e-4),
    "ndtr": (sps.ndtr, sc.ndtr, [uniform(-12, 8)], 1e-3),
    "ndtri": (sps.ndtri, sc.ndtri, [uniform(0.01, 0.99)], 1e-4),
    "log_ndtr": (sps.log_ndtr, sc.log_ndtr, [uniform(-45, 12)], 1e-3),
    "expit": (sps.expit, sc.expit, [uniform(-30, 30)], 1e-3),
    "logit": (sps.logit, sc.logit, [uniform(0.02, 0.98)], 1e-4),
    "gammaln": (sps.gammaln, sc.gammaln, [np.concatenate([uniform(0.05, 30), [-0.5, -1.5, -2.7]])], 1e-4),
    "digamma": (sps.digamma, sc.digamma, [uniform(0.1, 30)], 1e-4),
    "i0e": (sps.i0e, sc.i0e, [np.concatenate([uniform(-20, 20), [1e-3, 0.3]])], 1e-4),
    "i1e": (sps.i1e, sc.i1e, [np.concatenate([uniform(-20, 20), [1e-3, 0.3]])], 1e-4),
    "i0": (sps.i0, sc.i0, [uniform(-10, 10)], 1e-4),
    "i1": (sps.i1, sc.i1, [uniform(-10, 10)], 1e-4),
    "entr": (sps.entr, sc.entr, [uniform(0.01, 5)], 1e-4),
    "xlogy": (sps.xlogy, sc.xlogy, [uniform(-2, 2), uniform(0.05, 5)], 1e-4),
    "xlog1py": (sps.xlog1py, sc.xlog1py, [uniform(-2, 2), uniform(-0.9, 5)], 1e-4),
    "betaln": (sps.betaln, sc.betaln, [uniform(0.1, 40), uniform(0.1, 40)], 1e-4),
    "rel_entr": (sps.rel_entr, sc.rel_entr, [uniform(0.01, 5), uniform(0.01, 5)], 1e-4),
    "kl_div": (sps.kl_div, sc.kl_div, [uniform(0.01, 5), uniform(0.01, 5)], 1e-4),
    "gammainc": (sps.gammainc, sc.gammainc, [uniform(0.2, 25), uniform(0.01, 40)], 1e-3),
    "gammaincc": (sps.gammaincc, sc.gammaincc, [uniform(0.2, 25), uniform(0.01, 40)], 1e-3),
    "betainc": (sps.betainc, sc.betainc, [uniform(0.2, 25), uniform(0.2, 25), uniform(0.01, 0.99)], 1e-4),
    "polygamma1": (lambda x: sps.polygamma(1, x), lambda x: sc.polygamma(1, x), [uniform(0.2, 20)], 1e-4),
    "polygamma3": (lambda x: sps.polygamma(3, x), lambda x: sc.polygamma(3, x), [uniform(0.5, 20)], 1e-4),
    "multigammaln": (lambda a: sps.multigammaln(a, 3), lambda a: sc.multigammaln(a, 3), [uniform(1.2, 20)], 1e-4),
}

# Edge values where SciPy's result is meaningful (infinities, zeros, the far tails).
EDGES = {
    "erfc": [np.array([-np.inf, -30.0, 0.0, 27.0, 40.0, np.inf])],
    "erfinv": [np.array([-1.0, -0.999999, 0.0, 1e-300, 1.0, 1.5])],
    "ndtr": [np.array([-np.inf, -40.0, 0.0, 40.0, np.inf])],
    "ndtri": [np.array([0.0, 1e-300, 0.5, 1.0 - 1e-16, 1.0, -0.1])],
    "log_ndtr": [np.array([-np.inf, -1e5, -40.0, 0.0, 40.0, np.inf])],
    "gammaln": [np.array([0.0, -1.0, 1e-300, 1e300, np.inf])],
    "digamma": [np.array([1e-300, -0.5, 1e10])],
    "xlogy": [np.array([0.0, 0.0, 0.0, 1.0, -1.0]), np.array([0.0, np.inf, 2.0, 0.0, 0.0])],
    "xlog1py": [np.array([0.0, 0.0, 1.0]), np.array([-1.0, 2.0, -1.0])],
    "entr": [np.array([0.0, -1.0, 1e-300, np.inf])],
    "rel_entr": [np.array([0.0, 0.0, 1.0, -1.0, 1.0]), np.array([0.0, 1.0, 0.0, 1.0, -1.0])],
    "kl_div": [np.array([0.0, 0.0, 1.0, -1.0, 1.0]), np.array([0.0, 1.0, 0.0, 1.0, -1.0])],
    "gammainc": [np.array([1.0, 0.5, 2.0, -1.0, 1e3, 1e3]), np.array([0.0, np.inf, 0.0, 1.0, 900.0, 1100.0])],
    "gammaincc": [np.array([1.0, 0.5, 2.0, 1e3]), np.array([0.0, np.inf, 300.0, 1100.0])],
    "betainc": [np.array([1.0, 2.0, 0.5, 200.0]), np.array([1.0, 3.0, 0.5, 300.0]),
                np.array([0.0, 1.0, 0.999999, 0.4])],
    "expit": [np.array([-800.0, 800.0, -np.inf])],
    "logit": [np.array([0.0, 1.0, 0.5])],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_scipy(name):
    ours, theirs, args, _ = CASES[name]
    np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-12, atol=1e-300)
    if name in EDGES:
        with np.errstate(all="ignore"):  # eager evaluation warns as NumPy does (log(0), ...)
            expected, actual = theirs(*EDGES[name]), ours(*EDGES[name])
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-300)


def _reference_partial(name, theirs, args, index, h):
    """d theirs / d args[index] by central differences of SciPy. Where P or I is close to 1, the
    complementary function is differenced: its small values carry full relative precision."""
    def shifted(value):
        moved = list(args)
        moved[index] = value
        return moved

    if name == "gammainc":
        plain = derivative(lambda v: sc.gammainc(*shifted(v)), args[index], h)
        complement = -derivative(lambda v: sc.gammaincc(*shifted(v)), args[index], h)
        return np.where(sc.gammainc(*args) < 0.5, plain, complement)
    if name == "betainc":
        plain = derivative(lambda v: sc.betainc(*shifted(v)), args[index], h)
        complement = -derivative(lambda v: (lambda a, b, x: sc.betainc(b, a, 1 - x))(*shifted(v)), args[index], h)
        return np.where(sc.betainc(*args) < 0.5, plain, complement)
    if name == "gammaincc":
        plain = derivative(lambda v: sc.gammaincc(*shifted(v)), args[index], h)
        complement = -derivative(lambda v: sc.gammainc(*shifted(v)), args[index], h)
        return np.where(sc.gammaincc(*args) < 0.5, plain, complement)
    return derivative(lambda v: theirs(*shifted(v)), args[index], h)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_in_every_argument_matches_scipy(name):
    ours, theirs, args, h = CASES[name]
    for index in range(len(args)):
        grad = ad.grad(lambda *xs: anp.sum(ours(*xs)), argnums=index)(*args)
        expected = _reference_partial(name, theirs, args, index, h)
        np.testing.assert_allclose(grad, expected, rtol=2e-7, atol=1e-10 * np.max(np.abs(expected)),
                                   err_msg=f"{name}: derivative in argument {index}")


SHAPE_PARAMETER_POINTS = [  # (a, x) across the series and continued-fraction regions and the tails
    (0.1, 0.01), (0.5, 0.2), (2.0, 1.0), (2.0, 5.0), (10.0, 3.0), (10.0, 30.0), (100.0, 90.0),
    (100.0, 120.0), (1.5, 1e-5), (3.0, 60.0), (0.3, 200.0), (1e3, 1100.0),
]


@pytest.mark.parametrize("a, x", SHAPE_PARAMETER_POINTS)
def test_gammainc_shape_derivative_is_accurate(a, x):
    grad_p = ad.grad(sps.gammainc)(a, x)
    grad_q = ad.grad(sps.gammaincc)(a, x)
    small = min(sc.gammainc(a, x), sc.gammaincc(a, x))
    reference = derivative(lambda v: sc.gammainc(v, x), a) if small == sc.gammainc(a, x) else \
        -derivative(lambda v: sc.gammaincc(v, x), a)
    np.testing.assert_allclose(grad_p, reference, rtol=1e-8)
    np.testing.assert_allclose(grad_q, -reference, rtol=1e-8)


@pytest.mark.parametrize("a, b, x", [(0.5, 0.5, 0.3), (2.0, 3.0, 0.2), (2.0, 3.0, 0.8), (10.0, 20.0, 0.3),
                                     (50.0, 40.0, 0.6), (1.0, 1.0, 0.5), (0.7, 2.5, 0.999), (300.0, 2.0, 0.99)])
def test_betainc_shape_derivatives_are_accurate(a, b, x):
    grad_a, grad_b = ad.grad(sps.betainc, argnums=(0, 1))(a, b, x)
    if sc.betainc(a, b, x) < 0.5:
        ref_a = derivative(lambda v: sc.betainc(v, b, x), a)
        ref_b = derivative(lambda v: sc.betainc(a, v, x), b)
    else:
        ref_a = -derivative(lambda v: sc.betainc(b, v, 1 - x), a)
        ref_b = -derivative(lambda v: sc.betainc(v, a, 1 - x), b)
    np.testing.assert_allclose([grad_a, grad_b], [ref_a, ref_b], rtol=1e-8)


SECOND_ORDER = {  # a scalar function of a vector, ours and SciPy's
    "gammainc": (lambda v: sps.gammainc(v[0], v[1]), lambda v: sc.gammainc(v[0], v[1]), [2.5, 1.7]),
    "gammaincc": (lambda v: sps.gammaincc(v[0], v[1]), lambda v: sc.gammaincc(v[0], v[1]), [1.5, 2.7]),
    "betainc": (lambda v: sps.betainc(v[0], v[1], v[2]), lambda v: sc.betainc(v[0], v[1], v[2]), [2.5, 1.7, 0.4]),
    "betaln": (lambda v: sps.betaln(v[0], v[1]), lambda v: sc.betaln(v[0], v[1]), [2.5, 0.7]),
    "xlogy": (lambda v: sps.xlogy(v[0], v[1]), lambda v: sc.xlogy(v[0], v[1]), [0.0, 1.7]),
    "log_ndtr": (lambda v: sps.log_ndtr(v[0]) * v[1], lambda v: sc.log_ndtr(v[0]) * v[1], [-3.0, 1.3]),
    "erfinv": (lambda v: sps.erfinv(v[0] * v[1]), lambda v: sc.erfinv(v[0] * v[1]), [0.6, 0.9]),
    "ndtri": (lambda v: sps.ndtri(v[0] * v[1]), lambda v: sc.ndtri(v[0] * v[1]), [0.6, 0.9]),
    "digamma": (lambda v: sps.digamma(v[0] + v[1]), lambda v: sc.digamma(v[0] + v[1]), [0.6, 0.9]),
    "i1e": (lambda v: sps.i1e(v[0] * v[1]), lambda v: sc.i1e(v[0] * v[1]), [0.6, -0.9]),
    "logsumexp": (lambda v: sps.logsumexp(v, b=np.array([1.0, 2.0, 0.5])),
                  lambda v: sc.logsumexp(v, b=np.array([1.0, 2.0, 0.5])), [0.1, -0.3, 2.0]),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_hessian_matches_scipy_and_forward_over_forward(name):
    ours, theirs, point = SECOND_ORDER[name]
    point = np.asarray(point)
    hessian = ad.hessian(ours)(point)
    np.testing.assert_allclose(hessian, ad.jacfwd(ad.jacfwd(ours))(point), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hessian, ad.jacrev(ad.jacrev(ours))(point), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hessian, numerical_hessian(theirs, point, 1e-3, richardson=True), rtol=1e-5, atol=1e-7)


def test_third_order_in_the_shape_parameter():
    """d^3 P / da^3 twice: three nested forward passes and reverse over forward over reverse."""
    f = lambda a: sps.gammainc(a, 1.7)
    third = ad.grad(ad.grad(ad.grad(f)))(2.5)
    forward = ad.jacfwd(ad.jacfwd(ad.jacfwd(f)))(2.5)
    np.testing.assert_allclose(third, forward, rtol=1e-10)
    h = 1e-2
    reference = (sc.gammainc(2.5 + 2 * h, 1.7) - 2 * sc.gammainc(2.5 + h, 1.7) + 2 * sc.gammainc(2.5 - h, 1.7)
                 - sc.gammainc(2.5 - 2 * h, 1.7)) / (2 * h ** 3)
    np.testing.assert_allclose(third, reference, rtol=1e-3)


def test_broadcasting_and_batched_shapes():
    a = rng.uniform(0.5, 3.0, (4, 1))
    x = rng.uniform(0.1, 4.0, (1, 5))
    np.testing.assert_allclose(sps.gammainc(a, x), sc.gammainc(a, x), rtol=1e-13)
    np.testing.assert_allclose(sps.betainc(a, 2.0, x / 5.0), sc.betainc(a, 2.0, x / 5.0), rtol=1e-13)
    np.testing.assert_allclose(sps.xlogy(2, x), sc.xlogy(2, x), rtol=1e-13)  # integers compute in float64
    grad_a = ad.grad(lambda a: anp.sum(sps.gammainc(a, x)))(a)
    assert grad_a.shape == (4, 1)
    expected = np.sum(derivative(lambda v: sc.gammainc(v, x), a), axis=1, keepdims=True)
    np.testing.assert_allclose(grad_a, expected, rtol=1e-7)
    assert sps.erfc(np.float32(1.0)).dtype == np.float32
    assert sps.gammaln(np.zeros((0, 3))).shape == (0, 3)


def test_vmap_equals_a_loop():
    a, b, x = rng.uniform(0.5, 4.0, (3, 4, 5))
    x = x / 5.0
    batched = ad.vmap(lambda a, b, x: sps.betainc(a, b, x) * sps.gammaln(a))(a, b, x)
    looped = np.stack([sps.betainc(a[i], b[i], x[i]) * sps.gammaln(a[i]) for i in range(4)])
    np.testing.assert_allclose(batched, looped, rtol=1e-13)
    grads = ad.vmap(ad.grad(lambda a, x: anp.sum(sps.gammainc(a, x) + sps.logsumexp(a * x))))(a, x * 5)
    loop = np.stack([ad.grad(lambda a, x: anp.sum(sps.gammainc(a, x) + sps.logsumexp(a * x)))(a[i], x[i] * 5)
                     for i in range(4)])
    np.testing.assert_allclose(grads, loop, rtol=1e-12)
    softmaxes = ad.vmap(lambda v: sps.softmax(v))(a)
    np.testing.assert_allclose(softmaxes, sc.softmax(a, axis=1), rtol=1e-13)


# --- reductions: logsumexp, softmax, log_softmax ------------------------------------------------------

X = rng.normal(size=(3, 4)) * 3


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_scipy(axis, keepdims):
    b = rng.normal(size=(3, 4))
    np.testing.assert_allclose(sps.logsumexp(X, axis=axis, keepdims=keepdims),
                               sc.logsumexp(X, axis=axis, keepdims=keepdims), rtol=1e-13)
    ours, ours_sign = sps.logsumexp(X, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    theirs, theirs_sign = sc.logsumexp(X, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    np.testing.assert_array_equal(ours_sign, theirs_sign)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(sps.logsumexp(X, axis=axis, b=b, keepdims=keepdims),
                                   sc.logsumexp(X, axis=axis, b=b, keepdims=keepdims), rtol=1e-12)


def test_logsumexp_gradients_match_scipy():
    b = rng.uniform(0.5, 2.0, size=(3, 4))
    f = lambda x, b: anp.sum(sps.logsumexp(x, axis=1, b=b) * np.array([1.0, -2.0, 0.5]))
    g = lambda x, b: np.sum(sc.logsumexp(x, axis=1, b=b) * np.array([1.0, -2.0, 0.5]))
    grad_x, grad_b = ad.grad(f, argnums=(0, 1))(X, b)
    for grad, index in ((grad_x, 0), (grad_b, 1)):
        expected = np.zeros_like(X)
        for position in np.ndindex(X.shape):
            step = np.zeros_like(X)
            step[position] = 1.0
            expected[position] = partial(g, [X, b], index, step)
        np.testing.assert_allclose(grad, expected, rtol=1e-8, atol=1e-10)


def test_stability_cases():
    np.testing.assert_array_equal(sps.softmax(np.array([1000.0, 0.0])), [1.0, 0.0])
    np.testing.assert_array_equal(sps.log_softmax(np.array([1000.0, 0.0])), [0.0, -1000.0])
    assert sps.logsumexp(np.array([1000.0, 1000.0])) == 1000.0 + np.log(2.0)
    entries = np.array([-np.inf, -np.inf, 0.0])
    assert sps.logsumexp(entries) == 0.0
    np.testing.assert_array_equal(ad.grad(sps.logsumexp)(entries), [0.0, 0.0, 1.0])
    everything_minus_inf = np.full(3, -np.inf)
    assert sps.logsumexp(everything_minus_inf) == -np.inf
    np.testing.assert_array_equal(ad.grad(sps.logsumexp)(everything_minus_inf), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ad.grad(lambda v: sps.logsumexp(v, b=np.ones(3)))(entries), [0.0, 0.0, 1.0])
    # log_ndtr far in the lower tail: value and derivative (the inverse Mills ratio, about -x)
    np.testing.assert_allclose(sps.log_ndtr(-40.0), sc.log_ndtr(-40.0), rtol=1e-14)
    slope = ad.grad(sps.log_ndtr)(-40.0)
    np.testing.assert_allclose(slope, derivative(sc.log_ndtr, -40.0), rtol=1e-9)
    assert 40.0 < slope < 40.03
    assert np.isfinite(ad.grad(sps.log_ndtr)(-1e4)) and ad.grad(sps.log_ndtr)(40.0) == 0.0
    np.testing.assert_allclose(sps.erfc(26.0), sc.erfc(26.0), rtol=1e-14)  # 1 - erf would give 0
    assert sps.erfc(26.0) > 0


def test_xlogy_conventions():
    # 0 where x == 0, derivative log(y) in x also there (JAX), and x / y in y
    assert sps.xlogy(0.0, 0.0) == 0.0 and sps.xlog1py(0.0, -1.0) == 0.0
    grad_x, grad_y = ad.grad(sps.xlogy, argnums=(0, 1))(0.0, 2.0)
    assert grad_x == np.log(2.0) and grad_y == 0.0
    # A zero tangent contributes 0 even where the partial is infinite (x = 0, y = 0 in x's partial).
    assert np.isnan(ad.grad(sps.xlogy, argnums=1)(0.0, 0.0))  # x / y = 0 / 0 with a nonzero cotangent
    assert ad.grad(lambda y: sps.xlogy(0.0, y) + y)(1.0) == 1.0
    masked = ad.grad(lambda x: anp.sum(anp.where(x > 0, sps.xlogy(1.0, x), 0.0)))(np.array([0.0, 2.0]))
    np.testing.assert_array_equal(masked, [0.0, 0.5])
    _, tangent = ad.jvp(lambda x, y: sps.xlogy(x, y), (1.0, 0.0), (1.0, 0.0))
    assert tangent == -np.inf  # log(0) * 1; the y direction (partial 1/0) is skipped, not inf * 0 = NaN


def test_errors_are_adarray_errors():
    with pytest.raises(ad.ArgumentError, match="polygamma"):
        sps.polygamma(1.5, 2.0)
    with pytest.raises(ad.ArgumentError, match="polygamma"):
        ad.grad(lambda n: sps.polygamma(n, 2.0))(1.0)
    with pytest.raises(ad.ArgumentError, match="multigammaln"):
        sps.multigammaln(3.0, 2.5)
    with pytest.raises(ad.ShapeError, match="gammainc"):
        sps.gammainc(np.ones(3), np.ones(4))
    with pytest.raises(ad.ShapeError, match="betainc_dab"):
        from adarray.primitives.special import betainc_dab
        betainc_dab(1.0, 1.0, 0.5, 0, 0)
