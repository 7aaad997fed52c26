"""The Numba backend's native scatter partials, argsort and searchsorted against the NumPy backend,
where the registry's samples do not reach: duplicates and ties for min/max, products with zeros and
with overflowing or non-finite products (the exact route), long inputs (argsort's counting sort),
NaN keys, out-of-range targets, and the gradients of reduce_by_index that call them."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402
from adarray.backends import numba as numba_backend  # noqa: E402
from adarray.backends.numba import runtime  # noqa: E402
from adarray.backends.numpy import compile_program as numpy_program  # noqa: E402
from adarray.core.errors import ExecutionError  # noqa: E402
from adarray.core.ir import Eqn, Program, Var  # noqa: E402
from adarray.core.types import Aval  # noqa: E402
from adarray.primitives import indexing, sort  # noqa: E402


def _single(prim, args, **params):
    """A program of one equation of `prim` on inputs shaped like `args`."""
    inputs = tuple(Var(Aval(np.shape(a), np.asarray(a).dtype)) for a in args)
    out_avals = prim.abstract_eval(*[v.aval for v in inputs], **params)
    out_avals = out_avals if prim.multiple_results else [out_avals]
    outputs = tuple(Var(aval) for aval in out_avals)
    return Program(inputs, (Eqn(prim, inputs, params, outputs),), outputs)


def _both(prim, args, **params):
    """(Numba's outputs, NumPy's outputs); the equation must be compiled, not a NumPy step."""
    program = _single(prim, args, **params)
    assert [kind for kind, _ in runtime.segments(program)] == ["numba"]
    frozen = [np.array(a) for a in args]
    for a in frozen:
        a.flags.writeable = False
    with np.errstate(all="ignore"):
        want = numpy_program(program)(*frozen)
    got = numba_backend.compile_program(program, f"test {prim.name}")(*frozen)
    return got, want


def _agree(got, want, rtol=1e-12):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("m", [40, 4], ids=["many-slots", "few-slots"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scatter_winner_ties_duplicates_and_nan_slots(dtype, m):
    rng = np.random.default_rng(1)
    n = 400
    x = rng.integers(0, 4, m).astype(dtype)           # small integers: many ties with the updates
    updates = rng.integers(0, 4, n).astype(dtype)
    targets = rng.integers(-m, m, n).astype(np.int32)  # negative targets wrap
    x[0] = -1                                           # below every update: x keeps slot 0 (-1)
    output = x.copy()
    np.minimum.at(output, targets, updates)
    output[3] = np.nan                                  # a NaN slot: nobody wins (-2)
    x[2] = output[2] = np.nan                           # NaN kept from x: nobody wins either
    got, want = _both(indexing.scatter_winner_p, [x, updates, output, targets])
    np.testing.assert_array_equal(got[0], want[0])
    assert {-1, -2} <= set(want[0].tolist()) and want[0].max() >= 0
    first_equal = [next((j for j in range(n) if targets[j] % m == i and updates[j] == output[i]), -2)
                   for i in range(m)]                   # written out: x wins ties, else the first equal update
    np.testing.assert_array_equal(got[0], np.where(x == output, -1, first_equal))


@pytest.mark.parametrize("hint", [False, True], ids=["no-hint", "output-hint"])
@pytest.mark.parametrize("case", ["plain", "zeros", "overflow", "underflow", "non-finite", "empty",
                                  "no-updates-in-a-slot", "negative-targets", "infinite-weight"])
def test_scatter_mul_partials_division_and_exact_routes(case, hint):
    """With the scatter's output as a hint: the division route where every slot is a nonzero normal number
    (plain, negative targets, no updates in a slot), the routes without a hint elsewhere; same values."""
    rng = np.random.default_rng(2)
    m, n = 6, 60
    x, weights = rng.normal(size=m), rng.normal(size=m)
    updates, targets = rng.uniform(0.5, 2.0, n), rng.integers(0, m, n)
    if case == "zeros":          # one zero in slot 0, two in slot 1, a zero destination
        targets[:3] = [0, 1, 1]
        updates[:3] = 0.0
        x[2] = 0.0
    elif case == "overflow":      # a slot's product overflows: the exact route
        updates[targets == 2] = 1e200
    elif case == "underflow":     # below the smallest normal number: the exact route
        updates[targets == 4] = 1e-200
    elif case == "non-finite":
        updates[5], updates[7] = np.inf, np.nan
    elif case == "empty":
        updates, targets = updates[:0], targets[:0]
    elif case == "no-updates-in-a-slot":
        targets[targets == 3] = 4
    elif case == "negative-targets":
        targets = targets - m * rng.integers(0, 2, n)
    elif case == "infinite-weight":
        weights[1] = np.inf
    args = [x, updates, targets, weights]
    if hint:
        output = x.copy()
        with np.errstate(over="ignore", invalid="ignore"):
            np.multiply.at(output, targets, updates)
        args.append(output)
    got, want = _both(indexing.scatter_mul_partials_p, args)
    reference = _products_of_the_others(x, updates, np.where(targets < 0, targets + m, targets), weights)
    _agree(got, reference, rtol=1e-10)
    _agree(want, reference, rtol=1e-10)
    if hint and case not in ("overflow", "underflow", "non-finite"):  # JAX has no exact route for those
        _agree(_on_jax(indexing.scatter_mul_partials_p, args), reference, rtol=1e-10)


def _on_jax(prim, args):
    """The outputs of one equation of `prim` lowered to JAX (skipped without JAX)."""
    jax = pytest.importorskip("jax")
    from adarray.backends import jax as jax_backend

    lowered = jax_backend.lower_program(_single(prim, args))
    with jax_backend.x64():
        return [np.asarray(out) for out in jax.jit(lowered)(*args)]


def _products_of_the_others(x, updates, targets, weights):
    """The reference: products written out per slot."""
    pu = np.empty(len(updates))
    with np.errstate(all="ignore"):
        px = np.array([w * np.prod(updates[targets == i]) for i, w in enumerate(weights)])
        for j, t in enumerate(targets):
            others = updates[(targets == t) & (np.arange(len(updates)) != j)]
            pu[j] = weights[t] * x[t] * np.prod(others)
    return [px, pu]


def test_an_out_of_range_target_is_an_execution_error_naming_the_equation():
    x, updates = np.ones(3), np.ones(2)
    program = _single(indexing.scatter_winner_p, [x, updates, x, np.array([0, 3])])
    with pytest.raises(ExecutionError, match="scatter_winner"):
        numba_backend.compile_program(program, "bad target")(x, updates, x, np.array([0, 3]))
    few_slots, many_updates, bad = np.ones(1), np.ones(70), np.r_[np.zeros(69, np.int64), 1]  # the last one
    program = _single(indexing.scatter_winner_p, [few_slots, many_updates, few_slots, bad])
    with pytest.raises(ExecutionError, match="scatter_winner"):
        numba_backend.compile_program(program, "bad target")(few_slots, many_updates, few_slots, bad)
    program = _single(indexing.scatter_mul_partials_p, [x, updates, np.array([0, -4]), x])
    with pytest.raises(ExecutionError, match="scatter_mul_partials"):
        numba_backend.compile_program(program, "bad target")(x, updates, np.array([0, -4]), x)
    program = _single(indexing.scatter_mul_partials_p, [x, updates, np.array([0, 3]), x, x])  # the hint's route
    with pytest.raises(ExecutionError, match="scatter_mul_partials"):
        numba_backend.compile_program(program, "bad target")(x, updates, np.array([0, 3]), x, x)


@pytest.mark.parametrize("keys", ["short-range ints", "wide ints", "uint64", "bools", "floats with nan", "empty"])
def test_argsort_is_stable_as_numpy(keys):
    rng = np.random.default_rng(3)
    x = {"short-range ints": rng.integers(-5, 50, 3000), "wide ints": rng.integers(-10**12, 10**12, 300),
         "uint64": np.array([2**64 - 1, 0, 5, 2**63, 5], np.uint64), "bools": rng.integers(0, 2, 50).astype(bool),
         "floats with nan": np.where(rng.random(200) < 0.1, np.nan, rng.integers(0, 5, 200) * 0.5),
         "empty": np.zeros(0, np.int64)}[keys]
    got, want = _both(sort.argsort_p, [x], axis=0)
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_argsort_along_any_axis(axis):
    x = np.random.default_rng(4).integers(0, 3, (4, 5, 6)).astype(np.float32)
    got, want = _both(sort.argsort_p, [x], axis=axis)
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_rows_ties_and_nan(side):
    rng = np.random.default_rng(5)
    rows = np.sort(np.where(rng.random((3, 9)) < 0.2, np.nan, rng.integers(0, 4, (3, 9)) * 1.0), axis=1)
    values = np.concatenate([rng.integers(-1, 5, (3, 6)) * 1.0, np.full((3, 1), np.nan)], axis=1)
    got, want = _both(sort.searchsorted_p, [rows, values], side=side)
    np.testing.assert_array_equal(got[0], want[0])
    got, want = _both(sort.searchsorted_p, [rows[0], values[0]], side=side)
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("op", ["min", "max", "mul", "add"])
def test_reduce_by_index_gradients_with_duplicates_ties_and_zeros(op):
    rng = np.random.default_rng(6)
    bins, n = 7, 200
    indices = rng.integers(0, bins, n)
    values = rng.integers(-3, 4, n).astype(np.float64)   # ties inside every bin
    if op == "mul":
        values = np.where(values == 0, 0.0, rng.uniform(0.5, 1.5, n))
        values[indices == 2] = 0.0                       # a bin with several zeros
        values[np.flatnonzero(indices == 5)[:1]] = 0.0   # a bin with one zero
    dest = rng.integers(-3, 4, bins).astype(np.float64)  # the destination ties with updates too

    def loss(v, d):
        return anp.sum(ad.reduce_by_index(d, op, indices, v) ** 2 * np.arange(1, bins + 1))

    program = ad.make_ir(ad.grad(loss, (0, 1)))(values, dest)
    assert all(kind == "numba" for kind, _ in runtime.segments(program)), runtime.segments(program)
    got = ad.jit(ad.grad(loss, (0, 1)), backend="numba")(values, dest)
    want = ad.grad(loss, (0, 1))(values, dest)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_a_sliced_output_is_a_view_of_a_fresh_array_per_call():
    indices = np.array([0, 2, 2, 1, 0])

    def loss(v):  # the gradient scatters into n + 1 slots and returns the first n
        return anp.sum(ad.reduce_by_index(np.full(3, np.inf), "min", indices, v) ** 2)

    gradient = ad.jit(ad.grad(loss), backend="numba")
    v = np.array([1.0, 2.0, -1.0, 0.5, 1.0])
    first = gradient(v)
    want = ad.grad(loss)(v)
    np.testing.assert_array_equal(first, want)
    first[:] = 99.0  # the caller owns the result: the next call is not affected
    np.testing.assert_array_equal(gradient(v), want)


def test_freed_memory_is_kept_unless_turned_off(monkeypatch):
    import platform

    monkeypatch.setattr(runtime, "_MALLOC_TUNED", [])
    with ad.config.override(numba_keep_memory=False):
        assert runtime.keep_freed_memory() is False and runtime._MALLOC_TUNED == []
    expected = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"
    with ad.config.override(numba_keep_memory=True):
        assert runtime.keep_freed_memory() is expected
    assert runtime.keep_freed_memory() is expected  # once per process


def _mul_histogram_gradient(v, dest, indices, weights):
    """d/dv of sum(weights * reduce_by_index(dest, "mul", indices, v) ** 2), written out with products
    of the others per bin (indices outside the bins drop their value)."""
    bins = len(dest)
    grad = np.zeros(len(v))
    for j, b in enumerate(indices):
        if 0 <= b < bins:
            same = indices == b
            out = dest[b] * np.prod(v[same])
            others = dest[b] * np.prod(v[same & (np.arange(len(v)) != j)])
            grad[j] = 2 * weights[b] * out * others
    return grad


@pytest.mark.parametrize("backend", ["numba", "numpy", "jax"])
def test_reduce_by_index_mul_to_second_order_with_zeros(backend):
    """The gradient (through scatter_mul_partials with the output hint) and its jvp and vjp (Hessian-vector
    products), against the gradient written out and central differences of it: bins without zeros (the
    hint's division route), with one and with two zeros, an empty bin, a dropped index."""
    if backend == "jax":
        pytest.importorskip("jax")
    indices = np.array([0, 0, 1, 1, 1, 2, 2, 3, 0, 7, 1])  # bin 4 is empty, 7 is dropped
    dest, weights = np.array([1.5, -0.5, 2.0, 0.7, 1.2]), np.array([1.0, 2.0, -1.0, 0.5, 3.0])
    rng = np.random.default_rng(7)
    direction = rng.normal(size=len(indices))
    loss = lambda v: anp.sum(weights * ad.reduce_by_index(dest, "mul", indices, v) ** 2)
    gradient = ad.jit(ad.grad(loss), backend=backend)
    forward = ad.jit(lambda v: ad.jvp(ad.grad(loss), (v,), (direction,))[1], backend=backend)
    reverse = ad.jit(lambda v: ad.vjp(ad.grad(loss), v)[1](direction)[0], backend=backend)
    for zeros in ([], [2], [5, 6], [2, 5, 6]):   # none; one in bin 1; two in bin 2; both
        v = rng.uniform(0.5, 1.5, len(indices))
        v[zeros] = 0.0
        h = 1e-5
        want = _mul_histogram_gradient(v, dest, indices, weights)
        hessian_v = (_mul_histogram_gradient(v + h * direction, dest, indices, weights)
                     - _mul_histogram_gradient(v - h * direction, dest, indices, weights)) / (2 * h)
        np.testing.assert_allclose(np.asarray(gradient(v)), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(forward(v)), hessian_v, rtol=1e-7, atol=1e-8)
        np.testing.assert_allclose(np.asarray(reverse(v)), hessian_v, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("backend", ["numba", "numpy", "jax"])
def test_reduce_by_index_mul_second_order_after_a_bin_whose_product_overflows(backend):
    """Bin 0's product overflows (three updates of 1e200) and the loss does not read it: the Hessian-vector products
    of the other bins are finite and as if bin 0 were moderate (the segmented products restart at each bin, and an
    infinite product before a restart does not leak into the next bin as 0 * inf)."""
    if backend == "jax":
        pytest.importorskip("jax")
    indices = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    dest, weights = np.array([1.0, 1.5, -0.5]), np.array([0.0, 2.0, -1.0])
    direction = np.random.default_rng(9).normal(size=len(indices))
    loss = lambda v: anp.sum(weights[1:] * ad.reduce_by_index(dest, "mul", indices, v)[1:] ** 2)
    forward = ad.jit(lambda v: ad.jvp(ad.grad(loss), (v,), (direction,))[1], backend=backend)
    reverse = ad.jit(lambda v: ad.vjp(ad.grad(loss), v)[1](direction)[0], backend=backend)
    huge = np.array([1e200, 1e200, 1e200, 0.7, 1.3, 0.9, 1.1, 1.2])
    moderate = np.concatenate([[1.0, 1.0, 1.0], huge[3:]])
    h = 1e-5
    want = (_mul_histogram_gradient(moderate + h * direction, dest, indices, weights)
            - _mul_histogram_gradient(moderate - h * direction, dest, indices, weights)) / (2 * h)
    for v in (moderate, huge):
        for got in (np.asarray(forward(v)), np.asarray(reverse(v))):
            np.testing.assert_allclose(got[3:], want[3:], rtol=1e-7, atol=1e-8)
