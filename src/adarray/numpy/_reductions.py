"""Reductions and cumulative operations with `axis` and `keepdims`, NumPy style.

Ties in max/min (and their gradients) go to the first element in row-major order.
"""
from __future__ import annotations

import numpy as np

from ..core.types import is_complex
from ..primitives import complex as cp
from ..primitives import elementwise as ew
from ..primitives import reduce as reductions
from ..primitives import scan as scans
from ..primitives.structural import reshape as reshape_exact
from ..primitives.structural import transpose
from ._core import asvalue, cast, dtype, float_dtype, normalize_axes, normalize_axis, shape
from ._indexing import take_along_axis
from ._math import divide, equal, exp, log, logical_and, multiply, sqrt, subtract, where


def _keep(value, in_shape, axes, keepdims):
    if not keepdims:
        return value
    return reshape_exact(value, tuple(1 if i in axes else n for i, n in enumerate(in_shape)))


def _reduce(x, op, axis, keepdims, name):
    x = asvalue(x)
    axes = normalize_axes(axis, len(shape(x)), name)
    return _keep(reductions.reduce(x, op, axes), shape(x), axes, keepdims)


def sum(x, axis=None, keepdims=False, dtype=None):  # noqa: A001 - NumPy's name
    """Sum over `axis` (all axes by default); booleans and small integers sum as int64."""
    x = asvalue(x)
    target = np.dtype(dtype) if dtype is not None else _accumulator(x)
    return _reduce(cast(x, target), "add", axis, keepdims, "sum")


def prod(x, axis=None, keepdims=False, dtype=None):
    """Product; its gradient is exact with zeros (zero counting, no division by zero)."""
    x = asvalue(x)
    target = np.dtype(dtype) if dtype is not None else _accumulator(x)
    return _reduce(cast(x, target), "mul", axis, keepdims, "prod")


def _accumulator(x):
    kind = dtype(x).kind
    return np.dtype(np.int64) if kind in "bi" else np.dtype(np.uint64) if kind == "u" else dtype(x)


def max(x, axis=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Maximum; at a tie the gradient goes to the first maximal element. Complex values are ordered
    as NumPy orders them: by real part, then by imaginary part."""
    if is_complex(dtype(asvalue(x))):
        return _complex_extremum(asvalue(x), "max", axis, keepdims)
    return _reduce(x, "max", axis, keepdims, "max")


def min(x, axis=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Minimum; at a tie the gradient goes to the first minimal element (complex: see max)."""
    if is_complex(dtype(asvalue(x))):
        return _complex_extremum(asvalue(x), "min", axis, keepdims)
    return _reduce(x, "min", axis, keepdims, "min")


def _complex_extremum(x, op, axis, keepdims):
    """NumPy's lexicographic max/min of complex values: the greatest real part, and among those the
    greatest imaginary part. The winner (the first one at an exact tie) is gathered, so it gets the
    whole derivative."""

    ndim = len(shape(x))
    axes = normalize_axes(axis, ndim, op)
    kept = [i for i in range(ndim) if i not in axes]
    kept_shape = tuple(shape(x)[i] for i in kept)
    flat = reshape_exact(transpose(x, kept + list(axes)), kept_shape + (_count(x, axes),))
    last = len(kept_shape)
    real, imag = cp.real(flat), cp.imag(flat)
    tie = equal(real, reductions.reduce(real, op, (last,))[..., None])
    candidates = where(tie, imag, -np.inf if op == "max" else np.inf)
    winner = logical_and(tie, equal(candidates, reductions.reduce(candidates, op, (last,))[..., None]))
    index = reductions.argmax(winner, last)
    best = reshape_exact(take_along_axis(flat, index[..., None], last), kept_shape)
    return _keep(best, shape(x), axes, keepdims)


amax, amin = max, min


def all(x, axis=None, keepdims=False):  # noqa: A001 - NumPy's name
    return _reduce(cast(x, np.bool_), "and", axis, keepdims, "all")


def any(x, axis=None, keepdims=False):  # noqa: A001 - NumPy's name
    return _reduce(cast(x, np.bool_), "or", axis, keepdims, "any")


def _count(x, axes) -> int:
    return int(np.prod([shape(x)[a] for a in axes], dtype=np.int64))


def mean(x, axis=None, keepdims=False):
    x = asvalue(x)
    x = cast(x, float_dtype(x))
    axes = normalize_axes(axis, len(shape(x)), "mean")
    return divide(sum(x, axes, keepdims), float(_count(x, axes)))


def var(x, axis=None, keepdims=False, ddof=0):
    x = asvalue(x)
    x = cast(x, float_dtype(x))
    axes = normalize_axes(axis, len(shape(x)), "var")
    centered = subtract(x, mean(x, axes, keepdims=True))
    if is_complex(dtype(x)):  # |x - mean|^2, real (NumPy's var of complex values)

        real, imag = cp.real(centered), cp.imag(centered)
        squares = ew.add(ew.mul(real, real), ew.mul(imag, imag))
    else:
        squares = multiply(centered, centered)
    return divide(sum(squares, axes, keepdims), float(_count(x, axes) - ddof))


def std(x, axis=None, keepdims=False, ddof=0):
    return sqrt(var(x, axis, keepdims, ddof))


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) without overflow; the gradient is the softmax.

    Convention: where every element is -inf (the log of an empty sum) the result is -inf with zero
    gradient (no element carries weight), never NaN. +inf and NaN propagate (their gradient is NaN).
    """
    x = asvalue(x)
    x = cast(x, float_dtype(x))
    axes = normalize_axes(axis, len(shape(x)), "logsumexp")
    peak = ew.stop_gradient(max(x, axes, keepdims=True))
    finite = ew.isfinite(peak)
    base = where(finite, peak, 0.0)
    # >= 1 where the peak is finite; elsewhere exp(-inf) = 0, so that no inf (or warning) appears
    total = sum(exp(where(finite, subtract(x, base), -np.inf)), axes, keepdims=True)
    out = where(finite, ew.add(log(where(finite, total, 1.0)), base), peak)
    return out if keepdims else reshape_exact(out, tuple(n for i, n in enumerate(shape(x)) if i not in axes))


def _arg(reducer, x, axis, name):
    x = asvalue(x)
    if axis is None:
        return reducer(reshape_exact(x, (int(np.prod(shape(x), dtype=np.int64)),)), 0)
    return reducer(x, normalize_axis(axis, len(shape(x)), name))


def argmax(x, axis=None):
    """Index of the first maximum (flattened when axis is None)."""
    return _arg(reductions.argmax, x, axis, "argmax")


def argmin(x, axis=None):
    return _arg(reductions.argmin, x, axis, "argmin")


def _flat_or_axis(x, axis, name):
    x = asvalue(x)
    if axis is None:
        return reshape_exact(x, (int(np.prod(shape(x), dtype=np.int64)),)), 0
    return x, normalize_axis(axis, len(shape(x)), name)


def cumsum(x, axis=None):
    x, axis = _flat_or_axis(x, axis, "cumsum")
    return scans.cumsum(cast(x, _accumulator(x)), axis)


def cumprod(x, axis=None):
    """Cumulative product; its gradient is exact with zeros."""
    x, axis = _flat_or_axis(x, axis, "cumprod")
    return scans.cumprod(cast(x, _accumulator(x)), axis)


def cummax(x, axis=None):
    """Running maximum; each output's derivative goes to the first element reaching it."""
    x, axis = _flat_or_axis(x, axis, "cummax")
    return scans.cumulative(x, "max", axis)


def cummin(x, axis=None):
    """Running minimum; each output's derivative goes to the first element reaching it."""
    x, axis = _flat_or_axis(x, axis, "cummin")
    return scans.cumulative(x, "min", axis)


def logcumsumexp(x, axis=None, reverse=False):
    """log(cumsum(exp(x))), exact over any range of values: each prefix is shifted by its own running
    maximum m_k, so with c_k = sum_(j<=k) exp(x_j - m_k), a linear recurrence with factors at most 1,
        c_k = exp(m_(k-1) - m_k) c_(k-1) + exp(x_k - m_k),     result m_k + log(c_k).
    A prefix of -inf only gives -inf with zero gradient (as logsumexp does); +inf and NaN propagate.
    """
    x, axis = _flat_or_axis(x, axis, "logcumsumexp")
    x = cast(x, float_dtype(x))
    if shape(x)[axis] == 0:
        return x
    peak = ew.stop_gradient(scans.cumulative(x, "max", axis, reverse))
    finite = ew.isfinite(peak)
    base = where(finite, peak, 0.0)
    before_base = scans.shift(base, axis, reverse)
    before_finite = scans.shift(finite, axis, reverse)
    decay = exp(where(ew.logical_and(finite, before_finite), subtract(before_base, base), -np.inf))
    total = scans.linear_recurrence(decay, exp(where(finite, subtract(x, base), -np.inf)), axis, reverse)
    return where(finite, ew.add(log(where(finite, total, 1.0)), base), peak)


def count_nonzero(a, axis=None, *, keepdims=False):
    """How many elements are nonzero (an integer count, also on traced values)."""
    a = asvalue(a)
    return sum(ew.ne(a, np.zeros(shape(a), dtype(a))) if dtype(a) != np.bool_ else a, axis=axis,
                keepdims=keepdims)
