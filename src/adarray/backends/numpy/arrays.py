"""NumPy implementations of the structural primitives: broadcasts, reshapes, slices, gathers,
scatters and the einsum contraction."""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from ...primitives import indexing, linalg, structural
from ...primitives.indexing import numpy_index
from ...primitives.structural import slice_indices
from .registry import impl


@impl(structural.broadcast_in_dim_p)
def _broadcast_in_dim(x, *, shape, dims):
    """A read-only view (a copy would cost less for small arrays, but constant folding recognises a uniform
    constant by its zero strides: Literal.uniform)."""
    x = np.asarray(x)
    return np.broadcast_to(x.reshape(_expanded_shape(x.shape, shape, dims)), shape)


@functools.lru_cache(maxsize=4096)
def _expanded_shape(in_shape, shape, dims):
    """x's shape with size-1 axes where the broadcast adds axes."""
    expanded = [1] * len(shape)
    for size, d in zip(in_shape, dims):
        expanded[d] = size
    return tuple(expanded)


@impl(structural.reshape_p)
def _reshape(x, *, shape):
    try:
        return x.reshape(shape)  # the method: np.reshape costs three Python calls more
    except AttributeError:
        return np.reshape(x, shape)


@impl(structural.transpose_p)
def _transpose(x, *, perm):
    return np.transpose(x, perm)


@functools.lru_cache(maxsize=4096)
def _window(starts, stops, steps):
    return slice_indices(starts, stops, steps)


@impl(structural.slice_p)
def _slice(x, *, starts, stops, steps):
    return np.asarray(x)[_window(starts, stops, steps)]


@impl(structural.unslice_p)
def _unslice(x, *, shape, starts, stops, steps):
    out = np.zeros(shape, np.asarray(x).dtype)
    out[_window(starts, stops, steps)] = x
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


# Below this many multiply-adds per matrix of a batch, einsum's one C loop beats matmul's calls and per-matrix set-up.
SMALL_PRODUCT = 2048


class _Matmul(NamedTuple):
    """einsum as one matmul: a transposed to (batch, free, summed axes) and reshaped to a stack of matrices, b to
    (batch, summed, free) likewise, the product reshaped to its axes and transposed to the output's order (None:
    a step with nothing to do)."""
    perm_a: tuple | None
    matrices_a: tuple | None
    perm_b: tuple | None
    matrices_b: tuple | None
    unfolded: tuple | None
    perm_out: tuple | None


@impl(linalg.einsum_p)
def _einsum(a, b, *, spec):
    """A contraction that is a (batched) matrix product goes to matmul (BLAS); the rest, and small products, to
    NumPy's einsum."""
    a, b = np.asarray(a), np.asarray(b)
    recipe = _matmul_recipe(spec, a.shape, b.shape, a.dtype.kind)
    if recipe is None:
        return np.einsum(spec, a, b, optimize=_sums_alone(spec))
    if recipe.perm_a is not None:
        a = a.transpose(recipe.perm_a)
    if recipe.matrices_a is not None:
        a = a.reshape(recipe.matrices_a)
    if recipe.perm_b is not None:
        b = b.transpose(recipe.perm_b)
    if recipe.matrices_b is not None:
        b = b.reshape(recipe.matrices_b)
    product = np.matmul(a, b)
    if recipe.unfolded is not None:
        product = product.reshape(recipe.unfolded)
    return product if recipe.perm_out is None else product.transpose(recipe.perm_out)


@functools.lru_cache(maxsize=4096)
def _matmul_recipe(spec, shape_a, shape_b, kind):
    """How einsum `spec` runs on these shapes as one matmul, or None where einsum does better: no matrix product,
    products too small, or an unusual dtype."""
    plan = _matrix_product_plan(spec)
    if plan is None or kind not in "fciu":
        return None
    perm_a, perm_b, batch, free_a, summed, perm_out = plan
    lead = tuple(shape_a[i] for i in perm_a[:batch])
    rows = tuple(shape_a[i] for i in perm_a[batch:batch + free_a])
    columns = tuple(shape_b[i] for i in perm_b[batch + summed:])
    m, k, n = math.prod(rows), math.prod(shape_b[i] for i in perm_b[batch:batch + summed]), math.prod(columns)
    if m * k * n < SMALL_PRODUCT:
        return None
    moved = lambda perm: None if perm == tuple(range(len(perm))) else perm  # noqa: E731
    return _Matmul(moved(perm_a), None if len(rows) == 1 and summed == 1 else lead + (m, k),
                   moved(perm_b), None if len(columns) == 1 and summed == 1 else lead + (k, n),
                   None if len(rows) == 1 and len(columns) == 1 else lead + rows + columns, moved(perm_out))


@functools.lru_cache(maxsize=None)
def _matrix_product_plan(spec):
    """einsum `spec` as one matmul: the operands' axes ordered (batch, free, contracted) and (batch, contracted,
    free), and the output's order among (batch, free of a, free of b); None if some letter is summed in one operand
    only, or none is summed (an outer or elementwise product: einsum does it in one pass)."""
    (sa, sb), so = linalg.parse_spec(spec)
    contracted = [c for c in sa if c in sb and c not in so]
    if not contracted or _sums_alone(spec):
        return None
    batch = [c for c in so if c in sa and c in sb]
    free_a = [c for c in sa if c in so and c not in sb]
    free_b = [c for c in sb if c in so and c not in sa]
    produced = batch + free_a + free_b
    perm_a = tuple(sa.index(c) for c in batch + free_a + contracted)
    perm_b = tuple(sb.index(c) for c in batch + contracted + free_b)
    return perm_a, perm_b, len(batch), len(free_a), len(contracted), tuple(produced.index(c) for c in so)


@functools.lru_cache(maxsize=None)
def _sums_alone(spec) -> bool:
    """Does some letter appear in one operand only and not in the output (summed before any product)?"""
    (sa, sb), so = linalg.parse_spec(spec)
    return any(c not in so and c not in other for letters, other in ((sa, sb), (sb, sa)) for c in letters)


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
