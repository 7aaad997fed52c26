"""Un-jitted transformations see each call's world, as in JAX; jit reads it once, when it traces.

Every transformation called without jit traces the function at every call, so closures, globals and
random draws are read afresh; the transformed program of an earlier call is reused when the traced
program is the same, constants included. Arguments outside argnums keep their Python integers.
"""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.integrate as aint
from adarray.backends.numpy import compile_program

rng = np.random.default_rng(7)


def closure_scaled():
    """A loss closing over a mutable list, and the list."""
    scale = [1.0]
    return (lambda w: anp.sum(w ** 2) * scale[0]), scale


def test_the_issue_example_grad_sees_a_changed_closure():
    scale = [1.0]
    loss = lambda w: anp.sum(w) * scale[0]
    np.testing.assert_array_equal(ad.grad(loss)(np.ones(2)), [1.0, 1.0])
    scale[0] = 2.0
    np.testing.assert_array_equal(ad.grad(loss)(np.ones(2)), [2.0, 2.0])


# Each transformation applied to f(w) = scale * sum(w^2), and what it gives, as a function of scale.
x0 = np.array([0.5, -1.5, 2.0])
TRANSFORMATIONS = {
    "grad": (lambda f: ad.grad(f)(x0), lambda s: 2 * s * x0),
    "value_and_grad": (lambda f: ad.value_and_grad(f)(x0)[1], lambda s: 2 * s * x0),
    "vjp": (lambda f: ad.vjp(f, x0)[1](1.0)[0], lambda s: 2 * s * x0),
    "jvp": (lambda f: ad.jvp(f, (x0,), (np.ones(3),))[1], lambda s: 2 * s * x0.sum()),
    "linearize": (lambda f: ad.linearize(f, x0)[1](np.ones(3)), lambda s: 2 * s * x0.sum()),
    "vmap": (lambda f: ad.vmap(f)(np.stack([x0, x0])), lambda s: s * np.full(2, (x0 ** 2).sum())),
    "jacfwd": (lambda f: ad.jacfwd(f)(x0), lambda s: 2 * s * x0),
    "jacrev": (lambda f: ad.jacrev(f)(x0), lambda s: 2 * s * x0),
    "hessian": (lambda f: ad.hessian(f)(x0), lambda s: 2 * s * np.eye(3)),
    "hvp": (lambda f: ad.hvp(f, (x0,), (np.ones(3),))[1], lambda s: 2 * s * np.ones(3)),
    "taylor": (lambda f: ad.jet(f, (x0,), ((np.ones(3), np.zeros(3)),))[1][1],
               lambda s: 2 * s * 3.0),  # the second derivative of s * sum((x0 + t v)^2) in t: 2 s |v|^2
    "make_ir": (lambda f: compile_program(ad.make_ir(f)(x0))(x0)[0], lambda s: s * (x0 ** 2).sum()),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMATIONS))
def test_every_transformation_reads_the_closure_at_each_call(name):
    run, expected = TRANSFORMATIONS[name]
    loss, scale = closure_scaled()
    for value in (1.0, 3.0, -0.5):
        scale[0] = value
        np.testing.assert_allclose(run(loss), expected(value), rtol=1e-12, err_msg=f"{name} at scale {value}")


def test_globals_and_random_draws_are_read_at_each_call():
    draws = []

    def noisy(w):
        noise = np.random.default_rng(len(draws)).standard_normal(w.shape)  # a new draw per call
        draws.append(noise)
        return anp.sum(w * noise)

    for _ in range(3):
        np.testing.assert_array_equal(ad.grad(noisy)(np.ones(4)), draws[-1])
    assert not np.array_equal(draws[0], draws[1])


OFFSET = 1.0


def shifted(w):
    return anp.sum((w - OFFSET) ** 2)


def test_a_module_global_changed_between_calls():
    global OFFSET
    try:
        for OFFSET in (1.0, 4.0):
            np.testing.assert_allclose(ad.grad(shifted)(np.zeros(2)), -2 * OFFSET * np.ones(2))
    finally:
        OFFSET = 1.0


def test_a_large_closed_over_array_changed_in_place(builds):
    data = rng.standard_normal((200, 30))  # larger than a literal is keyed by value: an input of the program
    loss = lambda w: anp.sum((data @ w) ** 2)
    w = rng.standard_normal(30)
    first = ad.grad(loss)(w)
    np.testing.assert_allclose(first, 2 * data.T @ (data @ w), rtol=1e-12)
    data *= 2.0
    np.testing.assert_allclose(ad.grad(loss)(w), 4 * first, rtol=1e-12)
    data[:] = rng.standard_normal(data.shape)
    np.testing.assert_allclose(ad.grad(loss)(w), 2 * data.T @ (data @ w), rtol=1e-12)
    assert builds.count == 1  # one program served every value of the data


def test_a_small_closed_over_array_keys_the_program(builds):
    weights = np.array([1.0, 2.0])
    loss = lambda w: anp.sum(w * weights)
    np.testing.assert_array_equal(ad.grad(loss)(np.ones(2)), [1.0, 2.0])
    weights[1] = -0.0
    np.testing.assert_array_equal(ad.grad(loss)(np.ones(2)), [1.0, -0.0])
    assert np.signbit(ad.grad(loss)(np.ones(2))[1])
    weights[1] = 2.0
    ad.grad(loss)(np.ones(2))
    assert builds.count == 2  # the first program is found again


def test_closures_in_loop_bodies_and_solvers_are_read_at_each_call():
    rate = [1.0]

    def final(y0):
        return aint.odeint(lambda y, t: -rate[0] * y, y0, np.array([0.0, 1.0]))[-1]

    for value in (1.0, 2.0):
        rate[0] = value
        np.testing.assert_allclose(ad.grad(lambda y0: final(y0)[0])(np.array([1.0])), [np.exp(-value)], rtol=1e-6)

    step = [1]
    body = lambda i, c: c * (1.0 + step[0])
    for value in (1, 2):
        step[0] = value
        slope = ad.grad(lambda x: ad.fori_loop(0, 3, body, x))(1.0)
        assert slope == (1.0 + value) ** 3


def test_jit_reads_closures_when_it_traces_as_jax_jit_does():
    scale = [1.0]
    f = ad.jit(lambda w: anp.sum(w) * scale[0])
    assert f(np.ones(2)) == 2.0
    scale[0] = 5.0
    assert f(np.ones(2)) == 2.0          # the program traced at the first call
    assert f(np.ones(3)) == 15.0         # a new signature traces again, with today's value


def test_a_transformation_of_a_transformation_reads_the_closure():
    scale = [2.0]
    f = lambda x: anp.sin(x) * scale[0]
    assert np.isclose(ad.grad(ad.grad(f))(0.3), -2.0 * np.sin(0.3))
    scale[0] = -1.0
    assert np.isclose(ad.grad(ad.grad(f))(0.3), np.sin(0.3))
    assert np.isclose(ad.jit(ad.grad(f))(0.3), -np.cos(0.3) * -1.0 * -1.0)


# --- arguments outside argnums stay Python values ---------------------------------------------------

def test_python_integers_outside_argnums_are_python_values():
    a = np.array([[1.0, 2.0], [0.5, -1.0]])
    power = lambda m, n: anp.sum(anp.linalg.matrix_power(m, n))
    numeric = _central(lambda m: np.sum(np.linalg.matrix_power(m, 3)), a)
    np.testing.assert_allclose(ad.grad(power)(a, 3), numeric, rtol=1e-7)
    v = np.arange(5.0)
    np.testing.assert_allclose(ad.grad(lambda v, k: anp.sum(anp.roll(v, k) * v))(v, 2),
                               np.roll(v, 2) + np.roll(v, -2))
    np.testing.assert_allclose(ad.grad(lambda v, n: anp.sum(v[:n] ** 2))(v, 3), [0, 2, 4, 0, 0])
    np.testing.assert_allclose(ad.grad(lambda v, n: sum(v[i] for i in range(n)))(v, 2), [1, 1, 0, 0, 0])
    widths = ((1, 2),)
    padded = ad.grad(lambda v, w: anp.sum(anp.pad(v, w) * anp.arange(8.0)), argnums=0)(v, widths)
    np.testing.assert_allclose(padded, np.arange(1.0, 6.0))
    np.testing.assert_allclose(ad.jacfwd(lambda v, n: v[:n] * 2.0)(v, np.int64(2)), 2 * np.eye(5)[:2])
    np.testing.assert_allclose(ad.hessian(lambda v, n: anp.sum(v ** n))(v, 3), np.diag(6 * v))


def test_an_integer_inside_argnums_is_still_an_error():
    with pytest.raises(ad.NonDifferentiableError, match="floating-point"):
        ad.grad(lambda v, n: anp.sum(v) * n, argnums=1)(np.ones(2), 3)


# --- NumPy reads traced integers under the derivatives (autograd's fluidsim) -------------------------

def test_a_numpy_table_indexed_by_traced_integers():
    table = np.arange(30.0).reshape(5, 6)

    def lookup(position):
        cell = anp.floor(position).astype(int)
        weight = table[cell[0], cell[1]]          # NumPy indexing with traced integers
        return anp.sum(position ** 2) * weight

    for position in (np.array([1.5, 2.25]), np.array([3.75, 0.5])):
        weight = table[int(position[0]), int(position[1])]
        np.testing.assert_allclose(ad.grad(lambda p: lookup(p))(position), 2 * position * weight)
    with pytest.raises(ad.TracingError, match="np.asarray"):
        ad.jit(lookup)(np.array([1.5, 2.25]))


def test_numpy_integer_conversions_of_traced_values():
    def f(x):
        n = np.int64(anp.floor(x).astype(int))
        return x ** 2 * float(n + 1)

    assert ad.grad(f)(2.5) == 2 * 2.5 * 3.0
    assert ad.grad(f)(0.5) == 2 * 0.5 * 1.0


# --- errors JAX raises too ---------------------------------------------------------------------------

def test_static_names_and_positions_must_name_parameters():
    f = lambda x, n: x * n
    with pytest.raises(ad.ArgumentError, match="'m'.*not a parameter"):
        ad.jit(f, static_argnames="m")
    with pytest.raises(ad.ArgumentError, match="not a parameter"):
        ad.grad(f, static_argnames=("x", "size"))
    with pytest.raises(ad.ArgumentError, match="out of range"):
        ad.jit(f, static_argnums=2)
    with pytest.raises(ad.ArgumentError, match="not a parameter"):
        ad.jacfwd(f, static_argnames="k")
    ad.jit(lambda x, **options: x, static_argnames="anything")  # **kwargs accepts any name
    ad.jit(lambda *xs: xs[0], static_argnums=3)


def test_a_jvp_tangent_must_have_its_primals_dtype():
    with pytest.raises(ad.ArgumentError, match="dtype int64 for a primal of dtype float64"):
        ad.jvp(anp.sin, (np.array([0.5]),), (np.array([1]),))
    with pytest.raises(ad.ArgumentError, match="dtype"):
        ad.jvp(anp.sin, (np.float32(0.5),), (np.float64(1.0),))
    assert ad.jvp(anp.sin, (np.float32(0.5),), (1.0,))[1].dtype == np.float32  # a Python float fits


def _central(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def test_functions_with_custom_rules_reuse_their_transformed_program(builds):
    @ad.custom_jvp
    def softplus(x):
        return anp.log1p(anp.exp(x))

    softplus.defjvp(lambda primals, tangents: (softplus(primals[0]), tangents[0] / (1.0 + anp.exp(-primals[0]))))
    for x in (0.5, -1.0, 2.0):
        assert np.isclose(ad.grad(softplus)(x), 1.0 / (1.0 + np.exp(-x)))
    assert builds.count == 1


def test_a_function_argument_outside_argnums_is_called_as_python():
    apply_twice = lambda fn, x: fn(fn(x))
    assert ad.grad(apply_twice, argnums=1)(lambda v: v * 3.0, 1.0) == 9.0
    assert ad.grad(apply_twice, argnums=1)(anp.sin, 0.2) == np.cos(np.sin(0.2)) * np.cos(0.2)
