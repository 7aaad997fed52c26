"""Derivatives through reversible functions (reverse computing, forward mode, second order, vmap, jit), their
memory, the IR they appear in, Bennett's trade-off, and the Numba backend."""
import importlib.util
import math
import re
import tracemalloc

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
import adarray.reversible as rv
from adarray.backends.numpy import reversible as numpy_reversible
from adarray.testing import numerical_derivative, numerical_gradient

RNG = np.random.default_rng(5)


@rv.reversible
def pendulum_chain(q, p, h, steps):
    """Symplectic Euler on q'' = -sin(q) - 0.1 q^3, every element of the arrays q, p independently."""
    for _ in range(steps):
        p -= h * (anp.sin(q) + 0.1 * q ** 3)
        q += h * p


def pendulum_array(q, p, h, steps):
    for _ in range(steps):
        p = p - h * (anp.sin(q) + 0.1 * q ** 3)
        q = q + h * p
    return q, p


@rv.reversible
def mixed(y, x, w, n):
    t = rv.alloc(0.0)
    with rv.compute():
        for i in range(len(w)):
            t += 0.5 * anp.tanh(w[i])
    for _ in range(n):
        y += anp.exp(-t ** 2) * anp.sum(x * w)
        rv.rot(x[0], x[1], t)
    rv.uncompute()
    rv.free(t, 0.0)


def mixed_array(y, x, w, n):
    t = anp.sum(0.5 * anp.tanh(w))
    for _ in range(n):
        y = y + anp.exp(-t ** 2) * anp.sum(x * w)
        c, s = anp.cos(t), anp.sin(t)
        x = anp.concatenate([anp.stack([x[0] * c - x[1] * s, x[1] * c + x[0] * s]), x[2:]])
    return y, x


# --- first order -------------------------------------------------------------------------------------------

def test_gradient_matches_the_array_program_and_finite_differences():
    q, p = RNG.standard_normal(4), RNG.standard_normal(4)
    loss = lambda q, p, h: anp.sum(pendulum_chain(q, p, h, 30)[0] ** 2) + anp.sum(pendulum_chain(q, p, h, 30)[1])  # noqa
    reference = lambda q, p, h: anp.sum(pendulum_array(q, p, h, 30)[0] ** 2) + anp.sum(pendulum_array(q, p, h, 30)[1])  # noqa
    got = ad.grad(loss, argnums=(0, 1, 2))(q, p, 0.05)
    want = ad.grad(reference, argnums=(0, 1, 2))(q, p, 0.05)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(got[0], numerical_gradient(lambda q: float(loss(q, p, 0.05)), q), rtol=1e-6)

    y, x, w = 0.3, RNG.standard_normal(4), RNG.standard_normal(4)
    got = ad.grad(lambda y, x, w: mixed(y, x, w, 3)[0] + anp.sum(mixed(y, x, w, 3)[1] ** 2), argnums=(0, 1, 2))(y, x, w)
    want = ad.grad(lambda y, x, w: mixed_array(y, x, w, 3)[0] + anp.sum(mixed_array(y, x, w, 3)[1] ** 2),
                   argnums=(0, 1, 2))(y, x, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-11, atol=1e-12)


def test_rv_grad_gives_every_argument_and_none_for_integers():
    q, p = RNG.standard_normal(3), RNG.standard_normal(3)
    grads = rv.grad(pendulum_chain, loss=2)(q, p, 0.1, 5)  # the loss is h itself: d h_out / d h = 1
    np.testing.assert_array_equal(grads[0], 0.0)
    assert grads[2] == 1.0 and grads[3] is None
    with pytest.raises(ad.ArgumentError, match="must be a float scalar"):
        rv.grad(pendulum_chain, loss=0)(q, p, 0.1, 5)
    with pytest.raises(ad.ArgumentError, match="loss must be an argument index"):
        rv.grad(pendulum_chain, loss=7)


def test_forward_mode_and_jvp():
    q, p, v = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    f = lambda q: pendulum_chain(q, p, 0.05, 20)[0]  # noqa: E731
    value, tangent = ad.jvp(f, (q,), (v,))
    want_value, want_tangent = ad.jvp(lambda q: pendulum_array(q, p, 0.05, 20)[0], (q,), (v,))
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    np.testing.assert_allclose(tangent, want_tangent, rtol=1e-11)
    np.testing.assert_allclose(ad.jacfwd(f)(q), ad.jacrev(f)(q), rtol=1e-11, atol=1e-13)


def test_second_order_through_a_reversible_call():
    x, w = RNG.standard_normal(4), RNG.standard_normal(4)
    f = lambda x: mixed(0.1, x, w, 2)[0]  # noqa: E731
    g = lambda x: mixed_array(0.1, x, w, 2)[0]  # noqa: E731
    want = ad.hessian(g)(x)
    for label, transform in (("hessian", ad.hessian), ("rev(rev)", lambda f: ad.jacrev(ad.jacrev(f))),
                             ("fwd(rev)", lambda f: ad.jacfwd(ad.jacrev(f))),
                             ("fwd(fwd)", lambda f: ad.jacfwd(ad.jacfwd(f)))):
        np.testing.assert_allclose(transform(f)(x), want, rtol=1e-9, atol=1e-11, err_msg=label)
    np.testing.assert_allclose(ad.grad(lambda x: ad.grad(f)(x) @ w)(x), want @ w, rtol=1e-9, atol=1e-11)


def test_vmap_and_jit_through_a_reversible_call():
    qs, p = RNG.standard_normal((5, 3)), RNG.standard_normal(3)
    f = lambda q: anp.sum(pendulum_chain(q, p, 0.05, 10)[0] ** 2)  # noqa: E731
    batched = ad.vmap(f)(qs)
    np.testing.assert_allclose(batched, [f(q) for q in qs], rtol=1e-14)
    gradients = ad.vmap(ad.grad(f))(qs)
    np.testing.assert_allclose(gradients, [ad.grad(f)(q) for q in qs], rtol=1e-13)
    np.testing.assert_allclose(ad.jit(ad.grad(f))(qs[0]), gradients[0], rtol=1e-14)
    nested = ad.vmap(ad.vmap(f))(qs.reshape(5, 1, 3))
    np.testing.assert_allclose(nested.reshape(5), batched, rtol=1e-14)


def test_inverse_returns_the_inputs():
    q, p = RNG.standard_normal(4), RNG.standard_normal(4)
    out = pendulum_chain(q, p, 0.05, 200)
    back = rv.invert(pendulum_chain)(*out)
    np.testing.assert_allclose(back[0], q, rtol=1e-12, atol=1e-13)  # floats: up to rounding
    np.testing.assert_allclose(back[1], p, rtol=1e-12, atol=1e-13)
    assert back[3] == 200  # integers: exactly
    inverse_inside = ad.grad(lambda q: anp.sum(rv.invert(pendulum_chain)(q, p, 0.05, 5)[0]))(q)
    reference = ad.grad(lambda q: anp.sum(_backwards(q, p, 0.05, 5)))(q)
    np.testing.assert_allclose(inverse_inside, reference, rtol=1e-12)


def _backwards(q, p, h, steps):
    for _ in range(steps):
        q = q - h * p
        p = p + h * (anp.sin(q) + 0.1 * q ** 3)
    return q


# --- memory: no tape ---------------------------------------------------------------------------------------

@rv.reversible
def anharmonic(q, p, steps):
    for _ in range(steps):
        p -= 1e-3 * q ** 3
        q += 1e-3 * p


def _gradient_peak(steps):
    gradient = rv.grad(anharmonic, loss=0)
    gradient(0.5, 0.1, 10)
    tracemalloc.start()
    try:
        value = gradient(0.5, 0.1, steps)
        return tracemalloc.get_traced_memory()[1], value
    finally:
        tracemalloc.stop()


def test_gradient_of_a_long_loop_holds_a_constant_number_of_states():
    previous = rv.set_reversible_backend("numpy")  # tracemalloc sees the interpreter's allocations
    try:
        short_peak, _ = _gradient_peak(100)
        long_peak, (dq, dp, _) = _gradient_peak(100_000)
    finally:
        rv.set_reversible_backend(previous)
    assert long_peak < 20_000 and long_peak < short_peak + 4_000, (short_peak, long_peak)  # a tape: >= 1.6 MB
    difference = numerical_derivative(lambda q: anharmonic(q, 0.1, 100_000)[0], 0.5, 1e-6)
    assert dq == pytest.approx(difference, rel=1e-6)


# --- the IR -----------------------------------------------------------------------------------------------

def test_one_equation_in_the_ir_that_prints_and_parses():
    x = RNG.standard_normal(3)
    program = ad.make_ir(lambda x: pendulum_chain(x, x, 0.1, 4)[0])(x)
    text = str(program)
    assert text.count("reversible[") == 1 and "(for," in text
    assert str(ad.parse_program(text)) == text
    gradient = ad.make_ir(ad.grad(lambda x: anp.sum(pendulum_chain(x, x, 0.1, 4)[0])))(x)
    assert "reversible_grad[" in str(gradient)
    parsed = ad.parse_program(str(gradient))
    from adarray.backends.numpy import compile_program
    np.testing.assert_allclose(compile_program(parsed)(x)[0], ad.grad(lambda x: anp.sum(
        pendulum_chain(x, x, 0.1, 4)[0]))(x), rtol=1e-14)


def test_arguments_of_the_wrong_kind():
    with pytest.raises(ad.ArgumentError, match="takes 4 arguments"):
        pendulum_chain(1.0, 2.0)
    with pytest.raises(ad.ArgumentError, match="dtype <U1"):
        pendulum_chain(np.array(["a", "b"]), np.ones(2), 0.1, 1)
    with pytest.raises(rv.ReversibilityError, match="the float 'p' cannot accumulate a complex value"):
        pendulum_chain(np.ones(2, complex), np.ones(2), 0.1, 1)
    with pytest.raises(rv.ReversibilityError, match="the range bound `steps` is not an integer"):
        pendulum_chain(np.ones(2), np.ones(2), 0.1, 1.5)


def test_keyword_arguments():
    q, p = RNG.standard_normal(3), RNG.standard_normal(3)
    by_name = pendulum_chain(q, p=p, steps=3, h=0.1)
    for got, want in zip(by_name, pendulum_chain(q, p, 0.1, 3)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(rv.grad(pendulum_chain, loss=2)(q, p, steps=3, h=0.1)[1],
                                  rv.grad(pendulum_chain, loss=2)(q, p, 0.1, 3)[1])
    with pytest.raises(ad.ArgumentError, match=r"'pendulum_chain'\(q, p, h, steps\): no argument named 'dt'"):
        pendulum_chain(q, p, dt=0.1, steps=3)
    with pytest.raises(ad.ArgumentError, match="'q' given twice"):
        pendulum_chain(q, p, 0.1, 3, q=q)
    with pytest.raises(ad.ArgumentError, match="'steps' is missing"):
        pendulum_chain(q, p, h=0.1)


# --- Bennett's time-space trade-off ------------------------------------------------------------------------

@rv.reversible
def logistic_step(dst, src):
    dst += 3.7 * (src - src ** 2)


@pytest.mark.parametrize("k, m", [(2, 3), (2, 5), (3, 2), (3, 3), (4, 2), (5, 2)])
def test_bennett_counts_match_the_closed_forms(k, m):
    n = k ** m
    final, stats = rv.bennett(logistic_step, 0.3, k=k, n=n)
    assert stats.calls == (2 * k - 1) ** m
    assert stats.peak_states == m * (k - 1) + 2
    x = 0.3
    for _ in range(n):
        x = 3.7 * x * (1.0 - x)
    assert final == pytest.approx(x, rel=1e-9)


def test_bennett_example_of_the_issue_and_odd_lengths():
    final, stats = rv.bennett(logistic_step, 0.3, k=2, n=8)
    assert stats == (27, 5)
    for n in (1, 5, 7, 10):
        final, stats = rv.bennett(logistic_step, np.array([0.3, 0.6]), k=3, n=n)
        x = np.array([0.3, 0.6])
        for _ in range(n):
            x = 3.7 * x * (1.0 - x)
        np.testing.assert_allclose(final, x, rtol=1e-9)
        assert stats.calls >= n
    assert rv.bennett(logistic_step, 0.3, k=2, n=0) == (0.3, (0, 1))
    with pytest.raises(ad.ArgumentError, match="k must be an integer >= 2"):
        rv.bennett(logistic_step, 0.3, k=1, n=4)


# --- Numba -------------------------------------------------------------------------------------------------

@pytest.fixture
def numba_backend():
    if importlib.util.find_spec("numba") is None:
        pytest.skip("numba is not installed")
    previous = rv.set_reversible_backend("numba")
    yield
    rv.set_reversible_backend(previous)


@rv.reversible
def numba_scalar_loop(y, x, n):
    t = rv.alloc(0.0)
    for i in range(n):
        with rv.compute():
            t += anp.sin(x * i)
        y += t ** 2
        rv.uncompute()
    rv.free(t, 0.0)


def test_numba_runs_functions_and_gradients_natively(numba_backend):
    x = 0.7
    out = numba_scalar_loop(0.0, x, 50)
    want = sum(math.sin(x * i) ** 2 for i in range(50))
    assert out[0] == pytest.approx(want, rel=1e-13)
    grads = rv.grad(numba_scalar_loop, loss=0)(0.0, x, 50)
    assert grads[1] == pytest.approx(sum(2 * math.sin(x * i) * math.cos(x * i) * i for i in range(50)), rel=1e-12)
    q, p = RNG.standard_normal(3), RNG.standard_normal(3)
    np.testing.assert_allclose(ad.grad(lambda q: anp.sum(pendulum_chain(q, p, 0.05, 20)[0]))(q),
                               ad.grad(lambda q: anp.sum(pendulum_array(q, p, 0.05, 20)[0]))(q), rtol=1e-11)
    program = numba_scalar_loop.program([("f", 0), ("f", 0), ("i", 0)])
    assert numpy_reversible.compiled(program).native is not None


def test_numba_reports_failed_checks_with_their_values(numba_backend):
    with pytest.raises(rv.ReversibilityError, match=r"'t' is not restored: rv.free expects 0.0 \(atol 1e-08\), "
                                                    r"it holds 0.25"):
        _leaky(0.0, 0.25)


@rv.reversible
def _leaky(y, x):
    t = rv.alloc(0.0)
    t += x
    y += t
    rv.free(t, 0.0)


@rv.reversible
def _poke(y, x, i):
    x[i] += y
    y += x[i] * 2.0


def test_numba_checks_indices_as_the_interpreter_does(numba_backend):
    assert _poke(1.0, np.arange(3.0), 2)[0] == 7.0
    with pytest.raises(ad.ExecutionError, match="reversible '_poke'.*IndexError"):
        _poke(1.0, np.arange(3.0), 7)  # compiled without bounds checks it would read and write past the array
    with pytest.raises(ad.ExecutionError, match="IndexError"):
        rv.grad(_poke, loss=0)(1.0, np.arange(3.0), 3)


def test_numba_runs_a_batch_in_one_native_loop(numba_backend):
    q, p = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 3))
    batched = ad.vmap(lambda q, p: pendulum_chain(q, p, 0.05, 20)[0])(q, p)
    looped = np.stack([pendulum_chain(q[b], p[b], 0.05, 20)[0] for b in range(5)])
    np.testing.assert_allclose(batched, looped, rtol=1e-14)
    gradients = ad.vmap(ad.grad(lambda q, p: anp.sum(pendulum_chain(q, p, 0.05, 20)[0])))(q, p)
    reference = np.stack([ad.grad(lambda q, p_b=p_b: anp.sum(pendulum_array(q, p_b, 0.05, 20)[0]))(q_b)
                          for q_b, p_b in zip(q, p)])
    np.testing.assert_allclose(gradients, reference, rtol=1e-11)
    program = pendulum_chain.program([("f", 1), ("f", 1), ("f", 0), ("i", 0)])
    assert numpy_reversible.compiled(program).native.batched is not None
    with pytest.raises(rv.ReversibilityError, match="it holds 0.25"):  # a failed check inside the native loop
        ad.vmap(lambda x: _leaky(0.0, x)[0])(np.array([0.0, 0.25, 0.0]))


@rv.reversible
def _countdown(y, x, n):
    if n > 0:
        y += x
        m = rv.alloc(0)
        m += n - 1
        _countdown(y, x, m)
        rv.free(m, n - 1)


def test_numba_does_not_cache_recursive_programs_on_disk(numba_backend):
    # Numba compiles them, but a later process loading them from its cache crashed (segmentation fault)
    from adarray.backends.numba import reversible as numba_reversible

    assert _countdown(0.0, 1.5, 4)[0] == 6.0
    assert ad.grad(lambda x: _countdown(0.0, x, 4)[0])(1.5) == 4.0
    recursive = numpy_reversible.compiled(_countdown.program([("f", 0), ("f", 0), ("i", 0)]))
    assert recursive.native is not None
    decorators = re.findall(r"@numba.njit\((cache=\w+), error_model=\"numpy\", boundscheck=",
                            numba_reversible.module_source(recursive))
    assert decorators and set(decorators) == {"cache=False"}  # every generated function (the helpers are cached)
    straight = numpy_reversible.compiled(_poke.program([("f", 0), ("f", 1), ("i", 0)]))
    assert "cache=False" not in numba_reversible.module_source(straight)


# --- calls, and the command line -----------------------------------------------------------------------------

def test_closed_over_and_recursive_calls():
    @rv.reversible
    def inner(y, x):
        y += 2.0 * x

    @rv.reversible
    def outer(y, x, n):
        if n > 0:
            inner(y, x)
            m = rv.alloc(0)
            m += n - 1
            outer(y, x, m)
            rv.free(m, n - 1)

    assert outer(0.0, 1.5, 4)[0] == 12.0
    assert rv.invert(outer)(12.0, 1.5, 4)[0] == 0.0
    assert ad.grad(lambda x: outer(0.0, x, 4)[0])(1.5) == 8.0


def test_adarray_ir_prints_the_reversible_equation(tmp_path, capsys):
    from adarray.cli import main

    source = tmp_path / "model.py"
    source.write_text(
        "import adarray.numpy as anp\n"
        "import adarray.reversible as rv\n\n\n"
        "@rv.reversible\n"
        "def norm(res, y, x):\n"
        "    for i in range(len(x)):\n"
        "        y += x[i] ** 2\n"
        "    res += anp.sqrt(y)\n\n\n"
        "def loss(x):\n"
        "    return norm(0.0, 0.0, x)[0]\n")
    assert main(["ir", f"{source}:loss", "--shapes", "f64[3]"]) == 0
    out = capsys.readouterr().out
    assert "= reversible[batch=0, program=((norm, (res, y, x)" in out
    assert "reversible_grad[" in out  # the gradient program
