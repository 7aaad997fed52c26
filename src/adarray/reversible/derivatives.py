"""Derivatives of reversible programs as source transformations of the statement IR (ir.py).

tangent_program(P): forward mode. Every float variable v gets a tangent v' (a fresh suffix); the entry takes
    (args, tangents of the float args). `y += e` becomes `y' += sum_j de/dx_j * x_j'; y += e`, rotations,
    swaps, negations and scalings act on the tangents too, calls call the callee's tangent function. Each
    derived statement is an accumulation that does not read its target, so the tangent program is itself
    reversible and can be inverted, differentiated and run backwards like any other.
adjoint_program(P): reverse mode by reverse computing (NiLang's paper, section 3): the entry
    `grad(x, seeds)` runs P forward, then walks its statements backwards, running each one's inverse and
    propagating cotangents v^ through it: for `y += e` it runs `y -= e`, then `x_j^ += y^ * de/dx_j`. Nothing
    is stored; the inverse recomputes every earlier state, so memory does not grow with the iterations.
    Ancillas' cotangents are dropped when the ancilla is released (`drop`): its initial value is a
    constant, so nothing depends on it. The adjoint program is run forward only.
Scalar partial derivatives come from the one table in primitives/scalar.py, through a namespace `Symbolic`
that builds expression tuples instead of IR.
"""
from __future__ import annotations

from ..primitives.scalar import PARTIALS, SINGULAR
from .ir import base_name, is_element
from .specialize import expression_type

ZERO_DERIVATIVE = {"sign", "floor", "ceil", "round", "floordiv", "len", "shape", "eq", "ne", "lt", "le", "gt", "ge",
                   "and", "or", "not"}
_PARTIAL_NAMES = {"mod": "rem"}


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class Symbolic:
    """The math namespace of PARTIALS over expression tuples, folding the constants it can."""

    @staticmethod
    def add(a, b):
        if _number(a) and _number(b):
            return a + b
        if _number(a) and a == 0:
            return b
        if _number(b) and b == 0:
            return a
        return ("add", a, b)

    @staticmethod
    def sub(a, b):
        if _number(a) and _number(b):
            return a - b
        if _number(b) and b == 0:
            return a
        if _number(a) and a == 0:
            return Symbolic.neg(b)
        return ("sub", a, b)

    @staticmethod
    def mul(a, b):
        if _number(a) and _number(b):
            return a * b
        for one, other in ((a, b), (b, a)):
            if _number(one) and one == 1:
                return other
            if _number(one) and one == -1:
                return Symbolic.neg(other)
        return ("mul", a, b)

    @staticmethod
    def div(a, b):
        if _number(b) and b == 1:
            return a
        if _number(a) and _number(b) and b != 0:
            return a / b
        return ("div", a, b)

    @staticmethod
    def neg(a):
        if _number(a):
            return -a
        if isinstance(a, tuple) and a[0] == "neg":
            return a[1]
        return ("neg", a)

    @staticmethod
    def pow(a, b):
        if isinstance(b, float) and b.is_integer() and abs(b) < 2 ** 31:
            b = int(b)
        if _number(b) and b == 1:
            return a
        if _number(b) and b == 0:
            return 1.0
        return ("pow", a, b)

    @staticmethod
    def safe_mul(a, b):
        if _number(a):
            return 0.0 if a == 0 else Symbolic.mul(a, b)
        return ("safe_mul", a, b)

    @staticmethod
    def select(c, a, b):
        if isinstance(c, bool):
            return a if c else b
        return ("select", c, a, b)

    @staticmethod
    def eq(a, b):
        if _number(a) and _number(b):
            return a == b
        return ("eq", a, b)

    @staticmethod
    def full_like(x, value):
        return float(value)

    @staticmethod
    def convert_like(condition, x):
        return Symbolic.select(condition, 1.0, 0.0)

    def __getattr__(self, name):
        return lambda *args: (name,) + args


SYMBOLIC = Symbolic()


def _polynomial(expr) -> bool:
    """x ** n for a constant integer n >= 1: its partial is finite, no guard needed."""
    return expr[0] == "pow" and isinstance(expr[2], int) and not isinstance(expr[2], bool) and expr[2] >= 1


def partial_terms(expr, seed, types, forward):
    """The chain rule through one expression.

    forward=False: [(leaf, seed * d expr / d leaf)] for every float leaf (a variable or element), repeated
    leaves once per occurrence: the reverse sweep of one statement (seed is the target's cotangent).
    forward=True: seed maps a leaf to its tangent (or None); returns the tangent expression of expr or None.
    """
    if isinstance(expr, str) or (isinstance(expr, tuple) and expr[0] == "index"):
        if expression_type(expr, types)[0] != "f":
            return None if forward else []
        return seed(expr) if forward else [(expr, seed)]
    if not isinstance(expr, tuple) or expr[0] in ZERO_DERIVATIVE:
        return None if forward else []
    op, operands = expr[0], expr[1:]
    m = SYMBOLIC
    if forward:
        tangents = [partial_terms(o, seed, types, True) for o in operands]
        if all(t is None for t in tangents):
            return None
        if op in ("add", "sub", "neg", "sum"):
            if op == "sum":
                return ("sum", tangents[0])
            if op == "neg":
                return m.neg(tangents[0])
            a, b = tangents
            if a is None:
                return b if op == "add" else m.neg(b)
            return a if b is None else (m.add(a, b) if op == "add" else m.sub(a, b))
        if op == "select":
            return m.select(operands[0], 0.0 if tangents[1] is None else tangents[1],
                            0.0 if tangents[2] is None else tangents[2])
        if op == "safe_mul":
            terms = [m.safe_mul(tangents[0], operands[1]) if tangents[0] is not None else None,
                     m.safe_mul(operands[0], tangents[1]) if tangents[1] is not None else None]
        else:
            parts = PARTIALS[_PARTIAL_NAMES.get(op, op)](m, *operands, expr)
            guard = _PARTIAL_NAMES.get(op, op) in SINGULAR and not _polynomial(expr)
            terms = [None if t is None else (m.safe_mul(t, p) if guard else m.mul(p, t))
                     for t, p in zip(tangents, parts)]
        total = None
        for term in terms:
            if term is not None:
                total = term if total is None else m.add(total, term)
        return total
    if op == "add":
        return partial_terms(operands[0], seed, types, False) + partial_terms(operands[1], seed, types, False)
    if op == "sub":
        return (partial_terms(operands[0], seed, types, False)
                + partial_terms(operands[1], m.neg(seed), types, False))
    if op == "neg":
        return partial_terms(operands[0], m.neg(seed), types, False)
    if op == "sum":
        return partial_terms(operands[0], seed, types, False)
    if op == "select":
        return (partial_terms(operands[1], m.select(operands[0], seed, 0.0), types, False)
                + partial_terms(operands[2], m.select(operands[0], 0.0, seed), types, False))
    if op == "safe_mul":
        return (partial_terms(operands[0], m.safe_mul(seed, operands[1]), types, False)
                + partial_terms(operands[1], m.safe_mul(seed, operands[0]), types, False))
    parts = PARTIALS[_PARTIAL_NAMES.get(op, op)](m, *operands, expr)
    guard = _PARTIAL_NAMES.get(op, op) in SINGULAR and not _polynomial(expr)
    terms = []
    for operand, part in zip(operands, parts):
        if _is_constant(operand):
            continue
        terms += partial_terms(operand, m.safe_mul(seed, part) if guard else m.mul(seed, part), types, False)
    return terms


def _is_constant(expr) -> bool:
    return not isinstance(expr, (str, tuple))


def fresh_suffix(names, mark: str) -> str:
    """The shortest run of `mark` that makes no new name collide with an existing one."""
    suffix = mark
    while any(n + suffix in names for n in names):
        suffix += mark
    return suffix


def _mapper(suffix):
    def derived(target):
        if is_element(target):
            return ("index", target[1] + suffix) + target[2:]
        return target + suffix
    return derived


def _zero_like(init):
    return init if isinstance(init, tuple) else 0.0


def _unique_names(program, label):
    taken = {f[0] for f in program}
    names = {}
    for function in program:
        name = f"{label}({function[0]})"
        while name in taken:
            name += "'"
        names[function[0]] = name
        taken.add(name)
    return names


# --- forward mode ----------------------------------------------------------------------------------------

def tangent_program(program) -> tuple:
    """The tangent program: entry args (args..., tangents of the float args), each function transformed."""
    names = _unique_names(program, "jvp")
    return tuple(_tangent_function(f, names) for f in program)


def _tangent_function(function, names):
    name, args, types, check, atol, body = function
    table = {v: (k, r) for v, k, r in types}
    suffix = fresh_suffix(set(table), "'")
    d = _mapper(suffix)
    floats = [v for v, k, _ in types if k == "f"]
    new_types = types + tuple((v + suffix, "f", table[v][1]) for v in floats)

    def is_float(target):
        return table[base_name(target)][0] == "f"

    def tangent(expr):
        return partial_terms(expr, lambda leaf: d(leaf), table, True)

    def block(statements):
        out = []
        for s in statements:
            out += statement(s)
        return tuple(out)

    def statement(s):
        kind, line = s[0], s[1]
        if kind in ("inc", "dec"):
            t = tangent(s[3]) if is_float(s[2]) else None
            return ([(kind, line, d(s[2]), t)] if t is not None else []) + [s]
        if kind in ("mul", "div", "neg"):
            return [s] + ([(kind, line, d(s[2])) + s[3:]] if is_float(s[2]) else [])
        if kind == "swap":
            return [s] + ([("swap", line, d(s[2]), d(s[3]))] if is_float(s[2]) else [])
        if kind == "rot":
            a, b, theta = s[2], s[3], s[4]
            out = [("rot", line, d(a), d(b), theta), s]
            t = tangent(theta)
            if t is not None:  # d(a cos - b sin)/d theta = -b_new, d(b cos + a sin)/d theta = a_new
                out += [("dec", line, d(a), SYMBOLIC.mul(t, b)), ("inc", line, d(b), SYMBOLIC.mul(t, a))]
            return out
        if kind == "call":
            return [("call", line, names[s[2]], s[3] + tuple(d(a) for a in s[3] if is_float(a)))]
        if kind == "alloc":
            return [s] + ([("alloc", line, d(s[2]), _zero_like(s[3]))] if is_float(s[2]) else [])
        if kind == "free":
            return ([("free", line, d(s[2]), _zero_like(s[3]))] if is_float(s[2]) else []) + [s]
        if kind == "if":
            return [s[:4] + (block(s[4]), block(s[5]))]
        if kind == "for":
            return [s[:7] + (block(s[7]),)]
        if kind == "while":
            return [s[:4] + (block(s[4]),)]
        return [s]  # xor: integers only

    new_args = args + tuple(a + suffix for a in args if table[a][0] == "f")
    return (names[name], new_args, new_types, check, atol, block(body))


# --- reverse mode by reverse computing ------------------------------------------------------------------

def adjoint_program(program) -> tuple:
    """The gradient program: entry 'grad(f)' takes (args..., seeds for the float args) and returns them with
    the seeds replaced by the cotangents of the arguments; then P's own functions and their adjoints."""
    names = _unique_names(program, "adjoint")
    entry = program[0]
    name, args, types, check, atol, _ = entry
    table = {v: (k, r) for v, k, r in types}
    suffix = fresh_suffix(set(table), "^")
    seeds = tuple(a + suffix for a in args if table[a][0] == "f")
    grad_types = tuple((v, k, r) for v, k, r in types if v in args) + tuple(
        (a + suffix, "f", table[a][1]) for a in args if table[a][0] == "f")
    grad = (f"grad({name})", args + seeds, grad_types, check, atol,
            (("call", 0, name, args), ("call", 0, names[name], args + seeds)))
    return (grad,) + tuple(program) + tuple(_adjoint_function(f, names) for f in program)


def _adjoint_function(function, names):
    name, args, types, check, atol, body = function
    table = {v: (k, r) for v, k, r in types}
    suffix = fresh_suffix(set(table), "^")
    bar = _mapper(suffix)
    floats = [v for v, k, _ in types if k == "f"]
    new_types = types + tuple((v + suffix, "f", table[v][1]) for v in floats)
    every = {v: (k, r) for v, k, r in new_types}

    def is_float(target):
        return table[base_name(target)][0] == "f"

    def rank(expr):
        return expression_type(expr, every)[1]

    def spread(kind, line, seed, value):
        """Statements x^ (+= or -=) seed * d value / dx for every float leaf x of value."""
        out = []
        for leaf, term in partial_terms(value, seed, table, False):
            if rank(term) > rank(leaf):
                term = ("sum", term)  # an array expression's cotangent into a scalar: sum it
            out.append((kind, line, bar(leaf), term))
        return out

    def block(statements):
        out = []
        for s in reversed(statements):
            out += statement(s)
        return tuple(out)

    def statement(s):
        kind, line = s[0], s[1]
        if kind in ("inc", "dec"):
            undo = ("dec" if kind == "inc" else "inc", line, s[2], s[3])
            return [undo] + (spread(kind, line, bar(s[2]), s[3]) if is_float(s[2]) else [])
        if kind == "xor":
            return [s]
        if kind in ("mul", "div"):
            other = "div" if kind == "mul" else "mul"
            return [(other, line, s[2], s[3]), (kind, line, bar(s[2]), s[3])]
        if kind in ("swap", "neg"):
            return [s] + ([(kind, line) + tuple(bar(t) for t in s[2:])] if is_float(s[2]) else [])
        if kind == "rot":
            a, b, theta = s[2], s[3], s[4]
            m = SYMBOLIC
            theta_bar = m.sub(m.mul(bar(b), a), m.mul(bar(a), b))  # a^ da/dtheta + b^ db/dtheta, new values
            return (spread("inc", line, theta_bar, theta)
                    + [("rot", line, bar(a), bar(b), m.neg(theta)), ("rot", line, a, b, m.neg(theta))])
        if kind == "call":
            return [("call", line, names[s[2]], s[3] + tuple(bar(a) for a in s[3] if is_float(a)))]
        if kind == "alloc":
            return [("free", line, s[2], s[3])] + ([("drop", line, bar(s[2]))] if is_float(s[2]) else [])
        if kind == "free":
            return [("alloc", line, s[2], s[3])] + (
                [("alloc", line, bar(s[2]), _zero_like(s[3]))] if is_float(s[2]) else [])
        if kind == "if":
            return [("if", line, s[3], s[2], block(s[4]), block(s[5]))]
        if kind == "for":
            return [s[:6] + (not s[6], block(s[7]))]
        if kind == "while":
            return [("while", line, s[3], s[2], block(s[4]))]
        raise AssertionError(kind)

    new_args = args + tuple(a + suffix for a in args if table[a][0] == "f")
    return (names[name], new_args, new_types, check, atol, block(body))
