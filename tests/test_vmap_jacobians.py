"""vmap with in_axes/out_axes and its composition with grad/jvp/vjp/itself; Jacobians and curvature."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp

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
    eps = 1e-6
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        column = (f(x + e, m)["vector"] - f(x - e, m)["vector"]) / (2 * eps)
        np.testing.assert_allclose(jac[:, i], column, rtol=1e-6, atol=1e-8)


def test_hessian_and_hvp_match_finite_differences():
    f = lambda x: anp.sum(anp.sin(x) * x[0]) + anp.prod(x) ** 2
    x = rng.normal(size=4)
    hessian = ad.hessian(f)(x)
    eps = 1e-5
    grad = ad.grad(f)
    numeric = np.stack([(grad(x + eps * e) - grad(x - eps * e)) / (2 * eps) for e in np.eye(4)])
    np.testing.assert_allclose(hessian, numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-12)
    v = rng.normal(size=4)
    (hv,) = ad.hvp(f, (x,), (v,))
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
