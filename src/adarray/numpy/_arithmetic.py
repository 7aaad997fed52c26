"""More elementwise functions of NumPy: float_power, fmod, divmod, cbrt, around, rint, trunc, fix,
heaviside, copysign, nextafter, ldexp, frexp, modf, gcd, lcm, isinf, isposinf, isneginf, signbit,
and the comparisons isclose, allclose, array_equal, array_equiv.

Values are NumPy's bit for bit (cbrt, fmod, nextafter, ldexp, frexp's exponent, signbit, gcd and
lcm are primitives with NumPy's ufuncs as implementations; the rest are exact compositions).
Derivatives where the function has one: trunc, fix, rint, around and heaviside in its first
argument are piecewise constant (derivative 0); copysign(x1, x2) is +-sign(x1) in x1 (0 at x1 = 0, as
abs) and 0 in x2; modf's fractional part has derivative 1 and its integral part 0; frexp's mantissa is
x * 2**-e. Integer or boolean results (gcd, lcm, frexp's exponent, isinf, isclose, ...) are never
differentiated.

    >>> frexp(np.array([8.0, 0.3]))  # doctest: +SKIP
    (array([0.5, 0.6]), array([4, -1], dtype=int32))
"""
from __future__ import annotations

import builtins

import numpy as np

from ..core.errors import ShapeError
from ..primitives import arithmetic as prims
from ..primitives import elementwise as ew
from ..tracing import Tracer
from ._core import asvalue, broadcast_exact, broadcast_shapes, cast, dtype, float_dtype, prepare, result_dtype, shape
from ._math import (
    ceil,
    equal,
    floor,
    floor_divide,
    isnan,
    less,
    logical_and,
    logical_or,
    negative,
    remainder,
    round,
    where,
)
from ._reductions import all as all_


def _is_float(value) -> bool:
    return np.issubdtype(dtype(value), np.floating)


def _floats(name, *values):
    """Broadcast and promote to one floating dtype (integers compute in float64, as NumPy's loops)."""
    return prepare(name, *values, dtype=float_dtype(*values))


def _float(x):
    x = asvalue(x)
    return cast(x, float_dtype(x))


def float_power(x1, x2):
    """x1 ** x2 computed in float64 at least (numpy.float_power: float32 inputs give float64)."""
    target = np.promote_types(float_dtype(x1, x2), np.float64)
    a, b = prepare("float_power", x1, x2, dtype=target)
    return ew.pow(a, b)


def fmod(x1, x2):
    """The remainder of x1 / x2 with the sign of x1 (C's fmod), for floats and integers.

    d/dx1 = 1, d/dx2 = -trunc(x1 / x2) (as numpy.remainder's, with the other rounding).

    >>> fmod(np.array([-5.0, 5.0]), 3.0)  # doctest: +SKIP
    array([-2.,  2.])
    """
    target = result_dtype(x1, x2)
    if target == np.bool_:
        target = np.dtype(np.int8)
    a, b = prepare("fmod", x1, x2, dtype=target)
    return prims.fmod(a, b)


def divmod(x1, x2):  # noqa: A001 - NumPy's name
    """(floor_divide(x1, x2), remainder(x1, x2)), as numpy.divmod."""
    return floor_divide(x1, x2), remainder(x1, x2)


def cbrt(x):
    """The real cube root; its derivative 1 / (3 cbrt(x)**2) is infinite at 0."""
    return prims.cbrt(_float(x))


def around(a, decimals=0, out=None):
    """numpy.around: round half to even, to `decimals` places."""
    return round(a, decimals)


def rint(x):
    """Round half to even to the nearest integer, as a float (numpy.rint: integers become float64)."""
    return round(_float(x))


def trunc(x):
    """Round towards zero (numpy.trunc; integers stay integers). Derivative 0."""
    x = asvalue(x)
    if not _is_float(x):
        return x
    return where(less(x, 0.0), ceil(x), floor(x))


def fix(x):
    """Round towards zero, as numpy.fix (the same as trunc)."""
    return trunc(x)


def heaviside(x1, x2):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN where x1 is NaN); differentiable in x2 only."""
    a, b = _floats("heaviside", x1, x2)
    step = where(less(a, 0.0), 0.0, where(equal(a, 0.0), b, 1.0))
    return where(isnan(a), np.nan, step)


def signbit(x):
    """True where the sign bit is set: negative numbers, -0.0 and negative NaNs."""
    x = asvalue(x)
    if _is_float(x):
        return prims.signbit(x)
    return less(x, 0)


def copysign(x1, x2):
    """|x1| with the sign (bit) of x2: -|x1| where x2's sign bit is set, else |x1| (bit for bit NumPy's).
    The derivative in x1 is +-sign(x1) (0 at x1 = 0, abs's convention, as in JAX), in x2 it is 0."""
    a, b = _floats("copysign", x1, x2)
    magnitude = ew.abs(a)
    return where(prims.signbit(b), negative(magnitude), magnitude)


def nextafter(x1, x2):
    """The next float after x1 towards x2. A one-ulp step: d/dx1 = 1, d/dx2 = 0."""
    a, b = _floats("nextafter", x1, x2)
    return prims.nextafter(a, b)


def ldexp(x1, x2):
    """x1 * 2**x2 exactly (x2 integers), as numpy.ldexp; linear in x1.

    >>> ldexp(np.array([0.75]), np.array([3]))  # doctest: +SKIP
    array([6.])
    """
    exponent = asvalue(x2)
    if not np.issubdtype(dtype(exponent), np.integer):
        raise ShapeError(f"ldexp: the exponents x2 must be integers, got {dtype(exponent)}")
    mantissa = _float(x1)
    out_shape = broadcast_shapes("ldexp", shape(mantissa), shape(exponent))
    return prims.ldexp(broadcast_exact(mantissa, out_shape), broadcast_exact(cast(exponent, np.int64), out_shape))


def frexp(x):
    """(mantissa, exponent) with x = mantissa * 2**exponent, 0.5 <= |mantissa| < 1, the exponent
    int32 (numpy.frexp). The mantissa is differentiable: x * 2**-exponent."""
    x = _float(x)
    exponent = prims.frexp_exponent(x)
    return prims.ldexp(x, ew.neg(exponent)), exponent


def modf(x):
    """(fractional part, integral part), both with the sign of x (numpy.modf); derivatives 1 and 0.

    >>> modf(np.array([-2.5, 3.25]))  # doctest: +SKIP
    (array([-0.5 ,  0.25]), array([-2.,  3.]))
    """
    x = _float(x)
    negative_side = prims.signbit(x)
    magnitude = where(negative_side, negative(x), x)    # |x| with derivative +-1 (also at 0)
    magnitude = where(equal(magnitude, np.inf), 0.0, magnitude)   # inf has no fractional part
    fraction = ew.sub(magnitude, trunc(magnitude))      # exact
    return where(negative_side, negative(fraction), fraction), trunc(x)


def _integers(name, x1, x2):
    a, b = prepare(name, x1, x2)
    if not np.issubdtype(dtype(a), np.integer):
        raise ShapeError(f"{name}: needs integer operands, got {dtype(asvalue(x1))} and {dtype(asvalue(x2))}")
    return a, b


def gcd(x1, x2):
    """The greatest common divisor of |x1| and |x2| (integers; gcd(0, 0) = 0)."""
    return prims.gcd(*_integers("gcd", x1, x2))


def lcm(x1, x2):
    """The least common multiple of |x1| and |x2| (integers; 0 if either is 0)."""
    return prims.lcm(*_integers("lcm", x1, x2))


def isinf(x):
    """True at +inf and -inf."""
    x = asvalue(x)
    if not _is_float(x):
        return ew.ne(x, x)
    return equal(ew.abs(x), np.inf)


def isposinf(x):
    """True at +inf."""
    x = asvalue(x)
    return equal(x, np.inf) if _is_float(x) else ew.ne(x, x)


def isneginf(x):
    """True at -inf."""
    x = asvalue(x)
    return equal(x, -np.inf) if _is_float(x) else ew.ne(x, x)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol |b| elementwise, with NumPy's rules: infinities are close only to
    themselves, NaN only with equal_nan (numpy.isclose; b is promoted to float)."""
    x, y = prepare("isclose", a, b, dtype=np.promote_types(result_dtype(b, 1.0), result_dtype(a, b)))
    tolerance = ew.add(ew.mul(ew.abs(y), float(rtol)), float(atol))
    with np.errstate(invalid="ignore"):   # inf - inf is NaN, and not close: as NumPy, without a warning
        distance = ew.abs(ew.sub(x, y))
    close = logical_and(ew.le(distance, tolerance), ew.isfinite(y))
    result = logical_or(close, equal(x, y))
    if equal_nan:
        result = logical_or(result, logical_and(isnan(x), isnan(y)))
    return result


def _as_bool(value):
    """A concrete 0-d boolean as a Python bool (NumPy's return type); a traced one as it is."""
    return value if isinstance(value, Tracer) else builtins.bool(value)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if isclose holds everywhere (a Python bool; a traced boolean inside a trace)."""
    return _as_bool(all_(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """True if a1 and a2 have the same shape and elements (a Python bool; traced inside a trace).
    Different shapes give False without looking at the values, as in NumPy."""
    a1, a2 = asvalue(a1), asvalue(a2)
    if shape(a1) != shape(a2):
        return False
    return _elements_equal(a1, a2, equal_nan)


def array_equiv(a1, a2):
    """True if a1 and a2 broadcast to one shape and are equal elementwise (numpy.array_equiv)."""
    a1, a2 = asvalue(a1), asvalue(a2)
    try:
        np.broadcast_shapes(shape(a1), shape(a2))
    except ValueError:
        return False
    return _elements_equal(a1, a2, False)


def _elements_equal(a1, a2, equal_nan):
    same = equal(a1, a2)
    if equal_nan:
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return _as_bool(all_(same))


__all__ = ["allclose", "around", "array_equal", "array_equiv", "cbrt", "copysign", "divmod", "fix", "float_power",
           "fmod", "frexp", "gcd", "heaviside", "isclose", "isinf", "isneginf", "isposinf", "lcm", "ldexp", "modf",
           "nextafter", "rint", "signbit", "trunc"]
