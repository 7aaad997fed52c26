"""`Array`: what adarray.numpy returns outside a trace. An `np.ndarray` subclass (so every NumPy
function and method accepts it) that adds JAX's functional updates and traced indexing:

    x = anp.zeros(5)
    y = x.at[1].add(2.0)        # a new array; x is never written into
    table = anp.asarray(np_table)
    table[anp.floor(t).astype(int)]   # inside ad.grad: a gather with the table as a constant

Why a subclass: a plain `np.ndarray` cannot take a traced index (`ndarray.__getitem__` asks the
index for `__index__` or `__array__`, which must return concrete values) and has no `.at`. The
subclass overrides `__getitem__` only when the index holds a tracer; everything else is NumPy's.
`np.asarray(x)` gives the plain ndarray back (a view, no copy).
"""
from __future__ import annotations

import functools
import types

import numpy as np

from ..primitives import indexing
from ._core import asvalue, aval, cast, dtype, holds_tracer, shape
from ._indexing import expand_index, getitem, index_spec
from ._shape import broadcast_to


class Array(np.ndarray):
    """An ndarray made by adarray.numpy: `x.at[i].set(v)` and `x[traced_index]` work on it.

    >>> anp.zeros(3).at[0].set(1.0)  # doctest: +SKIP
    Array([1., 0., 0.])
    """

    @property
    def at(self):
        return at(np.asarray(self))

    def __getitem__(self, index):
        if holds_tracer(index):
            return getitem(np.asarray(self), index)
        return super().__getitem__(index)


def wrap(value):
    """Plain ndarrays (also inside a returned tuple or list) as `Array` views; anything else as is."""
    if type(value) is np.ndarray:
        return value.view(Array)
    if type(value) in (tuple, list) and any(type(v) is np.ndarray for v in value):
        return type(value)(wrap(v) for v in value)
    return value


def returning_arrays(fn):
    """`fn` with its concrete ndarray results given as `Array`s."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return wrap(fn(*args, **kwargs))

    wrapper.__wrapped_numpy__ = True
    return wrapper


def wrap_functions(namespace: dict) -> None:
    """Give every public function of a namespace (adarray.numpy's) `Array` results."""
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and not name.startswith("_") and not getattr(
            value, "__wrapped_numpy__", False
        ):
            namespace[name] = returning_arrays(value)


# --- x.at[index]: functional updates (a scatter), whose results are Arrays again ------------------------

class _IndexUpdate:
    """`x.at[index]`: functional updates, e.g. ``x.at[i].add(v)`` returns a new array."""

    def __init__(self, x, index):
        self.x, self.index = asvalue(x), index

    def _apply(self, values, op):
        items = expand_index(shape(self.x), self.index)
        spec, arrays = index_spec(shape(self.x), items)
        window = indexing.gather_shape(aval(self.x), spec, [aval(a) for a in arrays])
        values = broadcast_to(cast(values, dtype(self.x)), window)
        return wrap(indexing.scatter(self.x, spec, arrays, values, op))

    def get(self):
        return wrap(getitem(self.x, self.index))

    def set(self, values):
        return self._apply(values, "set")

    def add(self, values):
        return self._apply(values, "add")

    def multiply(self, values):
        """Multiply in place; duplicates multiply together; the gradient is exact with zeros."""
        return self._apply(values, "mul")

    def min(self, values):
        return self._apply(values, "min")

    def max(self, values):
        return self._apply(values, "max")


class _At:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, index):
        return _IndexUpdate(self.x, index)


def at(x):
    return _At(x)
