"""adarray.numpy.fft: numpy.fft on traced values and plain arrays, with derivatives.

    import adarray.numpy as anp
    spectrum = anp.fft.rfft(signal)                  # real -> half spectrum
    power = anp.sum(anp.abs(spectrum) ** 2)          # ad.grad(power)(signal) works

fft, ifft, rfft, irfft, hfft, ihfft and their 2-d and n-d versions take numpy.fft's `n` / `s`
(crop or zero-pad each transformed axis), `axis` / `axes` and `norm` ("backward", "ortho",
"forward"); fftshift, ifftshift, fftfreq and rfftfreq as well. Values are numpy.fft's (complex64 in,
complex64 out). Every transform is one linear primitive (adarray.primitives.fft), so derivatives of
any order cost one transform each; rfft and irfft have their own transposes (not each other).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError, ShapeError
from ..core.types import complex_dtype, is_complex
from ..primitives import fft as fft_primitives
from ..primitives.complex import conj
from ..tracing import ARRAY_METHODS
from ._core import asvalue, cast, dtype, float_dtype, normalize_axes, normalize_axis, shape
from ._manipulation import roll
from ._math import divide

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift", "ihfft",
           "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]


def _norm(norm, name):
    norm = "backward" if norm is None else norm
    if norm not in fft_primitives.NORMS:
        raise ArgumentError(f"{name}: norm must be None, 'backward', 'ortho' or 'forward', got {norm!r}")
    return norm


def _complex(a):
    a = asvalue(a)
    return cast(a, complex_dtype(float_dtype(a)))


def _real(a, name):
    a = asvalue(a)
    if is_complex(dtype(a)):
        raise ShapeError(f"{name}: needs a real array, got {dtype(a)} (no silent cast to real: take anp.real first, "
                         "or use fft for complex input)")
    return cast(a, float_dtype(a))


def _length(n, name):
    if int(n) < 1:
        raise ShapeError(f"{name}: invalid number of FFT data points ({n}) specified")
    return int(n)


def _axes_and_lengths(a, s, axes, name):
    """numpy.fft's rules: axes default to the last len(s) axes (all axes without s); s to their sizes."""
    ndim = len(shape(a))
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    axes = normalize_axes(tuple(axes), ndim, name)
    if s is None:
        return axes, [shape(a)[i] for i in axes]
    if len(s) != len(axes):
        raise ShapeError(f"{name}: s {tuple(s)} and axes {axes} have different lengths")
    return axes, [_length(n, name) if n != -1 else shape(a)[i] for n, i in zip(s, axes)]


def _transform(x, kind, axes, lengths, norm, name):
    if not axes:
        return x
    for axis, length in zip(axes, lengths):
        x = fft_primitives.resize(x, axis, length)
    return fft_primitives.fft(x, kind, axes, _norm(norm, name))


# --- one axis --------------------------------------------------------------------------------------

def fft(a, n=None, axis=-1, norm=None):
    """The discrete Fourier transform along `axis` (numpy.fft.fft), cropped or zero-padded to n."""
    x = _complex(a)
    axis = normalize_axis(axis, len(shape(x)), "fft")
    return _transform(x, "fft", (axis,), [shape(x)[axis] if n is None else _length(n, "fft")], norm, "fft")


def ifft(a, n=None, axis=-1, norm=None):
    """The inverse transform along `axis` (numpy.fft.ifft)."""
    x = _complex(a)
    axis = normalize_axis(axis, len(shape(x)), "ifft")
    return _transform(x, "ifft", (axis,), [shape(x)[axis] if n is None else _length(n, "ifft")], norm, "ifft")


def rfft(a, n=None, axis=-1, norm=None):
    """The transform of a real signal: the n//2 + 1 nonnegative frequencies (numpy.fft.rfft)."""
    x = _real(a, "rfft")
    axis = normalize_axis(axis, len(shape(x)), "rfft")
    return _transform(x, "rfft", (axis,), [shape(x)[axis] if n is None else _length(n, "rfft")], norm, "rfft")


def irfft(a, n=None, axis=-1, norm=None):
    """The real signal of length n (default 2 (m - 1)) whose rfft is `a` (numpy.fft.irfft)."""
    return irfftn(a, None if n is None else (n,), (axis,), norm, name="irfft")


def hfft(a, n=None, axis=-1, norm=None):
    """The transform of a Hermitian-symmetric signal given by its first half: real (numpy.fft.hfft)."""
    return irfft(conj(_complex(a)), n, axis, fft_primitives.DUAL_NORM[_norm(norm, "hfft")])


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of hfft: the half spectrum of a real signal (numpy.fft.ihfft)."""
    return conj(rfft(a, n, axis, fft_primitives.DUAL_NORM[_norm(norm, "ihfft")]))


# --- several axes ------------------------------------------------------------------------------------

def fftn(a, s=None, axes=None, norm=None):
    """The n-dimensional transform over `axes` (all by default), each cropped or padded to s (numpy.fft.fftn)."""
    x = _complex(a)
    axes, lengths = _axes_and_lengths(x, s, axes, "fftn")
    return _transform(x, "fft", axes, lengths, norm, "fftn")


def ifftn(a, s=None, axes=None, norm=None):
    """The n-dimensional inverse transform (numpy.fft.ifftn)."""
    x = _complex(a)
    axes, lengths = _axes_and_lengths(x, s, axes, "ifftn")
    return _transform(x, "ifft", axes, lengths, norm, "ifftn")


def rfftn(a, s=None, axes=None, norm=None):
    """rfft over the last of `axes`, then fft over the others (numpy.fft.rfftn)."""
    x = _real(a, "rfftn")
    axes, lengths = _axes_and_lengths(x, s, axes, "rfftn")
    return _transform(x, "rfft", axes, lengths, norm, "rfftn")


def irfftn(a, s=None, axes=None, norm=None, *, name="irfftn"):
    """The inverse of rfftn: ifft over all but the last of `axes`, then irfft over the last (its length
    s[-1], by default 2 (m - 1)) (numpy.fft.irfftn)."""
    x = _complex(a)
    axes, lengths = _axes_and_lengths(x, s, axes, name)
    if not axes:
        return x
    if s is None:
        lengths[-1] = 2 * (shape(x)[axes[-1]] - 1)
    n = _length(lengths[-1], name)
    for axis, length in zip(axes, lengths[:-1] + [n // 2 + 1]):
        x = fft_primitives.resize(x, axis, length)
    return fft_primitives.fft(x, "irfft", axes, _norm(norm, name), n)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return fftn(a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return ifftn(a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return irfftn(a, s, axes, norm, name="irfft2")


for _fn, _base in ((fft2, "fftn"), (ifft2, "ifftn"), (rfft2, "rfftn"), (irfft2, "irfftn")):
    _fn.__doc__ = f"{_base} over the last two axes (numpy.fft.{_fn.__name__})."


# --- shifts and frequencies --------------------------------------------------------------------------

def _shift(x, axes, sign, name):
    x = asvalue(x)
    axes = normalize_axes(axes, len(shape(x)), name)
    if not axes:
        return x
    return roll(x, tuple(sign * (shape(x)[a] // 2) for a in axes), axes)


def fftshift(x, axes=None):
    """The zero frequency moved to the centre (numpy.fft.fftshift)."""
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x, axes=None):
    """The inverse of fftshift (numpy.fft.ifftshift)."""
    return _shift(x, axes, -1, "ifftshift")


def _scaled(frequencies, d):
    return frequencies / d if isinstance(d, (int, float, np.number)) else divide(frequencies, d)


def fftfreq(n, d=1.0):
    """The sample frequencies of fft's bins for n samples of spacing d (numpy.fft.fftfreq)."""
    return _scaled(np.fft.fftfreq(int(n), 1.0), d)


def rfftfreq(n, d=1.0):
    """The sample frequencies of rfft's bins (numpy.fft.rfftfreq)."""
    return _scaled(np.fft.rfftfreq(int(n), 1.0), d)


# numpy.fft's functions called on a traced value dispatch here (NumPy's __array_function__ protocol)
ARRAY_METHODS.update({f"function.{name}": globals()[name] for name in __all__ if not name.endswith("freq")})
