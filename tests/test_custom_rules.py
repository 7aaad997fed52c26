"""custom_jvp / custom_vjp whose rules call the decorated function itself (JAX's documented pattern).

While a rule is traced, a call of the decorated function evaluates the plain function; before,
tracing the rule traced the rule again, without end (RecursionError). Every derivative here is
checked against the exact one and against finite differences.
"""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import numerical_jacobian

rng = np.random.default_rng(0)
X = np.array([0.3, -0.5, 1.2])


def _sin_with_custom_vjp(calls_in_bwd=False):
    @ad.custom_vjp
    def f(x):
        return anp.sin(x)

    def backward(x, g):
        # cos(x) = sin(x + pi/2): the backward rule may call f too.
        return ((f(x + np.pi / 2) if calls_in_bwd else anp.cos(x)) * g,)

    f.defvjp(lambda x: (f(x), x), backward)
    return f


@pytest.mark.parametrize("calls_in_bwd", [False, True])
def test_custom_vjp_whose_rules_call_the_function(calls_in_bwd):
    f = _sin_with_custom_vjp(calls_in_bwd)
    np.testing.assert_allclose(f(X), np.sin(X), rtol=1e-15)
    g = ad.grad(lambda v: anp.sum(f(v)))(X)
    np.testing.assert_allclose(g, np.cos(X), rtol=1e-14)
    np.testing.assert_allclose(g, numerical_jacobian(lambda v: np.sum(np.sin(v)), X), rtol=1e-8)
    for jacobian in (ad.jacfwd, ad.jacrev):
        np.testing.assert_allclose(jacobian(f)(X), np.diag(np.cos(X)), rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(ad.hessian(lambda v: anp.sum(f(v)))(X), np.diag(-np.sin(X)), rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(ad.vmap(ad.grad(lambda v: f(v)))(X), np.cos(X), rtol=1e-14)


def test_custom_vjp_rule_is_still_used_when_it_calls_the_function():
    # The backward rule here is deliberately not the derivative of f: it must be the one used.
    @ad.custom_vjp
    def f(x):
        return x ** 2

    f.defvjp(lambda x: (f(x), f(x)), lambda y, g: (10.0 * y * g,))
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(f(v)))(X), 10.0 * X ** 2, rtol=1e-14)
    np.testing.assert_allclose(f(X), X ** 2, rtol=1e-15)


def test_custom_jvp_whose_rule_calls_the_function():
    @ad.custom_jvp
    def softplus(x):
        return anp.log(1.0 + anp.exp(x))

    @softplus.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * anp.sigmoid(x)

    sigmoid = 1 / (1 + np.exp(-X))
    np.testing.assert_allclose(softplus(X), np.log1p(np.exp(X)), rtol=1e-15)
    for jacobian in (ad.jacfwd, ad.jacrev):
        np.testing.assert_allclose(jacobian(softplus)(X), np.diag(sigmoid), rtol=1e-14, atol=1e-16)
    numeric = numerical_jacobian(lambda v: np.log1p(np.exp(v)), X)
    np.testing.assert_allclose(ad.jacrev(softplus)(X), numeric, rtol=1e-8, atol=1e-12)
    hessian = ad.hessian(lambda v: anp.sum(softplus(v)))(X)
    np.testing.assert_allclose(hessian, np.diag(sigmoid * (1 - sigmoid)), rtol=1e-13, atol=1e-16)


def test_custom_rules_of_a_function_with_an_unused_input():
    @ad.custom_vjp
    def first(a, b):
        return a * 2.0

    first.defvjp(lambda a, b: (first(a, b), None), lambda residuals, g: (2.0 * g, anp.zeros_like(g)))
    a, b = rng.normal(size=3), rng.normal(size=3)
    for jacobian in (ad.jacfwd, ad.jacrev):
        da, db = jacobian(first, argnums=(0, 1))(a, b)
        np.testing.assert_allclose(da, 2.0 * np.eye(3), rtol=1e-15)
        np.testing.assert_array_equal(db, np.zeros((3, 3)))
    np.testing.assert_array_equal(ad.vjp(first, a, b)[1](np.ones(3))[1], np.zeros(3))
