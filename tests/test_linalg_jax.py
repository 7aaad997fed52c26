"""Gradients of anp.linalg and adarray.scipy.linalg equal JAX's on the same inputs (float64).

Losses are invariant to the sign conventions of eigenvectors and singular vectors, and symmetric
matrices enter through a symmetric parametrisation (both libraries evaluate cholesky and eigh on the
symmetric part of their argument, so their gradients agree directly too: tests/test_symmetric_input.py).
expm is left out (JAX takes seconds to compile its expm); tests/test_linalg_spectral.py checks ours
against finite differences and d/dt expm(tA) = A expm(tA)."""
from __future__ import annotations

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.linalg as asl

jax = pytest.importorskip("jax")


@pytest.fixture(autouse=True, scope="module")
def x64():
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


RNG = np.random.default_rng(11)
N = 4
A = RNG.normal(size=(N, N)) + 2.5 * np.eye(N)
B = RNG.normal(size=(N, 2))
TALL = RNG.normal(size=(6, 3))
W = RNG.normal(size=(N, N))


def symmetric(m, a):
    """An SPD matrix made from a free matrix, in either library's namespace."""
    return m.matmul(a, a.T) + N * m.eye(N)


def losses(m, linalg, scipy_linalg):
    """name -> (loss, argument); `m` is numpy-like (anp or jax.numpy)."""
    return {
        "solve": (lambda a: m.sum(m.sin(linalg.solve(a, B))), A),
        "inv": (lambda a: m.sum(W * linalg.inv(a)), A),
        "det": (lambda a: linalg.det(a), A),
        "slogdet": (lambda a: linalg.slogdet(a)[1], A),
        "cholesky": (lambda a: m.sum(W * linalg.cholesky(symmetric(m, a))), A),
        "eigh": (lambda a: (lambda w, v: m.sum(w ** 3) + m.sum(W * (v[:, :2] @ v[:, :2].T)))(
            *linalg.eigh(symmetric(m, a) + W + W.T)), A),
        "eigvalsh": (lambda a: m.sum(m.exp(-linalg.eigvalsh(symmetric(m, a)) / 10)), A),
        "svd": (lambda a: (lambda u, s, vh: m.sum(s ** 2) + m.sum(TALL[:, :2] * ((u[:, :2] * s[:2]) @ vh[:2, :2])))(
            *linalg.svd(a, full_matrices=False)), TALL),
        "svdvals": (lambda a: m.sum(linalg.svd(a, compute_uv=False)), TALL),
        "qr": (lambda a: (lambda q, r: m.sum(W[:3, :3] * (r * r)) + m.sum(TALL * (q * q)))(*linalg.qr(a)), TALL),
        "pinv": (lambda a: m.sum(TALL.T * linalg.pinv(a)), TALL),
        "lstsq": (lambda a: m.sum(linalg.lstsq(a, TALL[:, 0])[0] ** 2), TALL),
        "matrix_power": (lambda a: m.sum(W * linalg.matrix_power(a / 3, 3)), A),
        "matrix_power_negative": (lambda a: m.sum(W * linalg.matrix_power(a, -2)), A),
        "multi_dot": (lambda a: m.sum(linalg.multi_dot([a, B, B.T, a])), A),
        "norm_vector": (lambda a: sum(linalg.norm(a[0], o) for o in (None, 1, 3, 0.5, np.inf, -np.inf, -1)), A),
        "norm_matrix": (lambda a: sum(linalg.norm(a, o) for o in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)),
                        A),
        "norm_axes": (lambda a: m.sum(linalg.norm(a.reshape(2, 2, N), 3, axis=(2,), keepdims=True))
                      + m.sum(linalg.norm(a.reshape(2, 2, N), "nuc", axis=(0, 2))), A),
        "solve_triangular": (lambda a: m.sum(W[:, :2] * scipy_linalg.solve_triangular(a, B, lower=True, trans=1)), A),
        "cho_solve": (lambda a: m.sum(B * scipy_linalg.cho_solve(scipy_linalg.cho_factor(symmetric(m, a)), B)), A),
        "lu_solve": (lambda a: m.sum(B * scipy_linalg.lu_solve(scipy_linalg.lu_factor(a), B)), A),
        # issue 10: cond, tensorsolve, tensorinv and SciPy's signatures (sqrtm and logm: JAX has no derivative)
        "cond": (lambda a: linalg.cond(a) + linalg.cond(a, "fro") + linalg.cond(a, -2) + linalg.cond(TALL), A),
        "tensorsolve": (lambda a: m.sum(W[:, :2].reshape(2, 2, 2) * linalg.tensorsolve(
            a.reshape(2, 2, 2, 2), B[:, :1].reshape(2, 2))[..., None]), A),
        "tensorinv": (lambda a: m.sum(W.reshape(2, 2, 2, 2) * linalg.tensorinv(a.reshape(2, 2, 2, 2), 2)), A),
        "scipy_lu": (lambda a: (lambda p, l, u: m.sum(W * (p @ l)) + m.sum(W.T * u))(*scipy_linalg.lu(a)), A),
        "scipy_inv": (lambda a: m.sum(W * scipy_linalg.inv(a)), A),
        "scipy_det": (lambda a: scipy_linalg.det(a), A),
        "scipy_solve": (lambda a: m.sum(m.sin(scipy_linalg.solve(a, B, assume_a="gen"))), A),
        "scipy_solve_pos": (lambda a: m.sum(B * scipy_linalg.solve(symmetric(m, a), B, assume_a="pos")), A),
        "scipy_eigh": (lambda a: m.sum(scipy_linalg.eigh(symmetric(m, a) + W + W.T, eigvals_only=True) ** 3), A),
        "scipy_svd": (lambda a: m.sum(scipy_linalg.svd(a, compute_uv=False) ** 2), TALL),
        "scipy_qr": (lambda a: (lambda q, r: m.sum(W[:3, :3] * (r * r)) + m.sum(TALL * (q * q)))(
            *scipy_linalg.qr(a, mode="economic")), TALL),
    }


OURS = losses(anp, anp.linalg, asl)
HESSIANS = ["inv", "cholesky", "eigh", "svdvals"]


@pytest.fixture(scope="module")
def jax_results(x64):
    """JAX's values, gradients and Hessians of every loss, compiled as one program (compiling each
    loss alone costs several times as much)."""
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    theirs = losses(jnp, jnp.linalg, jsl)
    names = sorted(theirs)

    def everything(xs):
        values = {n: theirs[n][0](x) for n, x in zip(names, xs)}
        grads = {n: jax.grad(theirs[n][0])(x) for n, x in zip(names, xs)}
        hessians = {n: jax.hessian(theirs[n][0])(x) for n, x in zip(names, xs) if n in HESSIANS}
        return values, grads, hessians

    results = jax.jit(everything)([jnp.asarray(theirs[n][1]) for n in names])
    return jax.tree_util.tree_map(np.asarray, results)


@pytest.mark.parametrize("name", sorted(OURS))
def test_gradient_equals_jax(name, jax_results):
    values, grads, _ = jax_results
    loss, x = OURS[name]
    np.testing.assert_allclose(loss(x), values[name], rtol=1e-10)
    np.testing.assert_allclose(ad.grad(loss)(x), grads[name], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", HESSIANS)
def test_hessian_equals_jax(name, jax_results):
    loss, x = OURS[name]
    np.testing.assert_allclose(ad.hessian(loss)(x), jax_results[2][name], rtol=1e-7, atol=1e-9)
