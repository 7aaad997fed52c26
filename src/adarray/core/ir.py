"""The IR: typed SSA programs.

A `Program` is closed: its equations use only its inputs, the outputs of earlier
equations, and literals. Params are hashable and may hold nested programs.

    { lambda a:f64[3] .
        b:f64[3] = mul a 2.0:f64[3]
      in (b) }
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .types import Aval


class Var:
    """An SSA name; identity is the name, the printer picks the letters."""

    __slots__ = ("aval",)

    def __init__(self, aval: Aval):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var({self.aval})"


class Literal:
    """A constant array in the program text.

    Constant-filled arrays are stored zero-strided (no memory per element) and
    print as one number with their type, e.g. ``0.0:f64[1000]``.
    """

    __slots__ = ("value", "aval")

    def __init__(self, value, aval: Aval | None = None):
        if aval is None:
            aval = Aval(np.shape(value), np.asarray(value).dtype)
        value = np.asarray(value, dtype=aval.dtype)
        if value.shape != aval.shape:
            value = np.broadcast_to(value, aval.shape)
        if value.size > 1 and value.strides != (0,) * value.ndim:
            first = value.reshape(-1)[0]
            same_sign = value.dtype.kind != "f" or np.all(np.signbit(value) == np.signbit(first))
            if np.all(value == first) and same_sign:
                value = np.broadcast_to(first, aval.shape)
        self.value = value
        self.aval = aval

    @property
    def uniform(self):
        """The one value every element has, or None."""
        value = self.value
        if value.size == 0:
            return None
        if value.ndim == 0 or value.strides == (0,) * value.ndim:
            return value.reshape(-1)[0].item()
        return None

    def __repr__(self) -> str:
        return f"Literal({self.value!r})"


Atom = Var | Literal


@dataclass(frozen=True, eq=False)
class Eqn:
    """``outputs = prim[params] inputs``."""

    prim: object  # core.primitive.Primitive
    inputs: tuple
    params: dict
    outputs: tuple

    def __repr__(self) -> str:
        from .printer import format_eqn

        return format_eqn(self)


@dataclass(frozen=True, eq=False)
class Program:
    """A closed, typed SSA program ``lambda inputs . eqns in outputs``."""

    inputs: tuple
    eqns: tuple
    outputs: tuple

    @property
    def in_avals(self) -> tuple[Aval, ...]:
        return tuple(v.aval for v in self.inputs)

    @property
    def out_avals(self) -> tuple[Aval, ...]:
        return tuple(v.aval for v in self.outputs)

    def __str__(self) -> str:
        from .printer import format_program

        return format_program(self)

    def __repr__(self) -> str:
        return str(self)

    def __hash__(self) -> int:
        return id(self)


def walk(program: Program, inputs, step, literal=lambda literal: literal.value) -> list:
    """Visit `program`'s equations in order, carrying one value per variable (of any kind: arrays,
    tracers, (primal, tangent) pairs, ...): `step(eqn, input values)` returns one value per output
    (a list), `literal` turns a Literal into a value. Returns the values of the program's outputs.
    The tracer (eval_program), jvp, vjp's forward sweep, vmap and the guard pass are walks.

    >>> walk(program, arrays, lambda eqn, ins: [f(*ins)])  # doctest: +SKIP
    """
    env = {id(var): value for var, value in zip(program.inputs, inputs)}

    def read(atom):
        return literal(atom) if isinstance(atom, Literal) else env[id(atom)]

    for eqn in program.eqns:
        for var, value in zip(eqn.outputs, step(eqn, [read(atom) for atom in eqn.inputs])):
            env[id(var)] = value
    return [read(atom) for atom in program.outputs]


def dead_after(program: Program) -> list[tuple[Var, ...]]:
    """For each equation, the variables no later equation reads: read there for the last time, or
    written there and never read. Program outputs never die. Interpreters free these values."""
    last = {}
    for k, eqn in enumerate(program.eqns):
        for atom in (*eqn.outputs, *eqn.inputs):
            if isinstance(atom, Var):
                last[id(atom)] = (k, atom)
    for atom in program.outputs:
        last.pop(id(atom), None)
    dead = [[] for _ in program.eqns]
    for k, var in last.values():
        dead[k].append(var)
    return [tuple(d) for d in dead]


def params_key(params: dict) -> tuple:
    """A hashable key for a params dict (used by CSE and caches)."""
    return tuple(sorted((k, _hashable(v)) for k, v in params.items()))


def _hashable(value):
    if isinstance(value, np.dtype):
        return ("dtype", value.str)
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.tobytes())
    return value
