"""Native discrete Fourier transforms for the generated code, in complex128 arithmetic, one axis at a time.

A transform of length n along an axis: an array is viewed as (outer, n, inner) (C order) and each line is
copied into a scratch vector, transformed and written back:

* n <= 64: the DFT as a sum, with twiddles exp(-2 pi i (jk mod n) / n) from a table of n exact cosines and sines;
* n a power of two: iterative radix-2 Cooley-Tukey (bit reversal, then log2 n butterfly passes);
* otherwise Bluestein's chirp-z, from jk = (j^2 + k^2 - (k - j)^2) / 2: X_k = c_k sum_j (x_j c_j) conj(c_(k-j)),
  c_m = exp(s i pi m^2 / n) (s the transform's sign) with m^2 reduced mod 2n in integers (exact angles), the
  convolution by power-of-two transforms of length >= 2n - 1.

`complex_axis` runs the complex transform (forward e^-, inverse e^+) scaled by `scale`, and keeps as many bins as
its output has (n // 2 + 1 of a real line's transform: rfft); `real_inverse_axis` extends n // 2 + 1 bins
Hermitian-symmetrically to n (the imaginary parts of the first bin, and of the last for an even n, ignored as
numpy.fft does) and keeps the real part of the inverse transform (irfft). The scaling by numpy.fft's norm is
the caller's (per axis: 1, 1 / n or 1 / sqrt n).

This module imports numba: only generated code imports it.
"""
from __future__ import annotations

import math

import numba
import numpy as np

_JIT = dict(cache=True, error_model="numpy", fastmath=False)
DIRECT_MAX = 64


@numba.njit(**_JIT)
def _twiddles(n, sign):
    """exp(sign 2 pi i m / n) for m < n, each from its own cosine and sine."""
    out = np.empty(n, np.complex128)
    for m in range(n):
        angle = 2.0 * math.pi * m / n
        out[m] = complex(math.cos(angle), sign * math.sin(angle))
    return out


@numba.njit(**_JIT)
def _direct(line, out, table):
    n = line.size
    for k in range(n):
        total = 0j
        m = 0
        for j in range(n):
            total += line[j] * table[m]
            m += k
            if m >= n:
                m -= n
        out[k] = total


@numba.njit(**_JIT)
def _radix2(line, table):
    """In place, for n a power of two; table: the n twiddles of the transform's sign."""
    n = line.size
    j = 0
    for i in range(1, n):  # bit reversal
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            line[i], line[j] = line[j], line[i]
    length = 2
    while length <= n:
        half = length // 2
        stride = n // length
        for start in range(0, n, length):
            for k in range(half):
                w = table[k * stride]
                u = line[start + k]
                v = line[start + k + half] * w
                line[start + k] = u + v
                line[start + k + half] = u - v
        length *= 2


@numba.njit(**_JIT)
def _chirp(n, sign):
    """exp(sign i pi m^2 / n) for m < n, m^2 reduced mod 2n exactly."""
    out = np.empty(n, np.complex128)
    for m in range(n):
        r = (m * m) % (2 * n)
        angle = math.pi * r / n
        out[m] = complex(math.cos(angle), sign * math.sin(angle))
    return out


@numba.njit(**_JIT)
def _bluestein(line, out, sign):
    n = line.size
    size = 1
    while size < 2 * n - 1:
        size *= 2
    chirp = _chirp(n, sign)
    forward = _twiddles(size, -1.0)
    backward = _twiddles(size, 1.0)
    a = np.zeros(size, np.complex128)
    b = np.zeros(size, np.complex128)
    for j in range(n):
        a[j] = line[j] * chirp[j]
    b[0] = np.conj(chirp[0])
    for m in range(1, n):
        b[m] = np.conj(chirp[m])
        b[size - m] = np.conj(chirp[m])
    _radix2(a, forward)
    _radix2(b, forward)
    for i in range(size):
        a[i] *= b[i]
    _radix2(a, backward)
    for k in range(n):
        out[k] = a[k] / size * chirp[k]


@numba.njit(**_JIT)
def _transform(line, out, sign):
    """The DFT of `line` with exp(sign 2 pi i jk / n) into `out`."""
    n = line.size
    if n <= DIRECT_MAX:
        _direct(line, out, _twiddles(n, sign))
    elif n & (n - 1) == 0:
        out[:] = line
        _radix2(out, _twiddles(n, sign))
    else:
        _bluestein(line, out, sign)


@numba.njit(**_JIT)
def complex_axis(x, out, inverse, scale):
    """out[o, k, i] = scale * DFT(x[o, :, i])[k] for (outer, n, inner) arrays x, for the first out.shape[1] bins
    k (n of them; n // 2 + 1 for a real x's rfft)."""
    outer, n, inner = x.shape
    bins = out.shape[1]
    sign = 1.0 if inverse else -1.0
    line = np.empty(n, np.complex128)
    result = np.empty(n, np.complex128)
    for o in range(outer):
        for i in range(inner):
            for j in range(n):
                line[j] = x[o, j, i]
            _transform(line, result, sign)
            for k in range(bins):
                out[o, k, i] = result[k] * scale


@numba.njit(**_JIT)
def real_inverse_axis(x, out, scale):
    """Real lines of length n from their n // 2 + 1 bins: x (outer, n // 2 + 1, inner), out (outer, n, inner)."""
    outer, bins, inner = x.shape
    n = out.shape[1]
    line = np.empty(n, np.complex128)
    result = np.empty(n, np.complex128)
    for o in range(outer):
        for i in range(inner):
            for k in range(n // 2 + 1):
                line[k] = x[o, k, i] if k < bins else 0j
            line[0] = line[0].real
            if n % 2 == 0:
                line[n // 2] = line[n // 2].real
            for k in range(n // 2 + 1, n):
                line[k] = np.conj(line[n - k])
            _transform(line, result, 1.0)
            for j in range(n):
                out[o, j, i] = result[j].real * scale
