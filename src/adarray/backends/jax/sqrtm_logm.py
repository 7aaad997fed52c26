"""sqrtm and logm on the JAX backend: on the host (`jax.pure_callback` into scipy.linalg through
the NumPy implementation, which raises LinAlgError for a result that is not real). JAX has no logm,
and its sqrtm (CPU only) returns complex results by a different algorithm."""
from __future__ import annotations

from ...primitives.sqrtm_logm import logm_p, sqrtm_p
from .registry import host_callback

host_callback(sqrtm_p, logm_p)
