"""sparse_jacobian: colouring, compressed batched passes and decompression, against dense Jacobians;
the ADBench bundle adjustment and hand targets (passes independent of the problem size)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from benchmarks.adbench.data import read_ba, read_hand
from benchmarks.adbench.tool_adarray import ba_residuals, hand_complicated, hand_simple

import adarray as ad
import adarray.numpy as anp
from adarray.sparse_jacobians import colouring
from test_adbench import ROOT, needs_data


def _dense(fn, args, argnums=0, **kwargs):
    """fn's dense Jacobian by ad.jacfwd of the flattened function: rows the output leaves, columns the leaves
    of args[argnums], in order (the layout sparse_jacobian promises)."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    leaves, tree = ad.tree_util.tree_flatten([args[n] for n in nums])
    sizes = [np.size(leaf) for leaf in leaves]

    def flat(vector):
        pieces = anp.split(vector, np.cumsum(sizes)[:-1]) if len(sizes) > 1 else [vector]
        chosen = ad.tree_util.tree_unflatten(tree, [anp.reshape(p, np.shape(leaf)) for p, leaf in zip(pieces, leaves)])
        full = list(args)
        for n, value in zip(nums, chosen):
            full[n] = value
        outs = ad.tree_util.tree_leaves(fn(*full, **kwargs))
        return anp.concatenate([anp.reshape(o, (-1,)) for o in outs])

    return ad.jacfwd(flat)(np.concatenate([np.ravel(leaf) for leaf in leaves]).astype(float))


def tridiagonal(x):
    return anp.concatenate([x[:1] * 2.0, x[:-2] - 2.0 * x[1:-1] ** 2 + anp.sin(x[2:]), x[-1:] ** 3])


def test_banded_forward_three_passes_equal_to_dense():
    x = np.linspace(0.1, 1.0, 12)
    jac = ad.sparse_jacobian(tridiagonal, mode="forward")
    matrix = jac(x)
    assert isinstance(matrix, sp.csr_matrix) and matrix.shape == (12, 12)
    assert jac.num_passes(x) == 3
    np.testing.assert_allclose(matrix.toarray(), _dense(tridiagonal, (x,)), rtol=1e-14, atol=1e-14)


def test_reverse_colours_rows_and_auto_picks_fewer_passes():
    def arrow(x):  # row 0 is dense, the others diagonal: rows are cheap to colour, columns are not
        return anp.concatenate([anp.sum(x * x)[None], anp.sin(x)])

    x = np.linspace(0.2, 1.0, 9)
    dense = _dense(arrow, (x,))
    forward, reverse, auto = (ad.sparse_jacobian(arrow, mode=m) for m in ("forward", "reverse", "auto"))
    assert forward.num_passes(x) == 9 and reverse.num_passes(x) == 2 and auto.num_passes(x) == 2
    assert auto.plan(x)[0] == "reverse"
    for jac in (forward, reverse, auto):
        np.testing.assert_allclose(jac(x).toarray(), dense, rtol=1e-14, atol=1e-14)


def test_pytrees_argnums_and_value():
    def residual(params, data):
        return {"fit": params["a"] * anp.exp(-params["k"] * data) - data, "prior": params["a"] - 1.0}

    params = {"a": np.array(2.0), "k": np.array([0.5, 0.7, 0.9])}
    data = np.linspace(0, 1, 3)
    jac = ad.sparse_jacobian(residual)
    value, matrix = jac.value_and_jacobian(params, data)
    np.testing.assert_allclose(value["fit"], residual(params, data)["fit"])
    np.testing.assert_allclose(matrix.toarray(), _dense(residual, (params, data)), rtol=1e-14, atol=1e-15)
    assert matrix.shape == (4, 4)


def test_pattern_and_programs_are_cached_per_signature(builds):
    def f(x):
        return x[1:] * x[:-1]

    jac = ad.sparse_jacobian(f)
    for scale in (1.0, 2.0, 3.0):
        jac(np.arange(5.0) * scale)
    assert builds.count == 1
    jac(np.arange(6.0))
    assert builds.count == 2


def test_index_arguments_change_the_pattern():
    def take(x, index):
        return x[index] ** 2

    jac = ad.sparse_jacobian(take)
    x = np.arange(1.0, 5.0)
    first = jac(x, np.array([0, 1])).toarray()
    second = jac(x, np.array([3, 3])).toarray()
    np.testing.assert_array_equal(first, [[2, 0, 0, 0], [0, 4, 0, 0]])
    np.testing.assert_array_equal(second, [[0, 0, 0, 8], [0, 0, 0, 8]])


@pytest.mark.parametrize("method", colouring.METHODS)
def test_every_colouring_method_is_valid(method):
    rng = np.random.default_rng(1)
    rows, cols = np.repeat(np.arange(300), 4), rng.integers(0, 200, 1200)
    pattern = sp.csr_matrix((np.ones(1200, bool), (rows, cols)), shape=(300, 200))
    colours = colouring.colour_columns(pattern, method)
    assert colouring.is_valid(pattern, colours)
    assert colours.max() + 1 >= colouring.lower_bound(pattern)
    assert colouring.is_valid(pattern.T.tocsr(), colouring.colour_rows(pattern, method))
    assert colouring.is_valid(pattern, colouring.greedy_bipartite(pattern))


def test_user_sparsity_missing_a_nonzero_is_caught_in_check_mode():
    x = np.linspace(0.1, 1.0, 6)
    diagonal = sp.identity(6, dtype=bool, format="csr")
    silent = ad.sparse_jacobian(tridiagonal, sparsity=diagonal)
    assert silent(x).nnz == 6  # documented: entries outside the pattern are dropped
    with pytest.raises(ad.ArgumentError, match="misses non-zeros"):
        ad.sparse_jacobian(tridiagonal, sparsity=diagonal, check=True)(x)
    full = ad.sparse_jacobian(tridiagonal, sparsity=np.ones((6, 6), bool), check=True)
    np.testing.assert_allclose(full(x).toarray(), _dense(tridiagonal, (x,)), atol=1e-15)


def test_bad_arguments():
    x = np.ones(4)
    with pytest.raises(ad.ShapeError, match=r"\(3, 3\)"):
        ad.sparse_jacobian(tridiagonal, sparsity=np.ones((3, 3), bool))(x)
    with pytest.raises(ad.ArgumentError, match="mode"):
        ad.sparse_jacobian(tridiagonal, mode="sideways")
    with pytest.raises(ad.ArgumentError, match="method"):
        ad.sparse_jacobian(tridiagonal, method="rainbow")
    with pytest.raises(ad.NonDifferentiableError):
        ad.sparse_jacobian(lambda i: i * 2)(np.arange(3))
    with pytest.raises(ad.ArgumentError, match="traced"):
        ad.grad(lambda x: anp.sum(ad.sparse_jacobian(tridiagonal)(x)))(x)


# --- ADBench: bundle adjustment and hand tracking ------------------------------------------------------------------


def ba_args(data):
    return (data.cams, data.X, data.w, data.obs[:, 0], data.obs[:, 1], data.feats)


@needs_data
def test_bundle_adjustment_small_file_equals_dense():
    data = read_ba(ROOT / "ba" / "test.txt")
    rng = np.random.default_rng(0)  # distinct cameras and points, so that every entry is exercised
    data = data.with_params((data.cams + 0.01 * rng.normal(size=data.cams.shape),
                             data.X + 0.1 * rng.normal(size=data.X.shape),
                             data.w + 0.1 * rng.normal(size=data.w.shape)))
    args = ba_args(data)
    jac = ad.sparse_jacobian(ba_residuals, argnums=(0, 1, 2))
    np.testing.assert_allclose(jac(*args).toarray(), _dense(ba_residuals, args, (0, 1, 2)), rtol=1e-12, atol=1e-12)
    assert jac.num_passes(*args) <= 16


@needs_data
@pytest.mark.parametrize("name", ["ba1_n49_m7776_p31843", "ba2_n21_m11315_p36455"])
def test_bundle_adjustment_passes_do_not_grow_with_the_problem(name):
    data = read_ba(ROOT / "ba" / f"{name}.txt")
    jac = ad.sparse_jacobian(ba_residuals, argnums=(0, 1, 2))
    args = ba_args(data)
    assert jac.num_passes(*args) <= 15 + 1
    assert jac.plan(*args)[0] == "forward"


def _hand(path):
    data = read_hand(ROOT / "hand" / path)
    model = data.model
    arrays = (model.base_relatives, model.inverse_base_absolutes, model.base_positions, model.weights)
    parents = tuple(int(p) for p in model.parents)
    if data.complicated:
        def residual(us, theta, points, triangles, arrays, parents):
            return hand_complicated(np.zeros(2), theta, us, points, triangles, arrays, parents)

        return residual, (data.us, data.theta, data.points, model.triangles[data.correspondences], arrays), (0, 1), \
            parents
    return hand_simple, (data.theta, data.points, data.correspondences, arrays), 0, parents


@needs_data
@pytest.mark.parametrize("path", ["hand_complicated.txt", "complicated_small/hand1_t26_c100.txt",
                                  "complicated_small/hand4_t26_c400.txt", "test.txt",
                                  "simple_small/hand1_t26_c100.txt"])
def test_hand_equals_dense_with_passes_independent_of_the_points(path):
    residual, args, argnums, parents = _hand(path)
    jac = ad.sparse_jacobian(residual, argnums=argnums)
    matrix = jac(*args, parents=parents)
    np.testing.assert_allclose(matrix.toarray(), _dense(residual, args, argnums, parents=parents), rtol=1e-12,
                               atol=1e-12)
    assert jac.num_passes(*args, parents=parents) <= 26 + 2
