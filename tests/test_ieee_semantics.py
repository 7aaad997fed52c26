"""Values and derivatives at NaN, inf, -0.0 and singular points, written as a user would (issue 21,
sections 2 and 3).

Staged programs compute what NumPy computes. A zero cotangent that is merely computed follows IEEE
(0 * inf = NaN, as in JAX); only zeros the program's structure proves (the branch a `where` does not
take, a scatter's overwritten slots, stop_gradient, integer paths) absorb an infinite partial. In
forward and Taylor mode, a direction that does not move an input does not move what it feeds.
"""
from __future__ import annotations

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp

BACKENDS = ["numpy", "numba", "jax"]


def _backend(name):
    if name != "numpy":
        pytest.importorskip(name)
    return name


# --- section 2: a user's primal never changes under jit -----------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_of_times_zero_gives_numpys_nan(backend):
    x = np.array([np.nan, np.inf, -np.inf, 2.0, -3.0])
    with np.errstate(invalid="ignore"):
        expected = x * 0.0
    got = ad.jit(lambda v: v * 0.0, backend=_backend(backend))(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_keeps_the_values_of_the_other_identities(backend):
    def f(v):
        return v - v, v / v, v + 0.0, 0.0 - v, anp.sum(anp.einsum("i,i->i", v, anp.zeros(5)))

    x = np.array([np.nan, np.inf, -0.0, 0.0, 2.0])
    with np.errstate(all="ignore"):
        expected = (x - x, x / x, x + 0.0, 0.0 - x, np.sum(x * np.zeros(5)))
        got = ad.jit(f, backend=_backend(backend))(x)
    for value, reference in zip(got, expected):
        np.testing.assert_array_equal(np.isnan(value), np.isnan(reference))
        np.testing.assert_array_equal(np.signbit(np.asarray(value)), np.signbit(reference))
        np.testing.assert_array_equal(np.nan_to_num(value), np.nan_to_num(reference))


def test_a_users_masked_product_keeps_numpys_nan():
    """where(c, g, 0) * p written by the user is not the derivative code's masked product."""
    f = ad.jit(lambda x, p: anp.where(x > 0, x, 0.0) * p)
    with np.errstate(invalid="ignore"):
        got = f(np.array([-1.0, 2.0]), np.array([np.inf, np.inf]))
    assert np.isnan(got[0]) and got[1] == np.inf


def _zero_products(program) -> list[str]:
    """The lines of a printed program that multiply, add or subtract a literal zero."""
    found = []
    for line in str(program).splitlines():
        if " = " not in line:
            continue
        words = line.split(" = ")[1].split()
        if words[0].split("[")[0] in ("mul", "safe_mul", "add", "sub", "einsum") and \
                any(w.startswith(("0.0:", "-0.0:")) for w in words[1:]):
            found.append(line.strip())
    return found


def test_gradient_programs_stay_clean_without_the_identities():
    """The zeros differentiation creates are symbolic: no `mul x 0.0` in a derivative program."""
    for f in (lambda x: anp.sum(x * x), lambda x: anp.sum(anp.sin(x) * x),
              lambda x: anp.sum(anp.where(x > 0, anp.sqrt(x), x)), lambda x: anp.sum(1.0 - anp.tanh(x)),
              lambda x: anp.linalg.norm(x), lambda x: anp.sum(x ** 0 + x ** 3), lambda x: anp.max(x) * anp.sum(x)):
        for transform in (ad.grad, ad.hessian, lambda f: ad.jacfwd(ad.grad(f))):
            program = ad.make_ir(transform(f))(np.array([0.5, -1.0, 2.0]))
            assert not _zero_products(program), program


# --- section 3: which zeros may beat an infinite derivative ---------------------------------------

def test_a_computed_zero_cotangent_follows_ieee():
    with np.errstate(all="ignore"):
        assert np.isnan(ad.grad(lambda x: anp.sqrt(x) * anp.sqrt(x))(0.0))  # JAX: NaN


def test_forward_and_reverse_mode_agree_at_a_singular_point():
    f = lambda x: x / (1 + anp.sqrt(x))  # noqa: E731
    with np.errstate(all="ignore"):
        reverse, forward = ad.grad(f)(0.0), ad.jvp(f, (0.0,), (1.0,))[1]
    assert np.isnan(reverse) and np.isnan(forward)
    assert np.isclose(ad.grad(f)(4.0), ad.jvp(f, (4.0,), (1.0,))[1])


def test_the_branch_where_does_not_take_contributes_zero():
    g = ad.grad(lambda v: anp.sum(anp.where(v > 0, anp.sqrt(v), v)))
    assert g(np.array([-1.0, 0.0, 4.0])).tolist() == [1.0, 1.0, 0.25]
    # through a chain of operations in the untaken branch, and to second order
    h = lambda v: anp.sum(anp.where(v > 0, anp.sqrt(v) * anp.log(v + 3.0), v ** 2))  # noqa: E731
    assert ad.grad(h)(np.array([-4.0, 0.0])).tolist() == [-8.0, 0.0]
    hessian = ad.hessian(lambda v: anp.sum(anp.where(v > 0, anp.sqrt(v), v ** 3)))(np.array([-1.0, 0.0]))
    assert np.array_equal(hessian, np.diag([-6.0, 0.0]))


def test_nested_wheres_and_a_batched_cond_mask_their_branches():
    nested = lambda v: anp.sum(anp.where(v < 5, anp.where(v > 0, anp.log(v), v), anp.sqrt(v - 5.0)))  # noqa: E731
    with np.errstate(invalid="ignore"):
        assert ad.grad(nested)(np.array([-1.0, 1.0, 9.0])).tolist() == [1.0, 1.0, 0.25]
    batched = lambda v: anp.sum(ad.vmap(lambda x: ad.cond(x > 0, anp.sqrt, lambda y: -y, x))(v))  # noqa: E731
    assert ad.grad(batched)(np.array([-1.0, 4.0])).tolist() == [-1.0, 0.25]


def test_the_values_a_scatter_overwrites_contribute_zero():
    index = np.array([0, 0])
    overwrite = lambda u: anp.sum(anp.zeros(2).at[index].set(anp.sqrt(u)))  # noqa: E731  (the first update is lost)
    assert ad.grad(overwrite)(np.array([0.0, 4.0])).tolist() == [0.0, 0.25]
    destination = lambda x: anp.sum(anp.sqrt(x).at[np.array([0])].set(5.0))  # noqa: E731
    assert ad.grad(destination)(np.array([0.0, 4.0])).tolist() == [0.0, 0.25]
    beaten = lambda x: anp.sum(anp.sqrt(x).at[np.array([0])].max(7.0))  # noqa: E731
    assert ad.grad(beaten)(np.array([0.0, 4.0])).tolist() == [0.0, 0.25]


def test_a_mask_sinks_through_a_scalar_kernel():
    @ad.kernel
    def root(x):
        return anp.sqrt(x)

    g = ad.grad(lambda v: anp.sum(anp.where(v > 0, root(v), v)))
    assert g(np.array([-1.0, 0.0, 4.0])).tolist() == [1.0, 1.0, 0.25]


def test_structural_zeros_of_the_library_rules_stay_exact():
    assert ad.grad(anp.linalg.norm)(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    assert ad.grad(lambda v: anp.sqrt(anp.sum(v ** 2)))(np.zeros(2)).tolist() == [0.0, 0.0]
    assert ad.grad(anp.std)(np.full(3, 2.0)).tolist() == [0.0, 0.0, 0.0]
    assert ad.grad(anp.prod)(np.array([2.0, 0.0, 3.0])).tolist() == [0.0, 6.0, 0.0]
    assert ad.grad(lambda v: anp.sum(anp.cumprod(v)))(np.array([2.0, 0.0, 0.0, 3.0])).tolist() == [1.0, 2.0, 0.0, 0.0]
    index, updates = np.array([0, 0, 1]), np.array([2.0, 0.0, 5.0])
    grad = ad.grad(lambda v: anp.sum(v.at[index].multiply(updates)))(np.array([1.5, 2.0, 3.0]))
    assert grad.tolist() == [0.0, 5.0, 1.0]
    assert ad.grad(lambda v: anp.sum(anp.sqrt(ad.stop_gradient(v)) * v))(np.array([0.0, 4.0])).tolist() == [0.0, 2.0]


def test_a_direction_that_does_not_move_a_value_keeps_its_terms_zero():
    x, v = np.array([0.0, 4.0]), np.array([0.0, 1.0])
    assert ad.jvp(lambda y: anp.sqrt(y), (x,), (v,))[1].tolist() == [0.0, 0.25]


@pytest.mark.parametrize("backend", BACKENDS)
def test_taylor_mode_agrees_with_forward_mode_at_an_unmoved_singular_point(backend):
    f = lambda x: anp.sum(anp.sqrt(x * x)) + anp.sum(x ** 2)  # noqa: E731
    x0, series = np.array([0.0, 2.0]), (np.array([0.0, 1.0]), np.zeros(2), np.zeros(2))
    assert ad.jvp(f, (x0,), (series[0],))[1] == 5.0
    primal, terms = ad.jet(f, (x0,), (series,))
    assert primal == 6.0 and [float(t) for t in terms] == [5.0, 2.0, 0.0]
    staged = ad.jit(lambda x: ad.jet(f, (x,), (series,)), backend=_backend(backend))(x0)
    assert [float(t) for t in staged[1]] == [5.0, 2.0, 0.0]


@pytest.mark.parametrize("name, h", [("sqrt", anp.sqrt), ("log", anp.log), ("reciprocal", lambda y: 1.0 / y),
                                     ("power", lambda y: y ** 0.5), ("negative power", lambda y: y ** -1),
                                     ("cube root", anp.cbrt)])
def test_every_singular_taylor_recurrence_keeps_an_unmoved_element_still(name, h):
    """h(x * x) at x = [0, 2] along [0, 1]: element 0 does not move, its terms are exactly 0 (where the
    recurrences divide by h's singular x_0 = 0); element 1's terms are nested jvp's."""
    f = lambda x: h(x * x)  # noqa: E731
    x0, v = np.array([0.0, 2.0]), np.array([0.0, 1.0])
    with np.errstate(all="ignore"):
        _, terms = ad.jet(f, (x0,), ((v, np.zeros(2), np.zeros(2)),))
        first = ad.jvp(f, (x0,), (v,))[1]
        second = ad.jvp(lambda y: ad.jvp(f, (y,), (v,))[1], (x0,), (v,))[1]
    assert [float(t[0]) for t in terms] == [0.0, 0.0, 0.0], terms
    assert first[0] == 0.0 and np.isclose(terms[0][1], first[1]) and np.isclose(terms[1][1], second[1])
