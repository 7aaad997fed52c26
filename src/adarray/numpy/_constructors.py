"""More array creation: empty, empty_like, identity, logspace, geomspace, fromfunction, copy.

Arrays made from shapes alone are concrete NumPy arrays (constants in a trace). `empty` and
`empty_like` give zeros: NumPy leaves the memory uninitialised, and a program whose values depend
on leftover memory could not be traced once and rerun. logspace and geomspace take traced end
points (differentiable in them, and in logspace's base); with concrete ones they are NumPy's.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError
from ..tracing import Tracer
from ._core import DEFAULT_FLOAT, asvalue, cast, dtype, float_dtype, holds_tracer, shape
from ._creation import linspace
from ._math import divide, log10, multiply, power, sign, where
from ._shape import expand_dims, moveaxis, reshape


def empty(shape, dtype=DEFAULT_FLOAT, order="C", *, like=None):
    """An array of the given shape, filled with zeros (NumPy leaves it uninitialised)."""
    return np.zeros(shape, dtype, order=order)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None):
    """Zeros with the shape and dtype of `prototype` (or the given ones)."""
    prototype = asvalue(prototype)
    return np.zeros(_shape_of(prototype) if shape is None else shape, dtype or _dtype_of(prototype))


def _shape_of(value):
    return shape(value)


def _dtype_of(value):
    return dtype(value)


def identity(n, dtype=None, *, like=None):
    """The n x n identity matrix (float64 by default)."""
    return np.identity(n, dtype or DEFAULT_FLOAT)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, num): `num` values spaced evenly on a log scale (numpy.logspace).
    Differentiable in start, stop and base when they are traced."""
    if not holds_tracer([start, stop, base]):
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    start, stop, base = asvalue(start), asvalue(stop), asvalue(base)
    if len(shape(base)):
        ndim = len(np.broadcast_shapes(shape(start), shape(stop), shape(base)))
        base = expand_dims(_at_least(base, ndim), axis)
        start, stop = _at_least(start, ndim), _at_least(stop, ndim)
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    values = power(base, y)
    return values if dtype is None else cast(values, np.dtype(dtype))


def _at_least(value, ndim):
    missing = ndim - len(shape(value))
    return reshape(value, (1,) * missing + tuple(shape(value))) if missing > 0 else value


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """`num` values in geometric progression from start to stop (numpy.geomspace), the end points
    exactly start and stop. Both must be nonzero and of one sign. Differentiable in traced end points."""
    if not holds_tracer([start, stop]):
        return np.geomspace(start, stop, num, endpoint, dtype, axis)
    start, stop = asvalue(start), asvalue(stop)
    compute = float_dtype(start, stop)
    start, stop = cast(start, compute), cast(stop, compute)
    num = int(num)
    if num < 0:
        raise ArgumentError(f"geomspace: the number of samples must be non-negative, got {num}")
    out_sign = sign(start)   # NumPy's formula: rotate to positive, logspace in base 10, rotate back
    positive_start, positive_stop = divide(start, out_sign), divide(stop, out_sign)
    exponents = linspace(log10(positive_start), log10(positive_stop), num=num, endpoint=endpoint)
    values = power(10.0, exponents)
    steps = np.arange(num).reshape((-1,) + (1,) * len(shape(values)[1:]))
    if num > 0:
        values = where(steps == 0, positive_start, values)
        if num > 1 and endpoint:
            values = where(steps == num - 1, positive_stop, values)
    values = moveaxis(multiply(values, out_sign), 0, axis)
    return values if dtype is None else cast(values, np.dtype(dtype))


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """function(*indices(shape, dtype)): the function gets one coordinate array per axis
    (numpy.fromfunction); it may use adarray functions and traced values."""
    return function(*np.indices(shape, dtype=dtype), **kwargs)


def copy(a, order="K", subok=False):
    """A copy of `a` (a traced value is returned as it is: traced values are never written into)."""
    a = asvalue(a)
    return a if isinstance(a, Tracer) else np.array(a, copy=True, order=order)

