"""Assembling arrays: block (nested lists of blocks) and resize (repeat the elements to a new shape);
and the shape queries shape, ndim and size (static facts, also of traced arrays).

Both only move elements (concatenations and one gather with static indices), so their derivatives
route cotangents back to the elements they came from (summed where resize repeats one).

    >>> block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), np.ones((1, 1))]]).shape  # doctest: +SKIP
    (3, 3)
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError, ShapeError
from ..primitives import indexing
from ..tracing import Tracer
from ._core import asvalue, dtype
from ._core import shape as _shape_of
from ._shape import concatenate, ravel, reshape


def _depth(arrays, path=()):
    """The nesting depth of lists (NumPy's list_ndim); every leaf must sit at the same depth."""
    if isinstance(arrays, tuple):
        raise ArgumentError(f"block: arrays{_where(path)} is a tuple; only lists may nest blocks (as in NumPy)")
    if not isinstance(arrays, list):
        return 0, len(_shape_of(asvalue(arrays)))
    if not arrays:
        raise ArgumentError(f"block: arrays{_where(path)} is an empty list")
    depths = [_depth(item, path + (k,)) for k, item in enumerate(arrays)]
    if len({d for d, _ in depths}) != 1:
        raise ArgumentError(f"block: the lists in arrays{_where(path)} nest to different depths "
                            f"{sorted({d + 1 for d, _ in depths})}")
    return depths[0][0] + 1, max(n for _, n in depths)


def _where(path):
    return "".join(f"[{k}]" for k in path)


def _assemble(arrays, depth, ndim):
    if not isinstance(arrays, list):
        value = asvalue(arrays)
        missing = ndim - len(_shape_of(value))
        return reshape(value, (1,) * missing + tuple(_shape_of(value))) if missing else value
    parts = [_assemble(item, depth - 1, ndim) for item in arrays]
    try:
        return concatenate(parts, axis=ndim - depth)
    except ShapeError as error:
        raise ShapeError(f"block: blocks do not fit along axis {-depth}: {error}") from None


def block(arrays):
    """An array assembled from nested lists of blocks (numpy.block): the innermost lists join along
    the last axis, the next ones along the axis before it, and so on; blocks of fewer dimensions get
    leading axes of length 1."""
    depth, leaf_ndim = _depth(arrays)
    if depth == 0:
        value = asvalue(arrays)
        return value if isinstance(value, Tracer) else np.array(value, copy=True)
    return _assemble(arrays, depth, max(depth, leaf_ndim))


def resize(a, new_shape):
    """An array of `new_shape` filled with a's elements (flattened, C order) repeated cyclically
    (numpy.resize); zeros if a or the new shape is empty."""
    a = asvalue(a)
    new_shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(n) for n in new_shape)
    if any(n < 0 for n in new_shape):
        raise ArgumentError(f"resize: all elements of new_shape must be non-negative, got {new_shape}")
    new_size = int(np.prod(new_shape))
    flat = ravel(a)
    size = _shape_of(flat)[0]
    if size == 0 or new_size == 0:
        return np.zeros(new_shape, dtype(a))
    ids = np.arange(new_size, dtype=np.int64) % size
    return reshape(indexing.gather(flat, (("array",),), [ids]), new_shape)


def shape(a):
    """The shape of an array (also of a traced one: shapes are static), as numpy.shape."""
    return tuple(_shape_of(asvalue(a)))


def ndim(a):
    """The number of axes, as numpy.ndim."""
    return len(_shape_of(asvalue(a)))


def size(a, axis=None):
    """The number of elements (along `axis`, if given), as numpy.size."""
    dims = _shape_of(asvalue(a))
    return int(np.prod(dims)) if axis is None else int(dims[axis])
