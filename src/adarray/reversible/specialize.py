"""Typing: a reversible function's statement IR specialised to the kinds and ranks of its arguments.

Every variable gets a type (kind, rank): kind "f" (float), "c" (complex), "i" (integer), "b" (boolean),
"l" (a lognumber: its log, exact, see ir.FRACTION_BITS) or a stack "sf", "sc", "si", "sb" (rank: its elements'),
rank its number of axes. Floats, complex values, lognumbers and stacks of floats or complex values carry
tangents and cotangents (DIFFERENTIABLE). The types are checked: an integer cannot accumulate a float, += on a
boolean is ^=, *= needs a float (by a constant) or a lognumber, loop bounds are integers, conditions are real
scalars, and an array expression combines arrays of one rank with scalars (so that reverse mode only ever sums an
array into a scalar). Reading a lognumber p gives exp(log p): typing writes it ("exp", ("llog", p)), and its
updates p *= e become ("lmul", p, log e). `specialize(fn, types)` returns the program table (ir.py): the entry
function first, then every function it calls, each specialised per argument types (recursion included), calls
renamed to table entries, calls of instructions (instructions.py) replaced by their "inst" statement.
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
    expr_text,
    is_element,
)
from .structures import Structures

_FLOAT_RESULT = {"div", *UNARY_MATH, *BINARY_MATH} - {"abs", "sign", "conj"}
_KIND_KEEPING = {"abs", "sign", "maximum", "minimum", "neg", "sum", "conj"}
_REAL_PARTS = {"real", "imag", "angle", "abs"}  # complex -> float
# operations without a complex meaning here (an order, a rounding, or a non-holomorphic map not written yet)
_REAL_ONLY = {"mod", "floordiv", "lt", "le", "gt", "ge", "logistic", "sign", "floor", "ceil", "round", "maximum",
              "minimum", "arctan2", "logaddexp", "hypot"}
DIFFERENTIABLE = {"f": "f", "c": "c", "l": "f", "sf": "sf", "sc": "sc"}  # kind -> its tangents' kind
_UNKNOWN_STACK = ("s?", -1)  # a stack whose elements are not typed yet (no rv.push or rv.pop seen)


def kind_of_dtype(dtype) -> str | None:
    dtype = np.dtype(dtype)
    return {"f": "f", "c": "c", "i": "i", "u": "i", "b": "b"}.get(dtype.kind)


def differentiable(kind) -> bool:
    return kind in DIFFERENTIABLE


def is_stack(kind) -> bool:
    return kind.startswith("s")


def _join(*kinds) -> str:
    if "c" in kinds:
        return "c"
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
    if isinstance(expr, complex):
        return ("c", 0)
    if isinstance(expr, str):
        typ = types[expr]
        if is_stack(typ[0]):
            bad(f"the stack '{expr}' is not a value: rv.push and rv.pop move values in and out of it")
        return typ
    op, operands = expr[0], expr[1:]
    if op == "llog":
        return ("f", types[operands[0]][1])
    if op == "complex":
        return ("c", 0)
    if op == "index":
        kind, rank = types[operands[0]]
        if is_stack(kind):
            bad(f"`{expr_text(expr)}`: a stack cannot be indexed (rv.pop takes its top)")
        for index in operands[1:]:
            if expression_type(index, types, fail) != ("i", 0):
                bad(f"the index `{expr_text(index)}` of `{expr_text(expr)}` is not an integer scalar")
        if len(operands) - 1 > rank:
            bad(f"`{expr_text(expr)}` has {len(operands) - 1} indices, '{operands[0]}' has {rank} axes")
        return (kind, rank - len(operands) + 1)
    if op in ("len", "shape"):
        if types[operands[0]][1] <= 0 or is_stack(types[operands[0]][0]):
            bad(f"`{expr_text(expr)}`: '{operands[0]}' is a scalar")
        return ("i", 0)
    parts = [expression_type(o, types, fail) for o in operands]
    kinds, ranks = [k for k, _ in parts], [r for _, r in parts]
    if op == "select":
        if kinds[0] == "c":
            bad(f"`{expr_text(expr)}`: a condition is real")
        kinds, ranks = kinds[1:], ranks
    array_ranks = {r for r in ranks if r}
    if len(array_ranks) > 1:
        bad(f"`{expr_text(expr)}` combines arrays of different ranks {sorted(array_ranks)} (an array expression "
            "combines arrays of one shape with scalars)")
    rank = max(ranks) if ranks else 0
    complex_operand = "c" in kinds
    if complex_operand and op in _REAL_ONLY:
        bad(f"`{expr_text(expr)}`: {op} of a complex value (complex values have no order; take real(...), "
            "imag(...) or abs(...) first)")
    if complex_operand and op in LOGICAL:
        bad(f"`{expr_text(expr)}`: and/or/not of a complex value")
    if op == "sum":
        return (_join(*kinds), 0)
    if op in COMPARISONS:
        return ("b", rank)
    if op in LOGICAL:
        if rank:
            bad(f"`{expr_text(expr)}`: and/or/not take scalars")
        return ("b", 0)
    if op in _REAL_PARTS and op != "abs":
        return ("f", rank)
    if op == "abs" and complex_operand:
        return ("f", rank)
    if op in _FLOAT_RESULT or op == "safe_mul":
        return ("c" if complex_operand else "f", rank)
    if op in ARITHMETIC or op in _KIND_KEEPING or op == "select":
        return (_join(*kinds), rank)
    bad(f"unknown operation {op!r}")


def read_lognumbers(expr, types):
    """`expr` with every lognumber p read as its value exp(log p), and log(exp(log p)) as log p (exact)."""
    if isinstance(expr, str):
        return ("exp", ("llog", expr)) if types.get(expr, ("",))[0] == "l" else expr
    if not isinstance(expr, tuple) or expr[0] in ("len", "shape", "llog"):
        return expr
    if expr[0] == "index":
        return expr[:2] + tuple(read_lognumbers(i, types) for i in expr[2:])
    out = (expr[0],) + tuple(read_lognumbers(o, types) for o in expr[1:])
    if out[0] == "log" and isinstance(out[1], tuple) and out[1][0] == "exp" and isinstance(out[1][1], tuple) \
            and out[1][1][0] == "llog":
        return out[1][1]
    return out


class _Typer:
    """Types one function's statements for given argument types; renames its calls to table entries."""

    def __init__(self, specializer, fn, arg_types):
        self.specializer, self.fn, self.source = specializer, fn, fn.source
        self.structures = Structures(fn, arg_types)
        self.types = dict(self.structures.leaf_types())

    def fail(self, line, message):
        raise self.source.error(line, message)

    def expr(self, expr, line):
        return expression_type(expr, self.types, lambda message: self.fail(line, message))

    def read(self, expr, line):
        """An expression as the program reads it: structured arguments resolved, lognumbers read as values."""
        return read_lognumbers(self.structures.expression(expr, lambda m: self.fail(line, m)), self.types)

    def place(self, target, line):
        return self.structures.target(target, lambda m: self.fail(line, m))

    def declare(self, name, typ, line) -> None:
        known = self.types.get(name)
        if known is not None and is_stack(known[0]) and typ == _UNKNOWN_STACK:
            return  # a stack allocated again keeps the elements it was typed with
        if known is not None and known != typ:
            self.fail(line, f"'{name}' is {_describe(known)} here and {_describe(typ)} elsewhere")
        self.types[name] = typ

    def block(self, statements) -> tuple:
        out = []
        for s in statements:
            typed = self.statement(s)
            out += typed if isinstance(typed, list) else [typed]
        return tuple(out)

    def statement(self, s):
        kind, line = s[0], s[1]
        if kind in ("inc", "dec", "xor", "mul", "div", "swap", "neg", "rot", "push", "pop"):
            s = (kind, line, self.place(s[2], line)) + s[3:]
        if kind in ("swap", "rot", "push", "pop"):
            s = s[:3] + (self.place(s[3], line),) + s[4:]
        if kind in ("inc", "dec", "xor"):
            return self.update(s)
        if kind in ("mul", "div"):
            return self.scale(s)
        if kind == "swap":
            a, b = self.expr(s[2], line), self.expr(s[3], line)
            if a != b:
                self.fail(line, f"rv.swap({expr_text(s[2])}, {expr_text(s[3])}) exchanges {_describe(a)} with "
                                f"{_describe(b)}")
            return s
        if kind == "neg":
            if self.expr(s[2], line)[0] in ("b", "l"):
                self.fail(line, f"rv.neg({expr_text(s[2])}) of {_describe(self.expr(s[2], line))}")
            return s
        if kind == "rot":
            theta = self.read(s[4], line)
            a, b, angle = self.expr(s[2], line), self.expr(s[3], line), self.expr(theta, line)
            if a[0] not in ("f", "c") or a != b or angle[0] not in ("f", "i") or angle[1] > a[1]:
                self.fail(line, f"rv.rot({expr_text(s[2])}, {expr_text(s[3])}, ...) rotates two floats (or complex "
                                "values) of one shape by a real scalar (or same-shape) angle")
            return s[:4] + (theta,)
        if kind in ("push", "pop"):
            return self.stack_move(s)
        if kind == "call":
            return self.call(s)
        if kind == "alloc":
            self.declare(s[2], self.initial_type(s[3], line), line)
            return s
        if kind == "free":
            held, value = self.types[s[2]], self.initial_type(s[3], line)
            if held[0] != value[0] and not (held[0] in ("f", "c") or (is_stack(held[0]) and is_stack(value[0]))):
                self.fail(line, f"rv.free({s[2]}, ...): '{s[2]}' is {_describe(held)}")
            return s
        if kind in ("if", "while"):
            conditions = [self.read(c, line) for c in (s[2], s[3])]
            for condition in conditions:
                typ = self.expr(condition, line)
                if typ[1] or typ[0] == "c":
                    self.fail(line, f"the condition `{expr_text(condition)}` is "
                                    f"{'an array' if typ[1] else 'complex'}; conditions are real scalars")
            if kind == "if":
                return ("if", line, *conditions, self.block(s[4]), self.block(s[5]))
            return ("while", line, *conditions, self.block(s[4]))
        if kind == "for":
            bounds = tuple(self.read(b, line) for b in s[3:6])
            for bound in bounds:
                if self.expr(bound, line) != ("i", 0):
                    self.fail(line, f"the range bound `{expr_text(bound)}` is not an integer scalar")
            self.declare(s[2], ("i", 0), line)
            return s[:3] + bounds + (s[6], self.block(s[7]))
        raise AssertionError(kind)

    def update(self, s):
        kind, line = s[0], s[1]
        value_expr = self.read(s[3], line)
        target, value = self.expr(s[2], line), self.expr(value_expr, line)
        if kind != "xor" and target[0] == "b" and _internal(s[2]):
            kind = "xor"  # a truth value passed to a call: its ancilla takes it by ^=
        symbol = {"inc": "+=", "dec": "-=", "xor": "^="}[kind]
        text = f"`{expr_text(s[2])} {symbol} {expr_text(s[3])}`"
        if target[0] == "l":
            self.fail(line, f"{text}: a lognumber is updated by *= and /= (its log is what it holds)")
        if kind == "xor" and (target[0] in ("f", "c") or value[0] in ("f", "c")):
            self.fail(line, f"{text}: ^= works on integers and booleans")
        if kind != "xor" and target[0] == "b":
            self.fail(line, f"{text}: += and -= on a boolean; use ^=")
        if target[0] == "i" and value[0] in ("f", "c"):
            self.fail(line, f"{text}: the integer '{base_name(s[2])}' cannot accumulate a "
                            f"{'float' if value[0] == 'f' else 'complex value'}")
        if target[0] == "f" and value[0] == "c":
            self.fail(line, f"{text}: the float '{base_name(s[2])}' cannot accumulate a complex value (take "
                            "real(...) or imag(...))")
        if value[1] > target[1]:
            self.fail(line, f"{text}: the right side has {value[1]} axes, '{base_name(s[2])}' {target[1]} "
                            "(reduce it with sum(...))")
        return (kind, line, s[2], value_expr)

    def scale(self, s):
        """y *= c, y /= c: by a non-zero constant on floats and complex values, by any positive factor on a
        lognumber (whose log then grows by the factor's log: ("lmul", p, log c))."""
        kind, line, target, factor = s
        typ = self.expr(target, line)
        symbol = "*=" if kind == "mul" else "/="
        text = f"`{expr_text(target)} {symbol} {expr_text(factor)}`"
        if typ[0] == "l":
            value = self.read(factor, line)
            factor_type = self.expr(value, line)
            if factor_type[0] not in ("f", "i") or factor_type[1]:
                self.fail(line, f"{text}: a lognumber is multiplied by a real scalar")
            log_value = read_lognumbers(("log", value), {}) if not _is_llog_value(value) else value[1]
            return ("lmul" if kind == "mul" else "ldiv", line, target, log_value)
        complex_factor = isinstance(factor, tuple) and factor[0] == "complex"
        if not (isinstance(factor, (int, float)) or complex_factor) or isinstance(factor, bool):
            self.fail(line, f"{text}: *= and /= are reversible only by a non-zero constant (or, on a lognumber, by "
                            "a positive factor); to multiply by a variable accumulate into an ancilla (t += y * x)")
        if typ[0] not in ("f", "c") or (complex_factor and typ[0] != "c"):
            self.fail(line, f"{text} needs a float (or complex) variable")
        return s

    def stack_move(self, s):
        kind, line, stack, value = s[0], s[1], s[2], s[3]
        held, moved = self.types.get(stack), self.expr(value, line)
        text = f"rv.{kind}({expr_text(stack)}, {expr_text(value)})"
        if held is None or not is_stack(held[0]):
            self.fail(line, f"{text}: '{stack}' is not a stack (allocate one with `{stack} = rv.alloc(rv.stack())`)")
        if moved[0] not in ("f", "c", "i", "b"):
            self.fail(line, f"{text}: a stack holds floats, complex values, integers or booleans")
        element = ("s" + moved[0], moved[1])
        if held == _UNKNOWN_STACK:
            self.types[stack] = element
        elif held != element:
            self.fail(line, f"{text}: the stack '{stack}' holds values like {_describe((held[0][1:], held[1]))}, "
                            f"'{base_name(value)}' is {_describe(moved)}")
        return s

    def initial_type(self, init, line):
        if isinstance(init, tuple) and init[0] == "zeros":
            for dim in init[1:]:
                if self.expr(dim, line) != ("i", 0):
                    self.fail(line, f"the shape `{expr_text(dim)}` of zeros(...) is not an integer")
            return ("f", len(init) - 1)
        if isinstance(init, tuple) and init[0] == "zeros_like":
            return self.expr(self.read(init[1], line), line)
        if isinstance(init, tuple) and init[0] == "stack":
            if init[1] is not None and self.expr(init[1], line) != ("i", 0):
                self.fail(line, f"the capacity `{expr_text(init[1])}` of rv.stack(...) is not an integer")
            return _UNKNOWN_STACK
        if isinstance(init, tuple) and init[0] == "lognumber":
            return ("l", 0)
        return self.expr(init, line)

    def call(self, s):
        line, name, args = s[1], s[2], s[3]
        callee = self.fn.resolve(name, line)
        expanded, arg_types = self.structures.call_arguments(args, lambda m: self.fail(line, m))
        if getattr(callee, "_is_adarray_instruction", False):
            return self.instruction(callee, line, expanded, arg_types)
        if len(arg_types) != len(callee.args):
            self.fail(line, f"'{name}' takes {len(callee.args)} arguments ({', '.join(callee.args)}), got {len(args)}")
        typed = tuple(t if isinstance(t, tuple) and t and t[0] == "tree" else self.types[t]
                      if isinstance(t, str) and is_stack(self.types.get(t, ("",))[0]) else self.expr(t, line)
                      for t in arg_types)
        table_name = self.specializer.function(callee, typed)
        function = self.specializer.typed(table_name)
        if function is not None:  # stacks the callee typed by pushing into them
            table = {v: (k, r) for v, k, r in function[2]}
            flat_args = [a for a in expanded]
            for arg, param in zip(flat_args, function[1]):
                if isinstance(arg, str) and self.types.get(arg) == _UNKNOWN_STACK and table[param] != _UNKNOWN_STACK:
                    self.types[arg] = table[param]
        return ("call", line, table_name, tuple(expanded))

    def instruction(self, callee, line, args, arg_types):
        if any(isinstance(t, tuple) and t and t[0] == "tree" for t in arg_types):
            self.fail(line, f"the instruction '{callee.name}' takes arrays and scalars, not structured arguments")
        types = tuple(self.expr(a, line) for a in args)
        spec = callee.typed_spec(types, lambda message: self.fail(line, message))
        return ("inst", line, spec, tuple(args))

    def variable_types(self) -> tuple:
        return tuple((name, *(("sf", 0) if typ == _UNKNOWN_STACK else typ)) for name, typ in self.types.items())


def _is_llog_value(expr) -> bool:
    """exp(log p) of a lognumber p: multiplying by it adds p's log exactly."""
    return isinstance(expr, tuple) and expr[0] == "exp" and isinstance(expr[1], tuple) and expr[1][0] == "llog"


def _internal(target) -> bool:
    """An ancilla the parser made (a call argument passed by value: '%line.k')."""
    return base_name(target).startswith("%")


def _describe(typ) -> str:
    kind, rank = typ
    if is_stack(kind):
        return "a stack" + (f" of {_describe((kind[1:], rank))}s" if kind != "s?" else "")
    word = {"f": "a float", "c": "a complex", "i": "an integer", "b": "a boolean", "l": "a lognumber"}[kind]
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
        self.functions[index] = (name, tuple(typer.structures.flat_args()), typer.variable_types(), bool(fn.check),
                                 float(fn.atol), body)
        return name

    def typed(self, name):
        """The typed function of the table named `name`, or None while it is being typed (recursion)."""
        for function in self.functions:
            if function is not None and function[0] == name:
                return function
        return None


def specialize(fn, arg_types) -> tuple:
    """The program table of `fn` for arguments of `arg_types` ((kind, rank) each, or ("tree", ...) for a
    structured argument, see structures.py)."""
    specializer = _Specializer()
    specializer.function(fn, tuple(arg_types))
    return tuple(specializer.functions)


def element_type(target, types):
    """(kind, rank) of a target."""
    if is_element(target):
        return expression_type(target, types)
    return types[target]
