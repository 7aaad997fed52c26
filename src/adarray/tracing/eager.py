"""Primitives on concrete arrays: the default backend installs its evaluator here, so that `bind`
outside a trace and constant folding run without this layer importing a backend."""
from __future__ import annotations

from ..core.errors import ExecutionError

_evaluator = None  # (primitive, arrays, params) -> outputs


def set_evaluator(evaluator) -> None:
    """Make `evaluator` run primitives on concrete arrays (eager calls, constant folding)."""
    global _evaluator
    _evaluator = evaluator


def evaluate(prim, arrays, params):
    """`prim` applied to concrete arrays by the default backend."""
    if _evaluator is None:
        raise ExecutionError(f"'{prim.name}' needs a backend to run on concrete arrays: import adarray")
    return _evaluator(prim, arrays, params)
