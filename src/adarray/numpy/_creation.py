"""Array creation. Results are concrete NumPy arrays (they become constants when traced)."""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..tracing import Tracer
from ._core import DEFAULT_FLOAT, asvalue, cast, dtype, float_dtype, holds_tracer, shape
from ._math import add, divide, floor, multiply, subtract, where
from ._shape import moveaxis


def array(value, dtype=None):
    value = asvalue(value)
    if dtype is None:
        return value if isinstance(value, Tracer) else np.array(value)
    return cast(value, np.dtype(dtype))


def asarray(value, dtype=None):
    value = asvalue(value)
    return value if dtype is None else cast(value, np.dtype(dtype))


def zeros(shape, dtype=DEFAULT_FLOAT):
    return np.zeros(shape, dtype)


def ones(shape, dtype=DEFAULT_FLOAT):
    return np.ones(shape, dtype)


def full(shape, fill_value, dtype=None):
    return np.full(shape, fill_value, dtype)


def eye(n, m=None, k=0, dtype=DEFAULT_FLOAT):
    return np.eye(n, m, k, dtype)


def arange(*args, dtype=None):
    return np.arange(*args, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """`num` evenly spaced values from start to stop (numpy.linspace); traced start or stop give a
    traced result, differentiable in both: start + k * (stop - start) / (num - 1), the last value
    exactly stop (NumPy's formula, so values match it)."""
    if not holds_tracer([start, stop]):
        return np.linspace(start, stop, int(num), endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis)

    num = int(num)
    if num < 0:
        raise ShapeError(f"linspace: the number of samples must be non-negative, got {num}")
    start, stop = asvalue(start), asvalue(stop)
    compute = float_dtype(start, stop)
    start, stop = cast(start, compute), cast(stop, compute)
    delta = subtract(stop, start)
    steps = np.arange(num, dtype=compute).reshape((-1,) + (1,) * len(shape(delta)))
    div = num - 1 if endpoint else num
    step = divide(delta, float(div)) if div > 0 else np.nan
    values = add(multiply(steps, step if div > 0 else delta), start)
    if endpoint and num > 1:
        last = np.arange(num).reshape(steps.shape) == num - 1
        values = where(last, stop, values)
    values = moveaxis(values, 0, axis)
    if dtype is not None and np.issubdtype(np.dtype(dtype), np.integer):
        values = floor(values)
    if dtype is not None:
        values = cast(values, np.dtype(dtype))
    return (values, step) if retstep else values


def zeros_like(x, dtype=None):
    return np.zeros(shape(asvalue(x)), dtype or _dtype_of(x))


def ones_like(x, dtype=None):
    return np.ones(shape(asvalue(x)), dtype or _dtype_of(x))


def full_like(x, fill_value, dtype=None):
    return np.full(shape(asvalue(x)), fill_value, dtype or _dtype_of(x))


def _dtype_of(x):
    return dtype(asvalue(x))
