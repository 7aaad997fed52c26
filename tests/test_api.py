"""The user-facing transformations: pytrees, argnums, has_aux, composition, caching, closures."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp

rng = np.random.default_rng(0)


def loss(w, x, y):
    pred = anp.tanh(x @ w["W"] + w["b"])
    return anp.mean((pred - y) ** 2)


PARAMS = {"W": rng.normal(size=(4, 2)), "b": rng.normal(size=2)}
X, Y = rng.normal(size=(8, 4)), rng.normal(size=(8, 2))


def numpy_loss(w, x, y):
    return np.mean((np.tanh(x @ w["W"] + w["b"]) - y) ** 2)


def finite_difference(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def test_grad_of_pytree_params_matches_finite_differences():
    g = ad.grad(loss)(PARAMS, X, Y)
    assert set(g) == {"W", "b"} and all(isinstance(v, np.ndarray) for v in g.values())
    np.testing.assert_allclose(
        g["W"], finite_difference(lambda W: numpy_loss({"W": W, "b": PARAMS["b"]}, X, Y), PARAMS["W"]), rtol=1e-6
    )
    np.testing.assert_allclose(
        g["b"], finite_difference(lambda b: numpy_loss({"W": PARAMS["W"], "b": b}, X, Y), PARAMS["b"]), rtol=1e-6
    )


def test_value_and_grad_with_several_argnums():
    value, (gw, gx) = ad.value_and_grad(loss, argnums=(0, 1))(PARAMS, X, Y)
    np.testing.assert_allclose(value, numpy_loss(PARAMS, X, Y))
    np.testing.assert_allclose(gx, finite_difference(lambda x: numpy_loss(PARAMS, x, Y), X), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gw["W"], ad.grad(loss)(PARAMS, X, Y)["W"])


def test_negative_argnums_and_has_aux():
    grads, aux = ad.grad(lambda a, b: (anp.sum(a * b), {"mean": anp.mean(b), "none": None}),
                         argnums=-1, has_aux=True)(np.ones(3), np.arange(3.0))
    np.testing.assert_allclose(grads, np.ones(3))
    assert aux["none"] is None and float(aux["mean"]) == 1.0
    (value, aux), grads = ad.value_and_grad(lambda a: (anp.sum(a ** 2), [a]), has_aux=True)(np.ones(2))
    assert float(value) == 2.0 and np.all(aux[0] == 1.0) and np.all(grads == 2.0)


def test_third_derivative_by_composition():
    f = lambda x: anp.sin(x) * x
    third = ad.grad(ad.grad(ad.grad(f)))(0.7)
    np.testing.assert_allclose(third, -3 * np.sin(0.7) - 0.7 * np.cos(0.7), rtol=1e-12)


def test_grad_of_grad_closes_over_outer_value():
    # The inner function closes over the outer traced x: mixed partial d/dx (d/dy x^2 y^3) = 6 x y^2.
    def outer(x):
        return ad.grad(lambda y: x ** 2 * y ** 3)(2.0)

    np.testing.assert_allclose(ad.grad(outer)(1.5), 6 * 1.5 * 4.0)


def test_vjp_runs_forward_once_and_pullback_gives_cotangents():
    a, b = rng.normal(size=3), rng.normal(size=3)
    out, pullback = ad.vjp(lambda a, b: (anp.sin(a) * b, a + b), a, b)
    np.testing.assert_allclose(out[0], np.sin(a) * b)
    u, v = rng.normal(size=3), rng.normal(size=3)
    da, db = pullback((u, v))
    np.testing.assert_allclose(da, u * np.cos(a) * b + v)
    np.testing.assert_allclose(db, u * np.sin(a) + v)


def test_vjp_pullback_with_integer_primal_gives_zeros():
    out, pullback = ad.vjp(lambda x, i: x[i] * 2.0, np.ones(3), np.array([0, 0]))
    dx, di = pullback(np.ones(2))
    np.testing.assert_allclose(dx, [4.0, 0.0, 0.0])
    assert np.all(di == 0)


def test_jvp_matches_vjp_adjoint():
    f = lambda x, y: {"p": anp.exp(x) @ y, "q": x * 2.0}
    x, y = rng.normal(size=(2, 3)), rng.normal(size=3)
    tx, ty = rng.normal(size=(2, 3)), rng.normal(size=3)
    out, tangent = ad.jvp(f, (x, y), (tx, ty))
    np.testing.assert_allclose(out["p"], np.exp(x) @ y)
    _, pullback = ad.vjp(f, x, y)
    u = {"p": rng.normal(size=2), "q": rng.normal(size=(2, 3))}
    dx, dy = pullback(u)
    lhs = np.sum(u["p"] * tangent["p"]) + np.sum(u["q"] * tangent["q"])
    np.testing.assert_allclose(lhs, np.sum(dx * tx) + np.sum(dy * ty), rtol=1e-10)


def test_jit_traces_once_per_signature():
    traces = []

    def f(x, n):
        traces.append(1)
        return x * n

    fast = ad.jit(f, static_argnums=1)
    fast(np.ones(3), 2)
    fast(np.zeros(3), 2)
    assert len(traces) == 1
    fast(np.ones(4), 2)
    fast(np.ones(3), 5)
    assert len(traces) == 3
    np.testing.assert_allclose(fast(np.ones(3), 5), 5.0)


def test_grad_traces_once_per_signature_even_when_rewrapped():
    traces = []

    def f(x):
        traces.append(1)
        return anp.sum(x * x)

    for _ in range(3):
        ad.grad(f)(np.ones(3))
    assert len(traces) == 1


def test_closed_over_numpy_arrays_and_scalars_become_constants():
    weights, scale = rng.normal(size=3), 2.5
    program = ad.make_ir(lambda x: anp.sum(x * weights) * scale)(np.ones(3))
    assert len(program.inputs) == 1
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(x * weights) * scale)(np.ones(3)), weights * scale)


def test_make_ir_of_grad_is_what_a_person_would_write():
    text = str(ad.make_ir(ad.grad(lambda x: anp.sum(x * x)))(np.ones(3)))
    assert text == "{ lambda a:f64[3] .\n    b:f64[3] = add a a\n  in (b) }"


def test_simplified_programs_have_no_trivial_identities():
    text = str(ad.make_ir(ad.grad(loss))(PARAMS, X, Y))
    for pattern in ("mul 1.0:", "1.0:f64[8,2] mul", "add 0.0:", "= neg", "broadcast_in_dim[dims=(), shape=(8, 2)] 0.0"):
        assert pattern not in text, text


def test_outputs_are_numpy_and_nan_inf_are_values():
    g = ad.grad(lambda x: anp.sum(anp.log(x)))(np.array([0.0, 1.0]))
    assert isinstance(g, np.ndarray) and g[0] == np.inf and g[1] == 1.0
    assert np.isnan(ad.jit(lambda x: anp.sqrt(x))(np.array(-1.0)))


def test_python_control_flow_on_static_arguments_is_fine():
    def f(x, n):
        for _ in range(n):
            x = anp.sin(x)
        return x

    np.testing.assert_allclose(ad.jit(f, static_argnums=1)(0.3, 3), np.sin(np.sin(np.sin(0.3))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_dtype_follows_input(dtype):
    g = ad.grad(lambda x: anp.sum(anp.tanh(x) * 2))(np.ones(3, dtype))
    assert g.dtype == dtype
