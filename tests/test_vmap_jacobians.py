"""vmap with in_axes/out_axes and its composition with grad/jvp/vjp/itself; Jacobians and curvature."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import numerical_gradient, numerical_jacobian

rng = np.random.default_rng(0)


def test_vmap_in_axes_none_and_pytrees():
    xs, w = rng.normal(size=(5, 3)), rng.normal(size=(3, 2))
    out = ad.vmap(lambda p, x: anp.tanh(x @ p["w"]), in_axes=({"w": None}, 0))({"w": w}, xs)
    np.testing.assert_allclose(out, np.tanh(xs @ w))


def test_vmap_out_axes_and_unbatched_outputs():
    xs = rng.normal(size=(4, 3))
    a, b = ad.vmap(lambda x: (x * 2, anp.ones(2)), in_axes=0, out_axes=(1, 0))(xs)
    np.testing.assert_allclose(a, (xs * 2).T)
    assert b.shape == (4, 2)


def test_vmap_of_vmap_is_an_outer_product():
    out = ad.vmap(ad.vmap(lambda a, b: a * b, (0, None)), (None, 0))(np.arange(3.0), np.arange(4.0))
    np.testing.assert_allclose(out, np.outer(np.arange(4.0), np.arange(3.0)))


def test_vmap_of_grad_jvp_and_vjp():
    xs = rng.normal(size=(6, 3))
    f = lambda x: anp.sum(anp.sin(x) * x)
    np.testing.assert_allclose(ad.vmap(ad.grad(f))(xs), np.cos(xs) * xs + np.sin(xs))
    tangents = ad.vmap(lambda x: ad.jvp(anp.sin, (x,), (anp.ones_like(x),))[1])(xs)
    np.testing.assert_allclose(tangents, np.cos(xs))
    cotangents = ad.vmap(lambda x: ad.vjp(anp.exp, x)[1](x)[0])(xs)
    np.testing.assert_allclose(cotangents, np.exp(xs) * xs)


def test_grad_of_vmap():
    xs = rng.normal(size=(4, 3))
    g = ad.grad(lambda xs: anp.sum(ad.vmap(lambda x: anp.sum(x ** 2) ** 0.5)(xs)))(xs)
    np.testing.assert_allclose(g, xs / np.linalg.norm(xs, axis=1, keepdims=True))


def test_vmap_batch_size_mismatch_is_an_error():
    with pytest.raises(ad.ArgumentError, match="batch size"):
        ad.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))


def _random_program(seed):
    """A random composition of differentiable operations from R^3 x R^(2x3) to a pytree."""
    r = np.random.default_rng(seed)
    ops = [anp.sin, anp.tanh, lambda v: v * v, anp.exp, lambda v: anp.cumsum(v, axis=-1), lambda v: v[::-1]]
    chosen = [ops[i] for i in r.integers(0, len(ops), size=4)]
    w = r.normal(size=(3, 3))

    def f(x, m):
        h = x
        for op in chosen:
            h = op(h @ w * 0.5)
        return {"vector": h * anp.sum(m, axis=0), "scalar": anp.sum(m @ h)}

    return f


@pytest.mark.parametrize("seed", range(6))
def test_jacfwd_equals_jacrev_on_random_programs(seed):
    f = _random_program(seed)
    x, m = rng.normal(size=3), rng.normal(size=(2, 3))
    forward = ad.jacfwd(f, argnums=(0, 1))(x, m)
    reverse = ad.jacrev(f, argnums=(0, 1))(x, m)
    for key in ("vector", "scalar"):
        for a, b in zip(forward[key], reverse[key]):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert forward["vector"][1].shape == (3, 2, 3) and forward["scalar"][0].shape == (3,)


def test_jacobian_matches_finite_differences():
    f = _random_program(7)
    x, m = rng.normal(size=3), rng.normal(size=(2, 3))
    jac = ad.jacrev(f)(x, m)["vector"]
    np.testing.assert_allclose(jac, numerical_jacobian(lambda x: f(x, m)["vector"], x), rtol=1e-6, atol=1e-8)


def test_hessian_and_hvp_match_finite_differences():
    f = lambda x: anp.sum(anp.sin(x) * x[0]) + anp.prod(x) ** 2
    x = rng.normal(size=4)
    hessian = ad.hessian(f)(x)
    numeric = numerical_gradient(ad.grad(f), x, 1e-5)  # row i: the gradient's derivative in x[i]
    np.testing.assert_allclose(hessian, numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-12)
    v = rng.normal(size=4)
    hv = ad.hvp(f, (x,), (v,))  # one argument: H v itself, not a 1-tuple
    np.testing.assert_allclose(hv, hessian @ v, rtol=1e-10)
    np.testing.assert_allclose(ad.jvp(ad.grad(f), (x,), (v,))[1], hessian @ v, rtol=1e-10)


def test_linearize_reuses_the_primal():
    x = rng.normal(size=3)
    out, f_jvp = ad.linearize(lambda x: anp.exp(x) * anp.sum(x), x)
    np.testing.assert_allclose(out, np.exp(x) * np.sum(x))
    v = rng.normal(size=3)
    np.testing.assert_allclose(f_jvp(v), ad.jvp(lambda x: anp.exp(x) * anp.sum(x), (x,), (v,))[1])


def test_jacobian_of_integer_input_is_an_error():
    with pytest.raises(ad.NonDifferentiableError):
        ad.jacfwd(lambda x: x * 2.0)(np.arange(3))


def test_vmapped_jacobians_broadcast_their_seed_basis_at_run_time():
    # Evaluated at trace time, the broadcast of the (3, 3) basis to the batch made two 6000 x 3 x 3
    # constants part of the program (237 MB of literals for ADBench's BA Jacobian).
    from adarray.core.ir import Literal

    f = lambda x: anp.sin(x) * x[0]
    xs = rng.normal(size=(6000, 3))
    program = ad.make_ir(ad.vmap(ad.jacfwd(f)))(xs)
    sizes = [a.aval.size for eqn in program.eqns for a in eqn.inputs if isinstance(a, Literal)]
    assert max(sizes) <= 9, program
    expected = np.cos(xs)[:, :, None] * np.eye(3) * xs[:, :1, None]
    expected[:, :, 0] += np.sin(xs)
    np.testing.assert_allclose(ad.vmap(ad.jacfwd(f))(xs), expected, rtol=1e-12)


# --- Jacobian blocks that do not depend on the input (constant, linear, unused arguments) --------

JACOBIANS = [ad.jacfwd, ad.jacrev]
X2 = np.array([0.3, 0.5])


@pytest.mark.parametrize("jacobian", JACOBIANS)
def test_jacobian_of_a_constant_function_is_zero(jacobian):
    # The derivative does not depend on the basis, so vmap leaves it unbatched: it was reshaped as if batched.
    np.testing.assert_array_equal(jacobian(lambda v: anp.ones(3))(X2), np.zeros((3, 2)))
    np.testing.assert_array_equal(jacobian(lambda v: anp.full((2, 2), 7.0))(X2), np.zeros((2, 2, 2)))
    np.testing.assert_array_equal(jacobian(lambda v: 3.0)(1.0), 0.0)
    np.testing.assert_array_equal(jacobian(lambda v: anp.ones(3))(X2), numerical_jacobian(lambda v: np.ones(3), X2))


@pytest.mark.parametrize("jacobian", JACOBIANS)
def test_jacobian_of_a_linear_function_is_its_matrix(jacobian):
    a, b = rng.normal(size=(3, 2)), rng.normal(size=3)
    f = lambda v: a @ v + b
    np.testing.assert_allclose(jacobian(f)(X2), a, rtol=1e-14)
    np.testing.assert_allclose(jacobian(f)(X2), numerical_jacobian(f, X2), rtol=1e-7)
    np.testing.assert_allclose(jacobian(lambda v: 2.0 * v)(X2), 2.0 * np.eye(2), rtol=1e-14)


@pytest.mark.parametrize("jacobian", JACOBIANS)
def test_jacobian_with_an_unused_argument_has_a_zero_block(jacobian):
    da, db = jacobian(lambda a, b: a ** 2, argnums=(0, 1))(X2, np.ones(3))
    np.testing.assert_allclose(da, np.diag(2 * X2), rtol=1e-14)
    np.testing.assert_allclose(da, numerical_jacobian(lambda a: a ** 2, X2), rtol=1e-7)
    np.testing.assert_array_equal(db, np.zeros((2, 3)))


@pytest.mark.parametrize("jacobian", JACOBIANS)
def test_jacobian_argnums_order_is_kept(jacobian):
    d_b, d_a = jacobian(lambda a, b: a * b ** 2, argnums=(1, 0))(X2, np.array([2.0, 3.0]))
    np.testing.assert_allclose(d_b, np.diag(2 * X2 * [2.0, 3.0]), rtol=1e-14)
    np.testing.assert_allclose(d_a, np.diag([4.0, 9.0]), rtol=1e-14)


@pytest.mark.parametrize("jacobian", JACOBIANS)
def test_jacobian_of_pytrees_with_constant_and_integer_leaves(jacobian):
    def f(p):
        return {"lin": p["u"] * 2.0, "const": anp.ones((2, 2)), "sum": anp.sum(p["w"]), "int": anp.arange(3)}

    p = {"u": X2, "w": rng.normal(size=(2, 3))}
    jac = jacobian(f)(p)
    expected = {
        "lin": {"u": 2.0 * np.eye(2), "w": np.zeros((2, 2, 3))},
        "const": {"u": np.zeros((2, 2, 2)), "w": np.zeros((2, 2, 2, 3))},
        "sum": {"u": np.zeros(2), "w": np.ones((2, 3))},
        "int": {"u": np.zeros((3, 2)), "w": np.zeros((3, 2, 3))},  # integer outputs have no derivative
    }
    assert set(jac) == set(expected)
    for key in expected:
        for leaf in ("u", "w"):
            assert np.shape(jac[key][leaf]) == expected[key][leaf].shape, (key, leaf)
            np.testing.assert_allclose(jac[key][leaf], expected[key][leaf], rtol=1e-14, err_msg=f"{key}/{leaf}")


@pytest.mark.parametrize("jacobian", JACOBIANS)
def test_jacobian_of_a_float32_output_of_a_float64_function(jacobian):
    # The seeds take each output's dtype: a float64 basis fed to a float32 cotangent was a dtype error.
    f = lambda v: (v * 2.0).astype(np.float32)
    np.testing.assert_allclose(jacobian(f)(X2), 2.0 * np.eye(2), rtol=1e-6)
    np.testing.assert_array_equal(jacobian(lambda v: anp.ones(3, dtype=np.float32))(X2), np.zeros((3, 2)))


@pytest.mark.parametrize("jacobian", JACOBIANS)
def test_vmap_of_a_jacobian_with_a_constant_block(jacobian):
    xs = rng.normal(size=(4, 2))
    jac, zero = ad.vmap(jacobian(lambda a, b: (anp.sin(a), anp.ones(3)), argnums=(0, 1)))(xs, xs)
    np.testing.assert_allclose(jac[0], np.cos(xs)[:, :, None] * np.eye(2), rtol=1e-14)
    for block in (jac[1], zero[0], zero[1]):
        np.testing.assert_array_equal(block, np.zeros((4,) + block.shape[1:]))
    assert zero[0].shape == (4, 3, 2)


@pytest.mark.parametrize("inner", JACOBIANS)
@pytest.mark.parametrize("outer", JACOBIANS)
def test_hessian_of_linear_and_piecewise_linear_functions_is_zero(outer, inner):
    for f in (lambda v: anp.sum(2.0 * v), lambda v: ad.reduce("max", v), lambda v: anp.sum(v) + 1.0):
        np.testing.assert_array_equal(outer(inner(f))(X2), np.zeros((2, 2)))
    np.testing.assert_array_equal(ad.hessian(lambda v: anp.sum(2.0 * v))(X2), np.zeros((2, 2)))
    np.testing.assert_array_equal(ad.hessian(lambda v: ad.reduce("max", v))(X2), np.zeros((2, 2)))


@pytest.mark.parametrize("inner", JACOBIANS)
@pytest.mark.parametrize("outer", JACOBIANS)
def test_partly_zero_hessian_matches_exact_and_finite_differences(outer, inner):
    # x0 and x2 interact, x1 enters linearly, x3 not at all: rows and columns 1 and 3 are zero.
    f = lambda v: v[0] ** 3 + 2.0 * v[1] + anp.sin(v[2]) * v[0]
    x = np.array([0.3, 0.5, -0.7, 1.1])
    exact = np.zeros((4, 4))
    exact[0, 0] = 6 * x[0]
    exact[0, 2] = exact[2, 0] = np.cos(x[2])
    exact[2, 2] = -np.sin(x[2]) * x[0]
    hessian = outer(inner(f))(x)
    np.testing.assert_allclose(hessian, exact, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(hessian, numerical_jacobian(ad.grad(f), x, eps=1e-5), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ad.hessian(f)(x), exact, rtol=1e-13, atol=1e-15)


def test_hessian_of_a_function_of_two_pytree_arguments():
    def f(p, q):
        return anp.sum(p["a"] * 2.0) + p["b"] * 1.0 + anp.sum(q[0] ** 3) + p["b"] * anp.sum(q[0])

    p, q = {"a": X2, "b": 1.5}, (np.array([0.2, -0.4, 0.9]),)
    h = ad.hessian(f, argnums=(0, 1))(p, q)
    # h[i][j]: the structure of the gradient (p, q), then for each of its leaves, (p, q) again.
    (h_pp, h_pq), (h_qp, h_qq) = h[0]["a"], h[0]["b"]
    np.testing.assert_array_equal(h_pp["a"], np.zeros((2, 2)))
    np.testing.assert_array_equal(h_pp["b"], np.zeros(2))
    np.testing.assert_array_equal(h_pq[0], np.zeros((2, 3)))
    np.testing.assert_array_equal(h_qp["a"], np.zeros(2))
    np.testing.assert_array_equal(h_qp["b"], 0.0)
    np.testing.assert_allclose(h_qq[0], np.ones(3), rtol=1e-14)  # d2f / db dq
    (q_p, q_q), = h[1]
    np.testing.assert_array_equal(q_p["a"], np.zeros((3, 2)))
    np.testing.assert_allclose(q_p["b"], np.ones(3), rtol=1e-14)
    np.testing.assert_allclose(q_q[0], np.diag(6 * q[0]), rtol=1e-14)
    flat = lambda v: f({"a": v[:2], "b": v[2]}, (v[3:],))
    v = np.concatenate([X2, [1.5], q[0]])
    numeric = numerical_jacobian(ad.grad(flat), v, eps=1e-5)
    np.testing.assert_allclose(numeric[3:, 3:], q_q[0], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(numeric[2, 3:], h_qq[0], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(numeric[:2], 0.0, atol=1e-9)


def test_linearize_of_constant_outputs_and_unused_inputs():
    out, f_jvp = ad.linearize(lambda a: anp.ones(2), np.ones(2))
    np.testing.assert_array_equal(out, np.ones(2))
    np.testing.assert_array_equal(f_jvp(np.ones(2)), np.zeros(2))
    a, b = rng.normal(size=2), rng.normal(size=3)
    out, f_jvp = ad.linearize(lambda a, b: (anp.sin(a), anp.ones(3), b * 0.0 + 2.0), a, b)
    ta, tb = rng.normal(size=2), rng.normal(size=3)
    tangents = f_jvp(ta, tb)
    np.testing.assert_allclose(tangents[0], np.cos(a) * ta, rtol=1e-14)
    np.testing.assert_array_equal(tangents[1], np.zeros(3))
    np.testing.assert_array_equal(tangents[2], np.zeros(3))
