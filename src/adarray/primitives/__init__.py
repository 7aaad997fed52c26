"""Primitive families, one module each, every IR rule beside its primitive.

Importing this package registers every primitive.
"""
from . import (  # noqa: F401
    complex,
    eig,
    elementwise,
    factorizations,
    fft,
    indexing,
    linalg,
    matrix_functions,
    reduce,
    scan,
    sort,
    special,
    spectral,
    structural,
    triangular,
)
