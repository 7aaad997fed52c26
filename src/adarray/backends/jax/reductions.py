"""JAX lowerings of reductions and scans: the known monoids, products of the others (zero
counting), argmax/argmin, and the linear and matrix recurrences as associative scans."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ...primitives import reduce, scan
from .registry import lowering

_REDUCERS = {"add": jnp.sum, "mul": jnp.prod, "max": jnp.max, "min": jnp.min, "and": jnp.all, "or": jnp.any}


@lowering(reduce.reduce_p)
def _reduce(x, *, op, axes):
    return _REDUCERS[op](x, axis=axes)


@lowering(reduce.product_others_p)
def _product_others(x, scale, *, axes):
    """Zero counting: no zero -> prod / x; one zero -> the product of the others at the zero; more -> 0."""
    is_zero = x == 0
    zeros = jnp.sum(is_zero, axis=axes, keepdims=True)
    safe = jnp.where(is_zero, jnp.ones((), x.dtype), x)
    product = jnp.prod(safe, axis=axes, keepdims=True)
    return scale * jnp.where(zeros == 0, product / safe, jnp.where((zeros == 1) & is_zero, product, 0))


@lowering(reduce.argmax_p)
def _argmax(x, *, axis):
    return jnp.argmax(x, axis=axis)


@lowering(reduce.argmin_p)
def _argmin(x, *, axis):
    return jnp.argmin(x, axis=axis)


_ACCUMULATE = {"add": jax.lax.cumsum, "mul": jax.lax.cumprod, "max": jax.lax.cummax, "min": jax.lax.cummin}


@lowering(scan.scan_p)
def _scan(x, *, op, axis, reverse):
    if x.shape[axis] == 0:
        return x
    return _ACCUMULATE[op](x, axis=axis, reverse=reverse)


def _associative(combine, leaves, axis, reverse):
    """An inclusive scan of `combine` along `axis` (reversed: from the end), in log-depth."""
    if leaves[0].shape[axis] == 0:
        return leaves
    if reverse:
        leaves = [jnp.flip(leaf, axis) for leaf in leaves]
    out = jax.lax.associative_scan(combine, tuple(leaves), axis=axis)
    return [jnp.flip(leaf, axis) for leaf in out] if reverse else list(out)


@lowering(scan.linear_recurrence_p)
def _linear_recurrence(a, b, *, axis, reverse):
    """s_k = a_k s_(k-1) + b_k: pairs (a, b) compose as (a1, b1) then (a2, b2) = (a2 a1, a2 b1 + b2), each product
    0 where a factor is 0 (a zero coefficient restarts whatever came before, inf or NaN; a zero state stays 0
    through coefficients whose product overflowed)."""
    a, b = jnp.broadcast_arrays(a, b)
    dtype = jnp.result_type(a, b)

    def product(x, y):
        return jnp.where((x == 0) | (y == 0), jnp.zeros_like(x), x * y)

    def combine(first, second):
        (a1, b1), (a2, b2) = first, second
        return product(a2, a1), product(a2, b1) + b2

    return _associative(combine, [a.astype(dtype), b.astype(dtype)], axis, reverse)[1]


@lowering(scan.matrix_recurrence_p)
def _matrix_recurrence(a, b, *, reverse):
    """s_k = A_k s_(k-1) + b_k: (A1, b1) then (A2, b2) composes to (A2 A1, A2 b1 + b2)."""
    axis = b.ndim - 2
    highest = jax.lax.Precision.HIGHEST

    def combine(first, second):
        (a1, b1), (a2, b2) = first, second
        return (jnp.matmul(a2, a1, precision=highest),
                jnp.einsum("...ij,...j->...i", a2, b1, precision=highest) + b2)

    return _associative(combine, [a, b], axis, reverse)[1]
