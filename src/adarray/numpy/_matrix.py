"""Matrix structure: diagonal, diag, trace, triu, tril, tri, kron, cross.

Diagonals are gathers with static index arrays and `diag` of a vector is a scatter into zeros, so
their derivatives are gathers and scatters too (no multiplication by 0/1 masks, which would turn
an inf into NaN).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..primitives import indexing, structural
from ._core import asvalue, dtype, normalize_axis, prepare, shape
from ._indexing import getitem
from ._math import multiply, negative, subtract, where
from ._reductions import sum as sum_
from ._shape import moveaxis, ravel, reshape, stack


def _diagonal_indices(rows: int, cols: int, offset: int):
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    positions = np.arange(length, dtype=np.int64)
    return positions + max(-offset, 0), positions + max(offset, 0)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of `a` over axes (axis1, axis2), as a new last axis (numpy.diagonal).

    >>> diagonal(np.arange(9.0).reshape(3, 3), 1)  # doctest: +SKIP
    array([1., 5.])
    """
    a = asvalue(a)
    ndim = len(shape(a))
    if ndim < 2:
        raise ShapeError(f"diagonal: needs at least 2 dimensions, got shape {shape(a)}")
    first, second = normalize_axis(axis1, ndim, "diagonal"), normalize_axis(axis2, ndim, "diagonal")
    if first == second:
        raise ShapeError(f"diagonal: axis1 and axis2 are the same axis ({axis1}, {axis2})")
    moved = moveaxis(a, (first, second), (-2, -1))
    rows, cols = _diagonal_indices(*shape(moved)[-2:], int(offset))
    spec = tuple(("slice", 0, n, 1) for n in shape(moved)[:-2]) + (("array",), ("array",))
    return indexing.gather(moved, spec, [rows, cols])


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):  # noqa: A002 - NumPy's name
    """Sum along a diagonal (numpy.trace)."""
    return sum_(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v, k=0):
    """The k-th diagonal of a 2-d array, or a 2-d array with the 1-d `v` on its k-th diagonal."""
    v = asvalue(v)
    if len(shape(v)) == 2:
        return diagonal(v, k)
    if len(shape(v)) != 1:
        raise ShapeError(f"diag: input must be 1-d or 2-d, got shape {shape(v)}")
    size = shape(v)[0] + abs(int(k))
    rows, cols = _diagonal_indices(size, size, int(k))
    base = np.zeros((size, size), dtype(v))
    return indexing.scatter(base, (("array",), ("array",)), [rows, cols], v, "set")


def diagflat(v, k=0):
    return diag(ravel(v), k)


def tri(n, m=None, k=0, dtype=float):  # noqa: A002 - NumPy's name
    return np.tri(n, m, k, dtype)


def _triangle(m, k, lower: bool, name: str):
    m = asvalue(m)
    if len(shape(m)) < 1:
        raise ShapeError(f"{name}: needs at least 1 dimension, got a scalar")
    if len(shape(m)) == 1:  # NumPy treats a vector as the rows of a square matrix
        m = structural.broadcast_to(m, (shape(m)[0],) + shape(m))
    rows, cols = shape(m)[-2:]
    mask = np.tri(rows, cols, k, dtype=bool)
    if not lower:
        mask = ~np.tri(rows, cols, k - 1, dtype=bool)
    return where(np.broadcast_to(mask, shape(m)), m, np.zeros((), dtype(m)))


def tril(m, k=0):
    """Lower triangle: elements above the k-th diagonal set to zero."""
    return _triangle(m, int(k), True, "tril")


def triu(m, k=0):
    """Upper triangle: elements below the k-th diagonal set to zero."""
    return _triangle(m, int(k), False, "triu")


def kron(a, b):
    """Kronecker product: blocks a[i, j] * b (numpy.kron), any ranks."""
    a, b = asvalue(a), asvalue(b)
    ndim = max(len(shape(a)), len(shape(b)))
    a = reshape(a, (1,) * (ndim - len(shape(a))) + tuple(shape(a)))
    b = reshape(b, (1,) * (ndim - len(shape(b))) + tuple(shape(b)))
    interleaved_a = reshape(a, tuple(v for n in shape(a) for v in (n, 1)))
    interleaved_b = reshape(b, tuple(v for n in shape(b) for v in (1, n)))
    product = multiply(interleaved_a, interleaved_b)
    return reshape(product, tuple(m * n for m, n in zip(shape(a), shape(b))))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or the z component for 2-vectors), broadcast like numpy.cross."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = asvalue(a), asvalue(b)
    a = moveaxis(a, normalize_axis(axisa, len(shape(a)), "cross"), -1)
    b = moveaxis(b, normalize_axis(axisb, len(shape(b)), "cross"), -1)
    na, nb = shape(a)[-1], shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ShapeError(f"cross: vectors must have 2 or 3 components, got shapes {shape(a)} and {shape(b)}")

    def component(x, i, n):
        return getitem(x, (Ellipsis, i)) if i < n else None

    a0, a1, a2 = (component(a, i, na) for i in range(3))
    b0, b1, b2 = (component(b, i, nb) for i in range(3))
    z = subtract(multiply(a0, b1), multiply(a1, b0))
    if na == 2 and nb == 2:
        return prepare("cross", z)[0]
    x = subtract(multiply(a1, b2), multiply(a2, b1)) if a2 is not None and b2 is not None else (
        multiply(a1, b2) if b2 is not None else negative(multiply(a2, b1)))
    y = subtract(multiply(a2, b0), multiply(a0, b2)) if a2 is not None and b2 is not None else (
        negative(multiply(a0, b2)) if b2 is not None else multiply(a2, b0))
    result = stack(prepare("cross", x, y, z), axis=-1)
    return moveaxis(result, -1, normalize_axis(axisc, len(shape(result)), "cross"))
