"""Typing: a reversible function's statement IR specialised to the kinds and ranks of its arguments.

Every variable gets a type (kind, rank): kind "f" (float: differentiated), "i" (integer) or "b" (boolean),
rank its number of axes. The types decide which variables carry tangents and cotangents, and are checked:
an integer cannot accumulate a float, += on a boolean is ^=, *= needs a float, loop bounds are integers,
conditions are scalars, and an array expression combines arrays of one rank with scalars (so that reverse
mode only ever sums an array into a scalar). `specialize(fn, types)` returns the program table (ir.py): the
entry function first, then every function it calls, each specialised per argument types (recursion
included), calls renamed to table entries.
"""
from __future__ import annotations

import numpy as np

from .ir import (
    ARITHMETIC,
    BINARY_MATH,
    COMPARISONS,
    LOGICAL,
    UNARY_MATH,
    base_name,
    elements_read,
    expr_text,
    is_element,
    products,
)

_FLOAT_RESULT = {"div", *UNARY_MATH, *BINARY_MATH} - {"abs", "sign"}
_KIND_KEEPING = {"abs", "sign", "maximum", "minimum", "neg", "sum"}


def kind_of_dtype(dtype) -> str | None:
    dtype = np.dtype(dtype)
    return {"f": "f", "i": "i", "u": "i", "b": "b"}.get(dtype.kind)


def _join(*kinds) -> str:
    if "f" in kinds:
        return "f"
    return "i"


def expression_type(expr, types, fail=None):
    """(kind, rank) of an expression given the variable types {name: (kind, rank)}."""
    def bad(message):
        if fail is None:
            raise ValueError(message)
        fail(message)

    if isinstance(expr, bool):
        return ("b", 0)
    if isinstance(expr, int):
        return ("i", 0)
    if isinstance(expr, float):
        return ("f", 0)
    if isinstance(expr, str):
        return types[expr]
    op, operands = expr[0], expr[1:]
    if op == "index":
        kind, rank = types[operands[0]]
        for index in operands[1:]:
            if expression_type(index, types, fail) != ("i", 0):
                bad(f"the index `{expr_text(index)}` of `{expr_text(expr)}` is not an integer scalar")
        if len(operands) - 1 > rank:
            bad(f"`{expr_text(expr)}` has {len(operands) - 1} indices, '{operands[0]}' has {rank} axes")
        return (kind, rank - len(operands) + 1)
    if op in ("len", "shape"):
        if types[operands[0]][1] == 0:
            bad(f"`{expr_text(expr)}`: '{operands[0]}' is a scalar")
        return ("i", 0)
    parts = [expression_type(o, types, fail) for o in operands]
    kinds, ranks = [k for k, _ in parts], [r for _, r in parts]
    if op == "select":
        kinds, ranks = kinds[1:], ranks
    array_ranks = {r for r in ranks if r}
    if len(array_ranks) > 1:
        bad(f"`{expr_text(expr)}` combines arrays of different ranks {sorted(array_ranks)} (an array expression "
            "combines arrays of one shape with scalars)")
    rank = max(ranks) if ranks else 0
    if op == "sum":
        return (_join(*kinds), 0)
    if op in COMPARISONS:
        return ("b", rank)
    if op in LOGICAL:
        if rank:
            bad(f"`{expr_text(expr)}`: and/or/not take scalars")
        return ("b", 0)
    if op in _FLOAT_RESULT or op == "safe_mul":
        return ("f", rank)
    if op in ARITHMETIC or op in _KIND_KEEPING or op == "select":
        return (_join(*kinds), rank)
    bad(f"unknown operation {op!r}")


class _Typer:
    """Types one function's statements for given argument types; renames its calls to table entries."""

    def __init__(self, specializer, fn, arg_types):
        self.specializer, self.fn, self.source = specializer, fn, fn.source
        self.types = dict(zip(fn.args, arg_types))

    def fail(self, line, message):
        raise self.source.error(line, message)

    def expr(self, expr, line):
        return expression_type(expr, self.types, lambda message: self.fail(line, message))

    def declare(self, name, typ, line) -> None:
        known = self.types.get(name)
        if known is not None and known != typ:
            self.fail(line, f"'{name}' is {_describe(known)} here and {_describe(typ)} elsewhere")
        self.types[name] = typ

    def block(self, statements) -> tuple:
        return tuple(self.statement(s) for s in statements)

    def statement(self, s):
        kind, line = s[0], s[1]
        if kind in ("inc", "dec", "xor"):
            target, value = self.expr(s[2], line), self.expr(s[3], line)
            if kind != "xor" and target[0] == "b" and _internal(s[2]):
                s, kind = ("xor",) + s[1:], "xor"  # a truth value passed to a call: its ancilla takes it by ^=
            symbol = {"inc": "+=", "dec": "-=", "xor": "^="}[kind]
            text = f"`{expr_text(s[2])} {symbol} {expr_text(s[3])}`"
            self.check_products(line, text, s[3])
            if kind == "xor" and (target[0] == "f" or value[0] == "f"):
                self.fail(line, f"{text}: ^= works on integers and booleans")
            if kind != "xor" and target[0] == "b":
                self.fail(line, f"{text}: += and -= on a boolean; use ^=")
            if target[0] == "i" and value[0] == "f":
                self.fail(line, f"{text}: the integer '{base_name(s[2])}' cannot accumulate a float")
            if value[1] > target[1]:
                self.fail(line, f"{text}: the right side has {value[1]} axes, '{base_name(s[2])}' {target[1]} "
                                "(reduce it with sum(...))")
            return s
        if kind in ("mul", "div"):
            if self.expr(s[2], line)[0] != "f":
                self.fail(line, f"`{expr_text(s[2])} {'*=' if kind == 'mul' else '/='} {s[3]!r}` needs a float "
                                "variable")
            return s
        if kind == "swap":
            a, b = self.expr(s[2], line), self.expr(s[3], line)
            if a != b:
                self.fail(line, f"rv.swap({expr_text(s[2])}, {expr_text(s[3])}) exchanges {_describe(a)} with "
                                f"{_describe(b)}")
            return s
        if kind == "neg":
            if self.expr(s[2], line)[0] == "b":
                self.fail(line, f"rv.neg({expr_text(s[2])}) of a boolean")
            return s
        if kind == "rot":
            a, b, theta = self.expr(s[2], line), self.expr(s[3], line), self.expr(s[4], line)
            if a[0] != "f" or a != b or theta[1] > a[1]:
                self.fail(line, f"rv.rot({expr_text(s[2])}, {expr_text(s[3])}, ...) rotates two floats of one "
                                "shape by a scalar (or same-shape) angle")
            return s
        if kind == "call":
            return self.call(s)
        if kind == "alloc":
            self.declare(s[2], self.initial_type(s[3], line), line)
            return s
        if kind == "free":
            held, value = self.types[s[2]], self.initial_type(s[3], line)
            if held[0] != value[0] and not (held[0] == "f"):
                self.fail(line, f"rv.free({s[2]}, ...): '{s[2]}' is {_describe(held)}")
            return s
        if kind in ("if", "while"):
            for condition in (s[2], s[3]):
                if self.expr(condition, line)[1]:
                    self.fail(line, f"the condition `{expr_text(condition)}` is an array; conditions are scalars")
            if kind == "if":
                return s[:4] + (self.block(s[4]), self.block(s[5]))
            return s[:4] + (self.block(s[4]),)
        if kind == "for":
            for bound in s[3:6]:
                if self.expr(bound, line) != ("i", 0):
                    self.fail(line, f"the range bound `{expr_text(bound)}` is not an integer scalar")
            self.declare(s[2], ("i", 0), line)
            return s[:7] + (self.block(s[7]),)
        raise AssertionError(kind)

    def check_products(self, line, text, value) -> None:
        """NiLang's rule: one float variable twice in one product (`y += x * x`) is written `x ** 2`. Integers
        (a loop index in `k * (k + nu)`) have no gradient, so they may repeat."""
        for product in products(value):
            left = elements_read(product[1])
            shared = [r for r in elements_read(product[2]) if r in left and self.expr(r, line)[0] == "f"]
            if shared:
                name = expr_text(shared[0])
                self.fail(line, f"{text} uses the same variable '{name}' twice in one product; write "
                                f"`{name} ** 2` (e.g. `y += x ** 2`) or copy it into an ancilla first")

    def initial_type(self, init, line):
        if isinstance(init, tuple) and init[0] == "zeros":
            for dim in init[1:]:
                if self.expr(dim, line) != ("i", 0):
                    self.fail(line, f"the shape `{expr_text(dim)}` of zeros(...) is not an integer")
            return ("f", len(init) - 1)
        if isinstance(init, tuple) and init[0] == "zeros_like":
            return self.expr(init[1], line)
        return self.expr(init, line)

    def call(self, s):
        line, name, args = s[1], s[2], s[3]
        callee = self.fn.resolve(name, line)
        if len(args) != len(callee.args):
            self.fail(line, f"'{name}' takes {len(callee.args)} arguments ({', '.join(callee.args)}), got {len(args)}")
        arg_types = tuple(self.expr(a, line) for a in args)
        return ("call", line, self.specializer.function(callee, arg_types), args)

    def variable_types(self) -> tuple:
        return tuple((name, kind, rank) for name, (kind, rank) in self.types.items())


def _internal(target) -> bool:
    """An ancilla the parser made (a call argument passed by value: '%line.k')."""
    return base_name(target).startswith("%")


def _describe(typ) -> str:
    kind, rank = typ
    word = {"f": "a float", "i": "an integer", "b": "a boolean"}[kind]
    return word + (f" array of {rank} axes" if rank else " scalar")


class _Specializer:
    def __init__(self):
        self.names: dict = {}
        self.functions: list = []

    def function(self, fn, arg_types) -> str:
        key = (id(fn), arg_types)
        if key in self.names:
            return self.names[key]
        name, count = fn.table_name, 1
        while name in self.names.values():
            count += 1
            name = f"{fn.table_name}#{count}"
        self.names[key] = name
        index = len(self.functions)
        self.functions.append(None)  # reserved: recursive calls see the name before the body is typed
        typer = _Typer(self, fn, arg_types)
        body = typer.block(fn.body)
        self.functions[index] = (name, tuple(fn.args), typer.variable_types(), bool(fn.check), float(fn.atol), body)
        return name


def specialize(fn, arg_types) -> tuple:
    """The program table of `fn` for arguments of `arg_types` ((kind, rank) each)."""
    specializer = _Specializer()
    specializer.function(fn, tuple(arg_types))
    return tuple(specializer.functions)


def element_type(target, types):
    """(kind, rank) of a target."""
    if is_element(target):
        return expression_type(target, types)
    return types[target]
