"""Exact expectations for the parallel building blocks where rules are easy to get wrong: second and
third derivatives of products with zeros (scatter-mul: segment_prod, reduce_by_index "mul",
.at[].multiply), integer index dtypes in every reduce_by_index path, the remaining monoids and sugar
("and", "or", logaddexp, exclusive scans, cummin, segment_min, segment_mean), and the -inf convention
of logsumexp. Oracles are plain Python loops over the definition, never the code under test."""
import math

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import numerical_gradient

rng = np.random.default_rng(7)


# --- products with zeros: Hessians (and a third derivative) against the definition ---------------

def product_hessian(dest, values, ids, weights):
    """d^2/dv^2 of sum_b weights[b] * dest[b] * prod_{ids[i] = b} values[i], from the definition:
    entry (i, j), i != j in one bin, is weights * dest times the product of the bin's other values."""
    n = len(values)
    hessian = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            b = ids[i]
            if i != j and ids[j] == b and 0 <= b < len(dest):
                rest = [values[k] for k in range(n) if ids[k] == b and k not in (i, j)]
                hessian[i, j] = weights[b] * dest[b] * math.prod(rest)
    return hessian


# (values, ids): one zero; two zeros in one bin; zeros in different bins; a zero and an ignored index
ZERO_CASES = [
    (np.array([2.0, 0.0, 3.0, 1.5, -0.5]), np.array([0, 0, 0, 1, 1])),
    (np.array([2.0, 0.0, 0.0, 3.0, 1.5]), np.array([0, 0, 0, 0, 1])),
    (np.array([0.0, 2.0, 0.0, 3.0, 1.5]), np.array([0, 0, 1, 1, 1])),
    (np.array([0.0, 2.0, 0.0, 3.0, 0.0]), np.array([0, 0, 1, 1, 5])),
]
WEIGHTS = np.array([1.0, -2.0])


def _hessians(f, x):
    """Forward-over-reverse and reverse-over-reverse."""
    return ad.jacfwd(ad.grad(f))(x), ad.jacrev(ad.grad(f))(x)


@pytest.mark.parametrize("values, ids", ZERO_CASES, ids=["one-zero", "two-zeros", "zeros-in-two-bins", "ignored"])
def test_segment_prod_hessian_at_zeros(values, ids):
    f = lambda v: anp.sum(ad.segment_prod(v, ids, 2) * WEIGHTS)
    expected = product_hessian(np.ones(2), values, ids, WEIGHTS)
    for hessian in _hessians(f, values):
        np.testing.assert_array_equal(hessian, expected)


@pytest.mark.parametrize("values, ids", ZERO_CASES, ids=["one-zero", "two-zeros", "zeros-in-two-bins", "ignored"])
def test_reduce_by_index_mul_hessian_at_zeros(values, ids):
    dest = np.array([1.5, -0.5])
    for op in ("mul", lambda a, b: a * b):  # the monoid and a lambda recognised as it
        f = lambda v, op=op: anp.sum(ad.reduce_by_index(dest, op, ids, v) * WEIGHTS)
        for hessian in _hessians(f, values):
            np.testing.assert_array_equal(hessian, product_hessian(dest, values, ids, WEIGHTS))
    # the mixed second derivative in dest: d^2 / d dest_b d v_i = weights_b * (product of the others)
    mixed = ad.jacfwd(ad.grad(lambda d, v: anp.sum(ad.reduce_by_index(d, "mul", ids, v) * WEIGHTS)), argnums=1)
    expected = np.zeros((2, len(values)))
    for i, b in enumerate(ids):
        if b < 2:
            expected[b, i] = WEIGHTS[b] * math.prod(values[k] for k in range(len(values)) if ids[k] == b and k != i)
    np.testing.assert_array_equal(mixed(dest, values), expected)


@pytest.mark.parametrize("values, ids", ZERO_CASES[:3], ids=["one-zero", "two-zeros", "zeros-in-two-bins"])
def test_at_multiply_hessian_at_zeros_with_a_zero_destination(values, ids):
    x = np.array([0.0, 2.0])   # a zero destination too: it is one more factor of its slot
    f = lambda x, u: anp.sum(x.at[ids].multiply(u) * WEIGHTS)
    for argnums in (0, 1):
        joint = np.concatenate([x, values])
        joint_ids = np.concatenate([[0, 1], ids])
        full = product_hessian(np.ones(2), joint, joint_ids, WEIGHTS)
        hessian = ad.jacfwd(ad.grad(f, argnums=argnums), argnums=argnums)(x, values)
        expected = full[:2, :2] if argnums == 0 else full[2:, 2:]
        np.testing.assert_array_equal(hessian, expected)
    cross = ad.jacrev(ad.grad(f, argnums=0), argnums=1)(x, values)
    np.testing.assert_array_equal(cross, product_hessian(np.ones(2), np.concatenate([x, values]),
                                                         np.concatenate([[0, 1], ids]), WEIGHTS)[:2, 2:])


def test_the_issue_repro_grad_of_grad_through_a_scalar():
    product = lambda d: ad.segment_prod(d, np.array([0, 0, 0]), 1)[0]
    second = ad.grad(lambda s: ad.grad(product)(anp.stack([2.0, s, 3.0]))[0])(0.0)
    assert second == 3.0   # d^2 (x0 x1 x2) / dx0 dx1 = x2


def test_third_derivative_of_a_product_with_two_zeros():
    # d^3 (a b c d) / da db dc = d; all four of a, b, c are not needed to be non-zero
    def product(a, b, c):
        return ad.segment_prod(anp.stack([a, b, c, 4.0]), np.array([0, 0, 0, 0]), 1)[0]

    third = ad.grad(lambda c: ad.grad(lambda b: ad.grad(product, argnums=0)(0.0, b, c))(0.0))(0.0)
    assert third == 4.0


def test_vmap_of_the_hessian_of_a_segment_product():
    batch = np.array([[2.0, 0.0, 3.0, 1.5, -0.5], [0.0, 0.0, 3.0, 2.0, 0.0]])
    ids = np.array([0, 0, 0, 1, 1])
    f = lambda v: anp.sum(ad.segment_prod(v, ids, 2) * WEIGHTS)
    hessians = ad.vmap(ad.jacfwd(ad.grad(f)))(batch)
    for row, hessian in zip(batch, hessians):
        np.testing.assert_array_equal(hessian, product_hessian(np.ones(2), row, ids, WEIGHTS))


def test_scatter_mul_with_rows_and_negative_indices_matches_finite_differences():
    x, u = rng.normal(size=(3, 2)), rng.normal(size=(4, 2))
    u[1, 0] = 0.0
    index = np.array([-1, 0, 2, 0])   # -1 is row 2, as in NumPy
    weights = rng.normal(size=(3, 2))
    f = lambda x, u: anp.sum(x.at[index].multiply(u) * weights) ** 2
    grad, value = ad.grad(f, argnums=1), ad.jit(f)
    np.testing.assert_allclose(grad(x, u), numerical_gradient(lambda v: float(value(x, v)), u), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ad.jacfwd(grad, argnums=1)(x, u).reshape(8, 8),
                               numerical_gradient(lambda v: grad(x, v), u).reshape(8, 8), rtol=1e-5, atol=1e-7)


def test_scatter_extrema_with_rows_and_negative_indices():
    x = np.array([[1.0, 5.0], [2.0, 0.0], [0.5, 3.0]])
    u = np.array([[4.0, 5.0], [1.0, 7.0], [4.0, 1.0]])
    index = np.array([-3, 1, 0])   # rows 0, 1, 0
    gx, gu = ad.grad(lambda x, u: anp.sum(x.at[index].max(u) * np.arange(1.0, 7.0).reshape(3, 2)),
                     argnums=(0, 1))(x, u)
    # row 0: max(1, 4, 4) = 4 -> the first 4 (update 0); max(5, 5, 1) = 5 -> x wins the tie
    # row 1: max(2, 1) = 2 -> x; max(0, 7) = 7 -> update 1
    np.testing.assert_array_equal(gx, [[0, 2], [3, 0], [5, 6]])
    np.testing.assert_array_equal(gu, [[1, 0], [0, 4], [0, 0]])
    _, tangent = ad.jvp(lambda x, u: x.at[index].max(u), (x, u), (np.full((3, 2), 10.0), np.arange(6.0).reshape(3, 2)))
    np.testing.assert_array_equal(tangent, [[0, 10], [10, 3], [10, 10]])


# --- integer index dtypes --------------------------------------------------------------------------

INDEX_DTYPES = [np.int32, np.int64, np.uint32, np.int16]
IDS = [0, 2, 2, 1, 5, 0]   # duplicates and one out-of-range index


def _rbi_paths():
    dest = np.array([0.5, -1.0, 2.0])
    return {
        "add": (dest, "add", None), "mul": (dest, "mul", None), "min": (dest, "min", None),
        "max": (dest, "max", None), "logaddexp": (dest, "logaddexp", None),
        "recognised-lambda": (dest, lambda a, b: a * b, None),
        "general": (dest, lambda a, b: a + 2.0 * b, 0.0),
        "lanes": (np.stack([dest, dest + 1.0], 1), lambda a, b: anp.logaddexp(a, b * 1.0), np.full(2, -np.inf)),
    }


@pytest.mark.parametrize("path", list(_rbi_paths()))
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=lambda d: np.dtype(d).name)
def test_reduce_by_index_accepts_every_integer_index_dtype(path, index_dtype):
    dest, op, identity = _rbi_paths()[path]
    values = rng.normal(size=(6,) + dest.shape[1:])
    reference = np.array(IDS, np.int64)
    f = lambda v, idx: anp.sum(ad.reduce_by_index(dest, op, idx, v, identity=identity) ** 2)
    expected_value = f(values, reference)
    expected_grad = ad.grad(f)(values, reference)
    np.testing.assert_allclose(f(values, np.array(IDS, index_dtype)), expected_value, rtol=1e-13)
    np.testing.assert_allclose(ad.grad(f)(values, np.array(IDS, index_dtype)), expected_grad, rtol=1e-12)
    np.testing.assert_allclose(expected_grad, numerical_gradient(lambda v: float(f(v, reference)), values),
                               rtol=1e-6, atol=1e-8)


def test_the_issue_repro_int32_general_operator():
    out = ad.reduce_by_index(np.zeros(2), lambda a, b: a + 2 * b, np.array([0, 1], np.int32), np.ones(2),
                             identity=0.0)
    np.testing.assert_array_equal(out, [2.0, 2.0])


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_segment_sugar_and_bincount_with_int32_ids(index_dtype):
    data, ids = np.array([2.0, 0.0, 3.0, 4.0, 1.0]), np.array([0, 0, 1, 1, 3], index_dtype)
    np.testing.assert_array_equal(ad.segment_sum(data, ids, 4), [2.0, 7.0, 0.0, 1.0])
    np.testing.assert_array_equal(ad.segment_min(data, ids, 4), [0.0, 3.0, np.inf, 1.0])
    np.testing.assert_array_equal(ad.grad(lambda d: anp.sum(ad.segment_prod(d, ids, 4)))(data), [0, 2, 4, 3, 1])
    np.testing.assert_array_equal(anp.bincount(ids, data, minlength=4), [2.0, 7.0, 0.0, 1.0])


# --- the other monoids and the sugar ---------------------------------------------------------------

def test_and_or_reduce_scan_and_reduce_by_index():
    x = np.array([[True, False], [True, True], [True, False]])
    np.testing.assert_array_equal(ad.reduce("and", x), [True, False])
    np.testing.assert_array_equal(ad.reduce("or", x), [True, True])
    np.testing.assert_array_equal(ad.reduce("and", np.zeros((0, 2), bool)), [True, True])
    np.testing.assert_array_equal(ad.reduce("or", np.zeros((0, 2), bool)), [False, False])
    flags = np.array([True, True, False, True])
    np.testing.assert_array_equal(ad.scan("and", flags), [True, True, False, False])
    np.testing.assert_array_equal(ad.scan("or", ~flags), [False, False, True, True])
    np.testing.assert_array_equal(ad.scan("and", flags, reverse=True), [False, False, False, True])
    np.testing.assert_array_equal(ad.scan("or", flags, inclusive=False), [False, True, True, True])
    dest = np.array([True, False, True])
    values = np.array([True, True, False, False, True, True])
    np.testing.assert_array_equal(ad.reduce_by_index(dest, "and", IDS, values), [True, False, False])
    np.testing.assert_array_equal(ad.reduce_by_index(dest, "or", IDS, values), [True, False, True])
    np.testing.assert_array_equal(ad.reduce_by_index(~dest, "or", IDS, values), [True, True, True])
    # the flags are not differentiated: a gradient through a select on them is the select's
    g = ad.grad(lambda v: anp.sum(anp.where(ad.scan("or", v > 1.0), v, 0.0)))(np.array([0.5, 2.0, 0.1]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 1.0])


def test_reduce_by_index_logaddexp_values_gradients_and_empty_bins():
    dest = np.array([-np.inf, -np.inf, 0.5])
    values = np.array([1.0, -1000.0, 2.0, 3.0, 4.0, -np.inf])
    ids = np.array([0, 2, 2, -1, 5, 0])   # bin 1 stays empty; -1 and 5 are ignored
    out = ad.reduce_by_index(dest, "logaddexp", ids, values)
    np.testing.assert_allclose(out, [1.0, -np.inf, np.logaddexp.reduce([0.5, -1000.0, 2.0])], rtol=1e-15)
    gd, gv = ad.grad(lambda d, v: anp.sum(ad.reduce_by_index(d, "logaddexp", ids, v)), argnums=(0, 1))(dest, values)
    third = np.exp(np.array([0.5, -1000.0, 2.0]) - out[2])
    np.testing.assert_allclose(gd, [0.0, 0.0, third[0]], rtol=1e-14)   # the empty bin 1: zero, not NaN
    np.testing.assert_allclose(gv, [1.0, third[1], third[2], 0.0, 0.0, 0.0], rtol=1e-14)
    smooth_dest, smooth = rng.normal(size=3), rng.normal(size=6) * 3
    f = lambda d, v: anp.sum(ad.reduce_by_index(d, "logaddexp", IDS, v) * np.array([1.0, -2.0, 0.5]))
    numeric = (numerical_gradient(lambda a: float(f(a, smooth)), smooth_dest),
               numerical_gradient(lambda a: float(f(smooth_dest, a)), smooth))
    for argnum in (0, 1):
        np.testing.assert_allclose(ad.grad(f, argnums=argnum)(smooth_dest, smooth), numeric[argnum],
                                   rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op", ["add", "mul", "max", "min", "logaddexp"])
@pytest.mark.parametrize("reverse", [False, True])
def test_exclusive_monoid_scans(op, reverse):
    x = np.array([1.5, -0.5, 2.0, 0.0, 3.0])
    identity = {"add": 0.0, "mul": 1.0, "max": -np.inf, "min": np.inf, "logaddexp": -np.inf}[op]
    combine = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
               "logaddexp": np.logaddexp}[op]
    order = range(4, -1, -1) if reverse else range(5)
    expected, acc = np.zeros(5), identity
    for i in order:
        expected[i], acc = acc, combine(acc, x[i])
    np.testing.assert_allclose(ad.scan(op, x, reverse=reverse, inclusive=False), expected, rtol=1e-15)
    weights = np.array([0.5, -1.0, 2.0, 1.5, -0.7])
    f = lambda v: anp.sum(anp.where(anp.isfinite(s := ad.scan(op, v, reverse=reverse, inclusive=False)), s, 0.0)
                          * weights)
    smooth = np.array([1.5, -0.5, 2.0, 0.3, 3.0])
    np.testing.assert_allclose(ad.grad(f)(smooth), numerical_gradient(lambda v: float(f(v)), smooth),
                               rtol=1e-6, atol=1e-8)
    # the last element (first if reverse) enters no output: its gradient is exactly 0
    assert ad.grad(f)(x)[0 if reverse else 4] == 0.0


def test_cummin_ties_and_gradients():
    x = np.array([3.0, 1.0, 1.0, 2.0, 0.5])
    weights = np.arange(1.0, 6.0)
    np.testing.assert_array_equal(anp.cummin(x), [3.0, 1.0, 1.0, 1.0, 0.5])
    # outputs 1..3 take the first 1 (index 1): 2 + 3 + 4
    np.testing.assert_array_equal(ad.grad(lambda v: anp.sum(anp.cummin(v) * weights))(x), [1, 9, 0, 0, 5])
    np.testing.assert_array_equal(ad.grad(lambda v: anp.sum(ad.scan("min", v, reverse=True) * weights))(x),
                                  [0, 0, 0, 0, 15])
    _, tangent = ad.jvp(anp.cummin, (x,), (np.arange(5.0),))
    np.testing.assert_array_equal(tangent, [0, 1, 1, 1, 4])
    x2 = rng.normal(size=(3, 4))
    f = lambda v: anp.sum(anp.cummin(v, axis=1) ** 2)
    np.testing.assert_allclose(ad.grad(f)(x2), numerical_gradient(lambda v: float(f(v)), x2), rtol=1e-6, atol=1e-8)


def test_segment_min_and_segment_mean_gradients():
    data = np.array([2.0, 0.0, 3.0, 3.0, 1.0, 7.0])
    ids = np.array([0, 0, 1, 1, 3, -1])
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(ad.grad(lambda d: anp.sum(ad.segment_min(d, ids, 4) * weights))(data),
                                  [0, 1, 2, 0, 4, 0])   # segment 1 ties: the first 3 wins
    np.testing.assert_array_equal(ad.grad(lambda d: anp.sum(ad.segment_max(d, ids, 4) * weights))(data),
                                  [1, 0, 2, 0, 4, 0])
    np.testing.assert_allclose(ad.grad(lambda d: anp.sum(ad.segment_mean(d, ids, 4) * weights))(data),
                               [0.5, 0.5, 1.0, 1.0, 4.0, 0.0], rtol=1e-15)
    rows = rng.normal(size=(6, 2))
    f = lambda d: anp.sum(ad.segment_mean(d, ids, 4) ** 2) + anp.sum(ad.segment_min(d, ids, 4)[:2] ** 2)
    np.testing.assert_allclose(ad.grad(f)(rows), numerical_gradient(lambda v: float(f(v)), rows),
                               rtol=1e-6, atol=1e-8)


# --- logaddexp at -inf: the documented convention ---------------------------------------------------

def test_logsumexp_of_all_minus_inf_is_minus_inf_with_zero_gradient():
    """An all -inf logsumexp is the log of an empty sum: -inf, and no element carries weight, so the
    gradient is 0 (never NaN), in every mode and at every order; elsewhere it is the softmax."""
    x = np.full(3, -np.inf)
    assert ad.reduce("logaddexp", x) == -np.inf
    np.testing.assert_array_equal(ad.grad(lambda v: ad.reduce("logaddexp", v))(x), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ad.jvp(lambda v: ad.reduce("logaddexp", v), (x,), (np.ones(3),))[1], 0.0)
    np.testing.assert_array_equal(ad.jacfwd(ad.grad(anp.logsumexp))(x), np.zeros((3, 3)))
    rows = np.array([[-np.inf, -np.inf], [0.0, np.log(3.0)], [-np.inf, 2.0]])
    g = ad.grad(lambda v: anp.sum(anp.logsumexp(v, axis=1)))(rows)
    np.testing.assert_allclose(g, [[0.0, 0.0], [0.25, 0.75], [0.0, 1.0]], rtol=1e-15)


def test_logcumsumexp_is_exact_over_any_range_and_keeps_the_convention():
    x = np.array([-np.inf, -1000.0, 0.0, -np.inf, 5.0])
    for reverse in (False, True):
        expected = np.logaddexp.accumulate(x[::-1])[::-1] if reverse else np.logaddexp.accumulate(x)
        np.testing.assert_allclose(ad.scan("logaddexp", x, reverse=reverse), expected, rtol=1e-15)
    # d y_1 / d x_1 = 1: the prefix (-inf, -1000) is all x_1 (a global shift would give -inf and NaN)
    np.testing.assert_array_equal(ad.grad(lambda v: anp.logcumsumexp(v)[1])(x), [0.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ad.grad(lambda v: anp.logcumsumexp(v)[0])(x), np.zeros(5))
    float32 = np.array([-200.0, 0.0], np.float32)   # exp(-200) underflows in float32
    np.testing.assert_allclose(anp.logcumsumexp(float32), [-200.0, 0.0], rtol=1e-6)
    smooth = rng.normal(size=(3, 6)) * 4
    weights = rng.normal(size=(3, 6))
    for reverse in (False, True):
        def f(v, reverse=reverse):
            return anp.sum(anp.logcumsumexp(v, axis=1, reverse=reverse) * weights)

        np.testing.assert_allclose(ad.grad(f)(smooth), numerical_gradient(lambda v, f=f: float(f(v)), smooth),
                                   rtol=1e-6, atol=1e-8)


def test_first_order_rules_stay_single_pass_and_higher_orders_exact():
    """The fast path at first order (zero counting, one winner per slot), the exact prefix and
    suffix products only where a derivative of the partials is taken."""
    values, ids = np.array([2.0, 0.0, 3.0, 1.5, -0.5]), np.array([0, 0, 0, 1, 1])
    product = lambda v: anp.sum(ad.segment_prod(v, ids, 2) * WEIGHTS)
    first = str(ad.make_ir(ad.grad(product))(values))
    assert "scatter_mul_partials" in first and "argsort" not in first and "linear_recurrence" not in first
    second = str(ad.make_ir(ad.jacfwd(ad.grad(product)))(values))
    assert "linear_recurrence" in second   # (the sort by slot is folded: the ids are constants here)
    smallest = str(ad.make_ir(ad.grad(lambda v: anp.sum(ad.segment_min(v, ids, 2) * WEIGHTS)))(values))
    backward = smallest.split("scatter_winner")[1]
    assert "argsort" not in smallest and "op=min" not in backward and "gather" not in backward


def test_vmap_of_scatter_gradients_matches_a_loop():
    """The batching rules of scatter_mul_partials and scatter_winner (one flat problem, offset slots)."""
    batch = np.array([[2.0, 0.0, 3.0, 3.0, -1.0], [1.0, 4.0, 0.0, 0.0, 2.0], [0.5, 0.5, 0.5, 0.2, 0.1]])
    ids = np.array([0, 0, 1, 1, -1])
    for segment in (ad.segment_prod, ad.segment_min, ad.segment_max):
        f = lambda v, segment=segment: anp.sum(segment(v, ids, 2) * WEIGHTS)
        batched = ad.vmap(ad.grad(f))(batch)
        tangents = ad.vmap(lambda v, segment=segment: ad.jvp(lambda u: segment(u, ids, 2), (v,), (v,))[1])(batch)
        for row, grad, tangent in zip(batch, batched, tangents):
            np.testing.assert_array_equal(grad, ad.grad(f)(row))
            np.testing.assert_array_equal(tangent, ad.jvp(lambda u, s=segment: s(u, ids, 2), (row,), (row,))[1])
    x, index = np.array([[1.0, 2.0], [0.0, 3.0]]), np.array([1, 1, 0])
    updates = np.array([[2.0, 0.0, 5.0], [3.0, 3.0, -1.0]])
    g = lambda x, u: anp.sum(x.at[index].max(u) ** 2) + anp.sum(x.at[index].multiply(u) ** 2)
    gx, gu = ad.vmap(ad.grad(g, argnums=(0, 1)))(x, updates)
    for i in range(2):
        ex, eu = ad.grad(g, argnums=(0, 1))(x[i], updates[i])
        np.testing.assert_array_equal(gx[i], ex)
        np.testing.assert_array_equal(gu[i], eu)


def _recurrence_reference(a, b, reverse):
    """s_k = a_k s_(k-1) + b_k along the last axis, a zero coefficient restarting (s_k = b_k)."""
    a, b = (np.flip(a, -1), np.flip(b, -1)) if reverse else (a, b)
    s, state = np.empty_like(b), np.zeros(b.shape[:-1])
    for k in range(b.shape[-1]):
        with np.errstate(over="ignore"):
            state = np.where(a[..., k] == 0, 0.0, a[..., k] * state) + b[..., k]
        s[..., k] = state
    return np.flip(s, -1) if reverse else s


@pytest.mark.parametrize("backend", ["numpy", "numba", "jax"])
@pytest.mark.parametrize("reverse", [False, True])
def test_a_zero_coefficient_restarts_a_linear_recurrence_after_an_infinite_state(backend, reverse):
    """The state overflows to inf; the zero coefficient after it restarts (b, not 0 * inf = NaN), in the values and in
    the jvp and vjp (whose zero tangents and cotangents meet the inf state)."""
    from adarray.primitives.scan import linear_recurrence

    if backend != "numpy":
        pytest.importorskip(backend)
    a = np.array([[2.0, 1e300, 1e300, 0.0, 3.0, 0.5, 0.0, 2.0], [1.0, 0.5, 0.0, 2.0, 0.0, 1.0, 4.0, 0.5]])
    b = np.array([[1.0, 1e300, 0.0, 5.0, 1.0, 2.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]])
    if reverse:
        a, b = np.flip(a, 1).copy(), np.flip(b, 1).copy()
    want = _recurrence_reference(a, b, reverse)
    assert np.isinf(want[0]).any() and np.isfinite(want[0, 3:] if not reverse else want[0, :5]).all()
    run = lambda f: ad.jit(f, backend=backend)
    np.testing.assert_allclose(np.asarray(run(lambda a, b: linear_recurrence(a, b, 1, reverse))(a, b)), want)
    np.testing.assert_allclose(np.asarray(run(lambda a, b: linear_recurrence(a.T, b.T, 0, reverse))(a, b)), want.T)
    # derivatives along b only (a's tangent is zero): the recurrence again, restarting in the same places
    db = np.random.default_rng(3).normal(size=b.shape)
    tangent = run(lambda a, b, db: ad.jvp(lambda u: linear_recurrence(a, u, 1, reverse), (b,), (db,))[1])(a, b, db)
    np.testing.assert_allclose(np.asarray(tangent), _recurrence_reference(a, db, reverse))
    weights = np.where(np.isfinite(want), 1.0, 0.0)  # the loss reads only the finite states
    gradient = run(lambda a, b: ad.grad(lambda u: anp.sum(
        weights * anp.where(weights > 0, linear_recurrence(a, u, 1, reverse), 0.0)))(b))(a, b)
    assert np.isfinite(np.asarray(gradient)).all()
    direction = np.random.default_rng(4).normal(size=b.shape)
    h = 1e-6
    plain = lambda u: np.sum(weights * np.where(weights > 0, _recurrence_reference(a, u, reverse), 0.0))
    np.testing.assert_allclose(np.sum(np.asarray(gradient) * direction),
                               (plain(b + h * direction) - plain(b - h * direction)) / (2 * h), rtol=1e-6)
