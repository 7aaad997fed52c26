"""Primitive families, one module each, every IR rule beside its primitive.

Importing this package registers every primitive.
"""
from . import elementwise, indexing, linalg, reduce, scan, sort, special, structural  # noqa: F401
