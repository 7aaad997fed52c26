"""Floating-point and integer arithmetic beyond the basic maps: cbrt, fmod, nextafter, ldexp,
frexp_exponent, signbit, gcd, lcm (elementwise; operands of equal shapes).

    cbrt a -> a^(1/3)           d = 1 / (3 cbrt(a)^2) (infinite at 0: a singular partial)
    fmod a b -> a - trunc(a/b) b    C's fmod (sign of a), floats and integers; d/da = 1,
                                d/db = -trunc(a/b) = -round((a - out) / b) (rem's rule: (a - out) / b
                                is an integer up to rounding)
    nextafter a b -> the next float after a towards b: a step of one ulp, so d/da = 1, d/db = 0
    ldexp x n -> x 2^n          n an integer array; linear in x (d = ldexp(dx, n)), n not differentiated
    frexp_exponent x -> e       int32 e with x = m 2^e, 0.5 <= |m| < 1 (numpy.frexp's second result)
    signbit x -> bool           the sign bit (true for -0.0 and negative NaNs too)
    gcd a b, lcm a b            integers

The numpy.frexp mantissa is ldexp(x, -frexp_exponent(x)), exact and differentiable; modf, copysign,
trunc and the others are compositions (adarray.numpy._arithmetic).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import is_float
from . import elementwise as ew
from .rules import aval_of_value, batch_elementwise, elementwise, nondifferentiable
from .scalar import register_singular_points


def _is_integer(dtype) -> bool:
    return np.issubdtype(np.dtype(dtype), np.integer)


def _same_shapes(name, kind, result_dtype=None):
    """The shape rule of a map whose operands have one shape and one dtype of the given kind."""

    def abstract_eval(*avals):
        first = avals[0]
        for other in avals[1:]:
            if other.shape != first.shape or other.dtype != first.dtype:
                raise ShapeError(f"{name}: operands {', '.join(map(str, avals))} differ in shape or dtype")
        accepted = {"float": is_float(first.dtype), "integer": _is_integer(first.dtype),
                    "number": is_float(first.dtype) or _is_integer(first.dtype)}[kind]
        if not accepted:
            raise ShapeError(f"{name}: needs {kind} operands, got {first}")
        return first.update(dtype=result_dtype) if result_dtype is not None else first

    return abstract_eval


def _coerce(x, y):
    """A Python scalar operand takes the shape and dtype of the other one."""
    def python(v):
        return isinstance(v, (int, float, bool)) and not hasattr(v, "aval")

    if python(x) and not python(y):
        like = aval_of_value(y)
        x = np.broadcast_to(np.asarray(x, like.dtype), like.shape)
    elif python(y) and not python(x):
        like = aval_of_value(x)
        y = np.broadcast_to(np.asarray(y, like.dtype), like.shape)
    return x, y


# --- differentiable maps ------------------------------------------------------------------------

def _cbrt_partials(m, x, out):
    return (ew.div(1.0, ew.mul(3.0, ew.mul(out, out))),)


def _fmod_partials(m, a, b, out):
    return ew.full_like(a, 1.0), ew.neg(ew.round(ew.div(ew.sub(a, out), b)))


def _nextafter_partials(m, a, b, out):
    return ew.full_like(a, 1.0), None  # piecewise constant in b: a symbolic zero


cbrt_p = Primitive("cbrt", _same_shapes("cbrt", "float"))
elementwise(cbrt_p, _cbrt_partials, singular=True)
fmod_p = Primitive("fmod", _same_shapes("fmod", "number"))
elementwise(fmod_p, _fmod_partials, singular=True)
nextafter_p = Primitive("nextafter", _same_shapes("nextafter", "float"))
elementwise(nextafter_p, _nextafter_partials)
register_singular_points(cbrt_p, ((0.0,), {}))  # where a partial is infinite: the rule tests check there
register_singular_points(fmod_p, ((1.0, 0.0), {}))


def cbrt(x):
    """The real cube root."""
    return cbrt_p.bind(x)


def fmod(a, b):
    """a - trunc(a / b) * b, with the sign of a (C's fmod, numpy.fmod)."""
    return fmod_p.bind(*_coerce(a, b))


def nextafter(a, b):
    """The next representable float after a in the direction of b."""
    return nextafter_p.bind(*_coerce(a, b))


# --- ldexp: x * 2^n, linear in x ----------------------------------------------------------------

def _ldexp_abstract_eval(x, n):
    if not is_float(x.dtype) or not _is_integer(n.dtype):
        raise ShapeError(f"ldexp: needs a float mantissa and integer exponents, got {x} and {n}")
    if x.shape != n.shape:
        raise ShapeError(f"ldexp: operands {x} and {n} differ in shape")
    return x


ldexp_p = Primitive("ldexp", _ldexp_abstract_eval)


def ldexp(x, n):
    """x * 2**n, exactly (n an integer array of x's shape)."""
    return ldexp_p.bind(x, n)


def _ldexp_jvp(tangents, primals, output):
    tangent = tangents[0]
    return Zero(aval_of_value(output)) if is_zero(tangent) else ldexp(tangent, primals[1])


def _ldexp_taylor(series, output):
    """Linear in x for the (integer, constant) exponents: y_k = ldexp(x_k, n)."""
    x, n = series[0], series[1][0]
    return [c if is_zero(c) else ldexp(c, n) for c in x[1:]]


ldexp_p.jvp = _ldexp_jvp
ldexp_p.vjp = lambda cotangent, primals, output, needs: [ldexp(cotangent, primals[1]) if needs[0] else None, None]
ldexp_p.taylor = _ldexp_taylor

# --- integer and boolean results ----------------------------------------------------------------

frexp_exponent_p = Primitive("frexp_exponent", _same_shapes("frexp_exponent", "float", np.dtype(np.int32)))
signbit_p = Primitive("signbit", _same_shapes("signbit", "float", np.dtype(np.bool_)))
gcd_p = Primitive("gcd", _same_shapes("gcd", "integer"))
lcm_p = Primitive("lcm", _same_shapes("lcm", "integer"))
for _prim in (frexp_exponent_p, signbit_p, gcd_p, lcm_p):
    nondifferentiable(_prim)


def frexp_exponent(x):
    """The int32 exponent e of x = m * 2**e with 0.5 <= |m| < 1 (0 for 0, inf and NaN)."""
    return frexp_exponent_p.bind(x)


def signbit(x):
    """True where the sign bit of x is set (-0.0 included)."""
    return signbit_p.bind(x)


def gcd(a, b):
    """The greatest common divisor of |a| and |b| (integers)."""
    return gcd_p.bind(*_coerce(a, b))


def lcm(a, b):
    """The least common multiple of |a| and |b| (integers)."""
    return lcm_p.bind(*_coerce(a, b))


for _prim in (cbrt_p, fmod_p, nextafter_p, ldexp_p, frexp_exponent_p, signbit_p, gcd_p, lcm_p):
    _prim.elementwise = True
    batch_elementwise(_prim)

# --- test samplers: away from the kinks, jumps and poles, plus the edge values -------------------

_SHAPES = [(), (3,), (2, 3), (0, 2)]


def _away_from_zero(rng, shape, low=0.3, high=2.0):
    return rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)


cbrt_p.sample = lambda rng: [([_away_from_zero(rng, s)], {}) for s in _SHAPES] + [
    ([np.array([8.0, -27.0, 0.5])], {}), ([_away_from_zero(rng, (3,)).astype(np.float32)], {})]
fmod_p.sample = lambda rng: [([rng.uniform(-3.0, 3.0, s), _away_from_zero(rng, s, 0.7, 1.6)], {}) for s in _SHAPES] + [
    ([np.array([5, -5, 7]), np.array([3, 3, -2])], {})]
nextafter_p.sample = lambda rng: [([rng.normal(size=s), rng.normal(size=s) * 4.0], {}) for s in _SHAPES]
ldexp_p.sample = lambda rng: [([rng.normal(size=s), rng.integers(-4, 5, s)], {}) for s in _SHAPES] + [
    ([np.array([1e150, 3e-300]), np.array([-600, 900])], {})]
frexp_exponent_p.sample = lambda rng: [([np.array([3.0, 0.0, -0.4, np.inf, np.nan, 5e-324])], {}),
                                       ([rng.normal(size=(2, 3))], {})]
signbit_p.sample = lambda rng: [([np.array([1.0, -0.0, 0.0, -2.0, -np.inf, np.nan])], {})]
gcd_p.sample = lambda rng: [([rng.integers(-20, 21, (2, 3)), rng.integers(-20, 21, (2, 3))], {}),
                            ([np.array([0, 12, -8]), np.array([0, 18, 6])], {})]
lcm_p.sample = gcd_p.sample
