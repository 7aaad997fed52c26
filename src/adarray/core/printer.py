"""The canonical text form of programs (the parser reads it back).

    { lambda a:f64[3] .
        b:f64[3] = mul a a
        c:f64[] = reduce[axes=(0,), op=add] b
      in (c) }

Constant-filled literals print as one number and their type (``0.0:f64[3]``);
other literals print as nested lists, elided when large unless ``full=True``.
"""
from __future__ import annotations

import numpy as np

from .ir import Literal, Program, Var
from .types import SHORT_NAMES

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
