"""Shape manipulation: reshape, transpose, stacking, splitting, flipping, tiling."""
from __future__ import annotations

import numpy as np

from ..core.errors import IndexOutOfRangeError, ShapeError
from ..primitives import structural
from ._core import asvalue, broadcast_shapes, cast, normalize_axes, normalize_axis, result_dtype, shape


def reshape(x, newshape, *more):
    """Reshape; one dimension may be -1 (inferred)."""
    x = asvalue(x)
    if more:
        newshape = (newshape, *more)
    newshape = (newshape,) if isinstance(newshape, (int, np.integer)) else tuple(int(n) for n in newshape)
    size = int(np.prod(shape(x), dtype=np.int64))
    if newshape.count(-1) > 1:
        raise ShapeError(f"reshape: more than one -1 in {newshape}")
    if -1 in newshape:
        known = int(np.prod([n for n in newshape if n != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ShapeError(f"reshape: cannot reshape {shape(x)} into {newshape}")
        newshape = tuple(size // known if n == -1 else n for n in newshape)
    return structural.reshape(x, newshape)


def ravel(x):
    return reshape(x, -1)


flatten = ravel


def transpose(x, axes=None, *more):
    x = asvalue(x)
    ndim = len(shape(x))
    if more:
        axes = (axes, *more)
    perm = tuple(reversed(range(ndim))) if axes is None else tuple(
        normalize_axis(int(a), ndim, "transpose") for a in axes
    )
    return structural.transpose(x, perm)


def swapaxes(x, axis1, axis2):
    x = asvalue(x)
    ndim = len(shape(x))
    perm = list(range(ndim))
    a, b = normalize_axis(axis1, ndim, "swapaxes"), normalize_axis(axis2, ndim, "swapaxes")
    perm[a], perm[b] = perm[b], perm[a]
    return structural.transpose(x, perm)


def moveaxis(x, source, destination):
    x = asvalue(x)
    ndim = len(shape(x))
    sources = normalize_axes(source, ndim, "moveaxis")
    destinations = normalize_axes(destination, ndim, "moveaxis")
    order = [i for i in range(ndim) if i not in sources]
    for dest, src in sorted(zip(destinations, sources)):
        order.insert(dest, src)
    return structural.transpose(x, order)


def expand_dims(x, axis):
    x = asvalue(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = len(shape(x)) + len(axes)
    axes = normalize_axes(axes, ndim, "expand_dims")
    dims = iter(shape(x))
    return structural.reshape(x, tuple(1 if i in axes else next(dims) for i in range(ndim)))


def squeeze(x, axis=None):
    x = asvalue(x)
    axes = tuple(i for i, n in enumerate(shape(x)) if n == 1) if axis is None else normalize_axes(
        axis, len(shape(x)), "squeeze"
    )
    for a in axes:
        if shape(x)[a] != 1:
            raise ShapeError(f"squeeze: axis {a} of shape {shape(x)} has size {shape(x)[a]}, not 1")
    return structural.reshape(x, tuple(n for i, n in enumerate(shape(x)) if i not in axes))


def broadcast_to(x, newshape):
    x = asvalue(x)
    newshape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    if broadcast_shapes("broadcast_to", shape(x), newshape) != newshape:
        raise ShapeError(f"broadcast_to: cannot broadcast {shape(x)} to {newshape}")
    return structural.broadcast_to(x, newshape)


def broadcast_arrays(*xs):
    target = broadcast_shapes("broadcast_arrays", *[shape(asvalue(x)) for x in xs])
    return [broadcast_to(x, target) for x in xs]


def concatenate(xs, axis=0):
    """Join arrays along an existing axis (dtypes are promoted)."""
    xs = [asvalue(x) for x in xs]
    if not xs:
        raise ShapeError("concatenate: needs at least one array")
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    target = result_dtype(*xs)
    axis = normalize_axis(axis, len(shape(xs[0])), "concatenate")
    return structural.concatenate([cast(x, target) for x in xs], axis)


def stack(xs, axis=0):
    """Join arrays of one shape along a new axis."""
    xs = [asvalue(x) for x in xs]
    if not xs:
        raise ShapeError("stack: needs at least one array")
    shapes = {shape(x) for x in xs}
    if len(shapes) != 1:
        raise ShapeError(f"stack: all arrays need one shape, got {sorted(shapes)}")
    axis = normalize_axis(axis, len(shape(xs[0])) + 1, "stack")
    return concatenate([expand_dims(x, axis) for x in xs], axis)


def _at_least(ndim, arrays, layout):
    out = []
    for x in arrays:
        x = asvalue(x)
        if len(shape(x)) < ndim:
            x = reshape(x, layout(tuple(shape(x))))
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arrays):
    """Each array with at least one dimension (a scalar becomes shape (1,))."""
    return _at_least(1, arrays, lambda s: (1,))


def atleast_2d(*arrays):
    """Each array with at least two dimensions: (N,) becomes (1, N)."""
    return _at_least(2, arrays, lambda s: (1,) * (2 - len(s)) + s)


def atleast_3d(*arrays):
    """Each array with at least three dimensions: (N,) becomes (1, N, 1), (M, N) becomes (M, N, 1)."""
    return _at_least(3, arrays, lambda s: {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)])


def _sequence(xs, name):
    xs = [asvalue(x) for x in xs]
    if not xs:
        raise ShapeError(f"{name}: needs at least one array")
    return xs


def hstack(xs):
    """Join along the second axis, or the first for 1-d arrays and scalars (numpy.hstack)."""
    xs = [atleast_1d(x) for x in _sequence(xs, "hstack")]
    return concatenate(xs, 0 if len(shape(xs[0])) == 1 else 1)


def vstack(xs):
    """Join along the first axis after making every array at least 2-d (numpy.vstack)."""
    return concatenate([atleast_2d(x) for x in _sequence(xs, "vstack")], 0)


def dstack(xs):
    """Join along the third axis after making every array at least 3-d (numpy.dstack)."""
    return concatenate([atleast_3d(x) for x in _sequence(xs, "dstack")], 2)


def column_stack(xs):
    """1-d arrays as columns of a 2-d array; 2-d arrays as they are (numpy.column_stack)."""
    xs = [reshape(x, (-1, 1)) if len(shape(x)) < 2 else x for x in _sequence(xs, "column_stack")]
    return concatenate(xs, 1)


row_stack = vstack


def window(x, axis, start, stop):
    ndim = len(shape(x))
    starts, stops = [0] * ndim, list(shape(x))
    starts[axis], stops[axis] = start, stop
    return structural.slice_array(x, starts, stops, [1] * ndim)


def split(x, indices_or_sections, axis=0):
    """Split into equal sections or at the given indices."""
    x = asvalue(x)
    axis = normalize_axis(axis, len(shape(x)), "split")
    length = shape(x)[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or length % sections:
            raise ShapeError(f"split: {length} elements do not divide into {sections} equal sections")
        bounds = [length // sections * i for i in range(sections + 1)]
    else:
        bounds = [0, *[int(i) for i in indices_or_sections], length]
    windows = [slice(a, b).indices(length)[:2] for a, b in zip(bounds[:-1], bounds[1:])]  # Python slicing
    return [window(x, axis, a, max(a, b)) for a, b in windows]


def flip(x, axis=None):
    x = asvalue(x)
    ndim = len(shape(x))
    axes = normalize_axes(axis, ndim, "flip")
    starts = [-1 if i in axes else 0 for i in range(ndim)]
    stops = [None if i in axes else n for i, n in enumerate(shape(x))]
    steps = [-1 if i in axes else 1 for i in range(ndim)]
    return structural.slice_array(x, starts, stops, steps)


def tile(x, reps):
    x = asvalue(x)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    ndim = max(len(shape(x)), len(reps))
    x = reshape(x, (1,) * (ndim - len(shape(x))) + tuple(shape(x)))
    reps = (1,) * (ndim - len(reps)) + reps
    expanded = structural.broadcast_in_dim(
        x, tuple(v for r, n in zip(reps, shape(x)) for v in (r, n)), tuple(range(1, 2 * ndim, 2))
    )
    return reshape(expanded, tuple(r * n for r, n in zip(reps, shape(x))))


def repeat(x, repeats, axis=None):
    """Repeat each element `repeats` times (a Python int) along `axis`."""
    x = asvalue(x)
    if not isinstance(repeats, (int, np.integer)):
        raise ShapeError("repeat: only an integer repeat count is supported")
    if axis is None:
        x, axis = ravel(x), 0
    axis = normalize_axis(axis, len(shape(x)), "repeat")
    old = shape(x)
    target = old[: axis + 1] + (int(repeats),) + old[axis + 1:]
    expanded = structural.broadcast_in_dim(x, target, tuple(i for i in range(len(target)) if i != axis + 1))
    return reshape(expanded, old[:axis] + (old[axis] * int(repeats),) + old[axis + 1:])


def rollaxis(x, axis, start=0):
    """Move `axis` to just before position `start` (numpy.rollaxis; moveaxis is the clearer name)."""
    ndim = len(shape(asvalue(x)))
    axis = normalize_axis(axis, ndim, "rollaxis")
    start = start + ndim if start < 0 else start
    if not 0 <= start <= ndim:
        raise IndexOutOfRangeError(f"rollaxis: start {start} is out of range for an array of {ndim} dimensions")
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start) if axis != start else asvalue(x)
