"""JAX lowerings of the elementwise primitives: one jax.numpy function per primitive."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...primitives import elementwise as ew
from . import special  # erf of complex operands
from .registry import LOWERINGS, lowering

FUNCTIONS = {
    ew.add_p: jnp.add, ew.sub_p: jnp.subtract, ew.mul_p: jnp.multiply, ew.div_p: jnp.true_divide,
    ew.neg_p: jnp.negative, ew.exp_p: jnp.exp, ew.log_p: jnp.log, ew.log1p_p: jnp.log1p, ew.expm1_p: jnp.expm1,
    ew.sqrt_p: jnp.sqrt, ew.sin_p: jnp.sin, ew.cos_p: jnp.cos, ew.tan_p: jnp.tan, ew.arcsin_p: jnp.arcsin,
    ew.arccos_p: jnp.arccos, ew.arctan_p: jnp.arctan, ew.sinh_p: jnp.sinh, ew.cosh_p: jnp.cosh, ew.tanh_p: jnp.tanh,
    ew.logistic_p: jax.nn.sigmoid, ew.erf_p: special.erf, ew.abs_p: jnp.abs, ew.sign_p: jnp.sign,
    ew.floor_p: jnp.floor, ew.ceil_p: jnp.ceil, ew.round_p: jnp.round, ew.pow_p: jnp.power,
    ew.maximum_p: jnp.maximum, ew.minimum_p: jnp.minimum, ew.arctan2_p: jnp.arctan2, ew.logaddexp_p: jnp.logaddexp,
    ew.rem_p: jnp.remainder, ew.floor_divide_p: jnp.floor_divide, ew.eq_p: jnp.equal, ew.ne_p: jnp.not_equal,
    ew.lt_p: jnp.less, ew.le_p: jnp.less_equal, ew.gt_p: jnp.greater, ew.ge_p: jnp.greater_equal,
    ew.logical_and_p: jnp.logical_and, ew.logical_or_p: jnp.logical_or, ew.logical_xor_p: jnp.logical_xor,
    ew.logical_not_p: jnp.logical_not, ew.isfinite_p: jnp.isfinite, ew.select_p: jnp.where,
    ew.stop_gradient_p: jnp.asarray, ew.arcsinh_p: jnp.arcsinh, ew.arccosh_p: jnp.arccosh,
    ew.arctanh_p: jnp.arctanh, ew.log2_p: jnp.log2, ew.log10_p: jnp.log10, ew.exp2_p: jnp.exp2, ew.sinc_p: jnp.sinc,
    ew.hypot_p: jnp.hypot,
}
for _primitive, _function in FUNCTIONS.items():
    LOWERINGS[_primitive] = (lambda function: lambda *args: function(*args))(_function)


# XLA's algebraic simplifier folds x + 0.0 and x - (-0.0) to x, which keeps -0.0 where IEEE (and NumPy)
# give -0.0 + 0.0 = 0.0. With such a constant operand (the lowerings see constants as NumPy arrays) the sum
# is written as what it computes.
def _plus_positive_zero(x):
    return jnp.where(x == 0, jnp.zeros((), x.dtype), x)


def _constant_zero(value, negative: bool) -> bool:
    """Is `value` a constant (not traced) real array of zeros of the given sign?"""
    if not isinstance(value, (np.ndarray, np.generic)) or value.dtype.kind != "f" or value.size == 0:
        return False
    return bool(np.all(value == 0) and np.all(np.signbit(value) == negative))


@lowering(ew.add_p, constants=True)
def _add(a, b):
    if _constant_zero(b, False) and not _constant_zero(a, False):
        return _plus_positive_zero(jnp.broadcast_to(a, np.shape(b)))
    if _constant_zero(a, False) and not isinstance(b, (np.ndarray, np.generic)):
        return _plus_positive_zero(jnp.broadcast_to(b, np.shape(a)))
    return jnp.add(a, b)


@lowering(ew.sub_p, constants=True)
def _sub(a, b):
    if _constant_zero(b, True) and not isinstance(a, (np.ndarray, np.generic)):
        return _plus_positive_zero(jnp.broadcast_to(a, np.shape(b)))
    return jnp.subtract(a, b)


@lowering(ew.safe_mul_p)
def _safe_mul(x, y):
    return jnp.where(x == 0, jnp.zeros((), jnp.result_type(x, y)), jnp.multiply(x, y))


@lowering(ew.integer_pow_p)
def _integer_pow(x, *, n):
    if n < 0:
        return 1.0 / jax.lax.integer_pow(x, -n)
    return jax.lax.integer_pow(x, n)


@lowering(ew.convert_p)
def _convert(x, *, dtype):
    if jnp.iscomplexobj(x) and not jnp.issubdtype(dtype, jnp.complexfloating):
        x = jnp.real(x)  # the real part, as NumPy's astype (without its warning)
    return x.astype(dtype)
