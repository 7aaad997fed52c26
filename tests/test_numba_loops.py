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
from adarray.backends.numba import checkpointing, options, runtime  # noqa: E402
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


def _looped_branch_scalar(x):
    # a fori_loop inside a cond (issue 21, section 5), reduced to a scalar for grad
    looped = lambda o: ad.fori_loop(0, 3, lambda i, c: anp.sin(c) * 0.9 + 0.1 * o, o)  # noqa: E731
    return anp.sum(ad.cond(anp.sum(x) < 0.5, looped, lambda o: anp.cos(o) * o, x) ** 2)


@pytest.mark.parametrize("x", [np.array([0.1, 0.2]), np.array([0.4, 0.7])], ids=["loop branch", "cos branch"])
@pytest.mark.parametrize("order", ["grad^3", "jacfwd(jacrev(grad))"])
def test_third_derivatives_of_a_loop_in_a_branch_agree_with_numpy(x, order):
    # the reverse-over-reverse programs pass constant arrays: a branch index named like them (k<n>) broke typing
    if order == "grad^3":  # each order reduced to a scalar for the next grad
        second = ad.grad(lambda w: anp.sum(ad.grad(_looped_branch_scalar)(w) ** 2))
        third = ad.grad(lambda z: anp.sum(second(z) * z))
    else:
        third = ad.jacfwd(ad.jacrev(ad.grad(_looped_branch_scalar)))
    want = ad.jit(third, backend="numpy")(x)
    got = ad.jit(third, backend="numba")(x)
    assert np.shape(got) == np.shape(want) and np.all(np.isfinite(want))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


# --- scratch arrays kept across calls (workspace.py) ----------------------------------------------------------


@pytest.fixture
def every_scratch_array(monkeypatch):
    """Every scratch array from the workspace, however small (by default from options.WORKSPACE_MIN_BYTES)."""
    monkeypatch.setattr(options, "WORKSPACE_MIN_BYTES", 0)


def test_only_large_scratch_arrays_come_from_the_workspace():
    def f(x):
        return anp.sum(anp.cos(anp.cumsum(anp.exp(anp.cumsum(x)))))

    small, large = np.linspace(-1.0, 1.0, 1000), np.linspace(-1.0, 1.0, options.WORKSPACE_MIN_BYTES // 8)
    assert runtime.CompiledSegment(ad.make_ir(f)(small), "small").workspace.plan.params == []
    plan = runtime.CompiledSegment(ad.make_ir(f)(large), "large").workspace.plan
    assert plan.params and all(shape == large.shape for _, _, shape, _ in plan.params)  # the two cumsums


def test_scratch_arrays_are_reused_across_calls_and_share_memory(every_scratch_array):
    def f(x):
        a = anp.exp(anp.cumsum(x))        # scratch, dead after b
        b = anp.cumsum(anp.sin(a)) * 2.0  # scratch, dead after c
        c = anp.cumsum(anp.cos(b))
        return anp.sum(c * c)

    x = np.linspace(-1.0, 1.0, 1000)
    segment = runtime.CompiledSegment(ad.make_ir(f)(x), "f")
    plan = segment.workspace.plan
    assert len(plan.params) >= 2
    assert plan.nbytes < sum(int(np.prod(shape)) * dtype.itemsize for _, _, shape, dtype in plan.params)
    first = segment.workspace.views()
    want = ad.jit(f)(x)
    for _ in range(3):
        np.testing.assert_allclose(segment(x)[0], want, rtol=1e-12)
        assert all(a is b for a, b in zip(segment.workspace.views(), first))


def test_blas_products_and_packed_operands_come_from_the_workspace(every_scratch_array):
    # GMM's "kij,nkj->nki": operands packed per batch element and the product stored, on every call a fresh
    # 2 MB array without the workspace (d=10 K=25: 2.8 ms instead of 0.68)
    rng = np.random.default_rng(5)
    lower, centred = rng.normal(size=(4, 8, 8)), rng.normal(size=(200, 4, 8))

    def f(a, c):
        return anp.sum(anp.tanh(anp.einsum("kij,nkj->nki", a, c + 1.0)) ** 2)

    segment = runtime.CompiledSegment(ad.make_ir(f)(lower, centred), "blas")
    assert "_la.dot_into(" in segment.text and "np.empty(" not in segment.text
    first = segment.workspace.views()
    want = np.sum(np.tanh(np.einsum("kij,nkj->nki", lower, centred + 1.0)) ** 2)
    for _ in range(2):
        np.testing.assert_allclose(segment(lower, centred)[0], want, rtol=1e-12)
        assert all(a is b for a, b in zip(segment.workspace.views(), first))


@pytest.mark.parametrize("steps", [3, 4])
def test_results_never_alias_a_later_call(steps):
    # the fold's carry lives in two arrays swapped at each step: either may be returned
    def f(x, scale):
        carry, ys = ad.fold(lambda c, k: (anp.sin(c) * scale + k, anp.sum(c)), x, anp.arange(float(steps)))
        return carry, ys, (carry * 2.0)[1:]

    x = np.linspace(0.0, 1.0, 6)
    staged = ad.jit(f, backend="numba")
    first = staged(x, 0.5)
    kept = [np.array(a, copy=True) for a in first]
    second = staged(x, 0.25)
    for a, b in zip(first, kept):
        np.testing.assert_array_equal(a, b)  # the second call wrote none of the first call's results
    for a, b in zip(second, ad.jit(f)(x, 0.25)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for a in first:
        for b in second:
            assert not np.may_share_memory(a, b)


def test_a_result_found_in_the_workspace_takes_its_slot_along(every_scratch_array):
    def f(x):
        return anp.cumsum(anp.exp(anp.cumsum(x)))

    x = np.linspace(0.0, 1.0, 8)
    segment = runtime.CompiledSegment(ad.make_ir(f)(x), "f")
    views = segment.workspace.views()
    assert views, "the inner cumsum's array is scratch"
    segment.workspace.release([views[0][1:]])  # as if a result were a view of the scratch array
    fresh = segment.workspace.views()
    assert not np.may_share_memory(fresh[0], views[0])
    np.testing.assert_allclose(segment(x)[0], np.cumsum(np.exp(np.cumsum(x))), rtol=1e-12)


def test_each_thread_has_its_own_workspace(every_scratch_array):
    import threading

    def f(x):
        return anp.sum(anp.cumsum(anp.exp(anp.cumsum(x))))

    x = np.linspace(0.0, 1.0, 8)
    segment = runtime.CompiledSegment(ad.make_ir(f)(x), "f")
    segment(x)
    found = []
    thread = threading.Thread(target=lambda: (segment(x), found.append(segment.workspace.views())))
    thread.start()
    thread.join()
    assert found and not any(np.may_share_memory(a, b) for a in found[0] for b in segment.workspace.views())


def test_the_process_allocator_is_left_alone_by_default(monkeypatch):
    monkeypatch.setattr(runtime, "_MALLOC_TUNED", [])
    with ad.config.override(numba_keep_memory=False):  # the default
        ad.jit(lambda v: anp.sin(v) * 2.0, backend="numba")(np.ones(3))
        assert runtime._MALLOC_TUNED == [] and runtime.keep_freed_memory() is False
