"""Elementwise functions with NumPy broadcasting and dtype promotion."""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.types import is_complex
from ..primitives import elementwise as ew
from ..primitives.complex import complex as make_complex
from ..primitives.complex import imag, real
from ._core import (
    asvalue,
    broadcast_exact,
    broadcast_shapes,
    cast,
    dtype,
    float_dtype,
    is_python_scalar,
    prepare,
    result_dtype,
    shape,
)
from ._sorting import nonzero


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
    """-1, 0 or 1; for complex x, x / |x| (0 at 0), as NumPy 2."""
    x = asvalue(x)
    if is_complex(dtype(x)):
        magnitude = ew.abs(x)
        safe = ew.select(ew.eq(magnitude, 0.0), ew.full_like(magnitude, 1.0), magnitude)
        return ew.div(x, cast(safe, dtype(x)))
    return ew.sign(x)


def _rounding(op, name):
    def fn(x):
        x = asvalue(x)
        return op(x) if np.issubdtype(dtype(x), np.inexact) else x  # complex: op raises ShapeError

    fn.__name__ = name
    return fn


floor = _rounding(ew.floor, "floor")
ceil = _rounding(ew.ceil, "ceil")
_round_half_even = _rounding(ew.round, "round")


def round(x, decimals: int = 0):  # noqa: A001 - NumPy's name
    """Round half to even (numpy.round); complex x: its real and imaginary parts, as NumPy."""
    x = asvalue(x)
    if is_complex(dtype(x)):

        return make_complex(round(real(x), decimals), round(imag(x), decimals))
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
    if is_python_scalar(y) and not isinstance(y, (bool, complex)) and float(y).is_integer():
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


def where(condition, x=None, y=None, *, size=None, fill_value=None):
    """Select from x where condition holds, else from y (only the chosen side is differentiated).

    With the condition alone it is nonzero(condition): concrete arrays only, unless `size` is given.
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ShapeError("where: give both x and y, or neither (then it is nonzero(condition))")
    a, b = prepare("where", x, y)  # the condition is not promoted with them: it stays boolean
    condition = cast(asvalue(condition), np.bool_)
    out_shape = broadcast_shapes("where", shape(condition), shape(a))
    return ew.select(*[broadcast_exact(v, out_shape) for v in (condition, a, b)])


def clip(x, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002 - NumPy's names
    """Limit x to [a_min, a_max]; the bounds broadcast (arrays, scalars, or None for no bound).

    minimum(maximum(x, a_min), a_max) as NumPy computes it: x gets the derivative inside the
    interval and at a tie with a bound, a bound gets it where it is the value.
    """
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    out = asvalue(x)
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return asvalue(out)


def isfinite(x):
    x = asvalue(x)
    return ew.isfinite(x) if np.issubdtype(dtype(x), np.inexact) else ew.eq(x, x)


def isnan(x):
    x = asvalue(x)
    return not_equal(x, x)


def stop_gradient(x):
    """The identity whose derivative is zero."""
    return ew.stop_gradient(asvalue(x))


# --- more elementwise functions (issue 10): inverse hyperbolics, base-2/10 logs, angles, NaN handling ---

for _name in ("arcsinh", "arccosh", "arctanh", "log2", "log10", "exp2", "sinc"):
    globals()[_name] = _unary(getattr(ew, _name), _name)
hypot = _binary(ew.hypot, "hypot", floats=True)
hypot.__doc__ = "sqrt(x**2 + y**2) without overflow or underflow (numpy.hypot); its gradient at (0, 0) is 0."
# NumPy 2's array-API names
asin, acos, atan, atan2 = arcsin, arccos, arctan, arctan2  # noqa: F821 - defined by the loop above
asinh, acosh, atanh = arcsinh, arccosh, arctanh  # noqa: F821


def _scaled(factor, name):
    def fn(x):
        x = asvalue(x)
        return ew.mul(cast(x, float_dtype(x)), factor)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name}: x * {factor!r}, like numpy.{name}."
    return fn


deg2rad = radians = _scaled(np.pi / 180.0, "deg2rad")
rad2deg = degrees = _scaled(180.0 / np.pi, "rad2deg")


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> `nan`, +inf -> `posinf` (default the largest finite value), -inf -> `neginf`.

    The derivative passes where x is finite and is 0 at the replaced elements.
    """
    x = asvalue(x)
    if is_complex(dtype(x)):  # the real and imaginary parts separately, as NumPy

        parts = [nan_to_num(part, nan=nan, posinf=posinf, neginf=neginf) for part in (real(x), imag(x))]
        return make_complex(*parts)
    if not np.issubdtype(dtype(x), np.floating):
        return x
    info = np.finfo(dtype(x))
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), nan, x)
    out = where(ew.eq(x, np.full(shape(x), np.inf, dtype(x))), posinf, out)
    return where(ew.eq(x, np.full(shape(x), -np.inf, dtype(x))), neginf, out)


def select(condlist, choicelist, default=0):
    """The choice of the first true condition per element, else `default` (numpy.select)."""
    if len(condlist) != len(choicelist):
        raise ShapeError(f"select: {len(condlist)} conditions for {len(choicelist)} choices")
    result = default
    for condition, choice in reversed(list(zip(condlist, choicelist))):
        result = where(condition, choice, result)
    return asvalue(result)


def piecewise(x, condlist, funclist, *args, **kwargs):
    """x mapped by funclist[i] where condlist[i] holds (later conditions win, like NumPy); one more
    function than conditions is the 'otherwise' case; a constant in funclist is a constant value.

    Unlike NumPy, each function is evaluated on all of x (shapes must not depend on values) and its
    result selected: its values outside the condition are discarded, and so are their derivatives,
    even where they are NaN (e.g. log of negatives).
    """
    x = asvalue(x)
    if not isinstance(condlist, (list, tuple)):
        condlist = asvalue(condlist)
        condlist = list(condlist) if len(shape(condlist)) > len(shape(x)) else [condlist]
    elif condlist and isinstance(condlist[0], (bool, np.bool_)) and len(shape(x)) != 0:
        condlist = [condlist]  # NumPy's rule: a flat list of booleans is one condition
    conditions = [cast(asvalue(c), np.bool_) for c in condlist]
    if len(funclist) == len(conditions) + 1:  # the 'otherwise' case: no condition holds
        anything = np.zeros(shape(x), bool)
        for condition in conditions:
            anything = logical_or(anything, condition)
        conditions.append(logical_not(anything))
    elif len(funclist) != len(conditions):
        raise ShapeError(f"piecewise: {len(funclist)} functions for {len(conditions)} conditions")
    result = np.zeros(shape(x), dtype(x))
    for condition, fn in zip(conditions, funclist):
        value = fn(x, *args, **kwargs) if callable(fn) else fn
        result = where(condition, cast(value, dtype(x)) if not is_python_scalar(value) else value, result)
    return asvalue(result)


# --- more of NumPy's elementwise functions (autograd's tests use them) ---------------------------------

def fabs(x):
    """|x| of real x (numpy.fabs: integers compute in float64; complex x is an error, use abs)."""
    x = asvalue(x)
    if is_complex(dtype(x)):
        raise ShapeError(f"fabs: is not defined for complex values, got {dtype(x)}; use anp.abs")
    return ew.abs(cast(x, float_dtype(x)))


def _nan_ignoring(pick, name):
    def fn(x, y):
        a, b = prepare(name, x, y)
        return where(isnan(b), a, where(isnan(a), b, pick(a, b)))

    fn.__name__ = name
    fn.__doc__ = (f"Elementwise {name}, ignoring NaN (NaN only where both are NaN), like numpy.{name}; at a tie "
                  "the first argument gets the derivative.")
    return fn


fmax = _nan_ignoring(ew.maximum, "fmax")
fmin = _nan_ignoring(ew.minimum, "fmin")


def logaddexp2(x, y):
    """log2(2**x + 2**y), computed stably (numpy.logaddexp2)."""
    a, b = prepare("logaddexp2", x, y, dtype=float_dtype(x, y))
    return ew.div(ew.logaddexp(ew.mul(a, np.log(2.0)), ew.mul(b, np.log(2.0))), np.log(2.0))


