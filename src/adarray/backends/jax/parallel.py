"""JAX lowerings of the general reduce and scan (a user operator, adarray/parallel): the operator's
program is lowered once and batched with `jax.vmap`; the scan is `lax.associative_scan` (log-depth,
the user declared the operator associative) and the reduce a tree of pairwise applications."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ...parallel.general import general_reduce_p, general_scan_p, identity_values
from .interpreter import lower_program
from .registry import lowering


def _batched(op):
    lowered = lower_program(op)
    count = len(op.inputs) // 2
    return jax.vmap(lambda *args: tuple(lowered(*args))), count


@lowering(general_scan_p)
def _general_scan(*xs, op, identity):
    if xs[0].shape[0] == 0:
        return list(xs)
    combine, count = _batched(op)
    return list(jax.lax.associative_scan(lambda first, second: combine(*first, *second), tuple(xs)))


@lowering(general_reduce_p)
def _general_reduce(*xs, op, identity):
    identity = [jnp.asarray(e) for e in identity_values(identity)]
    level = list(xs)
    if level[0].shape[0] == 0:
        return identity
    combine, _ = _batched(op)
    while level[0].shape[0] > 1:
        if level[0].shape[0] % 2:
            level = [jnp.concatenate([x, e[None].astype(x.dtype)]) for x, e in zip(level, identity)]
        level = list(combine(*[x[0::2] for x in level], *[x[1::2] for x in level]))
    return [x[0] for x in level]
