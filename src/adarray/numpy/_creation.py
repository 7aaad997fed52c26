"""Array creation. Results are concrete NumPy arrays (they become constants when traced)."""
from __future__ import annotations

import numpy as np

from ..tracing import Tracer
from ._core import DEFAULT_FLOAT, asvalue, cast, dtype, shape


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


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    """NumPy's linspace; traced endpoints give start + (stop - start) * k / div, differentiable in both."""
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        return np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    from ._math import add, multiply, subtract
    from ._shape import broadcast_to, concatenate, reshape

    num = int(num)
    if num < 0:
        from ..core.errors import ArgumentError

        raise ArgumentError(f"linspace: num must be non-negative, got {num}")
    start, stop = asvalue(start), asvalue(stop)
    div = num - 1 if endpoint else num
    fractions = np.arange(num, dtype=DEFAULT_FLOAT) / div if div > 0 else np.zeros(num)
    lead = tuple(np.broadcast_shapes(shape(start), shape(stop)))
    fractions = fractions.reshape((num,) + (1,) * len(lead))
    values = add(start, multiply(fractions, subtract(stop, start)))
    if endpoint and num > 1:  # the last point is stop itself, as in NumPy
        values = concatenate([values[:-1], reshape(broadcast_to(stop, lead), (1,) + lead)])
    return values if dtype is None else cast(values, np.dtype(dtype))


def zeros_like(x, dtype=None):
    return np.zeros(shape(asvalue(x)), dtype or _dtype_of(x))


def ones_like(x, dtype=None):
    return np.ones(shape(asvalue(x)), dtype or _dtype_of(x))


def full_like(x, fill_value, dtype=None):
    return np.full(shape(asvalue(x)), fill_value, dtype or _dtype_of(x))


def _dtype_of(x):
    return dtype(asvalue(x))
