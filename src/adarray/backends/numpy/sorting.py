"""NumPy implementations of the sorting family (primitives/sort.py)."""
from __future__ import annotations

import numpy as np

from ...primitives import sort
from .registry import impl


@impl(sort.searchsorted_p)
def _searchsorted(sorted_seq, values, *, side):
    sorted_seq, values = np.asarray(sorted_seq), np.asarray(values)
    if sorted_seq.ndim == 1:
        return np.searchsorted(sorted_seq, values, side=side).astype(np.int64)
    out = np.empty(values.shape, np.int64)
    for index in np.ndindex(values.shape[:-1]):  # one binary search per row
        out[index] = np.searchsorted(sorted_seq[index], values[index], side=side)
    return out


@impl(sort.argsort_p)
def _argsort(x, *, axis):
    return np.argsort(x, axis=axis, kind="stable")
