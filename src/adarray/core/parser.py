"""Reads the text form written by `printer` back into a `Program`.

>>> program = parse_program("{ lambda a:f64[3] . b:f64[3] = exp a in (b) }")
>>> str(program) == format_program(program)
True
"""
from __future__ import annotations

import re

import numpy as np

from .errors import Error, ParseError
from .ir import Eqn, Literal, Program, Var
from .primitive import REGISTRY
from .printer import format_program  # noqa: F401  (used by the doctest)
from .types import DTYPES_BY_NAME, Aval
from .verify import verify as check

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<number>-?(?:inf|nan|\d+\.\d*(?:e[+-]?\d+)?|\d+e[+-]?\d+|\d+)
                 (?:[+-](?:inf|nan|\d+\.\d*(?:e[+-]?\d+)?|\d+e[+-]?\d+|\d+)j)?)
    | (?P<string>'[^']*'|"[^"]*")
    | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
    | (?P<punct>[{}()\[\],=.:])
    )""",
    re.VERBOSE,
)


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise ParseError(f"unexpected character at {position}: {text[position:position + 20]!r}")
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.tokens = _tokenize(text)
        self.position = 0

    def peek(self, offset: int = 0):
        index = self.position + offset
        return self.tokens[index] if index < len(self.tokens) else ("end", "")

    def take(self, expected: str | None = None) -> str:
        kind, value = self.peek()
        if expected is not None and value != expected:
            raise ParseError(f"expected {expected!r}, found {value!r} (token {self.position})")
        self.position += 1
        return value

    def program(self) -> Program:
        self.take("{")
        self.take("lambda")
        scope: dict[str, Var] = {}
        inputs = []
        while self.peek()[1] != ".":
            inputs.append(self.binder(scope))
        self.take(".")
        eqns = []
        while self.peek()[1] != "in":
            eqns.append(self.eqn(scope))
        self.take("in")
        self.take("(")
        outputs = []
        while self.peek()[1] != ")":
            outputs.append(self.atom(scope))
            if self.peek()[1] == ",":
                self.take(",")
        self.take(")")
        self.take("}")
        return Program(tuple(inputs), tuple(eqns), tuple(outputs))

    def binder(self, scope) -> Var:
        name = self.take()
        self.take(":")
        var = Var(self.aval())
        if name in scope:
            raise ParseError(f"variable {name!r} is assigned twice")
        scope[name] = var
        return var

    def aval(self) -> Aval:
        dtype = self.take()
        if dtype not in DTYPES_BY_NAME:
            raise ParseError(f"unknown dtype {dtype!r}")
        self.take("[")
        shape = []
        while self.peek()[1] != "]":
            shape.append(int(self.take()))
            if self.peek()[1] == ",":
                self.take(",")
        self.take("]")
        return Aval(shape, DTYPES_BY_NAME[dtype])

    def eqn(self, scope) -> Eqn:
        pending = []
        while self.peek()[1] != "=":
            name = self.take()
            self.take(":")
            pending.append((name, Var(self.aval())))
        self.take("=")
        prim_name = self.take()
        if prim_name not in REGISTRY:
            raise ParseError(f"unknown primitive {prim_name!r}")
        params = {}
        if self.peek()[1] == "[" and self.peek(1)[0] == "name" and self.peek(2)[1] == "=":
            self.take("[")
            while self.peek()[1] != "]":
                key = self.take()
                self.take("=")
                params[key] = self.param(scope)
                if self.peek()[1] == ",":
                    self.take(",")
            self.take("]")
        inputs = []
        while not self.at_eqn_end():
            inputs.append(self.atom(scope))
        for name, var in pending:
            if name in scope:
                raise ParseError(f"variable {name!r} is assigned twice")
            scope[name] = var
        return Eqn(REGISTRY[prim_name], tuple(inputs), params, tuple(v for _, v in pending))

    def at_eqn_end(self) -> bool:
        kind, value = self.peek()
        return value == "in" or (kind == "name" and self.peek(1)[1] == ":" and value not in ("True", "False"))

    def atom(self, scope):
        kind, value = self.peek()
        if kind == "name" and value not in ("True", "False"):
            self.take()
            if value not in scope:
                raise ParseError(f"variable {value!r} is used before it is assigned")
            return scope[value]
        data = self.nested()
        self.take(":")
        aval = self.aval()
        value = np.asarray(data, dtype=aval.dtype)
        if value.size == 0:
            value = value.reshape(aval.shape)
        if value.ndim and value.shape != aval.shape:
            raise ParseError(f"literal of shape {value.shape} does not match its type {aval}")
        return Literal(value, aval)

    def nested(self):
        if self.peek()[1] == "[":
            self.take("[")
            items = []
            while self.peek()[1] != "]":
                items.append(self.nested())
                if self.peek()[1] == ",":
                    self.take(",")
            self.take("]")
            return items
        return _number(self.take())

    def param(self, scope):
        kind, value = self.peek()
        if value == "{":
            return self.program()
        if value == "(":
            self.take("(")
            items = []
            while self.peek()[1] != ")":
                items.append(self.param(scope))
                if self.peek()[1] == ",":
                    self.take(",")
            self.take(")")
            return tuple(items)
        self.take()
        if kind == "number":
            return _number(value)
        if kind == "string":
            return value[1:-1]
        if value in DTYPES_BY_NAME:
            return np.dtype(DTYPES_BY_NAME[value])
        return {"None": None, "True": True, "False": False}.get(value, value)


def _number(text: str):
    if text in ("True", "False"):
        return text == "True"
    try:
        if text.endswith("j"):  # a complex number, printed as 1.0+2.0j
            return complex(text)
        if any(c in text for c in ".en") or "inf" in text:
            return float(text)
        return int(text)
    except ValueError:
        hint = " (a literal printed elided as [...]: print with format_program(program, full=True))" if (
            text == ".") else ""
        raise ParseError(f"expected a variable or a number, found {text!r}{hint}") from None


def parse_program(text: str, verify: bool = True) -> Program:
    """Parse the text form of a program (primitives must be registered: import adarray first).

    The program read is verified (core.verify: single assignment, every variable bound, and every
    equation's declared types equal to its primitive's shape rule), so text that names the wrong
    types raises a ParseError here rather than a wrong result later; verify=False skips that.
    """
    parser = _Parser(text)
    try:
        program = parser.program()
    except (ValueError, TypeError) as error:
        if isinstance(error, ParseError):
            raise
        raise ParseError(f"malformed program text near token {parser.position}: {error}") from None
    if parser.peek()[0] != "end":
        raise ParseError(f"unexpected text after the program: {parser.peek()[1]!r}")
    if verify:
        try:
            check(program)
        except (Error, ValueError, TypeError, KeyError) as error:
            message = str(error)
            raise ParseError(f"the program text is ill-typed: {message} (parse_program(text, verify=False) reads it "
                             "without this check)") from None
    return program
