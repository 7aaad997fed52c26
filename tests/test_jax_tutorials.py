"""The patterns of JAX's autodiff tutorials, in our own words, run through adarray.

Each pattern of the Autodiff Cookbook, the forward- and reverse-mode page, the higher-order
derivatives page, the complex-differentiation page and the MLP tutorial is written once as a
function of a library namespace `L` (adarray or JAX, with the same names) and run with both: the
results must agree with JAX's (float64), and, where a closed form exists, with it (so the test
means something without JAX too). Custom derivative rules: tests/test_jax_tutorials_custom.py.
Where adarray differs from JAX on purpose, the test says so and the README documents it.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.scipy.special import logsumexp as ad_logsumexp
from adarray.testing import check_grads

RNG = np.random.default_rng(31)


def adarray_namespace():
    return SimpleNamespace(name="adarray", np=anp, grad=ad.grad, value_and_grad=ad.value_and_grad, jvp=ad.jvp,
                           vjp=ad.vjp, vmap=ad.vmap, jit=ad.jit, jacfwd=ad.jacfwd, jacrev=ad.jacrev,
                           hessian=ad.hessian, stop_gradient=ad.stop_gradient, logsumexp=ad_logsumexp,
                           custom_jvp=ad.custom_jvp, custom_vjp=ad.custom_vjp, while_loop=ad.while_loop)


@pytest.fixture(scope="module")
def jax_namespace():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield SimpleNamespace(name="jax", np=jnp, grad=jax.grad, value_and_grad=jax.value_and_grad, jvp=jax.jvp,
                          vjp=jax.vjp, vmap=jax.vmap, jit=jax.jit, jacfwd=jax.jacfwd, jacrev=jax.jacrev,
                          hessian=jax.hessian, stop_gradient=jax.lax.stop_gradient, logsumexp=logsumexp,
                          custom_jvp=jax.custom_jvp, custom_vjp=jax.custom_vjp, while_loop=jax.lax.while_loop)
    jax.config.update("jax_enable_x64", previous)


def assert_trees_close(ours, theirs, rtol=1e-10, atol=1e-12):
    import adarray.tree_util as tu

    ours_leaves, ours_tree = tu.tree_flatten(ours)
    theirs_leaves, theirs_tree = tu.tree_flatten(theirs)
    assert len(ours_leaves) == len(theirs_leaves), (ours_tree, theirs_tree)
    for a, b in zip(ours_leaves, theirs_leaves):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# --- a small logistic model (the Cookbook's running example, with our own data) --------------------

FEATURES = np.array([[0.3, -1.1, 0.8, 0.2],
                     [1.4, 0.5, -0.6, -0.9],
                     [-0.7, 0.9, 1.2, 0.4],
                     [0.1, -0.3, -1.5, 1.1],
                     [0.9, 1.6, 0.2, -0.5]])
LABELS = np.array([False, True, True, False, True])
WEIGHTS = np.array([0.25, -0.4, 0.6, 0.1])
BIAS = np.float64(-0.2)


def logistic(L, z):
    return 0.5 * (L.np.tanh(z / 2) + 1)            # the sigmoid through tanh, as the Cookbook writes it


def probabilities(L, w, b, x=FEATURES):
    return logistic(L, L.np.dot(x, w) + b)


def negative_log_likelihood(L, w, b):
    p = probabilities(L, w, b)
    label_probability = p * LABELS + (1 - p) * (1 - LABELS)
    return -L.np.sum(L.np.log(label_probability))


def _exact_logistic_gradients():
    p = 1 / (1 + np.exp(-(FEATURES @ WEIGHTS + BIAS)))
    residual = p - LABELS
    return FEATURES.T @ residual, residual.sum()


# --- the patterns ---------------------------------------------------------------------------------

def tanh_derivatives(L):
    x = 0.7
    first = L.grad(L.np.tanh)
    return first(x), L.grad(first)(x), L.grad(L.grad(first))(x)


def argnums_choices(L):
    loss = lambda w, b: negative_log_likelihood(L, w, b)  # noqa: E731
    return (L.grad(loss)(WEIGHTS, BIAS), L.grad(loss, argnums=0)(WEIGHTS, BIAS), L.grad(loss, 1)(WEIGHTS, BIAS),
            L.grad(loss, (0, 1))(WEIGHTS, BIAS), L.value_and_grad(loss, (0, 1))(WEIGHTS, BIAS))


def dict_of_parameters(L):
    def loss(params):
        return negative_log_likelihood(L, params["w"], params["b"])

    return L.grad(loss)({"w": WEIGHTS, "b": BIAS})


X_TANH = RNG.normal(size=(4, 5))
V_TANH = RNG.normal(size=(4, 5))


def _squashed_energy(L):
    return lambda x: L.np.sum(L.np.tanh(x) ** 2)


def hessian_vector_products(L):
    f = _squashed_energy(L)
    reverse_reverse = L.grad(lambda x: L.np.vdot(L.grad(f)(x), V_TANH))(X_TANH)
    forward_reverse = L.jvp(L.grad(f), (X_TANH,), (V_TANH,))[1]
    reverse_forward = L.grad(lambda primals: L.jvp(f, primals, (V_TANH,))[1])((X_TANH,))[0]
    dense = L.np.tensordot(L.jacfwd(L.jacrev(f))(X_TANH), V_TANH, 2)
    return reverse_reverse, forward_reverse, reverse_forward, dense


def jacobians_of_the_model(L):
    f = lambda w: probabilities(L, w, BIAS)  # noqa: E731
    by_dict = L.jacrev(lambda params, x: probabilities(L, params["w"], params["b"], x))({"w": WEIGHTS, "b": BIAS},
                                                                                        FEATURES)
    return L.jacfwd(f)(WEIGHTS), L.jacrev(f)(WEIGHTS), by_dict, L.jacfwd(L.jacrev(f))(WEIGHTS)


DIRECTION = RNG.normal(size=4)
COVECTOR = RNG.normal(size=5)


def push_forward_and_pull_back(L):
    f = lambda w: probabilities(L, w, BIAS)  # noqa: E731
    y, tangent = L.jvp(f, (WEIGHTS,), (DIRECTION,))
    y2, pullback = L.vjp(f, WEIGHTS)
    return y, tangent, y2, pullback(COVECTOR)


def vector_valued_gradient(L):
    y, pullback = L.vjp(lambda x: 2.5 * x ** 3, np.full((3, 2), 0.5))
    return pullback(L.np.ones(y.shape))[0]


COVECTORS = RNG.normal(size=(6, 5))
VECTORS = RNG.normal(size=(7, 4))


def batched_products(L):
    f = lambda w: probabilities(L, w, BIAS)  # noqa: E731
    _, pullback = L.vjp(f, WEIGHTS)
    looped_rows = L.np.stack([pullback(row)[0] for row in COVECTORS])
    (mapped_rows,) = L.vmap(pullback)(COVECTORS)
    looped_columns = L.np.stack([L.jvp(f, (WEIGHTS,), (v,))[1] for v in VECTORS])
    mapped_columns = L.vmap(lambda v: L.jvp(f, (WEIGHTS,), (v,))[1])(VECTORS)
    return looped_rows, mapped_rows, looped_columns, mapped_columns


def jacobians_from_bases(L):
    f = lambda w: probabilities(L, w, BIAS)  # noqa: E731

    def reverse_jacobian(x):
        y, pullback = L.vjp(f, x)
        (rows,) = L.vmap(pullback, in_axes=0)(L.np.eye(len(y)))
        return rows

    def forward_jacobian(x):
        columns = L.vmap(lambda s: L.jvp(f, (x,), (s,))[1], in_axes=1)(L.np.eye(len(x)))
        return L.np.transpose(columns)

    return reverse_jacobian(WEIGHTS), forward_jacobian(WEIGHTS), L.jacrev(f)(WEIGHTS)


def python_control_flow_then_jit_the_pullback(L):
    def f(x):
        try:
            if x < 2.5:
                return 3 * x ** 2
            raise ValueError
        except ValueError:
            return math.e * x

    _, pullback_high = L.vjp(f, 3.0)
    _, pullback_low = L.vjp(f, 1.5)
    return L.jit(pullback_high)(1.0), L.jit(pullback_low)(2.0)


def polynomial_derivatives(L):
    f = lambda x: 2 * x ** 4 - x ** 3 + 5 * x - 7  # noqa: E731
    d1 = L.grad(f)
    d2 = L.grad(d1)
    d3 = L.grad(d2)
    d4 = L.grad(d3)
    return d1(1.5), d2(1.5), d3(1.5), d4(1.5)


def hessian_of_a_dot_product(L):
    return L.jacfwd(L.grad(lambda x: L.np.dot(x, x)))(np.array([0.5, -2.0, 4.0, 1.0]))


DATA_X = RNG.normal(size=(8, 3))
DATA_Y = RNG.normal(size=8)


def meta_learning(L):
    step = 0.05

    def loss(params, x, y):
        return L.np.mean((L.np.dot(x, params) - y) ** 2)

    def loss_after_one_step(params, x, y):
        return loss(params - step * L.grad(loss)(params, x, y), x, y)

    return L.grad(loss_after_one_step)(np.array([0.3, -0.2, 0.8]), DATA_X, DATA_Y)


THETA = np.array([0.2, -0.3, 0.5])
STATE_BEFORE = np.array([0.5, 1.5, -1.0])
STATE_AFTER = np.array([1.0, -0.5, 2.0])
REWARD = np.float64(0.7)


def _td_losses(L):
    value = lambda theta, state: L.np.dot(theta, state)  # noqa: E731

    def naive(theta, s_before, reward, s_after):
        target = reward + value(theta, s_after)
        return -0.5 * (target - value(theta, s_before)) ** 2

    def semi_gradient(theta, s_before, reward, s_after):
        target = reward + value(theta, s_after)
        return -0.5 * (L.stop_gradient(target) - value(theta, s_before)) ** 2

    return value, naive, semi_gradient


def temporal_difference(L):
    value, naive, semi_gradient = _td_losses(L)
    by_hand = (REWARD + value(THETA, STATE_AFTER) - value(THETA, STATE_BEFORE)) * L.grad(value)(THETA, STATE_BEFORE)
    args = (THETA, STATE_BEFORE, REWARD, STATE_AFTER)
    return L.grad(naive)(*args), L.grad(semi_gradient)(*args), by_hand


def per_example_gradients(L):
    _, _, semi_gradient = _td_losses(L)
    befores = np.stack([STATE_BEFORE, 2 * STATE_BEFORE, -STATE_BEFORE])
    rewards = np.array([0.7, -0.1, 1.3])
    afters = np.stack([STATE_AFTER, STATE_AFTER, 0.5 * STATE_AFTER])
    per_example = L.jit(L.vmap(L.grad(semi_gradient), in_axes=(None, 0, 0, 0)))(THETA, befores, rewards, afters)
    looped = L.np.stack([L.grad(semi_gradient)(THETA, b, r, a) for b, r, a in zip(befores, rewards, afters)])
    return per_example, looped


def straight_through_rounding(L):
    def through(x):
        zero = x - L.stop_gradient(x)                # exactly zero, with derivative one
        return zero + L.stop_gradient(L.np.round(x))

    return L.np.round(2.7), through(2.7), L.grad(L.np.round)(2.7), L.grad(through)(2.7)


# --- complex numbers ----------------------------------------------------------------------------

COEFFICIENTS = (0.8, -0.3, 0.45, 1.2)
POINT = 0.6 + 0.25j
SEED = 0.35 - 0.9j


def _linear_complex(L):
    a, b, c, d = COEFFICIENTS

    def u(x, y):
        return a * x + b * y

    def v(x, y):
        return c * x + d * y

    def f(z):
        x, y = L.np.real(z), L.np.imag(z)
        return u(x, y) + v(x, y) * 1j

    return u, v, f


def complex_jvp_and_vjp(L):
    u, v, f = _linear_complex(L)
    x, y = POINT.real, POINT.imag
    s, t = SEED.real, SEED.imag
    _, tangent = L.jvp(f, (POINT,), (SEED,))
    tangent_expected = (L.grad(u, 0)(x, y) * s + L.grad(u, 1)(x, y) * t
                        + 1j * (L.grad(v, 0)(x, y) * s + L.grad(v, 1)(x, y) * t))
    _, pullback = L.vjp(f, POINT)
    (cotangent,) = pullback(np.complex128(SEED))
    cotangent_expected = (L.grad(u, 0)(x, y) * s - L.grad(v, 0)(x, y) * t
                          - 1j * (L.grad(u, 1)(x, y) * s - L.grad(v, 1)(x, y) * t))
    return tangent, tangent_expected, cotangent, cotangent_expected


def complex_gradients(L):
    squared_modulus = lambda z: L.np.real(z) ** 2 + L.np.imag(z) ** 2  # noqa: E731
    z = 1.5 - 2.0j
    return (L.grad(squared_modulus)(z), L.grad(L.np.sin, holomorphic=True)(z),
            L.grad(L.np.conjugate, holomorphic=True)(z), L.grad(lambda w: L.np.abs(w) ** 3)(z))


HERMITIAN = np.array([[6.0, 1.0 - 2.0j, 0.5j], [1.0 + 2.0j, 5.0, 2.0 + 1.0j], [-0.5j, 2.0 - 1.0j, 9.0]])


def complex_cholesky(L):
    def f(a):
        factor = L.np.linalg.cholesky(a)
        return L.np.sum((factor - L.np.sin(factor)) ** 2)

    return L.grad(f, holomorphic=True)(HERMITIAN)


# --- the MLP tutorial (a small network on our own random data) -------------------------------------

LAYER_SIZES = [6, 5, 3]
IMAGES = RNG.normal(size=(10, 6))
CLASSES = RNG.integers(0, 3, size=10)


def initial_parameters(sizes=LAYER_SIZES, scale=0.1, rng=None):
    rng = rng or np.random.default_rng(7)
    return [(scale * rng.normal(size=(n, m)), scale * rng.normal(size=n)) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp_training(L):
    def relu(x):
        return L.np.maximum(0, x)

    def predict(params, image):
        activations = image
        for w, b in params[:-1]:
            activations = relu(L.np.dot(w, activations) + b)
        final_w, final_b = params[-1]
        logits = L.np.dot(final_w, activations) + final_b
        return logits - L.logsumexp(logits)

    batched_predict = L.vmap(predict, in_axes=(None, 0))

    def one_hot(labels, k):
        return L.np.array(labels[:, None] == L.np.arange(k), dtype=np.float64)

    def loss(params, images, targets):
        return -L.np.mean(batched_predict(params, images) * targets)

    def accuracy(params, images, labels):
        return L.np.mean(L.np.argmax(batched_predict(params, images), axis=1) == labels)

    @L.jit
    def update(params, images, targets):
        grads = L.grad(loss)(params, images, targets)
        return [(w - 0.5 * dw, b - 0.5 * db) for (w, b), (dw, db) in zip(params, grads)]

    params = initial_parameters()
    targets = one_hot(CLASSES, 3)
    losses = [loss(params, IMAGES, targets)]
    for _ in range(5):
        params = update(params, IMAGES, targets)
        losses.append(loss(params, IMAGES, targets))
    return (predict(params, IMAGES[0]), batched_predict(params, IMAGES), L.np.stack(losses),
            round(float(accuracy(params, IMAGES, CLASSES)), 6), params)   # JAX's mean of booleans is float32


PATTERNS = {f.__name__: f for f in (
    tanh_derivatives, argnums_choices, dict_of_parameters, hessian_vector_products, jacobians_of_the_model,
    push_forward_and_pull_back, vector_valued_gradient, batched_products, jacobians_from_bases,
    python_control_flow_then_jit_the_pullback, polynomial_derivatives, hessian_of_a_dot_product, meta_learning,
    temporal_difference, per_example_gradients, straight_through_rounding, complex_jvp_and_vjp, complex_gradients,
    complex_cholesky, mlp_training,
)}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_pattern_agrees_with_jax(name, jax_namespace):
    ours = PATTERNS[name](adarray_namespace())
    theirs = PATTERNS[name](jax_namespace)
    assert_trees_close(ours, theirs, rtol=1e-9, atol=1e-11)


# --- the same patterns against closed forms (no JAX needed) -----------------------------------------

L = adarray_namespace()


def test_tanh_derivatives_have_their_closed_forms():
    t = np.tanh(0.7)
    sech2 = 1 - t ** 2
    np.testing.assert_allclose(tanh_derivatives(L), [sech2, -2 * t * sech2, sech2 * (4 * t ** 2 - 2 * sech2)],
                               rtol=1e-13)


def test_logistic_gradients_every_way_of_asking():
    w_grad, b_grad = _exact_logistic_gradients()
    default, first, second, both, (value, (w_again, b_again)) = argnums_choices(L)
    for w in (default, first, both[0], w_again):
        np.testing.assert_allclose(w, w_grad, rtol=1e-12)
    for b in (second, both[1], b_again):
        np.testing.assert_allclose(b, b_grad, rtol=1e-12)
    np.testing.assert_allclose(value, negative_log_likelihood(L, WEIGHTS, BIAS), rtol=1e-14)
    grads = dict_of_parameters(L)
    assert sorted(grads) == ["b", "w"]
    np.testing.assert_allclose(grads["w"], w_grad, rtol=1e-12)


def test_finite_differences_and_check_grads_agree_with_the_gradient():
    loss = lambda w, b: negative_log_likelihood(L, w, b)  # noqa: E731
    step = 1e-5
    numeric_b = (loss(WEIGHTS, BIAS + step / 2) - loss(WEIGHTS, BIAS - step / 2)) / step
    np.testing.assert_allclose(numeric_b, ad.grad(loss, 1)(WEIGHTS, BIAS), rtol=1e-7)
    unit = DIRECTION / np.sqrt(np.vdot(DIRECTION, DIRECTION))
    numeric_w = (loss(WEIGHTS + step / 2 * unit, BIAS) - loss(WEIGHTS - step / 2 * unit, BIAS)) / step
    np.testing.assert_allclose(numeric_w, np.vdot(ad.grad(loss)(WEIGHTS, BIAS), unit), rtol=1e-7)
    check_grads(loss, (WEIGHTS, BIAS), order=2)


def test_hessian_vector_products_agree_with_the_dense_hessian():
    reverse_reverse, forward_reverse, reverse_forward, dense = hessian_vector_products(L)
    t = np.tanh(X_TANH)
    exact = (2 - 8 * t ** 2 + 6 * t ** 4) * V_TANH          # the Hessian of sum(tanh^2) is diagonal
    for hvp in (reverse_reverse, forward_reverse, reverse_forward, dense):
        np.testing.assert_allclose(hvp, exact, rtol=1e-11, atol=1e-13)


def test_jacobians_bases_and_batched_products():
    fwd, rev, by_dict, hessian = jacobians_of_the_model(L)
    p = 1 / (1 + np.exp(-(FEATURES @ WEIGHTS + BIAS)))
    exact = (p * (1 - p))[:, None] * FEATURES
    for jacobian in (fwd, rev, by_dict["w"], *jacobians_from_bases(L)):
        np.testing.assert_allclose(jacobian, exact, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(by_dict["b"], p * (1 - p), rtol=1e-12)
    exact_hessian = (p * (1 - p) * (1 - 2 * p))[:, None, None] * FEATURES[:, :, None] * FEATURES[:, None, :]
    np.testing.assert_allclose(hessian, exact_hessian, rtol=1e-11, atol=1e-14)
    looped_rows, mapped_rows, looped_columns, mapped_columns = batched_products(L)
    np.testing.assert_allclose(mapped_rows, COVECTORS @ exact, rtol=1e-12)
    np.testing.assert_allclose(looped_rows, mapped_rows, rtol=1e-13)
    np.testing.assert_allclose(mapped_columns, VECTORS @ exact.T, rtol=1e-12)
    np.testing.assert_allclose(looped_columns, mapped_columns, rtol=1e-13)
    y, tangent, y2, (pulled,) = push_forward_and_pull_back(L)
    np.testing.assert_allclose(tangent, exact @ DIRECTION, rtol=1e-12)
    np.testing.assert_allclose(pulled, COVECTOR @ exact, rtol=1e-12)
    np.testing.assert_allclose(vector_valued_gradient(L), np.full((3, 2), 7.5 * 0.25))


def test_python_control_flow_and_a_jitted_pullback():
    (high,), (low,) = python_control_flow_then_jit_the_pullback(L)
    assert high == pytest.approx(math.e) and low == pytest.approx(2.0 * 6 * 1.5)


def test_higher_order_patterns():
    x = 1.5
    np.testing.assert_allclose(polynomial_derivatives(L), [8 * x ** 3 - 3 * x ** 2 + 5, 24 * x ** 2 - 6 * x,
                                                           48 * x - 6, 48], rtol=1e-13)
    np.testing.assert_allclose(hessian_of_a_dot_product(L), 2 * np.eye(4))
    naive, semi, by_hand = temporal_difference(L)
    np.testing.assert_allclose(semi, by_hand, rtol=1e-14)
    error = REWARD + THETA @ STATE_AFTER - THETA @ STATE_BEFORE
    np.testing.assert_allclose(naive, -error * (STATE_AFTER - STATE_BEFORE), rtol=1e-14)
    per_example, looped = per_example_gradients(L)
    np.testing.assert_allclose(per_example, looped, rtol=1e-14)
    assert straight_through_rounding(L) == (3.0, 3.0, 0.0, 1.0)


def test_meta_learning_gradient_matches_finite_differences():
    params = np.array([0.3, -0.2, 0.8])

    def loss(p):
        inner = 2 * DATA_X.T @ (DATA_X @ p - DATA_Y) / len(DATA_Y)
        q = p - 0.05 * inner
        return np.mean((DATA_X @ q - DATA_Y) ** 2)

    numeric = [(loss(params + e) - loss(params - e)) / 2e-6 for e in 1e-6 * np.eye(3)]
    np.testing.assert_allclose(meta_learning(L), numeric, rtol=1e-7)


def test_complex_patterns():
    tangent, tangent_expected, cotangent, cotangent_expected = complex_jvp_and_vjp(L)
    np.testing.assert_allclose(tangent, tangent_expected, rtol=1e-14)
    np.testing.assert_allclose(cotangent, cotangent_expected, rtol=1e-14)
    z = 1.5 - 2.0j
    squared, sine, conjugate, cubed = complex_gradients(L)
    np.testing.assert_allclose(squared, np.conj(2 * z), rtol=1e-14)      # JAX's convention: conj of df/dz*
    np.testing.assert_allclose(sine, np.cos(z), rtol=1e-14)
    np.testing.assert_allclose(conjugate, 1.0, rtol=1e-14)              # the real part's derivative only
    np.testing.assert_allclose(cubed, 3 * abs(z) * np.conj(z), rtol=1e-13)


def test_mlp_training_lowers_the_loss():
    first, batched, losses, accuracy, params = mlp_training(L)
    np.testing.assert_allclose(batched[0], first, rtol=1e-14)
    np.testing.assert_allclose(np.exp(batched).sum(axis=1), 1.0, rtol=1e-13)   # log-probabilities
    assert np.all(np.diff(losses) < 0)
    assert 0.0 <= accuracy <= 1.0
    assert [w.shape for w, _ in params] == [(5, 6), (3, 5)]


def test_a_single_image_network_on_a_batch_is_a_shape_error():
    """JAX raises TypeError for the mismatched dot (the MLP tutorial catches that); adarray raises
    ad.ShapeError, a ValueError as NumPy's own error is (README, Errors)."""
    params = initial_parameters()
    w, b = params[0]
    with pytest.raises(ad.ShapeError):
        ad.jit(lambda images: anp.dot(w, images) + b)(IMAGES)
    with pytest.raises(ValueError):
        anp.dot(w, IMAGES)
