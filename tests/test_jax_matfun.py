"""sqrtm and logm lowered natively to XLA (backends/jax/sqrtm_logm.py) against SciPy through the NumPy backend:
values, first and second derivatives (our rules, lowered), the LinAlgError of a matrix without a real principal
root or logarithm, and no host computation in the lowered program."""
from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.linalg

jax = pytest.importorskip("jax")

import adarray as ad  # noqa: E402
from adarray.primitives.matrices import LinAlgError  # noqa: E402
from adarray.scipy import linalg as sl  # noqa: E402

FUNCTIONS = {"sqrtm": (sl.sqrtm, scipy.linalg.sqrtm), "logm": (sl.logm, scipy.linalg.logm)}


def _stack(rng, n):
    """Well-conditioned matrices of size n: I + 0.3 N(0, 1)/sqrt(n), SPD, SPD with eigenvalues down to 1e-6,
    and a non-normal one (a strictly upper triangular part of size 10)."""
    noisy = np.eye(n) + 0.3 * rng.normal(size=(n, n)) / np.sqrt(n)
    b = rng.normal(size=(n, n))
    spd = b @ b.T + 0.1 * np.eye(n)
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    near_singular = (q * np.logspace(-6, 0, n)) @ q.T
    non_normal = np.diag(np.linspace(1.0, 3.0, n)) + np.triu(10.0 * rng.uniform(size=(n, n)), 1)
    return np.stack([noisy, spd, near_singular, non_normal])


def _scipy(function, a):
    return np.stack([np.real(function(m)) for m in a.reshape(-1, *a.shape[-2:])]).reshape(a.shape)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_values_agree_with_scipy(name, n):
    ours, reference = FUNCTIONS[name]
    a = _stack(np.random.default_rng(n), n)
    got = np.asarray(ad.jit(ours, backend="jax")(a))
    want = _scipy(reference, a)
    for k in range(len(a)):  # relative to each matrix's own scale (the near-singular logm has entries ~14)
        np.testing.assert_allclose(got[k], want[k], rtol=1e-10, atol=1e-10 * np.abs(want[k]).max(),
                                   err_msg=f"{name} matrix {k}")


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float32_and_empty(name):
    ours, reference = FUNCTIONS[name]
    a = (2.0 * np.eye(3) + 0.3 * np.random.default_rng(0).normal(size=(3, 3))).astype(np.float32)
    got = ad.jit(ours, backend="jax")(a)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.real(reference(a.astype(np.float64))), rtol=1e-5, atol=1e-6)
    assert np.asarray(ad.jit(ours, backend="jax")(np.zeros((0, 2, 2)))).shape == (0, 2, 2)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_first_and_second_derivatives_agree_with_numpy_backend(name):
    ours, _ = FUNCTIONS[name]
    rng = np.random.default_rng(7)
    a = np.eye(3) + 0.3 * rng.normal(size=(3, 3)) / np.sqrt(3)
    w = rng.normal(size=(3, 3))

    def loss(x):
        return ad.numpy.sum(ours(x) * w)

    for transform in (ad.grad, ad.hessian):
        got = np.asarray(ad.jit(transform(loss), backend="jax")(a))
        want = np.asarray(ad.jit(transform(loss), backend="numpy")(a))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10 * np.abs(want).max())
    # and the gradient against central differences of SciPy's values (an independent reference)
    step, grad = 1e-6, np.asarray(ad.jit(ad.grad(loss), backend="jax")(a))
    _, reference = FUNCTIONS[name]
    for i, j in [(0, 0), (1, 2), (2, 0)]:
        e = np.zeros((3, 3))
        e[i, j] = step
        fd = (np.sum(np.real(reference(a + e)) * w) - np.sum(np.real(reference(a - e)) * w)) / (2 * step)
        np.testing.assert_allclose(grad[i, j], fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("matrix", [np.diag([-1.0, 2.0]), -np.eye(2), np.array([[-4.0]]),
                                    np.stack([np.eye(2), np.diag([1.0, -3.0])])],
                         ids=["negative", "minus-identity", "1x1", "batch"])
def test_no_real_root_raises_like_numpy_backend(name, matrix):
    ours, _ = FUNCTIONS[name]
    with pytest.raises(LinAlgError, match=f"{name}: the matrix .*principal"):
        ad.jit(ours, backend="numpy")(matrix)
    with pytest.raises(LinAlgError, match=f"{name}: the matrix .*no real principal") as raised:
        ad.jit(ours, backend="jax")(matrix)
    if matrix.ndim == 3:
        assert "(1,)" in str(raised.value)  # the failing matrix of the stack is named
    # the error is not left pending: a valid call afterwards returns its value
    fine = np.asarray(ad.jit(ours, backend="jax")(4.0 * np.eye(2)))
    np.testing.assert_allclose(fine, np.eye(2) * (2.0 if name == "sqrtm" else np.log(4.0)), rtol=1e-14)


def test_singular_logm_raises_and_singular_sqrtm_differs_from_scipy():
    with pytest.raises(LinAlgError, match="logm"):
        ad.jit(sl.logm, backend="jax")(np.diag([0.0, 1.0]))
    # documented difference: SciPy has the (non-differentiable) root diag(0, 1); the iteration inverts A
    with pytest.raises(LinAlgError, match="sqrtm"):
        ad.jit(sl.sqrtm, backend="jax")(np.diag([0.0, 1.0]))


def test_no_host_computation(monkeypatch):
    """The values are computed by XLA: lowering works with jax.pure_callback disabled, and the only python
    callback in the HLO is the failure report (one per primitive, in a conditional branch)."""
    def refuse(*args, **kwargs):
        raise AssertionError("jax.pure_callback used")

    monkeypatch.setattr(jax, "pure_callback", refuse)

    def both(x):
        return sl.sqrtm(x) + sl.logm(x)

    text = ad.lower(both, backend="jax")(np.eye(3) + 0.1).as_text()
    targets = re.findall(r"custom_call @(\w+)", text)
    callbacks = [t for t in targets if "callback" in t]
    assert len(callbacks) == 2, targets
    assert "stablehlo.case" in text or "stablehlo.if" in text
    assert "while" in text


def test_jax_vmap_of_the_lowered_program():
    """Under jax.vmap the failure report's lax.cond becomes a select that runs both branches: valid stacks must
    not raise, and an invalid element still does."""
    from adarray.backends import jax as jax_backend

    lowered = jax_backend.lower_program(ad.make_ir(sl.sqrtm)(np.eye(2)))
    with jax_backend.x64():
        roots = jax.vmap(lambda x: lowered(x)[0])(np.stack([4.0 * np.eye(2), 9.0 * np.eye(2)]))
        np.testing.assert_allclose(np.asarray(roots), np.stack([2.0 * np.eye(2), 3.0 * np.eye(2)]), rtol=1e-14)
        with pytest.raises(Exception, match="no real principal square root"):
            jax.block_until_ready(jax.vmap(lambda x: lowered(x)[0])(np.stack([np.eye(2), -np.eye(2)])))


def test_accuracy_near_the_negative_real_axis():
    """Eigenvalues at angle pi - delta: the iteration's first M is nearly singular (its eigenvalues ~ delta^2/4),
    so the error grows like eps / delta^2 (documented in backends/jax/sqrtm_logm.py); still a real result."""
    for delta, tolerance in [(0.5, 1e-14), (0.01, 1e-11), (1e-4, 1e-7)]:
        t = np.pi - delta
        a = 2.0 * np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        for name, (ours, reference) in FUNCTIONS.items():
            got = np.asarray(ad.jit(ours, backend="jax")(a))
            want = np.real(reference(a))
            assert np.abs(got - want).max() <= tolerance * np.abs(want).max(), (name, delta)
