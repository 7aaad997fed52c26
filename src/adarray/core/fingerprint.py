"""A program's fingerprint: a hashable key equal for two programs exactly when they compute the same
thing, equation for equation.

It covers the structure (primitives, params, the wiring of variables, types) and the values of the
constants, nested programs included. The un-jitted transformations trace the user's function at every
call (so closures, globals and random draws are read afresh, as in JAX) and reuse the transformed,
simplified and compiled program of an earlier call whose traced program has the same fingerprint.

    >>> a = trace_program(lambda x: x * 2.0, [Aval((3,), np.float64)])[0]      # doctest: +SKIP
    >>> b = trace_program(lambda y: y * 2.0, [Aval((3,), np.float64)])[0]      # doctest: +SKIP
    >>> fingerprint(a) == fingerprint(b), fingerprint(a) == fingerprint(c)    # doctest: +SKIP
    (True, False)  # where c multiplies by 3.0
"""
from __future__ import annotations

import hashlib

import numpy as np

from .ir import Literal, Program, Var

# Constants up to this many bytes enter the key as bytes; larger ones as a 128-bit digest of them.
_INLINE_BYTES = 256


def fingerprint(program: Program) -> tuple:
    """The key of `program` (see the module docstring)."""
    numbers: dict[int, int] = {id(var): n for n, var in enumerate(program.inputs)}

    def atom(value):
        if isinstance(value, Var):
            return numbers[id(value)]
        return literal_key(value)

    parts = [tuple(var.aval for var in program.inputs)]
    for eqn in program.eqns:
        inputs = tuple(atom(a) for a in eqn.inputs)
        for var in eqn.outputs:
            numbers[id(var)] = len(numbers)
        # The outputs' types follow from the inputs' and the params (the shape rule is a function of them).
        params = eqn.params
        parts.append((eqn.prim, inputs, tuple(sorted((k, _param_key(v)) for k, v in params.items())) if params
                      else ()))
    parts.append(tuple(atom(a) for a in program.outputs))
    return tuple(parts)


def literal_key(literal: Literal) -> tuple:
    """A constant's type and value (bit for bit: -0.0 and NaN payloads are told apart)."""
    uniform_value = literal.value
    if uniform_value.ndim == 0 or uniform_value.strides == (0,) * uniform_value.ndim:
        first = uniform_value.reshape(-1)[:1]
        return ("uniform", literal.aval, first.tobytes())
    return ("array", literal.aval, array_digest(uniform_value))


def array_digest(array: np.ndarray) -> bytes:
    """The bytes of a small array, a digest of a large one's."""
    data = np.ascontiguousarray(array)
    if data.nbytes <= _INLINE_BYTES:
        return data.tobytes()
    return hashlib.blake2b(memoryview(data).cast("B"), digest_size=16).digest()


def _param_key(value):
    if isinstance(value, Program):
        return ("program", fingerprint(value))
    key = getattr(type(value), "fingerprint_key", None)
    if key is not None:  # a param that holds a program of its own (a custom rule, traced on demand)
        return key(value)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(_param_key(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple(sorted((k, _param_key(v)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.shape, value.dtype.str, array_digest(value))
    if isinstance(value, np.dtype):
        return ("dtype", value.str)
    if isinstance(value, Literal):
        return literal_key(value)
    try:
        hash(value)
    except TypeError:
        return object()  # unhashable and unknown: never equal to another call's
    return value
