"""The adarray exception hierarchy: every error a user can see derives from `Error`."""


class Error(Exception):
    """Base class of every adarray error."""


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
