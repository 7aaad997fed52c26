"""reduce, scan, reduce_by_index: exact expectations at zeros, ties, duplicates, out-of-range and
empty inputs, non-commutative operators, finite differences at smooth points, and agreement of the
specialised and general rules."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.core.pytree import flatten
from adarray.core.types import Aval
from adarray.parallel.api import _trace_operator
from adarray.parallel.general import general_reduce, general_scan
from adarray.testing import check_grads, numerical_gradient

rng = np.random.default_rng(0)


def matmul(a, b):
    return a @ b


def compose(f, g):
    """Linear functions x -> a x + b: apply f, then g (non-commutative)."""
    return f[0] * g[0], f[1] * g[0] + g[1]


def _general(kind, op, x, identity):
    """Run the general rule on any operator (even one the API would specialise)."""
    element = Aval(np.shape(x)[1:], np.float64)
    program = _trace_operator(op, [element], flatten(0.0)[1])
    run = general_reduce if kind == "reduce" else general_scan
    return run(program, [x], [np.asarray(identity)])[0]


# --- reduce --------------------------------------------------------------------------------------

@pytest.mark.parametrize("x, expected", [
    ([2.0, 3.0, 4.0], [12.0, 8.0, 6.0]),
    ([2.0, 0.0, 4.0], [0.0, 8.0, 0.0]),       # one zero: only it gets the product of the others
    ([0.0, 3.0, 0.0], [0.0, 0.0, 0.0]),       # two zeros: every partial is 0
    ([5.0], [1.0]),
])
def test_reduce_mul_exact_with_zeros(x, expected):
    x = np.array(x)
    for fn in (lambda v: ad.reduce("mul", v), lambda v: ad.reduce(lambda a, b: a * b, v),
               lambda v: _general("reduce", lambda a, b: a * b, v, 1.0)):
        np.testing.assert_array_equal(ad.grad(fn)(x), expected)
        np.testing.assert_array_equal(ad.jvp(fn, (x,), (np.ones_like(x),))[1], np.sum(expected))


def test_reduce_max_tie_goes_to_the_lowest_index_in_every_rule():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    for fn in (lambda v: ad.reduce("max", v), anp.max, lambda v: _general("reduce", anp.maximum, v, -np.inf)):
        np.testing.assert_array_equal(ad.grad(fn)(x), [0.0, 1.0, 0.0, 0.0])


def test_reduce_empty_and_known_identities():
    empty = np.zeros((0, 2))
    np.testing.assert_array_equal(ad.reduce("add", empty), [0.0, 0.0])
    np.testing.assert_array_equal(ad.reduce("mul", empty), [1.0, 1.0])
    np.testing.assert_array_equal(ad.reduce("max", empty), [-np.inf, -np.inf])
    np.testing.assert_array_equal(ad.reduce(matmul, np.zeros((0, 2, 2)), identity=np.eye(2)), np.eye(2))
    assert ad.grad(lambda v: anp.sum(ad.reduce("mul", v)))(empty).shape == (0, 2)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_reduce_of_a_non_commutative_operator(n):
    ms = rng.normal(size=(n, 2, 2))
    weights = np.array([[1.0, -2.0], [0.5, 3.0]])
    f = lambda ms: anp.sum(ad.reduce(matmul, ms, identity=np.eye(2)) * weights)
    np.testing.assert_allclose(ad.reduce(matmul, ms, identity=np.eye(2)), np.linalg.multi_dot([np.eye(2), *ms]))
    np.testing.assert_allclose(ad.grad(f)(ms), numerical_gradient(lambda m: float(f(m)), ms), rtol=1e-6, atol=1e-8)


def test_reduce_of_tuple_elements_and_an_axis():
    a, b = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    ra, rb = ad.reduce(compose, (a, b), axis=1, identity=(1.0, 0.0))
    expected_a, expected_b = np.ones(3), np.zeros(3)
    for k in range(5):
        expected_a, expected_b = expected_a * a[:, k], expected_b * a[:, k] + b[:, k]
    np.testing.assert_allclose(ra, expected_a)
    np.testing.assert_allclose(rb, expected_b)
    g = ad.grad(lambda b: anp.sum(ad.reduce(compose, (a, b), axis=1, identity=(1.0, 0.0))[1]))(b)
    np.testing.assert_allclose(g, numerical_gradient(lambda v: float(np.sum(ad.reduce(compose, (a, v), axis=1,
                                                                                  identity=(1.0, 0.0))[1])), b))


MONOIDS = [("add", lambda a, b: a + b, 0.0), ("mul", lambda a, b: a * b, 1.0), ("max", anp.maximum, -np.inf)]


@pytest.mark.parametrize("name, op, identity", MONOIDS, ids=[m[0] for m in MONOIDS])
def test_specialised_and_general_reduce_agree(name, op, identity):
    x = rng.normal(size=7)
    special = ad.grad(lambda v: ad.reduce(name, v))(x)
    general = ad.grad(lambda v: _general("reduce", op, v, identity))(x)
    np.testing.assert_allclose(general, special, rtol=1e-12)


def test_user_lambdas_that_are_monoids_use_the_fast_rule():
    program = ad.make_ir(ad.grad(lambda v: ad.reduce(lambda a, b: a * b, v)))(np.ones(4))
    assert "general" not in str(program)
    vectorised = ad.make_ir(lambda v: ad.reduce(lambda a, b: a + b, v))(np.ones((4, 3)))
    assert "general" not in str(vectorised)
    general = ad.make_ir(lambda v: ad.reduce(lambda a, b: a + b * 2.0, v, identity=0.0))(np.ones(4))
    assert "general_reduce" in str(general)


# --- scan ----------------------------------------------------------------------------------------

def test_cumprod_with_zeros_matches_the_hand_derived_gradient():
    x = np.array([2.0, 0.0, 0.0, 3.0])
    np.testing.assert_array_equal(ad.grad(lambda v: anp.sum(ad.scan("mul", v)))(x), [1.0, 2.0, 0.0, 0.0])
    np.testing.assert_array_equal(ad.grad(lambda v: anp.sum(_general("scan", lambda a, b: a * b, v, 1.0)))(x),
                                  [1.0, 2.0, 0.0, 0.0])
    np.testing.assert_array_equal(ad.jvp(lambda v: ad.scan("mul", v), (x,), (np.ones(4),))[1], [1.0, 2.0, 0.0, 0.0])


def test_cummax_ties_and_reverse():
    x = np.array([1.0, 3.0, 3.0, 2.0, 5.0])
    weights = np.arange(1.0, 6.0)
    np.testing.assert_array_equal(ad.grad(lambda v: anp.sum(ad.scan("max", v) * weights))(x), [1, 9, 0, 0, 5])
    np.testing.assert_array_equal(ad.grad(lambda v: anp.sum(ad.scan("max", v, reverse=True) * weights))(x),
                                  [0, 0, 0, 0, 15])
    general = ad.grad(lambda v: anp.sum(_general("scan", anp.maximum, v, -np.inf) * weights))(x)
    np.testing.assert_array_equal(general, [1, 9, 0, 0, 5])


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("inclusive", [False, True])
def test_scan_variants_match_a_python_loop(reverse, inclusive):
    a, b = rng.uniform(0.5, 1.5, size=6), rng.normal(size=6)
    out_a, out_b = ad.scan(compose, (a, b), reverse=reverse, inclusive=inclusive, identity=(1.0, 0.0))
    order = list(range(6))[::-1] if reverse else list(range(6))
    acc, expected = (1.0, 0.0), {}
    for i in order:
        if not inclusive:
            expected[i] = acc
        acc = compose(acc, (a[i], b[i]))
        if inclusive:
            expected[i] = acc
    np.testing.assert_allclose(out_a, [expected[i][0] for i in range(6)])
    np.testing.assert_allclose(out_b, [expected[i][1] for i in range(6)])
    f = lambda v: float(np.sum(ad.scan(compose, (a, v), reverse=reverse, inclusive=inclusive,
                                       identity=(1.0, 0.0))[1] ** 2))
    g = ad.grad(lambda v: anp.sum(ad.scan(compose, (a, v), reverse=reverse, inclusive=inclusive,
                                          identity=(1.0, 0.0))[1] ** 2))(b)
    np.testing.assert_allclose(g, numerical_gradient(f, b), rtol=1e-6, atol=1e-8)


def test_scan_of_matrices_and_second_order():
    ms = rng.normal(size=(5, 2, 2)) * 0.8
    f = lambda ms: anp.sum(ad.scan(matmul, ms, identity=np.eye(2)) ** 2)
    np.testing.assert_allclose(ad.grad(f)(ms), numerical_gradient(lambda m: float(f(m)), ms), rtol=1e-6, atol=1e-8)
    v = rng.normal(size=ms.shape)
    hv = ad.jvp(ad.grad(f), (ms,), (v,))[1]
    eps = 1e-5
    np.testing.assert_allclose(hv, (ad.grad(f)(ms + eps * v) - ad.grad(f)(ms - eps * v)) / (2 * eps),
                               rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name, op, identity", MONOIDS, ids=[m[0] for m in MONOIDS])
def test_specialised_and_general_scan_agree(name, op, identity):
    x, weights = rng.normal(size=7), rng.normal(size=7)
    special = ad.grad(lambda v: anp.sum(ad.scan(name, v) * weights))(x)
    general = ad.grad(lambda v: anp.sum(_general("scan", op, v, identity) * weights))(x)
    np.testing.assert_allclose(general, special, rtol=1e-10, atol=1e-12)


def test_logcumsumexp_and_scan_empty_and_length_one():
    x = np.array([1000.0, 1000.0, -5.0])
    np.testing.assert_allclose(ad.scan("logaddexp", x), np.logaddexp.accumulate(x))
    np.testing.assert_allclose(ad.grad(lambda v: anp.logcumsumexp(v)[-1])(x), np.exp(x - np.logaddexp.reduce(x)))
    assert ad.scan("add", np.zeros(0)).shape == (0,)
    np.testing.assert_array_equal(ad.scan(matmul, np.ones((1, 2, 2)), identity=np.eye(2)), np.ones((1, 2, 2)))


# --- reduce_by_index -----------------------------------------------------------------------------

INDICES = np.array([0, 2, 2, -1, 5, 0])  # duplicates, a negative and an out-of-range index


def test_reduce_by_index_ignores_out_of_range_indices():
    values = np.arange(1.0, 7.0)
    np.testing.assert_array_equal(ad.reduce_by_index(np.zeros(3), "add", INDICES, values), [7.0, 0.0, 5.0])
    g = ad.grad(lambda v: anp.sum(ad.reduce_by_index(np.zeros(3), "add", INDICES, v) * np.array([1.0, 2.0, 3.0])),
                )(values)
    np.testing.assert_array_equal(g, [1.0, 3.0, 3.0, 0.0, 0.0, 1.0])


def test_reduce_by_index_mul_with_zeros_and_duplicates():
    dest = np.array([2.0, 1.0, 3.0])
    values = np.array([0.0, 2.0, 0.0, 9.0, 9.0, 4.0])  # bin 0: 2 * 0 * 4 (one zero), bin 2: 3 * 2 * 0
    f = lambda d, v: anp.sum(ad.reduce_by_index(d, "mul", INDICES, v))
    np.testing.assert_array_equal(ad.reduce_by_index(dest, "mul", INDICES, values), [0.0, 1.0, 0.0])
    gd, gv = ad.grad(f, argnums=(0, 1))(dest, values)
    np.testing.assert_array_equal(gd, [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(gv, [8.0, 0.0, 6.0, 0.0, 0.0, 0.0])
    _, tangent = ad.jvp(lambda v: ad.reduce_by_index(dest, "mul", INDICES, v), (values,), (np.ones(6),))
    np.testing.assert_array_equal(tangent, [8.0, 0.0, 6.0])


def test_reduce_by_index_max_ties_destination_first_then_lowest_index():
    dest = np.array([5.0, 0.0, 1.0])
    values = np.array([5.0, 7.0, 7.0, 9.0, 9.0, 2.0])
    gd, gv = ad.grad(lambda d, v: anp.sum(ad.reduce_by_index(d, "max", INDICES, v)), argnums=(0, 1))(dest, values)
    np.testing.assert_array_equal(gd, [1.0, 1.0, 0.0])   # bin 0: dest 5 ties value 5 -> dest wins
    np.testing.assert_array_equal(gv, [0.0, 1.0, 0.0, 0.0, 0.0, 0.0])   # bin 2: first 7 wins


@pytest.mark.parametrize("op, identity", [("add", 0.0), ("mul", 1.0), ("max", -np.inf), ("min", np.inf)])
def test_specialised_and_general_reduce_by_index_agree(op, identity):
    dest, values = rng.normal(size=(3, 2)), rng.normal(size=(6, 2))
    function = {"add": lambda a, b: a + b * 1.0, "mul": lambda a, b: a * (b * 1.0),
                "max": lambda a, b: anp.maximum(a, b * 1.0), "min": lambda a, b: anp.minimum(a, b * 1.0)}[op]
    weights = rng.normal(size=(3, 2))
    special = lambda d, v: anp.sum(ad.reduce_by_index(d, op, INDICES, v) * weights)
    general = lambda d, v: anp.sum(ad.reduce_by_index(d, function, INDICES, v, identity=identity) * weights)
    assert "general_scan" in str(ad.make_ir(general)(dest, values))
    np.testing.assert_allclose(general(dest, values), special(dest, values), rtol=1e-12)
    for a, b in zip(ad.grad(general, argnums=(0, 1))(dest, values), ad.grad(special, argnums=(0, 1))(dest, values)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_general_reduce_by_index_with_a_non_commutative_operator():
    ms = rng.normal(size=(6, 2, 2))
    dest = np.stack([np.eye(2)] * 3)
    out = ad.reduce_by_index(dest, matmul, INDICES, ms, identity=np.eye(2))
    np.testing.assert_allclose(out[0], ms[0] @ ms[5])
    np.testing.assert_allclose(out[2], ms[1] @ ms[2])
    np.testing.assert_allclose(out[1], np.eye(2))
    f = lambda ms: float(np.sum(ad.reduce_by_index(dest, matmul, INDICES, ms, identity=np.eye(2)) ** 2))
    g = ad.grad(lambda ms: anp.sum(ad.reduce_by_index(dest, matmul, INDICES, ms, identity=np.eye(2)) ** 2))(ms)
    np.testing.assert_allclose(g, numerical_gradient(f, ms), rtol=1e-6, atol=1e-8)


def test_reduce_by_index_empty_values():
    out = ad.reduce_by_index(np.arange(3.0), lambda a, b: a + 2.0 * b - b, np.zeros(0, np.int64), np.zeros(0),
                             identity=0.0)
    np.testing.assert_array_equal(out, np.arange(3.0))


# --- sugar, and the cases where peers fail --------------------------------------------------------

def test_segment_reductions():
    data = np.array([2.0, 0.0, 3.0, 4.0, 1.0])
    ids = np.array([0, 0, 1, 1, 3])
    np.testing.assert_array_equal(ad.segment_sum(data, ids, 4), [2.0, 7.0, 0.0, 1.0])
    np.testing.assert_array_equal(ad.segment_prod(data, ids, 4), [0.0, 12.0, 1.0, 1.0])
    np.testing.assert_array_equal(ad.segment_max(data, ids, 4), [2.0, 4.0, -np.inf, 1.0])
    np.testing.assert_array_equal(ad.segment_mean(data, ids, 4), [1.0, 3.5, 0.0, 1.0])
    # JAX raises NotImplementedError for the gradient of segment_prod; here it is exact:
    np.testing.assert_array_equal(ad.grad(lambda d: anp.sum(ad.segment_prod(d, ids, 4)))(data), [0, 2, 4, 3, 1])
    np.testing.assert_array_equal(ad.jvp(lambda d: ad.segment_prod(d, ids, 4), (data,), (np.ones(5),))[1],
                                  [2.0, 7.0, 0.0, 1.0])


def test_at_multiply_and_scatter_extrema_with_duplicates_in_both_modes():
    x = np.array([1.5, 2.0, 3.0])
    index, updates = np.array([0, 0, 1]), np.array([2.0, 0.0, 5.0])
    f = lambda x, u: x.at[index].multiply(u)
    _, tangent = ad.jvp(f, (x, updates), (np.ones(3), np.ones(3)))
    np.testing.assert_array_equal(tangent, [3.0, 7.0, 1.0])
    gx, gu = ad.grad(lambda x, u: anp.sum(f(x, u)), argnums=(0, 1))(x, updates)
    np.testing.assert_array_equal(gx, [0.0, 5.0, 1.0])
    np.testing.assert_array_equal(gu, [0.0, 3.0, 2.0])
    gx, gu = ad.grad(lambda x, u: anp.sum(x.at[index].max(u)), argnums=(0, 1))(x, np.array([1.5, 1.5, 2.0]))
    np.testing.assert_array_equal(gx, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(gu, [0.0, 0.0, 0.0])


def test_bincount_and_histogram_are_differentiable_in_the_weights():
    x = np.array([0, 1, 1, 3])
    w = np.array([0.5, 1.0, 2.0, 4.0])
    np.testing.assert_array_equal(anp.bincount(x, w), np.bincount(x, w))
    np.testing.assert_array_equal(ad.grad(lambda w: anp.sum(anp.bincount(x, w) ** 2))(w), [1.0, 6.0, 6.0, 8.0])
    values = rng.normal(size=20)
    counts, edges = anp.histogram(values, bins=4)
    expected_counts, expected_edges = np.histogram(values, bins=4)
    np.testing.assert_array_equal(counts, expected_counts)
    np.testing.assert_allclose(edges, expected_edges)
    weights = rng.normal(size=20)
    hist = lambda w: anp.histogram(values, bins=np.array([-3.0, -1.0, 0.0, 1.0, 3.0]), weights=w)[0]
    np.testing.assert_allclose(hist(weights), np.histogram(values, bins=[-3, -1, 0, 1, 3], weights=weights)[0])
    np.testing.assert_allclose(ad.jacrev(hist)(weights).sum(axis=0), np.ones(20) * (np.abs(values) <= 3))


def test_vmap_of_the_general_rules():
    ms = rng.normal(size=(3, 4, 2, 2))
    out = ad.vmap(lambda m: ad.reduce(matmul, m, identity=np.eye(2)))(ms)
    for i in range(3):
        np.testing.assert_allclose(out[i], np.linalg.multi_dot(list(ms[i])))
    grads = ad.vmap(ad.grad(lambda m: anp.sum(ad.scan(matmul, m, identity=np.eye(2)))))(ms)
    for i in range(3):
        np.testing.assert_allclose(grads[i], ad.grad(lambda m: anp.sum(ad.scan(matmul, m, identity=np.eye(2))))(ms[i]))


def _one_plus(a, b):
    """(1 + a)(1 + b) - 1: associative and commutative, but no monoid the rules recognise."""
    return a + b + a * b


def _folded(xs):
    total = xs[0]
    for x in xs[1:]:
        total = _one_plus(total, x)
    return total


@pytest.mark.parametrize("op, xs, identity", [
    (_one_plus, rng.normal(size=6) * 0.4, 0.0),
    (matmul, rng.normal(size=(5, 2, 2)), np.eye(2)),
    (_one_plus, rng.normal(size=(5, 40)) * 0.3, np.zeros(40)),  # lane-wise: stays lane-wise
], ids=["scalars", "matrices", "lanes"])
def test_no_identity_needed_for_reduce_and_inclusive_scans(op, xs, identity):
    """Without an identity the operator is lifted to (present, element) pairs; results and
    derivatives equal those with the identity, to second order."""
    np.testing.assert_allclose(ad.reduce(op, xs), _folded(xs) if op is _one_plus else np.linalg.multi_dot(list(xs)))
    np.testing.assert_allclose(ad.scan(op, xs, reverse=True), ad.scan(op, xs, reverse=True, identity=identity))
    weights = rng.normal(size=np.shape(xs))
    for given in (None, identity):
        reduce_loss = lambda v, given=given: anp.sum(ad.reduce(op, v, identity=given) ** 2)  # noqa: E731
        scan_loss = lambda v, given=given: anp.sum(ad.scan(op, v, identity=given) * weights)  # noqa: E731
        if given is None:
            plain = (ad.grad(reduce_loss)(xs), ad.grad(scan_loss)(xs))
        else:
            np.testing.assert_allclose(plain[0], ad.grad(reduce_loss)(xs), rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(plain[1], ad.grad(scan_loss)(xs), rtol=1e-10, atol=1e-12)
    check_grads(lambda v: ad.reduce(op, v), (xs,), order=2)
    check_grads(lambda v: ad.scan(op, v), (xs,), order=2)


def test_no_identity_needed_for_reduce_by_index():
    """The destination supplies each bin's initial value; empty bins keep it."""
    dest, values = rng.normal(size=4) * 0.4, rng.normal(size=6) * 0.4
    indices = np.array([0, 2, 2, 0, 2, 7])   # bin 1 and bin 3 stay empty, 7 is ignored
    expected = dest.copy()
    for i, v in zip(indices, values):
        if 0 <= i < 4:
            expected[i] = _one_plus(expected[i], v)
    np.testing.assert_allclose(ad.reduce_by_index(dest, _one_plus, indices, values), expected)
    check_grads(lambda d, v: ad.reduce_by_index(d, _one_plus, indices, v), (dest, values), order=2)


def test_an_identity_is_required_only_where_it_is_used():
    with pytest.raises(ad.ArgumentError, match="empty axis .* identity"):
        ad.reduce(_one_plus, np.ones(0))
    with pytest.raises(ad.ArgumentError, match="exclusive scan .* identity"):
        ad.scan(_one_plus, np.ones(3), inclusive=False)
    assert ad.reduce(_one_plus, np.zeros(0), identity=0.0) == 0.0


def test_bad_operators_are_clear_errors():
    with pytest.raises(ad.ShapeError, match="must return one element"):
        ad.reduce(lambda a, b: (a, b), np.ones(3), identity=0.0)
    with pytest.raises(ad.ArgumentError, match="unknown operator"):
        ad.scan("xor", np.ones(3))
    with pytest.raises(ad.ShapeError, match="1-d integer"):
        ad.reduce_by_index(np.zeros(3), "add", np.array([0.5]), np.ones(1))
