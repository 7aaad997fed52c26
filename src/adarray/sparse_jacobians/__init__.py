"""Sparse Jacobians: the pattern (transforms/sparsity.py), a colouring of its columns or rows
(colouring.py), and one forward or reverse sweep per colour (jacobian.py).

    >>> import adarray as ad, numpy as np
    >>> ad.sparse_jacobian(lambda x: x ** 2)(np.ones(3)).toarray().diagonal().tolist()
    [2.0, 2.0, 2.0]
"""
from .jacobian import jacobian_sparsity, sparse_jacobian

__all__ = ["jacobian_sparsity", "sparse_jacobian"]
