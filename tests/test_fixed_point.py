"""ad.fixed_point: values, implicit derivatives of first and second order against closed forms and
finite differences, forward mode, vmap, jit, closures, pytrees, errors, and the promise that reverse
mode keeps nothing of the forward iterations (program size and peak memory independent of them)."""
import tracemalloc

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import numerical_derivative


def _cosine(a, x):
    return a * anp.cos(x)


def _solve(a, x0=0.0, tol=1e-13):
    return ad.fixed_point(_cosine, a, x0, tol=tol)


def _closed_form(a):
    """x = a cos x: x' = cos x / D and x'' = -(sin x x' D + cos x (sin x + a cos x x')) / D^2, D = 1 + a sin x."""
    x = 0.0
    for _ in range(200):
        x = a * np.cos(x)
    d = 1 + a * np.sin(x)
    first = np.cos(x) / d
    second = -(np.sin(x) * first * d + np.cos(x) * (np.sin(x) + a * np.cos(x) * first)) / d ** 2
    return x, first, second


@pytest.mark.parametrize("a", [0.3, 0.7, -0.6])
def test_cosine_value_and_derivatives_match_the_closed_form(a):
    x, first, second = _closed_form(a)
    np.testing.assert_allclose(_solve(a), x, rtol=1e-12)
    np.testing.assert_allclose(ad.grad(_solve)(a), first, rtol=1e-10)
    np.testing.assert_allclose(ad.grad(ad.grad(_solve))(a), second, rtol=1e-9)
    np.testing.assert_allclose(ad.jacfwd(ad.jacfwd(_solve))(a), second, rtol=1e-9)
    np.testing.assert_allclose(ad.jacfwd(ad.jacrev(_solve))(a), second, rtol=1e-9)
    np.testing.assert_allclose(ad.jacrev(ad.jacfwd(_solve))(a), second, rtol=1e-9)
    _, tangent = ad.jvp(_solve, (a,), (1.0,))
    np.testing.assert_allclose(tangent, first, rtol=1e-10)
    np.testing.assert_allclose(ad.grad(_solve)(a), numerical_derivative(_solve, a), rtol=1e-7)


def test_newton_sqrt_derivatives_of_three_orders():
    def sqrt(a):
        return ad.fixed_point(lambda a, x: 0.5 * (x + a / x), a, anp.ones_like(a), tol=1e-14)

    a = np.array([2.0, 9.0, 0.25])
    np.testing.assert_allclose(sqrt(a), np.sqrt(a), rtol=1e-14)
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(sqrt(v)))(a), 0.5 / np.sqrt(a), rtol=1e-12)
    np.testing.assert_allclose(ad.hessian(lambda v: anp.sum(sqrt(v)))(a), np.diag(-0.25 * a ** -1.5), rtol=1e-10,
                               atol=1e-14)
    third = ad.grad(ad.grad(ad.grad(lambda s: sqrt(s))))(2.0)
    np.testing.assert_allclose(third, 0.375 * 2.0 ** -2.5, rtol=1e-9)


def _network(params, x):
    """x = tanh(W x + b) with a small W: a contraction of a vector state."""
    return anp.tanh(params["w"] @ x + params["b"])


def _network_loss(params, target):
    x = ad.fixed_point(_network, params, anp.zeros(3), tol=1e-13)
    return anp.sum((x - target) ** 2)


def test_vector_state_with_dict_params_against_finite_differences():
    rng = np.random.default_rng(0)
    params = {"w": 0.3 * rng.standard_normal((3, 3)), "b": rng.standard_normal(3)}
    target = rng.standard_normal(3)
    grads = ad.grad(_network_loss)(params, target)
    for key in params:
        numeric = np.zeros_like(params[key])
        for index in np.ndindex(params[key].shape):
            def moved(step, key=key, index=index):
                shifted = {k: v.copy() for k, v in params.items()}
                shifted[key][index] += step
                return _network_loss(shifted, target)
            numeric[index] = (moved(1e-6) - moved(-1e-6)) / 2e-6
        np.testing.assert_allclose(grads[key], numeric, rtol=1e-6, atol=1e-9)
    # forward mode (Jacobian columns) agrees with reverse mode
    jac_b = ad.jacfwd(lambda b: ad.fixed_point(_network, {"w": params["w"], "b": b}, anp.zeros(3), tol=1e-13))(
        params["b"])
    jac_b_rev = ad.jacrev(lambda b: ad.fixed_point(_network, {"w": params["w"], "b": b}, anp.zeros(3), tol=1e-13))(
        params["b"])
    np.testing.assert_allclose(jac_b, jac_b_rev, rtol=1e-10, atol=1e-12)
    # and the implicit formula (I - A)^-1 diag(1 - x^2) with A = diag(1 - x^2) W
    x = ad.fixed_point(_network, params, np.zeros(3), tol=1e-14)
    scale = np.diag(1 - x ** 2)
    np.testing.assert_allclose(jac_b, np.linalg.solve(np.eye(3) - scale @ params["w"], scale), rtol=1e-10)


def test_the_initial_guess_has_zero_derivative_and_is_not_written():
    x0 = np.array([0.1, -0.2])
    before = x0.copy()
    grad_a, grad_x0 = ad.grad(lambda a, x0: anp.sum(ad.fixed_point(_cosine, a, x0, tol=1e-13)), argnums=(0, 1))(
        np.array([0.4, 0.5]), x0)
    assert np.all(grad_x0 == 0.0)
    np.testing.assert_allclose(grad_a, [_closed_form(0.4)[1], _closed_form(0.5)[1]], rtol=1e-10)
    assert np.array_equal(x0, before)


def test_vmap_and_jit():
    a = np.array([0.2, 0.5, 0.8])
    expected = np.array([_closed_form(v)[1] for v in a])
    np.testing.assert_allclose(ad.vmap(ad.grad(_solve))(a), expected, rtol=1e-10)
    np.testing.assert_allclose(ad.jit(ad.grad(_solve))(0.5), _closed_form(0.5)[1], rtol=1e-10)
    np.testing.assert_allclose(ad.vmap(_solve, in_axes=(None, 0))(0.5, np.array([0.0, 1.0, -2.0])),
                               _closed_form(0.5)[0], rtol=1e-12)


def test_traced_values_closed_over_are_differentiated_like_params():
    def outer(a, shift):
        # f closes over `shift`, a traced value of the outer function: x = a cos(x) + shift
        return ad.fixed_point(lambda a, x: a * anp.cos(x) + shift, a, 0.0, tol=1e-13)

    a, shift = 0.5, 0.2
    grad_a, grad_shift = ad.grad(outer, argnums=(0, 1))(a, shift)
    x = outer(a, shift)
    d = 1 + a * np.sin(x)
    np.testing.assert_allclose(grad_a, np.cos(x) / d, rtol=1e-10)
    np.testing.assert_allclose(grad_shift, 1 / d, rtol=1e-10)
    np.testing.assert_allclose(grad_shift, numerical_derivative(lambda s: outer(a, s), shift), rtol=1e-7)


def _slow(b, x):
    # rate 0.99: about 2,800 iterations to reach tol=1e-12 (each a vector of 1,000 elements)
    return 0.99 * x + 0.01 * anp.sin(b)


def _slow_loss(b, tol):
    return anp.sum(ad.fixed_point(_slow, b, anp.zeros_like(b), tol=tol, max_iter=10_000) ** 2)


def test_reverse_mode_keeps_nothing_of_the_forward_iterations():
    b = np.linspace(-1.0, 1.0, 1000)
    short, long = (ad.make_ir(ad.grad(lambda v, tol=tol: _slow_loss(v, tol)))(b) for tol in (1e-2, 1e-12))
    assert len(short.eqns) == len(long.eqns)
    text = str(long)
    assert "while_grad" not in text and "fold" not in text and text.count("fixed_point[") == 2
    # The unrolled alternative tapes every iteration: its gradient program holds a while_grad.
    unrolled = ad.make_ir(ad.grad(lambda v: anp.sum(ad.while_loop(
        lambda s: anp.max(anp.abs(_slow(v, s) - s)) > 1e-12, lambda s: _slow(v, s), anp.zeros_like(v)) ** 2)))(b)
    assert "while_grad" in str(unrolled)

    gradient = ad.jit(ad.grad(lambda v: _slow_loss(v, 1e-12)))
    gradient(b)  # compile outside the measurement
    tracemalloc.start()
    result = gradient(b)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # A tape would hold ~2,800 states of 8 kB (22 MB); the implicit rule needs a handful.
    assert peak < 40 * b.nbytes, f"peak {peak} bytes"
    np.testing.assert_allclose(result, 2 * np.sin(b) * np.cos(b), rtol=1e-8)


def test_errors():
    with pytest.raises(ad.ShapeError, match="fixed_point"):
        ad.fixed_point(lambda a, x: anp.stack([x, x]), 0.5, 0.0)
    with pytest.raises(ad.ExecutionError, match="no convergence"):
        ad.fixed_point(lambda a, x: 2.0 * x + a, 1.0, 0.0, max_iter=50)
    with pytest.raises(ad.ArgumentError, match="max_iter"):
        ad.fixed_point(_cosine, 0.5, 0.0, max_iter=0)
    with pytest.raises(ad.ArgumentError, match="tol"):
        ad.fixed_point(_cosine, 0.5, 0.0, tol=-1.0)
