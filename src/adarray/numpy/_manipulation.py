"""Rearranging arrays: roll, pad, append, insert, delete, array_split and the h/v/d splits,
flipud, fliplr, rot90, meshgrid, and the index tricks r_ and c_.

Where NumPy's rule for which element goes where is intricate (insert, delete, the reflecting pads),
NumPy itself computes it, once, on an array of element ids; the result is one gather with those
static indices, so values, shapes and broadcasting are NumPy's and the derivative is a scatter-add.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError, TracingError, UnsupportedError
from ..primitives import indexing
from ..tracing import Tracer
from ._array import wrap
from ._core import asvalue, cast, dtype, holds_tracer, normalize_axis, result_dtype, shape
from ._creation import arange, linspace
from ._indexing import getitem, take
from ._shape import (
    broadcast_arrays,
    broadcast_to,
    concatenate,
    flip,
    ravel,
    reshape,
    split,
    transpose,
    window,
)


def _window(x, axis, start, stop):
    return window(x, axis, start, stop)


def _static(obj, name):
    if holds_tracer(obj) or isinstance(obj, Tracer):
        raise TracingError(f"{name}: the positions must be concrete (a traced position changes the shape); "
                           "use x.at[i].set(v) or anp.where for traced positions")
    return obj


def _gather_ids(source, ids):
    """source.ravel()[ids] for a static integer array `ids` of any shape."""
    return indexing.gather(ravel(source), (("array",),), [np.asarray(ids, np.int64)])


def roll(a, shift, axis=None):
    """Elements shifted by `shift` along `axis`, wrapping around (numpy.roll); two slices and a join."""
    a = asvalue(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), shape(a))
    shifts, axes = np.broadcast_arrays(np.asarray(_static(shift, "roll")), np.asarray(axis))
    total = {}
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        ax = normalize_axis(int(ax), len(shape(a)), "roll")
        total[ax] = total.get(ax, 0) + int(s)
    for ax, s in total.items():
        n = shape(a)[ax]
        if n and s % n:
            cut = n - s % n
            a = concatenate([_window(a, ax, cut, n), _window(a, ax, 0, cut)], ax)
    return a


_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad every axis (numpy.pad) in the modes constant (constant_values), edge, reflect, symmetric,
    wrap and empty (zeros here). Index modes are one gather per axis with NumPy's own index map."""
    x = asvalue(array)
    ndim = len(shape(x))
    try:
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    except ValueError:
        raise ShapeError(f"pad: pad_width {pad_width!r} does not fit an array of shape {shape(x)}") from None
    if np.any(widths < 0):
        raise ShapeError(f"pad: pad widths must be non-negative, got {pad_width!r}")
    if callable(mode) or mode not in ("constant", "empty", *_INDEX_MODES):
        raise UnsupportedError(f"pad: mode {mode!r} is not supported; supported: constant, empty, "
                               f"{', '.join(_INDEX_MODES)}")
    if kwargs.get("reflect_type", "even") != "even":
        raise UnsupportedError("pad: only reflect_type='even' is supported")
    unknown = set(kwargs) - {"constant_values", "reflect_type"}
    if unknown:
        raise ShapeError(f"pad: unexpected keyword arguments {sorted(unknown)} for mode {mode!r}")
    if mode in _INDEX_MODES:
        for ax in range(ndim):
            before, after = (int(w) for w in widths[ax])
            if before or after:
                if shape(x)[ax] == 0:
                    raise ShapeError(f"pad: cannot pad the empty axis {ax} of shape {shape(x)} in mode {mode!r}")
                ids = np.pad(np.arange(shape(x)[ax]), (before, after), mode=mode)
                x = take(x, ids, axis=ax)
        return x
    values = kwargs.get("constant_values", 0) if mode == "constant" else 0
    for ax in range(ndim):
        before, after = (int(w) for w in widths[ax])
        pieces = [x]
        for side, width in ((0, before), (1, after)):
            if width:
                fill = _pad_value(values, ax, side, ndim)
                block = tuple(width if i == ax else n for i, n in enumerate(shape(x)))
                piece = broadcast_to(cast(fill, dtype(x)), block)
                pieces.insert(0 if side == 0 else len(pieces), piece)
        if len(pieces) > 1:
            x = concatenate(pieces, ax)
    return x


def _pad_value(values, axis, side, ndim):
    """The constant for one side of one axis, from a scalar, (before, after) or ((b0, a0), ...)."""
    value = asvalue(values)
    if len(shape(value)) == 0:
        return value
    try:
        table = broadcast_to(value, (ndim, 2))
    except ShapeError:
        raise ShapeError(f"pad: constant_values of shape {shape(value)} do not fit {ndim} axes") from None
    return getitem(table, (axis, side))


def append(arr, values, axis=None):
    """arr with values joined at the end: flattened when axis is None (numpy.append)."""
    arr, values = asvalue(arr), asvalue(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def insert(arr, obj, values, axis=None):
    """Values inserted before the static index or indices `obj` along `axis` (numpy.insert)."""
    arr, values = asvalue(arr), asvalue(values)
    obj = _static(obj, "insert")
    values = cast(values, dtype(arr))
    size = int(np.prod(shape(arr), dtype=np.int64))
    ids = np.arange(size, dtype=np.int64).reshape(shape(arr))
    value_ids = -1 - np.arange(int(np.prod(shape(values), dtype=np.int64)), dtype=np.int64).reshape(shape(values))
    try:
        placed = np.insert(ids, obj, value_ids, axis=axis)
    except (ValueError, IndexError, TypeError) as error:
        raise ShapeError(f"insert: {error} (array {shape(arr)}, values {shape(values)}, obj {obj!r})") from None
    source = concatenate([ravel(arr), ravel(values)], 0)
    return _gather_ids(source, np.where(placed >= 0, placed, size - 1 - placed))


def delete(arr, obj, axis=None):
    """arr without the entries at the static index, indices or slice `obj` along `axis` (numpy.delete)."""
    arr = asvalue(arr)
    obj = _static(obj, "delete")
    ids = np.arange(int(np.prod(shape(arr), dtype=np.int64)), dtype=np.int64).reshape(shape(arr))
    try:
        kept = np.delete(ids, obj, axis=axis)
    except (ValueError, IndexError, TypeError) as error:
        raise ShapeError(f"delete: {error} (array {shape(arr)}, obj {obj!r})") from None
    return _gather_ids(arr, kept)


def array_split(ary, indices_or_sections, axis=0):
    """Split into sections that may differ in length by one (the first ones longer), or at indices."""
    ary = asvalue(ary)
    axis = normalize_axis(axis, len(shape(ary)), "array_split")
    if not isinstance(indices_or_sections, (int, np.integer)):
        return split(ary, indices_or_sections, axis)
    sections = int(indices_or_sections)
    if sections <= 0:
        raise ShapeError(f"array_split: the number of sections must be positive, got {sections}")
    each, extras = divmod(shape(ary)[axis], sections)
    sizes = [each + 1] * extras + [each] * (sections - extras)
    bounds = np.cumsum([0] + sizes)
    return [_window(ary, axis, int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def hsplit(ary, indices_or_sections):
    """Split along the second axis (the first for 1-d arrays)."""
    ary = asvalue(ary)
    if len(shape(ary)) == 0:
        raise ShapeError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if len(shape(ary)) > 1 else 0)


def vsplit(ary, indices_or_sections):
    """Split along the first axis of an array of at least 2 dimensions."""
    ary = asvalue(ary)
    if len(shape(ary)) < 2:
        raise ShapeError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """Split along the third axis of an array of at least 3 dimensions."""
    ary = asvalue(ary)
    if len(shape(ary)) < 3:
        raise ShapeError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


def flipud(m):
    """Reverse the first axis."""
    m = asvalue(m)
    if len(shape(m)) < 1:
        raise ShapeError("flipud: needs an array of at least 1 dimension")
    return flip(m, 0)


def fliplr(m):
    """Reverse the second axis."""
    m = asvalue(m)
    if len(shape(m)) < 2:
        raise ShapeError("fliplr: needs an array of at least 2 dimensions")
    return flip(m, 1)


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees k times in the plane of `axes`, from the first axis towards the second."""
    m = asvalue(m)
    ndim = len(shape(m))
    if len(axes) != 2 or ndim < 2:
        raise ShapeError(f"rot90: needs two axes of an array of at least 2 dimensions, got {axes} and {shape(m)}")
    first, second = (normalize_axis(a, ndim, "rot90") for a in axes)
    if first == second:
        raise ShapeError(f"rot90: the axes must differ, got {axes}")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, first), second)
    order = list(range(ndim))
    order[first], order[second] = order[second], order[first]
    return transpose(flip(m, second), order) if k == 1 else flip(transpose(m, order), second)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from coordinate vectors (numpy.meshgrid), 'xy' or 'ij' indexing."""
    if indexing not in ("xy", "ij"):
        raise ShapeError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ndim = len(xi)
    ones = (1,) * ndim
    output = [reshape(asvalue(x), ones[:i] + (-1,) + ones[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:
        output[0] = reshape(output[0], (1, -1) + ones[2:])
        output[1] = reshape(output[1], (-1, 1) + ones[2:])
    if not sparse:
        output = broadcast_arrays(*output)
    return tuple(output)


class _Concatenator:
    """r_ and c_: `anp.r_[1:4, 0, x]` joins aranges (slices; a complex step is a linspace count),
    scalars and arrays along the first axis; `anp.c_[x, y]` stacks 1-d arrays as columns."""

    def __init__(self, columns: bool):
        self.columns = columns

    def __getitem__(self, key):

        if not isinstance(key, tuple):
            key = (key,)
        items = []
        for item in key:
            if isinstance(item, str):
                raise UnsupportedError(f"{self._name()}: directive strings such as {item!r} are not supported; "
                                       "use anp.concatenate / anp.stack with an axis")
            if isinstance(item, slice):
                start = 0 if item.start is None else item.start
                if isinstance(item.step, complex):
                    items.append(linspace(start, item.stop, int(abs(item.step))))
                else:
                    items.append(arange(start, item.stop, 1 if item.step is None else item.step))
            else:
                items.append(item)
        if not items:
            return np.zeros(0)
        target = result_dtype(*[i for i in items])
        arrays = [cast(asvalue(i), target) for i in items]
        if self.columns:
            arrays = [reshape(a, (-1, 1)) if len(shape(a)) < 2 else a for a in arrays]
            return wrap(concatenate(arrays, -1))
        arrays = [reshape(a, (1,)) if len(shape(a)) == 0 else a for a in arrays]
        return wrap(concatenate(arrays, 0))

    def _name(self):
        return "c_" if self.columns else "r_"

    def __len__(self):
        return 0


r_ = _Concatenator(columns=False)
c_ = _Concatenator(columns=True)
