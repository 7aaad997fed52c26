"""Indexing: x[...] (basic and advanced), take, take_along_axis and `x.at[idx].op(values)`.

Basic indices (ints, slices, None, Ellipsis) become static slices and reshapes;
integer arrays (traced or not) become a gather with NumPy's exact semantics.
A boolean mask must be a concrete array (its result shape depends on its
values); use `where` for a traced mask.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import IndexOutOfRangeError, ShapeError, TracingError
from ..primitives import indexing, structural
from ..tracing import Tracer
from ._core import asvalue, holds_tracer, normalize_axis, shape
from ._shape import reshape


def expand_index(x_shape, index):
    """The index as a tuple with Ellipsis expanded and concrete boolean masks turned into integers."""
    if not isinstance(index, tuple):
        index = (index,)
    expanded = []
    for item in index:
        if isinstance(item, Tracer) and item.dtype == np.bool_:
            raise TracingError(
                "indexing with a traced boolean mask gives a result whose shape depends on the mask's "
                f"values ({item.aval}); use anp.where(mask, x, 0) or anp.sum(anp.where(mask, x, 0)) instead"
            )
        if isinstance(item, (list, tuple)):
            # NumPy reads a list or tuple inside the index tuple as one array index (x[(0, 1), (3, 2)]
            # picks two elements); an empty one is an empty integer index
            item = _sequence_index(item)
        if isinstance(item, np.ndarray) and item.dtype == np.bool_:
            expanded.extend(np.nonzero(item))
        else:
            expanded.append(item)
    consumed = sum(1 for i in expanded if i is not None and i is not Ellipsis)
    if consumed > len(x_shape):
        raise IndexOutOfRangeError(f"too many indices ({consumed}) for an array of shape {x_shape}")
    ellipses = [position for position, item in enumerate(expanded) if item is Ellipsis]
    if len(ellipses) > 1:
        raise IndexOutOfRangeError("an index can only have a single ellipsis ('...')")
    if ellipses:
        at = ellipses[0]
        expanded[at: at + 1] = [slice(None)] * (len(x_shape) - consumed)
    else:
        expanded += [slice(None)] * (len(x_shape) - consumed)
    return expanded


def _sequence_index(item):
    """A list or tuple index as an array: traced entries are stacked, an empty one has integer dtype."""
    if holds_tracer(item):
        return asvalue(item)
    array = np.asarray(item)
    return array.astype(np.intp) if array.size == 0 and array.dtype == np.float64 else array


def _is_array_index(item) -> bool:
    return isinstance(item, Tracer) or isinstance(item, np.ndarray) and item.ndim >= 0 and not isinstance(
        item, np.generic
    )


def index_spec(x_shape, items):
    """(spec, index arrays) for a gather/scatter; ints become 0-d arrays, bounds checked when static."""
    spec, arrays, axis = [], [], 0
    for item in items:
        if item is None:
            spec.append(("newaxis",))
            continue
        if isinstance(item, slice):
            start, stop, step = item.indices(x_shape[axis])
            spec.append(("slice", start, None if stop < 0 else stop, step))
        else:
            if not isinstance(item, Tracer):
                item = np.asarray(item)
                if not np.issubdtype(item.dtype, np.integer):
                    raise IndexOutOfRangeError(f"index arrays must be integers, got {item.dtype}")
                if item.size and (item.max() >= x_shape[axis] or item.min() < -x_shape[axis]):
                    raise IndexOutOfRangeError(
                        f"index {item.max() if item.max() >= x_shape[axis] else item.min()} is out of "
                        f"range for axis {axis} of size {x_shape[axis]}"
                    )
            elif not np.issubdtype(item.dtype, np.integer):
                raise IndexOutOfRangeError(f"index arrays must be integers, got {item.aval}")
            spec.append(("array",))
            arrays.append(item)
        axis += 1
    return tuple(spec), arrays


def getitem(x, index):
    """x[index] with NumPy semantics."""
    x = asvalue(x)
    items = expand_index(shape(x), index)
    if any(_is_array_index(i) for i in items):
        spec, arrays = index_spec(shape(x), items)
        return indexing.gather(x, spec, arrays)
    starts, stops, steps, out_shape, axis = [], [], [], [], 0
    for item in items:
        if item is None:
            out_shape.append(1)
            continue
        size = shape(x)[axis]
        if isinstance(item, slice):
            start, stop, step = item.indices(size)
            out_shape.append(len(range(start, stop, step)))
        else:
            position = int(item)
            if not -size <= position < size:
                raise IndexOutOfRangeError(f"index {position} is out of range for axis {axis} of size {size}")
            start, stop, step = position % size, position % size + 1, 1
        starts.append(start)
        stops.append(None if stop < 0 else stop)
        steps.append(step)
        axis += 1
    window = structural.slice_array(x, starts, stops, steps)
    return structural.reshape(window, tuple(out_shape))


def take(x, indices, axis=None):
    x = asvalue(x)
    if axis is None:
        x, axis = reshape(x, -1), 0
    axis = normalize_axis(axis, len(shape(x)), "take")
    return getitem(x, (slice(None),) * axis + (asvalue(indices),))


def take_along_axis(x, indices, axis):
    """Pick x's elements along `axis` at `indices` (same rank as x), like numpy.take_along_axis."""
    x, indices = asvalue(x), asvalue(indices)
    ndim = len(shape(x))
    axis = normalize_axis(axis, ndim, "take_along_axis")
    if len(shape(indices)) != ndim:
        raise ShapeError(f"take_along_axis: indices {shape(indices)} need the rank of x {shape(x)}")
    items = []
    for i in range(ndim):
        if i == axis:
            items.append(indices)
        else:
            grid = np.arange(shape(x)[i]).reshape([-1 if j == i else 1 for j in range(ndim)])
            items.append(grid)
    return indexing.gather(x, (("array",),) * ndim, items)
