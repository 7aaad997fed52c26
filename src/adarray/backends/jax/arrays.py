"""JAX lowerings of the structural primitives: broadcasts, reshapes, slices, gathers, scatters
(`.at[]` with our modes; with constant indices as rows of windows, constant_indices.py), the einsum
contraction, and the per-slot work of scatter-mul and scatter-min/max."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...primitives import indexing, linalg, structural
from ...primitives.indexing import numpy_index
from ...primitives.structural import slice_indices
from .constant_indices import fold_uniform_gather, window_form
from .registry import lowering


@lowering(structural.broadcast_in_dim_p)
def _broadcast_in_dim(x, *, shape, dims):
    return jax.lax.broadcast_in_dim(x, tuple(shape), tuple(dims))


@lowering(structural.reshape_p)
def _reshape(x, *, shape):
    return jnp.reshape(x, shape)


@lowering(structural.transpose_p)
def _transpose(x, *, perm):
    return jnp.transpose(x, perm)


@lowering(structural.slice_p)
def _slice(x, *, starts, stops, steps):
    return x[slice_indices(starts, stops, steps)]


@lowering(structural.unslice_p)
def _unslice(x, *, shape, starts, stops, steps):
    """The slice's elements in zeros of `shape`: one `lax.pad` (edges, and interior zeros between strided
    elements), which XLA fuses, rather than a scatter."""
    config = []
    for axis, (where, size) in enumerate(zip(slice_indices(starts, stops, steps), shape)):
        positions = range(*where.indices(size))
        if len(positions) == 0:
            return jnp.zeros(shape, x.dtype)
        if positions.step < 0:  # the same positions read upwards
            x, positions = jnp.flip(x, axis), positions[::-1]
        config.append((positions.start, size - 1 - positions[-1], positions.step - 1))
    return jax.lax.pad(x, jnp.zeros((), x.dtype), config)


@lowering(structural.concatenate_p)
def _concatenate(*xs, axis):
    return jnp.concatenate(xs, axis=axis)


def _constant(value) -> bool:
    return isinstance(value, np.ndarray)


@lowering(indexing.gather_p, constants=True)
def _gather(x, *indices, spec):
    """Constant index arrays: rows of whole-axis windows (constant_indices.py); a constant operand that
    does not vary where run-time indices select: folded to a constant."""
    if _constant(x):
        folded = fold_uniform_gather(x, spec, indices, _constant)
        if folded is not None:
            return folded
    elif all(_constant(i) for i in indices):
        form = window_form(x.shape, spec, indices)
        if form is not None:
            return form.gather(x)
    return jnp.asarray(x)[numpy_index(spec, [jnp.asarray(i) for i in indices])]


@lowering(indexing.scatter_p, constants=True)
def _scatter(x, updates, *indices, spec, op):
    x, updates = jnp.asarray(x), jnp.asarray(updates)
    if all(_constant(i) for i in indices):
        form = window_form(x.shape, spec, indices)
        if form is not None:
            return form.scatter(x, updates, op)
    at = x.at[numpy_index(spec, [jnp.asarray(i) for i in indices])]
    # Duplicate targets accumulate (as NumPy's ufunc.at); with op="set" XLA picks one of them.
    return {"set": at.set, "add": at.add, "mul": at.multiply, "min": at.min, "max": at.max}[op](updates)


@lowering(linalg.einsum_p)
def _einsum(a, b, *, spec):
    return jnp.einsum(spec, a, b, precision=jax.lax.Precision.HIGHEST)


def _wrapped(targets, m):
    return jnp.where(targets < 0, targets + m, targets)


@lowering(indexing.scatter_mul_partials_p)
def _scatter_mul_partials(x, updates, targets, weights, output=None):
    """Zero counting per slot: the product of the non-zero updates and how many are zero, then one
    gather and one division per update. (The NumPy backend switches to segmented prefix products
    when a product over- or underflows; here that case loses accuracy as the division does.) With the
    scatter's output as a hint, a conditional skips the two scatters where every slot of it (and of
    output / x) is a nonzero normal number."""
    targets = _wrapped(targets, x.shape[0])
    if output is None:
        return _mul_partials_by_zero_counting(x, updates, targets, weights)
    tiny = jnp.finfo(x.dtype).tiny
    product, scaled = output / x, weights * output
    usable = jnp.all(jnp.isfinite(output) & (jnp.abs(output) >= tiny) & jnp.isfinite(product)
                     & (jnp.abs(product) >= tiny) & (jnp.isfinite(scaled) | ~jnp.isfinite(weights)))
    return list(jax.lax.cond(usable, lambda: (weights * product, scaled[targets] / updates),
                             lambda: tuple(_mul_partials_by_zero_counting(x, updates, targets, weights))))


def _mul_partials_by_zero_counting(x, updates, targets, weights):
    is_zero = updates == 0
    zeros = jnp.zeros(x.shape, jnp.int64).at[targets].add(is_zero.astype(jnp.int64))
    safe = jnp.where(is_zero, jnp.ones((), updates.dtype), updates)
    product = jnp.ones(x.shape, x.dtype).at[targets].multiply(safe)
    scaled = weights * x * product
    count, at_slot = zeros[targets], scaled[targets]
    own = jnp.where(count == 0, at_slot / safe, jnp.where((count == 1) & is_zero, at_slot, 0))
    return [weights * jnp.where(zeros == 0, product, 0), own]


@lowering(indexing.scatter_winner_p)
def _scatter_winner(x, updates, output, targets):
    """Per slot: -1 where x is the result, else the first update equal to it (-2 if none)."""
    n = updates.shape[0]
    own = x == output
    wanted = jnp.where(own, jnp.nan, output)  # nothing equals NaN: slots x wins take no update
    positions = jnp.broadcast_to(jnp.arange(n).reshape((n,) + (1,) * (updates.ndim - 1)), updates.shape)
    candidates = jnp.where(updates == wanted[targets], positions, n)
    first = jnp.full(x.shape, n, jnp.int64).at[targets].min(candidates)
    return jnp.where(own, -1, jnp.where(first < n, first, -2)).astype(jnp.int64)
