"""Checks of the arguments users pass to the control-flow functions: each bad call gets an
`ArgumentError` naming the function and the argument, never a bare Python exception from inside.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError
from ..core.pytree import flatten, leaf_paths
from ..core.types import SHORT_NAMES, Aval
from ..tracing import Tracer


def require_function(what: str, value, role: str) -> None:
    """`value` (the `role` argument of `what`) must be callable."""
    if not callable(value):
        raise ArgumentError(f"{what}: {role} must be a function, got a {type(value).__name__}")


def operand_avals(what: str, role: str, tree) -> list[Aval]:
    """Avals of the leaves of `tree` (the `role` argument of `what`): arrays, NumPy or Python
    numbers, or traced values of a supported dtype."""
    leaves, structure = flatten(tree)
    avals = []
    for path, leaf in zip(leaf_paths(structure), leaves):
        where = role if path == "(the value)" else f"{role} {path}"
        if isinstance(leaf, Tracer):
            avals.append(leaf.aval)
            continue
        if not isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex)):
            raise ArgumentError(f"{what}: {where} is a {type(leaf).__name__}, not an array")
        array = np.asarray(leaf)
        if array.dtype not in SHORT_NAMES:
            raise ArgumentError(f"{what}: {where} has dtype {array.dtype}, which adarray does not support")
        avals.append(Aval(array.shape, np.float64 if isinstance(leaf, float) else array.dtype))
    return avals


def integer_scalar(what: str, role: str, value, *, allow_bool: bool = False):
    """`value` as a Python int (or a traced integer scalar), refusing floats instead of truncating."""
    if isinstance(value, Tracer):
        kinds = "iub" if allow_bool else "iu"
        if value.aval.dtype.kind not in kinds or value.aval.shape != ():
            raise ArgumentError(f"{what}: {role} must be an integer scalar, got a traced {value.aval}")
        return value
    array = np.asarray(value) if isinstance(value, (np.ndarray, np.generic, int, float, bool, complex)) else None
    kinds = "iub" if allow_bool else "iu"
    if array is None or array.shape != () or array.dtype.kind not in kinds:
        shown = f"{value!r}" if array is None or array.size < 5 else f"an array of shape {array.shape}"
        raise ArgumentError(f"{what}: {role} must be an integer, got {shown}"
                            + ("; convert it with int() if truncation is meant" if array is not None and
                               array.dtype.kind == "f" else ""))
    return int(array)
