"""Vectorised operators: a user operator that acts on each position of its elements' trailing axes on
its own (Futhark's `map2 f`) is differentiated lane by lane, with k x k Jacobians per position (k
leaves per element) instead of dense (k |T|)^2 ones. Checked against the monoid where one exists,
against finite differences, and on the structure of the derivative programs (never on timings)."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.core.pytree import flatten
from adarray.core.types import Aval
from adarray.parallel.api import _trace_operator
from adarray.parallel.general import lanes
from adarray.testing import numerical_gradient

rng = np.random.default_rng(11)


def compose(f, g):
    """Linear functions x -> a x + b, composed lane by lane (non-commutative, two leaves)."""
    return f[0] * g[0], f[1] * g[0] + g[1]


def _largest(program):
    """The largest array any equation of a program (or of its nested programs) produces."""
    sizes = [int(np.prod(v.aval.shape, dtype=np.int64)) for eqn in program.eqns for v in eqn.outputs]
    return max(sizes, default=0)


def _operator(op, element_shapes):
    leaves = [np.zeros(s) for s in element_shapes]
    tree = flatten(tuple(leaves) if len(leaves) > 1 else leaves[0])[1]
    return _trace_operator(op, [Aval(s, np.float64) for s in element_shapes], tree)


def test_lane_detection():
    assert lanes(_operator(lambda a, b: anp.logaddexp(a, b), [(3,)])) == (3,)
    assert lanes(_operator(compose, [(4, 2), (4, 2)])) == (4, 2)
    assert lanes(_operator(lambda a, b: a * b + np.arange(3.0), [(3,)])) == (3,)   # constants may vary by lane
    assert lanes(_operator(lambda a, b: anp.where(a > b, a, b * 2.0), [(3,)])) == (3,)
    assert lanes(_operator(lambda a, b: a + 2.0 * b, [()])) is None   # scalar elements: nothing to split
    assert lanes(_operator(lambda a, b: a @ b, [(2, 2)])) is None   # mixes positions
    assert lanes(_operator(lambda a, b: a + anp.sum(b) * 0.0, [(3,)])) is None
    assert lanes(_operator(lambda a, b: a + b[::-1], [(3,)])) is None


def test_the_issue_example_scan_of_logaddexp_over_vectors():
    xs, weights = rng.normal(size=(200, 300)), rng.normal(size=(200, 300))
    f = lambda v: anp.sum(ad.scan(lambda p, q: anp.logaddexp(p, q), v, identity=np.full(300, -np.inf)) * weights)
    monoid = lambda v: anp.sum(ad.scan("logaddexp", v) * weights)
    np.testing.assert_allclose(ad.grad(f)(xs), ad.grad(monoid)(xs), rtol=1e-12, atol=1e-14)
    program = ad.make_ir(ad.grad(f))(xs)
    assert "general_scan" in str(program) and "matrix_recurrence" not in str(program)
    assert _largest(program) <= xs.size   # the dense rule built 200 Jacobians of 300 x 300


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("inclusive", [False, True])
def test_lane_scan_matches_finite_differences_in_both_modes(reverse, inclusive):
    xs, weights = rng.normal(size=(6, 2, 3)), rng.normal(size=(6, 2, 3))
    op = lambda p, q: p + q + p * q   # (1 + p)(1 + q) - 1: associative, smooth, not a known monoid
    identity = np.zeros((2, 3))
    f = lambda v: anp.sum(ad.scan(op, v, reverse=reverse, inclusive=inclusive, identity=identity) * weights)
    value = ad.jit(f)
    np.testing.assert_allclose(ad.grad(f)(xs), numerical_gradient(lambda v: float(value(v)), xs), rtol=1e-6,
                               atol=1e-8)
    tangent = rng.normal(size=xs.shape)
    np.testing.assert_allclose(ad.jvp(f, (xs,), (tangent,))[1], np.sum(ad.grad(f)(xs) * tangent), rtol=1e-10)
    assert "matrix_recurrence" not in str(ad.make_ir(ad.grad(f))(xs))


def test_tuple_elements_use_k_by_k_blocks_per_lane():
    a, b = rng.uniform(0.5, 1.5, size=(40, 50)), rng.normal(size=(40, 50))
    weights = rng.normal(size=(40, 50))
    f = lambda b: anp.sum(ad.scan(compose, (a, b), identity=(np.ones(50), np.zeros(50)))[1] * weights)
    g = ad.grad(f)(b)
    for j in (0, 17, 49):   # each lane is its own scalar scan
        scalar = lambda v, j=j: anp.sum(ad.scan(compose, (a[:, j], v), identity=(1.0, 0.0))[1] * weights[:, j])
        np.testing.assert_allclose(g[:, j], ad.grad(scalar)(b[:, j]), rtol=1e-12, atol=1e-14)
    program = ad.make_ir(ad.grad(f))(b)
    assert _largest(program) <= 4 * b.size   # 2 x 2 per position, not (2 * 50)^2 per element
    small_a, small_b = a[:5, :3], b[:5, :3]
    h = lambda v: anp.sum(ad.scan(compose, (small_a, v), identity=(np.ones(3), np.zeros(3)))[1] ** 2)
    value = ad.jit(h)
    np.testing.assert_allclose(ad.grad(h)(small_b), numerical_gradient(lambda v: float(value(v)), small_b),
                               rtol=1e-6, atol=1e-8)
    second = ad.jacfwd(ad.grad(h))(small_b)
    np.testing.assert_allclose(second.reshape(15, 15), numerical_gradient(ad.grad(h), small_b).reshape(15, 15),
                               rtol=1e-5, atol=1e-7)


def test_lane_reduce_and_its_second_order():
    xs = rng.normal(size=(7, 4))
    op = lambda p, q: anp.logaddexp(p, q)
    f = lambda v: anp.sum(ad.reduce(op, v, identity=np.full(4, -np.inf)) ** 2)
    monoid = lambda v: anp.sum(ad.reduce("logaddexp", v) ** 2)
    np.testing.assert_allclose(ad.grad(f)(xs), ad.grad(monoid)(xs), rtol=1e-12)
    hessian = ad.jacfwd(ad.grad(f))(xs).reshape(28, 28)
    np.testing.assert_allclose(hessian, ad.jacfwd(ad.grad(monoid))(xs).reshape(28, 28), rtol=1e-10, atol=1e-12)
    assert "matrix_recurrence" not in str(ad.make_ir(ad.jacfwd(ad.grad(f)))(xs))


def test_lane_reduce_by_index_matches_the_monoid():
    values, ids = rng.normal(size=(60, 16)), rng.integers(-1, 9, 60)
    dest = np.full((8, 16), -np.inf)
    dest[3] = rng.normal(size=16)
    weights = rng.normal(size=(8, 16))
    f = lambda d, v: anp.sum(ad.reduce_by_index(d, lambda p, q: anp.logaddexp(p, q), ids, v,
                                                identity=np.full(16, -np.inf)) * weights)
    monoid = lambda d, v: anp.sum(ad.reduce_by_index(d, "logaddexp", ids, v) * weights)
    np.testing.assert_allclose(f(dest, values), monoid(dest, values), rtol=1e-13)
    for a, b in zip(ad.grad(f, argnums=(0, 1))(dest, values), ad.grad(monoid, argnums=(0, 1))(dest, values)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    program = ad.make_ir(ad.grad(f, argnums=1))(dest, values)
    assert _largest(program) <= 4 * values.size   # (flag, element) 2 x 2 per position


def test_vmap_of_a_scalar_operator_scan_is_lane_wise():
    """vmap puts the batch axis inside the elements, so the batched operator is lane-wise: its
    gradient (differentiated after batching) needs 2 x 2 blocks per lane, not (2 * 8)^2."""
    a, b = rng.uniform(0.5, 1.5, size=(8, 30)), rng.normal(size=(8, 30))
    one = lambda a, b: anp.sum(ad.scan(compose, (a, b), identity=(1.0, 0.0))[1] ** 2)
    batched = lambda a, b: anp.sum(ad.vmap(one)(a, b))
    grads = ad.grad(batched, argnums=1)(a, b)
    for j in range(8):
        np.testing.assert_allclose(grads[j], ad.grad(one, argnums=1)(a[j], b[j]), rtol=1e-12)
    assert _largest(ad.make_ir(ad.grad(batched, argnums=1))(a, b)) <= 4 * a.size
