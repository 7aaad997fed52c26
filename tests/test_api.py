"""The user-facing transformations: pytrees, argnums, has_aux, composition, caching, closures."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import numerical_gradient

rng = np.random.default_rng(0)


def loss(w, x, y):
    pred = anp.tanh(x @ w["W"] + w["b"])
    return anp.mean((pred - y) ** 2)


PARAMS = {"W": rng.normal(size=(4, 2)), "b": rng.normal(size=2)}
X, Y = rng.normal(size=(8, 4)), rng.normal(size=(8, 2))


def numpy_loss(w, x, y):
    return np.mean((np.tanh(x @ w["W"] + w["b"]) - y) ** 2)


def test_grad_of_pytree_params_matches_finite_differences():
    g = ad.grad(loss)(PARAMS, X, Y)
    assert set(g) == {"W", "b"} and all(isinstance(v, np.ndarray) for v in g.values())
    np.testing.assert_allclose(
        g["W"], numerical_gradient(lambda W: numpy_loss({"W": W, "b": PARAMS["b"]}, X, Y), PARAMS["W"]), rtol=1e-6
    )
    np.testing.assert_allclose(
        g["b"], numerical_gradient(lambda b: numpy_loss({"W": PARAMS["W"], "b": b}, X, Y), PARAMS["b"]), rtol=1e-6
    )


def test_value_and_grad_with_several_argnums():
    value, (gw, gx) = ad.value_and_grad(loss, argnums=(0, 1))(PARAMS, X, Y)
    np.testing.assert_allclose(value, numpy_loss(PARAMS, X, Y))
    np.testing.assert_allclose(gx, numerical_gradient(lambda x: numpy_loss(PARAMS, x, Y), X), rtol=1e-6, atol=1e-9)
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


def test_grad_traces_every_call_and_transforms_once_even_when_rewrapped(builds):
    traces = []

    def f(x):
        traces.append(1)
        return anp.sum(x * x)

    for _ in range(3):
        ad.grad(f)(np.ones(3))
    assert len(traces) == 3 and builds.count == 1
    for _ in range(3):  # a new lambda each time, the same program: transformed once
        ad.grad(lambda x: anp.sum(x * x))(np.ones(3))
    assert builds.count == 1


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


def test_a_chain_of_reshapes_is_one_reshape_or_none():
    """A reshape back to the operand's shape is the operand; a reshape of a reshape reads the first operand (GMM's
    gradient reshaped (5, 10) to (1, 5, 10) and back, and the Numba backend copied the array onto itself)."""
    x = np.arange(6.0)
    round_trip = ad.make_ir(lambda v: anp.reshape(anp.reshape(v, (1, 6)), (6,)) * 2.0)(x)
    assert str(round_trip) == "{ lambda a:f64[6] .\n    b:f64[6] = mul a 2.0:f64[6]\n  in (b) }"
    chain = lambda v: anp.reshape(anp.reshape(anp.sin(v), (1, 6)), (2, 3)) + anp.reshape(v, (3, 2)).T  # noqa: E731
    program = ad.make_ir(chain)(x)
    reshapes = [eqn for eqn in program.eqns if eqn.prim.name == "reshape"]
    assert [eqn.params["shape"] for eqn in reshapes] == [(2, 3), (3, 2)], program
    want = np.sin(x).reshape(2, 3) + x.reshape(3, 2).T
    np.testing.assert_array_equal(ad.jit(chain)(x), want)
    np.testing.assert_array_equal(ad.jit(chain, backend="numba")(x), want)
    twice = 2 * want  # the gradient of sum(chain ** 2), by hand
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(chain(v) ** 2))(x),
                               twice.reshape(6) * np.cos(x) + twice.T.reshape(6), rtol=1e-13)


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


# --- unused inputs, constant outputs, argnums order ----------------------------------------------

def test_vjp_with_an_unused_input_gives_it_a_zero_cotangent():
    # The zero cotangent was computed by the forward part and dropped: a bare StopIteration.
    out, pullback = ad.vjp(lambda a, b: a * 3.0, np.ones(2), np.ones(2))
    np.testing.assert_array_equal(out, 3.0 * np.ones(2))
    da, db = pullback(np.ones(2))
    np.testing.assert_array_equal(da, 3.0 * np.ones(2))
    np.testing.assert_array_equal(db, np.zeros(2))
    assert db.dtype == np.float64
    # The same pullback, checked by the adjoint identity against finite differences.
    a, b, u = rng.normal(size=2), rng.normal(size=(3, 2)), rng.normal(size=2)
    f = lambda a, b: anp.sin(a) * 2.0
    da, db = ad.vjp(f, a, b)[1](u)
    np.testing.assert_allclose(da, numerical_gradient(lambda a: np.sum(u * np.sin(a) * 2.0), a), rtol=1e-7)
    np.testing.assert_array_equal(db, np.zeros((3, 2)))


def test_vjp_of_a_constant_output_gives_zeros():
    out, pullback = ad.vjp(lambda a: anp.ones(2), np.ones(2))
    np.testing.assert_array_equal(out, np.ones(2))
    (da,) = pullback(np.ones(2))
    np.testing.assert_array_equal(da, np.zeros(2))
    # A float32 input keeps its dtype; an output pytree with a constant leaf; has_aux.
    (da,) = ad.vjp(lambda a: anp.full(3, 2.0), np.ones(2, np.float32))[1](np.ones(3))
    assert da.shape == (2,) and da.dtype == np.float32 and not da.any()
    _, pullback = ad.vjp(lambda a: {"c": anp.ones(2), "s": anp.sum(a ** 2)}, np.array([1.0, 2.0]))
    np.testing.assert_allclose(pullback({"c": np.ones(2), "s": np.array(1.0)})[0], [2.0, 4.0])
    value, pullback, aux = ad.vjp(lambda a: (anp.zeros(2), a * 2.0), np.ones(2), has_aux=True)
    np.testing.assert_array_equal(pullback(np.ones(2))[0], np.zeros(2))
    np.testing.assert_array_equal(aux, 2.0 * np.ones(2))


def test_vmap_of_vjp_with_an_unused_input():
    xs = rng.normal(size=(4, 3))
    da, db = ad.vmap(lambda x: ad.vjp(lambda a, b: anp.sin(a), x, x)[1](anp.ones_like(x)))(xs)
    np.testing.assert_allclose(da, np.cos(xs), rtol=1e-14)
    np.testing.assert_array_equal(db, np.zeros((4, 3)))


def test_grad_argnums_order_is_kept():
    # Results come back in argnums order, not argument order.
    np.testing.assert_allclose(ad.grad(lambda a, b: a * b, argnums=(1, 0))(1.0, 2.0), (1.0, 2.0))
    gb, ga = ad.grad(lambda a, b: anp.sum(a) * anp.sum(b ** 2), argnums=(1, 0))(np.ones(2), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(gb, 2.0 * 2.0 * np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(ga, 14.0 * np.ones(2))
    value, (gy, gx) = ad.value_and_grad(lambda x, y: x ** 2 * y, argnums=[1, 0])(3.0, 2.0)
    assert (value, gy, gx) == (18.0, 9.0, 12.0)


def test_numpy_integer_argnums_act_like_ints():
    assert ad.grad(lambda a, b: a * b, argnums=np.int64(1))(3.0, 2.0) == 3.0
    assert ad.grad(lambda a, b: a * b, argnums=(np.int64(0),))(3.0, 2.0) == (2.0,)


def test_grad_of_constant_and_unused_arguments_is_zero():
    np.testing.assert_array_equal(ad.grad(lambda v: 1.0)(np.ones(2)), np.zeros(2))
    ga, gb = ad.grad(lambda a, b: anp.sum(a ** 2), argnums=(0, 1))(np.array([1.0, 2.0]), np.ones(3))
    np.testing.assert_allclose(ga, [2.0, 4.0])
    np.testing.assert_array_equal(gb, np.zeros(3))
