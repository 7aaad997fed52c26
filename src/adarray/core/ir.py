"""The IR: typed SSA programs, and their canonical text form (core/parser.py reads it back).

A `Program` is closed: its equations use only its inputs, the outputs of earlier
equations, and literals. Params are hashable and may hold nested programs.

    { lambda a:f64[3] .
        b:f64[3] = mul a 2.0:f64[3]
      in (b) }
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .types import SHORT_NAMES, Aval


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


# --- the text form ---------------------------------------------------------------------------------
# Constant-filled literals print as one number and their type (``0.0:f64[3]``); other literals print
# as nested lists, elided when large unless ``full=True``. Here, not in a module of its own, since
# programs and equations print themselves with it.

_RESERVED = {"in", "inf", "nan", "lambda", "bool"}
_ELIDE_ABOVE = 16
_KEYWORDS = {"None", "True", "False", *SHORT_NAMES.values()}  # strings that would read back as other values


class Namer:
    """Gives variables the names a, b, ..., z, ba, bb, ... in order of appearance."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.count = 0

    def __call__(self, var: Var) -> str:
        key = id(var)
        if key not in self.names:
            name = self._next()
            while name in _RESERVED:
                name = self._next()
            self.names[key] = name
        return self.names[key]

    def _next(self) -> str:
        n, letters = self.count, ""
        self.count += 1
        while True:
            letters = chr(ord("a") + n % 26) + letters
            n //= 26
            if n == 0:
                return letters


def format_number(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (complex, np.complexfloating)):  # 1.0+2.0j, -0.5-infj: one token for the parser
        value = complex(value)
        sign = "-" if np.signbit(value.imag) else "+"
        return f"{value.real!r}{sign}{abs(value.imag)!r}j"
    return str(int(value))


def format_literal(literal: Literal, full: bool = False) -> str:
    uniform = literal.uniform
    if uniform is not None:
        text = format_number(uniform)
    elif literal.value.size > _ELIDE_ABOVE and not full:
        text = "[...]"
    else:
        text = _format_nested(literal.value.tolist())
    return f"{text}:{literal.aval}"


def _format_nested(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_format_nested(v) for v in value) + "]"
    return format_number(value)


def format_atom(atom, namer: Namer, full: bool = False) -> str:
    if isinstance(atom, Literal):
        return format_literal(atom, full)
    return namer(atom)


def format_param(value, indent: int, full: bool) -> str:
    if isinstance(value, Program):
        return format_program(value, indent, full)
    if isinstance(value, np.dtype):
        return SHORT_NAMES[value]
    if isinstance(value, (tuple, list)):
        inner = ", ".join(format_param(v, indent, full) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, str):
        plain = value.isidentifier() and value not in _RESERVED and value not in _KEYWORDS
        return value if plain else repr(value)
    if value is None or isinstance(value, (bool, int, float, np.integer, np.floating)):
        return format_number(value) if value is not None else "None"
    text = getattr(value, "ir_text", None)  # a param that prints itself (control.custom.LazyProgram)
    if text is not None:
        return text(indent, full)
    raise TypeError(f"cannot print param value {value!r}")


def format_eqn(eqn, namer: Namer | None = None, indent: int = 0, full: bool = False) -> str:
    namer = namer or Namer()
    args = " ".join(format_atom(a, namer, full) for a in eqn.inputs)
    outs = " ".join(f"{namer(v)}:{v.aval}" for v in eqn.outputs)
    params = ""
    if eqn.params:
        params = "[" + ", ".join(
            f"{k}={format_param(v, indent + 4, full)}" for k, v in sorted(eqn.params.items())
        ) + "]"
    return f"{outs} = {eqn.prim.name}{params}" + (f" {args}" if args else "")


def format_program(program: Program, indent: int = 0, full: bool = False) -> str:
    """The text form of a program; ``full=True`` prints every literal in full."""
    namer = Namer()
    pad = " " * indent
    head = " ".join(f"{namer(v)}:{v.aval}" for v in program.inputs)
    lines = [f"{{ lambda {head} ." if head else "{ lambda ."]
    lines += [pad + "    " + format_eqn(e, namer, indent + 4, full) for e in program.eqns]
    outs = ", ".join(format_atom(a, namer, full) for a in program.outputs)
    lines.append(pad + f"  in ({outs}) }}")
    return "\n".join(lines)
