"""Structural primitives: they move elements and never compute with them.

broadcast_in_dim, reshape, transpose, slice (and its transpose, unslice),
concatenate. All are linear, so each gives only a transpose rule.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero
from .kinds import aval_of_value, linear

# --- broadcast_in_dim: operand axis i becomes output axis dims[i] --------------------------------


def _broadcast_abstract_eval(x, *, shape, dims):
    if len(dims) != x.ndim or any(not 0 <= d < len(shape) for d in dims) or list(dims) != sorted(dims):
        raise ShapeError(f"broadcast_in_dim: cannot place {x} at axes {dims} of shape {shape}")
    for size, d in zip(x.shape, dims):
        if size not in (1, shape[d]):
            raise ShapeError(f"broadcast_in_dim: cannot broadcast {x} to shape {tuple(shape)}")
    return x.update(shape=shape)


# Its rules (linear, the transpose a sum over the broadcast axes) are registered in reduce.py, beside
# reduce_sum: the sum's own rules broadcast, so the two families' rules need each other.
broadcast_in_dim_p = Primitive("broadcast_in_dim", _broadcast_abstract_eval)


def broadcast_in_dim(x, shape, dims):
    shape, dims = tuple(int(s) for s in shape), tuple(int(d) for d in dims)
    if np.shape(x) == shape and dims == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, dims=dims)


def broadcast_to(x, shape):
    """NumPy's broadcast_to (trailing alignment)."""
    ndim = len(np.shape(x))
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - ndim, len(shape))))


# --- reshape -------------------------------------------------------------------------------------


def _reshape_abstract_eval(x, *, shape):
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise ShapeError(f"reshape: cannot reshape {x} into shape {tuple(shape)}")
    return x.update(shape=shape)


reshape_p = Primitive("reshape", _reshape_abstract_eval)
linear(reshape_p, lambda ct, avals, *, shape: [reshape(ct, avals[0].shape)])


def reshape(x, shape):
    shape = tuple(int(s) for s in shape)
    if np.shape(x) == shape:
        return x
    return reshape_p.bind(x, shape=shape)


# --- transpose -----------------------------------------------------------------------------------


def _transpose_abstract_eval(x, *, perm):
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"transpose: {tuple(perm)} is not a permutation of the axes of {x}")
    return x.update(shape=tuple(x.shape[p] for p in perm))


transpose_p = Primitive("transpose", _transpose_abstract_eval)
linear(transpose_p, lambda ct, avals, *, perm: [transpose(ct, tuple(np.argsort(perm)))])


def transpose(x, perm):
    perm = tuple(int(p) for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return transpose_p.bind(x, perm=perm)


# --- slice and unslice: static strided windows ---------------------------------------------------


def slice_indices(starts, stops, steps):
    return tuple(slice(a, b, c) for a, b, c in zip(starts, stops, steps))


def slice_shape(shape, starts, stops, steps):
    return tuple(len(range(*s.indices(n))) for s, n in zip(slice_indices(starts, stops, steps), shape))


def _slice_abstract_eval(x, *, starts, stops, steps):
    if not len(starts) == len(stops) == len(steps) == x.ndim:
        raise ShapeError(f"slice: needs one start/stop/step per axis of {x}")
    return x.update(shape=slice_shape(x.shape, starts, stops, steps))


def _unslice_abstract_eval(x, *, shape, starts, stops, steps):
    if slice_shape(shape, starts, stops, steps) != x.shape:
        raise ShapeError(f"unslice: {x} does not fill the window of shape {tuple(shape)}")
    return x.update(shape=shape)


slice_p = Primitive("slice", _slice_abstract_eval)
unslice_p = Primitive("unslice", _unslice_abstract_eval)
linear(slice_p, lambda ct, avals, **window: [unslice(ct, avals[0].shape, **window)])
linear(unslice_p, lambda ct, avals, *, shape, **window: [slice_p.bind(ct, **window)])


def slice_array(x, starts, stops, steps):
    """x[start:stop:step, ...] with one static window per axis; a None stop runs to the end."""
    shape = np.shape(x)
    normalized = [s.indices(n) for s, n in zip(slice_indices(starts, stops, steps), shape)]
    starts = tuple(a for a, _, _ in normalized)
    steps = tuple(c for _, _, c in normalized)
    stops = tuple(None if b < 0 else b for _, b, _ in normalized)
    if all(len(range(*w)) == n and w[2] == 1 for w, n in zip(normalized, shape)):
        return x
    return slice_p.bind(x, starts=starts, stops=stops, steps=steps)


def unslice(x, shape, *, starts, stops, steps):
    """Zeros of `shape` with `x` placed in the window (the transpose of slice)."""
    return unslice_p.bind(x, shape=tuple(shape), starts=starts, stops=stops, steps=steps)


# --- concatenate ---------------------------------------------------------------------------------


def _concatenate_abstract_eval(*xs, axis):
    first = xs[0]
    for x in xs[1:]:
        if x.ndim != first.ndim or x.dtype != first.dtype or any(
            a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != axis
        ):
            raise ShapeError(
                f"concatenate: operands {', '.join(map(str, xs))} differ outside axis {axis}"
            )
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return first.update(shape=shape)


def _concatenate_transpose(ct, avals, *, axis):
    if isinstance(ct, Zero):
        return [Zero(a) for a in avals]
    pieces, offset = [], 0
    for aval in avals:
        starts = [0] * aval.ndim
        stops = list(ct.aval.shape if hasattr(ct, "aval") else np.shape(ct))
        starts[axis], stops[axis] = offset, offset + aval.shape[axis]
        pieces.append(slice_array(ct, starts, stops, [1] * aval.ndim))
        offset += aval.shape[axis]
    return pieces


concatenate_p = Primitive("concatenate", _concatenate_abstract_eval)
linear(concatenate_p, _concatenate_transpose)


def concatenate(xs, axis: int):
    if len(xs) == 1:
        return xs[0]
    return concatenate_p.bind(*xs, axis=int(axis))


broadcast_in_dim_p.sample = lambda rng: [
    ([rng.normal(size=(3,))], {"shape": (2, 3), "dims": (1,)}),
    ([rng.normal(size=(3, 1))], {"shape": (3, 4), "dims": (0, 1)}),
    ([rng.normal(size=())], {"shape": (2, 2), "dims": ()}),
]
reshape_p.sample = lambda rng: [([rng.normal(size=(2, 3))], {"shape": (3, 2)})]
transpose_p.sample = lambda rng: [([rng.normal(size=(2, 3, 4))], {"perm": (2, 0, 1)})]
slice_p.sample = lambda rng: [
    ([rng.normal(size=(5, 4))], {"starts": (1, 0), "stops": (4, 4), "steps": (2, 1)}),
    ([rng.normal(size=(5,))], {"starts": (4,), "stops": (None,), "steps": (-1,)}),
]
unslice_p.sample = lambda rng: [
    ([rng.normal(size=(2, 4))], {"shape": (5, 4), "starts": (1, 0), "stops": (4, 4), "steps": (2, 1)}),
]
concatenate_p.sample = lambda rng: [
    ([rng.normal(size=(2, 3)), rng.normal(size=(1, 3))], {"axis": 0}),
]


# --- batching: the batch axis is axis 0 of every batched operand and result ----------------------

def _shifted(axes):
    return tuple(a + 1 for a in axes)


broadcast_in_dim_p.batch = lambda args, batched, size, *, shape, dims: (
    broadcast_in_dim(args[0], (size,) + tuple(shape), (0,) + _shifted(dims)), True)
reshape_p.batch = lambda args, batched, size, *, shape: (reshape(args[0], (size,) + tuple(shape)), True)
transpose_p.batch = lambda args, batched, size, *, perm: (transpose(args[0], (0,) + _shifted(perm)), True)
slice_p.batch = lambda args, batched, size, *, starts, stops, steps: (
    slice_p.bind(args[0], starts=(0,) + tuple(starts), stops=(size,) + tuple(stops), steps=(1,) + tuple(steps)),
    True)
unslice_p.batch = lambda args, batched, size, *, shape, starts, stops, steps: (
    unslice(args[0], (size,) + tuple(shape), starts=(0,) + tuple(starts), stops=(size,) + tuple(stops),
            steps=(1,) + tuple(steps)), True)
concatenate_p.batch = lambda args, batched, size, *, axis: (
    concatenate(batch_all(args, batched, size), axis + 1), True)


# --- batching helpers (every rule kind that gives operands a batch axis broadcasts) ---------------------

def broadcast_batch(x, size: int):
    """An unbatched value given a leading batch axis of `size` (zero-copy)."""
    shape = aval_of_value(x).shape
    return broadcast_in_dim(x, (size,) + shape, tuple(range(1, len(shape) + 1)))


def batch_all(args, batched, size: int):
    """Every argument with a leading batch axis."""
    return [a if b else broadcast_batch(a, size) for a, b in zip(args, batched)]


def batch_elementwise(prim) -> None:
    """Batching of a map: give every operand the batch axis, then apply the map."""

    def batch(args, batched, size, **params):
        return prim.bind(*batch_all(args, batched, size), **params), True

    prim.batch = batch
