"""JAX lowerings of the sorting family (primitives/sort.py)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ...primitives import sort
from .registry import lowering


@lowering(sort.searchsorted_p)
def _searchsorted(sorted_seq, values, *, side):
    search = lambda seq, v: jnp.searchsorted(seq, v, side=side)  # noqa: E731
    for _ in range(sorted_seq.ndim - 1):  # one binary search per row
        search = jax.vmap(search)
    return search(sorted_seq, values).astype(jnp.int64)


@lowering(sort.argsort_p)
def _argsort(x, *, axis):
    return jnp.argsort(x, axis=axis, stable=True)
