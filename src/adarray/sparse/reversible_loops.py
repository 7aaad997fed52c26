"""Sparse operations as reversible kernels (adarray.reversible): loops over the stored entries whose gradients
come by reverse computing. They are one of the two implementations of adarray.sparse (the other gathers and
sums with segment_sum); `adarray bench reversible --section sparse` compares them.

The kernels run without run-time checks (check=False: no bounds checks in compiled code either): a matrix's
pattern is validated when it is built (indices in range, indptr rising) and the operands' shapes before a call.
"""
from __future__ import annotations

from .. import numpy as anp
from .. import reversible as rv


@rv.reversible(check=False)
def csr_matvec(y, data, indices, indptr, v):
    for i in range(len(indptr) - 1):
        for k in range(indptr[i], indptr[i + 1]):
            y[i] += data[k] * v[indices[k]]


@rv.reversible(check=False)
def csr_matmat(y, data, indices, indptr, b):
    for i in range(len(indptr) - 1):
        for k in range(indptr[i], indptr[i + 1]):
            for j in range(b.shape[1]):
                y[i, j] += data[k] * b[indices[k], j]


@rv.reversible(check=False)
def coo_matvec(y, data, row, col, v):
    for k in range(len(data)):
        y[row[k]] += data[k] * v[col[k]]


@rv.reversible(check=False)
def coo_matmat(y, data, row, col, b):
    for k in range(len(data)):
        for j in range(b.shape[1]):
            y[row[k], j] += data[k] * b[col[k], j]


@rv.reversible(check=False)
def paired_dot(out, a, b, ia, ib):
    """out += sum_t a[ia[t]] * b[ib[t]]: the entries two patterns share, matched beforehand."""
    for t in range(len(ia)):
        out += a[ia[t]] * b[ib[t]]


def matvec(row, col, indptr, data, v, rows, dtype):
    """A @ v (or A @ B for a matrix B) by a reversible kernel; CSR when indptr is given, else COO."""
    zeros = anp.zeros((rows,) + tuple(v.shape[1:]), dtype=dtype)
    matrix = len(v.shape) == 2
    if indptr is not None:
        kernel = csr_matmat if matrix else csr_matvec
        return kernel(zeros, data, col, indptr, v)[0]
    kernel = coo_matmat if matrix else coo_matvec
    return kernel(zeros, data, row, col, v)[0]


def dot_pairs(a, b, ia, ib, dtype):
    return paired_dot(anp.zeros((), dtype=dtype), a, b, ia, ib)[0]
