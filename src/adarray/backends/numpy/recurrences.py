"""NumPy implementations of the recurrences the scan rules emit: linear_recurrence (s_k = a_k s_(k-1) + b_k, a
product with a zero factor being 0) and matrix_recurrence (s_k = A_k s_(k-1) + b_k).

A linear recurrence of n steps is solved in blocks of BLOCK consecutive positions: a loop over the positions of a
block runs on all blocks at once, and the blocks' end states form a recurrence BLOCK times shorter, solved the same
way. So 10^6 steps take about 200 NumPy calls on long rows; the values agree with the step-by-step recurrence up to
rounding (the products are regrouped).

    _linear_recurrence(np.array([2.0, 0.0, 3.0]), np.array([1.0, 1.0, 1.0]), axis=0, reverse=False)  # [1, 1, 4]
"""
from __future__ import annotations

import numpy as np

from ...primitives import scan
from .registry import impl

# NumPy calls grow with BLOCK and memory passes do not; below 2 * BLOCK positions one step per position is cheaper.
BLOCK = 32
# From this many sequences side by side (the other axes), one step per position is already a long vector.
SEQUENTIAL_WIDTH = 512
# A loop over Python floats takes about 0.15 µs a step: up to this length it beats the blocks.
PYTHON_LOOP = 1024
# Elements (positions times sequences side by side) solved at a time: the blocks' scratch space, twice this many
# elements, stays in cache and is reused.
CHUNK = 1 << 18
# Blocks transposed at a time (their BLOCK * TILE elements fit in a core's cache).
TILE = 1024


@impl(scan.linear_recurrence_p)
def _linear_recurrence(a, b, *, axis, reverse):
    """s_k = a_k s_(k-1) + b_k (s_(k+1) if reverse), s = 0 before the first step, where a product with a zero factor
    is 0 (a zero coefficient restarts whatever the state before it, inf or NaN; a zero state stays 0 through
    coefficients whose product overflowed).

    Plain products are tried first. They differ from the zero-restarting ones only where a zero meets an inf or a
    NaN, which leaves a NaN in the values (every product reaches them), or where a zero product is added to -0.0,
    which only an offset of -0.0 can start. In those cases (and for complex numbers) the values are computed again
    with the zero rule."""
    a, b = np.asarray(a), np.asarray(b)
    out = np.empty(b.shape, b.dtype)
    if out.size == 0:
        return out
    if b.ndim == 1 and b.shape[0] <= PYTHON_LOOP and b.dtype == np.float64:  # the zero rule, float by float
        _sequential(a, b, out, _product, reverse, None)
        return out
    # views with the axis first: positive strides only (NumPy copies reversed strides slowly), so the blocks run
    # backwards when the recurrence does
    a_, b_, out_ = (np.moveaxis(x, axis, 0) if axis else x for x in (a, b, out))
    with np.errstate(invalid="ignore", over="ignore"):
        if _plain_products_suffice(b):
            _solve(a_, b_, out_, _plain_product, reverse)
            if not _has_nan(out):
                return out
        _solve(a_, b_, out_, _product, reverse)
    return out


def _plain_products_suffice(b) -> bool:
    if b.dtype.kind in "biu":
        return True
    if b.dtype.kind != "f":
        return False
    zeros = b == 0
    return not (zeros.any() and np.signbit(b[zeros]).any())


def _has_nan(values) -> bool:
    return values.dtype.kind == "f" and bool(np.isnan(np.min(values)))  # min propagates NaN, in one pass


def _plain_product(gain, state, out):
    return np.multiply(gain, state, out=out)


def _product(gain, state, out):
    """gain * state into `out`, 0 where either is 0."""
    zero = (gain == 0) | (state == 0)
    np.multiply(gain, state, out=out)
    np.copyto(out, 0, where=zero)
    return out


def _solve(a, b, out, multiply, reverse, start=None) -> None:
    """out_k = a_k out_(k-1) + b_k along the first axis (out_(k+1) if reverse), `multiply` forming the products,
    from `start` (a length-1 slice holding the state before the first step) or from 0. `out` may be a strided
    view; a and b are only read. Long sequences go in chunks of about CHUNK elements, one after the other, so
    that the blocks' scratch space stays in cache and is not fresh memory (page faults) for every call."""
    n, width = b.shape[0], b[0].size
    if n < 2 * BLOCK or width >= SEQUENTIAL_WIDTH or (b.ndim == 1 and n <= PYTHON_LOOP and b.dtype == np.float64):
        _sequential(a, b, out, multiply, reverse, start)
        return
    length = max(2 * BLOCK, CHUNK // width // BLOCK * BLOCK)
    scratch = np.empty((2, BLOCK, min(n, length) // BLOCK) + b.shape[1:], b.dtype)
    for begin in range(0, n, length):
        part = slice(n - min(n, begin + length), n - begin) if reverse else slice(begin, min(n, begin + length))
        _blocked(a[part], b[part], out[part], multiply, reverse, start, scratch)
        start = out[part.start:part.start + 1] if reverse else out[part.stop - 1:part.stop]


def _blocked(a, b, out, multiply, reverse, start, scratch) -> None:
    n = b.shape[0]
    if n < 2 * BLOCK:
        _sequential(a, b, out, multiply, reverse, start)
        return
    count = n // BLOCK
    body = count * BLOCK
    blocked = slice(n - body, n) if reverse else slice(0, body)  # the rest is solved after, from their last state
    # (position in block, block, ...): each step below reads and writes whole rows
    gain, local = scratch[0, :, :count], scratch[1, :, :count]
    _transpose_into(gain, _blocks(a[blocked], count))
    _transpose_into(local, _blocks(b[blocked], count))
    step = np.empty_like(local[0])
    last = 0 if reverse else BLOCK - 1  # the position of a block's end state
    for j in range(BLOCK - 2, -1, -1) if reverse else range(1, BLOCK):
        previous = j + 1 if reverse else j - 1
        # each block solved from a zero state, and the running products of its coefficients
        multiply(gain[j], local[previous], step)
        local[j] += step
        multiply(gain[j], gain[previous], gain[j])
    ends = np.empty_like(local[last])
    _solve(gain[last], local[last], ends, multiply, reverse, start)  # the true state after every block
    # each block starts where the one before it ended, the first from `start`; from 0, it is already solved (and an
    # offset of -0.0 there stays -0.0)
    starts = step
    if reverse:
        starts[:-1] = ends[1:]
    else:
        starts[1:] = ends[:-1]
    late = slice(None) if start is not None else slice(0, -1) if reverse else slice(1, None)
    if start is not None:
        starts[-1 if reverse else 0] = start[0]
    multiply(gain[:, late], starts[late], gain[:, late])
    local[:, late] += gain[:, late]
    np.copyto(_blocks(out[blocked], count), local)  # faster than adding into the strided view
    if body < n:
        rest = slice(0, n - body) if reverse else slice(body, n)
        start = out[n - body:n - body + 1] if reverse else out[body - 1:body]
        _sequential(a[rest], b[rest], out[rest], multiply, reverse, start)


def _transpose_into(out, blocks):
    """out[...] = blocks, a few hundred blocks at a time: NumPy copies along out's rows, which reads `blocks` with a
    stride of BLOCK elements, and the part of `blocks` that a tile reads stays in cache for all BLOCK rows."""
    for begin in range(0, blocks.shape[1], TILE):
        np.copyto(out[:, begin:begin + TILE], blocks[:, begin:begin + TILE])


def _blocks(x, count):
    """x (count * BLOCK, ...) viewed as (BLOCK, count, ...): element [j, k] is x[k * BLOCK + j]."""
    first, *rest = x.strides
    return np.lib.stride_tricks.as_strided(x, (BLOCK, count) + x.shape[1:], (first, BLOCK * first, *rest),
                                           writeable=x.flags.writeable)


def _sequential(a, b, out, multiply, reverse, start) -> None:
    """One step per position, from `start` (a length-1 slice of the state before the first step) or from 0."""
    n = b.shape[0]
    if b.ndim == 1 and b.dtype == np.float64:  # Python floats are doubles, and much faster one at a time
        gains, offsets = a.tolist(), b.tolist()
        if reverse:
            gains.reverse()
            offsets.reverse()
        values = _python_recurrence(gains, offsets, None if start is None else float(start[0]))
        out[:] = values[::-1] if reverse else values
        return
    step = np.empty((1,) + b.shape[1:], b.dtype)
    previous = start
    for k in range(n - 1, -1, -1) if reverse else range(n):
        if previous is None:
            out[k:k + 1] = b[k:k + 1]
        else:
            multiply(a[k:k + 1], previous, step)
            np.add(step, b[k:k + 1], out=out[k:k + 1])
        previous = out[k:k + 1]


def _python_recurrence(gains, offsets, state):
    values = []
    for gain, offset in zip(gains, offsets):
        state = offset if state is None else (gain * state if gain != 0 and state != 0 else 0.0) + offset
        values.append(state)
    return values


@impl(scan.matrix_recurrence_p)
def _matrix_recurrence(a, b, *, reverse):
    """Doubling on pairs (A, b): (A1, b1) then (A2, b2) composes to (A2 A1, A2 b1 + b2)."""
    axis = np.ndim(b) - 2
    a, b = np.asarray(a), np.asarray(b)
    if reverse:
        a, b = np.flip(a, axis), np.flip(b, axis)
    matrices, offsets = a.copy(), b.copy()
    n, step = b.shape[axis], 1
    later = (slice(None),) * axis
    while step < n:
        head, tail = later + (slice(step, None),), later + (slice(None, n - step),)
        offsets[head] = offsets[head] + np.einsum("...ij,...j->...i", matrices[head], offsets[tail])
        matrices[head] = matrices[head] @ matrices[tail]
        step *= 2
    if reverse:
        offsets = np.flip(offsets, axis)
    return np.ascontiguousarray(offsets)
