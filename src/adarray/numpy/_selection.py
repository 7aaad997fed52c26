"""Selecting, placing and finding elements: put_along_axis, choose, compress, extract, lexsort,
trim_zeros, digitize, isin.

put_along_axis is a scatter (its derivative reaches the values NumPy keeps, the last of duplicate
indices); choose is a gather from the stacked choices; compress, extract and trim_zeros gather the
kept elements. All are differentiable in the arrays they move. Index arrays and lexsort's result
are integers, never differentiated.

compress, extract and trim_zeros return as many elements as the values select: they work on
concrete selections as in NumPy; a traced selection needs `size=` (JAX's convention): exactly
`size` results, cut or padded with `fill_value`.

    >>> compress(np.array([True, False, True]), np.array([1.0, 2.0, 3.0]))  # doctest: +SKIP
    array([1., 3.])
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError, IndexOutOfRangeError, ShapeError, TracingError
from ..primitives import elementwise as ew
from ..primitives import indexing
from ..tracing import Tracer
from ._core import asvalue, broadcast_exact, broadcast_shapes, cast, dtype, normalize_axis, prepare, shape
from ._indexing import take, take_along_axis
from ._math import clip, less_equal, remainder, where
from ._reductions import any as any_
from ._reductions import max as max_
from ._reductions import min as min_
from ._shape import expand_dims, ravel, reshape, stack
from ._sorting import argsort, nonzero, searchsorted


def _grid_items(index_shape, axis, indices):
    """NumPy's index tuple of take/put_along_axis: `indices` on `axis`, aranges on the other axes."""
    ndim = len(index_shape)
    items = []
    for i in range(ndim):
        if i == axis:
            items.append(indices)
        else:
            items.append(np.arange(index_shape[i]).reshape([-1 if j == i else 1 for j in range(ndim)]))
    return items


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with `values` placed at `indices` along `axis` (numpy.put_along_axis), as a new array.

    NumPy writes into arr and returns None; adarray never writes into its inputs, so, as in JAX,
    pass inplace=False and use the result (inplace=True raises, rather than silently leaving arr
    as it was). Duplicate indices keep the last value, as NumPy does.
    """
    if inplace:
        raise ArgumentError("put_along_axis: adarray does not write into arr (traced and user arrays are never "
                            "modified); pass inplace=False and use the returned array")
    if mode not in (None, "promise_in_bounds"):
        raise ArgumentError(f"put_along_axis: mode={mode!r} is not supported (NumPy's indexing rules apply)")
    arr, indices = asvalue(arr), asvalue(indices)
    if not np.issubdtype(dtype(indices), np.integer):
        raise ArgumentError(f"put_along_axis: indices must be integers, got {dtype(indices)}")
    target_shape = shape(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
        if len(shape(indices)) != 1:
            raise ShapeError(f"put_along_axis: with axis=None the indices must be 1-d, got shape {shape(indices)}")
    ndim = len(shape(arr))
    axis = normalize_axis(axis, ndim, "put_along_axis")
    if len(shape(indices)) != ndim:
        raise ShapeError(f"put_along_axis: indices of shape {shape(indices)} need the rank of arr {shape(arr)}")
    items = _grid_items(shape(arr), axis, indices)
    try:
        window = np.broadcast_shapes(*[shape(i) for i in items])
    except ValueError:
        raise ShapeError(f"put_along_axis: indices of shape {shape(indices)} do not fit arr of shape "
                         f"{shape(arr)} along the other axes") from None
    values = asvalue(values)
    if broadcast_shapes("put_along_axis", shape(values), window) != window:
        raise ShapeError(f"put_along_axis: values of shape {shape(values)} do not broadcast to the indexed "
                         f"shape {window}")
    updates = broadcast_exact(cast(values, dtype(arr)), window)
    placed = indexing.scatter(arr, (("array",),) * ndim, items, updates, "set")
    return reshape(placed, target_shape)


def _checked_choice(a, count, mode, name):
    """Indices into `count` choices after `mode` ('raise', 'wrap' or 'clip')."""
    if mode == "wrap":
        return remainder(a, count)
    if mode == "clip":
        return clip(a, 0, count - 1)
    if mode != "raise":
        raise ArgumentError(f"{name}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if isinstance(a, Tracer):
        raise TracingError(f"{name}: mode='raise' needs concrete indices (traced ones {a.aval} cannot be checked "
                           "while tracing); pass mode='wrap' or mode='clip'")
    concrete = np.asarray(a)
    if concrete.size and (concrete.min() < 0 or concrete.max() >= count):
        raise IndexOutOfRangeError(f"{name}: an index is outside [0, {count}) for {count} choices")
    return a


def choose(a, choices, out=None, mode="raise"):
    """out[i] = choices[a[i]][i], with a and every choice broadcast together (numpy.choose).
    Differentiable in the choices; mode 'raise' (concrete a), 'wrap' or 'clip'."""
    if out is not None:
        raise ArgumentError("choose: out= is not supported (adarray returns a new array)")
    a = asvalue(a)
    if not np.issubdtype(dtype(a), np.integer):
        raise ArgumentError(f"choose: the index array must be integers, got {dtype(a)}")
    options = list(choices) if not isinstance(choices, Tracer) else [choices[k] for k in range(shape(choices)[0])]
    if not options:
        raise ArgumentError("choose: needs at least one choice")
    promoted = prepare("choose", *options)
    common = broadcast_shapes("choose", shape(a), shape(promoted[0]))
    stacked = stack([broadcast_exact(o, common) for o in promoted])
    index = broadcast_exact(_checked_choice(a, len(options), mode, "choose"), common)
    return reshape(take_along_axis(stacked, expand_dims(index, 0), 0), common)


def _selected(condition, length, name, size, fill_value):
    """(positions, found) of the true entries of a 1-d condition: concrete (found None) or, with
    `size`, traced positions padded with 0 and the mask of the real ones."""
    condition = asvalue(condition)
    if len(shape(condition)) != 1:
        raise ShapeError(f"{name}: the condition must be 1-d, got shape {shape(condition)}")
    if size is None:
        if isinstance(condition, Tracer):
            raise TracingError(f"{name}: the number of selected elements depends on the values of the traced "
                               f"condition ({condition.aval}), and shapes must be known while tracing; pass size=k "
                               "for exactly k results (cut, or padded with fill_value)")
        positions = np.nonzero(np.asarray(condition))[0]
        if positions.size and positions[-1] >= length:
            raise IndexOutOfRangeError(f"{name}: the condition selects index {positions[-1]} of an axis of "
                                       f"length {length}")
        return positions, None
    if shape(condition)[0] > length:
        raise ShapeError(f"{name}: a condition of length {shape(condition)[0]} for an axis of length {length}")
    (positions,) = nonzero(condition, size=int(size), fill_value=-1)
    found = ew.ge(positions, np.zeros(shape(positions), positions.dtype))
    return where(found, positions, 0), found


def compress(condition, a, axis=None, out=None, *, size=None, fill_value=0):
    """The slices of a along `axis` (flattened if None) where the 1-d condition is true.

    With size=k: the first k selected slices, padded with fill_value (traced conditions need it)."""
    if out is not None:
        raise ArgumentError("compress: out= is not supported (adarray returns a new array)")
    a = asvalue(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, len(shape(a)), "compress")
    positions, found = _selected(condition, shape(a)[axis], "compress", size, fill_value)
    taken = take(a, positions, axis=axis)
    if size is not None and found is None:   # concrete condition, fixed size: cut or pad
        return _fixed_length(taken, axis, len(positions), int(size), fill_value)
    if found is None:
        return taken
    mask = reshape(found, [-1 if i == axis else 1 for i in range(len(shape(a)))])
    return where(mask, taken, _fill(fill_value, a))


def _fill(fill_value, like):
    """The fill value in the dtype of the array it pads (NumPy's and JAX's rule, no promotion)."""
    return cast(np.asarray(fill_value), dtype(like))


def _fixed_length(taken, axis, count, size, fill_value):
    ids = np.minimum(np.arange(size), max(count - 1, 0))
    kept = np.arange(size) < count
    if count == 0:
        block = list(shape(taken))
        block[axis] = size
        return broadcast_exact(_fill(fill_value, taken), tuple(block))
    picked = take(taken, ids, axis=axis)
    mask = kept.reshape([-1 if i == axis else 1 for i in range(len(shape(taken)))])
    return where(mask, picked, _fill(fill_value, taken))


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of arr where condition is nonzero, flattened (numpy.extract); size= as compress."""
    condition, arr = asvalue(condition), asvalue(arr)
    flat_condition = ravel(condition)
    mask = flat_condition if dtype(flat_condition) == np.bool_ else ew.ne(
        flat_condition, np.zeros(shape(flat_condition), dtype(flat_condition)))
    if not isinstance(mask, Tracer):
        mask = np.asarray(mask)
    return compress(mask, ravel(arr), 0, size=size, fill_value=fill_value)


def lexsort(keys, axis=-1):
    """The stable permutation sorting by the last key, ties broken by the one before, and so on
    (numpy.lexsort). `keys` is a sequence of arrays of one shape, or an array whose first axis runs
    over the keys. Integer result."""
    if isinstance(keys, Tracer) or (isinstance(keys, np.ndarray) and keys.ndim >= 1):
        keys = asvalue(keys)
        keys = [keys[k] for k in range(shape(keys)[0])] if len(shape(keys)) >= 2 else [keys]
    keys = [asvalue(k) for k in keys]
    if not keys:
        raise ArgumentError("lexsort: needs at least one key")
    if not any(isinstance(k, Tracer) for k in keys):
        return np.lexsort(tuple(np.asarray(k) for k in keys), axis=axis)
    if len({tuple(shape(k)) for k in keys}) != 1:
        raise ShapeError(f"lexsort: all keys need one shape, got {[shape(k) for k in keys]}")
    if len(shape(keys[0])) == 0:
        raise ShapeError("lexsort: keys must be at least 1-d")
    axis = normalize_axis(axis, len(shape(keys[0])), "lexsort")
    order = argsort(keys[0], axis=axis)
    for key in keys[1:]:   # least significant first; each stable sort keeps the earlier order in ties
        order = take_along_axis(order, argsort(take_along_axis(key, order, axis), axis=axis), axis)
    return order


def trim_zeros(filt, trim="fb", axis=None, *, size=None, fill_value=0):
    """filt without its leading ('f') and/or trailing ('b') zeros (numpy.trim_zeros).

    Traced arrays need size=k (1-d only): the first k elements of the trimmed array, padded with
    fill_value. Differentiable in the kept values."""
    filt = asvalue(filt)
    trim = str(trim).lower()
    if not trim or set(trim) - {"f", "b"}:
        raise ArgumentError(f"trim_zeros: trim must be a combination of 'f' and 'b', got {trim!r}")
    if size is None:
        if isinstance(filt, Tracer):
            raise TracingError(f"trim_zeros: how many elements remain depends on the values of the traced array "
                               f"({filt.aval}), and shapes must be known while tracing; pass size=k for exactly "
                               "k results (padded with fill_value)")
        return np.trim_zeros(np.asarray(filt), trim, axis) if axis is not None else np.trim_zeros(
            np.asarray(filt), trim)
    if len(shape(filt)) != 1:
        raise ShapeError(f"trim_zeros: size= is supported for 1-d arrays, got shape {shape(filt)}")
    n, size = shape(filt)[0], int(size)
    if n == 0:
        return np.full((size,), fill_value, dtype(filt))
    nonzero_mask = ew.ne(filt, np.zeros((n,), dtype(filt)))
    positions = np.arange(n, dtype=np.int64)
    start = min_(where(nonzero_mask, positions, n)) if "f" in trim else np.int64(0)
    stop = max_(where(nonzero_mask, positions, -1)) + 1 if "b" in trim else np.int64(n)
    wanted = ew.add(np.arange(size, dtype=np.int64), broadcast_exact(cast(start, np.int64), (size,)))
    inside = ew.lt(wanted, broadcast_exact(cast(stop, np.int64), (size,)))
    picked = take(filt, clip(wanted, 0, n - 1))
    return where(inside, picked, _fill(fill_value, filt))


def digitize(x, bins, right=False):
    """The index of the bin each x falls in (numpy.digitize): bins increasing or decreasing;
    right=True closes the bins on the right. Integer result. With traced bins the direction is read
    from bins[0] <= bins[-1] (NumPy also checks that they are monotonic, which needs their values)."""

    x, bins = asvalue(x), asvalue(bins)
    if len(shape(bins)) != 1:
        raise ShapeError(f"digitize: bins must be 1-d, got shape {shape(bins)}")
    if not isinstance(bins, Tracer) and not isinstance(x, Tracer):
        try:
            return np.digitize(x, bins, right)
        except ValueError as error:
            raise ArgumentError(f"digitize: {error}") from None
    side = "left" if right else "right"
    count = shape(bins)[0]
    increasing = searchsorted(bins, x, side=side)
    if count < 2:
        return increasing
    reversed_bins = take(bins, np.arange(count - 1, -1, -1))
    decreasing = ew.sub(np.full(shape(x), count, np.int64), searchsorted(reversed_bins, x, side=side))
    return where(less_equal(take(bins, 0), take(bins, count - 1)), increasing, decreasing)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """True where an element of `element` equals one of `test_elements` (numpy.isin); the shape of
    `element`. Boolean result; NaN is in nothing."""
    element, tests = asvalue(element), ravel(asvalue(test_elements))
    if shape(tests)[0] == 0:
        found = np.zeros(shape(element), bool)
    else:
        found = any_(ew.eq(*prepare("isin", expand_dims(element, -1), tests)), axis=-1)
    return ew.logical_not(found) if invert else found
