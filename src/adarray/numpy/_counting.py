"""Counting and histograms, built on scatter-add (reduce_by_index with "add"), so differentiable
in the weights. Bin positions are piecewise constant in x: their derivative is zero."""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError, TracingError
from ..primitives import elementwise as ew
from ..primitives.indexing import scatter
from ..primitives.structural import slice_array
from ..tracing import Tracer
from ._core import asvalue, cast, dtype, float_dtype, shape
from ._math import floor, where
from ._reductions import max as max_
from ._reductions import min as min_
from ._reductions import sum as sum_


def _add_into_bins(bins, target, weights, out_dtype):
    """sum of weights per bin; targets outside [0, bins) are ignored."""
    n = shape(target)[0]
    inside = ew.logical_and(ew.ge(target, np.zeros(n, np.int64)), ew.lt(target, np.full(n, bins, np.int64)))
    slot = ew.select(inside, target, np.full(n, bins, np.int64))
    base = np.zeros(bins + 1, out_dtype)
    total = scatter(base, (("array",),), [slot], cast(weights, out_dtype), "add")
    return slice_array(total, (0,), (bins,), (1,))


def bincount(x, weights=None, minlength=0):
    """Counts (or summed weights) of each non-negative integer in x.

    The length is max(x) + 1 (at least `minlength`) for a concrete x; for a traced x it must
    be given as `minlength`, and larger values are ignored (so are negative ones).
    """
    x = asvalue(x)
    if not np.issubdtype(dtype(x), np.integer) or len(shape(x)) != 1:
        raise ShapeError(f"bincount: x must be a 1-d integer array, got shape {shape(x)} and {dtype(x)}")
    if isinstance(x, Tracer):
        if minlength <= 0:
            raise TracingError("bincount of a traced x needs minlength (the number of bins) to be given")
        length = int(minlength)
    else:
        if np.any(x < 0):
            raise ShapeError("bincount: x must be non-negative")
        length = max(int(x.max()) + 1 if x.size else 0, int(minlength))
    if weights is None:
        return _add_into_bins(length, cast(x, np.int64), np.ones(shape(x), np.int64), np.int64)
    weights = asvalue(weights)
    return _add_into_bins(length, cast(x, np.int64), weights, float_dtype(weights))


def histogram(x, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
    """(counts or summed weights per bin, bin edges), like numpy.histogram (last bin closed).

    Differentiable in `weights`; the bin of each x is piecewise constant (zero derivative).
    """
    x = cast(asvalue(x), float_dtype(asvalue(x)))
    flat = x if len(shape(x)) == 1 else cast(x, dtype(x)).reshape(-1)
    n = shape(flat)[0]
    if isinstance(bins, (int, np.integer)):
        if range is None:
            low, high = (ew.stop_gradient(min_(flat)), ew.stop_gradient(max_(flat))) if n else (0.0, 1.0)
        else:
            low, high = range
        if not isinstance(low, Tracer) and not isinstance(high, Tracer) and float(low) == float(high):
            low, high = float(low) - 0.5, float(high) + 0.5
        count = int(bins)
        edges = low + (high - low) * np.linspace(0.0, 1.0, count + 1)
        position = floor((flat - low) / (high - low) * count)
        target = cast(where(flat == high, count - 1, position), np.int64)
        target = where(ew.logical_or(flat < low, flat > high), -1, target)
    else:
        edges = asvalue(bins)
        count = shape(edges)[0] - 1
        above = cast(flat[:, None] >= edges[None, :], np.int64)
        target = sum_(above, axis=1) - 1
        at_last_edge = flat == edges[count]
        target = where(at_last_edge, count - 1, target)
        target = where(flat > edges[count], -1, target)
    weights = np.ones(n, np.int64) if weights is None else asvalue(weights).reshape(-1)
    out_dtype = np.int64 if weights is not None and not np.issubdtype(dtype(weights), np.floating) else (
        float_dtype(weights))
    return _add_into_bins(count, cast(target, np.int64), weights, out_dtype), edges


