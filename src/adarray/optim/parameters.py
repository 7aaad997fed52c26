"""Parameters as one flat vector: a pytree of arrays (x0) flattened in order, and back.

>>> p = Parameters("demo", {"a": 1.0, "b": np.zeros(2)})
>>> p.x0
array([1., 0., 0.])
>>> p.tree(np.arange(3.0))
{'a': array(0.), 'b': array([1., 2.])}
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError
from ..tree_util import tree_flatten, tree_leaves, tree_unflatten


class Parameters:
    """x0's structure: `x0` the flat float64 vector, `tree(vector)` new arrays in x0's structure (float
    leaves keep their dtype, integer ones become float64), `flat(tree)` any pytree of arrays, raveled."""

    def __init__(self, what: str, x0):
        leaves, self.treedef = tree_flatten(x0)
        arrays = []
        for leaf in leaves:
            array = np.asarray(leaf)
            if array.dtype.kind not in "biuf":
                raise ArgumentError(f"{what}: the parameters must be numbers, got a leaf of dtype {array.dtype}")
            arrays.append(array)
        if sum(a.size for a in arrays) == 0:
            raise ArgumentError(f"{what}: x0 has no parameters")
        self.shapes = [a.shape for a in arrays]
        self.dtypes = [a.dtype if a.dtype.kind == "f" else np.dtype(np.float64) for a in arrays]
        self.splits = np.cumsum([a.size for a in arrays])[:-1]
        self.x0 = np.concatenate([a.ravel() for a in arrays]).astype(np.float64)

    @property
    def size(self) -> int:
        return self.x0.size

    def tree(self, vector):
        pieces = np.split(np.asarray(vector, np.float64), self.splits)
        return tree_unflatten(self.treedef, [p.reshape(s).astype(d) for p, s, d in zip(pieces, self.shapes,
                                                                                   self.dtypes)])

    @staticmethod
    def flat(tree) -> np.ndarray:
        leaves = tree_leaves(tree)
        if not leaves:
            return np.zeros(0)
        return np.concatenate([np.ravel(np.asarray(leaf, np.float64)) for leaf in leaves])
