"""The `kernel` primitive on the JAX backend: the scalar program is lowered like any program
(its `cond` becomes `lax.switch`, its `while` a `lax.while_loop`) and mapped over the elements
with `jax.vmap`, which turns the branches into selects and runs each loop until every element
is done. XLA then fuses the whole kernel into one loop over the elements."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ...kernels.primitive import kernel_p
from .interpreter import lower_program
from .registry import lowering


@lowering(kernel_p)
def _kernel(*args, kernel, name):
    shape = jnp.broadcast_shapes(*[a.shape for a in args]) if args else ()
    scalar = lower_program(kernel)
    flat = [jnp.broadcast_to(a, shape).reshape(-1) if a.ndim else a for a in args]
    axes = [0 if a.ndim else None for a in args]
    if not any(a == 0 for a in axes):  # every argument is a scalar: nothing to map over
        outs = scalar(*flat)
    else:
        outs = jax.vmap(lambda *xs: tuple(scalar(*xs)), in_axes=axes)(*flat)
    return [jnp.asarray(o).astype(a.dtype).reshape(shape) for o, a in zip(outs, kernel.out_avals)]
