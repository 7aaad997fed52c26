"""sqrtm and logm on the JAX backend: on the host (`jax.pure_callback` into scipy.linalg through the NumPy
implementation, which raises LinAlgError for a matrix whose square root or logarithm is not real).

Why not XLA: JAX 0.10 has no logm. `jax.scipy.linalg.sqrtm` exists but is CPU only (a complex Schur
decomposition XLA implements for the CPU alone, so it would not take the program to a GPU or TPU), returns
complex results, and cannot raise for a matrix without a real square root (diag(-1, 2) gives i in the result,
which a real lowering would drop silently). Where the root is real it agrees with SciPy to 3e-15 relative
(n <= 6), so it would be the way once XLA has a real Schur decomposition on every device.
"""
from __future__ import annotations

from ...primitives.sqrtm_logm import logm_p, sqrtm_p
from .registry import host_callback

host_callback(sqrtm_p, logm_p)
