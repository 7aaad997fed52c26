"""The adarray exception hierarchy: every error a user can see derives from `Error`.

Each message ends with the user's source line that led to it, when known.
"""
from __future__ import annotations

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_source_line() -> str | None:
    """'file:line' of the innermost stack frame outside the adarray package, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR) and not filename.startswith("<frozen"):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


# Set by adarray.tracing: returns the name of the function being traced, or None.
current_function_name = None


class Error(Exception):
    """Base class of every adarray error."""

    def __init__(self, message: str = ""):
        if " (in '" not in message and "(at " not in message:
            where = []
            name = current_function_name() if current_function_name else None
            if name:
                where.append(f"in '{name}'")
            line = user_source_line()
            if line:
                where.append(f"at {line}")
            if where:
                message = f"{message} ({', '.join(where)})"
        super().__init__(message)


class ShapeError(Error, ValueError):
    """Operands whose shapes or dtypes do not fit the operation."""


class IndexOutOfRangeError(Error, IndexError):
    """A static index is out of range for the indexed axis."""


class TracingError(Error, TypeError):
    """Python used a traced value where a concrete one is needed (if, while, bool(), float(), ...)."""


class NonDifferentiableError(Error, TypeError):
    """Differentiation was asked with respect to an integer or boolean input."""


class ArgumentError(Error, ValueError):
    """A transformation was called with bad arguments (argnums, non-scalar output of grad, ...)."""


class UnsupportedError(Error, NotImplementedError):
    """A primitive has no rule for a transformation (the message names both)."""


class ParseError(Error, ValueError):
    """The text form of a program could not be read."""


class VerifyError(Error, AssertionError):
    """A program breaks an IR invariant (single assignment, binding, types)."""


class ExecutionError(Error, RuntimeError):
    """A program failed at run time, e.g. an index out of range."""


class KernelSyntaxError(Error, SyntaxError):
    """A scalar kernel uses Python outside the kernel language, or ill-typed (names the kernel and line)."""


class ReversibilityError(Error, ValueError):
    """A reversible program (adarray.reversible) is not reversible: rejected when decorated, or a run-time check
    failed (an ancilla not restored, a post-condition, a changed loop bound); names the function and line."""
