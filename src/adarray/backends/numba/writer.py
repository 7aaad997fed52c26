"""The generated function's writer, and where values are read from and written to (the program emitter,
codegen.py, the opaque lowerings and the fusion plan, planning.py, use them).

    >>> Buffer("xs", ("t",)).read(("i0_0",))
    'xs[t, i0_0]'
"""
from __future__ import annotations

import numpy as np

from . import scalar

# --- where values are read from and written to ------------------------------------------------------


class Local:
    """A rank-0 value held in a local variable (or a constant expression)."""

    def __init__(self, text: str):
        self.text = text

    def read(self, index) -> str:
        return self.text

    def write(self, index, expr: str) -> str:
        return f"{self.text} = {expr}"


class Buffer:
    """An array `name`, optionally at a fixed leading index (`prefix`: a fold's xs[t] or ys[t])."""

    def __init__(self, name: str, prefix: tuple = ()):
        self.name, self.prefix = name, tuple(prefix)

    def read(self, index) -> str:
        return f"{self.name}[{', '.join(self.prefix + tuple(index))}]"

    def write(self, index, expr: str) -> str:
        return f"{self.read(index)} = {expr}"

    @property
    def whole(self) -> bool:
        """Is this the whole array (so that it can be returned or passed on)?"""
        return not self.prefix


class Scratch(Buffer):
    """A value kept for one iteration of a chain's outer loop: an array of the value's inner shape,
    indexed by the inner axes only (the outer ones are the iteration's)."""

    whole = False

    def __init__(self, name: str, aval, outer: int):
        super().__init__(name)
        self.aval, self.outer = aval, outer

    def read(self, index) -> str:
        return f"{self.name}[{', '.join(tuple(index)[self.outer:])}]"

    def allocation(self) -> str:
        return f"{self.name} = np.empty({tuple(self.aval.shape[self.outer:])!r}, {scalar.type_name(self.aval.dtype)})"


class Remapped:
    """A read-only view: `read(index)` -> the text for that element (e.g. a product computed by BLAS
    in another layout)."""

    whole = False

    def __init__(self, read):
        self.read = read


# --- the function being written ----------------------------------------------------------------------


class FunctionWriter:
    """Lines of one generated function: hoisted allocations first, then the body."""

    def __init__(self, scalar_arguments: bool = True):
        self.scalar_arguments = scalar_arguments  # float literals as parameters (not in kernels: they have none)
        self.prologue: list[str] = []
        self.lines: list[str] = []
        self.counter = 0
        self.constants: list = []  # arrays passed as extra arguments (non-uniform literals)
        self.scalars: dict = {}  # name -> (value, dtype) of the float literals passed as arguments
        self.contiguous: set[str] = set()  # arrays allocated here (C-contiguous, reshapeable in place)
        self.allocations: dict = {}  # name -> aval of the arrays allocate() wrote (workspace.py takes them)
        self.parallel = False
        self.callbacks = False  # a `with numba.objmode()` call into NumPy (table.CALLBACK)
        self.profile = False  # time every top-level group (runtime.profile_program)
        self.groups: list[str] = []  # a description of each top-level group, in order

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def scalar(self, atom, text: str) -> str:
        """The text of a uniform literal: a parameter for a float that is not an integer (the mean's 1/n and the
        like: the code, and its compiled machine code, is then the same whatever n is)."""
        value = atom.uniform
        fraction = np.dtype(atom.aval.dtype).kind == "f" and np.isfinite(value) and value != round(value)
        if not (self.scalar_arguments and fraction):
            return text
        for name, (known, dtype) in self.scalars.items():
            if known == value and dtype == atom.aval.dtype and np.signbit(known) == np.signbit(value):
                return name
        name = f"_c{len(self.scalars)}"
        self.scalars[name] = (value, np.dtype(atom.aval.dtype))
        return name

    def constant(self, value) -> str:
        for name, array in self.constants:
            if array is value:
                return name
        name = f"_k{len(self.constants)}"  # never a fresh() name (a cond's index "k2" took the name of a constant)
        self.constants.append((name, value))
        return name


def index_names(depth: int, rank: int, letter: str = "i") -> tuple:
    return tuple(f"{letter}{depth}_{d}" for d in range(rank))


def allocation(aval) -> str:
    return f"np.empty({tuple(aval.shape)!r}, {scalar.type_name(aval.dtype)})"
