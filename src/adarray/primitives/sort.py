"""Sorting and searching primitives; integer outputs, not differentiated.

argsort[axis]: the stable sorting permutation (NumPy's kind="stable"). reduce_by_index's general
rule sorts its values by index with it; adarray.numpy.sort is a gather along it, so the derivative
of a sorted array follows the permutation (ties keep their order).
searchsorted[side]: insertion positions of values in sorted rows.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.types import Aval
from .rules import batch_all, nondifferentiable, refuse_complex


def _argsort_abstract_eval(x, *, axis):
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"argsort: axis {axis} out of range for {x}")
    refuse_complex("argsort", x)
    return Aval(x.shape, np.int64)


argsort_p = Primitive("argsort", _argsort_abstract_eval)
nondifferentiable(argsort_p)
argsort_p.batch = lambda args, batched, size, *, axis: (argsort(args[0], axis + 1), True)
argsort_p.sample = lambda rng: [([np.array([3, 1, 2, 1, 0])], {"axis": 0}), ([rng.normal(size=(2, 4))], {"axis": 1})]


def argsort(x, axis: int = 0):
    return argsort_p.bind(x, axis=int(axis))


# --- searchsorted[side]: insertion positions in sorted rows (integer output, not differentiated) ---
# sorted_seq (*batch, n) and values (*batch, m) share their leading axes and dtype; the result is
# (*batch, m), each row searched in its own sorted row. adarray.numpy flattens the values of a 1-d
# search to one row; vmap adds a leading axis. O(m log n), where a comparison count would be O(m n).

def _searchsorted_abstract_eval(sorted_seq, values, *, side):
    if side not in ("left", "right"):
        raise ShapeError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorted_seq.ndim < 1 or values.ndim != sorted_seq.ndim or values.shape[:-1] != sorted_seq.shape[:-1]:
        raise ShapeError(
            f"searchsorted: needs sorted rows (*batch, n) and values (*batch, m) with the same leading axes, "
            f"got {sorted_seq} and {values}"
        )
    if sorted_seq.dtype != values.dtype:
        raise ShapeError(f"searchsorted: operands {sorted_seq} and {values} differ in dtype")
    refuse_complex("searchsorted", sorted_seq)
    return Aval(values.shape, np.int64)


searchsorted_p = Primitive("searchsorted", _searchsorted_abstract_eval)
nondifferentiable(searchsorted_p)


def searchsorted(sorted_seq, values, side: str = "left"):
    """For each value, the index at which it would be inserted to keep its row sorted."""
    return searchsorted_p.bind(sorted_seq, values, side=side)


def _searchsorted_batch(args, batched, size, *, side):
    return searchsorted(*batch_all(args, batched, size), side=side), True


def _searchsorted_sample(rng):
    rows = np.sort(rng.normal(size=(3, 5)), axis=1)
    return [
        ([np.array([0.0, 1.0, 1.0, 2.0]), np.array([1.0, -1.0, 2.5, 0.5, 2.0])], {"side": "left"}),
        ([np.array([0.0, 1.0, 1.0, 2.0]), np.array([1.0, -1.0, 2.5, 0.5, 2.0])], {"side": "right"}),
        ([rows, rng.normal(size=(3, 4))], {"side": "left"}),
        ([np.zeros(0), rng.normal(size=(2,))], {"side": "right"}),
    ]


searchsorted_p.batch = _searchsorted_batch
searchsorted_p.sample = _searchsorted_sample
