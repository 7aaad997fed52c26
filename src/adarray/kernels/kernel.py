"""The @kernel decorator: scalar Python code applied elementwise, like a ufunc.

    @ad.kernel
    def hmlstm_cell(z, zb, c, f, i, g):
        if z == 1.0:
            return anp.sigmoid(i) * anp.tanh(g)      # FLUSH
        elif zb == 0.0:
            return c                                 # COPY
        else:
            return anp.sigmoid(f) * c + anp.sigmoid(i) * anp.tanh(g)

    c_new = hmlstm_cell(z[:, None], zb[:, None], c, f, i, g)   # broadcasts like a ufunc

The source is checked at decoration time (language.py); the scalar IR is traced once per tuple of
argument dtypes (lower.py). A call binds one `kernel` equation (primitive.py), or, when a guard
rules it out, evaluates the kernel's operations on arrays: a kernel that reads traced arrays it
does not take as arguments (a closure: Zygote lost such gradients on its dual-number path), or
complex arguments (the kernel primitive computes in real floats only). Both give the same values.
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.errors import ArgumentError, KernelSyntaxError
from ..core.ir import Program
from ..core.types import DTYPES_BY_NAME
from ..tracing import Tracer
from .language import Checker, assigned_names, check_function, resolve_free
from .lower import Lowering
from .primitive import evaluate_by_operations, kernel_p


class Kernel:
    """A function in the kernel language; calling it maps it over the broadcast of its arguments."""

    _is_adarray_kernel = True

    def __init__(self, fn):
        self.fn = fn
        self.source = check_function(fn)
        function = self.source.function
        self.arguments = [a.arg for a in function.args.posonlyargs + function.args.args]
        self.locals = set(self.arguments) | set(assigned_names(function.body))
        self._programs: dict = {}
        self.lowering_active = False
        functools.update_wrapper(self, fn)

    def scalar_program(self, dtypes) -> tuple[Program, list]:
        """(the scalar IR for arguments of `dtypes`, [(name, value)] of the free arrays it reads)."""
        dtypes = tuple(np.dtype(d) for d in dtypes)
        cached = self._programs.get(dtypes)
        if cached is not None:
            program, names = cached
            closure = [(name, resolve_free(self.fn, name)[1]) for name in names]
            expected = program.in_avals[len(dtypes):]
            if all(_dtype(v) == a.dtype for (_, v), a in zip(closure, expected)):
                return program, closure
        lowering = Lowering(self)
        self.lowering_active = True
        try:
            program = lowering.program(dtypes)
        finally:
            self.lowering_active = False
        self._programs[dtypes] = (program, [name for name, _ in lowering.closure])
        return program, list(lowering.closure)

    def ir(self, *dtypes) -> Program:
        """The scalar IR for arguments of the given dtypes (default: float64 for every argument): NumPy dtypes
        or the names the IR prints ("f64", "f32", "i64", "bool", ...).

        >>> print(hmlstm_cell.ir("f64", "f64", "f64", "f64", "f64", "f64"))  # doctest: +SKIP
        """
        if dtypes and len(dtypes) != len(self.arguments):
            raise ArgumentError(f"kernel '{self.__name__}'.ir: one dtype per argument ({', '.join(self.arguments)}), "
                                f"got {len(dtypes)}")
        dtypes = tuple(self._dtype(d) for d in dtypes) or (np.dtype(np.float64),) * len(self.arguments)
        return self.scalar_program(dtypes)[0]

    def _dtype(self, name) -> np.dtype:
        """A dtype from a NumPy dtype (or its name) or from the IR's short name."""
        if isinstance(name, str) and name in DTYPES_BY_NAME:
            return DTYPES_BY_NAME[name]
        try:
            return np.dtype(name)
        except TypeError:
            raise ArgumentError(f"kernel '{self.__name__}'.ir: unknown dtype {name!r}; give a NumPy dtype or one "
                                f"of {', '.join(DTYPES_BY_NAME)}") from None

    def __call__(self, *args):
        if len(args) != len(self.arguments):
            raise KernelSyntaxError(f"kernel '{self.__name__}' takes {len(self.arguments)} arguments "
                                    f"({', '.join(self.arguments)}), got {len(args)}")
        values = [a if isinstance(a, Tracer) else np.asarray(a) for a in args]
        for value, name in zip(values, self.arguments):
            if _dtype(value).kind not in "biufc":
                raise KernelSyntaxError(f"kernel '{self.__name__}': argument '{name}' is {_dtype(value)}, "
                                        "not numbers")
        program, closure = self.scalar_program(tuple(_dtype(v) for v in values))
        extra = [v if isinstance(v, Tracer) else np.asarray(v) for _, v in closure]
        everything = values + extra
        complex_values = any(_dtype(v).kind == "c" for v in everything)
        if complex_values or any(isinstance(v, Tracer) for v in extra):
            outs = evaluate_by_operations(program, everything)
        else:
            outs = kernel_p.bind(*everything, kernel=program, name=self.__name__)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def __repr__(self) -> str:
        return f"<kernel {self.__name__}({', '.join(self.arguments)})>"


def _dtype(value) -> np.dtype:
    return value.dtype if isinstance(value, Tracer) else np.asarray(value).dtype


def kernel(fn) -> Kernel:
    """Decorate a scalar function written in the kernel language (see adarray.kernels.language).

    The call broadcasts its arguments like a ufunc and is one `kernel` equation in traced programs:
    forward mode by source transformation, reverse mode by mixed mode (values and partials in one
    pass), vmap as another kernel call. Unsupported Python raises KernelSyntaxError at decoration.

    >>> @kernel
    ... def relu(x):
    ...     return x if x > 0.0 else 0.0
    >>> relu(np.array([-1.0, 2.0]))  # doctest: +SKIP
    array([0., 2.])
    """
    return Kernel(fn)


__all__ = ["Checker", "Kernel", "kernel"]
