"""Complex values: real, imag, conj, complex (x + i y), and abs of a complex operand.

The conventions are JAX's. A tangent of a complex value is complex; reverse mode is the linear
transpose under the real pairing <u, v> = Re(sum u * v), with no conjugation. So a holomorphic map
(exp, sin, mul, ...) needs nothing new: its jvp and its vjp both multiply by f'(z) (the scalar
table's partials, `scalar.HOLOMORPHIC`). The maps here are not holomorphic, only real-linear, and
their transposes follow from the pairing:

    real     t -> Re t               transpose  c -> c + 0i
    imag     t -> Im t               transpose  c -> -i c         (Re(-i c t) = c Im t)
    conj     t -> conj t             transpose  c -> conj c
    complex  (s, t) -> s + i t       transpose  c -> (Re c, -Im c)
    abs      t -> Re(conj(z) t)/|z|  vjp        c -> c conj(z) / |z|   (0 at z = 0, as JAX)

With this pairing, grad of a real f of a complex z is df/dx - i df/dy (JAX's and autograd's value)
and grad of a holomorphic f (holomorphic=True) is f'(z).

>>> real(np.array([1 + 2j]))  # doctest: +SKIP
array([1.])
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import complex_dtype, is_complex, is_real_float, real_dtype
from . import elementwise as ew
from .rules import aval_of_value, batch_elementwise, instantiate, linear
from .scalar import HOLOMORPHIC


def _complex_to_real(name):
    def abstract_eval(x):
        if not is_complex(x.dtype):
            raise ShapeError(f"{name}: needs a complex operand, got {x}")
        return x.update(dtype=real_dtype(x.dtype))

    return abstract_eval


def _conj_abstract_eval(x):
    if not is_complex(x.dtype):
        raise ShapeError(f"conj: needs a complex operand, got {x}")
    return x


def _complex_abstract_eval(x, y):
    if x.shape != y.shape or x.dtype != y.dtype or not is_real_float(x.dtype):
        raise ShapeError(f"complex: needs two real floating-point operands of one shape and dtype, got {x} and {y}")
    return x.update(dtype=complex_dtype(x.dtype))


real_p = Primitive("real", _complex_to_real("real"))
imag_p = Primitive("imag", _complex_to_real("imag"))
conj_p = Primitive("conj", _conj_abstract_eval)
complex_p = Primitive("complex", _complex_abstract_eval)


def real(x):
    """The real part of a complex array (float64 for complex128)."""
    return real_p.bind(x)


def imag(x):
    """The imaginary part of a complex array."""
    return imag_p.bind(x)


def conj(x):
    """The complex conjugate."""
    return conj_p.bind(x)


def complex(x, y):  # noqa: A001 - the name of the operation
    """x + i y from two real arrays of one shape and dtype (float64 -> complex128)."""
    x, y = ew._coerce(x, y)
    return complex_p.bind(x, y)


def _zeros(aval):
    return np.broadcast_to(np.zeros((), aval.dtype), aval.shape)


def _real_transpose(ct, avals):
    return [Zero(avals[0]) if is_zero(ct) else complex(ct, _zeros(aval_of_value(ct)))]


def _imag_transpose(ct, avals):
    return [Zero(avals[0]) if is_zero(ct) else complex(_zeros(aval_of_value(ct)), ew.neg(ct))]


def _conj_transpose(ct, avals):
    return [Zero(avals[0]) if is_zero(ct) else conj(ct)]


def _complex_transpose(ct, avals):
    if is_zero(ct):
        return [Zero(avals[0]), Zero(avals[1])]
    return [real(ct), ew.neg(imag(ct))]


linear(real_p, _real_transpose)
linear(imag_p, _imag_transpose)
linear(conj_p, _conj_transpose)
linear(complex_p, _complex_transpose)
for _prim in (real_p, imag_p, conj_p, complex_p):
    _prim.elementwise = True
    batch_elementwise(_prim)


# --- abs of a complex operand: |z| (real), not holomorphic ----------------------------------------
# abs_p is an elementwise primitive of the scalar table (real operands, partial sign(x)). A complex
# operand gives a real result, and the rules below: with s = conj(z) / |z| (0 at z = 0, where |z|
# has no derivative: JAX's choice), the jvp is Re(s t) and the vjp c s.

_real_abs_abstract_eval, _real_abs_jvp, _real_abs_vjp = ew.abs_p.abstract_eval, ew.abs_p.jvp, ew.abs_p.vjp


def _abs_abstract_eval(x):
    out = _real_abs_abstract_eval(x)
    return out.update(dtype=real_dtype(x.dtype)) if is_complex(x.dtype) else out


def _conj_direction(z, magnitude):
    """conj(z) / |z|; 0 at z = 0 (conj(z) = 0 there, over a denominator made 1)."""
    safe = ew.select(ew.eq(magnitude, 0.0), ew.full_like(magnitude, 1.0), magnitude)
    return ew.div(conj(z), ew.convert(safe, aval_of_value(z).dtype))


def _abs_jvp(tangents, primals, output):
    (z,) = primals
    if not is_complex(aval_of_value(z).dtype):
        return _real_abs_jvp(tangents, primals, output)
    (tangent,) = tangents
    return real(ew.mul(_conj_direction(z, output), instantiate(tangent)))


def _abs_vjp(cotangent, primals, output, needs):
    (z,) = primals
    if not is_complex(aval_of_value(z).dtype):
        return _real_abs_vjp(cotangent, primals, output, needs)
    if is_zero(cotangent) or not needs[0]:
        return [None]
    dtype = aval_of_value(z).dtype
    return [ew.mul(ew.convert(cotangent, dtype), _conj_direction(z, output))]


ew.abs_p.abstract_eval, ew.abs_p.jvp, ew.abs_p.vjp = _abs_abstract_eval, _abs_jvp, _abs_vjp


# --- samplers -----------------------------------------------------------------------------------
# Complex operands: real parts in the primitive's real domain, imaginary parts in (-0.5, 0.5),
# which keeps clear of every branch cut (they lie on the real or the imaginary axis, beyond +-1).


def complex_uniform(rng, low, high, shape, dtype=np.complex128):
    return (rng.uniform(low, high, shape) + 1j * rng.uniform(-0.5, 0.5, shape)).astype(dtype)


def _complex_normal(rng, shape):
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


real_p.sample = imag_p.sample = conj_p.sample = lambda rng: [
    ([_complex_normal(rng, (3,))], {}),
    ([_complex_normal(rng, (2, 3)).astype(np.complex64)], {}),
    ([_complex_normal(rng, (0, 2))], {}),
]
complex_p.sample = lambda rng: [
    ([rng.normal(size=(3,)), rng.normal(size=(3,))], {}),
    ([rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)], {}),
]


def _extended(sample, more):
    return lambda rng: list(sample(rng)) + list(more(rng))


def _with_complex_cases(prim, arity):
    """The primitive's sampler followed by complex cases (drawn after the real ones, so those stay)."""
    real_sample = prim.sample
    low, high = ew.DOMAINS.get(prim, (-2.0, 2.0))

    def sample(rng):
        cases = list(real_sample(rng))
        for shape in [(), (2, 3)]:
            cases.append(([complex_uniform(rng, low, high, shape) for _ in range(arity)], {}))
        return cases

    prim.sample = sample


_BINARY = (ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.pow_p)
for _prim in sorted(HOLOMORPHIC | {*_BINARY, ew.neg_p, ew.abs_p, ew.stop_gradient_p}, key=lambda p: p.name):
    _with_complex_cases(_prim, 2 if _prim in _BINARY else 1)
ew.integer_pow_p.sample = _extended(ew.integer_pow_p.sample, lambda rng: [
    ([_complex_normal(rng, (3,))], {"n": n}) for n in (0, 2, 3, -2)])
ew.safe_mul_p.sample = _extended(ew.safe_mul_p.sample, lambda rng: [
    ([np.array([0.0, 1.5 - 1j, 0.0, 2j]), _complex_normal(rng, (4,))], {})])
ew.select_p.sample = _extended(ew.select_p.sample, lambda rng: [
    ([rng.normal(size=(4,)) > 0, _complex_normal(rng, (4,)), _complex_normal(rng, (4,))], {})])
ew.convert_p.sample = _extended(ew.convert_p.sample, lambda rng: [
    ([rng.normal(size=(3,))], {"dtype": np.dtype(np.complex128)}),
    ([_complex_normal(rng, (3,))], {"dtype": np.dtype(np.float64)}),
    ([_complex_normal(rng, (2, 2))], {"dtype": np.dtype(np.complex64)}),
    ([rng.normal(size=(3,)).astype(np.float32)], {"dtype": np.dtype(np.complex128)}),
])
for _name in ("eq", "ne"):
    _prim = getattr(ew, f"{_name}_p")
    _prim.sample = _extended(_prim.sample, lambda rng: [
        ([np.array([1 + 1j, 2.0, -1j]), np.array([1 + 1j, 2.0 + 1e-3j, 1j])], {})])
ew.isfinite_p.sample = _extended(ew.isfinite_p.sample, lambda rng: [
    ([np.array([1 + 1j, complex(np.inf, 0.0), complex(0.0, np.nan)])], {})])
