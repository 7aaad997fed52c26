"""How custom_jvp / custom_vjp functions are called, as in JAX: their rules run only when they are
differentiated; defjvps; nondiff_argnums (functions and Python numbers passed to the rules as they
are); keyword and default arguments; Python control flow on values in the function and its rules
under grad. Derivatives are checked against the exact ones and finite differences."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp

X = np.array([0.4, -1.3, 2.1])


def _fd(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def _logged_pair():
    """A custom_jvp and a custom_vjp function (both sin) that log when the function and the rules run."""
    log = []

    @ad.custom_jvp
    def by_jvp(x):
        log.append("fun")
        return anp.sin(x)

    @by_jvp.defjvp
    def _(primals, tangents):
        log.append("rule")
        return anp.sin(primals[0]), anp.cos(primals[0]) * tangents[0]

    @ad.custom_vjp
    def by_vjp(x):
        log.append("fun")
        return anp.sin(x)

    def fwd(x):
        log.append("fwd")
        return anp.sin(x), anp.cos(x)

    def bwd(cos_x, g):
        log.append("bwd")
        return (cos_x * g,)

    by_vjp.defvjp(fwd, bwd)
    return log, by_jvp, by_vjp


@pytest.mark.parametrize("which", [1, 2])
def test_rules_do_not_run_unless_the_function_is_differentiated(which):
    log, *functions = _logged_pair()
    f = functions[which - 1]
    for run in (lambda: f(0.3), lambda: f(X), lambda: ad.jit(f)(X), lambda: ad.vmap(f)(X),
                lambda: ad.make_ir(f)(X), lambda: ad.jit(lambda v: anp.sum(f(v) ** 2))(X + 2)):
        log.clear()
        run()
        assert set(log) == {"fun"}, log                    # the function ran, never a rule
    assert "traced when differentiated" in str(ad.make_ir(f)(X))
    log.clear()
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(f(v)))(X), np.cos(X), rtol=1e-14)
    assert set(log) - {"fun"}, log                        # the rule ran
    log.clear()
    # differentiating a jitted program traces the rule then, once
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(ad.jit(f)(v)))(X + 1), np.cos(X + 1), rtol=1e-14)
    assert set(log) - {"fun"}, log


def test_values_of_eager_and_jitted_calls():
    log, by_jvp, by_vjp = _logged_pair()
    for f in (by_jvp, by_vjp):
        np.testing.assert_allclose(f(X), np.sin(X), rtol=1e-15)
        np.testing.assert_allclose(ad.jit(f)(X), np.sin(X), rtol=1e-15)
        np.testing.assert_allclose(ad.vmap(f)(X), np.sin(X), rtol=1e-15)


def test_defjvps_one_function_per_argument():
    @ad.custom_jvp
    def scaled_sin(x, y):
        return anp.sin(x) * y

    scaled_sin.defjvps(lambda tx, out, x, y: anp.cos(x) * tx * y, lambda ty, out, x, y: anp.sin(x) * ty)
    x, y = 0.7, -1.8
    gx, gy = ad.grad(scaled_sin, argnums=(0, 1))(x, y)
    np.testing.assert_allclose([gx, gy], [np.cos(x) * y, np.sin(x)], rtol=1e-14)
    _, tangent = ad.jvp(scaled_sin, (x, y), (0.5, 2.0))
    np.testing.assert_allclose(tangent, 0.5 * np.cos(x) * y + 2.0 * np.sin(x), rtol=1e-14)
    np.testing.assert_allclose(gx, _fd(lambda v: np.sin(v) * y, x), rtol=1e-8)
    # second order: the jvp functions are differentiated themselves
    np.testing.assert_allclose(ad.grad(ad.grad(scaled_sin))(x, y), -np.sin(x) * y, rtol=1e-13)
    np.testing.assert_allclose(ad.jacrev(ad.vmap(scaled_sin, in_axes=(0, None)))(X, y), np.diag(np.cos(X) * y),
                               rtol=1e-13, atol=1e-16)


def test_defjvps_none_means_no_dependence_and_the_rule_is_what_is_used():
    @ad.custom_jvp
    def f(x, y):
        return x * y

    f.defjvps(None, lambda ty, out, x, y: 10.0 * ty)          # deliberately not the true derivative
    assert ad.grad(f, argnums=0)(2.0, 3.0) == 0.0
    assert ad.grad(f, argnums=1)(2.0, 3.0) == 10.0
    @ad.custom_jvp
    def g(x, y):
        return x * y

    g.defjvps(lambda t, out, x, y: t)
    with pytest.raises(ad.ArgumentError, match="one function \\(or None\\) per argument of 'g' \\(2\\), got 1"):
        ad.grad(g)(1.0, 2.0)
    with pytest.raises(ad.ArgumentError, match="cannot be used with nondiff_argnums"):
        ad.custom_jvp(lambda n, x: x, nondiff_argnums=(0,)).defjvps(lambda t, out, x: t)


def test_nondiff_function_argument_of_custom_jvp():
    @partial(ad.custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    @apply.defjvp
    def _(fn, primals, tangents):
        (x,), (t,) = primals, tangents
        return fn(x), 4.0 * t            # the rule gets the function as it is

    cube = lambda v: v ** 3  # noqa: E731
    assert apply(cube, 2.0) == 8.0
    assert ad.grad(lambda x: apply(cube, x))(2.0) == 4.0
    assert ad.jit(lambda x: apply(cube, x))(2.0) == 8.0
    np.testing.assert_allclose(ad.vmap(ad.grad(lambda x: apply(anp.sin, x)))(X), 4.0 * np.ones(3))


def test_nondiff_arguments_anywhere_come_first_in_the_rule_in_their_order():
    @partial(ad.custom_jvp, nondiff_argnums=(0, 2))
    def compose(outer, x, inner):
        return outer(inner(x))

    @compose.defjvp
    def _(outer, inner, primals, tangents):
        assert callable(outer) and callable(inner)
        return outer(inner(primals[0])), 7.0 * tangents[0]

    assert compose(lambda v: v + 1.0, 2.0, lambda v: v * 3.0) == 7.0
    assert ad.grad(lambda x: compose(anp.exp, x, anp.sin))(0.5) == 7.0


def test_nondiff_python_numbers_of_custom_vjp_come_first_in_bwd():
    @partial(ad.custom_vjp, nondiff_argnums=(0, 1))
    def bounded_gradient(low, high, x):
        return x

    def fwd(low, high, x):
        assert isinstance(low, float) and isinstance(high, float)   # Python numbers stay Python numbers
        return x, None

    def bwd(low, high, residuals, g):
        return (anp.clip(g, low, high),)

    bounded_gradient.defvjp(fwd, bwd)
    weights = np.array([3.0, 0.25, -2.0])
    loss = lambda x: anp.sum(weights * bounded_gradient(-1.0, 1.0, x))  # noqa: E731
    np.testing.assert_allclose(ad.grad(loss)(X), [1.0, 0.25, -1.0])
    np.testing.assert_allclose(bounded_gradient(-1.0, 1.0, X), X)
    np.testing.assert_allclose(ad.jit(lambda x: bounded_gradient(-1.0, 1.0, x))(X), X)


def test_nondiff_argnames():
    @partial(ad.custom_vjp, nondiff_argnames=("scale",))
    def scaled(x, scale):
        return x * scale

    scaled.defvjp(lambda x, scale: (x * scale, None), lambda scale, r, g: (2 * scale * g,))
    assert ad.grad(lambda x: scaled(x, 3.0))(1.0) == 6.0
    with pytest.raises(ad.ArgumentError, match="nondiff_argnames names 'size'"):
        ad.custom_vjp(lambda x, scale: x, nondiff_argnames=("size",))


def test_nondiff_argument_errors():
    @partial(ad.custom_jvp, nondiff_argnums=(1,))
    def f(x, n):
        return x * n

    f.defjvp(lambda n, primals, tangents: (primals[0] * n, tangents[0] * n))
    assert ad.grad(lambda x: f(x, 3.0))(2.0) == 3.0
    with pytest.raises(ad.ArgumentError, match="argument 1 is in nondiff_argnums but holds a traced value"):
        ad.grad(f, argnums=(0, 1))(2.0, 3.0)
    h = ad.custom_vjp(lambda *a: a[0], nondiff_argnums=(1,))
    h.defvjp(lambda *a: (a[0], None), lambda n, r, g: (g,))
    with pytest.raises(ad.ArgumentError, match="nondiff_argnums names argument 1, but the call has 1"):
        ad.grad(lambda x: h(x))(2.0)
    g = ad.custom_jvp(lambda fn, x: fn(x))
    g.defjvp(lambda primals, tangents: (primals[1], tangents[1]))
    with pytest.raises(ad.ArgumentError, match="argument 0 is a function; name it in nondiff_argnums"):
        ad.grad(lambda x: g(anp.sin, x))(1.0)
    with pytest.raises(ad.ArgumentError, match="nondiff_argnums must be non-negative integers"):
        ad.custom_jvp(lambda x: x, nondiff_argnums=(-1,))


def test_keyword_and_default_arguments_resolve_to_positions():
    @ad.custom_jvp
    def power(x, exponent=2.0):
        return x ** exponent

    @power.defjvp
    def _(primals, tangents):
        x, exponent = primals           # the default arrives as a primal, as in JAX
        return x ** exponent, exponent * x ** (exponent - 1) * tangents[0]

    assert ad.grad(lambda x: power(x))(3.0) == 6.0
    assert ad.grad(lambda x: power(x, exponent=3.0))(2.0) == 12.0
    assert ad.grad(lambda x: power(exponent=3.0, x=x))(2.0) == 12.0
    with pytest.raises(ad.ArgumentError, match="custom_jvp 'power'"):
        ad.grad(lambda x: power(x, bad=1.0))(2.0)


def test_python_control_flow_on_values_in_the_function_and_the_rule_under_grad():
    @ad.custom_jvp
    def piecewise(x):
        if x > 0:
            return anp.sin(x)
        return anp.cos(x)

    @piecewise.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        if x > 0:
            return piecewise(x), 2.0 * t
        return piecewise(x), 3.0 * t

    # the cached program of each branch is chosen by its guards: the order of the calls does not matter
    for x, slope in ((1.0, 2.0), (-1.0, 3.0), (2.5, 2.0), (-0.2, 3.0)):
        assert ad.grad(piecewise)(x) == slope
        assert ad.jvp(piecewise, (x,), (1.0,))[1] == slope
        assert ad.value_and_grad(piecewise)(x) == (pytest.approx(np.sin(x) if x > 0 else np.cos(x)), slope)
    np.testing.assert_allclose(piecewise(-1.0), np.cos(-1.0))
    with pytest.raises(ad.TracingError, match="not known while tracing here"):
        ad.jit(piecewise)(1.0)


def test_python_control_flow_on_values_in_fwd_and_bwd_under_grad():
    @ad.custom_vjp
    def soft_abs(x):
        return x if x > 0 else -x

    def fwd(x):
        return soft_abs(x), x

    def bwd(x, g):
        if x > 0:
            return (g,)
        return (-g,)

    soft_abs.defvjp(fwd, bwd)
    assert ad.grad(soft_abs)(2.0) == 1.0
    assert ad.grad(soft_abs)(-2.0) == -1.0
    assert ad.grad(soft_abs)(3.0) == 1.0
    assert ad.grad(lambda x: soft_abs(x * x - 1.0))(0.5) == -1.0


def test_custom_vjp_under_vmap_then_reverse_mode():
    @ad.custom_vjp
    def square(x):
        return x * x

    square.defvjp(lambda x: (x * x, x), lambda x, g: (2.0 * x * g,))
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(ad.vmap(square)(v)))(X), 2 * X)
    np.testing.assert_allclose(ad.jacrev(ad.vmap(square))(X), np.diag(2 * X))
    np.testing.assert_allclose(ad.jacfwd(ad.vmap(square))(X), np.diag(2 * X))
    np.testing.assert_allclose(ad.vmap(ad.grad(square))(X), 2 * X)
    np.testing.assert_allclose(ad.hessian(lambda v: anp.sum(square(v)))(X), 2 * np.eye(3))


def test_pytree_arguments_and_outputs():
    @ad.custom_jvp
    def stats(point):
        return {"norm2": point["x"] ** 2 + point["y"] ** 2, "pair": (anp.sin(point["x"]), point["y"])}

    @stats.defjvp
    def _(primals, tangents):
        (p,), (t,) = primals, tangents
        out = stats(p)
        return out, {"norm2": 2 * p["x"] * t["x"] + 2 * p["y"] * t["y"], "pair": (anp.cos(p["x"]) * t["x"], t["y"])}

    point = {"x": 0.3, "y": -2.0}
    grads = ad.grad(lambda p: stats(p)["norm2"] + stats(p)["pair"][0])(point)
    assert grads["x"] == pytest.approx(0.6 + np.cos(0.3)) and grads["y"] == pytest.approx(-4.0)
