"""Elementwise functions with NumPy broadcasting and dtype promotion."""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError, TracingError
from ..primitives import elementwise as ew
from ..tracing import Tracer
from ._core import (
    asvalue,
    broadcast_exact,
    broadcast_shapes,
    cast,
    dtype,
    float_dtype,
    holds_tracer,
    is_python_scalar,
    prepare,
    result_dtype,
    shape,
)


def _binary(op, name, *, floats=False):
    def fn(x, y):
        target = float_dtype(x, y) if floats else None
        a, b = prepare(name, x, y, dtype=target)
        return op(a, b)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} with broadcasting, like numpy.{name}."
    return fn


def _unary(op, name, *, floats=True):
    def fn(x):
        x = asvalue(x)
        if floats:
            x = cast(x, float_dtype(x))
        return op(x)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name}, like numpy.{name} (integers compute in float64)."
    return fn


add = _binary(ew.add, "add")
subtract = _binary(ew.sub, "subtract")
multiply = _binary(ew.mul, "multiply")
divide = true_divide = _binary(ew.div, "divide", floats=True)
maximum = _binary(ew.maximum, "maximum")
minimum = _binary(ew.minimum, "minimum")
arctan2 = _binary(ew.arctan2, "arctan2", floats=True)
logaddexp = _binary(ew.logaddexp, "logaddexp", floats=True)
floor_divide = _binary(ew.floor_divide, "floor_divide")
equal = _binary(ew.eq, "equal")
not_equal = _binary(ew.ne, "not_equal")
less = _binary(ew.lt, "less")
less_equal = _binary(ew.le, "less_equal")
greater = _binary(ew.gt, "greater")
greater_equal = _binary(ew.ge, "greater_equal")


def _logical(op, name):
    def fn(x, y):
        a, b = prepare(name, x, y, dtype=np.bool_)
        return op(a, b)

    fn.__name__ = name
    return fn


logical_and = _logical(ew.logical_and, "logical_and")
logical_or = _logical(ew.logical_or, "logical_or")
logical_xor = _logical(ew.logical_xor, "logical_xor")


def logical_not(x):
    return ew.logical_not(cast(x, np.bool_))


def negative(x):
    return ew.neg(asvalue(x))


def positive(x):
    return asvalue(x)


for _name in ("exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
              "sinh", "cosh", "tanh", "erf"):
    globals()[_name] = _unary(getattr(ew, _name), _name)
sigmoid = _unary(ew.logistic, "sigmoid")


def abs(x):  # noqa: A001 - NumPy's name
    """Absolute value; its derivative at 0 is 0."""
    return ew.abs(asvalue(x))


absolute = abs


def sign(x):
    return ew.sign(asvalue(x))


def _rounding(op, name):
    def fn(x):
        x = asvalue(x)
        return op(x) if np.issubdtype(dtype(x), np.floating) else x

    fn.__name__ = name
    return fn


floor = _rounding(ew.floor, "floor")
ceil = _rounding(ew.ceil, "ceil")
_round_half_even = _rounding(ew.round, "round")


def round(x, decimals: int = 0):  # noqa: A001 - NumPy's name
    if decimals == 0:
        return _round_half_even(x)
    scale = 10.0 ** decimals
    return divide(_round_half_even(multiply(x, scale)), scale)


def softplus(x):
    """log(1 + exp(x)), computed stably."""
    return logaddexp(x, 0.0)


def square(x):
    return ew.integer_pow(asvalue(x), 2)


def reciprocal(x):
    return divide(1.0, x)


def power(x, y):
    """x ** y; an integral Python exponent uses exact repeated multiplication."""
    if is_python_scalar(y) and float(y).is_integer() and not isinstance(y, bool):
        x = asvalue(x)
        if int(y) < 0 and not np.issubdtype(dtype(x), np.floating):
            x = cast(x, float_dtype(x))
        if isinstance(y, float) and not np.issubdtype(dtype(x), np.floating):
            x = cast(x, result_dtype(x, y))
        return ew.integer_pow(x, int(y))
    a, b = prepare("power", x, y, dtype=float_dtype(x, y))
    return ew.pow(a, b)


def remainder(x, y):
    """x mod y with the sign of y, like numpy.remainder."""
    target = result_dtype(x, y)
    if np.issubdtype(target, np.floating):
        a, b = prepare("remainder", x, y)
        return ew.rem(a, b)
    return subtract(x, multiply(floor_divide(x, y), y))


mod = remainder


def where(condition, x=None, y=None):
    """Select from x where condition holds, else from y (only the chosen side is differentiated).

    where(condition) alone is NumPy's nonzero(condition): only for a concrete condition, since the
    number of indices depends on its values."""
    if x is None and y is None:
        if isinstance(condition, Tracer) or holds_tracer(condition):
            raise TracingError("where(condition) without x and y returns indices whose number depends on the "
                               "values of a traced condition; use where(condition, x, y)")
        return np.nonzero(np.asarray(condition))
    if x is None or y is None:
        raise ArgumentError("where: give both x and y, or neither")
    a, b = prepare("where", x, y)  # the condition is not promoted with them: it stays boolean
    condition = cast(asvalue(condition), np.bool_)
    out_shape = broadcast_shapes("where", shape(condition), shape(a))
    return ew.select(*[broadcast_exact(v, out_shape) for v in (condition, a, b)])


def clip(x, a_min=None, a_max=None):
    out = x
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return asvalue(out)


def isfinite(x):
    x = asvalue(x)
    return ew.isfinite(x) if np.issubdtype(dtype(x), np.floating) else ew.eq(x, x)


def isnan(x):
    x = asvalue(x)
    return not_equal(x, x)


def stop_gradient(x):
    """The identity whose derivative is zero."""
    return ew.stop_gradient(asvalue(x))
