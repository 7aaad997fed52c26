"""solve_sylvester on the JAX backend (primitives/sylvester.py), natively with what XLA has on every device:
A X + X B = Q is the linear system (A (x) I_n + I_m (x) B^T) vec(X) = vec(Q) (row-major vec, (x) the Kronecker
product), solved by LU (jnp.linalg.solve), batched over the leading axes. O((m n)^3) work: fine for the small
and medium equations this backend meets (m = n = 30 is a 900 x 900 solve); the NumPy backend's Bartels-Stewart
(Schur forms, which XLA has on CPUs only) is O(m^3 + n^3)."""
from __future__ import annotations

import jax.numpy as jnp

from ...primitives.sylvester import solve_sylvester_p
from .registry import lowering


@lowering(solve_sylvester_p)
def _solve_sylvester(a, b, q):
    m, n = a.shape[-1], b.shape[-1]
    if q.size == 0:
        return jnp.zeros(q.shape, q.dtype)
    eye_m, eye_n = jnp.eye(m, dtype=q.dtype), jnp.eye(n, dtype=q.dtype)
    left = jnp.einsum("...ik,jl->...ijkl", a, eye_n)                          # (A X)_ij = A_ik X_kj
    right = jnp.einsum("ik,...lj->...ijkl", eye_m, b)                         # (X B)_ij = X_il B_lj
    system = (left + right).reshape(q.shape[:-2] + (m * n, m * n))
    flat = q.reshape(q.shape[:-2] + (m * n, 1))
    return jnp.linalg.solve(system, flat).reshape(q.shape)
