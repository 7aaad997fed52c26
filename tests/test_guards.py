"""Python control flow on traced values under the derivatives (guards), as in autograd and PyTorch.

grad, value_and_grad, vjp, jvp, jacfwd, jacrev, hessian, hvp and linearize trace with the call's
values: each path through the Python control flow is traced once, cached with the branch decisions
it took (guards), reused while they hold and traced again when one fails. Under jit (unless
guards=True) and vmap it stays a TracingError. Derivatives are checked against closed forms and
central differences.
"""
import math

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import numerical_derivative


def counting(fn):
    """fn, with the number of times its Python body ran (= traces) in .traces."""
    def wrapped(*args, **kwargs):
        wrapped.traces += 1
        return fn(*args, **kwargs)

    wrapped.traces = 0
    wrapped.__name__ = fn.__name__
    return wrapped


@counting
def piecewise(x):
    if x > 0:
        return x ** 3
    return anp.sin(x) * 2.0


def test_piecewise_gradient_on_each_side_reuses_and_retraces(builds):
    g = ad.grad(piecewise)
    assert np.isclose(g(2.0), 12.0)
    assert builds.count == 1
    assert np.isclose(g(0.5), 0.75)            # same side: the transformed program is reused
    assert builds.count == 1
    assert np.isclose(g(-1.0), 2 * np.cos(-1.0))  # the other side: a new program
    assert builds.count == 2
    assert np.isclose(g(-3.0), 2 * np.cos(-3.0))
    assert np.isclose(g(3.0), 27.0)            # both programs are cached now
    assert builds.count == 2
    assert np.isclose(g(0.0), 2.0)             # x > 0 is False at 0: the sin branch


def test_jit_with_guards_traces_each_path_once():
    traced = counting(lambda x: x ** 3 if x > 0 else anp.sin(x) * 2.0)
    f = ad.jit(traced, guards=True)
    assert np.isclose(f(2.0), 8.0) and np.isclose(f(0.5), 0.125)
    assert traced.traces == 1                  # the guard x > 0 held: the cached program
    assert np.isclose(f(-1.0), 2 * np.sin(-1.0))
    assert np.isclose(f(3.0), 27.0)
    assert traced.traces == 2


def test_value_and_grad_vjp_jvp_linearize_follow_the_branch():
    for x, value, slope in ((2.0, 8.0, 12.0), (-1.0, 2 * np.sin(-1.0), 2 * np.cos(-1.0))):
        v, g = ad.value_and_grad(piecewise)(x)
        assert np.isclose(v, value) and np.isclose(g, slope)
        out, pullback = ad.vjp(piecewise, x)
        assert np.isclose(out, value) and np.isclose(pullback(1.0)[0], slope)
        out, tangent = ad.jvp(piecewise, (x,), (1.0,))
        assert np.isclose(out, value) and np.isclose(tangent, slope)
        out, f_jvp = ad.linearize(piecewise, x)
        assert np.isclose(out, value) and np.isclose(f_jvp(2.0), 2 * slope)


def test_jacobians_hessian_and_hvp_of_a_branchy_vector_function():
    def f(x):
        if anp.sum(x) > 0:
            return anp.sin(x) * x[0]
        return x ** 2

    for x in (np.array([0.5, 1.0, -0.2]), np.array([-0.5, -1.0, 0.2])):
        if x.sum() > 0:
            expected = np.diag(np.cos(x) * x[0])
            expected[:, 0] += np.sin(x)
        else:
            expected = np.diag(2 * x)
        np.testing.assert_allclose(ad.jacfwd(f)(x), expected, rtol=1e-12)
        np.testing.assert_allclose(ad.jacrev(f)(x), expected, rtol=1e-12)

    def scalar(x):
        return anp.sum(f(x) ** 2)

    for x in (np.array([0.5, 1.0, -0.2]), np.array([-0.5, -1.0, 0.2])):
        hessian = ad.hessian(scalar)(x)
        gradient = ad.grad(scalar)
        numeric = np.stack([(gradient(x + 1e-6 * e) - gradient(x - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
        np.testing.assert_allclose(hessian, numeric, rtol=1e-6, atol=1e-8)
        v = np.array([0.3, -0.7, 1.1])
        np.testing.assert_allclose(ad.hvp(scalar, (x,), (v,)), hessian @ v, rtol=1e-10)


def exp_series(x, tol=1e-16):
    """exp by its Taylor series, summed until the term is negligible (a data-dependent trip count)."""
    term, total, n = anp.ones_like(x), anp.zeros_like(x), 0
    while abs(term) > tol * abs(total) or n == 0:
        total = total + term
        n += 1
        term = term * x / n
    return total


def series_terms(x, tol=1e-16):
    """How many terms exp_series(x) sums (run in plain NumPy)."""
    term, total, n = 1.0, 0.0, 0
    while abs(term) > tol * abs(total) or n == 0:
        total, n = total + term, n + 1
        term = term * x / n
    return n


def truncated_exp(x, terms):
    return sum(x ** k / math.factorial(k) for k in range(max(terms, 0)))


# Not at 0: there the first term after 1 is exactly 0, the loop stops, and the path taken is the
# constant 1, whose derivative is 0 (what autograd and PyTorch give too: the program is the path).
@pytest.mark.parametrize("x", [-2.5, -0.3, 1e-3, 0.7, 3.0])
def test_while_series_first_and_second_derivative_against_the_closed_form(x):
    # The path sums N terms: its derivatives are exactly the series with N - 1 and N - 2 terms,
    # which agree with exp(x) up to the truncation (the closed form, to a looser tolerance).
    n = series_terms(x)
    first, second = ad.grad(exp_series)(x), ad.grad(ad.grad(exp_series))(x)
    assert np.isclose(first, truncated_exp(x, n - 1), rtol=1e-13, atol=0)
    assert np.isclose(second, truncated_exp(x, n - 2), rtol=1e-13, atol=0)
    assert np.isclose(first, np.exp(x), rtol=1e-13, atol=0)
    assert np.isclose(second, np.exp(x), rtol=1e-9, atol=0)
    assert np.isclose(ad.hessian(exp_series)(x), second, rtol=1e-13, atol=0)
    out, tangent = ad.jvp(exp_series, (x,), (1.0,))
    assert np.isclose(out, np.exp(x), rtol=1e-14) and np.isclose(tangent, first, rtol=1e-14)


def test_while_series_is_transformed_once_per_trip_count(builds):
    g = ad.grad(exp_series)
    g(0.7)
    first = builds.count
    g(0.7000001)  # the same number of terms: the same program
    assert builds.count == first
    g(30.0)       # many more terms: a new program
    assert builds.count == first + 1
    assert np.isclose(g(30.0), np.exp(30.0), rtol=1e-12)


def test_break_in_a_for_loop():
    def partial_sum(x):
        total = 0.0
        for k in range(50):
            total = total + x ** k
            if total > 10.0:
                break
        return total

    for x in (0.5, 0.9, 1.5, 3.0):
        last = next(k for k in range(50) if k == 49 or sum(x ** j for j in range(k + 1)) > 10.0)
        exact = sum(j * x ** (j - 1) for j in range(1, last + 1))
        assert np.isclose(ad.grad(partial_sum)(x), exact, rtol=1e-12)


def test_recursion_whose_depth_depends_on_the_data():
    def halve(x):
        """sin(x / 2^k) * 2^k with the smallest k that brings x / 2^k below 1."""
        if x < 1.0:
            return anp.sin(x)
        return 2.0 * halve(x / 2.0)

    for x, k in ((0.5, 0), (1.5, 1), (5.0, 3), (40.0, 6)):
        assert np.isclose(ad.grad(halve)(x), np.cos(x / 2 ** k), rtol=1e-13)
        assert np.isclose(ad.grad(ad.grad(halve))(x), -np.sin(x / 2 ** k) / 2 ** k, rtol=1e-12)


def test_integer_arguments_drive_python_loops_and_indices():
    def power(x, n):
        result = anp.ones_like(x)
        for _ in range(n):      # range() of a traced integer: a guard on its exact value
            result = result * x
        return anp.sum(result[: int(n)])

    x = np.array([1.5, 2.0, 0.5, 3.0])
    for n in (1, 2, 3):
        expected = np.where(np.arange(4) < n, n * x ** (n - 1), 0.0)
        np.testing.assert_allclose(ad.grad(power)(x, np.int64(n)), expected)


def test_int_of_a_float_truncates_with_zero_derivative():
    def steps(x):
        return x * int(x)   # int(x) is piecewise constant: d/dx = int(x)

    assert ad.grad(steps)(2.7) == 2.0
    assert ad.grad(steps)(-1.5) == -1.0


def test_float_of_a_traced_float_is_refused_it_would_drop_the_derivative():
    with pytest.raises(ad.TracingError, match="float.*derivative"):
        ad.grad(lambda x: math.exp(float(x)))(1.0)


def test_float_of_a_traced_integer_is_a_guard_on_its_value():
    def scaled(x, n):
        return x * math.sqrt(float(n))

    assert np.isclose(ad.grad(scaled)(1.0, np.int64(4)), 2.0)
    assert np.isclose(ad.grad(scaled)(1.0, np.int64(9)), 3.0)


def test_ambiguous_truth_value_of_an_array():
    def f(x):
        if x > 0:
            return anp.sum(x)
        return anp.sum(-x)

    with pytest.raises(ad.TracingError, match="ambiguous.*anp.any"):
        ad.grad(f)(np.ones(3))
    # One element of any shape is fine, as in NumPy.
    assert ad.grad(f)(np.array([[2.0]])).tolist() == [[1.0]]


def test_nested_transformations_of_a_function_with_an_if():
    def f(x):
        if x > 1.0:
            return x ** 4
        return anp.exp(x)

    third = ad.grad(ad.grad(ad.grad(f)))
    assert np.isclose(third(2.0), 48.0)
    assert np.isclose(third(0.5), np.exp(0.5))
    assert np.isclose(third(3.0), 72.0)
    assert np.isclose(ad.jacfwd(ad.jacrev(f))(0.5), np.exp(0.5))
    assert np.isclose(ad.jacrev(ad.jacfwd(f))(2.0), 48.0)


def test_inner_grad_of_a_closure_over_an_outer_value_with_a_branch():
    def outer(y):
        def inner(x):
            if x * y > 1.0:
                return x * y ** 2
            return x * y
        return ad.grad(inner)(2.0)   # d/dx: y**2 or y, decided by the outer value y

    g = ad.grad(outer)
    assert np.isclose(g(3.0), 6.0)    # 2 * 3 > 1: d/dy y^2 = 2y
    assert np.isclose(g(0.2), 1.0)    # 2 * 0.2 < 1: d/dy y = 1
    assert np.isclose(g(4.0), 8.0)


def test_inner_branch_on_an_outer_value_passed_as_argument_is_reguarded():
    calls = []

    def inner(x):
        calls.append(1)
        if x > 0:
            return x ** 2
        return -x

    def outer(x):
        return ad.grad(inner)(x) * x   # the inner cache is shared by every outer trace

    g = ad.grad(outer)
    assert np.isclose(g(3.0), 12.0)   # d/dx (2x * x) = 4x
    assert np.isclose(g(-2.0), -1.0)  # d/dx (-1 * x) = -1
    assert np.isclose(g(5.0), 20.0)
    assert np.isclose(g(-4.0), -1.0)


def test_jit_and_vmap_keep_the_error():
    for run in (lambda: ad.jit(piecewise)(1.0), lambda: ad.vmap(piecewise)(np.ones(3)),
                lambda: ad.vmap(ad.grad(piecewise))(np.ones(3)), lambda: ad.jit(ad.grad(piecewise))(1.0)):
        with pytest.raises(ad.TracingError, match="anp.where.*ad.cond"):
            run()


def test_jit_with_guards_traces_one_program_per_path():
    branchy = counting(lambda x: x * 2.0 if x > 0 else -x)
    fast = ad.jit(branchy, guards=True)
    assert fast(3.0) == 6.0 and fast(-2.0) == 2.0 and fast(5.0) == 10.0 and fast(-7.0) == 7.0
    assert branchy.traces == 2
    assert np.isclose(ad.jit(ad.grad(piecewise), guards=True)(-1.0), 2 * np.cos(-1.0))


def test_control_flow_inside_a_loop_body_is_still_an_error():
    def f(x):
        return ad.fori_loop(0, 3, lambda i, c: c * 2.0 if c > 0 else c, x)

    with pytest.raises(ad.TracingError, match="body of a loop"):
        ad.grad(f)(1.0)


def test_guards_at_the_same_values_give_the_same_gradient_as_numerics():
    def f(x, y):
        z = x * y
        while z < 10.0:
            z = z * 1.5 + y
        if z > 12.0 and x < y:
            return anp.log(z)
        return anp.sqrt(z)

    for x, y in ((1.0, 2.0), (3.0, 1.0), (0.5, 0.7)):
        gx, gy = ad.grad(f, argnums=(0, 1))(x, y)
        assert np.isclose(gx, numerical_derivative(lambda t, y=y: f(t, y), x), rtol=1e-6)
        assert np.isclose(gy, numerical_derivative(lambda t, x=x: f(x, t), y), rtol=1e-6)


def test_a_guard_on_a_nan_value_is_reused_not_retraced():
    # The guard program runs the traced equations as they are (no algebraic simplification such as
    # x * 0 -> 0), so it sees the value Python saw, NaN included.
    f = counting(lambda x: x * 2.0 if x * 0.0 == 0.0 else x * 3.0)
    g = ad.jit(f, guards=True)
    assert np.isnan(g(np.nan)) and g(np.inf) == np.inf and g(1.0) == 2.0
    assert f.traces == 2


def test_paths_per_signature_are_bounded():
    from adarray.api import staging

    def doublings(x):
        while x < 1.0:   # one path per number of doublings
            x = x * 2.0
        return x

    g = ad.jit(doublings, guards=True)
    for k in range(staging.MAX_PATHS + 6):
        assert g(2.0 ** -k * 1.5) == 1.5
    (entries,) = staging._CACHES[doublings].values()
    assert len(entries) == staging.MAX_PATHS
