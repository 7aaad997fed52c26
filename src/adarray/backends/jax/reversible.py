"""`reversible` and `reversible_grad` on the JAX backend: on the host (`jax.pure_callback` into the NumPy
backend's implementation, which runs the statement program as generated Python, or Numba's native loops).

Lowering the statement language (in-place updates of elements, loops, the run-time reversibility checks
that raise ReversibilityError naming the line) to `lax.fori_loop`s over functional updates is issue 15's
plan but not done: a check cannot raise inside XLA, and element-wise in-place updates would become one
scatter per statement. The callback keeps the values and the errors exact; the data crosses to the host.
"""
from __future__ import annotations

from ...reversible.primitive import reversible_grad_p, reversible_p
from .registry import host_callback

host_callback(reversible_p, reversible_grad_p)
