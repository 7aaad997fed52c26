"""Primitive families, one module each, every IR rule beside its primitive.

Importing this package registers every primitive.
"""
from . import (  # noqa: F401
    arithmetic,
    bessel,
    complex,
    eig,
    elementwise,
    elementwise_taylor,
    factorizations,
    fft,
    gamma_functions,
    indexing,
    linalg,
    matrix_functions,
    reduce,
    scan,
    scatter_products,
    sort,
    special,
    spectral,
    sqrtm_logm,
    structural,
    sylvester,
    triangular,
)
