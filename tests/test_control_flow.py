"""cond/switch, fold, fori_loop, while_loop, custom rules and checkpointing: values, derivatives
against finite differences (first and second order), batching, errors and memory policies."""
import tracemalloc

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import numerical_gradient

rng = np.random.default_rng(0)


def assert_grad_matches(f, x, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(ad.grad(f)(x), numerical_gradient(f, x), rtol=rtol, atol=atol)


def assert_second_order_matches(f, x, rtol=1e-5, atol=1e-7):
    np.testing.assert_allclose(ad.grad(ad.grad(f))(x), numerical_gradient(ad.grad(f), x), rtol=rtol, atol=atol)


# --- cond and switch -----------------------------------------------------------------------------

def piecewise(x):
    return ad.cond(x > 0, lambda x: anp.sin(x) * x, lambda x: -x ** 3, x)


@pytest.mark.parametrize("x", [0.7, -0.7])
def test_cond_derivatives_in_both_branches(x):
    assert_grad_matches(piecewise, x)
    assert_second_order_matches(piecewise, x)
    np.testing.assert_allclose(ad.jvp(piecewise, (x,), (1.0,))[1], ad.grad(piecewise)(x))


def test_switch_clamps_the_index_and_closes_over_traced_values():
    def f(x, i):
        return ad.switch(i, [lambda v: v * x, lambda v: v + x, lambda v: anp.sin(v * x)], 2.0)

    np.testing.assert_allclose([f(1.5, i) for i in (-3, 0, 1, 2, 9)],
                               [3.0, 3.0, 3.5, np.sin(3.0), np.sin(3.0)])
    np.testing.assert_allclose(ad.grad(f)(1.5, 2), 2 * np.cos(3.0))


def test_cond_with_batched_predicate_is_a_nan_free_select():
    xs = np.array([-4.0, -1.0, 0.25, 9.0])
    f = lambda x: ad.cond(x > 0, anp.sqrt, lambda x: x, x)
    np.testing.assert_allclose(ad.vmap(f)(xs), [-4.0, -1.0, 0.5, 3.0])
    np.testing.assert_allclose(ad.vmap(ad.grad(f))(xs), [1.0, 1.0, 1.0, 1 / 6])
    np.testing.assert_allclose(ad.grad(lambda xs: anp.sum(ad.vmap(f)(xs)))(xs), [1.0, 1.0, 1.0, 1 / 6])


def test_where_of_sqrt_and_norm_at_zero_are_finite():
    masked = ad.grad(lambda x: anp.sum(anp.where(x > 0, anp.sqrt(x), x)))
    np.testing.assert_array_equal(masked(np.array([-1.0, -4.0])), [1.0, 1.0])
    np.testing.assert_array_equal(ad.grad(anp.linalg.norm)(np.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sqrt(anp.sum(x ** 2)))(np.zeros(3)), np.zeros(3))
    np.testing.assert_allclose(ad.grad(anp.linalg.norm)(np.array([3.0, 4.0])), [0.6, 0.8])


@pytest.mark.parametrize("norm", [
    lambda x: anp.sum(x ** 2) ** 0.5,
    lambda x: anp.sqrt(x @ x),
    lambda x: anp.sqrt(x[0] ** 2 + x[1] ** 2 + x[2] ** 2),
    lambda x: anp.sqrt(0.5 * anp.sum(x * x, axis=0, keepdims=True))[0] * 2 ** 0.5,
], ids=["pow-half", "dot", "added-squares", "scaled-keepdims"])
def test_every_spelling_of_a_norm_has_gradient_zero_at_zero(norm):
    np.testing.assert_array_equal(ad.grad(norm)(np.zeros(3)), np.zeros(3))
    x = np.array([3.0, 4.0, 12.0])
    np.testing.assert_allclose(ad.grad(norm)(x), x / 13.0, rtol=1e-14)
    np.testing.assert_allclose(ad.hessian(norm)(x), (np.eye(3) - np.outer(x, x) / 169.0) / 13.0, rtol=1e-12)


def test_branches_with_different_outputs_name_the_leaf():
    expected = r"leaf \[1\] is f64\[2\] in the false branch but f64\[3\] in the true branch"
    with pytest.raises(ad.ShapeError, match=expected):
        ad.cond(True, lambda x: (x, x), lambda x: (x, x[:2]), np.ones(3))
    with pytest.raises(ad.ShapeError, match="structure"):
        ad.cond(True, lambda x: (x, x), lambda x: x, np.ones(3))


# --- fold ----------------------------------------------------------------------------------------

def recurrence(xs, reverse=False, checkpoint="all"):
    def step(carry, x):
        h, total = carry
        h = anp.tanh(h * x["a"] + x["b"])
        return (h, total + anp.sum(h)), h * 2.0

    (h, total), ys = ad.fold(step, (anp.ones(2) * 0.3, 0.0), xs, reverse=reverse, checkpoint=checkpoint)
    return anp.sum(h) + total + anp.sum(ys ** 2)


def _fold_inputs(length=7):
    return {"a": rng.normal(size=(length, 2)), "b": rng.normal(size=(length, 2))}


@pytest.mark.parametrize("reverse", [False, True])
def test_fold_gradient_with_pytree_carry_and_xs(reverse):
    xs = _fold_inputs()
    grads = ad.grad(lambda xs: recurrence(xs, reverse))(xs)
    for key in ("a", "b"):
        def along(v, key=key):
            return recurrence(dict(xs, **{key: v}), reverse)

        np.testing.assert_allclose(grads[key], numerical_gradient(along, xs[key]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("policy", [1, 2, 3, "binomial"])
def test_fold_checkpoint_policies_give_the_same_gradient(policy):
    xs = _fold_inputs(length=23)
    expected = ad.grad(recurrence)(xs)
    got = ad.grad(lambda xs: recurrence(xs, checkpoint=policy))(xs)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-12)
    got = ad.grad(lambda xs: recurrence(xs, reverse=True, checkpoint=policy))(xs)
    expected = ad.grad(lambda xs: recurrence(xs, reverse=True))(xs)
    np.testing.assert_allclose(got["a"], expected["a"], rtol=1e-12)


def test_fold_second_order_and_hessian():
    def f(w):
        return ad.fold(lambda c, x: (anp.sin(c * w + x), c), 0.5, np.linspace(0, 1, 6))[0]

    assert_second_order_matches(f, 0.8)
    def g(w):
        return anp.sum(ad.fold(lambda c, x: (anp.sin(c * w + x), None), anp.ones(2), np.ones((5, 2)))[0])

    np.testing.assert_allclose(ad.hessian(g)(np.array([0.3, 0.9])), ad.jacfwd(ad.jacrev(g))(np.array([0.3, 0.9])))


def test_fold_under_vmap_matches_a_loop():
    xs = rng.normal(size=(4, 6))
    f = lambda x: ad.fold(lambda c, v: (c * 0.5 + anp.sin(v), c), 0.0, x)
    carry, ys = ad.vmap(f)(xs)
    for i in range(4):
        c, y = f(xs[i])
        np.testing.assert_allclose(carry[i], c)
        np.testing.assert_allclose(ys[i], y)


def test_fold_body_changing_the_carry_is_an_error():
    with pytest.raises(ad.ShapeError, match=r"leaf \(the value\) is f64\[2\].*f64\[3\]"):
        ad.fold(lambda c, x: (anp.concatenate([c, x[:1]]), None), np.ones(2), np.ones((3, 1)))
    with pytest.raises(ad.ShapeError, match="dtype|i64"):
        ad.fold(lambda c, x: (c * 1.5, None), np.int64(1), np.ones(3))
    with pytest.raises(ad.ArgumentError, match="checkpoint"):
        ad.fold(lambda c, x: (c, None), 1.0, np.ones(3), checkpoint="sometimes")


# --- fori_loop -----------------------------------------------------------------------------------

def test_fori_loop_with_static_and_traced_bounds():
    def static(x):
        return ad.fori_loop(0, 5, lambda i, v: v * x + i, 1.0)

    def traced(x, n):
        return ad.fori_loop(0, n, lambda i, v: v * x + i, 1.0)

    assert_grad_matches(static, 1.3)
    np.testing.assert_allclose(traced(1.3, 5), static(1.3))
    np.testing.assert_allclose(ad.grad(traced)(1.3, 5), ad.grad(static)(1.3))
    np.testing.assert_allclose(ad.grad(ad.grad(traced))(1.3, 5), ad.grad(ad.grad(static))(1.3))


# --- while_loop ----------------------------------------------------------------------------------

def newton_sqrt(a):
    """Newton iterations to a tolerance: the trip count depends on the input."""
    return ad.while_loop(lambda x: anp.abs(x * x - a) > 1e-13 * a, lambda x: 0.5 * (x + a / x), a)


def cube_root_by_bisection(a):
    """Bisection on t^3 = a until the bracket is tiny, then one Newton polish (smooth in a)."""
    def body(state):
        low, high = state
        middle = 0.5 * (low + high)
        too_big = middle ** 3 > a
        return anp.where(too_big, low, middle), anp.where(too_big, middle, high)

    low, high = ad.while_loop(lambda s: s[1] - s[0] > 1e-6, body, (anp.zeros_like(a), anp.maximum(a, 1.0)))
    guess = ad.stop_gradient(0.5 * (low + high))
    return guess - (guess ** 3 - a) / (3 * guess ** 2)


def backtracking_step(x):
    """A step-size loop: halve t until f decreases; then take the step."""
    f = lambda v: anp.sum((v - 1.0) ** 4)
    direction = -4 * (x - 1.0) ** 3
    t = ad.while_loop(lambda t: f(x + t * direction) > f(x), lambda t: t * 0.5, 1.0)
    return f(x + ad.stop_gradient(t) * direction)


def test_reverse_mode_through_while_with_input_dependent_trip_count():
    np.testing.assert_allclose(newton_sqrt(2.0), np.sqrt(2.0))
    np.testing.assert_allclose(ad.grad(newton_sqrt)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-10)
    np.testing.assert_allclose(ad.grad(newton_sqrt)(30.0), 0.5 / np.sqrt(30.0), rtol=1e-10)
    np.testing.assert_allclose(ad.grad(ad.grad(newton_sqrt))(2.0), -0.25 * 2.0 ** -1.5, rtol=1e-8)
    np.testing.assert_allclose(ad.grad(cube_root_by_bisection)(5.0), 5.0 ** (-2 / 3) / 3, rtol=1e-6)
    x = np.array([2.0, -0.5, 1.5])
    assert_grad_matches(backtracking_step, x, rtol=1e-5)


def counted(x, w, checkpoint="all"):
    state = ad.while_loop(lambda s: s[0] < 12, lambda s: (s[0] + 1, anp.sin(s[1]) * w + 0.1), (0, x),
                          checkpoint=checkpoint)
    return anp.sum(state[1] ** 2)


@pytest.mark.parametrize("policy", ["all", 1, 5, "binomial"])
def test_while_gradients_and_policies(policy):
    x, w = rng.normal(size=3), rng.uniform(0.8, 1.2, size=3)
    assert_grad_matches(lambda x: counted(x, w, policy), x)
    np.testing.assert_allclose(ad.grad(lambda x, w: counted(x, w, policy), argnums=1)(x, w),
                               numerical_gradient(lambda w: counted(x, w), w), rtol=1e-6, atol=1e-8)
    hessian = ad.hessian(lambda x: counted(x, w, policy))(x)
    np.testing.assert_allclose(hessian, numerical_gradient(lambda x: ad.grad(counted)(x, w), x), rtol=1e-5, atol=1e-7)


def test_while_under_vmap_runs_until_every_lane_is_done():
    a = np.array([2.0, 9.0, 1e4])
    np.testing.assert_allclose(ad.vmap(newton_sqrt)(a), np.sqrt(a))
    np.testing.assert_allclose(ad.vmap(ad.grad(newton_sqrt))(a), 0.5 / np.sqrt(a), rtol=1e-10)
    np.testing.assert_allclose(ad.jacrev(lambda a: ad.vmap(newton_sqrt)(a))(a), np.diag(0.5 / np.sqrt(a)), rtol=1e-10)


def test_nested_loops():
    def inner_fold_in_while(x):
        def body(s):
            i, v = s
            v, _ = ad.fold(lambda c, t: (anp.sin(c) * t, None), v, np.linspace(0.5, 1.0, 3))
            return i + 1, v + x
        return ad.while_loop(lambda s: s[0] < 4, body, (0, x))[1]

    def while_in_fold(x):
        carry, _ = ad.fold(lambda c, t: (ad.while_loop(lambda v: v < 5.0, lambda v: v * 1.5 + t, c), None), x,
                           np.array([0.1, 0.2]))
        return carry

    assert_grad_matches(inner_fold_in_while, 0.4)
    assert_second_order_matches(inner_fold_in_while, 0.4)
    assert_grad_matches(while_in_fold, 0.7)


def test_while_errors_name_the_leaf():
    with pytest.raises(ad.ShapeError, match=r"leaf \[1\]"):
        ad.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1][:1]), (0, np.ones(2)))
    with pytest.raises(ad.ShapeError, match="scalar"):
        ad.while_loop(lambda v: v < 3, lambda v: v + 1, np.ones(2))


def test_binomial_checkpointing_keeps_memory_logarithmic():
    n_steps, n_state = 10_000, 1_000
    w = np.random.default_rng(1).uniform(0.9, 1.1, n_state)
    state_bytes = n_state * 8

    def peak(policy):
        f = ad.grad(lambda x: anp.sum(ad.while_loop(lambda s: s[0] < n_steps, lambda s: (s[0] + 1, anp.sin(s[1]) * w),
                                                    (0, x), checkpoint=policy)[1]))
        x = np.full(n_state, 0.5)
        f(x)  # trace and compile outside the measurement
        tracemalloc.start()
        gradient = f(x)
        used = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return used / state_bytes, gradient

    all_states, reference = peak("all")
    logarithmic, gradient = peak("binomial")
    np.testing.assert_allclose(gradient, reference, rtol=1e-12)
    assert all_states > 5_000, all_states  # the default tape grows with the trip count
    assert logarithmic < 100, logarithmic  # binomial: a small multiple of the state size
    assert all_states / logarithmic > 100


# --- custom rules and rematerialisation ----------------------------------------------------------

def test_custom_jvp_rule_is_used_in_both_modes():
    @ad.custom_jvp
    def log1pexp(x):
        return anp.log(1.0 + anp.exp(x))

    @log1pexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * anp.sigmoid(x)

    x = np.array([-3.0, 0.0, 800.0])  # at 800 the naive derivative is inf/inf = NaN
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(log1pexp(x)))(x), 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(ad.jvp(log1pexp, (x,), (np.ones(3),))[1], 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(ad.vmap(ad.grad(log1pexp))(x), 1 / (1 + np.exp(-x)))


def test_custom_vjp_rule_is_used_and_gives_forward_mode_too():
    @ad.custom_vjp
    def clip_gradient(x):
        return x * 1.0

    clip_gradient.defvjp(lambda x: (x * 1.0, None), lambda residuals, g: (anp.clip(g, -1.0, 1.0),))
    g = ad.grad(lambda x: anp.sum(clip_gradient(x) * np.array([3.0, 0.5, -2.0])))(np.ones(3))
    np.testing.assert_allclose(g, [1.0, 0.5, -1.0])

    @ad.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (3 * x ** 2 * g,))
    x = rng.normal(size=3)
    np.testing.assert_allclose(ad.jvp(cube, (x,), (np.ones(3),))[1], 3 * x ** 2)
    np.testing.assert_allclose(ad.grad(ad.grad(lambda x: cube(x)))(0.7), 6 * 0.7)


def test_checkpoint_recomputes_and_gives_the_same_gradient():
    w = rng.normal(size=(4, 4))
    layer = lambda x: anp.tanh(x @ w)
    f = lambda x: anp.sum(layer(layer(x)) ** 2)
    g = lambda x: anp.sum(ad.checkpoint(layer)(ad.checkpoint(layer)(x)) ** 2)
    x = rng.normal(size=(3, 4))
    np.testing.assert_allclose(ad.grad(g)(x), ad.grad(f)(x), rtol=1e-12)
    np.testing.assert_allclose(ad.hessian(lambda v: g(v.reshape(3, 4)))(x.ravel()),
                               ad.hessian(lambda v: f(v.reshape(3, 4)))(x.ravel()), rtol=1e-10)


def test_dead_code_elimination_prunes_unused_outputs_of_cond():
    def first(x):
        return ad.cond(anp.sum(x) > 0, lambda v: (anp.sin(v), anp.cos(v)), lambda v: (v, anp.exp(v)), x)[0]

    x = np.array([0.5, -0.2])
    program = ad.make_ir(first)(x)
    (cond,) = [e for e in program.eqns if e.prim.name == "cond"]
    assert len(cond.outputs) == 1
    assert "cos" not in str(program) and "exp" not in str(program)
    np.testing.assert_allclose(ad.jit(first)(x), np.sin(x))
