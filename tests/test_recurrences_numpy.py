"""The NumPy backend's linear_recurrence on long sequences: blocks, chunks, tails, reverse, other axes, the
plain-product attempt and its fallback to the zero rule, against a step-by-step reference.

Short tests elsewhere (test_parallel_exact.py, test_autograd_suite_regressions.py) take the float-by-float path;
these sizes go through the blocked solver, and CHUNK is lowered so that several chunks follow each other."""
import numpy as np
import pytest

from adarray.backends.numpy import IMPLS, recurrences
from adarray.primitives.scan import linear_recurrence_p

recurrence = IMPLS[linear_recurrence_p]


def step_by_step(a, b, axis, reverse):
    """s_k = a_k s_(k-1) + b_k one position at a time; a product with a zero factor is +0; s_0 = b_0."""
    a, b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0)
    order = range(b.shape[0] - 1, -1, -1) if reverse else range(b.shape[0])
    out, state = np.empty_like(b), None
    for k in order:
        if state is None:
            state = b[k].copy()
        else:
            with np.errstate(all="ignore"):
                state = np.where((a[k] == 0) | (state == 0), 0, a[k] * state) + b[k]
        out[k] = state
    return np.moveaxis(out, 0, axis)


def draw(rng, shape, kind, dtype=np.float64, axis=0):
    a, b = np.exp(rng.normal(0.0, 0.01, shape)), rng.normal(size=shape)
    if kind == "zeros":
        a[rng.random(shape) < 0.02] = 0.0
        b[rng.random(shape) < 0.02] = 0.0
    elif kind == "negative zeros":  # -0.0 offsets after restarts and zero states: only the zero rule keeps signs
        a[rng.random(shape) < 0.05] = 0.0
        b[rng.random(shape) < 0.05] = -0.0
    elif kind == "overflow":  # the state overflows, then a zero coefficient restarts it; offsets stay positive so
        # that regrouping never meets inf - inf
        b = np.abs(b)
        along = np.moveaxis(a, axis, 0)
        for start in rng.integers(0, along.shape[0] - 20, 3):
            along[start:start + 10] = 1e300
            along[start + 12] = 0.0
    a, b = a.astype(dtype), b.astype(dtype)
    a.setflags(write=False)  # the implementation must not write into its inputs
    b.setflags(write=False)
    return a, b


def assert_same_values(got, want, rtol):
    assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    scale = np.max(np.abs(want[finite]), initial=1.0)
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=rtol * scale)
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))


@pytest.fixture(params=[1 << 18, 300], ids=["one chunk", "many chunks"])
def chunk(request, monkeypatch):
    monkeypatch.setattr(recurrences, "CHUNK", request.param)
    monkeypatch.setattr(recurrences, "PYTHON_LOOP", 64)  # blocks from 64 positions on, to keep the test short
    return request.param


@pytest.mark.parametrize("shape, axis", [((900,), 0), ((301,), 0), ((300, 3), 0), ((2, 400), 1),
                                         ((3, 200, 2), 1), ((64, 150), 0)])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("kind", ["plain", "zeros", "negative zeros", "overflow"])
def test_long_recurrences_match_the_step_by_step_values(chunk, shape, axis, reverse, kind):
    rng = np.random.default_rng(sum(shape) + axis + 7 * reverse + len(kind))
    a, b = draw(rng, shape, kind, axis=axis)
    want = step_by_step(a, b, axis, reverse)
    if kind == "overflow":
        assert np.isinf(want).any() and not np.isnan(want).any()
    assert_same_values(recurrence(a, b, axis=axis, reverse=reverse), want, rtol=1e-11)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-4), (np.int64, 0)])
def test_other_dtypes(dtype, rtol):
    rng = np.random.default_rng(1)
    if dtype == np.int64:
        a, b = rng.integers(-1, 2, (1500,)), rng.integers(-3, 4, (1500,))
    else:
        a, b = draw(rng, (1500,), "zeros", dtype)
    for reverse in (False, True):
        got, want = recurrence(a, b, axis=0, reverse=reverse), step_by_step(a, b, 0, reverse)
        assert_same_values(got, want, rtol=rtol) if rtol else np.testing.assert_array_equal(got, want)


def test_a_nan_offset_stays_until_a_zero_coefficient_restarts():
    a, b = np.full(3000, 0.5), np.ones(3000)
    b[1000], a[2500] = np.nan, 0.0
    got = recurrence(a, b, axis=0, reverse=False)
    assert np.isnan(got[1000:2500]).all() and np.isfinite(got[:1000]).all() and np.isfinite(got[2500:]).all()
    assert_same_values(got, step_by_step(a, b, 0, False), rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 7, 1024])
def test_short_float64_sequences_are_exactly_the_step_by_step_values(n):
    rng = np.random.default_rng(n)
    a, b = draw(rng, (n,), "negative zeros")
    for reverse in (False, True):
        got, want = recurrence(a, b, axis=0, reverse=reverse), step_by_step(a, b, 0, reverse)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_empty_axes():
    for shape, axis in [((0,), 0), ((0, 3), 0), ((3000, 0), 0), ((2, 0), 1)]:
        assert recurrence(np.ones(shape), np.ones(shape), axis=axis, reverse=False).shape == shape
