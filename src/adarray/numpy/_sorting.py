"""Sorting, searching and value-dependent sizes: sort, argsort, partition, searchsorted, unique,
nonzero, argwhere, flatnonzero (count_nonzero, a sum, is in _reductions.py).

`sort` is a gather along the stable argsort, so its derivative follows the permutation (tied
elements keep their order, each its own derivative). Functions whose output size depends on the
values (unique, nonzero, one-argument where) work on concrete arrays as in NumPy; on traced values
they need `size=` (JAX's convention): exactly `size` results, cut or padded with `fill_value`.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError, TracingError
from ..primitives import elementwise as ew
from ..primitives import indexing, structural
from ..primitives import scan as scans
from ..primitives import sort as sorting
from ..tracing import Tracer
from ._core import asvalue, cast, dtype, normalize_axis, result_dtype, shape
from ._indexing import take_along_axis
from ._shape import concatenate, reshape, stack


def _flat_or_axis(x, axis, name):
    x = asvalue(x)
    if axis is None:
        return reshape(x, -1), 0
    return x, normalize_axis(axis, len(shape(x)), name)


def argsort(x, axis=-1, kind=None, order=None, *, stable=None):
    """The stable sorting permutation along `axis` (every `kind` sorts stably; NaNs last)."""
    if order is not None:
        raise ShapeError("argsort: order= (structured arrays) is not supported")
    x, axis = _flat_or_axis(x, axis, "argsort")
    if len(shape(x)) == 0:
        return np.zeros((), np.int64)
    return sorting.argsort(x, axis)


def sort(x, axis=-1, kind=None, order=None, *, stable=None):
    """Sorted along `axis` (NaNs last). Differentiable: each output element's derivative is that of
    the input element it came from; ties keep their original order (a stable sort).

    >>> sort(np.array([3.0, 1.0, 2.0]))  # doctest: +SKIP
    array([1., 2., 3.])
    """
    x, axis = _flat_or_axis(x, axis, "sort")
    if len(shape(x)) == 0:
        return x
    return take_along_axis(x, sorting.argsort(x, axis), axis)


def partition(x, kth, axis=-1):
    """An array with the k-th element in its sorted place, smaller ones before and larger after.
    NumPy leaves the order within each side unspecified; here both sides are sorted (a full sort)."""
    return sort(x, axis)


def argpartition(x, kth, axis=-1):
    """Indices that partition x (see partition): here the full stable sorting permutation."""
    return argsort(x, axis)


def searchsorted(a, v, side="left", sorter=None):
    """Indices where the values v would be inserted into the sorted 1-d `a` (integer output)."""
    a, v = asvalue(a), asvalue(v)
    if len(shape(a)) != 1:
        raise ShapeError(f"searchsorted: a must be 1-d, got shape {shape(a)}")
    if side not in ("left", "right"):
        raise ShapeError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        a = indexing.gather(a, (("array",),), [asvalue(sorter)])
    target = result_dtype(a, v)
    flat = reshape(cast(v, target), (1, -1))
    positions = sorting.searchsorted(reshape(cast(a, target), (1, -1)), flat, side)
    return reshape(positions, shape(v))


def _need_size(name, x, what):
    raise TracingError(
        f"{name}: the number of {what} depends on the values of the traced array ({x.aval}), and shapes "
        f"must be known while tracing; pass size=k for exactly k results (cut, or padded with fill_value)"
    )


def _slots(mask, size):
    """For each True of a 1-d mask, its rank among the Trues, or `size` (a dump slot) if not kept."""
    ranks = ew.sub(scans.cumsum(cast(mask, np.int64), 0), np.ones(shape(mask), np.int64))
    keep = ew.logical_and(mask, ew.lt(ranks, np.full(shape(mask), size, np.int64)))
    return ew.select(keep, ranks, np.full(shape(mask), size, np.int64))


def _compact(values, slots, size, fill):
    """values[k] placed at slots[k] in a length-`size` array filled with `fill` (slot `size` dropped)."""
    base = structural.broadcast_to(cast(fill, dtype(values)), (size + 1,))
    placed = indexing.scatter(base, (("array",),), [slots], values, "set")
    return structural.slice_array(placed, (0,), (size,), (1,))


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one array per axis (numpy.nonzero). On traced values pass
    `size`: the first `size` indices, padded with `fill_value` (0 by default; a tuple gives one per
    axis)."""
    a = asvalue(a)
    if size is None:
        if isinstance(a, Tracer):
            _need_size("nonzero", a, "nonzero elements")
        return np.nonzero(np.atleast_1d(a))
    size = int(size)
    dims = shape(a) or (1,)
    flat = reshape(a, -1)
    count = shape(flat)[0]
    mask = flat if dtype(flat) == np.bool_ else ew.ne(flat, np.zeros((count,), dtype(flat)))
    positions = _compact(np.arange(count, dtype=np.int64), _slots(mask, size), size, np.int64(-1))
    found = ew.ge(positions, np.zeros((size,), np.int64))
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value] * len(dims)
    if len(fills) != len(dims):
        raise ShapeError(f"nonzero: {len(fills)} fill values for an array of {len(dims)} dimensions")
    coordinates = []
    for stride, extent, fill in zip(_strides(dims), dims, fills):
        padding = np.full((size,), 0 if fill is None else fill, np.int64)
        coordinates.append(ew.select(found, _coordinate(positions, stride, extent), padding))
    return tuple(coordinates)


def _strides(dims):
    strides, step = [], 1
    for extent in reversed(dims):
        strides.append(step)
        step *= extent
    return list(reversed(strides))


def _coordinate(positions, stride, extent):
    quotient = ew.floor_divide(positions, np.full(shape(positions), stride, np.int64))
    return ew.sub(quotient, ew.mul(ew.floor_divide(quotient, np.full(shape(positions), extent, np.int64)),
                                   np.full(shape(positions), extent, np.int64)))


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements of the flattened array."""
    return nonzero(reshape(asvalue(a), -1), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one row per element (numpy.argwhere)."""
    a = asvalue(a)
    if len(shape(a)) == 0 and size is None and not isinstance(a, Tracer):
        return np.argwhere(a)

    return stack(nonzero(a, size=size, fill_value=fill_value), axis=-1)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           size=None, fill_value=None):
    """The sorted unique values (numpy.unique), optionally with first indices, inverse and counts.

    On traced values pass `size`: the `size` smallest unique values, padded with `fill_value`
    (default: the smallest value); indices and counts are padded with 0. Differentiable in the
    values: each unique value's derivative is that of its first occurrence.
    """
    ar = asvalue(ar)
    if size is None:
        if isinstance(ar, Tracer):
            _need_size("unique", ar, "unique values")
        return np.unique(ar, return_index, return_inverse, return_counts, axis=axis, equal_nan=equal_nan)
    if axis is not None:
        raise ShapeError("unique: axis= together with size= is not supported; flatten first")
    size = int(size)
    flat = reshape(ar, -1)
    n = shape(flat)[0]
    if n == 0:
        raise ShapeError("unique: size= needs a non-empty array (its smallest value is the default fill)")
    order = sorting.argsort(flat, 0)
    ordered = indexing.gather(flat, (("array",),), [order])
    previous = structural.slice_array(ordered, (0,), (n - 1,), (1,))
    following = structural.slice_array(ordered, (1,), (n,), (1,))
    differs = ew.ne(following, previous)
    if equal_nan and np.issubdtype(dtype(flat), np.floating):
        both_nan = ew.logical_and(ew.ne(following, following), ew.ne(previous, previous))
        differs = ew.logical_and(differs, ew.logical_not(both_nan))
    starts = concatenate([np.ones(1, bool), differs], 0)
    slots = _slots(starts, size)
    fill = structural.slice_array(ordered, (0,), (1,), (1,)) if fill_value is None else fill_value
    values = _compact(ordered, slots, size, reshape(fill, ()) if fill_value is None else fill)
    results = [values]
    group = ew.sub(scans.cumsum(cast(starts, np.int64), 0), np.ones((n,), np.int64))
    if return_index:
        results.append(_compact(order, slots, size, np.int64(0)))
    if return_inverse:
        inverse = indexing.scatter(np.zeros(n, np.int64), (("array",),), [order], group, "set")
        results.append(reshape(inverse, shape(ar)))
    if return_counts:
        counted = indexing.scatter(np.zeros(size + 1, np.int64), (("array",),),
                                   [ew.select(ew.lt(group, np.full((n,), size, np.int64)), group,
                                              np.full((n,), size, np.int64))], np.ones(n, np.int64), "add")
        results.append(structural.slice_array(counted, (0,), (size,), (1,)))
    return results[0] if len(results) == 1 else tuple(results)
