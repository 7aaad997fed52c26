"""Order statistics, weighted averages, covariance, and the NaN-ignoring reductions.

quantile/percentile/median (and their nan* versions) sort along the reduced axes and interpolate
between neighbouring order statistics with NumPy's formulas, so they are differentiable in the data
(through the sort's permutation) and, for the continuous methods, in q. The nan* versions count the
non-NaN values of each slice (a traced count works: the positions become traced gather indices).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError, ShapeError, UnsupportedError
from ..primitives import elementwise as ew
from ..tracing import Tracer
from ._contractions import matmul
from ._core import asvalue, cast, dtype, float_dtype, normalize_axes, normalize_axis, shape
from ._indexing import take_along_axis
from ._math import (
    add,
    ceil,
    divide,
    equal,
    floor,
    greater_equal,
    isnan,
    less,
    maximum,
    minimum,
    multiply,
    round,
    sqrt,
    subtract,
    where,
)
from ._matrix import diag
from ._reductions import any as any_
from ._reductions import argmax, argmin, cumprod, cumsum, mean
from ._reductions import max as max_
from ._reductions import min as min_
from ._reductions import prod as prod_
from ._reductions import sum as sum_
from ._shape import broadcast_to, concatenate, moveaxis, reshape, squeeze, transpose
from ._sorting import sort

# (alpha, beta) of the continuous methods of Hyndman and Fan (1996), as NumPy's table has them
_PLOTTING_POSITIONS = {
    "weibull": (0.0, 0.0), "hazen": (0.5, 0.5), "interpolated_inverted_cdf": (0.0, 1.0),
    "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0),
}
_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", *_PLOTTING_POSITIONS)


def _merged_last(a, axis, name):
    """a with the reduced axes moved last and merged into one: (rest..., n), and the kept shape."""
    axes = normalize_axes(axis, len(shape(a)), name)
    kept = [i for i in range(len(shape(a))) if i not in axes]
    moved = transpose(a, kept + list(axes))
    rest = tuple(shape(a)[i] for i in kept)
    return reshape(moved, rest + (int(np.prod([shape(a)[i] for i in axes], dtype=np.int64)),)), rest, axes


def _lerp(low, high, gamma):
    """NumPy's interpolation: a + (b - a) t, or b - (b - a)(1 - t) for t >= 0.5 (exact at both ends)."""
    diff = subtract(high, low)
    return where(greater_equal(gamma, 0.5), subtract(high, multiply(diff, subtract(1.0, gamma))),
                 add(low, multiply(diff, gamma)))


def _order_statistics(ordered, q, count, method, name):
    """Quantiles q (k,) of the sorted rows `ordered` (rest..., n) holding `count` (rest..., 1) valid
    values first: (rest..., k)."""
    n = shape(ordered)[-1]
    last = subtract(count, 1)
    if method in _PLOTTING_POSITIONS:
        alpha, beta = _PLOTTING_POSITIONS[method]
        virtual = subtract(add(multiply(count, q), add(multiply(q, 1.0 - alpha - beta), alpha)), 1.0)
    else:
        virtual = multiply(last, q)
    if method in ("lower", "higher", "nearest"):
        rounding = {"lower": floor, "higher": ceil, "nearest": round}[method]
        index = cast(minimum(maximum(rounding(virtual), 0.0), maximum(last, 0)), np.int64)
        return take_along_axis(ordered, minimum(index, n - 1), -1)
    previous = floor(virtual)
    above, below = greater_equal(virtual, last), less(virtual, 0.0)
    bounded = cast(where(above, maximum(last, 0), where(below, 0.0, previous)), np.int64)
    following = cast(where(above, maximum(last, 0), where(below, 0.0, add(previous, 1.0))), np.int64)
    gamma = subtract(virtual, previous)
    if method == "midpoint":
        gamma = where(equal(gamma, 0.0), 0.0, 0.5)
    low = take_along_axis(ordered, minimum(bounded, n - 1), -1)
    high = take_along_axis(ordered, minimum(following, n - 1), -1)
    return _lerp(low, high, cast(gamma, dtype(low)))


def _quantile(a, q, axis, method, keepdims, name, ignore_nan):
    if method not in _METHODS:
        raise UnsupportedError(f"{name}: method={method!r} is not supported; supported: {', '.join(_METHODS)}")
    a = asvalue(a)
    index_method = method in ("lower", "higher", "nearest")
    if not index_method or not np.issubdtype(dtype(a), np.integer):
        a = cast(a, float_dtype(a, q))
    q = asvalue(q)
    if not isinstance(q, Tracer) and np.size(q) and (np.min(q) < 0 or np.max(q) > 1):
        raise ArgumentError(f"{name}: quantiles must be in [0, 1], got {np.asarray(q)}")
    merged, rest, axes = _merged_last(a, axis, name)
    if shape(merged)[-1] == 0:
        raise ShapeError(f"{name}: cannot take a quantile of an empty slice (shape {shape(a)}, axis {axis})")
    ordered = sort(merged, axis=-1)
    n = shape(ordered)[-1]
    q_flat = cast(reshape(q, -1), float_dtype(a, q))
    if ignore_nan:
        count = sum_(ew.logical_not(isnan(ordered)), axis=-1, keepdims=True)
        count = cast(count, dtype(q_flat))
    else:
        count = np.full(rest + (1,), float(n), dtype(q_flat))
    result = _order_statistics(ordered, q_flat, count, method, name)
    if not ignore_nan and np.issubdtype(dtype(ordered), np.floating):
        # NaNs sort last: a slice holding one has the NaN quantile, as in NumPy
        last = take_along_axis(ordered, np.full(rest + (1,), n - 1, np.int64), -1)
        result = where(isnan(last), np.nan, result)
    result = moveaxis(result, -1, 0)
    if keepdims:
        full = tuple(1 if i in axes else s for i, s in enumerate(shape(a)))
        return reshape(result, tuple(shape(q)) + full)
    return reshape(result, tuple(shape(q)) + rest)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             interpolation=None):
    """The q-th quantiles (q in [0, 1]) along `axis` with NumPy's methods (default 'linear').

    The result has q's shape first, then the kept axes. Differentiable in `a` (and in q for the
    continuous methods); a slice holding NaN gives NaN.
    """
    return _quantile(a, q, axis, interpolation or method, keepdims, "quantile", ignore_nan=False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               interpolation=None):
    """The q-th percentiles (q in [0, 100]); see quantile."""
    return _quantile(a, divide(q, 100), axis, interpolation or method, keepdims, "percentile", ignore_nan=False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                interpolation=None):
    """quantile ignoring NaNs (an all-NaN slice gives NaN)."""
    return _quantile(a, q, axis, interpolation or method, keepdims, "nanquantile", ignore_nan=True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  interpolation=None):
    """percentile ignoring NaNs."""
    return _quantile(a, divide(q, 100), axis, interpolation or method, keepdims, "nanpercentile", ignore_nan=True)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along `axis`: the middle value, or the mean of the two middle values (NumPy's
    formula, so each of the two gets half the derivative)."""
    a = asvalue(a)
    a = cast(a, float_dtype(a))
    merged, rest, axes = _merged_last(a, axis, "median")
    n = shape(merged)[-1]
    if n == 0:
        raise ShapeError(f"median: cannot take the median of an empty slice (shape {shape(a)}, axis {axis})")
    ordered = sort(merged, axis=-1)
    middle = take_along_axis(ordered, np.broadcast_to(np.array([(n - 1) // 2, n // 2]), rest + (2,)), -1)
    result = mean(middle, axis=-1)
    last = reshape(take_along_axis(ordered, np.full(rest + (1,), n - 1, np.int64), -1), rest)
    result = where(isnan(last), np.nan, result)
    if keepdims:
        return reshape(result, tuple(1 if i in axes else s for i, s in enumerate(shape(a))))
    return result


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median ignoring NaNs."""
    return _quantile(a, 0.5, axis, "linear", keepdims, "nanmedian", ignore_nan=True)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average sum(a * w) / sum(w) along `axis` (numpy.average); with `returned`, also the
    sum of the weights (broadcast like the average). 1-d weights go along a single axis."""
    a = asvalue(a)
    if weights is None:
        average_value = mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return average_value
        count = int(np.prod(shape(a), dtype=np.int64)) // max(int(np.prod(shape(average_value), dtype=np.int64)), 1)
        return average_value, np.full(shape(average_value), float(count), _dtype(average_value))
    weights = asvalue(weights)
    target = float_dtype(a, weights)
    a, weights = cast(a, target), cast(weights, target)
    if shape(weights) != shape(a):
        if axis is None or isinstance(axis, (tuple, list)) and len(axis) != 1:
            raise ShapeError(f"average: weights of shape {shape(weights)} differing from a's {shape(a)} "
                             "need a single axis")
        axis = normalize_axis(axis[0] if isinstance(axis, (tuple, list)) else axis, len(shape(a)), "average")
        if shape(weights) != (shape(a)[axis],):
            raise ShapeError(f"average: 1-d weights of shape {shape(weights)} do not match axis {axis} of "
                             f"shape {shape(a)}")
        weights = reshape(weights, tuple(-1 if i == axis else 1 for i in range(len(shape(a)))))
    total = sum_(weights, axis=axis, keepdims=keepdims)
    if not isinstance(total, Tracer) and np.any(np.asarray(total) == 0):
        raise ArgumentError("average: the weights sum to zero, so they cannot be normalized")
    average_value = divide(sum_(multiply(a, weights), axis=axis, keepdims=keepdims), total)
    if not returned:
        return average_value

    return average_value, broadcast_to(total, shape(average_value))


def _observations(m, rowvar, target, name):
    m = asvalue(m)
    if len(shape(m)) > 2:
        raise ShapeError(f"{name}: needs a 1-d or 2-d array of observations, got shape {shape(m)}")
    m = cast(m, target)
    m = reshape(m, (1, -1)) if len(shape(m)) < 2 else m
    return transpose(m) if not rowvar and shape(m)[0] != 1 else m


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """Covariance matrix of variables in rows (numpy.cov), with frequency and analytic weights.

    The result is squeezed as NumPy's is (a 0-d array for one variable).
    """
    values = [asvalue(v) for v in (m, y) if v is not None]
    target = np.dtype(dtype) if dtype is not None else np.result_type(*[_dtype(v) for v in values], np.float64)
    x = _observations(m, rowvar, target, "cov")
    if y is not None:
        x = concatenate([x, _observations(y, rowvar, target, "cov")], 0)
    if shape(x)[0] == 0:
        return np.zeros((0, 0), target)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = cast(asvalue(fweights), target)
    if aweights is not None:
        aw = cast(asvalue(aweights), target)
        w = aw if w is None else multiply(w, aw)
    average_value, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = float(shape(x)[1] - ddof)
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = subtract(w_sum, ddof)
    else:
        fact = subtract(w_sum, divide(multiply(ddof, sum_(multiply(w, aw))), w_sum))
    fact = max(fact, 0.0) if isinstance(fact, float) else maximum(fact, 0.0)  # NumPy: 0 when <= 0
    centered = subtract(x, reshape(average_value, (-1, 1)))
    weighted = centered if w is None else multiply(centered, w)

    c = multiply(matmul(centered, transpose(weighted)), divide(1.0, fact))

    return squeeze(c)


def _dtype(value):
    return dtype(value)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients (numpy.corrcoef), clipped to [-1, 1] as NumPy does."""
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape(c)) == 0:
        return divide(c, c)

    stddev = sqrt(diag(c))
    c = divide(c, reshape(stddev, (-1, 1)))
    c = divide(c, reshape(stddev, (1, -1)))
    return minimum(maximum(c, -1.0), 1.0)


# --- NaN-ignoring reductions -----------------------------------------------------------------------

def _without_nan(a, fill):
    a = asvalue(a)
    if not np.issubdtype(_dtype(a), np.floating):
        return a
    return where(isnan(a), fill, a)


def nansum(a, axis=None, dtype=None, keepdims=False):  # noqa: A002 - NumPy's name
    """Sum treating NaN as zero (their derivative is 0)."""
    return sum_(_without_nan(a, 0.0), axis=axis, keepdims=keepdims, dtype=dtype)


def nanprod(a, axis=None, dtype=None, keepdims=False):  # noqa: A002 - NumPy's name
    """Product treating NaN as one."""
    return prod_(_without_nan(a, 1.0), axis=axis, keepdims=keepdims, dtype=dtype)


def _valid_count(a, axis, keepdims):
    a = asvalue(a)
    if not np.issubdtype(_dtype(a), np.floating):
        return sum_(ew.full_like(cast(a, np.float64), 1.0), axis=axis, keepdims=keepdims)
    return sum_(cast(ew.logical_not(isnan(a)), _dtype(a)), axis=axis, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, keepdims=False):  # noqa: A002 - NumPy's name
    """Mean of the non-NaN values (NaN for an all-NaN slice)."""
    a = asvalue(a)
    a = cast(a, float_dtype(a) if dtype is None else np.dtype(dtype))
    return divide(nansum(a, axis=axis, keepdims=keepdims), _valid_count(a, axis, keepdims))


def nanvar(a, axis=None, dtype=None, ddof=0, keepdims=False):  # noqa: A002 - NumPy's name
    """Variance of the non-NaN values."""
    a = asvalue(a)
    a = cast(a, float_dtype(a) if dtype is None else np.dtype(dtype))
    centered = subtract(a, nanmean(a, axis=axis, keepdims=True))
    squares = nansum(multiply(centered, centered), axis=axis, keepdims=keepdims)
    return divide(squares, subtract(_valid_count(a, axis, keepdims), float(ddof)))


def nanstd(a, axis=None, dtype=None, ddof=0, keepdims=False):  # noqa: A002 - NumPy's name
    """Standard deviation of the non-NaN values."""
    return sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _nan_extremum(reducer, fill, a, axis, keepdims):
    a = asvalue(a)
    if not np.issubdtype(_dtype(a), np.floating):
        return reducer(a, axis=axis, keepdims=keepdims)
    value = reducer(_without_nan(a, fill), axis=axis, keepdims=keepdims)
    all_nan = ew.logical_not(any_(ew.logical_not(isnan(a)), axis=axis, keepdims=keepdims))
    return where(all_nan, np.nan, value)


def nanmax(a, axis=None, keepdims=False):
    """Maximum ignoring NaNs (NaN for an all-NaN slice)."""
    return _nan_extremum(max_, -np.inf, a, axis, keepdims)


def nanmin(a, axis=None, keepdims=False):
    """Minimum ignoring NaNs (NaN for an all-NaN slice)."""
    return _nan_extremum(min_, np.inf, a, axis, keepdims)


def nanargmax(a, axis=None):
    return argmax(_without_nan(a, -np.inf), axis=axis)


def nanargmin(a, axis=None):
    return argmin(_without_nan(a, np.inf), axis=axis)


def nancumsum(a, axis=None):
    return cumsum(_without_nan(a, 0.0), axis=axis)


def nancumprod(a, axis=None):
    return cumprod(_without_nan(a, 1.0), axis=axis)


def ptp(a, axis=None, keepdims=False):
    """Range max - min along `axis` ('peak to peak')."""
    return subtract(max_(a, axis=axis, keepdims=keepdims), min_(a, axis=axis, keepdims=keepdims))
