"""Index helpers: mgrid, ogrid, indices, ix_, unravel_index, ravel_multi_index, tril_indices,
triu_indices, diag_indices (and their *_from forms).

Their results are integer arrays, never differentiated. Grids and triangle or diagonal indices
depend on shapes only, so they are concrete NumPy arrays even inside a trace. unravel_index,
ravel_multi_index and ix_ also take traced indices: out-of-range traced indices cannot raise (their
values are unknown while tracing), so unravel_index clips them into [-size, size) and wraps the
negative ones, as JAX does, and ravel_multi_index asks for mode='wrap' or mode='clip'.

    >>> unravel_index(np.array([5, 1]), (2, 3))  # doctest: +SKIP
    (array([1, 0]), array([2, 1]))
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError, IndexOutOfRangeError, TracingError
from ..primitives import elementwise as ew
from ..tracing import Tracer
from ._array import wrap
from ._core import asvalue, cast, dtype, holds_tracer, shape
from ._math import add, clip, multiply, remainder
from ._shape import reshape


class _Grid:
    """mgrid / ogrid: index with slices, e.g. mgrid[0:3, 0:1:5j] (concrete bounds)."""

    def __init__(self, grid, name):
        self._grid, self.__name__ = grid, name

    def __getitem__(self, key):
        return wrap(self._grid[key])

    def __repr__(self) -> str:
        return f"adarray.numpy.{self.__name__}"


mgrid = _Grid(np.mgrid, "mgrid")
ogrid = _Grid(np.ogrid, "ogrid")


def indices(dimensions, dtype=int, sparse=False):
    """One array per axis holding that axis's coordinate (numpy.indices)."""
    return np.indices(dimensions, dtype=dtype, sparse=sparse)


def ix_(*args):
    """Open-mesh index arrays from 1-d sequences: the k-th of n has shape (1, .., len, .., 1)."""
    if not holds_tracer(list(args)):
        return np.ix_(*args)
    out = []
    for k, sequence in enumerate(args):
        sequence = asvalue(sequence)
        if len(shape(sequence)) != 1:
            raise ArgumentError(f"ix_: every sequence must be 1-d, argument {k} has shape {shape(sequence)}")
        if isinstance(sequence, Tracer) and dtype(sequence) == np.bool_:
            raise TracingError("ix_: a traced boolean mask gives index arrays whose length depends on its "
                               f"values ({sequence.aval}); pass integer indices")
        out.append(reshape(sequence, (1,) * k + (-1,) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def _sizes(dims, name):
    dims = (dims,) if np.ndim(dims) == 0 else tuple(dims)
    if any(int(d) < 0 for d in dims):
        raise ArgumentError(f"{name}: dimensions must be non-negative, got {dims}")
    return tuple(int(d) for d in dims)


def _strides(dims, order, name):
    if order not in ("C", "F"):
        raise ArgumentError(f"{name}: order must be 'C' or 'F', got {order!r}")
    axes = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    strides, step = [0] * len(dims), 1
    for axis in axes:
        strides[axis] = step
        step *= dims[axis]
    return strides


def unravel_index(indices, shape, order="C"):
    """The coordinates, one array per axis, of flat indices into an array of `shape`.

    Concrete indices out of range raise IndexOutOfRangeError, as NumPy's ValueError; traced ones are
    clipped into [-size, size) and negative ones counted from the end (JAX's convention)."""
    dims = _sizes(shape, "unravel_index")
    indices = asvalue(indices)
    if not np.issubdtype(dtype(indices), np.integer):
        raise ArgumentError(f"unravel_index: indices must be integers, got {dtype(indices)}")
    if not isinstance(indices, Tracer):
        try:
            return np.unravel_index(indices, dims, order=order)
        except ValueError as error:
            raise IndexOutOfRangeError(f"unravel_index: {error}") from None
    size = int(np.prod(dims))
    if size == 0:
        raise IndexOutOfRangeError(f"unravel_index: cannot unravel into the empty shape {dims}")
    flat = cast(indices, np.int64)

    def full(value):
        return np.full(flat.shape, value, np.int64)

    flat = ew.minimum(ew.maximum(flat, full(-size)), full(size - 1))
    flat = ew.select(ew.lt(flat, full(0)), ew.add(flat, full(size)), flat)
    coordinates = []
    for extent, stride in zip(dims, _strides(dims, order, "unravel_index")):
        quotient = ew.floor_divide(flat, full(stride))
        coordinates.append(ew.sub(quotient, ew.mul(ew.floor_divide(quotient, full(extent)), full(extent))))
    return tuple(cast(c, dtype(indices)) if dtype(indices) != np.int64 else c for c in coordinates)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of coordinate arrays (one per axis) into an array of shape `dims`.

    mode 'raise' (concrete coordinates only: out-of-range raises), 'wrap' (modulo the axis) or
    'clip' (into the axis); a tuple gives one mode per axis."""
    dims = _sizes(dims, "ravel_multi_index")
    if len(multi_index) != len(dims):
        raise ArgumentError(f"ravel_multi_index: {len(multi_index)} coordinate arrays for {len(dims)} dimensions")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if not holds_tracer(list(multi_index)):
        try:
            return np.ravel_multi_index(tuple(np.asarray(c) for c in multi_index), dims, mode=modes, order=order)
        except ValueError as error:
            raise IndexOutOfRangeError(f"ravel_multi_index: {error}") from None
    if "raise" in modes:
        raise TracingError("ravel_multi_index: mode='raise' needs concrete coordinates (traced ones cannot be "
                           "checked while tracing); pass mode='wrap' or mode='clip'")

    total = 0
    for coordinate, extent, stride, axis_mode in zip(multi_index, dims, _strides(dims, order, "ravel_multi_index"),
                                                      modes):
        coordinate = asvalue(coordinate)
        if not np.issubdtype(dtype(coordinate), np.integer):
            raise ArgumentError(f"ravel_multi_index: coordinates must be integers, got {dtype(coordinate)}")
        if axis_mode == "wrap":
            coordinate = remainder(coordinate, extent)
        elif axis_mode == "clip":
            coordinate = clip(coordinate, 0, extent - 1)
        else:
            raise ArgumentError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', got {axis_mode!r}")
        total = add(total, multiply(cast(coordinate, np.int64), stride))
    return total


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle of an (n, m) array (numpy.tril_indices)."""
    return np.tril_indices(n, k, m)


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle of an (n, m) array (numpy.triu_indices)."""
    return np.triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an n x ... x n array (numpy.diag_indices)."""
    return np.diag_indices(n, ndim)


def _matrix_shape(arr, name):
    dims = shape(asvalue(arr))
    if len(dims) != 2:
        raise ArgumentError(f"{name}: needs a 2-d array, got shape {dims}")
    return dims


def tril_indices_from(arr, k=0):
    """tril_indices for the shape of a 2-d array (traced or not)."""
    rows, cols = _matrix_shape(arr, "tril_indices_from")
    return np.tril_indices(rows, k, cols)


def triu_indices_from(arr, k=0):
    """triu_indices for the shape of a 2-d array (traced or not)."""
    rows, cols = _matrix_shape(arr, "triu_indices_from")
    return np.triu_indices(rows, k, cols)


def diag_indices_from(arr):
    """diag_indices for an array whose axes all have one length."""
    dims = shape(asvalue(arr))
    if len(dims) < 2 or len(set(dims)) != 1:
        raise ArgumentError(f"diag_indices_from: needs at least 2 axes, all of one length; got shape {dims}")
    return np.diag_indices(dims[0], len(dims))
