"""Sparse matrices with differentiable stored values: `import adarray.sparse as sp`.

    A = sp.CSR.from_scipy(S)                   # or sp.CSR(data, indices, indptr, shape), sp.COO(data, row, col, shape)
    y = A @ v                                  # dense; A @ B for a dense B; A.T; sp.sum(A, axis); A * 2.0; A + A
    ad.grad(lambda d: sp.dot(sp.CSR(d, A.indices, A.indptr, A.shape), B))(A.data)   # one value per stored entry

Matrices are pytrees whose only leaf is `data`, so they pass through grad, jit and vmap, and the gradient with
respect to a matrix is a matrix of the same pattern.
"""
from .matrices import COO, CSR, Pattern, dot, get_method, matmul, set_method, sum, transpose

__all__ = ["COO", "CSR", "Pattern", "dot", "get_method", "matmul", "set_method", "sum", "transpose"]
