"""argsort[axis]: the stable sorting permutation (NumPy's kind="stable"); integer output, not
differentiated. reduce_by_index's general rule sorts its values by index with it."""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive
from ..core.types import Aval
from .rules import nondifferentiable


def _argsort_abstract_eval(x, *, axis):
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"argsort: axis {axis} out of range for {x}")
    return Aval(x.shape, np.int64)


argsort_p = Primitive("argsort", _argsort_abstract_eval)
nondifferentiable(argsort_p)
argsort_p.batch = lambda args, batched, size, *, axis: (argsort(args[0], axis + 1), True)
argsort_p.sample = lambda rng: [([np.array([3, 1, 2, 1, 0])], {"axis": 0}), ([rng.normal(size=(2, 4))], {"axis": 1})]


def argsort(x, axis: int = 0):
    return argsort_p.bind(x, axis=int(axis))
