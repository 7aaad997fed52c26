"""Derivatives of reversible programs as source transformations of the statement IR (ir.py).

tangent_program(P): forward mode. Every float variable v gets a tangent v' (a fresh suffix); the entry takes
    (args, tangents of the float args). `y += e` becomes `y' += sum_j de/dx_j * x_j'; y += e`, rotations,
    swaps, negations and scalings act on the tangents too, calls call the callee's tangent function. Each
    derived statement is an accumulation that does not read its target, so the tangent program is itself
    reversible and can be inverted, differentiated and run backwards like any other.
Forward products with singular partials are guarded (safe_mul: a zero tangent gives 0), reverse products
are IEEE except through the branch a select does not take (_Masked), as for array programs.
adjoint_program(P): reverse mode by reverse computing (NiLang's paper, section 3): the entry
    `grad(x, seeds)` runs P forward, then walks its statements backwards, running each one's inverse and
    propagating cotangents v^ through it: for `y += e` it runs `y -= e`, then `x_j^ += y^ * de/dx_j`. Nothing
    is stored; the inverse recomputes every earlier state, so memory does not grow with the iterations.
    Ancillas' cotangents are dropped when the ancilla is released (`drop`): its initial value is a
    constant, so nothing depends on it. The adjoint program is run forward only.
Scalar partial derivatives come from the one table in primitives/scalar.py, keyed by the primitive an operation
names (primitives/operations.py), through a namespace `Symbolic` that builds expression tuples instead of IR.
Complex values follow JAX's convention (primitives/complex.py): a holomorphic map multiplies tangents and
cotangents by f'(z); real, imag, conj, angle and abs of a complex value have their own rules; a float receiving
a complex cotangent takes its real part. A lognumber's tangent and
cotangent are those of its log (a float). Stacks move tangents and cotangents with their values. A user
instruction (instructions.py) carries its own rules: `tangent_spec` builds the tangent instruction, whose adjoint
follows from the hand-written one, and `derived_adjoint` the adjoint of a rule that has none.
"""
from __future__ import annotations

from ..primitives.operations import BY_REVERSIBLE_NAME
from ..primitives.scalar import PARTIALS, SINGULAR
from .ir import base_name, invert_spec, is_element
from .specialize import DIFFERENTIABLE, differentiable, expression_type

ZERO_DERIVATIVE = {"sign", "floor", "ceil", "round", "floordiv", "len", "shape", "eq", "ne", "lt", "le", "gt", "ge",
                   "and", "or", "not", "complex"}


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
        for mask, other in ((a, b), (b, a)):
            if isinstance(mask, _Masked):  # select(c, g, 0) * p -> select(c, g * p, 0): the mask sinks
                return mask.around(Symbolic.mul(mask.value, other))
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
        if isinstance(a, _Masked):
            return a.around(Symbolic.neg(a.value))
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


class _Masked(tuple):
    """("select", c, g, 0.0) or ("select", c, 0.0, g), made by the reverse sweep of a select: a cotangent g
    zero by structure in the branch c does not give it. It is an ordinary select to everything else;
    Symbolic.mul and neg sink it through the products with partial derivatives, so the untaken branch's
    infinite partials never meet the zero (a select in the user's own expression is a plain tuple, and
    keeps its IEEE products)."""

    @property
    def value(self):
        return self[2] if self.taken else self[3]

    @property
    def taken(self) -> bool:
        return not (_number(self[2]) and self[2] == 0)

    def around(self, value):
        return _masked(self[1], value, self.taken)


def _masked(condition, seed, taken: bool = True):
    """`seed` where `condition` is True (taken) or False (not taken), zero by structure elsewhere."""
    if _number(seed) and seed == 0:
        return 0.0
    return _Masked(("select", condition, seed, 0.0) if taken else ("select", condition, 0.0, seed))


def _polynomial(expr) -> bool:
    """x ** n for a constant integer n >= 1: its partial is finite, no guard needed."""
    return expr[0] == "pow" and isinstance(expr[2], int) and not isinstance(expr[2], bool) and expr[2] >= 1


def partial_terms(expr, seed, types, forward):
    """The chain rule through one expression.

    forward=False: [(leaf, seed * d expr / d leaf)] for every float leaf (a variable or element), repeated
    leaves once per occurrence: the reverse sweep of one statement (seed is the target's cotangent).
    forward=True: seed maps a leaf to its tangent (or None); returns the tangent expression of expr or None.
    """
    if isinstance(expr, str) or (isinstance(expr, tuple) and expr[0] in ("index", "llog")):
        if not differentiable(expression_type(expr, types)[0]):
            return None if forward else []
        return seed(expr) if forward else [(expr, seed)]
    if not isinstance(expr, tuple) or expr[0] in ZERO_DERIVATIVE:
        return None if forward else []
    if expr[0] in COMPLEX_RULES or (expr[0] == "abs" and expression_type(expr[1], types)[0] == "c"):
        return _complex_part(expr[0], expr[1], seed, types, forward)
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
            prim = BY_REVERSIBLE_NAME[op].prim
            parts = PARTIALS[prim](m, *operands, expr)
            guard = prim in SINGULAR and not _polynomial(expr)
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
    # Reverse products are IEEE (0 * inf = NaN), as in reverse mode over arrays; only the untaken branch of
    # a select is zero by structure (_Masked).
    if op == "select":
        if isinstance(operands[0], bool):
            return partial_terms(operands[1] if operands[0] else operands[2], seed, types, False)
        return (partial_terms(operands[1], _masked(operands[0], seed), types, False)
                + partial_terms(operands[2], _masked(operands[0], seed, taken=False), types, False))
    if op == "safe_mul":
        return (partial_terms(operands[0], m.mul(seed, operands[1]), types, False)
                + partial_terms(operands[1], m.mul(seed, operands[0]), types, False))
    parts = PARTIALS[BY_REVERSIBLE_NAME[op].prim](m, *operands, expr)
    terms = []
    for operand, part in zip(operands, parts):
        if _is_constant(operand):
            continue
        terms += partial_terms(operand, m.mul(seed, part), types, False)
    return terms


COMPLEX_RULES = ("real", "imag", "conj", "angle")
_MINUS_I = ("complex", 0.0, -1.0)


def _complex_part(op, z, seed, types, forward):
    """real, imag, conj, angle and abs of z: real-linear maps, or real functions, of a complex z. Their tangents
    are Re t, Im t, conj t, Im(t / z), Re(conj(z) t) / |z|; their transposes under the pairing <u, v> = Re(u v)
    (primitives/complex.py) map a cotangent c to c, -i c, conj c, -i c / z, c conj(z) / |z| (0 at z = 0, as JAX),
    where c is real for the four real outputs (the real part of what reaches them). Of a real z: real and conj are
    the identity, imag and angle constant."""
    m = SYMBOLIC
    is_complex = expression_type(z, types)[0] == "c"
    if not is_complex and op in ("imag", "angle"):
        return None if forward else []
    direction = ("select", ("eq", z, 0.0), 0.0, ("div", ("conj", z), ("abs", z))) if op == "abs" else None
    if forward:
        t = partial_terms(z, seed, types, True)
        if t is None:
            return None
        if op == "angle":
            return ("imag", m.div(t, z))
        if op == "abs":
            return ("real", m.mul(direction, t))
        return (op, t) if is_complex else t
    if op != "conj":  # a real output: a complex cotangent reaching it (through z / abs(z), say) counts by its real part
        seed = ("real", seed)
    if op == "real" or not is_complex:
        new_seed = seed
    elif op == "imag":
        new_seed = m.mul(seed, _MINUS_I)
    elif op == "conj":
        new_seed = ("conj", seed)
    elif op == "angle":
        new_seed = m.div(m.mul(seed, _MINUS_I), z)
    else:
        new_seed = m.mul(seed, direction)
    return partial_terms(z, new_seed, types, False)


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
        if isinstance(target, tuple) and target[0] == "llog":  # the log of a lognumber: its own derivative
            return derived(target[1])
        if is_element(target):
            return ("index", target[1] + suffix) + target[2:]
        return target + suffix
    return derived


def _zero_like(init):
    """The initial value of an ancilla's tangent or cotangent: zeros of its shape, an empty stack, 0."""
    return init if isinstance(init, tuple) and init[0] not in ("lognumber", "complex") else 0.0


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
    new_types = types + tuple((v + suffix, DIFFERENTIABLE[k], r) for v, k, r in types if differentiable(k))

    def is_float(target):
        return differentiable(table[base_name(target)][0])

    def tangent(expr):
        return partial_terms(expr, lambda leaf: d(leaf), table, True)

    def block(statements):
        out = []
        for s in statements:
            out += statement(s)
        return tuple(out)

    def statement(s):
        kind, line = s[0], s[1]
        if kind in ("inc", "dec", "lmul", "ldiv"):  # a lognumber's log grows by s[3]: its tangent by s[3]'
            t = tangent(s[3]) if is_float(s[2]) else None
            update = {"lmul": "inc", "ldiv": "dec"}.get(kind, kind)
            return ([(update, line, d(s[2]), t)] if t is not None else []) + [s]
        if kind in ("push", "pop"):
            return ([(kind, line, d(s[2]), d(s[3]), s[4])] if is_float(s[2]) else []) + [s]
        if kind == "inst":
            kinds = [table[base_name(t)][0] if not is_element(t) else table[t[1]][0] for t in s[3]]
            ranks = [_target_rank(t, table) for t in s[3]]
            derived = tuple(d(t) for t in s[3] if differentiable(table[base_name(t)][0]))
            return [("inst", line, tangent_spec(s[2], list(zip(kinds, ranks))), s[3] + derived)]
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

    new_args = args + tuple(a + suffix for a in args if differentiable(table[a][0]))
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
    seeds = tuple(a + suffix for a in args if differentiable(table[a][0]))
    grad_types = tuple((v, k, r) for v, k, r in types if v in args) + tuple(
        (a + suffix, DIFFERENTIABLE[table[a][0]], table[a][1]) for a in args if differentiable(table[a][0]))
    grad = (f"grad({name})", args + seeds, grad_types, check, atol,
            (("call", 0, name, args), ("call", 0, names[name], args + seeds)))
    return (grad,) + tuple(program) + tuple(_adjoint_function(f, names) for f in program)


def _adjoint_function(function, names):
    name, args, types, check, atol, body = function
    table = {v: (k, r) for v, k, r in types}
    suffix = fresh_suffix(set(table), "^")
    bar = _mapper(suffix)
    new_types = types + tuple((v + suffix, DIFFERENTIABLE[k], r) for v, k, r in types if differentiable(k))
    every = {v: (k, r) for v, k, r in new_types}

    def is_float(target):
        return differentiable(table[base_name(target)][0])

    def spread(kind, line, seed, value):
        """Statements x^ (+= or -=) seed * d value / dx for every float leaf x of value."""
        out = []
        for leaf, term in partial_terms(value, seed, table, False):
            (leaf_kind, leaf_rank), (term_kind, term_rank) = (expression_type(leaf, every),
                                                              expression_type(term, every))
            if term_kind == "c" and leaf_kind != "c":
                term = ("real", term)  # a real variable's share of a complex cotangent (pairing Re(u v))
            if term_rank > leaf_rank:
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
        if kind in ("lmul", "ldiv"):  # the log of p grew by s[3]: p^ flows into s[3] as for +=
            undo = ("ldiv" if kind == "lmul" else "lmul", line, s[2], s[3])
            return [undo] + spread("inc" if kind == "lmul" else "dec", line, bar(s[2]), s[3])
        if kind in ("push", "pop"):  # the inverse move, and the cotangent moves back with the value
            other = "pop" if kind == "push" else "push"
            return [(other, line, s[2], s[3], s[4])] + (
                [(other, line, bar(s[2]), bar(s[3]), False)] if is_float(s[2]) else [])
        if kind == "inst":
            return [("inst", line, invert_spec(s[2]), s[3]), _adjoint_update(s, line, table, bar)]
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

    new_args = args + tuple(a + suffix for a in args if differentiable(table[a][0]))
    return (names[name], new_args, new_types, check, atol, block(body))


# --- user instructions (instructions.py) ------------------------------------------------------------------

def _target_rank(target, table) -> int:
    return table[target][1] if isinstance(target, str) else table[target[1]][1] - (len(target) - 2)


def substitute(expr, mapping):
    """`expr` with the names of `mapping` replaced (by names or numbers; an indexed number is the number)."""
    if isinstance(expr, str):
        return mapping.get(expr, expr)
    if not isinstance(expr, tuple):
        return expr
    if expr[0] in ("index", "len", "shape", "llog"):
        head = mapping.get(expr[1], expr[1])
        if not isinstance(head, str):
            return head
        return (expr[0], head) + tuple(substitute(o, mapping) if expr[0] == "index" else o for o in expr[2:])
    return (expr[0],) + tuple(substitute(o, mapping) for o in expr[1:])


def _like(expr, name, rank, types):
    """`expr` broadcast to the rank of the variable `name` (None: zeros like it)."""
    zeros = SYMBOLIC.mul(0.0, name) if rank else 0.0
    if expr is None:
        return zeros
    return expr if expression_type(expr, types)[1] >= rank else ("add", expr, zeros)


def derived_adjoint(params, exprs, bars, table, fail=None):
    """The adjoint of an instruction rule without a hand-written one: the cotangent of parameter k is
    sum_i bar_i * d exprs_i / d param_k (exprs_i the new value of parameter i, bar_i its cotangent)."""
    bar_types = {b: (DIFFERENTIABLE.get(table[p][0], "f"), table[p][1]) for p, b in zip(params, bars)}
    every = {**table, **bar_types}
    totals = dict.fromkeys(params)
    for expr, output, b in zip(exprs, params, bars):
        if not differentiable(table[output][0]):
            continue
        for leaf, term in partial_terms(expr, b, table, False):
            if not isinstance(leaf, str) or leaf not in totals:
                message = (f"the rule `{leaf}` reads an element of a parameter, whose adjoint cannot be derived: give "
                           "the adjoint with defadjoint")
                if fail is None:
                    raise ValueError(message)
                fail(message)
            if expression_type(term, every)[0] == "c" and table[leaf][0] != "c":
                term = ("real", term)
            if expression_type(term, every)[1] > table[leaf][1]:
                term = ("sum", term)
            totals[leaf] = term if totals[leaf] is None else SYMBOLIC.add(totals[leaf], term)
    return tuple(_like(totals[p], b, table[p][1], every) for p, b in zip(params, bars))


def tangent_spec(spec, param_types) -> tuple:
    """The tangent instruction of `spec` for parameters of `param_types`: (p, p') -> (F(p), F'(p) p'), its
    inverse (G(q), G'(q) q'), and its adjoint from the hand-written adjoint A(p, v) = F'(p)^T v: the cotangent
    (b, c) of (F(p), F'(p) p') gives p^ = A(p, b) + d/dp <c, F'(p) p'> = A(p, b) + (the derivative of A(p, c)
    along p'), and p'^ = A(p, c)."""
    name, params, forward, inverse, bars, adjoint, inverse_adjoint = spec
    table = dict(zip(params, param_types))
    diff = [k for k, (kind, _) in enumerate(param_types) if differentiable(kind)]
    suffix = fresh_suffix(set(params) | set(bars), "'")
    d = _mapper(suffix)
    new_params = tuple(params[k] + suffix for k in diff)
    new_bars = tuple(bars[k] + suffix for k in diff)
    types = {**table, **{p: (DIFFERENTIABLE[table[params[k]][0]], table[params[k]][1])
                         for p, k in zip(new_params, diff)}}
    every = {**types, **{b: (DIFFERENTIABLE.get(k, "f"), r) for b, (k, r) in zip(bars, param_types)},
             **{b: types[p] for b, p in zip(new_bars, new_params)}}

    def seed(leaf):
        base = leaf if isinstance(leaf, str) else leaf[1]
        return d(leaf) if base in table and differentiable(table[base][0]) else None

    def with_tangents(exprs):
        return tuple(exprs) + tuple(_like(partial_terms(exprs[k], seed, types, True), params[k] + suffix,
                                          table[params[k]][1], types) for k in diff)

    def adjoint_of(rule):
        tangent_bars = {bars[k]: (bars[k] + suffix if k in diff else 0.0) for k in range(len(params))}
        by_tangent = [substitute(a, tangent_bars) for a in rule]
        first = []
        for a, a_c in zip(rule, by_tangent):
            jvp = partial_terms(a_c, seed, every, True)
            first.append(a if jvp is None else SYMBOLIC.add(a, jvp))
        return tuple(first) + tuple(by_tangent[k] for k in diff)

    return (f"jvp({name})", params + new_params, with_tangents(forward), with_tangents(inverse), bars + new_bars,
            adjoint_of(adjoint), adjoint_of(inverse_adjoint))


def _adjoint_update(statement, line, table, bar):
    """The reverse sweep's cotangent step of an instruction (after its inverse restored the values): the bars of
    its differentiable targets become A(values, bars). Run forward only (never inverted)."""
    _, _, spec, targets = statement
    name, params, _, _, bars, adjoint, _ = spec
    diff = [k for k, t in enumerate(targets) if differentiable(table[base_name(t)][0])]
    mapping = {bars[k]: (bars[k] if k in diff else 0.0) for k in range(len(params))}
    exprs = tuple(params) + tuple(substitute(adjoint[k], mapping) for k in diff)
    update = (f"adjoint({name})", params + tuple(bars[k] for k in diff), exprs, None, (), None, None)
    return ("inst", line, update, targets + tuple(bar(targets[k]) for k in diff))
