"""JAX lowerings of the arithmetic family (primitives/arithmetic.py): jax.numpy's ufuncs."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ...primitives import arithmetic
from .registry import LOWERINGS, lowering

for _primitive, _function in {
    arithmetic.cbrt_p: jnp.cbrt, arithmetic.fmod_p: jnp.fmod, arithmetic.nextafter_p: jnp.nextafter,
    arithmetic.ldexp_p: jnp.ldexp, arithmetic.signbit_p: jnp.signbit, arithmetic.gcd_p: jnp.gcd,
    arithmetic.lcm_p: jnp.lcm,
}.items():
    LOWERINGS[_primitive] = (lambda function: lambda *args: function(*args))(_function)


@lowering(arithmetic.frexp_exponent_p)
def _frexp_exponent(x):
    """jnp.frexp is off on subnormal numbers (XLA on the CPU flushes them to zero in arithmetic): there
    the exponent comes from the bits, x = m 2^-(nmant + maxexp - 2) with the integer mantissa m."""
    info = jnp.finfo(x.dtype)
    integer = {4: jnp.int32, 8: jnp.int64}[x.dtype.itemsize]
    raw = jax.lax.bitcast_convert_type(x, integer)
    mantissa = raw & ((1 << info.nmant) - 1)
    bits = x.dtype.itemsize * 8 - jax.lax.clz(mantissa)
    from_bits = bits - (info.nmant + info.maxexp - 2)
    exponent_bits = (raw >> info.nmant) & (2 * info.maxexp - 1)
    subnormal = (exponent_bits == 0) & (mantissa != 0)  # by the bits: comparisons may treat them as zero
    return jnp.where(subnormal, from_bits, jnp.frexp(x)[1]).astype(jnp.int32)
