"""fft[kind, axes, norm(, n)]: discrete Fourier transforms over static axes, as numpy.fft computes them.

    kind    operand -> result                       over `axes` (the real axis of rfft/irfft is the last)
    fft     complex -> complex                      F x (the DFT, F_jk = exp(-2 pi i jk / N))
    ifft    complex -> complex                      the inverse, conj(F) y / N
    rfft    real (.., n) -> complex (.., n//2 + 1)  F x without the redundant (Hermitian) half
    irfft   complex (.., n//2 + 1) -> real (.., n)  the inverse of rfft; `n` is the output length

`norm` scales as NumPy's: "backward" (1 forward, 1/N inverse), "ortho" (1/sqrt(N) both ways),
"forward" (1/N forward, 1 inverse), N the product of the transformed lengths. adarray.numpy.fft
crops or zero-pads the operand first (its `n=` and `s=`), so every length here is the operand's.

All four are linear; reverse mode is the transpose under JAX's real pairing Re(sum u * v) (no
conjugation):
  * fft, ifft: F is symmetric, so each is its own transpose (same kind, same norm);
  * rfft = slice(F x) over a real x: its transpose is real(F pad(c)) (pad the half spectrum with
    zeros, the full transform, the real part);
  * irfft: each bin k of the half spectrum stands for itself and, except the first and (n even)
    the last, for its conjugate mirror n - k, so its transpose weighs the bins of rfft by
    w = (1, 2, ..., 2, 1 if n is even): conj(w * rfft(c)) with the dual norm (1/N where irfft
    divides by N). The two real transforms are not each other's transpose.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.types import complex_dtype, is_complex, is_real_float, real_dtype
from .complex import conj, real
from .elementwise import mul
from .rules import aval_of_value, linear
from .structural import broadcast_in_dim, slice_array, unslice

KINDS = ("fft", "ifft", "rfft", "irfft")
NORMS = ("backward", "ortho", "forward")
DUAL_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _fft_abstract_eval(x, *, kind, axes, norm, n=None):
    if kind not in KINDS:
        raise ShapeError(f"fft: unknown kind {kind!r}; known: {', '.join(KINDS)}")
    if norm not in NORMS:
        raise ShapeError(f"fft[{kind}]: norm must be one of {', '.join(NORMS)}, got {norm!r}")
    if not axes or len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"fft[{kind}]: axes {tuple(axes)} must be distinct axes of {x}")
    if any(x.shape[a] == 0 for a in axes) and kind != "irfft":
        raise ShapeError(f"fft[{kind}]: cannot transform the empty axes of {x} (axes {tuple(axes)})")
    last = axes[-1]
    if kind in ("fft", "ifft"):
        if not is_complex(x.dtype):
            raise ShapeError(f"fft[{kind}]: needs a complex operand, got {x}")
        return x
    if kind == "rfft":
        if not is_real_float(x.dtype):
            raise ShapeError(f"fft[rfft]: needs a real floating-point operand, got {x}")
        shape = list(x.shape)
        shape[last] = x.shape[last] // 2 + 1
        return x.update(shape=shape, dtype=complex_dtype(x.dtype))
    if not is_complex(x.dtype):
        raise ShapeError(f"fft[irfft]: needs a complex operand, got {x}")
    if n is None or n < 1 or x.shape[last] != n // 2 + 1 or any(x.shape[a] == 0 for a in axes[:-1]):
        raise ShapeError(f"fft[irfft]: an output length n >= 1 needs {n // 2 + 1 if n else '?'} bins on axis {last} "
                         f"and nonempty other axes, got n={n} and {x}")
    shape = list(x.shape)
    shape[last] = n
    return x.update(shape=shape, dtype=real_dtype(x.dtype))


fft_p = Primitive("fft", _fft_abstract_eval)


def fft(x, kind: str, axes, norm: str = "backward", n=None):
    """The transform `kind` over `axes` (see the module docstring); `n` only for irfft."""
    params = {"kind": kind, "axes": tuple(int(a) for a in axes), "norm": norm}
    if kind == "irfft":
        params["n"] = int(n)
    return fft_p.bind(x, **params)


def resize(x, axis: int, length: int):
    """x cropped, or zero-padded at the end, to `length` along `axis` (numpy.fft's n= and s=)."""
    shape = np.shape(x)
    size = shape[axis]
    if length == size:
        return x
    if length < size:
        stops = tuple(length if i == axis else n for i, n in enumerate(shape))
        return slice_array(x, (0,) * len(shape), stops, (1,) * len(shape))
    target = tuple(length if i == axis else n for i, n in enumerate(shape))
    return unslice(x, target, starts=(0,) * len(shape), stops=tuple(shape), steps=(1,) * len(shape))


def _hermitian_weights(aval, axis: int, n: int):
    """w = (1, 2, ..., 2, 1 if n is even) along `axis`, broadcast to the half spectrum `aval`."""
    bins = n // 2 + 1
    weights = np.full(bins, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return broadcast_in_dim(weights.astype(aval.dtype), aval.shape, (axis,))


def _fft_transpose(cotangent, avals, *, kind, axes, norm, n=None):
    (aval,) = avals
    if kind in ("fft", "ifft"):
        return [fft(cotangent, kind, axes, norm)]
    last = axes[-1]
    if kind == "rfft":
        padded = resize(cotangent, last, aval.shape[last])
        return [real(fft(padded, "fft", axes, norm))]
    half = fft(cotangent, "rfft", axes, DUAL_NORM[norm])
    return [conj(mul(_hermitian_weights(aval_of_value(half), last, n), half))]


linear(fft_p, _fft_transpose)


def _fft_batch(args, batched, size, *, kind, axes, norm, n=None):
    (x,) = args
    return fft(x, kind, tuple(a + 1 for a in axes), norm, n), True


fft_p.batch = _fft_batch


def _complex_normal(rng, shape):
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


def _fft_sampler(rng):
    cases = []
    for norm in NORMS:
        cases.append(([_complex_normal(rng, (5,))], {"kind": "fft", "axes": (0,), "norm": norm}))
        cases.append(([_complex_normal(rng, (3, 4))], {"kind": "ifft", "axes": (1, 0), "norm": norm}))
        cases.append(([rng.normal(size=(2, 6))], {"kind": "rfft", "axes": (1,), "norm": norm}))
        cases.append(([_complex_normal(rng, (4, 3))], {"kind": "irfft", "axes": (1,), "norm": norm, "n": 5}))
    cases += [
        ([rng.normal(size=(3, 5))], {"kind": "rfft", "axes": (1, 0), "norm": "backward"}),
        ([_complex_normal(rng, (3, 4))], {"kind": "irfft", "axes": (0, 1), "norm": "backward", "n": 6}),
        ([_complex_normal(rng, (2, 3)).astype(np.complex64)], {"kind": "fft", "axes": (0, 1), "norm": "ortho"}),
        ([rng.normal(size=(0, 4))], {"kind": "rfft", "axes": (1,), "norm": "backward"}),
        ([_complex_normal(rng, (1,))], {"kind": "irfft", "axes": (0,), "norm": "backward", "n": 1}),
    ]
    return cases


fft_p.sample = _fft_sampler
