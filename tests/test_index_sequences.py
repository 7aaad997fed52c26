"""Lists and tuples inside an index tuple are array indices, as in NumPy: x[(0, 1, 0), (3, 3, 2)] picks three
elements (autograd issue 21: it raised TypeError under ad.grad). Every index is checked against NumPy eagerly,
under jit, under grad (against the scatter of ones NumPy's np.add.at gives) and through x.at[...]."""
from __future__ import annotations

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp

X = np.arange(60.0).reshape(3, 4, 5)
INDICES = {
    "tuple-tuple": ((0, 1, 0), (3, 3, 2)),
    "tuple-list": ((0, 2), [3, 1]),
    "list-tuple": ([0, 2], (3, 1)),
    "tuple-array": ((0, 2, 1), np.array([3, 0, 1])),
    "array-tuple-slice": (np.array([1, 0]), (2, 2), slice(1, 4)),
    "nested-tuple": (((0, 1), (1, 2)), 1),
    "tuple-int": ((2, 0, 2), 1, 4),
    "slice-tuple": (slice(None), (3, 0)),
    "tuple-newaxis": ((1, 0), None, (0, 3)),
    "ellipsis-tuple": (Ellipsis, (4, 0, 4)),
    "negative-tuple": ((-1, 0), (-4, 3)),
    "bool-tuple": ((True, False, True),),
    "empty-tuple": ((), 1),
    "empty-list": ([], slice(None), 0),
    "repeated": ((0, 0, 0), (1, 1, 1)),
}


@pytest.mark.parametrize("name", sorted(INDICES))
def test_value_matches_numpy(name):
    index = INDICES[name]
    expected = X[index]
    np.testing.assert_array_equal(anp.asarray(X)[index], expected)
    np.testing.assert_array_equal(ad.jit(lambda v: v[index])(X), expected)


@pytest.mark.parametrize("name", sorted(INDICES))
def test_gradient_counts_each_pick(name):
    index = INDICES[name]
    expected = np.zeros_like(X)
    np.add.at(expected, index, 1.0)
    np.testing.assert_array_equal(ad.grad(lambda v: anp.sum(v[index]))(X), expected)
    weights = np.random.default_rng(0).normal(size=X[index].shape)
    weighted = np.zeros_like(X)
    np.add.at(weighted, index, weights)
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(v[index] * weights))(X), weighted, rtol=1e-15)


def test_the_issue_example():
    grid = np.arange(16.0).reshape(4, 4)
    got = ad.grad(lambda v: anp.sum(v[(0, 1, 0), (3, 3, 2)]))(grid)
    expected = np.zeros((4, 4))
    expected[0, 3] = expected[1, 3] = expected[0, 2] = 1.0
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", ["tuple-tuple", "tuple-list", "nested-tuple", "repeated"])
def test_at_updates_take_tuples(name):
    index = INDICES[name]
    values = np.ones(X[index].shape)
    expected = X.copy()
    np.add.at(expected, index, values)
    np.testing.assert_array_equal(anp.asarray(X).at[index].add(values), expected)
    np.testing.assert_array_equal(ad.jit(lambda v: v.at[index].add(values))(X), expected)


def test_traced_entries_inside_a_tuple_are_stacked():
    def pick(v, i):
        return v[(i, 0), (1, i)]

    i = np.int64(2)
    np.testing.assert_array_equal(ad.jit(pick)(X, i), X[(2, 0), (1, 2)])
    expected = np.zeros_like(X)
    np.add.at(expected, ((2, 0), (1, 2)), 1.0)
    np.testing.assert_array_equal(ad.grad(lambda v: anp.sum(pick(v, i)))(X), expected)


def test_out_of_range_entry_of_a_tuple_is_an_error():
    with pytest.raises(ad.Error, match="out of range"):
        ad.jit(lambda v: v[(0, 3), (0, 0)])(X)
