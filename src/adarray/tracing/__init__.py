"""Staging: the one tracer that records Python array code into a Program."""
from .eager import evaluate, set_evaluator
from .tracer import (
    ARRAY_METHODS,
    Trace,
    Tracer,
    TraceRecord,
    current_trace,
    eval_program,
    is_tracer,
    record_guard,
    trace_guarded,
    trace_program,
)

__all__ = ["ARRAY_METHODS", "Trace", "TraceRecord", "Tracer", "current_trace", "eval_program", "evaluate", "is_tracer",
           "record_guard", "set_evaluator", "trace_guarded", "trace_program"]
