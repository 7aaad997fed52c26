"""Reversible programs lowered to XLA (backends/jax/reversible.py) against the NumPy interpreter: values and
gradients (reverse computing) of the reversible examples, under jit and vmap, the run-time checks' errors, and the
host fallback of recursive programs. The lowering must stay native: no host callback in the HLO."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

jax = pytest.importorskip("jax")

from benchmarks.reversible import besselj, gmm_objective, leapfrog  # noqa: E402

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402
import adarray.reversible as rv  # noqa: E402
import adarray.tree_util as tu  # noqa: E402
from adarray.backends.jax import reversible as jax_reversible  # noqa: E402
from adarray.core.errors import ExecutionError, ReversibilityError  # noqa: E402
from adarray.sparse import reversible_loops as kernels  # noqa: E402
from test_reversible_examples import unitary  # noqa: E402  (the Givens example of the interpreter's tests)
from test_reversible_features import (  # noqa: E402  (the issue 22 statements, as the interpreter runs them)
    array_steps,
    complex_loss,
    damped_map,
    exp_series,
    overfull_example,
    power,
    save_and_restore,
)
from test_reversible_instructions import _params, network, scaled_sines, spin  # noqa: E402

RNG = np.random.default_rng(15)


@rv.reversible
def stepped(y, x, n):
    """Loops with bounds known only at run time, stepped and reversed; an if on data; integer state."""
    for i in reversed(range(1, n, 2)):
        y += x[i] * x[i - 1]
    if x[0] > 0:
        y *= 2.0
    else:
        y -= 1.0
    c = rv.alloc(0)
    while rv.while_(c < n, c > 0):
        x[c % 4] += 0.25 * anp.sin(y)
        c += 1
    rv.free(c, n)


@rv.reversible
def fib(out, n):
    if n <= 1:
        out += n
    else:
        n1 = rv.alloc(0)
        n1 += n - 1
        fib(out, n1)
        n1 -= 1
        fib(out, n1)
        n1 += 1
        rv.free(n1, n - 1)


def _gmm_args():
    n, d, k = 6, 3, 4
    return (RNG.standard_normal(k), RNG.standard_normal((k, d)), 0.3 * RNG.standard_normal((k, d * (d + 1) // 2)),
            RNG.standard_normal((n, d)))


S = scipy.sparse.random(9, 7, density=0.3, format="csr", random_state=3)

# (label, function of float arrays returning a scalar, arguments): each is a call of one reversible function
EXAMPLES = [
    ("leapfrog", lambda q, p: anp.sum(leapfrog(q, p, 50)[0] ** 2), (RNG.standard_normal(4), RNG.standard_normal(4))),
    ("bessel (while)", lambda z: besselj(0.0, 2, z)[0], (np.float64(1.3),)),
    ("givens", lambda x, t: anp.sum(anp.arange(5.0) * unitary(x, t)[0]), (RNG.standard_normal(5),
                                                                          RNG.uniform(-3, 3, 10))),
    ("gmm", lambda a, mu, icf, x: gmm_objective(0.0, a, mu, icf, x, 1.3, 2)[0], _gmm_args()),
    ("sparse matvec", lambda d, v: anp.sum(kernels.csr_matvec(np.zeros(9), d, S.indices, S.indptr, v)[0] ** 2),
     (S.data, RNG.standard_normal(7))),
    ("stepped", lambda y, x: anp.sum(stepped(y, x, np.int64(6))[1]) + stepped(y, x, np.int64(5))[0],
     (np.float64(0.3), RNG.standard_normal(7))),
]


@pytest.fixture
def no_host_calls(monkeypatch):
    """Lowering fails if anything goes to the host: every host call of the backend is a jax.pure_callback."""
    def refuse(callback, *args, **kwargs):
        raise AssertionError(f"{callback} was lowered to a host callback (jax.pure_callback)")

    monkeypatch.setattr(jax, "pure_callback", refuse)


@pytest.mark.parametrize("label, fn, args", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_values_and_gradients_agree_with_the_interpreter(label, fn, args, no_host_calls):
    argnums = tuple(range(len(args)))
    for transformed in (fn, ad.grad(fn, argnums=argnums)):
        want = transformed(*args)
        got = ad.jit(transformed, backend="jax")(*args)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-14, err_msg=label)


def test_integer_and_rotation_programs_are_bitwise_equal(no_host_calls):
    """Integer state, swaps and + - * / on floats: the same IEEE operations in the same order as the interpreter."""
    x, y = RNG.standard_normal(6), RNG.standard_normal(6)
    program = lambda x, y: kernels.paired_dot(0.0, x, y, np.arange(6), np.arange(6)[::-1].copy())[0]  # noqa: E731
    assert float(ad.jit(program, backend="jax")(x, y)) == float(program(x, y))
    grad = ad.grad(program, argnums=(0, 1))
    for g, w in zip(ad.jit(grad, backend="jax")(x, y), grad(x, y)):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_vmap_of_values_and_gradients(no_host_calls):
    thetas = RNG.uniform(-3, 3, (3, 10))
    x = RNG.standard_normal((3, 5))
    fn = lambda x, t: anp.sum(anp.arange(5.0) * unitary(x, t)[0])  # noqa: E731
    for transformed in (ad.vmap(fn), ad.vmap(ad.grad(fn, argnums=(0, 1)))):
        want = transformed(x, thetas)
        got = ad.jit(transformed, backend="jax")(x, thetas)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-14)
    z = np.array([0.5, 1.0, 2.5])  # the while loop runs a different number of times per batch element
    bessel = ad.vmap(ad.grad(lambda z: besselj(0.0, 2, z)[0]))
    np.testing.assert_allclose(np.asarray(ad.jit(bessel, backend="jax")(z)), bessel(z), rtol=1e-12)


def test_second_order_and_float32():
    second = ad.grad(ad.grad(lambda z: besselj(0.0, 2, z)[0]))
    assert float(ad.jit(second, backend="jax")(1.0)) == pytest.approx(float(second(1.0)), rel=1e-12)
    before = jax.config.jax_enable_x64
    q, p = RNG.standard_normal(4).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
    grad = ad.grad(lambda q, p: anp.sum(leapfrog(q, p, 20)[0] ** 2), argnums=(0, 1))
    for g, w in zip(ad.jit(grad, backend="jax")(q, p), grad(q, p)):
        assert g.dtype == np.float32
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5)
    assert jax.config.jax_enable_x64 == before


@rv.reversible
def leaky(y, x):
    t = rv.alloc(0.0)
    t += x
    y += t
    rv.free(t, 0.0)


@rv.reversible
def poke(y, x, i):
    y += x[i]


@rv.reversible
def bad_branch(y, x):
    if rv.if_(x > 0, y > 0):
        y += x


@rv.reversible
def bad_while(y, n):
    c = rv.alloc(0)
    while rv.while_(c < n, c > 1):
        c += 1
    rv.free(c, n)


@rv.reversible
def aliased(x, i, j):
    x[i] += x[j]


@rv.reversible
def overrun(y, x):
    for i in range(len(x) + 1):  # short loops are unrolled, long ones not: both must check the last index
        y += x[i]


@pytest.mark.parametrize("fn, args", [
    (lambda x: leaky(0.0, x)[0], (1.0,)),
    (lambda x, i: poke(0.0, x, i)[0], (np.ones(3), np.int64(5))),
    (lambda x, i: poke(0.0, x, i)[0], (np.ones(3), np.int64(-4))),
    (lambda y, x: bad_branch(y, x)[0], (-1.0, 0.5)),
    (lambda n: bad_while(0.0, n)[0], (np.int64(3),)),
    (lambda x, i, j: aliased(x, i, j)[0], (np.ones(3), np.int64(1), np.int64(1))),
    (lambda x: overrun(0.0, x)[0], (np.ones(3),)),
    (lambda x: overrun(0.0, x)[0], (np.ones(20),)),
], ids=["ancilla", "index", "negative index", "if post-condition", "while post-condition", "aliased elements",
        "unrolled loop past the end", "loop past the end"])
def test_failed_checks_raise_the_interpreters_error(fn, args):
    with pytest.raises((ReversibilityError, ExecutionError)) as expected:
        fn(*args)
    with pytest.raises(type(expected.value)) as got:
        ad.jit(fn, backend="jax")(*args)
    assert str(got.value).split(" (at ")[0] == str(expected.value).split(" (at ")[0]


def test_checks_that_pass_leave_the_values_alone():
    assert float(ad.jit(lambda x, i: poke(0.0, x, i)[0], backend="jax")(np.arange(3.0), np.int64(-1))) == 2.0
    assert float(ad.jit(lambda y, x: bad_branch(y, x)[0], backend="jax")(1.0, 0.5)) == 1.5


@rv.reversible
def scratch_of_runtime_size(y, x, n):
    for i in range(len(x)):
        t = rv.alloc(anp.zeros(n))  # a shape XLA cannot fix at compile time: found inside the loop's trace
        t[0] += x[i]
        y += t[0] * 2.0
        t[0] -= x[i]
        rv.free(t, 0.0)


def test_a_runtime_shape_falls_back_to_the_host():
    program = scratch_of_runtime_size.program([("f", 0), ("f", 1), ("i", 0)])
    x = np.arange(3.0)
    assert not jax_reversible.lowered_natively(program, (0.0, x, np.int64(2)))
    f = lambda x, n: scratch_of_runtime_size(0.0, x, n)[0]  # noqa: E731
    assert float(ad.jit(f, backend="jax")(x, np.int64(2))) == 6.0
    np.testing.assert_array_equal(np.asarray(ad.jit(ad.grad(f), backend="jax")(x, np.int64(2))), [2.0, 2.0, 2.0])


def test_recursive_programs_run_on_the_host_with_exact_values():
    program = fib.program([("i", 0), ("i", 0)])
    assert jax_reversible.recursive(program) and not jax_reversible.lowered_natively(program, (0, 0))
    assert int(ad.jit(lambda n: fib(np.int64(10), n)[0], backend="jax")(np.int64(12))) == 154
    assert jax_reversible.lowered_natively(unitary.program([("f", 1), ("f", 1)]), (np.ones(3), np.ones(3)))


# --- the language of issue 22: stacks, lognumbers, complex values, instructions, structured arguments -------

_COMPLEX = np.random.default_rng(8)
FEATURES = [
    ("stack", lambda x, r: damped_map(0.0, x, r, 30)[0], (np.float64(0.4), np.float64(2.1))),
    ("stacks through calls", lambda x: save_and_restore(1.0, x, np.int64(3))[0], (np.float64(0.5),)),
    ("lognumber", lambda x: power(0.0, x, 7)[0], (np.float64(1.3),)),
    ("lognumber while", lambda x: exp_series(0.0, x)[0], (np.float64(3.5),)),
    ("complex", lambda a, x, t: complex_loss(0.0, np.zeros(3, complex), a, x, t)[0],
     (_COMPLEX.standard_normal((3, 4)) + 1j * _COMPLEX.standard_normal((3, 4)),
      _COMPLEX.standard_normal(4) + 1j * _COMPLEX.standard_normal(4), np.float64(0.4))),
    ("instruction", lambda y, s: scaled_sines(0.0, y, s)[0], (np.array([0.4, -1.1, 2.0]), np.array([0.3, -0.2, 0.5]))),
    ("instruction, integer parameter", lambda x, t: anp.sum(anp.arange(3.0) * spin(x, t, 4)[0]),
     (np.array([1.0, 0.5, -0.3]), np.float64(0.7))),
    ("structured", lambda p, x: network(0.0, np.zeros(2), p, x)[0], (_params(np.random.default_rng(4)),
                                                                      np.array([0.3, -0.6, 1.2]))),
]


@pytest.mark.parametrize("label, fn, args", FEATURES, ids=[f[0] for f in FEATURES])
def test_the_new_statements_lower_natively(label, fn, args, no_host_calls):
    argnums = tuple(range(len(args)))
    for transformed in (fn, ad.grad(fn, argnums=argnums)):
        want = transformed(*args)
        got = ad.jit(transformed, backend="jax")(*args)
        for g, w in zip(tu.tree_leaves(got), tu.tree_leaves(want)):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-14, err_msg=label)


def test_second_order_of_the_new_statements(no_host_calls):
    for fn, x in ((lambda x: damped_map(0.0, x, 2.1, 30)[0], 0.4), (lambda x: power(0.0, x, 7)[0], 1.3),
                  (lambda s: scaled_sines(0.0, np.array([0.4, -1.1, 2.0]), s)[0], np.array([0.3, -0.2, 0.5])),
                  (lambda t: complex_loss(0.0, np.zeros(3, complex), FEATURES[4][2][0], FEATURES[4][2][1], t)[0],
                   0.4)):
        want = ad.hessian(fn)(x)
        np.testing.assert_allclose(np.asarray(ad.jit(ad.hessian(fn), backend="jax")(x)), want, rtol=1e-10,
                                   atol=1e-13)


def test_stacks_checked_and_grown_on_the_host():
    with pytest.raises(ReversibilityError, match=r"the stack 's' is full \(its capacity is 2\)") as expected:
        overfull_example(1.5, 3)
    with pytest.raises(ReversibilityError) as got:
        ad.jit(lambda y: overfull_example(y, np.int64(3))[0], backend="jax")(1.5)
    assert str(got.value).split(" (at ")[0] == str(expected.value).split(" (at ")[0]
    program = array_steps.program([("f", 0), ("f", 1), ("i", 0)])  # rv.stack() without a capacity: it grows
    assert not jax_reversible.lowered_natively(program, (0.0, np.ones(3), np.int64(4)))
    f = lambda x: array_steps(0.0, x, np.int64(5))[0]  # noqa: E731
    x = np.array([0.3, -1.2, 0.8])
    assert float(ad.jit(f, backend="jax")(x)) == float(f(x))
    np.testing.assert_array_equal(np.asarray(ad.jit(ad.grad(f), backend="jax")(x)), ad.grad(f)(x))
