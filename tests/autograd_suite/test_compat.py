"""The parts of tests/autograd_compat that autograd's own tests do not reach: each against adarray or a
closed form, and the promise that a missing name says what is missing instead of falling back to NumPy."""
import numpy as onp
import pytest

import autograd_compat as ag
import autograd_compat.numpy as np
from autograd_compat.misc import flatten
from autograd_compat.misc.flatten import flatten_func
from autograd_compat.scipy.integrate import odeint


def _fun(a, b, scale=2.0):
    return scale * np.sum(np.sin(a) * b)


A, B = onp.array([0.3, -1.2]), onp.array([1.5, 0.5])


def test_gradients_by_name_keyword_and_dict():
    onp.testing.assert_allclose(ag.grad_named(_fun, "b")(A, B), 2.0 * onp.sin(A))
    onp.testing.assert_allclose(ag.grad(_fun, 1)(A, B, scale=3.0), 3.0 * onp.sin(A))
    grads = ag.multigrad_dict(_fun)(A, B)
    onp.testing.assert_allclose(grads["a"], 2.0 * onp.cos(A) * B)
    onp.testing.assert_allclose(grads["b"], 2.0 * onp.sin(A))
    onp.testing.assert_allclose(ag.deriv(np.sin)(A), onp.cos(A))
    onp.testing.assert_allclose(ag.elementwise_grad(np.sin)(A), onp.cos(A))
    value, gradient = ag.value_and_grad(_fun, [1, 0])(A, B)
    onp.testing.assert_allclose(gradient[1], 2.0 * onp.cos(A) * B)


def test_flatten_round_trip_and_flatten_func():
    params = {"w": onp.arange(6.0).reshape(2, 3), "b": (onp.ones(2), 3.0)}
    flat, unflatten = flatten(params)
    assert flat.shape == (9,)
    rebuilt = unflatten(flat)
    onp.testing.assert_array_equal(rebuilt["w"], params["w"])
    onp.testing.assert_array_equal(rebuilt["b"][0], params["b"][0])
    flat_fun, unflatten, example = flatten_func(lambda p: {"s": np.sum(p["w"]) * p["b"][1]}, params)
    onp.testing.assert_allclose(flat_fun(example), [45.0])


def test_odeint_takes_autograd_args_tuple():
    t = onp.linspace(0.0, 1.0, 3)
    ys = odeint(lambda y, t, k, c: -k * y + c, onp.array([1.0]), t, args=(2.0, 0.0))
    onp.testing.assert_allclose(ys[:, 0], onp.exp(-2.0 * t), rtol=1e-7)


def test_missing_names_say_what_adarray_lacks():
    with pytest.raises(AttributeError, match="adarray.numpy has no 'definitely_not_a_function'"):
        np.definitely_not_a_function  # noqa: B018
    from autograd_compat.core import primitive

    with pytest.raises(NotImplementedError, match="custom_vjp"):
        primitive(onp.sin)
