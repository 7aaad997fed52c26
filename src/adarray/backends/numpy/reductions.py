"""NumPy implementations of reductions and scans: the known monoids, products of the others
(zero counting), argmax/argmin. The recurrences the scan rules emit are in recurrences.py."""
from __future__ import annotations

import numpy as np

from ...primitives import reduce, scan
from .registry import impl

# The ufuncs' own reduce (what np.sum, np.prod, ... call after two Python layers of argument handling)
_REDUCERS = {"add": np.add.reduce, "mul": np.multiply.reduce, "max": np.maximum.reduce, "min": np.minimum.reduce,
             "and": np.logical_and.reduce, "or": np.logical_or.reduce}


@impl(reduce.reduce_p)
def _reduce(x, *, op, axes):
    return np.asarray(_REDUCERS[op](x, axis=axes))


@impl(reduce.product_others_p)
def _product_others(x, scale, *, axes):
    """Zero counting: no zero -> prod / x; one zero -> the product of the others at the zero; more -> 0."""
    x = np.asarray(x)
    is_zero = x == 0
    if not is_zero.any():  # the common case, in one pass
        return (np.prod(x, axis=axes, keepdims=True) * scale / x).astype(x.dtype)
    zeros = np.sum(is_zero, axis=axes, keepdims=True)
    safe = np.where(is_zero, 1, x)
    product = np.prod(safe, axis=axes, keepdims=True)
    others = np.where(zeros == 0, product / safe, np.where((zeros == 1) & is_zero, product, 0))
    return (scale * others).astype(x.dtype)


@impl(reduce.argmax_p)
def _argmax(x, *, axis):
    return np.argmax(x, axis=axis)


@impl(reduce.argmin_p)
def _argmin(x, *, axis):
    return np.argmin(x, axis=axis)


_ACCUMULATE = {"add": np.cumsum, "mul": np.cumprod, "max": np.maximum.accumulate, "min": np.minimum.accumulate}


@impl(scan.scan_p)
def _scan(x, *, op, axis, reverse):
    accumulate = _ACCUMULATE[op]
    if reverse:
        return np.flip(accumulate(np.flip(x, axis), axis=axis), axis)
    return accumulate(x, axis=axis)
