"""adarray.scipy.signal: scipy.signal.convolve, differentiable in both operands (to any order).

    import adarray.scipy.signal as signal
    signal.convolve(x, kernel, mode="same")                 # n-D, as scipy.signal.convolve
    signal.convolve(a, b, axes=([1], [0]), dot_axes=([0], [0]))   # autograd's generalisation

`mode` is SciPy's: 'full' (every overlap, n1 + n2 - 1 long), 'same' (in1's length, centred on the full
result) or 'valid' (full overlaps only, |n1 - n2| + 1 long; one operand must be at least as large as the
other along every axis). `method` 'direct' gathers the sliding windows of one operand and contracts them
with the other (flipped) in one einsum: exact sums, O(output x kernel) work; 'fft' multiplies the
(r)fftn's of the zero-padded operands (O(N log N), with the absolute rounding error of an FFT, about
eps times sum |in1| sum |in2|, as SciPy's fftconvolve); 'auto' takes 'fft' for float operands once the
windows would exceed AUTO_FFT_WINDOW elements, 'direct' otherwise (SciPy's 'auto' picks by a timing model,
so the two may differ in the last bits). Integer operands are convolved directly, in their integer dtype.

autograd's generalisation is keyword-only: `axes=(axes1, axes2)` pairs the axes that are convolved (all
axes, in order, by default), `dot_axes=(dots1, dots2)` the axes that are summed over (a tensordot), and the
other axes of each operand are kept; the result has in1's kept axes, then in2's, then the convolved ones.
Both forms are compositions of gather, einsum and fft, so their derivatives are those operations' rules.
"""
from __future__ import annotations

import math
import string

import numpy as np

from .. import numpy as anp
from ..core.errors import ArgumentError, ShapeError
from ..numpy._core import asvalue, dtype, shape

__all__ = ["convolve"]

AUTO_FFT_WINDOW = 1 << 22  # elements of the gathered windows above which 'auto' convolves by FFT
MODES = ("full", "same", "valid")


def _axis_lists(ndim1, ndim2, axes, dot_axes):
    """(conv1, conv2, dot1, dot2, keep1, keep2) as tuples of non-negative axes, checked."""
    if axes is None:
        if ndim1 != ndim2 and not any(dot_axes):
            raise ShapeError(f"scipy.signal.convolve: in1 and in2 should have the same dimensionality, got {ndim1} "
                             f"and {ndim2} axes")
        axes = (range(ndim1), range(ndim1))
    try:
        conv1, conv2 = (tuple(operator_index(a, n) for a in side) for side, n in zip(axes, (ndim1, ndim2)))
        dot1, dot2 = (tuple(operator_index(a, n) for a in side) for side, n in zip(dot_axes, (ndim1, ndim2)))
    except (TypeError, ValueError):
        raise ArgumentError(f"scipy.signal.convolve: axes {axes!r} and dot_axes {dot_axes!r} must be two "
                            "sequences of axes each") from None
    if len(conv1) != len(conv2) or len(dot1) != len(dot2):
        raise ShapeError(f"scipy.signal.convolve: axes {axes!r} and dot_axes {dot_axes!r} must pair as many axes "
                         "of in1 as of in2")
    for used, which in ((conv1 + dot1, "in1"), (conv2 + dot2, "in2")):
        if len(set(used)) != len(used):
            raise ShapeError(f"scipy.signal.convolve: an axis of {which} is named twice in axes/dot_axes")
    keep1 = tuple(i for i in range(ndim1) if i not in conv1 + dot1)
    keep2 = tuple(i for i in range(ndim2) if i not in conv2 + dot2)
    return conv1, conv2, dot1, dot2, keep1, keep2


def operator_index(axis, ndim):
    axis = int(np.asarray(axis).item()) if not isinstance(axis, int) else axis
    if not -ndim <= axis < ndim:
        raise ValueError(axis)
    return axis % ndim


def _output_range(n1, n2, mode):
    """(start, length) of the result along one convolved axis, in the coordinates of the full result."""
    if mode == "full":
        return 0, n1 + n2 - 1
    if mode == "same":
        return (n2 - 1) // 2, n1
    return min(n1, n2) - 1, abs(n1 - n2) + 1


def _letters(count, used=""):
    free = [c for c in string.ascii_letters if c not in used]
    if count > len(free):
        raise ShapeError(f"scipy.signal.convolve: too many axes ({count}) for one contraction")
    return free[:count]


def _direct(x1, x2, conv1, conv2, dot1, dot2, keep1, keep2, ranges):
    """Sliding windows of one operand (the signal) contracted with the other one flipped (the kernel)."""
    swap = math.prod(shape(x2)[a] for a in conv2) > math.prod(shape(x1)[a] for a in conv1)
    # the kernel is the operand with fewer convolved elements (the windows are then the smaller array)
    (kernel, k_conv, k_dot), (signal, s_conv, s_dot) = ((x1, conv1, dot1), (x2, conv2, dot2)) if swap else (
        (x2, conv2, dot2), (x1, conv1, dot1))
    k_sizes = [shape(kernel)[a] for a in k_conv]
    flipped = kernel[tuple(slice(None, None, -1) if a in k_conv else slice(None) for a in range(len(shape(kernel))))]
    # Zero-pad the signal by (kernel size - 1) on both sides of each convolved axis: then the full result at t
    # is sum_j flipped[j] padded[t + j]. Gather the windows (t, j) axis by axis, from the last axis back, so
    # that the positions of the axes not yet gathered hold.
    widths = [(k_sizes[s_conv.index(a)] - 1,) * 2 if a in s_conv else (0, 0) for a in range(len(shape(signal)))]
    windows = anp.pad(signal, widths)
    for axis in sorted(s_conv, reverse=True):
        k = s_conv.index(axis)
        start, length = ranges[k]
        windows = anp.take(windows, start + np.arange(length)[:, None] + np.arange(k_sizes[k])[None, :], axis=axis)
    letters = iter(_letters(2 * len(s_conv) + len(s_dot) + len(shape(kernel)) + len(shape(signal))))
    t = [next(letters) for _ in s_conv]      # the output position along each convolved axis
    j = [next(letters) for _ in s_conv]      # the position inside the kernel
    d = [next(letters) for _ in s_dot]       # the summed (dot) axes
    kept = {}                                # (operand, axis) -> letter of the axes that are kept

    def letter(operand, axis, conv, dots):
        if axis in conv:
            return j[conv.index(axis)]
        if axis in dots:
            return d[dots.index(axis)]
        kept[operand, axis] = next(letters)
        return kept[operand, axis]

    kernel_spec = "".join(letter("kernel", a, k_conv, k_dot) for a in range(len(shape(kernel))))
    signal_spec = "".join((t[s_conv.index(a)] + j[s_conv.index(a)]) if a in s_conv else letter("signal", a, (), s_dot)
                          for a in range(len(shape(signal))))
    first, second = ("kernel", "signal") if swap else ("signal", "kernel")
    out_spec = "".join([kept[first, a] for a in keep1] + [kept[second, a] for a in keep2] + t)
    return anp.einsum(f"{kernel_spec},{signal_spec}->{out_spec}", flipped, windows)


def _by_fft(x1, x2, conv1, conv2, dot1, dot2, keep1, keep2, ranges):
    """The product of the zero-padded transforms, summed over the dot axes, transformed back and cut."""
    lengths = [shape(x1)[a] + shape(x2)[b] - 1 for a, b in zip(conv1, conv2)]
    complex_values = np.issubdtype(dtype(x1), np.complexfloating) or np.issubdtype(dtype(x2), np.complexfloating)
    forward = anp.fft.fftn if complex_values else anp.fft.rfftn
    # Move each operand's axes into the order (kept, dot, convolved), transform the convolved ones.
    f1 = forward(anp.transpose(x1, keep1 + dot1 + conv1), s=lengths,
                 axes=tuple(range(len(keep1) + len(dot1), len(shape(x1)))))
    f2 = forward(anp.transpose(x2, keep2 + dot2 + conv2), s=lengths,
                 axes=tuple(range(len(keep2) + len(dot2), len(shape(x2)))))
    letters = iter(_letters(len(keep1) + len(keep2) + len(dot1) + len(conv1)))
    k1 = "".join(next(letters) for _ in keep1)
    k2 = "".join(next(letters) for _ in keep2)
    d = "".join(next(letters) for _ in dot1)
    c = "".join(next(letters) for _ in conv1)
    product = anp.einsum(f"{k1}{d}{c},{k2}{d}{c}->{k1}{k2}{c}", f1, f2)
    trailing = tuple(range(len(keep1) + len(keep2), len(keep1) + len(keep2) + len(conv1)))
    full = anp.fft.ifftn(product, s=lengths, axes=trailing) if complex_values else anp.fft.irfftn(
        product, s=lengths, axes=trailing)
    window = tuple([slice(None)] * (len(keep1) + len(keep2)) + [slice(start, start + length)
                                                                   for start, length in ranges])
    return full[window]


def convolve(in1, in2, mode="full", method="auto", *, axes=None, dot_axes=((), ())):
    """The convolution of in1 and in2 (scipy.signal.convolve), with autograd's `axes` and `dot_axes`
    (keyword-only); see the module docstring.

    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    if mode not in MODES:
        raise ArgumentError(f"scipy.signal.convolve: mode must be one of {MODES}, got {mode!r}")
    if method not in ("auto", "direct", "fft"):
        raise ArgumentError(f"scipy.signal.convolve: method must be 'auto', 'direct' or 'fft', got {method!r}")
    x1, x2 = asvalue(in1), asvalue(in2)
    out_dtype = np.result_type(dtype(x1), dtype(x2))
    if out_dtype == np.bool_:
        out_dtype = np.dtype(np.int64)
    x1, x2 = anp.asarray(x1, out_dtype), anp.asarray(x2, out_dtype)
    conv1, conv2, dot1, dot2, keep1, keep2 = _axis_lists(len(shape(x1)), len(shape(x2)), axes, dot_axes)
    for a, b in zip(dot1, dot2):
        if shape(x1)[a] != shape(x2)[b]:
            raise ShapeError(f"scipy.signal.convolve: dot axes {a} of in1 {shape(x1)} and {b} of in2 {shape(x2)} "
                             "differ in length")
    sizes = [(shape(x1)[a], shape(x2)[b]) for a, b in zip(conv1, conv2)]
    if any(0 in pair for pair in sizes):  # SciPy raises too (ValueError, IndexError or a broadcast error)
        raise ShapeError(f"scipy.signal.convolve: in1 {shape(x1)} and in2 {shape(x2)} must not be empty along a "
                         "convolved axis")
    if mode == "valid" and not (all(n1 >= n2 for n1, n2 in sizes) or all(n2 >= n1 for n1, n2 in sizes)):
        raise ShapeError(f"scipy.signal.convolve: for 'valid' mode, one must be at least as large as the other in "
                         f"every convolved dimension; got in1 {shape(x1)} and in2 {shape(x2)}")
    ranges = [_output_range(n1, n2, mode) for n1, n2 in sizes]
    floats = np.issubdtype(out_dtype, np.inexact)
    if method == "fft" and not floats:
        raise ArgumentError(f"scipy.signal.convolve: method='fft' needs float or complex operands, got {out_dtype}")
    windows = math.prod(length * min(n1, n2) for (start, length), (n1, n2) in zip(ranges, sizes))
    large = windows * max(math.prod(shape(x1)[a] for a in keep1 + dot1),
                          math.prod(shape(x2)[a] for a in keep2 + dot2)) > AUTO_FFT_WINDOW
    if method == "fft" or (method == "auto" and floats and large and sizes):
        return _by_fft(x1, x2, conv1, conv2, dot1, dot2, keep1, keep2, ranges)
    return _direct(x1, x2, conv1, conv2, dot1, dot2, keep1, keep2, ranges)
