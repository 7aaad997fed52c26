"""Scalar code of the elementwise primitives: one Python expression template per primitive, the text
that the code generator writes for one element (both for programs, `codegen.py`, and for the
kernel execution mode, `kernels.py`).

Templates follow the NumPy backend's ufuncs so that both backends agree to rounding: `np.*`
functions on scalars keep float32 float32 in Numba (`math.*` would widen to float64), `logistic`
is scipy's `1 / (1 + exp(-x))`, `round` is NumPy's half-to-even `rint`. Every result is cast to
the equation's output dtype where Numba's scalar typing would differ (int32 arithmetic widens to
int64 in Numba, as in Python). `TRANSCENDENTAL` lists the templates that call a libm function:
the cost model counts them as expensive.

    >>> expression(ew.sin_p, ["a"], np.dtype(np.float64), {})
    'np.sin(a)'
"""
from __future__ import annotations

import numpy as np

from ...core.ir import Literal
from ...primitives import elementwise as ew
from ...primitives import operations
from ...primitives.operations import OPERATIONS

# One element of each elementwise primitive: the source of the operations table
# (primitives/operations.py), except where this backend has its own helper (below, in HELPERS):
# NumPy's NaN and tie conventions for maximum/minimum, floor division and sinc.
_OVERRIDES = {
    ew.logistic_p: "_logistic({0})", ew.maximum_p: "_maximum({0}, {1})", ew.minimum_p: "_minimum({0}, {1})",
    ew.floor_divide_p: "_floor_divide({0}, {1})", ew.sinc_p: "_sinc({0})",
}
TEMPLATES = {prim: _OVERRIDES.get(prim, row.source) for prim, row in OPERATIONS.items()
             if row.source is not None or prim in _OVERRIDES}

# Templates that call a transcendental function (counted as expensive by the cost model).
TRANSCENDENTAL = operations.TRANSCENDENTAL
ELEMENTWISE = set(TEMPLATES) | {ew.select_p, ew.convert_p, ew.integer_pow_p}

# float64 functions with a vectorisable implementation in mathlib.py (LLVM cannot vectorise a
# loop calling libm; these are inlined arithmetic, so the fused loops vectorise).
VECTOR_MATH = {ew.exp_p: "exp", ew.log_p: "log", ew.expm1_p: "expm1", ew.log1p_p: "log1p", ew.tanh_p: "tanh",
               ew.logistic_p: "logistic"}

# What the generated modules import: the vectorised math and the helpers the templates call
# (mathlib.py: compiled once per process and inlined by LLVM, not re-typed at every call site).
HELPERS = """
from adarray.backends.numba import bessellib as _bl
from adarray.backends.numba import callbacks as _cb
from adarray.backends.numba import fftlib as _ff
from adarray.backends.numba import gammalib as _g
from adarray.backends.numba import incompletelib as _inc
from adarray.backends.numba import indexlib as _ix
from adarray.backends.numba import linalglib as _la
from adarray.backends.numba import matfunlib as _mf
from adarray.backends.numba import mathlib as _m
from adarray.backends.numba.mathlib import floor_divide as _floor_divide, logistic_any as _logistic
from adarray.backends.numba.mathlib import maximum as _maximum, minimum as _minimum, sinc as _sinc
from adarray.backends.numba import speciallib as _sp
from adarray.primitives.matrices import LinAlgError as _LinAlgError
"""


def type_name(dtype) -> str:
    """The Numba-visible constructor of `dtype`: np.float64, np.int32, np.bool_."""
    dtype = np.dtype(dtype)
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def constant(value, dtype) -> str:
    """A scalar constant of `dtype` as source text (float64 and int64 as plain Python literals)."""
    dtype = np.dtype(dtype)
    value = np.asarray(value, dtype).item()
    if dtype == np.bool_:
        return repr(bool(value))
    if dtype.kind == "c":  # complex(re, im) keeps inf and NaN parts apart (re + im * 1j would not)
        text = f"complex({constant(value.real, np.float64)}, {constant(value.imag, np.float64)})"
        return text if dtype == np.complex128 else f"{type_name(dtype)}({text})"
    if dtype.kind == "f":
        if np.isnan(value):
            text = "np.nan"
        elif np.isinf(value):
            text = "np.inf" if value > 0 else "(-np.inf)"
        else:
            text = repr(float(value))
        return text if dtype == np.float64 else f"{type_name(dtype)}({text})"
    return repr(int(value)) if dtype == np.int64 else f"{type_name(dtype)}({int(value)})"


def literal(atom: Literal) -> str | None:
    """The text of a literal whose elements are all equal, or None."""
    value = atom.uniform
    return None if value is None else constant(value, atom.aval.dtype)


_NO_CAST = frozenset(np.dtype(t) for t in (np.float64, np.int64, np.bool_, np.complex128))


def _needs_cast(dtype) -> bool:
    return np.dtype(dtype) not in _NO_CAST


def expression(prim, args, dtype, params) -> str:
    """The scalar expression of an elementwise primitive applied to the expressions `args`, of `dtype`."""
    dtype = np.dtype(dtype)
    if prim is ew.select_p:
        text = f"({args[1]} if {args[0]} else {args[2]})"
    elif prim is ew.convert_p:
        target = np.dtype(params["dtype"])
        return f"({args[0]} != 0)" if target == np.bool_ else f"{type_name(target)}({args[0]})"
    elif prim is ew.integer_pow_p:
        text = _integer_pow(args[0], params["n"], dtype)
    elif prim in VECTOR_MATH and dtype == np.float64:
        return f"_m.{VECTOR_MATH[prim]}({args[0]})"
    else:
        text = TEMPLATES[prim].format(*args, zero=constant(0, dtype))
    if _needs_cast(dtype) and prim not in _COMPARISONS:
        return f"{type_name(dtype)}({text})"
    return text


_COMPARISONS = operations.BOOLEAN


def _integer_pow(x, n, dtype) -> str:
    if n == 0:
        return constant(1, dtype)
    if n == 1:
        return x
    if n == 2:
        return f"({x} * {x})"
    if n == 3:
        return f"({x} * {x} * {x})"
    if n < 0:
        return f"(1.0 / np.power({x}, {constant(-n, dtype)}))"
    return f"np.power({x}, {constant(n, dtype)})"
