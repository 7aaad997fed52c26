"""Shared machinery of adarray.numpy: values, dtype promotion, broadcasting, axes.

A value is a Tracer, a NumPy array or scalar, a Python scalar or a nested list.
Python scalars are weakly typed as in NumPy 2 (float32 array * 2.0 stays float32).
"""
from __future__ import annotations

import warnings

import numpy as np

from ..core.errors import IndexOutOfRangeError, ShapeError
from ..core.precision import narrow, narrow_dtype
from ..core.types import Aval
from ..primitives import elementwise as ew
from ..primitives import structural
from ..primitives.structural import broadcast_to as broadcast_exact
from ..tracing import Tracer

DEFAULT_FLOAT = np.dtype(np.float64)


def is_python_scalar(value) -> bool:
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def aval(value) -> Aval:
    if isinstance(value, Tracer):
        return value.aval
    array = np.asarray(value)
    return Aval(array.shape, array.dtype)


def shape(value) -> tuple[int, ...]:
    return value.shape if isinstance(value, Tracer) else np.shape(value)


def dtype(value) -> np.dtype:
    return value.dtype if isinstance(value, Tracer) else np.asarray(value).dtype


def asvalue(value):
    """Tracers stay tracers; anything else becomes a NumPy array (lists included)."""
    if isinstance(value, Tracer):
        return value
    if isinstance(value, (list, tuple)) and holds_tracer(value):
        return stack_nested(value)
    return narrow(np.asarray(value))   # longdouble -> float64 (core/precision.py)


def holds_tracer(value) -> bool:
    """True if a tracer is `value` or sits anywhere in its nested lists and tuples."""
    if isinstance(value, (list, tuple)):
        return any(holds_tracer(v) for v in value)
    return isinstance(value, Tracer)


def result_dtype(*values) -> np.dtype:
    """NumPy 2 promotion with weak Python scalars."""
    parts = [v if is_python_scalar(v) else dtype(v) for v in values]
    return np.result_type(*parts)


def float_dtype(*values) -> np.dtype:
    """The floating dtype an operation on `values` computes in: ints and bools -> float64; real and
    complex floating dtypes stay (a complex value is never cast to real)."""
    common = result_dtype(*values)
    return common if np.issubdtype(common, np.inexact) else DEFAULT_FLOAT


def broadcast_shapes(op: str, *shapes) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(
            f"{op}: operands could not be broadcast together with shapes "
            + " ".join(str(tuple(s)) for s in shapes)
        ) from None


def cast(value, target_dtype):
    """Convert a value to `target_dtype` (Python scalars become 0-d arrays). Complex to real (an explicit
    astype) keeps the real part with NumPy's ComplexWarning: never silently."""
    if is_python_scalar(value):
        return np.asarray(value, narrow_dtype(target_dtype))
    value = asvalue(value)
    target = narrow_dtype(target_dtype)
    if dtype(value).kind == "c" and target.kind in "fiu":
        warnings.warn(f"casting {dtype(value)} to {target} discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=3)
    return ew.convert(value, target)


def prepare(op: str, *values, dtype=None):
    """Promote to one dtype (or `dtype`) and broadcast to one shape."""
    if dtype is None:
        ready = _prepared_already(values)
        if ready is not None:
            return ready
    values = [v if is_python_scalar(v) else asvalue(v) for v in values]
    target = np.dtype(dtype) if dtype is not None else result_dtype(*values)
    out_shape = broadcast_shapes(op, *[np.shape(v) if is_python_scalar(v) else shape(v) for v in values])
    return [_broadcast_constant(v, target, out_shape) if _is_constant_scalar(v, target) else
            broadcast_exact(cast(v, target), out_shape) for v in values]


def _prepared_already(values):
    """Tracing's common cases, without the promotion machinery: traced operands of one type, with Python
    numbers beside a floating-point one (which take its dtype, as NumPy 2's weak scalars do). None otherwise."""
    common = None
    for value in values:
        if type(value) is Tracer:
            if common is None:
                common = value.aval
            elif value.aval != common:
                return None
        elif type(value) not in (int, float):
            return None
    if common is None:
        return None
    if all(type(value) is Tracer for value in values):
        return list(values)
    if common.dtype.kind != "f":
        return None
    return [value if type(value) is Tracer else np.broadcast_to(np.asarray(value, common.dtype), common.shape)
            for value in values]


def _is_constant_scalar(value, target) -> bool:
    return is_python_scalar(value) or (isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype == target)


def _broadcast_constant(value, target, out_shape):
    """A scalar constant broadcast without staging an equation (zero-strided: the literal of a
    constant-filled array, as the traced broadcast would fold to; tracing stays cheap)."""
    return np.broadcast_to(np.asarray(value, target), out_shape)


def normalize_axis(axis: int, ndim: int, op: str) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise IndexOutOfRangeError(f"{op}: axis {axis} is out of range for an array of {ndim} dimensions")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int, op: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(int(a), ndim, op) for a in axis)
        if len(set(axes)) != len(axes):
            raise ShapeError(f"{op}: repeated axis in {axis}")
        return axes
    return (normalize_axis(int(axis), ndim, op),)


def stack_nested(value):
    """An array from nested lists and tuples that hold tracers, floats and arrays, e.g.
    ``[[t, 1.0], [2.0, t]]``: the leaves are promoted to one dtype and stacked level by level."""
    leaves = []

    def collect(item):
        if isinstance(item, (list, tuple)):
            for v in item:
                collect(v)
        else:
            leaves.append(item if is_python_scalar(item) else asvalue(item))

    collect(value)
    target = result_dtype(*leaves) if leaves else np.dtype(np.float64)

    def build(item):
        if isinstance(item, (list, tuple)):
            parts = [build(v) for v in item]
            if not parts:
                raise ShapeError("array: an empty list beside traced values has no shape")
            shapes = {shape(p) for p in parts}
            if len(shapes) != 1:
                raise ShapeError(f"array: the nested sequences are ragged (shapes {sorted(shapes)})")
            # stacked along a new first axis (the parts share the target dtype: no promotion left)
            return structural.concatenate([structural.reshape(p, (1,) + tuple(shape(p))) for p in parts], 0)
        return cast(item, target)

    return build(value)
