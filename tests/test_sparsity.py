"""jacobian_sparsity: index sets propagated through programs, checked against dense Jacobians.

Generated from the primitive registry: every primitive has a sparsity rule, and on every sampled
case the pattern contains every non-zero of the dense Jacobian (ad.jacfwd) at the sample and at a
second point, is the same at both, and equals the non-zeros where the rule says it is exact.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import adarray as ad
import adarray.numpy as anp
import adarray.reversible as rv
from adarray.core.primitive import REGISTRY
from adarray.core.types import is_float
from adarray.testing.registry import primitive_program, registry_cases, seed
from adarray.tracing import eval_program
from adarray.transforms.sparsity import jacobian_pattern, rule_for, rules_table

CASES = [pytest.param(name, args, params, id=case_id) for case_id, name, args, params in registry_cases()]


def test_every_primitive_has_a_sparsity_rule():
    missing = sorted(name for name, prim in REGISTRY.items() if prim not in rules_table())
    assert not missing, f"primitives without a sparsity rule: {missing}"


def _pattern(program, args):
    wrt = [is_float(v.aval.dtype) for v in program.inputs]
    values = [None if w else a for a, w in zip(args, wrt)]
    columns = sum(v.aval.size for v, w in zip(program.inputs, wrt) if w)
    return jacobian_pattern(program, wrt, values).matrix(program.out_avals, columns).toarray()


def _dense_jacobian(program, args):
    """The Jacobian of every output (rows, in order; integer outputs give zero rows) with respect to every
    float input (columns, in order), by ad.jacfwd. A complex input is split into its real and imaginary
    parts (jacfwd takes real arguments); its column is non-zero where either part's is."""
    wrt = [is_float(v.aval.dtype) for v in program.inputs]
    float_args = [a for a, w in zip(args, wrt) if w]
    parts = []  # real arguments: each real input, or the real and imaginary parts of a complex one
    for a in float_args:
        parts += [a.real, a.imag] if np.iscomplexobj(a) else [a]

    def outputs(*reals):
        it = iter(reals)
        floats = [next(it) + 1j * next(it) if np.iscomplexobj(a) else next(it) for a in float_args]
        floats = [f.astype(a.dtype) if np.iscomplexobj(a) else f for f, a in zip(floats, float_args)]
        it = iter(floats)
        full = [next(it) if w else a for a, w in zip(args, wrt)]
        return [out for out, aval in zip(eval_program(program, full), program.out_avals) if is_float(aval.dtype)]

    blocks = ad.jacfwd(outputs, argnums=tuple(range(len(parts))))(*parts) if parts else []
    float_blocks = iter(blocks)
    rows = []
    for aval in program.out_avals:
        if not is_float(aval.dtype):
            rows.append(np.zeros((aval.size, sum(np.size(a) for a in float_args))))
            continue
        per_part = iter(next(float_blocks))
        columns = []
        for a in float_args:
            block = np.abs(np.reshape(next(per_part), (aval.size, np.size(a))))
            if np.iscomplexobj(a):
                block = block + np.abs(np.reshape(next(per_part), (aval.size, np.size(a))))
            columns.append(block)
        rows.append(np.concatenate(columns, axis=1))
    return np.concatenate(rows, axis=0) if rows else np.zeros((0, 0))


def _nearby(args, rng):
    """The float arguments moved by about 1% (inside every sampler's domain), the others kept."""
    return [a * (1 + 0.01 * rng.uniform(-1, 1, np.shape(a))).astype(a.dtype) if is_float(a.dtype) else a
            for a in args]


@pytest.mark.parametrize("name, args, params", CASES)
def test_pattern_holds_every_nonzero(name, args, params):
    program = primitive_program(name, args, params)
    pattern = _pattern(program, args)
    if not any(is_float(v.aval.dtype) for v in program.inputs) or pattern.size == 0:
        assert not pattern.any()
        return
    other = _nearby(args, np.random.default_rng(seed(name, "sparsity")))
    assert np.array_equal(_pattern(program, other), pattern), "the pattern moved with the values"
    for point in (args, other):
        dense = _dense_jacobian(program, point)
        nonzero = (dense != 0) | np.isnan(dense)
        missed = nonzero & ~pattern
        assert not missed.any(), f"{name}: the pattern misses entries {np.argwhere(missed)[:5].tolist()}"
    # Exact rules match the non-zeros at generic values; an input that is exactly 0 (a sampled edge
    # case) can make a partial derivative vanish, as in x * y at x = 0.
    generic = not any(is_float(a.dtype) and np.any(a == 0) for a in args)
    if rule_for(REGISTRY[name]).exact and generic:
        extra = pattern & ~nonzero
        assert not extra.any(), f"{name}: the pattern has extra entries {np.argwhere(extra)[:5].tolist()}"


# --- whole programs ---------------------------------------------------------------------------------


def _sparsity(fn, *args, **kwargs):
    return ad.jacobian_sparsity(fn, *args, **kwargs).toarray().astype(int)


def test_public_function_returns_boolean_csr():
    pattern = ad.jacobian_sparsity(lambda x: x[1:] - x[:-1], np.arange(5.0))
    assert sp.issparse(pattern) and pattern.format == "csr" and pattern.dtype == bool
    assert np.array_equal(pattern.toarray(), np.eye(4, 5, 1, dtype=bool) | np.eye(4, 5, dtype=bool))


def test_stencil_and_pytrees_flatten_in_order():
    def residual(params, data):
        x, scale = params["x"], params["scale"]
        return {"r": scale * (x[2:] - 2 * x[1:-1] + x[:-2]) - data, "s": anp.sum(x)}

    params = {"x": np.linspace(0, 1, 6), "scale": np.array(2.0)}
    pattern = _sparsity(residual, params, np.zeros(4))
    # dict leaves sort by key: r (4 rows) then s (1 row); columns scale (1) then x (6)
    band = np.zeros((4, 6), int)
    for i in range(4):
        band[i, i:i + 3] = 1
    assert np.array_equal(pattern[:4], np.concatenate([np.ones((4, 1), int), band], axis=1))
    assert np.array_equal(pattern[4], [0, 1, 1, 1, 1, 1, 1])


def test_argnums_and_known_indices_from_arguments():
    def take(x, index):
        return x[index] * 2.0

    index = np.array([3, 0, 3])
    expected = np.zeros((3, 4), int)
    expected[[0, 1, 2], [3, 0, 3]] = 1
    assert np.array_equal(_sparsity(take, np.ones(4), index), expected)


def test_unknown_indices_count_every_element():
    def sort_then_scale(x):
        return anp.sort(x) * 2.0

    assert _sparsity(sort_then_scale, np.array([3.0, 1.0, 2.0])).all()


def test_cond_takes_the_union_of_branches_and_one_branch_when_the_index_is_known():
    def branchy(x, flag):
        return ad.cond(flag, lambda v: v * 2.0, lambda v: anp.roll(v, 1), x)

    assert np.array_equal(_sparsity(branchy, np.ones(3), np.array(True)), np.eye(3, dtype=int))
    assert np.array_equal(_sparsity(branchy, np.ones(3), np.array(False)), np.roll(np.eye(3, dtype=int), 1, axis=0))

    def data_dependent(x):
        return ad.cond(x[0] > 0, lambda v: v * 2.0, lambda v: anp.roll(v, 1), x)

    assert np.array_equal(_sparsity(data_dependent, np.ones(3)),
                          np.eye(3, dtype=int) | np.roll(np.eye(3, dtype=int), 1, axis=0))


@pytest.mark.parametrize("length", [4, 5000])
def test_fold_carry_reaches_everything_and_map_outputs_stay_diagonal(length):
    """A running product's carry depends on every xs element so far; y_t = sin(x_t) only on x_t. Short
    folds unroll; the long one takes the fixed point (same answer for these)."""
    def scan_like(x):
        final, ys = ad.fold(lambda c, v: (c * v, anp.sin(v)), 1.0, x)
        return anp.concatenate([anp.reshape(final, (1,)), ys])

    pattern = ad.jacobian_sparsity(scan_like, np.ones(length))
    assert pattern[0].nnz == length
    assert (pattern[1:] != sp.identity(length, dtype=bool, format="csr")).nnz == 0


def test_fori_loop_with_known_index_is_exact():
    def partial_products(x):
        return ad.fori_loop(0, 3, lambda i, c: c * x[i], 1.0)

    assert np.array_equal(_sparsity(partial_products, np.ones(5)), [[1, 1, 1, 0, 0]])


def test_while_loop_fixed_point():
    def shift_until(x):
        return ad.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, anp.roll(c[1], 1) * 0.5 + c[1]), (0, x))[1]

    # Any number of shifts: every element may reach every other.
    assert _sparsity(shift_until, np.ones(4)).all()

    def scale_until(x):
        return ad.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1]

    assert np.array_equal(_sparsity(scale_until, np.ones(4)), np.eye(4, dtype=int))


def test_fixed_point_depends_on_params_not_on_the_start():
    def root(a, x0):
        return ad.fixed_point(lambda p, x: 0.5 * (x + p / x), a, x0)

    pattern = ad.jacobian_sparsity(root, np.array([2.0, 3.0]), np.ones(2), argnums=(0, 1)).toarray()
    assert np.array_equal(pattern, [[1, 0, 0, 0], [0, 1, 0, 0]])


def test_bundle_adjustment_rows_touch_one_camera_one_point_one_weight():
    from benchmarks.adbench.tool_adarray import ba_residuals

    n, m, p = 3, 5, 8
    rng = np.random.default_rng(0)
    cams, points, weights = rng.normal(size=(n, 11)), rng.normal(size=(m, 3)), rng.normal(size=p)
    cam_index, point_index = np.arange(p) % n, np.arange(p) % m
    pattern = ad.jacobian_sparsity(ba_residuals, cams, points, weights, cam_index, point_index,
                                   rng.normal(size=(p, 2)), argnums=(0, 1, 2))
    assert pattern.shape == (3 * p, 11 * n + 3 * m + p)
    counts = np.diff(pattern.indptr)
    # The x row of an observation touches the principal point's x, the y row its y: 14 each, 15 together.
    assert np.array_equal(counts, [14] * (2 * p) + [1] * p)
    rows = pattern[2 * 4:2 * 4 + 2]  # observation 4: camera 1, point 4, weight 4
    touched = np.unique(rows.indices)
    assert np.array_equal(touched, list(range(11, 22)) + [33 + 12, 33 + 13, 33 + 14, 48 + 4])
    assert 11 + 8 not in rows[0].indices and 11 + 7 not in rows[1].indices


def test_bad_input_names_the_function():
    with pytest.raises(ad.ArgumentError, match="argnums"):
        ad.jacobian_sparsity(lambda x: x, np.ones(2), argnums=3)
    with pytest.raises(ad.NonDifferentiableError):
        ad.jacobian_sparsity(lambda i: i * 2, np.arange(3))


@rv.reversible
def _reversible_norm(res, y, x):
    for i in range(len(x)):
        y += x[i] ** 2
    res += anp.sqrt(y)


def test_reversible_programs_count_every_input():
    x = np.array([1.0, 2.0, 2.0])
    fn = lambda x: anp.stack(_reversible_norm(0.0, 0.0, x)[:2])  # noqa: E731
    pattern = ad.jacobian_sparsity(fn, x).toarray()
    dense = np.asarray(ad.jacfwd(fn)(x)) != 0
    assert pattern.shape == (2, 3) and not (dense & ~pattern).any()
