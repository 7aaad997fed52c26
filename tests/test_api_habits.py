"""Habits users bring from JAX, autograd and PyTorch: one-element outputs for grad, keyword arguments
through every transformation, static_argnums / static_argnames, hvp and jvp argument forms,
checked custom rules, verified parsing, and an adarray error for every wrong call."""
import functools
import io

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.cli import BENCHMARKS, main
from adarray.progress import Progress

rng = np.random.default_rng(0)
X = np.array([0.5, -1.2, 2.0])


def counting(fn):
    @functools.wraps(fn)  # keeps fn's signature: static_argnames maps names to positions through it
    def wrapped(*args, **kwargs):
        wrapped.traces += 1
        return fn(*args, **kwargs)

    wrapped.traces = 0
    return wrapped


# --- grad of an output with one element ------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (1, 1, 1)])
def test_grad_accepts_any_output_with_one_element(shape):
    def f(x):
        return anp.reshape(anp.sum(anp.sin(x) * x), shape)

    np.testing.assert_allclose(ad.grad(f)(X), np.cos(X) * X + np.sin(X), rtol=1e-14)
    value, gradient = ad.value_and_grad(f)(X)
    assert np.shape(value) == shape and np.isclose(np.sum(value), np.sum(np.sin(X) * X))
    np.testing.assert_allclose(gradient, np.cos(X) * X + np.sin(X), rtol=1e-14)
    np.testing.assert_allclose(ad.grad(ad.grad(lambda t: f(t * np.ones(3))))(0.3),
                               np.sum(-np.sin(0.3) * 0.3 + 2 * np.cos(0.3)) * 3, rtol=1e-13)


@pytest.mark.parametrize("shape", [(2,), (1, 2), (0,)])
def test_grad_of_a_larger_output_keeps_the_clear_error(shape):
    with pytest.raises(ad.ArgumentError, match=r"scalar \(or an array of one element\).*" + str(shape)):
        ad.grad(lambda x: anp.zeros(shape) + anp.sum(x))(X)


# --- keyword arguments ----------------------------------------------------------------------------

def scaled(x, scale=1.0, mode="square", weights=None):
    y = x * scale if weights is None else x * scale * weights
    return anp.sum(y ** 2) if mode == "square" else anp.sum(anp.abs(y))


def test_keyword_arguments_pass_through_every_transformation():
    w = np.array([1.0, 2.0, 3.0])
    expected = 2 * X * 9.0
    np.testing.assert_allclose(ad.grad(scaled)(X, scale=3.0), expected)
    value, gradient = ad.value_and_grad(scaled)(X, scale=3.0)
    assert np.isclose(value, np.sum((3 * X) ** 2)) and np.allclose(gradient, expected)
    out, pullback = ad.vjp(scaled, X, scale=3.0)
    assert np.isclose(out, value)
    (cotangent,) = pullback(1.0)             # one cotangent per positional argument only
    np.testing.assert_allclose(cotangent, expected)
    assert np.isclose(ad.jit(scaled)(X, scale=3.0), value)
    np.testing.assert_allclose(ad.jacfwd(scaled)(X, scale=3.0), expected)
    np.testing.assert_allclose(ad.jacrev(scaled)(X, scale=3.0), expected)
    np.testing.assert_allclose(ad.hessian(scaled)(X, scale=3.0), 18.0 * np.eye(3))
    out, f_jvp = ad.linearize(scaled, X, scale=3.0)
    assert np.isclose(out, value) and np.isclose(f_jvp(np.ones(3)), expected.sum())
    assert "mul" in str(ad.make_ir(scaled)(X, scale=3.0))
    np.testing.assert_allclose(ad.grad(scaled)(X, mode="abs"), np.sign(X))
    np.testing.assert_allclose(ad.grad(scaled)(X, scale=2.0, weights=w), 2 * X * 4.0 * w ** 2)


def test_static_keywords_are_part_of_the_cache_key_and_array_keywords_are_traced(builds):
    g = ad.grad(scaled)
    g(X, scale=2.0)
    g(X + 1.0, scale=2.0)
    assert builds.count == 1
    g(X, scale=5.0)                          # a Python number is a static value: a new program
    assert builds.count == 2
    g(X, scale=np.float64(2.0))              # an array (NumPy scalar) is traced ...
    g(X, scale=np.float64(7.0))              # ... so another value reuses the program
    assert builds.count == 3
    np.testing.assert_allclose(g(X, scale=np.float64(7.0)), 2 * X * 49.0)
    np.testing.assert_allclose(g(X, scale=2), g(X, scale=2.0))  # int 2 traces to the program of 2.0
    assert builds.count == 3


def test_traced_keyword_arguments_carry_outer_derivatives():
    # d/dy of grad_x sum((x y)^2) = d/dy 2 x y^2 = 4 x y, through a keyword argument.
    outer = ad.jacfwd(lambda y: ad.grad(scaled)(X, scale=y))
    np.testing.assert_allclose(outer(1.5), 4 * X * 1.5)


def test_vmap_maps_array_keywords_over_their_leading_axis_as_jax_does():
    xs, ws = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    batched = ad.vmap(scaled)(xs, scale=2.0, weights=ws)   # scale static, weights mapped
    np.testing.assert_allclose(batched, [np.sum((x * 2 * w) ** 2) for x, w in zip(xs, ws)])


def test_unhashable_non_array_keyword_is_a_clear_error():
    with pytest.raises(ad.ArgumentError, match="keyword argument 'weights' of 'scaled' is a list"):
        ad.grad(scaled)(X, weights=[1.0, 2.0, 3.0])
    with pytest.raises(ad.ArgumentError, match="keyword argument 'mode'.*dict"):
        ad.jit(scaled)(X, mode={"kind": "abs"})


# --- static_argnums / static_argnames -------------------------------------------------------------

def repeated_sin(x, n, shift=0.0):
    for _ in range(n):
        x = anp.sin(x + shift)
    return anp.sum(x)


def sin_chain_derivative(x, n):
    value, derivative = x, np.ones_like(x)
    for _ in range(n):
        derivative = derivative * np.cos(value)
        value = np.sin(value)
    return derivative


@pytest.mark.parametrize("static", [{"static_argnums": 1}, {"static_argnums": (1,)}, {"static_argnames": "n"},
                                    {"static_argnames": ("n",)}])
@pytest.mark.parametrize("by_keyword", [False, True])
def test_static_arguments_on_every_derivative_and_jit(static, by_keyword):
    call = (lambda t, *a: t(X, n=3)) if by_keyword else (lambda t, *a: t(X, 3))
    expected = sin_chain_derivative(X, 3)
    np.testing.assert_allclose(call(ad.grad(repeated_sin, **static)), expected, rtol=1e-14)
    np.testing.assert_allclose(call(ad.value_and_grad(repeated_sin, **static))[1], expected, rtol=1e-14)
    np.testing.assert_allclose(call(ad.jacfwd(repeated_sin, **static)), expected, rtol=1e-14)
    np.testing.assert_allclose(call(ad.jacrev(repeated_sin, **static)), expected, rtol=1e-14)
    hessian = call(ad.hessian(repeated_sin, **static))
    numeric = np.stack([(sin_chain_derivative(X + 1e-6 * e, 3) - sin_chain_derivative(X - 1e-6 * e, 3)) / 2e-6
                        for e in np.eye(3)])
    np.testing.assert_allclose(hessian, numeric, rtol=1e-6, atol=1e-9)
    assert np.isclose(call(ad.jit(repeated_sin, **static)), np.sum(np.sin(np.sin(np.sin(X)))))


def test_static_values_key_the_cache(builds):
    g = ad.grad(repeated_sin, static_argnames="n")
    g(X, 2)
    g(X * 2, 2)
    assert builds.count == 1
    g(X, 3)
    assert builds.count == 2
    g(X, n=3)   # passed by keyword: another argument structure, the same result
    g(X * 2, n=3)
    assert builds.count == 3
    np.testing.assert_allclose(g(X, n=3), g(X, 3))


def test_static_and_differentiated_at_once_or_unhashable_static_are_errors():
    with pytest.raises(ad.ArgumentError, match="both differentiated"):
        ad.grad(repeated_sin, argnums=1, static_argnums=1)(X, 2)
    with pytest.raises(ad.ArgumentError, match="hashable"):
        ad.jit(repeated_sin, static_argnums=1)(X, [2])
    with pytest.raises(ad.ArgumentError, match="static_argnums"):
        ad.grad(repeated_sin, static_argnums="n")(X, 2)


# --- hvp and jvp argument forms -------------------------------------------------------------------

def test_hvp_of_one_argument_returns_h_times_v():
    f = lambda x: anp.sum(x ** 3) + x[0] * x[1]
    v = np.array([0.3, -1.0, 2.0])
    hessian = np.diag(6 * X) + np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    result = ad.hvp(f, (X,), (v,))
    assert isinstance(result, np.ndarray) and result.shape == (3,)
    np.testing.assert_allclose(result, hessian @ v, rtol=1e-14)
    # Several arguments: one block row per argument, H_x. v_x + H_y. v_y.
    g = lambda x, y: anp.sum(x ** 2 * y)
    y = np.array([1.0, 2.0, 3.0])
    hx, hy = ad.hvp(g, (X, y), (v, v))
    np.testing.assert_allclose(hx, 2 * y * v + 2 * X * v)
    np.testing.assert_allclose(hy, 2 * X * v)


@pytest.mark.parametrize("function", [ad.jvp, ad.hvp])
def test_jvp_and_hvp_want_tuples(function):
    with pytest.raises(ad.ArgumentError, match=r"primals must be a tuple.*\(x,\), \(t,\).*ndarray"):
        function(lambda x: anp.sum(x * x), X, X)
    with pytest.raises(ad.ArgumentError, match="tangents must be a tuple"):
        function(lambda x: anp.sum(x * x), (X,), X)
    with pytest.raises(ad.ArgumentError, match="1 primals but 2 tangents"):
        function(lambda x: anp.sum(x * x), (X,), (X, X))
    # Lists work, as in JAX.
    assert np.allclose(ad.jvp(lambda x: x * 2, [X], [X])[1], 2 * X)


# --- custom rules checked against the primals -----------------------------------------------------

def _custom_vjp_with(bwd):
    @ad.custom_vjp
    def f(x, y):
        return anp.sum(anp.sin(x)) * y

    f.defvjp(lambda x, y: (f(x, y), (x, y)), bwd)
    return f


@pytest.mark.parametrize("bwd, message", [
    (lambda r, g: (g * 2.0, g), r"cotangent of argument 0 is f64\[\], but the primal is f64\[3\]"),
    (lambda r, g: (anp.cos(r[0]) * g,), r"one cotangent per argument \(2\), got a tuple of 1"),
    (lambda r, g: anp.cos(r[0]) * g, r"one cotangent per argument \(2\), got a Tracer"),
    (lambda r, g: (anp.cos(r[0]) * g, anp.ones(2)), r"argument 1 is f64\[2\], but the primal is f64\[\]"),
    (lambda r, g: ((anp.cos(r[0]) * g).astype(np.float32), g), r"f32\[3\], but the primal is f64\[3\]"),
    (lambda r, g: ((anp.cos(r[0]) * g,), g), r"structure \(\*\), expected \*"),
])
def test_custom_vjp_bwd_cotangents_must_match_the_primals(bwd, message):
    with pytest.raises(ad.ShapeError, match=message):
        ad.grad(_custom_vjp_with(bwd))(X, 2.0)


def test_custom_vjp_bwd_may_return_none_for_a_zero_cotangent_and_python_numbers():
    f = _custom_vjp_with(lambda r, g: (anp.cos(r[0]) * g * r[1], None))
    gx, gy = ad.grad(f, argnums=(0, 1))(X, 2.0)
    np.testing.assert_allclose(gx, 2 * np.cos(X))
    assert gy == 0.0
    h = _custom_vjp_with(lambda r, g: (anp.cos(r[0]) * g * r[1], 5.0))
    assert ad.grad(h, argnums=1)(X, 2.0) == 5.0


def test_custom_jvp_tangent_outputs_must_match_the_primal_outputs():
    @ad.custom_jvp
    def f(x):
        return anp.sin(x)

    @f.defjvp
    def _(primals, tangents):
        return f(primals[0]), anp.sum(tangents[0])

    with pytest.raises(ad.ShapeError, match=r"tangent output is f64\[\], but the primal is f64\[3\]"):
        ad.jvp(f, (X,), (X,))

    @ad.custom_jvp
    def g(x):
        return anp.sin(x)

    @g.defjvp
    def _(primals, tangents):
        return g(primals[0])

    with pytest.raises(ad.ArgumentError, match="must return a pair"):
        ad.grad(lambda x: anp.sum(g(x)))(X)


# --- parse_program verifies -----------------------------------------------------------------------

ILL_TYPED = "{ lambda a:f64[3] b:f64[4] .\n    c:f64[3] = add a b\n  in (c) }"


def test_parse_program_verifies_types_unless_told_not_to():
    with pytest.raises(ad.ParseError, match="ill-typed.*add"):
        ad.parse_program(ILL_TYPED)
    with pytest.raises(ad.ParseError, match="ill-typed"):
        ad.parse_program("{ lambda a:f64[3] .\n    b:f64[2] = sin a\n  in (b) }")
    assert len(ad.parse_program(ILL_TYPED, verify=False).eqns) == 1
    good = ad.make_ir(ad.grad(lambda x: anp.sum(anp.sin(x) * x)))(X)
    assert str(ad.parse_program(str(good))) == str(good)


# --- every wrong call is an adarray error ---------------------------------------------------------

def _body(i, carry):
    return carry * 2.0


def _custom_vjp_fwd(fwd):
    @ad.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(fwd, lambda r, g: (g, g))
    return ad.grad(f)(1.0, 2.0)


WRONG_CALLS = {
    "string input to grad": lambda: ad.grad(lambda s: s)(np.array(["a", "b"])),
    "object input to jit": lambda: ad.jit(lambda x, o: x)(1.0, np.array([object()])),
    "object leaf in a dict": lambda: ad.jvp(lambda p: p["a"], ({"a": np.array([None])},), ({"a": 1.0},)),
    "string in vmap": lambda: ad.vmap(lambda s: s)(np.array(["ab", "cd"])),
    "fold without xs or length": lambda: ad.fold(lambda c, x: (c, x), 0.0),
    "fold with a float length": lambda: ad.fold(lambda c, x: (c, x), 0.0, length=2.5),
    "fold with a negative length": lambda: ad.fold(lambda c, x: (c, x), 0.0, length=-1),
    "fold of a non-function": lambda: ad.fold(3.0, 0.0, length=2),
    "fold body not returning a pair": lambda: ad.fold(lambda c, x: c, 0.0, np.ones(3)),
    "fold with a bad checkpoint": lambda: ad.fold(lambda c, x: (c, x), 0.0, np.ones(3), checkpoint="some"),
    "fold with an array checkpoint": lambda: ad.fold(lambda c, x: (c, x), 0.0, np.ones(3), checkpoint=np.ones(2)),
    "fold of a string carry": lambda: ad.fold(lambda c, x: (c, x), "a", np.ones(3)),
    "fori_loop swapped body": lambda: ad.fori_loop(0, 3, lambda carry, i: carry * 2.0, 1.0),
    "fori_loop swapped body with an index carry": lambda: ad.fori_loop(0, 3, lambda c, k: c[k], np.ones(3)),
    "fori_loop body changing the carry type": lambda: ad.fori_loop(0, 3, lambda a, b: a, 1.0),
    "fori_loop float bounds": lambda: ad.fori_loop(0.0, 3.5, _body, 1.0),
    "fori_loop traced float bound": lambda: ad.grad(lambda x: ad.fori_loop(0, x, _body, x))(3.0),
    "fori_loop non-function": lambda: ad.fori_loop(0, 3, None, 1.0),
    "fori_loop array bound": lambda: ad.fori_loop(0, np.arange(3), _body, 1.0),
    "while_loop float predicate": lambda: ad.while_loop(lambda x: x - 10.0, lambda x: x + 1.0, 0.0),
    "while_loop array predicate": lambda: ad.while_loop(lambda x: x < 3.0, lambda x: x + 1.0, np.zeros(2)),
    "while_loop body changing the structure": lambda: ad.while_loop(lambda x: x < 3.0, lambda x: (x, x), 0.0),
    "while_loop non-function": lambda: ad.while_loop(True, lambda x: x, 0.0),
    "while_loop bad checkpoint": lambda: ad.while_loop(lambda x: x < 3.0, lambda x: x + 1, 0.0, checkpoint=0),
    "while_loop string init": lambda: ad.while_loop(lambda x: x < 3.0, lambda x: x + 1, "zero"),
    "cond float predicate": lambda: ad.cond(0.5, lambda x: x, lambda x: -x, 1.0),
    "cond array predicate": lambda: ad.cond(np.array([True, False]), lambda x: x, lambda x: -x, 1.0),
    "cond string predicate": lambda: ad.cond("yes", lambda x: x, lambda x: -x, 1.0),
    "cond non-function branch": lambda: ad.cond(True, 1.0, lambda x: -x, 1.0),
    "cond branches of different types": lambda: ad.cond(True, lambda x: x, lambda x: (x, x), 1.0),
    "switch float index": lambda: ad.switch(1.5, [lambda x: x, lambda x: -x], 1.0),
    "switch branches not a list": lambda: ad.switch(0, lambda x: x, 1.0),
    "switch without branches": lambda: ad.switch(0, [], 1.0),
    "custom_vjp without rules": lambda: ad.custom_vjp(lambda x: x)(1.0),
    "custom_vjp with non-function rules": lambda: ad.custom_vjp(lambda x: x).defvjp(1, 2),
    "custom_jvp with a non-function rule": lambda: ad.custom_jvp(lambda x: x).defjvp(None),
    "grad of a non-scalar": lambda: ad.grad(lambda x: x)(X),
    "grad argnums out of range": lambda: ad.grad(lambda x: x, argnums=2)(1.0),
    "grad with string argnums": lambda: ad.grad(lambda x: x, argnums="x")(1.0),
    "jvp with arrays for tuples": lambda: ad.jvp(anp.sin, X, X),
    "jvp with mismatched tangent": lambda: ad.jvp(anp.sin, (X,), (np.ones(2),)),
    "vjp pullback of the wrong shape": lambda: ad.vjp(anp.sin, X)[1](np.ones(2)),
    "vmap with mismatched sizes": lambda: ad.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4)),
    "unhashable static": lambda: ad.jit(lambda x, n: x, static_argnums=1)(1.0, {}),
    "float() of a traced float under grad": lambda: ad.grad(lambda x: float(x) * x)(1.0),
    "if on a traced value under jit": lambda: ad.jit(lambda x: x if x > 0 else -x)(1.0),
    "if on a traced array under grad": lambda: ad.grad(lambda x: anp.sum(x) if x > 0 else 0.0)(X),
    "parse of garbage": lambda: ad.parse_program("{ lambda ."),
    "parse of an ill-typed program": lambda: ad.parse_program(ILL_TYPED),
    "cond with a tuple predicate": lambda: ad.cond((True, False), lambda x: x, lambda x: x, 1.0),
    "checkpoint of a non-function": lambda: ad.checkpoint(3)(1.0),
    "fold with an array for reverse": lambda: ad.fold(lambda c, x: (c, x), 0.0, np.ones(3), reverse=np.ones(2)),
    "fold with a 0-d xs": lambda: ad.fold(lambda c, x: (c, x), 0.0, 1.0),
    "fold with xs and a different length": lambda: ad.fold(lambda c, x: (c, x), 0.0, np.ones(3), length=4),
    "while_loop predicate returning a pair": lambda: ad.while_loop(lambda x: (x < 1.0, x < 2.0), lambda x: x, 0.0),
    "fori_loop with None as a bound": lambda: ad.fori_loop(0, None, _body, 0.0),
    "linearize f_jvp with a wrong tangent": lambda: ad.linearize(anp.sin, X)[1](np.ones(2)),
    "custom_vjp fwd not returning a pair": lambda: _custom_vjp_fwd(lambda x, y: x),
    "dict keys that do not sort": lambda: ad.grad(lambda d: d[1] * 1.0)({1: 1.0, "a": 2.0}),
    "tree_unflatten of a non-treedef": lambda: ad.tree_util.tree_unflatten((1, 2), [1.0]),
    "tree_map of mismatched trees": lambda: ad.tree_util.tree_map(lambda a, b: a, (1.0, 2.0), [1.0, 2.0]),
}


@pytest.mark.parametrize("name", sorted(WRONG_CALLS))
def test_every_wrong_call_raises_an_adarray_error(name):
    with pytest.raises(Exception) as info:
        WRONG_CALLS[name]()
    assert isinstance(info.value, ad.Error), f"{name}: {type(info.value).__name__}: {info.value}"


def test_bad_inputs_name_the_function_and_the_argument():
    def model(params, x):
        return anp.sum(params["w"] * x)

    with pytest.raises(ad.ArgumentError, match=r"argument 0 \['w'\] of 'model' is an array of dtype object"):
        ad.grad(model)({"w": np.array([object()])}, 1.0)
    with pytest.raises(ad.ArgumentError, match=r"argument 1 of 'model' is an array of dtype <U"):
        ad.jit(model)({"w": 1.0}, np.array(["x"]))
    with pytest.raises(ad.ArgumentError, match=r"keyword argument 'x' of 'model' is an array of dtype object"):
        ad.grad(model)({"w": 1.0}, x=np.array([None, None]))


def test_fori_loop_errors_say_the_expected_order():
    with pytest.raises(ad.ArgumentError, match=r"fori_loop.*takes \(carry, i\).*body_fn\(i, carry\)"):
        ad.fori_loop(0, 3, lambda carry, i: carry * 2.0, 1.0)
    with pytest.raises(ad.ShapeError, match=r"fori_loop: .*body_fn\(i, carry\), the loop index first"):
        ad.fori_loop(0, 3, lambda a, b: a, 1.0)     # returns the index: an i64 carry for an f64 one
    with pytest.raises(ad.ArgumentError, match="fori_loop: upper must be an integer, got 3.5"):
        ad.fori_loop(0, 3.5, _body, 1.0)
    with pytest.raises(ad.ArgumentError, match="fold: give xs .* or length"):
        ad.fold(lambda c, x: (c, x), 0.0)
    with pytest.raises(ad.ArgumentError, match="while_loop: .* must return a boolean scalar, got f64"):
        ad.while_loop(lambda x: x - 10.0, lambda x: x + 1.0, 0.0)
    # Integer bounds and predicates are fine, traced or not; an integer predicate means `!= 0`.
    assert ad.fori_loop(np.int64(0), 3, _body, 1.0) == 8.0
    assert ad.while_loop(lambda s: s[0], lambda s: (s[0] - 1, s[1] * 2.0), (3, 1.0))[1] == 8.0
    assert np.isclose(ad.grad(lambda x: ad.fori_loop(0, 3, _body, x))(1.0), 8.0)


# --- command line ---------------------------------------------------------------------------------

def test_help_lists_every_benchmark(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name, (_, _, description) in BENCHMARKS.items():
        assert name in out and description in out
    assert main(["bench", "--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in BENCHMARKS)


def test_progress_falls_back_to_plain_lines(capsys):
    stream = io.StringIO()  # not a terminal: plain lines, whether or not tqdm is installed
    progress = Progress(2, "bench demo", stream=stream)
    progress.start("first case")
    progress.write("| row 1 |")
    progress.start("second case")
    progress.write("| row 2 |")
    progress.close()
    assert capsys.readouterr().out == "| row 1 |\n| row 2 |\n"
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("bench demo: [1/2] first case") and lines[1].startswith("bench demo: [2/2] second")
    assert lines[2].startswith("bench demo: done in")
