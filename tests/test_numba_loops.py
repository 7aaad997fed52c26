"""Loops on the Numba backend whatever they contain: reverse mode of while loops (while_grad) as native
loops over a stack of checkpoints, odeint's gradient compiled whole, and higher-order programs of loops
inside branches."""
from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("numba")

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402
from adarray.backends.numba import checkpointing, runtime  # noqa: E402
from adarray.scipy.integrate import odeint  # noqa: E402


def _sine_loop(steps, policy):
    def f(x, w):
        def body(state):
            k, y = state
            return k + 1, anp.sin(y) * w + 0.1 * k
        return anp.sum(ad.while_loop(lambda s: s[0] < steps, body, (0, x), checkpoint=policy)[1] ** 2)
    return f


@pytest.mark.parametrize("policy", ["all", 3, "binomial"])
@pytest.mark.parametrize("steps", [0, 1, 2, 40])
def test_while_gradients_run_natively_and_agree_with_numpy(policy, steps, monkeypatch):
    # a stack of 4 rows at first, so that 40 kept states make it grow three times
    monkeypatch.setattr(checkpointing, "STACK_BYTES", 1)
    f = _sine_loop(steps, policy)
    x, w = np.array([0.3, -0.5, 0.7]), np.array([1.01, 0.99, -1.02])
    program = ad.make_ir(ad.grad(f, argnums=(0, 1)))(x, w)
    assert [kind for kind, _ in runtime.segments(program)] == ["numba"]
    got = ad.jit(ad.grad(f, argnums=(0, 1)), backend="numba")(x, w)
    want = ad.jit(ad.grad(f, argnums=(0, 1)), backend="numpy")(x, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-12, atol=0)  # FMA contraction: not bit for bit


def test_while_gradient_without_steps_gives_positive_zeros_for_the_consts():
    f = _sine_loop(0, "binomial")
    x, w = np.array([0.3, -0.5]), np.array([1.0, 2.0])
    gx, gw = ad.jit(ad.grad(f, argnums=(0, 1)), backend="numba")(x, w)
    np.testing.assert_array_equal(gx, 2 * x)
    assert np.all(gw == 0) and not np.any(np.signbit(gw))


def test_while_gradient_of_a_scalar_carry_and_second_order():
    def f(a):
        return ad.while_loop(lambda s: s[0] < 25, lambda s: (s[0] + 1, s[1] * a - 0.01 * s[1] ** 2),
                             (0, 1.0), checkpoint="binomial")[1]
    a = 1.05
    for derivative in (ad.grad(f), ad.grad(ad.grad(f))):
        np.testing.assert_allclose(ad.jit(derivative, backend="numba")(a), ad.jit(derivative)(a), rtol=1e-12)


def _decay_loss(rates):
    ys = odeint(lambda y, t, k: -k * y, anp.ones(2), anp.linspace(0.0, 1.0, 3), rates)
    return anp.sum(ys ** 2)


def test_odeint_gradient_is_one_compiled_function():
    rates = np.array([0.5, 1.5])
    program = ad.make_ir(ad.grad(_decay_loss))(rates)
    assert [kind for kind, _ in runtime.segments(program)] == ["numba"]
    got = ad.jit(ad.grad(_decay_loss), backend="numba")(rates)
    np.testing.assert_allclose(got, ad.grad(_decay_loss)(rates), rtol=1e-12)
    # d/dk sum_t exp(-2 k t) = sum_t -2 t exp(-2 k t)
    times = np.linspace(0.0, 1.0, 3)
    exact = [np.sum(-2 * times * np.exp(-2 * k * times)) for k in rates]
    np.testing.assert_allclose(got, exact, rtol=1e-6)


def _looped_branch(x):
    return ad.cond(anp.sum(x) < 0.5, lambda o: ad.fori_loop(0, 1, lambda i, c: anp.sin(c), o), anp.cos, x)


@pytest.mark.parametrize("x", [np.array([0.1, 0.2]), np.array([0.4, 0.7])], ids=["sin branch", "cos branch"])
def test_third_order_programs_of_a_loop_in_a_branch_compile(x):
    # a cond's branch index was named like the program's constants (k2), which Numba then typed as an int
    v = np.array([1.0, -0.5])
    taken = np.sin if np.sum(x) < 0.5 else np.cos
    derivatives = [taken(x), *(taken(x + np.pi / 2 * k) for k in (1, 2, 3))]  # sin^(k)(x) = sin(x + k pi / 2)
    exact = [d * v ** k / math.factorial(k) for k, d in enumerate(derivatives)]

    def third(y):
        first = lambda z: ad.jvp(_looped_branch, (z,), (v,))[1]
        second = lambda z: ad.jvp(first, (z,), (v,))[1]
        return ad.jvp(second, (y,), (v,))[1]

    np.testing.assert_allclose(ad.jit(third, backend="numba")(x), 6 * exact[3], rtol=1e-13)
    coefficients = ad.jit(lambda y: ad.taylor(_looped_branch, 3)(y, v), backend="numba")(x)
    for got, want in zip(coefficients, exact):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    primal, series = ad.jit(lambda y: ad.jet(_looped_branch, (y,), ([v, 0 * v, 0 * v],)), backend="numba")(x)
    np.testing.assert_allclose(primal, exact[0], rtol=1e-13)
    for k, got in enumerate(series, 1):
        np.testing.assert_allclose(got, exact[k] * math.factorial(k), rtol=1e-13)
