"""CSR and COO matrices whose stored values are differentiable, and their operations.

A matrix is its stored values `data` (an array, or a traced value inside ad.grad/jit/vmap) and its pattern (the
index arrays and the shape: NumPy arrays, fixed when the matrix is built). Matrices are pytrees with `data` as
the only leaf, so they pass through every transformation, and a gradient with respect to a matrix is a matrix
of the same pattern. Operations are built either on gathers and `segment_sum` (method "index") or on
reversible loops (method "reversible", reversible_loops.py); `set_method` chooses, "index" being the default (faster
with NumPy, see benchmarks/README.md).

    A = sp.CSR.from_scipy(scipy.sparse.random(100, 80, density=0.05, format="csr"))
    ad.grad(lambda d: sp.dot(sp.CSR(d, A.indices, A.indptr, A.shape), B))(A.data)   # the pattern's values
"""
from __future__ import annotations

import numpy as np
import scipy.sparse

from .. import numpy as anp
from ..core.config import SETTINGS, config
from ..core.errors import ArgumentError, ShapeError
from ..core.pytree import register_node
from ..parallel import segment_sum
from ..tracing import Tracer
from . import reversible_loops

METHODS = next(s.choices for s in SETTINGS if s.name == "sparse_method")


def set_method(method: str) -> str:
    """How sparse operations compute: 'index' (gathers and segment_sum) or 'reversible' (reversible kernels,
    gradients by reverse computing). Returns the previous method."""
    return config.update("sparse_method", method)


def get_method() -> str:
    return config.sparse_method


class Pattern:
    """The static part of a sparse matrix: its format, index arrays and shape (hashable, compared by value)."""

    def __init__(self, kind, arrays, shape):
        self.kind, self.arrays, self.shape = kind, tuple(arrays), tuple(int(n) for n in shape)
        self.key = (kind, self.shape) + tuple(a.tobytes() for a in self.arrays)
        self._hash = hash(self.key)
        self._rows = None

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return self is other or (isinstance(other, Pattern) and self.key == other.key)

    def __repr__(self):
        return f"Pattern({self.kind}, shape={self.shape}, nnz={self.nnz})"

    @property
    def nnz(self) -> int:
        return len(self.arrays[0])

    def rows_and_columns(self):
        """(row, column) of every stored entry, as int64 arrays."""
        if self._rows is None:
            if self.kind == "csr":
                indices, indptr = self.arrays
                self._rows = (np.repeat(np.arange(self.shape[0]), np.diff(indptr)), indices)
            else:
                self._rows = self.arrays
        return self._rows


def _index_array(name, value, what):
    if isinstance(value, Tracer):
        raise ArgumentError(f"{what}: {name} must be a concrete integer array (the pattern is static; only data may "
                            "be traced)")
    array = np.asarray(value)
    if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
        raise ShapeError(f"{what}: {name} must be a 1-D integer array, got {array.dtype}{list(array.shape)}")
    return array.astype(np.int64)


def _data(value, nnz, what):
    data = value if isinstance(value, Tracer) else np.asarray(value)
    if data.dtype.kind not in "f":
        if isinstance(data, Tracer) or data.dtype.kind not in "iub":
            raise ShapeError(f"{what}: data must hold floats, got {data.dtype}")
        data = data.astype(np.float64)
    if tuple(data.shape) != (nnz,):
        raise ShapeError(f"{what}: data has shape {tuple(data.shape)}, the pattern stores {nnz} values")
    return data


def _shape(shape, what):
    if len(shape) != 2 or any(int(n) < 0 for n in shape):
        raise ShapeError(f"{what}: shape must be (rows, columns), got {shape!r}")
    return tuple(int(n) for n in shape)


class _Sparse:
    """What CSR and COO share: everything is defined on (row, column, value) triples."""

    __array_priority__ = 1000  # A @ v with a NumPy v comes here, not to NumPy

    def __init__(self, data, pattern):
        self.data, self.pattern = data, pattern

    shape = property(lambda self: self.pattern.shape)
    nnz = property(lambda self: self.pattern.nnz)
    dtype = property(lambda self: self.data.dtype)
    ndim = 2

    def _with_data(self, data):
        return type(self)._from_pattern(data, self.pattern)

    def __repr__(self):
        return f"{type(self).__name__}(shape={self.shape}, nnz={self.nnz})"

    # --- products ----------------------------------------------------------------------------------------

    def __matmul__(self, other):
        return matmul(self, other)

    def dot(self, other):
        return dot(self, other)

    @property
    def T(self):  # noqa: N802  (NumPy's name)
        return transpose(self)

    def todense(self):
        rows, cols = self.pattern.rows_and_columns()
        dense = anp.zeros(self.shape, dtype=self.dtype)
        return dense.at[rows, cols].add(self.data)

    def sum(self, axis=None):
        return sum(self, axis)

    # --- elementwise, on the stored values -----------------------------------------------------------------

    def _combine(self, other, op, symbol):
        if isinstance(other, _Sparse):
            if other.pattern != self.pattern:
                same_counts = repr(self.pattern) == repr(other.pattern)
                raise ShapeError(f"sparse {symbol}: the operands have different patterns ({self.pattern} and "
                                 f"{other.pattern}{', with entries at different positions' if same_counts else ''}); "
                                 "elementwise operations need the same pattern (sp.dot takes two patterns)")
            return self._with_data(op(self.data, other.data))
        if isinstance(other, Tracer) or np.ndim(other) == 0:
            return self._with_data(op(self.data, other))
        other = other if isinstance(other, Tracer) else np.asarray(other)
        if symbol == "*" and tuple(other.shape) == self.shape:  # sparse * dense keeps the pattern
            rows, cols = self.pattern.rows_and_columns()
            return self._with_data(op(self.data, other[rows, cols]))
        raise ShapeError(f"sparse {symbol}: takes a scalar or a sparse matrix of the same pattern"
                         + (" (or a dense matrix of the same shape for *)" if symbol == "*" else "")
                         + f", got shape {tuple(np.shape(other))}")

    def __mul__(self, other):
        return self._combine(other, lambda a, b: a * b, "*")

    __rmul__ = __mul__

    def __add__(self, other):
        return self._combine(other, lambda a, b: a + b, "+")

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, lambda a, b: a - b, "-")

    def __rsub__(self, other):
        return self._combine(other, lambda a, b: b - a, "-")

    def __neg__(self):
        return self._with_data(-self.data)

    def __truediv__(self, other):
        if isinstance(other, _Sparse):
            raise ShapeError("sparse /: divide by a scalar (dividing by a sparse matrix divides by its zeros)")
        return self._combine(other, lambda a, b: a / b, "/")


class CSR(_Sparse):
    """Compressed sparse rows: row i stores data[indptr[i]:indptr[i+1]] at columns indices[indptr[i]:indptr[i+1]].

    >>> A = CSR(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 1]), np.array([0, 2, 3]), (2, 3))
    >>> np.asarray(A @ np.ones(3))
    array([3., 3.])
    """

    def __init__(self, data, indices, indptr, shape):
        what = "sparse.CSR"
        shape = _shape(shape, what)
        indices, indptr = _index_array("indices", indices, what), _index_array("indptr", indptr, what)
        if len(indptr) != shape[0] + 1 or (len(indptr) and indptr[0] != 0) or np.any(np.diff(indptr) < 0):
            raise ShapeError(f"{what}: indptr must rise from 0 in {shape[0] + 1} entries for {shape[0]} rows")
        if indptr[-1] != len(indices):
            raise ShapeError(f"{what}: indptr ends at {indptr[-1]} but there are {len(indices)} indices")
        if len(indices) and (indices.min() < 0 or indices.max() >= shape[1]):
            raise ShapeError(f"{what}: column indices must lie in [0, {shape[1]})")
        super().__init__(_data(data, len(indices), what), Pattern("csr", (indices, indptr), shape))

    indices = property(lambda self: self.pattern.arrays[0])
    indptr = property(lambda self: self.pattern.arrays[1])

    @classmethod
    def _from_pattern(cls, data, pattern):
        matrix = object.__new__(cls)
        _Sparse.__init__(matrix, data, pattern)
        return matrix

    @classmethod
    def from_scipy(cls, matrix):
        matrix = scipy.sparse.csr_matrix(matrix)
        return cls(np.asarray(matrix.data, dtype=np.result_type(matrix.dtype, np.float32)), matrix.indices,
                   matrix.indptr, matrix.shape)

    def to_scipy(self):
        return scipy.sparse.csr_matrix((_concrete(self.data, "to_scipy"), self.indices, self.indptr), shape=self.shape)


class COO(_Sparse):
    """Coordinates: data[k] is stored at (row[k], col[k]); repeated coordinates add up."""

    def __init__(self, data, row, col, shape):
        what = "sparse.COO"
        shape = _shape(shape, what)
        row, col = _index_array("row", row, what), _index_array("col", col, what)
        if len(row) != len(col):
            raise ShapeError(f"{what}: row and col have different lengths {len(row)} and {len(col)}")
        for name, index, size in (("row", row, shape[0]), ("col", col, shape[1])):
            if len(index) and (index.min() < 0 or index.max() >= size):
                raise ShapeError(f"{what}: {name} indices must lie in [0, {size})")
        super().__init__(_data(data, len(row), what), Pattern("coo", (row, col), shape))

    row = property(lambda self: self.pattern.arrays[0])
    col = property(lambda self: self.pattern.arrays[1])

    _from_pattern = CSR.__dict__["_from_pattern"]

    @classmethod
    def from_scipy(cls, matrix):
        matrix = scipy.sparse.coo_matrix(matrix)
        return cls(np.asarray(matrix.data, dtype=np.result_type(matrix.dtype, np.float32)), matrix.row, matrix.col,
                   matrix.shape)

    def to_scipy(self):
        return scipy.sparse.coo_matrix((_concrete(self.data, "to_scipy"), (self.row, self.col)), shape=self.shape)


def _concrete(data, what):
    if isinstance(data, Tracer):
        raise ArgumentError(f"sparse {what}: the data is traced (inside a transformation); convert outside it")
    return np.asarray(data)


for _cls in (CSR, COO):
    register_node(_cls, lambda m: ((m.data,), m.pattern), lambda pattern, children, cls=_cls:
                  cls._from_pattern(children[0], pattern))


# --- operations --------------------------------------------------------------------------------------------

def _dense(value, what):
    return value if isinstance(value, Tracer) else np.asarray(value)


def matmul(a: _Sparse, b):
    """A @ v (a vector) or A @ B (a dense matrix): dense results."""
    if isinstance(b, _Sparse):
        raise ShapeError("sparse @ sparse is not supported; use sparse.dot(A, B) for sum(A * B) or A.todense()")
    b = _dense(b, "@")
    if len(b.shape) not in (1, 2) or b.shape[0] != a.shape[1]:
        raise ShapeError(f"sparse @: a {a.shape[0]} x {a.shape[1]} matrix times an operand of shape {tuple(b.shape)}")
    dtype = np.result_type(a.dtype, b.dtype, np.float32)
    rows, cols = a.pattern.rows_and_columns()
    if config.sparse_method == "reversible":
        indptr = a.pattern.arrays[1] if a.pattern.kind == "csr" else None
        return reversible_loops.matvec(rows, cols, indptr, anp.asarray(a.data, dtype), anp.asarray(b, dtype),
                                       a.shape[0], dtype)
    gathered = anp.take(b, cols, axis=0)
    products = gathered * (a.data if len(b.shape) == 1 else a.data[:, None])
    return segment_sum(products, rows, a.shape[0]).astype(dtype)


def transpose(a: _Sparse) -> _Sparse:
    """A.T with the same format: the values permuted by a gather (differentiable)."""
    rows, cols = a.pattern.rows_and_columns()
    shape = (a.shape[1], a.shape[0])
    if a.pattern.kind == "coo":
        return COO._from_pattern(a.data, Pattern("coo", (cols, rows), shape))
    order = scipy.sparse.csr_matrix((np.arange(a.nnz, dtype=np.int64), a.indices, a.indptr), shape=a.shape).T.tocsr()
    pattern = Pattern("csr", (order.indices.astype(np.int64), order.indptr.astype(np.int64)), shape)
    return CSR._from_pattern(anp.take(a.data, order.data, axis=0), pattern)


def sum(a: _Sparse, axis=None):  # noqa: A001  (NumPy's name)
    """The sum of the stored values, or per column (axis=0) or row (axis=1) as a dense vector."""
    if axis is None:
        return anp.sum(a.data)
    rows, cols = a.pattern.rows_and_columns()
    if axis in (0, -2):
        return segment_sum(a.data, cols, a.shape[1])
    if axis in (1, -1):
        return segment_sum(a.data, rows, a.shape[0])
    raise ArgumentError(f"sparse sum: axis must be None, 0 or 1, got {axis!r}")


def _matching(a: Pattern, b: Pattern):
    """Positions (ia, ib) of the entries two patterns share (every pair, where coordinates repeat)."""
    ra, ca = a.rows_and_columns()
    rb, cb = b.rows_and_columns()
    width = max(a.shape[1], 1)
    keys_a, keys_b = ra * width + ca, rb * width + cb
    order = np.argsort(keys_b, kind="stable")
    sorted_b = keys_b[order]
    first, last = np.searchsorted(sorted_b, keys_a, "left"), np.searchsorted(sorted_b, keys_a, "right")
    counts = last - first
    ia = np.repeat(np.arange(len(keys_a)), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    ib = order[np.repeat(first, counts) + offsets]
    return ia.astype(np.int64), ib.astype(np.int64)


_MATCHES: dict = {}


def dot(a: _Sparse, b):
    """sum_ij A_ij B_ij (trace(A^T B)): B sparse with any pattern, or dense of A's shape."""
    if not isinstance(a, _Sparse):
        raise ArgumentError(f"sparse.dot: the first operand must be a sparse matrix, got {type(a).__name__}")
    if isinstance(b, _Sparse):
        if b.shape != a.shape:
            raise ShapeError(f"sparse.dot: shapes {a.shape} and {b.shape} differ")
        key = (a.pattern, b.pattern)
        if key not in _MATCHES:
            if len(_MATCHES) > 64:
                _MATCHES.clear()
            _MATCHES[key] = _matching(a.pattern, b.pattern)
        ia, ib = _MATCHES[key]
        dtype = np.result_type(a.dtype, b.dtype)
        if config.sparse_method == "reversible":
            return reversible_loops.dot_pairs(a.data, b.data, ia, ib, dtype)
        return anp.sum(anp.take(a.data, ia, axis=0) * anp.take(b.data, ib, axis=0))
    b = _dense(b, "dot")
    if tuple(b.shape) != a.shape:
        raise ShapeError(f"sparse.dot: a {a.shape} sparse matrix with a dense operand of shape {tuple(b.shape)}")
    rows, cols = a.pattern.rows_and_columns()
    return anp.sum(a.data * b[rows, cols])
