"""Arrays made by adarray.numpy (`Array`: .at[] and traced indexing outside and inside traces), the
errors that point to the functional way, and regressions of the numpy layer: traced linspace,
hstack of scalars and vectors, arrays and statistics of lists holding traced values."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp


def test_arrays_made_by_anp_have_at_outside_a_trace_and_it_never_mutates():
    x = anp.zeros(5)
    y = x.at[1].add(2.0)
    assert isinstance(x, np.ndarray) and isinstance(y, anp.Array)
    np.testing.assert_array_equal(x, np.zeros(5))
    np.testing.assert_array_equal(y, [0.0, 2.0, 0.0, 0.0, 0.0])
    z = y.at[np.array([0, 0, 4])].add(1.0).at[2].set(7.0).at[1].multiply(3.0).at[3].max(-1.0).at[4].min(0.5)
    np.testing.assert_array_equal(z, [2.0, 6.0, 7.0, 0.0, 0.5])
    np.testing.assert_array_equal(y, [0.0, 2.0, 0.0, 0.0, 0.0])
    assert y.at[1].get() == 2.0


def test_results_of_anp_functions_and_of_numpy_on_them_keep_at():
    for value in (anp.ones((2, 3)), anp.arange(4.0), anp.sin(np.ones(3)), anp.asarray([1.0, 2.0]),
                  anp.linspace(0, 1, 3), anp.ones(3) + 1, anp.ones((2, 2))[0], anp.split(anp.ones(4), 2)[1]):
        assert isinstance(value, anp.Array)
        assert isinstance(value.at[0].set(5.0), anp.Array)
    assert type(np.asarray(anp.ones(3))) is np.ndarray  # the plain array back, no copy


def test_gradients_return_plain_numpy_arrays():
    grad = ad.grad(lambda x: anp.sum(x * x))(anp.ones(3))
    assert type(grad) is np.ndarray


def test_at_on_an_anp_constant_inside_a_trace_is_differentiable():
    def f(v, i):
        return anp.sum(anp.zeros(5).at[i].add(v) ** 2)

    assert ad.grad(f)(1.5, np.array(2)) == 3.0
    grad = ad.grad(lambda v: anp.sum(anp.zeros((3, 2)).at[np.array([0, 0, 2])].add(v) ** 2))(np.ones((3, 2)))
    np.testing.assert_array_equal(grad, [[4.0, 4.0], [4.0, 4.0], [2.0, 2.0]])


def test_a_numpy_table_indexed_by_a_traced_index():
    table = np.arange(5.0) ** 2

    def f(x):
        return anp.sum(anp.asarray(table)[anp.floor(x).astype(int)] * x)

    x = np.array([1.2, 2.5])
    assert f(x) == 1.2 * 1.0 + 2.5 * 4.0
    np.testing.assert_array_equal(ad.grad(f)(x), [1.0, 4.0])
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sum(anp.take(table, anp.floor(x).astype(int)) * x))(x),
                                  [1.0, 4.0])
    np.testing.assert_array_equal(ad.vmap(lambda i: anp.asarray(table)[i])(np.array([3, 1])), [9.0, 1.0])


def test_indexing_a_plain_numpy_array_with_a_traced_index_says_what_to_write():
    table = np.arange(5.0)
    lookup = lambda x: anp.sum(table[anp.floor(x).astype(int)] * x)
    with pytest.raises(ad.TracingError, match=r"anp\.asarray\(table\)\[i\] or anp\.take\(table, i\)"):
        ad.jit(lookup)(np.array([1.2, 2.5]))
    # Under the derivatives the index's value is known: NumPy reads it (as autograd allows).
    np.testing.assert_array_equal(ad.grad(lookup)(np.array([1.2, 2.5])), [1.0, 2.0])


def test_assigning_into_a_traced_value_says_to_use_at():
    def f(x):
        x[0] = 1.0
        return anp.sum(x)

    with pytest.raises(ad.TracingError, match=r"x\.at\[index\]\.set\(value\)"):
        ad.grad(f)(np.ones(3))


@pytest.mark.parametrize("method", ["item", "tolist"])
def test_item_and_tolist_of_traced_values_are_tracing_errors(method):
    with pytest.raises(ad.TracingError, match=method):
        ad.grad(lambda x: getattr(x, method)())(np.ones(2))


def test_linspace_with_traced_bounds():
    """It used to recurse forever; now start + k * (stop - start) / (num - 1), the end exactly stop."""
    f = ad.jit(lambda a, b: anp.linspace(a, b, 5))
    np.testing.assert_array_equal(f(0.5, 2.0), np.linspace(0.5, 2.0, 5))
    assert ad.grad(lambda a: anp.sum(anp.linspace(a, 2 * a, 5)))(1.0) == 7.5
    grads = ad.grad(lambda a, b: anp.linspace(a, b, 4)[1], argnums=(0, 1))(0.0, 3.0)
    np.testing.assert_allclose(grads, (2 / 3, 1 / 3))
    values, step = ad.jit(lambda b: anp.linspace(0.0, b, 4, endpoint=False, retstep=True))(2.0)
    np.testing.assert_array_equal(values, np.linspace(0.0, 2.0, 4, endpoint=False))
    assert step == 0.5
    np.testing.assert_array_equal(ad.jit(lambda b: anp.linspace(0.0, b, 1))(2.0), [0.0])
    np.testing.assert_array_equal(ad.jit(lambda b: anp.linspace(0.0, b, 4, dtype=int))(7.0), [0, 2, 4, 7])
    np.testing.assert_array_equal(ad.vmap(lambda b: anp.linspace(0.0, b, 3))(np.array([1.0, 2.0])),
                                  [[0.0, 0.5, 1.0], [0.0, 1.0, 2.0]])


@pytest.mark.parametrize("items", [[1.0, 2.0], [np.float64(1.0), np.array(2.0)], [np.ones(2), np.zeros(3)],
                                   [np.ones(2), 3.0], [np.ones((2, 2)), np.zeros((2, 1))]])
def test_hstack_of_scalars_and_vectors_is_numpys(items):
    np.testing.assert_array_equal(anp.hstack(items), np.hstack(items))
    np.testing.assert_array_equal(anp.vstack(items[:1] * 2), np.vstack(items[:1] * 2))


def test_arrays_of_lists_holding_traced_values():
    assert ad.grad(lambda t: anp.sum(anp.array([[t, 1.0], [2.0, t]])))(1.0) == 2.0
    np.testing.assert_array_equal(ad.jit(lambda t: anp.array([[t, 1.0], [2.0, t]]))(3.0), [[3.0, 1.0], [2.0, 3.0]])
    assert ad.grad(lambda t: anp.array([t, 2 * t, 3.0])[1])(1.0) == 2.0
    rows = ad.jit(lambda v: anp.array([v, [1.0, 2.0]]))(np.array([5.0, 6.0]))
    np.testing.assert_array_equal(rows, [[5.0, 6.0], [1.0, 2.0]])
    assert ad.jit(lambda t: anp.asarray([t, 1]))(np.float32(2.0)).dtype == np.float32


def test_statistics_of_lists_holding_traced_values():
    def f(t):
        return anp.mean([t, 2 * t, 3.0]) + anp.std([t, 1.0]) + anp.var([[t, t * t]])

    t = 1.5
    expected = (1 + 2) / 3 + 0.5 + (t - t * t) * (1 - 2 * t) / 2
    np.testing.assert_allclose(ad.grad(f)(t), expected)


def test_ragged_lists_of_traced_values_are_shape_errors():
    with pytest.raises(ad.ShapeError, match="ragged"):
        ad.jit(lambda t: anp.array([[t, 1.0], [2.0]]))(1.0)
