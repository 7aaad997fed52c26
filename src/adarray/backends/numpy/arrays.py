"""NumPy implementations of the structural primitives: broadcasts, reshapes, slices, gathers,
scatters and the einsum contraction."""
from __future__ import annotations

import numpy as np

from ...primitives import indexing, linalg, structural
from ...primitives.indexing import numpy_index
from ...primitives.linalg import parse_spec
from ...primitives.structural import slice_indices
from .registry import impl


@impl(structural.broadcast_in_dim_p)
def _broadcast_in_dim(x, *, shape, dims):
    expanded = [1] * len(shape)
    for size, d in zip(np.shape(x), dims):
        expanded[d] = size
    return np.broadcast_to(np.reshape(x, expanded), shape)


@impl(structural.reshape_p)
def _reshape(x, *, shape):
    return np.reshape(x, shape)


@impl(structural.transpose_p)
def _transpose(x, *, perm):
    return np.transpose(x, perm)


@impl(structural.slice_p)
def _slice(x, *, starts, stops, steps):
    return np.asarray(x)[slice_indices(starts, stops, steps)]


@impl(structural.unslice_p)
def _unslice(x, *, shape, starts, stops, steps):
    out = np.zeros(shape, np.asarray(x).dtype)
    out[slice_indices(starts, stops, steps)] = x
    return out


@impl(structural.concatenate_p)
def _concatenate(*xs, axis):
    return np.concatenate(xs, axis=axis)


@impl(indexing.gather_p)
def _gather(x, *indices, spec):
    return np.asarray(x)[numpy_index(spec, indices)]


_SCATTERS = {"add": np.add.at, "mul": np.multiply.at, "min": np.minimum.at, "max": np.maximum.at}


@impl(indexing.scatter_p)
def _scatter(x, updates, *indices, spec, op):
    out = np.array(x, copy=True)
    index = numpy_index(spec, indices)
    if op == "set":
        out[index] = updates
    else:
        _SCATTERS[op](out, index, updates)
    return out


@impl(linalg.einsum_p)
def _einsum(a, b, *, spec):
    (sa, sb), so = parse_spec(spec)
    if sa and sa[-1:] == sb[:1] and sa[-1] not in so and len(sb) <= 2 and so == sa[:-1] + sb[1:]:
        return np.matmul(a, b) if len(sa) <= 2 else np.tensordot(a, b, axes=1)
    return np.einsum(spec, a, b, optimize=True)


# --- the per-slot work of scatter-mul and scatter-min/max (primitives/indexing.py) ------------------

def _wrapped(targets, m):
    targets = np.asarray(targets).astype(np.intp, copy=False)
    if targets.size and targets.min() < 0:
        targets = np.where(targets < 0, targets + m, targets)
    return targets


@impl(indexing.scatter_mul_partials_p)
def _scatter_mul_partials(x, updates, targets, weights, output=None):
    """Zero counting per slot (the product of the non-zero updates and how many are zero), then one
    gather and one division over the updates; if a divided product is not a normal finite number (an
    overflow or underflow would make the quotient inexact) everything takes the exact route instead.
    With the scatter's output as a hint, no product per slot where every slot of it is usable."""
    x, updates, weights, targets = np.asarray(x), np.asarray(updates), np.asarray(weights), np.asarray(targets)
    if output is not None:
        partials = _mul_partials_from_output(x, updates, targets, weights, np.asarray(output))
        if partials is not None:
            return partials
    m = x.shape[0]  # NumPy's fancy indexing and ufunc.at wrap negative targets; bincount needs them wrapped
    is_zero_update = updates == 0
    zeros = np.bincount(_wrapped(targets, m), weights=is_zero_update, minlength=m) if is_zero_update.any() else None
    safe = updates if zeros is None else np.where(is_zero_update, 1, updates)
    product = np.ones(m, x.dtype)
    np.multiply.at(product, targets, safe)
    scaled = weights * x * product
    divided = product if zeros is None else product[zeros == 0]
    if not (np.all(np.isfinite(scaled) | ~(np.isfinite(x) & np.isfinite(weights))) and np.all(np.isfinite(divided))
            and np.all(np.abs(divided) >= np.finfo(x.dtype).tiny)):
        return _scatter_mul_partials_exact(x, updates, _wrapped(targets, m), weights)
    if zeros is None:
        own = scaled[targets]
        return [weights * product, np.divide(own, updates, out=own)]
    count, at_slot = zeros[targets], scaled[targets]
    own = np.where(count == 0, at_slot / safe, np.where((count == 1) & is_zero_update, at_slot, 0))
    return [(weights * np.where(zeros == 0, product, 0)).astype(x.dtype), own.astype(x.dtype)]


def _mul_partials_from_output(x, updates, targets, weights, output):
    """The division route from the scatter's result (no np.multiply.at): the product of a slot's updates
    is output / x, the partial of an update output / update. Only where every slot of the output and of
    output / x is a nonzero normal number (no zero and no overflow anywhere), else None."""
    tiny = np.finfo(x.dtype).tiny
    with np.errstate(all="ignore"):
        product, scaled = output / x, weights * output
    usable = (np.isfinite(output) & (np.abs(output) >= tiny) & np.isfinite(product) & (np.abs(product) >= tiny)
              & (np.isfinite(scaled) | ~np.isfinite(weights)))
    if not usable.all():
        return None
    own = scaled[targets]  # fancy indexing wraps negative targets and refuses out-of-range ones
    return [weights * product, np.divide(own, updates, out=own)]


def _scatter_mul_partials_exact(x, updates, targets, weights):
    """Segmented exclusive prefix and suffix products over the slots (no division)."""
    m = x.shape[0]
    keys = np.concatenate([np.arange(m), targets])
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], np.concatenate([x, updates])[order]
    starts = np.ones(len(keys), bool)
    starts[1:] = keys[1:] != keys[:-1]
    ends = np.ones(len(keys), bool)
    ends[:-1] = starts[1:]
    prefix = _exclusive_segmented_products(values, starts)
    suffix = _exclusive_segmented_products(values[::-1], ends[::-1])[::-1]
    others = np.empty_like(values)
    with np.errstate(invalid="ignore", over="ignore"):
        others[order] = prefix * suffix
    return [weights * others[:m], weights[targets] * others[m:]]


def _exclusive_segmented_products(values, starts):
    """The product of the values before each one in its segment (1 at a segment's start), by doubling
    steps that carry the segment flag instead of multiplying by 0 to restart (0 * inf would be NaN in
    every later segment)."""
    inclusive, closed = values.copy(), starts.copy()
    shift = 1
    with np.errstate(invalid="ignore", over="ignore"):
        while shift < len(values):
            inclusive[shift:] = np.where(closed[shift:], inclusive[shift:], inclusive[:-shift] * inclusive[shift:])
            closed[shift:] = closed[shift:] | closed[:-shift]
            shift *= 2
    exclusive = np.ones_like(values)
    exclusive[1:] = np.where(starts[1:], 1, inclusive[:-1])
    return exclusive


@impl(indexing.scatter_winner_p)
def _scatter_winner(x, updates, output, targets):
    x, updates, output = np.asarray(x), np.asarray(updates), np.asarray(output)
    m, n, targets = x.shape[0], updates.shape[0], np.asarray(targets)  # indexing wraps negative targets
    own = x == output
    wanted = np.where(own, np.nan, output)  # nothing equals NaN: slots x wins take no update
    candidates = np.flatnonzero(updates == wanted[targets])
    first = np.full(m, n, np.int64)
    np.minimum.at(first, targets[candidates], candidates)
    return np.where(own, -1, np.where(first < n, first, -2)).astype(np.int64)
