"""Functions of a symmetric matrix see its symmetric part (a + a^H) / 2, as JAX's do by default
(symmetrize_input=True): their gradient is symmetric, so a gradient step keeps a symmetric
parameter symmetric. Checked against finite differences along symmetric directions (first and
second order), under jit and vmap, and against JAX; symmetrize_input=False keeps NumPy's and SciPy's
reading of one triangle."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.linalg as asl

RNG = np.random.default_rng(2024)
N = 4
WEIGHTS = RNG.normal(size=(N, N))
RHS = RNG.normal(size=(N, 2))


def spd(n=N, rng=RNG):
    m = rng.normal(size=(n, n))
    return m @ m.T + n * np.eye(n)


def symmetric_direction(n=N, rng=RNG):
    m = rng.normal(size=(n, n))
    return m + m.T


def _eigh_loss(a):
    w, v = anp.linalg.eigh(a)
    # v diag(w^2) v^T and sum(w^3) do not depend on the signs LAPACK gives the eigenvectors
    return anp.sum(WEIGHTS * ((v * w ** 2) @ v.T)) + anp.sum(w ** 3) / 10


B_METRIC = np.eye(N) + 0.1 * spd()
A_FIXED = spd()

# One scalar loss per function that reads a symmetric matrix (default symmetrize_input=True).
LOSSES = {
    "cholesky": lambda a: anp.sum(WEIGHTS * anp.linalg.cholesky(a)),
    "cholesky-upper": lambda a: anp.sum(WEIGHTS * anp.linalg.cholesky(a, upper=True) ** 2),
    "eigh": _eigh_loss,
    "eigh-U": lambda a: anp.sum(anp.linalg.eigh(a, UPLO="U")[0] ** 2),
    "eigvalsh": lambda a: anp.sum(anp.sin(anp.linalg.eigvalsh(a))),
    "scipy-cholesky": lambda a: anp.sum(WEIGHTS * asl.cholesky(a)),
    "scipy-cholesky-lower": lambda a: anp.sum(WEIGHTS * asl.cholesky(a, lower=True) ** 2),
    "scipy-cho_solve": lambda a: anp.sum(asl.cho_solve(asl.cho_factor(a), RHS) ** 2),
    "scipy-solve-pos": lambda a: anp.sum(asl.solve(a, RHS, assume_a="pos") ** 2),
    "scipy-solve-sym": lambda a: anp.sum(asl.solve(a, RHS, assume_a="sym", lower=True) ** 2),
    "scipy-inv-her": lambda a: anp.sum(WEIGHTS * asl.inv(a, assume_a="her")),
    "scipy-eigh": lambda a: anp.sum(asl.eigh(a, eigvals_only=True) ** 2),
    "scipy-eigh-generalized": lambda a: anp.sum(asl.eigh(a, B_METRIC, eigvals_only=True) ** 2),
    "scipy-eigh-generalized-b": lambda b: anp.sum(asl.eigh(A_FIXED, b, eigvals_only=True) ** 2),
}


def _value(loss, a):
    return float(loss(a))


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradient_is_symmetric_and_matches_finite_differences_along_symmetric_directions(name):
    loss, a = LOSSES[name], spd()
    grad = ad.grad(loss)(a)
    np.testing.assert_array_equal(grad, grad.T)          # exactly: a gradient step keeps a symmetric
    for _ in range(3):
        e = symmetric_direction()
        eps = 1e-6
        slope = (_value(loss, a + eps * e) - _value(loss, a - eps * e)) / (2 * eps)
        np.testing.assert_allclose(np.sum(grad * e), slope, rtol=1e-6, atol=1e-8)
    # the directional derivative along any direction acts through its symmetric part, in both modes
    d = RNG.normal(size=(N, N))
    _, tangent = ad.jvp(loss, (a,), (d,))
    np.testing.assert_allclose(tangent, np.sum(grad * d), rtol=1e-10, atol=1e-12)
    _, tangent_sym = ad.jvp(loss, (a,), ((d + d.T) / 2,))
    np.testing.assert_allclose(tangent, tangent_sym, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_hessian_vector_products_are_symmetric_and_match_finite_differences(name):
    loss, a = LOSSES[name], spd()
    e = symmetric_direction()
    hvp = ad.jvp(ad.grad(loss), (a,), (e,))[1]                 # forward over reverse
    np.testing.assert_allclose(hvp, hvp.T, rtol=1e-10, atol=1e-12)
    eps = 1e-5
    numeric = (ad.grad(loss)(a + eps * e) - ad.grad(loss)(a - eps * e)) / (2 * eps)
    np.testing.assert_allclose(hvp, numeric, rtol=1e-5, atol=1e-7)
    reverse = ad.grad(lambda x: anp.sum(ad.grad(loss)(x) * e))(a)   # reverse over reverse
    np.testing.assert_allclose(reverse, hvp, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ad.hvp(loss, (a,), (e,)), hvp, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", ["cholesky", "eigh", "eigvalsh", "scipy-cho_solve", "scipy-solve-pos"])
def test_jit_and_vmap_give_the_same_symmetric_gradient(name):
    loss = LOSSES[name]
    stack = np.stack([spd() for _ in range(3)])
    eager = np.stack([ad.grad(loss)(a) for a in stack])
    np.testing.assert_allclose(ad.jit(ad.grad(loss))(stack[0]), eager[0], rtol=1e-12, atol=1e-14)
    batched = ad.vmap(ad.grad(loss))(stack)
    np.testing.assert_allclose(batched, eager, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(batched, np.swapaxes(batched, -1, -2), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ad.jit(ad.vmap(ad.grad(loss)))(stack), eager, rtol=1e-10, atol=1e-12)


def test_gradient_descent_keeps_a_symmetric_parameter_symmetric():
    target = spd()

    def loss(a):          # fit a's eigenvalues and Cholesky factor to those of target
        return (anp.sum((anp.linalg.eigvalsh(a) - np.linalg.eigvalsh(target)) ** 2)
                + anp.sum((anp.linalg.cholesky(a) - np.linalg.cholesky(target)) ** 2))

    a = start = spd()
    step = ad.jit(lambda a: a - 0.05 * ad.grad(loss)(a))
    for _ in range(30):
        a = step(a)
        np.testing.assert_array_equal(a, a.T)
    assert loss(a) < 0.1 * loss(start)


def test_values_are_those_of_the_symmetric_part_and_numpy_s_for_a_symmetric_matrix():
    a = spd()
    # a symmetric matrix is its own symmetric part, bit for bit: NumPy's values
    np.testing.assert_array_equal(anp.linalg.cholesky(a), np.linalg.cholesky(a))
    np.testing.assert_array_equal(anp.linalg.eigvalsh(a), np.linalg.eigvalsh(a))
    np.testing.assert_array_equal(asl.cholesky(a, lower=True), sl.cholesky(a, lower=True))
    skew = a + np.triu(RNG.normal(size=(N, N)), 1)
    half = (skew + skew.T) / 2
    np.testing.assert_allclose(anp.linalg.cholesky(skew), np.linalg.cholesky(half), rtol=1e-14)
    np.testing.assert_allclose(anp.linalg.eigvalsh(skew, UPLO="U"), np.linalg.eigvalsh(half), rtol=1e-14)
    np.testing.assert_allclose(asl.solve(skew, RHS, assume_a="pos"), np.linalg.solve(half, RHS), rtol=1e-12)
    np.testing.assert_allclose(asl.eigh(skew, eigvals_only=True), np.linalg.eigvalsh(half), rtol=1e-14)
    # symmetrize_input=False reads one triangle, as NumPy and SciPy do
    np.testing.assert_allclose(anp.linalg.cholesky(skew, symmetrize_input=False), np.linalg.cholesky(skew),
                               rtol=1e-14)
    np.testing.assert_allclose(anp.linalg.eigvalsh(skew, UPLO="U", symmetrize_input=False),
                               np.linalg.eigvalsh(skew, UPLO="U"), rtol=1e-14)
    np.testing.assert_allclose(asl.cholesky(skew, symmetrize_input=False), sl.cholesky(skew), rtol=1e-14)
    # float32 stays float32
    assert anp.linalg.cholesky(a.astype(np.float32)).dtype == np.float32
    assert ad.grad(lambda a: anp.sum(anp.linalg.eigvalsh(a)))(a.astype(np.float32)).dtype == np.float32


def test_without_symmetrize_input_the_gradient_is_that_of_the_triangle_read():
    a = spd()
    lower = ad.grad(lambda a: anp.sum(anp.linalg.eigvalsh(a, symmetrize_input=False) ** 2))(a)
    symmetric = ad.grad(lambda a: anp.sum(anp.linalg.eigvalsh(a) ** 2))(a)
    assert not np.any(np.triu(lower, 1))
    np.testing.assert_allclose(lower, np.tril(symmetric + symmetric.T) - np.diag(np.diag(symmetric)), rtol=1e-12)


def test_hermitian_input_gets_a_hermitian_gradient():
    m = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    a = m @ m.conj().T + 3 * np.eye(3)

    def loss(x):
        return anp.sum(anp.abs(anp.linalg.cholesky(x)) ** 2) + anp.sum(anp.linalg.eigvalsh(x) ** 3)

    grad = ad.grad(loss)(a)
    np.testing.assert_allclose(grad, grad.conj().T, rtol=1e-12, atol=1e-14)


# --- against JAX (its symmetrize_input=True default) -------------------------------------------

@pytest.fixture
def jax_x64():
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", previous)


def _both(build):
    import jax.numpy as jnp

    return build(anp), build(jnp)


@pytest.mark.parametrize("case", ["cholesky", "cholesky-upper", "eigvalsh", "eigh", "nonsymmetric"])
def test_gradients_equal_jax_s(case, jax_x64):
    import jax.numpy as jnp

    weights = WEIGHTS

    def build(m):
        if case == "cholesky":
            return lambda a: m.sum(weights * m.linalg.cholesky(a) ** 3)
        if case == "cholesky-upper":
            return lambda a: m.sum(weights * m.linalg.cholesky(a, upper=True))
        if case == "eigvalsh":
            return lambda a: m.sum(m.exp(m.linalg.eigvalsh(a) / 10))
        if case == "eigh":
            return lambda a: (lambda w, v: m.sum(weights * ((v * m.sin(w)) @ v.T)))(*m.linalg.eigh(a))
        return lambda a: m.sum(m.linalg.eigvalsh(a) ** 2)

    ours, theirs = build(anp), build(jnp)
    a = spd()
    if case == "nonsymmetric":  # both see (a + a^T) / 2
        a = a + np.triu(RNG.normal(size=(N, N)), 1)
    np.testing.assert_allclose(ours(a), theirs(a), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(ours)(a), jax_x64.grad(theirs)(a), rtol=1e-9, atol=1e-12)
    e = symmetric_direction()
    np.testing.assert_allclose(ad.hvp(ours, (a,), (e,)), jax_x64.jvp(jax_x64.grad(theirs), (a,), (e,))[1],
                               rtol=1e-8, atol=1e-10)


def test_scipy_eigh_gradient_equals_jax_s(jax_x64):
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    a = spd()
    ours = ad.grad(lambda a: anp.sum(asl.eigh(a, eigvals_only=True) ** 3))(a)
    theirs = jax_x64.grad(lambda a: jnp.sum(jsl.eigh(a, eigvals_only=True) ** 3))(a)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_complex_cholesky_holomorphic_gradient_equals_jax_s(jax_x64):
    import jax.numpy as jnp

    m = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    a = m @ m.conj().T + 3 * np.eye(3)

    def build(mod):
        return lambda x: mod.sum((mod.linalg.cholesky(x) - mod.sin(mod.linalg.cholesky(x))) ** 2)

    ours, theirs = build(anp), build(jnp)
    np.testing.assert_allclose(ad.grad(ours, holomorphic=True)(a), jax_x64.grad(theirs, holomorphic=True)(a),
                               rtol=1e-10)
    real = lambda mod: lambda x: mod.sum(mod.abs(mod.linalg.eigvalsh(x)) ** 1.5)  # noqa: E731
    np.testing.assert_allclose(ad.grad(real(anp))(a), jax_x64.grad(real(jnp))(a), rtol=1e-10)
