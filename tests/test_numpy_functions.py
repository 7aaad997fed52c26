"""The NumPy functions of issue 10 against NumPy itself: values on plain arrays and traced (jit),
gradients against central differences, second order (a Hessian-vector product against differences
of the gradient), and vmap against a Python loop. Inputs are random, batched, 0-d and empty where the
function takes them; each case lists the arguments it is differentiated in."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import numerical_gradient

rng = np.random.default_rng(10)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(3, 4))
C = rng.normal(size=(2, 3, 4))
V = rng.normal(size=5)
W = rng.normal(size=4)
P = rng.uniform(0.5, 2.0, size=(3, 4))
SQUARE = rng.normal(size=(4, 4))
SPACED = np.cumsum(rng.uniform(0.5, 1.5, size=4))  # increasing, unevenly spaced coordinates
KNOTS = np.sort(rng.uniform(-2.0, 2.0, size=6))
QUERIES = np.array([[-2.5, -0.7, 0.1], [0.9, 1.6, 2.7]])
WEIGHTS = rng.uniform(0.5, 1.5, size=4)
SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, -2.0])


def _case(fn, reference, args, wrt=(0,), smooth=True):
    """fn on adarray values, the NumPy reference, the arguments, the differentiated argnums
    (empty: values only) and whether second derivatives exist at random points."""
    return fn, reference, args, tuple(wrt), smooth


CASES = {
    # elementwise
    "log2": _case(anp.log2, np.log2, (P,)),
    "log10": _case(anp.log10, np.log10, (P,)),
    "exp2": _case(anp.exp2, np.exp2, (A,)),
    "arcsinh": _case(anp.arcsinh, np.arcsinh, (A,)),
    "arccosh": _case(anp.arccosh, np.arccosh, (P + 1.0,)),
    "arctanh": _case(anp.arctanh, np.arctanh, (A * 0.3,)),
    "hypot": _case(anp.hypot, np.hypot, (A, B), wrt=(0, 1)),
    "hypot_broadcast": _case(anp.hypot, np.hypot, (A, W), wrt=(0, 1)),
    "sinc": _case(anp.sinc, np.sinc, (A,)),
    "sinc_0d": _case(anp.sinc, np.sinc, (np.array(0.3),)),
    "deg2rad": _case(anp.deg2rad, np.deg2rad, (A * 90,)),
    "rad2deg": _case(anp.rad2deg, np.rad2deg, (A,)),
    "radians": _case(anp.radians, np.radians, (A * 90,)),
    "degrees": _case(anp.degrees, np.degrees, (A,)),
    "log2_empty": _case(anp.log2, np.log2, (np.ones((0, 3)),)),
    "nan_to_num": _case(lambda x: anp.nan_to_num(x + SPECIAL, nan=-1.0, posinf=5.0, neginf=-7.0),
                        lambda x: np.nan_to_num(x + SPECIAL, nan=-1.0, posinf=5.0, neginf=-7.0), (V,)),
    "clip_arrays": _case(lambda x, lo, hi: anp.clip(x, lo, hi), np.clip, (A, -P, W), wrt=(0, 1, 2), smooth=False),
    "clip_none": _case(lambda x, hi: anp.clip(x, None, hi), lambda x, hi: np.clip(x, None, hi), (A, W),
                       wrt=(0, 1), smooth=False),
    "select": _case(lambda x: anp.select([x < -0.5, x > 0.5], [x ** 2, anp.sin(x)], 1.5),
                    lambda x: np.select([x < -0.5, x > 0.5], [x ** 2, np.sin(x)], 1.5), (A,), smooth=False),
    "piecewise": _case(lambda x: anp.piecewise(x, [x < 0, x >= 0.5], [lambda v: v ** 2, np.cos, 0.25]),
                       lambda x: np.piecewise(x, [x < 0, x >= 0.5], [lambda v: v ** 2, np.cos, 0.25]), (A,),
                       smooth=False),
    # matrices
    "diag_vector": _case(lambda v: anp.diag(v, 1), lambda v: np.diag(v, 1), (V,)),
    "diag_matrix": _case(lambda m: anp.diag(m, -1), lambda m: np.diag(m, -1), (A,)),
    "diagonal": _case(lambda c: anp.diagonal(c, 1, 2, 0), lambda c: np.diagonal(c, 1, 2, 0), (C,)),
    "diagonal_empty": _case(lambda c: anp.diagonal(c, 5), lambda c: np.diagonal(c, 5), (A,)),
    "trace": _case(lambda c: anp.trace(c, -1, 1, 2), lambda c: np.trace(c, -1, 1, 2), (C,)),
    "triu": _case(lambda c: anp.triu(c, 1), lambda c: np.triu(c, 1), (C,)),
    "tril": _case(lambda c: anp.tril(c, -1), lambda c: np.tril(c, -1), (C,)),
    "tril_vector": _case(anp.tril, np.tril, (V,)),
    "kron": _case(anp.kron, np.kron, (A, SQUARE[:2, :3]), wrt=(0, 1)),
    "kron_ranks": _case(anp.kron, np.kron, (V, C), wrt=(0, 1)),
    "cross": _case(anp.cross, np.cross, (C[..., :3], B[:, :3]), wrt=(0, 1)),
    "cross_axis": _case(lambda a, b: anp.cross(a, b, axis=0), lambda a, b: np.cross(a, b, axis=0),
                        (A[:, :2], B[:, 1:3]), wrt=(0, 1)),
    "outer_nd": _case(anp.outer, np.outer, (A, C), wrt=(0, 1)),
    "inner_nd": _case(anp.inner, np.inner, (C, A), wrt=(0, 1)),
    "inner_0d": _case(anp.inner, np.inner, (np.array(1.5), A), wrt=(0, 1)),
    # sorting and order statistics
    "sort": _case(lambda x: anp.sort(x, axis=0), lambda x: np.sort(x, axis=0), (A,), smooth=False),
    "sort_flat": _case(lambda x: anp.sort(x, axis=None), lambda x: np.sort(x, axis=None), (C,), smooth=False),
    "sort_0d_empty": _case(anp.sort, np.sort, (np.ones((2, 0)),)),
    "median": _case(lambda x: anp.median(x, axis=1), lambda x: np.median(x, axis=1), (A,), smooth=False),
    "median_all": _case(anp.median, np.median, (C,), smooth=False),
    "quantile": _case(lambda x: anp.quantile(x, [0.1, 0.5, 0.77], axis=(0, 2), keepdims=True),
                      lambda x: np.quantile(x, [0.1, 0.5, 0.77], axis=(0, 2), keepdims=True), (C,), smooth=False),
    "quantile_in_q": _case(lambda q: anp.quantile(C, q, axis=-1), lambda q: np.quantile(C, q, axis=-1),
                           (np.array([0.13, 0.61]),), smooth=False),
    "quantile_nearest": _case(lambda x: anp.quantile(x, 0.4, axis=0, method="nearest"),
                              lambda x: np.quantile(x, 0.4, axis=0, method="nearest"), (A,), smooth=False),
    "percentile": _case(lambda x: anp.percentile(x, 30.0), lambda x: np.percentile(x, 30.0), (A,), smooth=False),
    "nanmedian": _case(lambda x: anp.nanmedian(x, axis=0), lambda x: np.nanmedian(x, axis=0), (A,), smooth=False),
    "nanquantile": _case(lambda x: anp.nanquantile(x, 0.3, axis=1), lambda x: np.nanquantile(x, 0.3, axis=1),
                         (A,), smooth=False),
    "average": _case(lambda x, w: anp.average(x, axis=1, weights=w), lambda x, w: np.average(x, axis=1, weights=w),
                     (A, WEIGHTS), wrt=(0, 1)),
    "average_full_weights": _case(lambda x, w: anp.average(x, weights=w), lambda x, w: np.average(x, weights=w),
                                  (A, P), wrt=(0, 1)),
    "average_returned": _case(lambda x: anp.average(x, axis=0, returned=True),
                              lambda x: np.average(x, axis=0, returned=True), (A,)),
    "cov": _case(anp.cov, np.cov, (A,)),
    "cov_weights": _case(lambda x, w: anp.cov(x, rowvar=False, aweights=w, fweights=[1, 2, 1]),
                         lambda x, w: np.cov(x, rowvar=False, aweights=w, fweights=[1, 2, 1]),
                         (A, WEIGHTS[:3]), wrt=(0, 1)),
    "cov_two": _case(lambda x, y: anp.cov(x, y, bias=True), lambda x, y: np.cov(x, y, bias=True), (V, V[::-1] ** 2),
                     wrt=(0, 1)),
    "corrcoef": _case(anp.corrcoef, np.corrcoef, (A,)),
    "nansum": _case(lambda x: anp.nansum(x, axis=0), lambda x: np.nansum(x, axis=0), (A,)),
    "nanmean": _case(lambda x: anp.nanmean(x, axis=1, keepdims=True), lambda x: np.nanmean(x, axis=1, keepdims=True),
                     (A,)),
    "nanvar": _case(lambda x: anp.nanvar(x, ddof=1), lambda x: np.nanvar(x, ddof=1), (A,)),
    "nanstd": _case(lambda x: anp.nanstd(x, axis=-1), lambda x: np.nanstd(x, axis=-1), (C,)),
    "nanmax": _case(lambda x: anp.nanmax(x, axis=0), lambda x: np.nanmax(x, axis=0), (A,), smooth=False),
    "ptp": _case(lambda x: anp.ptp(x, axis=1), lambda x: np.ptp(x, axis=1), (A,), smooth=False),
    # rearranging
    "roll": _case(lambda x: anp.roll(x, (1, -3), (0, 2)), lambda x: np.roll(x, (1, -3), (0, 2)), (C,)),
    "roll_flat": _case(lambda x: anp.roll(x, 5), lambda x: np.roll(x, 5), (A,)),
    **{f"pad_{mode}": _case(lambda x, mode=mode: anp.pad(x, ((2, 1), (0, 5)), mode=mode),
                            lambda x, mode=mode: np.pad(x, ((2, 1), (0, 5)), mode=mode), (A,))
       for mode in ("constant", "edge", "reflect", "symmetric", "wrap")},
    "pad_values": _case(lambda x: anp.pad(x, 1, constant_values=((1.0, 2.0), (3.0, 4.0))),
                        lambda x: np.pad(x, 1, constant_values=((1.0, 2.0), (3.0, 4.0))), (A,)),
    "pad_traced_value": _case(lambda x, v: anp.pad(x, (1, 2), constant_values=v),
                              lambda x, v: np.pad(x, (1, 2), constant_values=v), (V, np.array(0.7)), wrt=(0, 1)),
    "append": _case(lambda x, y: anp.append(x, y, axis=1), lambda x, y: np.append(x, y, axis=1), (A, B), wrt=(0, 1)),
    "insert": _case(lambda x, v: anp.insert(x, [1, 3, 3], v, axis=1), lambda x, v: np.insert(x, [1, 3, 3], v, axis=1),
                    (A, V[:3]), wrt=(0, 1)),
    "insert_flat": _case(lambda x: anp.insert(x, 2, 9.0), lambda x: np.insert(x, 2, 9.0), (A,)),
    "delete": _case(lambda x: anp.delete(x, [0, 2], axis=1), lambda x: np.delete(x, [0, 2], axis=1), (A,)),
    "delete_slice": _case(lambda x: anp.delete(x, slice(None, None, 3)), lambda x: np.delete(x, slice(None, None, 3)),
                          (C,)),
    "array_split": _case(lambda x: anp.array_split(x, 3, axis=1), lambda x: np.array_split(x, 3, axis=1), (A,)),
    "hsplit": _case(lambda x: anp.hsplit(x, [1, 3]), lambda x: np.hsplit(x, [1, 3]), (A,)),
    "vsplit": _case(lambda x: anp.vsplit(x, 3), lambda x: np.vsplit(x, 3), (A,)),
    "dsplit": _case(lambda x: anp.dsplit(x, 2), lambda x: np.dsplit(x, 2), (C,)),
    "flipud": _case(anp.flipud, np.flipud, (A,)),
    "fliplr": _case(anp.fliplr, np.fliplr, (C,)),
    "rot90": _case(lambda x: anp.rot90(x, 3, axes=(2, 0)), lambda x: np.rot90(x, 3, axes=(2, 0)), (C,)),
    "meshgrid": _case(lambda x, y: anp.meshgrid(x, y), lambda x, y: np.meshgrid(x, y), (V, W), wrt=(0, 1)),
    "meshgrid_ij": _case(lambda x, y: anp.meshgrid(x, y, W, indexing="ij", sparse=True),
                         lambda x, y: np.meshgrid(x, y, W, indexing="ij", sparse=True), (V, W), wrt=(0, 1)),
    "column_stack": _case(lambda x, y: anp.column_stack([x, y]), lambda x, y: np.column_stack([x, y]), (W, A.T),
                          wrt=(0, 1)),
    "row_stack": _case(lambda x, y: anp.row_stack([x, y]), lambda x, y: np.vstack([x, y]), (W, A), wrt=(0, 1)),
    "dstack": _case(lambda x, y: anp.dstack([x, y]), lambda x, y: np.dstack([x, y]), (A, B), wrt=(0, 1)),
    "vstack_0d": _case(lambda x: anp.vstack([x, 2.0]), lambda x: np.vstack([x, 2.0]), (np.array(1.5),)),
    "hstack_0d": _case(lambda x: anp.hstack([x, 2.0, x]), lambda x: np.hstack([x, 2.0, x]), (np.array(1.5),)),
    "hstack_1d": _case(lambda x, y: anp.hstack([x, y]), lambda x, y: np.hstack([x, y]), (V, W), wrt=(0, 1)),
    "atleast_3d": _case(lambda x, y: anp.atleast_3d(x, y), lambda x, y: np.atleast_3d(x, y), (V, A), wrt=(0, 1)),
    "r_": _case(lambda x: anp.r_[x, 0.5, 1:4], lambda x: np.r_[x, 0.5, 1:4], (V,)),
    "c_": _case(lambda x, y: anp.c_[x, y], lambda x, y: np.c_[x, y], (V, V[::-1]), wrt=(0, 1)),
    # differences, interpolation, convolution
    "diff": _case(lambda x: anp.diff(x, 2, axis=1), lambda x: np.diff(x, 2, axis=1), (C,)),
    "diff_edges": _case(lambda x: anp.diff(x, axis=0, prepend=0.5, append=x[:1]),
                        lambda x: np.diff(x, axis=0, prepend=0.5, append=x[:1]), (A,)),
    "ediff1d": _case(lambda x: anp.ediff1d(x, to_begin=[1.0]), lambda x: np.ediff1d(x, to_begin=[1.0]), (A,)),
    "gradient": _case(anp.gradient, np.gradient, (A,)),
    "gradient_coordinates": _case(lambda x, s: anp.gradient(x, 0.5, s), lambda x, s: np.gradient(x, 0.5, s),
                                  (A, SPACED), wrt=(0, 1)),
    "gradient_order2": _case(lambda x, s: anp.gradient(x, s, axis=-1, edge_order=2),
                             lambda x, s: np.gradient(x, s, axis=-1, edge_order=2), (C, SPACED), wrt=(0, 1)),
    "trapezoid": _case(lambda y, x: anp.trapezoid(y, x), np.trapezoid, (A, SPACED), wrt=(0, 1)),
    "interp": _case(anp.interp, np.interp, (QUERIES, KNOTS, V[:1] + KNOTS ** 2), wrt=(0, 1, 2), smooth=False),
    "interp_bounds": _case(lambda x, fp: anp.interp(x, KNOTS, fp, left=-3.0, right=fp[2]),
                           lambda x, fp: np.interp(x, KNOTS, fp, left=-3.0, right=fp[2]),
                           (QUERIES, np.cos(KNOTS)), wrt=(0, 1), smooth=False),
    "interp_period": _case(lambda x: anp.interp(x, KNOTS, np.sin(KNOTS), period=3.0),
                           lambda x: np.interp(x, KNOTS, np.sin(KNOTS), period=3.0), (QUERIES,), smooth=False),
    **{f"convolve_{mode}": _case(lambda a, v, mode=mode: anp.convolve(a, v, mode),
                                 lambda a, v, mode=mode: np.convolve(a, v, mode), (V, W), wrt=(0, 1))
       for mode in ("full", "same", "valid")},
    "convolve_swapped": _case(lambda a, v: anp.convolve(a, v, "same"), lambda a, v: np.convolve(a, v, "same"),
                              (W, V), wrt=(0, 1)),
    "correlate": _case(lambda a, v: anp.correlate(a, v, "same"), lambda a, v: np.correlate(a, v, "same"), (W, V),
                       wrt=(0, 1)),
    "linspace": _case(lambda a, b: anp.linspace(a, b, 7), lambda a, b: np.linspace(a, b, 7),
                      (np.array(0.3), np.array(2.5)), wrt=(0, 1)),
    "linspace_arrays": _case(lambda a, b: anp.linspace(a, b, 4, endpoint=False, axis=-1),
                             lambda a, b: np.linspace(a, b, 4, endpoint=False, axis=-1), (V, V ** 2), wrt=(0, 1)),
}

# Values only: integer outputs and functions without a derivative.
VALUE_CASES = {
    "argsort": (lambda x: anp.argsort(x, axis=1), lambda x: np.argsort(x, axis=1, kind="stable"),
                (np.array([[3, 1, 2, 1], [0, 0, 5, -1]]),)),
    "argsort_flat": (lambda x: anp.argsort(x, axis=None), lambda x: np.argsort(x, axis=None, kind="stable"), (C,)),
    "searchsorted_left": (lambda v: anp.searchsorted(KNOTS, v), lambda v: np.searchsorted(KNOTS, v),
                          (np.concatenate([QUERIES.ravel(), KNOTS]),)),
    "searchsorted_right": (lambda v: anp.searchsorted([1, 2, 2, 3], v, side="right"),
                           lambda v: np.searchsorted([1, 2, 2, 3], v, side="right"), (np.array([[2, 0], [5, 2]]),)),
    "searchsorted_sorter": (lambda v: anp.searchsorted(V, v, sorter=np.argsort(V)),
                            lambda v: np.searchsorted(V, v, sorter=np.argsort(V)), (W,)),
    "nan_to_num_defaults": (lambda x: anp.nan_to_num(x + SPECIAL), lambda x: np.nan_to_num(x + SPECIAL), (V,)),
    "count_nonzero": (lambda x: anp.count_nonzero(x, axis=0), lambda x: np.count_nonzero(x, axis=0),
                      (np.array([[0, 1], [2, 0], [3, 0]]),)),
    "nanargmax": (lambda x: anp.nanargmax(x, axis=0), lambda x: np.nanargmax(x, axis=0),
                  (np.array([[np.nan, 1.0], [2.0, np.nan], [0.5, 0.0]]),)),
    "nan_reductions": (lambda x: [anp.nansum(x), anp.nanmean(x, 0), anp.nanvar(x, 1), anp.nanmax(x, 1),
                                  anp.nanmin(x), anp.nanmedian(x, 1), anp.nanpercentile(x, 40, 0)],
                       lambda x: [np.nansum(x), np.nanmean(x, 0), np.nanvar(x, 1), np.nanmax(x, 1), np.nanmin(x),
                                  np.nanmedian(x, 1), np.nanpercentile(x, 40, 0)],
                       (np.array([[np.nan, 1.0, 4.0], [2.0, np.nan, -1.0], [0.5, 0.0, np.nan]]),)),
    "nan_propagates": (lambda x: [anp.median(x, 0), anp.quantile(x, 0.2, 1), anp.sort(x, 0)],
                       lambda x: [np.median(x, 0), np.quantile(x, 0.2, 1), np.sort(x, 0)],
                       (np.array([[np.nan, 1.0, 4.0], [2.0, 3.0, -1.0]]),)),
    "partition_kth": (lambda x: anp.partition(x, 2)[..., 2], lambda x: np.partition(x, 2)[..., 2], (A,)),
    "triu_int": (lambda x: anp.triu(x), np.triu, (np.arange(12).reshape(3, 4),)),
    "diff_bool": (lambda x: anp.diff(x), np.diff, (np.array([True, True, False, True]),)),
    "tri": (lambda x: anp.tri(3, 4, 1) + x, lambda x: np.tri(3, 4, 1) + x, (np.zeros(4),)),
}


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _assert_same(actual, expected, exact=False):
    actual, expected = _leaves(actual), _leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert np.shape(a) == np.shape(e), (np.shape(a), np.shape(e))
        if exact:
            np.testing.assert_array_equal(a, e)
        else:
            np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_numpy(name):
    fn, reference, args, _, _ = CASES[name]
    expected = reference(*args)
    _assert_same(fn(*args), expected)
    _assert_same(ad.jit(fn)(*args), expected)


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_of_nondifferentiable_functions_match_numpy(name):
    fn, reference, args = VALUE_CASES[name]
    expected = reference(*args)
    _assert_same(fn(*args), expected, exact=True)
    _assert_same(ad.jit(fn)(*args), expected, exact=True)


def _scalar_objective(fn, args):
    """sum(fn(args) * fixed random weights) over every output: a scalar whose gradient is the vjp."""
    outputs = _leaves(fn(*args))
    weights = [np.random.default_rng(3).normal(size=np.shape(o)) for o in outputs]

    def scalar(*xs):
        return sum(anp.sum(o * w) for o, w in zip(_leaves(fn(*xs)), weights))

    return scalar


@pytest.mark.parametrize("name", sorted(n for n, case in CASES.items() if case[3]))
def test_gradients_match_finite_differences(name):
    fn, _, args, wrt, _ = CASES[name]
    scalar = _scalar_objective(fn, args)
    grads = ad.grad(scalar, argnums=wrt)(*args)
    for argnum, grad in zip(wrt, grads):
        along = lambda v, k=argnum: float(scalar(*args[:k], v, *args[k + 1:]))
        np.testing.assert_allclose(grad, numerical_gradient(along, args[argnum]), rtol=1e-6, atol=1e-7,
                                   err_msg=f"d/d arg {argnum}")


@pytest.mark.parametrize("name", sorted(n for n, case in CASES.items() if case[3]))
def test_second_order_matches_differences_of_the_gradient(name):
    """H v (forward over reverse) against central differences of the reverse-mode gradient along v;
    for piecewise-linear functions both are zero, which still checks that the rules compose."""
    fn, _, args, wrt, _ = CASES[name]
    argnum = wrt[0]
    scalar = _scalar_objective(fn, args)

    def gradient_in(x):
        return ad.grad(lambda y: scalar(*args[:argnum], y, *args[argnum + 1:]))(x)

    x = np.array(args[argnum], dtype=float)
    direction = np.random.default_rng(4).normal(size=x.shape)
    _, hv = ad.jvp(gradient_in, (x,), (direction,))
    eps = 1e-5
    expected = (gradient_in(x + eps * direction) - gradient_in(x - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_matches_a_loop(name):
    fn, _, args, _, _ = CASES[name]
    batch = np.stack([args[0] + 0.01 * k * np.random.default_rng(k).normal(size=np.shape(args[0]))
                      for k in range(3)])
    in_axes = (0,) + (None,) * (len(args) - 1)
    batched = ad.vmap(fn, in_axes=in_axes)(batch, *args[1:])
    looped = [fn(x, *args[1:]) for x in batch]
    for index, leaf in enumerate(_leaves(batched)):
        np.testing.assert_allclose(leaf, np.stack([_leaves(r)[index] for r in looped]), rtol=1e-10, atol=1e-12)


# --- conventions and edge cases ---------------------------------------------------------------------------

def test_sort_gradient_follows_the_permutation_and_ties_keep_their_order():
    x = np.array([3.0, 1.0, 2.0, 1.0, 3.0])
    weights = np.arange(1.0, 6.0)
    # sorted: 1 (x1), 1 (x3), 2 (x2), 3 (x0), 3 (x4): each element gets the weight of its sorted place
    grad = ad.grad(lambda x: anp.sum(anp.sort(x) * weights))(x)
    np.testing.assert_array_equal(grad, [4.0, 1.0, 3.0, 2.0, 5.0])
    np.testing.assert_array_equal(anp.argsort(x), np.argsort(x, kind="stable"))


def test_median_of_an_even_count_splits_the_derivative():
    grad = ad.grad(lambda x: anp.median(x))(np.array([4.0, 1.0, 3.0, 2.0]))
    np.testing.assert_array_equal(grad, [0.0, 0.0, 0.5, 0.5])


def test_sinc_derivatives_at_zero():
    assert ad.grad(anp.sinc)(0.0) == 0.0
    np.testing.assert_allclose(ad.grad(ad.grad(anp.sinc))(0.0), -np.pi ** 2 / 3, rtol=1e-12)
    for x in (1e-3, 0.0999, 0.1, 0.1001, 0.7):  # both sides of the switch to the series
        np.testing.assert_allclose(ad.grad(anp.sinc)(x), (np.cos(np.pi * x) - np.sinc(x)) / x, rtol=1e-9)


def test_hypot_does_not_overflow_and_has_a_zero_gradient_at_the_origin():
    assert np.isfinite(anp.hypot(1e300, 1e300))
    np.testing.assert_allclose(ad.grad(anp.hypot, argnums=(0, 1))(3e200, 4e200), (0.6, 0.8))
    assert ad.grad(anp.hypot, argnums=(0, 1))(0.0, 0.0) == (0.0, 0.0)


def test_inverse_hyperbolics_are_accurate_where_compositions_are_not():
    x = np.array([1e-20, -1e-10, 3e5])
    np.testing.assert_array_equal(anp.arcsinh(x), np.arcsinh(x))
    np.testing.assert_array_equal(anp.arctanh(x[:2]), np.arctanh(x[:2]))
    np.testing.assert_array_equal(anp.log2(2.0 ** np.arange(-3, 60)), np.arange(-3.0, 60.0))
    np.testing.assert_array_equal(anp.exp2(np.arange(-3.0, 60.0)), 2.0 ** np.arange(-3, 60))


def test_nan_reductions_give_nan_elements_a_zero_gradient():
    x = np.array([1.0, np.nan, 3.0, 2.0])
    np.testing.assert_array_equal(ad.grad(anp.nansum)(x), [1.0, 0.0, 1.0, 1.0])
    np.testing.assert_allclose(ad.grad(anp.nanmean)(x), [1 / 3, 0.0, 1 / 3, 1 / 3])
    np.testing.assert_array_equal(ad.grad(anp.nanmax)(x), [0.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sum(anp.nan_to_num(x) * 2.0))(x), [2.0, 0.0, 2.0, 2.0])


def test_quantile_and_percentile_agree_with_every_numpy_method():
    for method in ("linear", "lower", "higher", "midpoint", "nearest", "weibull", "hazen",
                   "interpolated_inverted_cdf", "median_unbiased", "normal_unbiased"):
        for q in (0.0, 0.25, 0.5, 0.9, 1.0):
            np.testing.assert_allclose(anp.quantile(C, q, axis=1, method=method),
                                       np.quantile(C, q, axis=1, method=method), rtol=1e-12)
    np.testing.assert_allclose(anp.percentile(A, [10, 90], axis=0), np.percentile(A, [10, 90], axis=0))


def test_interp_gradient_in_x_is_the_segment_slope():
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0])
    grad = ad.grad(lambda x: anp.sum(anp.interp(x, xp, fp)))(np.array([0.5, 2.0, -1.0, 4.0]))
    np.testing.assert_allclose(grad, [2.0, 0.5, 0.0, 0.0])


def test_unique_on_plain_arrays_and_with_size_under_tracing():
    x = np.array([3.0, 1.0, 2.0, 1.0, 3.0, 3.0])
    expected = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    _assert_same(anp.unique(x, return_index=True, return_inverse=True, return_counts=True), expected, exact=True)
    traced = ad.jit(lambda x: anp.unique(x, return_index=True, return_inverse=True, return_counts=True, size=5,
                                         fill_value=-1.0))(x)
    expected_traced = ([1.0, 2.0, 3.0, -1.0, -1.0], [1, 2, 0, 0, 0], expected[2], [2, 1, 3, 0, 0])
    _assert_same(traced, tuple(map(np.array, expected_traced)), exact=True)
    np.testing.assert_array_equal(ad.jit(lambda x: anp.unique(x, size=2))(x), [1.0, 2.0])
    grad = ad.grad(lambda x: anp.sum(anp.unique(x, size=3) * np.array([1.0, 10.0, 100.0])))(x)
    np.testing.assert_array_equal(grad, [100.0, 1.0, 10.0, 0.0, 0.0, 0.0])  # first occurrences


def test_value_dependent_sizes_under_tracing_are_clear_errors():
    for fn in (anp.unique, anp.nonzero, anp.where, anp.argwhere, anp.flatnonzero):
        with pytest.raises(ad.TracingError, match="size="):
            ad.jit(fn)(np.array([1.0, 0.0, 2.0]))


def test_nonzero_and_where_with_size():
    x = np.array([[0.0, 1.5], [2.0, 0.0], [0.0, 3.0]])
    np.testing.assert_array_equal(anp.where(x), np.nonzero(x))
    _assert_same(ad.jit(lambda x: anp.nonzero(x, size=4, fill_value=-1))(x),
                 (np.array([0, 1, 2, -1]), np.array([1, 0, 1, -1])), exact=True)
    _assert_same(ad.jit(lambda x: anp.where(x > 1, size=1))(x), (np.array([0]), np.array([1])), exact=True)
    np.testing.assert_array_equal(ad.jit(lambda x: anp.argwhere(x, size=3))(x), np.argwhere(x))
    np.testing.assert_array_equal(ad.jit(lambda x: anp.flatnonzero(x, size=3))(x), np.flatnonzero(x))


def test_piecewise_discards_nan_derivatives_of_unselected_pieces():
    grad = ad.grad(lambda x: anp.sum(anp.piecewise(x, [x > 0], [anp.log, lambda v: v])))(np.array([-1.0, 2.0]))
    np.testing.assert_allclose(grad, [1.0, 0.5])


def test_static_positions_are_required_for_insert_and_delete():
    with pytest.raises(ad.TracingError, match="concrete"):
        ad.jit(lambda x, i: anp.delete(x, i))(np.ones(3), np.array(1))


@pytest.mark.parametrize("call", [
    lambda: anp.pad(np.ones(3), 1, mode="mean"),
    lambda: anp.pad(np.ones(3), ((1, 2), (3, 4))),
    lambda: anp.diag(np.ones((2, 2, 2))),
    lambda: anp.cross(np.ones(4), np.ones(3)),
    lambda: anp.quantile(np.ones(3), 1.5),
    lambda: anp.quantile(np.ones(3), 0.5, method="inverted_cdf"),
    lambda: anp.convolve(np.ones(3), np.ones(2), mode="middle"),
    lambda: anp.gradient(np.ones(1)),
    lambda: anp.interp(np.ones(2), np.ones((2, 2)), np.ones(2)),
    lambda: anp.average(np.ones((2, 3)), weights=np.ones(3)),
    lambda: anp.average(np.ones(3), weights=np.zeros(3)),
    lambda: anp.vsplit(np.ones(3), 3),
    lambda: anp.split(np.ones(4), 3),
])
def test_bad_arguments_raise_adarray_errors(call):
    with pytest.raises(ad.Error):
        call()
