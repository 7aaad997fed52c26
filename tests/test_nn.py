"""adarray.nn: values against NumPy/SciPy formulas, gradients against central differences of those,
JAX's conventions at the kinks, stability at large |x|, one_hot, standardize, glu, softmax."""
import numpy as np
import pytest
import scipy.special as sc

import adarray as ad
import adarray.numpy as anp
from adarray import nn

rng = np.random.default_rng(5)
X = np.concatenate([rng.normal(0, 3, 12), [-7.5, -0.3, 0.4, 5.5, 6.5]])

# name -> (ours, a reference written with NumPy/SciPy)
REFERENCES = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0.0)),
    "relu6": (nn.relu6, lambda x: np.minimum(np.maximum(x, 0.0), 6.0)),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "leaky_relu_0.2": (lambda x: nn.leaky_relu(x, 0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1.0, 1.0)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "elu_2": (lambda x: nn.elu(x, 2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x))),
    "celu": (lambda x: nn.celu(x, 1.5), lambda x: np.maximum(x, 0) + 1.5 * np.expm1(np.minimum(x, 0) / 1.5)),
    "selu": (nn.selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
    "silu": (nn.silu, lambda x: x * sc.expit(x)),
    "swish": (nn.swish, lambda x: x * sc.expit(x)),
    "sigmoid": (nn.sigmoid, sc.expit),
    "log_sigmoid": (nn.log_sigmoid, sc.log_expit),
    "softplus": (nn.softplus, lambda x: np.logaddexp(x, 0.0)),
    "soft_sign": (nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    "gelu_exact": (lambda x: nn.gelu(x, approximate=False), lambda x: x * sc.ndtr(x)),
    "gelu_tanh": (nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_values_and_gradients(name):
    ours, reference = REFERENCES[name]
    np.testing.assert_allclose(ours(X), reference(X), rtol=1e-12, atol=1e-15)
    h = 1e-5
    grad = ad.grad(lambda x: anp.sum(ours(x)))(X)
    np.testing.assert_allclose(grad, (reference(X + h) - reference(X - h)) / (2 * h), rtol=1e-7, atol=1e-9)
    second = ad.vmap(ad.grad(ad.grad(ours)))(X)
    np.testing.assert_allclose(second, ad.vmap(ad.jacfwd(ad.jacfwd(ours)))(X), rtol=1e-10, atol=1e-14)


def test_derivatives_at_the_kinks_follow_jax():
    grad = lambda f, x: ad.vmap(ad.grad(f))(np.asarray(x, np.float64))
    np.testing.assert_array_equal(grad(nn.relu, [-1.0, 0.0, 1.0]), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(grad(nn.relu6, [0.0, 3.0, 6.0, 7.0]), [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(grad(nn.hard_tanh, [-2.0, -1.0, 0.0, 1.0, 2.0]), [0.0, 1.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(grad(nn.leaky_relu, [0.0, -1.0]), [1.0, 0.01])
    np.testing.assert_array_equal(grad(nn.elu, [0.0]), [1.0])
    np.testing.assert_array_equal(grad(nn.celu, [0.0]), [1.0])


def test_stability_at_large_arguments():
    big = np.array([-1000.0, -40.0, -10.0, 10.0, 40.0, 1000.0])
    for name in ("silu", "sigmoid", "log_sigmoid", "softplus", "gelu_exact", "gelu_tanh", "elu", "selu", "celu"):
        ours, _ = REFERENCES[name]
        assert np.all(np.isfinite(ours(big))), name
        assert np.all(np.isfinite(ad.vmap(ad.grad(ours))(big))), name
    # gelu at x = -10: x Phi(x) = -7.6e-23, which 1 + erf(x / sqrt 2) (or 1 + tanh) would round to 0
    np.testing.assert_allclose(nn.gelu(-10.0, approximate=False), -10.0 * sc.ndtr(-10.0), rtol=1e-13)
    tanh_form = -10.0 * sc.expit(2 * np.sqrt(2 / np.pi) * (-10.0 + 0.044715 * -1000.0))
    np.testing.assert_allclose(nn.gelu(-10.0), tanh_form, rtol=1e-13)
    assert nn.gelu(-10.0) < 0 and nn.log_sigmoid(-1000.0) == -1000.0


def test_softmax_and_log_softmax():
    x = rng.normal(size=(3, 4)) * 5
    for axis in (-1, 0, (0, 1)):
        np.testing.assert_allclose(nn.softmax(x, axis=axis), sc.softmax(x, axis=axis), rtol=1e-13)
        np.testing.assert_allclose(nn.log_softmax(x, axis=axis), sc.log_softmax(x, axis=axis), rtol=1e-13)
    np.testing.assert_array_equal(nn.softmax(np.array([1000.0, 0.0])), [1.0, 0.0])
    np.testing.assert_array_equal(nn.log_softmax(np.array([1000.0, 0.0])), [0.0, -1000.0])
    weights = rng.normal(size=(3, 4))
    grad = ad.grad(lambda v: anp.sum(nn.log_softmax(v) * weights))(x)
    expected = weights - sc.softmax(x, axis=-1) * weights.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(nn.logsumexp(x, axis=1), sc.logsumexp(x, axis=1), rtol=1e-13)


def test_one_hot():
    labels = np.array([[0, 2], [5, -1]])
    out = nn.one_hot(labels, 3)
    assert out.shape == (2, 2, 3) and out.dtype == np.float64
    np.testing.assert_array_equal(out[0, 1], [0, 0, 1])
    np.testing.assert_array_equal(out[1], np.zeros((2, 3)))  # out of range: all zeros
    assert nn.one_hot(labels, 4, dtype=np.int32, axis=0).shape == (4, 2, 2)
    assert nn.one_hot(labels, 4, dtype=np.int32, axis=0).dtype == np.int32
    traced = ad.jit(lambda v: nn.one_hot(v, 3))(np.array([1, 2]))
    np.testing.assert_array_equal(traced, [[0, 1, 0], [0, 0, 1]])
    # A float input (a class index stored as float) is not differentiated.
    assert ad.grad(lambda v: anp.sum(nn.one_hot(v, 3) * v[:, None]))(np.array([1.0, 2.0])).tolist() == [1.0, 1.0]
    with pytest.raises(ad.ArgumentError, match="num_classes"):
        nn.one_hot(labels, 2.5)


def test_standardize_and_glu():
    x = rng.normal(size=(3, 4))
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.standardize(x), expected, rtol=1e-12)
    np.testing.assert_allclose(nn.standardize(x, axis=0, mean=0.0, variance=1.0, epsilon=0.0), x, rtol=1e-15)
    h = 1e-6
    direction = rng.normal(size=x.shape)
    reference = lambda v: np.sum(np.sin((v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + 1e-5)))
    _, tangent = ad.jvp(lambda v: anp.sum(anp.sin(nn.standardize(v))), (x,), (direction,))
    np.testing.assert_allclose(tangent, (reference(x + h * direction) - reference(x - h * direction)) / (2 * h),
                               rtol=1e-7)
    np.testing.assert_allclose(nn.glu(x), x[:, :2] * sc.expit(x[:, 2:]), rtol=1e-14)
    np.testing.assert_allclose(nn.glu(x[:2], axis=0), x[:1] * sc.expit(x[1:2]), rtol=1e-14)
    with pytest.raises(ad.ArgumentError, match="glu"):
        nn.glu(np.ones((2, 3)))


def test_vmap_equals_a_loop():
    x = rng.normal(size=(4, 5))
    f = lambda v: nn.softmax(nn.gelu(v) + nn.relu(v))
    np.testing.assert_allclose(ad.vmap(f)(x), np.stack([f(row) for row in x]), rtol=1e-14)
    g = ad.grad(lambda v: anp.sum(nn.log_softmax(nn.silu(v)) * np.arange(5.0)))
    np.testing.assert_allclose(ad.vmap(g)(x), np.stack([g(row) for row in x]), rtol=1e-13)
