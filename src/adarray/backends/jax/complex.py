"""JAX lowerings of the complex-value primitives (primitives/complex.py) and of the discrete
Fourier transforms (primitives/fft.py)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ...primitives import complex as complex_values
from ...primitives import fft
from .registry import lowering


@lowering(complex_values.real_p)
def _real(x):
    return jnp.real(x)


@lowering(complex_values.imag_p)
def _imag(x):
    return jnp.imag(x)


@lowering(complex_values.conj_p)
def _conj(x):
    return jnp.conj(x)


@lowering(complex_values.complex_p)
def _complex(x, y):
    return jax.lax.complex(x, y)


@lowering(fft.fft_p)
def _fft(x, *, kind, axes, norm, n=None):
    if kind == "fft":
        return jnp.fft.fftn(x, axes=axes, norm=norm)
    if kind == "ifft":
        return jnp.fft.ifftn(x, axes=axes, norm=norm)
    if kind == "rfft":
        return jnp.fft.rfftn(x, axes=axes, norm=norm)
    lengths = [x.shape[a] for a in axes[:-1]] + [n]
    return jnp.fft.irfftn(x, s=lengths, axes=axes, norm=norm)
