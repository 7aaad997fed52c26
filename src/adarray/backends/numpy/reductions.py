"""NumPy implementations of reductions and scans: the known monoids, products of the others
(zero counting), argmax/argmin, and the linear recurrences the scan rules emit."""
from __future__ import annotations

import numpy as np

from ...primitives import reduce, scan
from .registry import impl

_REDUCERS = {"add": np.sum, "mul": np.prod, "max": np.max, "min": np.min, "and": np.all, "or": np.any}


@impl(reduce.reduce_p)
def _reduce(x, *, op, axes):
    return np.asarray(_REDUCERS[op](x, axis=axes))


@impl(reduce.product_others_p)
def _product_others(x, scale, *, axes):
    """Zero counting: no zero -> prod / x; one zero -> the product of the others at the zero; more -> 0."""
    x = np.asarray(x)
    is_zero = x == 0
    if not is_zero.any():  # the common case, in one pass
        return (np.prod(x, axis=axes, keepdims=True) * scale / x).astype(x.dtype)
    zeros = np.sum(is_zero, axis=axes, keepdims=True)
    safe = np.where(is_zero, 1, x)
    product = np.prod(safe, axis=axes, keepdims=True)
    others = np.where(zeros == 0, product / safe, np.where((zeros == 1) & is_zero, product, 0))
    return (scale * others).astype(x.dtype)


@impl(reduce.argmax_p)
def _argmax(x, *, axis):
    return np.argmax(x, axis=axis)


@impl(reduce.argmin_p)
def _argmin(x, *, axis):
    return np.argmin(x, axis=axis)


_ACCUMULATE = {"add": np.cumsum, "mul": np.cumprod, "max": np.maximum.accumulate, "min": np.minimum.accumulate}


@impl(scan.scan_p)
def _scan(x, *, op, axis, reverse):
    accumulate = _ACCUMULATE[op]
    if reverse:
        return np.flip(accumulate(np.flip(x, axis), axis=axis), axis)
    return accumulate(x, axis=axis)


@impl(scan.linear_recurrence_p)
def _linear_recurrence(a, b, *, axis, reverse):
    """s_k = a_k s_(k-1) + b_k in O(n) work and about 2 sqrt(n) vectorised steps: each block of
    length ~sqrt(n) is solved from zero (a loop over the positions in a block, all blocks at once),
    then the blocks' end values are chained (a loop over blocks) and fed back in."""
    a, b = np.moveaxis(np.asarray(a), axis, 0), np.moveaxis(np.asarray(b), axis, 0)
    if reverse:
        a, b = a[::-1], b[::-1]
    n = b.shape[0]
    if n == 0:
        return np.ascontiguousarray(np.moveaxis(b.copy(), 0, axis))
    width = max(1, int(np.ceil(np.sqrt(n))))
    count = -(-n // width)
    pad = count * width - n
    if pad:  # a = 1, b = 0 leaves the values before it unchanged
        a = np.concatenate([a, np.ones((pad,) + a.shape[1:], a.dtype)])
        b = np.concatenate([b, np.zeros((pad,) + b.shape[1:], b.dtype)])
    rest = b.shape[1:]
    # Laid out (position in block, block, ...): each step of the loop over positions reads and
    # writes contiguous memory, in place, so these must be fresh copies (never views of the inputs).
    gain = np.array(np.swapaxes(a.reshape((count, width) + rest), 0, 1), order="C")
    local = np.array(np.swapaxes(b.reshape((count, width) + rest), 0, 1), order="C")
    step = np.empty_like(local[0])
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(1, width):
            _product(gain[j], local[j - 1], step)
            local[j] += step
            _product(gain[j], gain[j - 1], gain[j])
        starts = np.empty_like(local[0])
        incoming = np.zeros(rest, b.dtype)
        for k in range(count):
            starts[k] = incoming
            incoming = _product(gain[-1, k], incoming, np.empty_like(incoming)) + local[-1, k]
        local += _product(gain, starts[None], np.empty_like(gain))
    values = np.swapaxes(local, 0, 1).reshape((count * width,) + rest)[:n]
    if reverse:
        values = values[::-1]
    return np.ascontiguousarray(np.moveaxis(values, 0, axis))


def _product(gain, state, out):
    """gain * state into `out`, 0 where either is 0 (linear_recurrence: a zero coefficient restarts whatever the state
    before it, inf or NaN; a zero state stays 0 through a product of coefficients that overflowed)."""
    zero = (gain == 0) | (state == 0)
    np.multiply(gain, state, out=out)
    np.copyto(out, 0, where=zero)
    return out


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
