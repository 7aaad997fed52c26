"""The `reversible` and `reversible_grad` primitives on the NumPy backend: statement programs (the nested-tuple
IR of adarray.reversible, see reversible/ir.py) become Python source, one function per function of the
program table, run by the Python interpreter over NumPy scalars and arrays.

    y += e            y += e   (in place for arrays and elements; rebinding for scalars)
    rv.rot(a, b, t)   a, b = a * cos(t) - b * sin(t), b * cos(t) + a * sin(t)
    g(a, x[i])        r = g(a, x[i]); a = r[0]; x[i] = r[1]   (every function returns all its arguments)
    inst(a, b)        the instruction's expressions into temporaries, then written back
    for/if/while      the same Python statements, with the run-time reversibility checks of the language
A stack is three Python values: its buffer (an array whose first axis is the slots, grown by doubling when it
has no capacity), its top (an int) and its capacity (-1: none); push swaps the value with the slot above the
top, pop swaps back. A lognumber p is an int: its log in units of 2**-42 (reversible/ir.py), so p *= x adds the
rounded log of x and p /= x subtracts the same integer.
The checks (ancillas restored, if post-conditions, while post-conditions, unchanged loop bounds, distinct
elements in one statement) raise CheckFailed(k, values) in the generated code; the runner turns it into a
ReversibilityError from the k-th message, which names the function, the line, the variable and the values.
`reversible_grad` runs the adjoint program (gradient by reverse computing: reversible/derivatives.py). The
same source, decorated with numba.njit, is what backends/numba/reversible.py compiles: with Numba installed,
programs whose interpreted calls are slow (or every program, with rv.set_reversible_backend("numba"), see
reversible/execution.py) run as native loops, as adarray.api.tiering chooses (`Compiled.runner`). Arguments are
copied before the first statement, so the caller's arrays are never written.
"""
from __future__ import annotations

import time

import numpy as np

from ...core.errors import ExecutionError, ReversibilityError, ShapeError
from ...primitives.operations import BY_REVERSIBLE_NAME
from ...reversible.ir import (
    COMPLEX_PARTS,
    LOG_UNIT,
    UPDATE_SYMBOLS,
    array_leaves,
    colliding_elements,
    elements_read,
    expr_text,
    factor_text,
    fixed_log,
    rank_of,
)
from ...reversible.primitive import adjoint_of, reversible_grad_p, reversible_p
from .registry import ACCELERATORS, impl


def _operation_source(row) -> str:
    """One operation of the reversible language as Python source over {0}, {1}: an operator infix (Python's `**`
    and `%` on Python numbers too), else the element source of the operations table, else NumPy's function."""
    if row.symbol and row.arity == 2:
        return f"({{0}} {row.symbol} {{1}})"
    if row.source is not None:
        return row.source
    return f"np.{row.numpy}({', '.join(f'{{{k}}}' for k in range(row.arity))})"


# The operations of the reversible language (primitives/operations.py), then sum and the complex parts; logistic
# calls the helper that this module and the Numba module's header define.
_SOURCES = {name: _operation_source(row) for name, row in BY_REVERSIBLE_NAME.items()}
_SOURCES.update({"logistic": "_logistic({0})", "sum": "np.sum({0})", **{n: f"np.{n}({{0}})" for n in COMPLEX_PARTS}})


class CheckFailed(Exception):
    """Raised by generated code: args = (message index, values...)."""


def _logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def _cube(x):
    return x * x * x


# --- code generation ------------------------------------------------------------------------------------

def _literal(value) -> str:
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, complex):
        return repr(value)
    if isinstance(value, float):
        if np.isnan(value):
            return "np.nan"
        if np.isinf(value):
            return "np.inf" if value > 0 else "(-np.inf)"
        return repr(value)
    return repr(int(value))


def expr_source(expr, names, types, available=None) -> str:
    """Python source of an expression; `available` maps repr(subexpression) to a temporary holding it."""
    if isinstance(expr, str):
        return names[expr]
    if not isinstance(expr, tuple):
        return _literal(expr)
    if available:
        cached = available.get(repr(expr))
        if cached is not None:
            return cached
    op, operands = expr[0], expr[1:]
    if op == "index":
        return f"{names[operands[0]]}[{', '.join(expr_source(i, names, types, available) for i in operands[1:])}]"
    if op == "len":
        return f"len({names[operands[0]]})"
    if op == "llog":
        return f"({names[operands[0]]} * {LOG_UNIT!r})"
    if op == "complex":
        return repr(complex(*operands))
    if op == "shape":
        return f"{names[operands[0]]}.shape[{operands[1]}]"
    code = [expr_source(o, names, types, available) for o in operands]
    if op in ("and", "or"):
        return "(" + f" {op} ".join(code) + ")"
    if op == "select":
        if rank_of(expr, types) == 0:
            return f"({code[1]} if {code[0]} else {code[2]})"
        return f"np.where({code[0]}, {code[1]}, {code[2]})"
    if op == "safe_mul":  # x * y, exactly 0 where x == 0 (a zero tangent or cotangent times a singular partial)
        if rank_of(operands[0], types) == 0:
            return f"(0.0 if {code[0]} == 0 else {code[0]} * {code[1]})"
        return f"np.where({code[0]} == 0, 0.0, {code[0]} * {code[1]})"
    if op == "pow" and isinstance(operands[1], int) and not isinstance(operands[1], bool) and 1 <= operands[1] <= 3:
        # NumPy's general power is ~20x slower than products on arrays
        return [code[0], f"np.square({code[0]})", f"_cube({code[0]})"][operands[1] - 1]
    if op in _SOURCES:
        return _SOURCES[op].format(*code)
    raise ExecutionError(f"reversible programs: unknown operation {op!r}")


def _operations(expr) -> list:
    """The subexpressions worth computing once (operations and element reads), children before parents."""
    if not isinstance(expr, tuple) or expr[0] in ("len", "shape"):
        return []
    operands = expr[2:] if expr[0] == "index" else expr[1:]
    return [sub for operand in operands for sub in _operations(operand)] + [expr]


def _names(expr) -> set:
    if isinstance(expr, str):
        return {expr}
    if isinstance(expr, tuple):
        start = 1 if expr[0] not in ("index", "len", "shape") else 1
        return set().union(*(_names(o) for o in expr[start:])) if len(expr) > start else set()
    return set()


def _seen_twice(key, used, keyed, start) -> bool:
    """Is the subexpression `key` evaluated twice from statement `start` on, before something it reads changes?
    `keyed`: per statement, the keys of its operations and the variable it writes."""
    count = 0
    for keys, written in keyed[start:]:
        count += keys.count(key)
        if count >= 2:
            return True
        if written in used:
            return False
    return False


class _Writer:
    """Emits the source of one program table; collects the check messages."""

    def __init__(self, program):
        self.program = program
        self.functions = {f[0]: f"f{k}" for k, f in enumerate(program)}
        self.lines: list[str] = []
        self.origins: list = []  # per generated line: (function, source line) of the statement it belongs to
        self.origin = None
        self.messages: list[str] = []
        self.count = 0
        self.available: dict = {}

    def fresh(self, stem="t") -> str:
        self.count += 1
        return f"_{stem}{self.count}"

    def emit(self, indent, text) -> None:
        self.lines.append("    " * indent + text)
        self.origins.append(self.origin)

    def message(self, text, error=ReversibilityError) -> int:
        self.messages.append((text, error))
        return len(self.messages) - 1

    def function(self, function) -> None:
        name, args, types, check, atol, body = function
        self.name, self.check, self.atol = name, check, atol
        self.types = {v: (k, r) for v, k, r in types}
        self.names = {v: f"v{k}" for k, (v, _, _) in enumerate(types)}
        slots = [slot for a in args for slot in self.slots(a)]
        self.emit(0, f"def {self.functions[name]}({', '.join(slots)}):  # {name}({', '.join(args)})")
        self.block(body, 1)
        self.emit(1, f"return ({', '.join(slots)}{',' if len(slots) == 1 else ''})")
        self.emit(0, "")

    def slots(self, target) -> list[str]:
        """The Python values a target is: one, or a stack's buffer, top and capacity."""
        if isinstance(target, str) and self.types[target][0].startswith("s"):
            name = self.names[target]
            return [name, name + "t", name + "c"]
        return [self.expr(target)]

    def expr(self, expr) -> str:
        return expr_source(expr, self.names, self.types, self.available)

    def fail(self, indent, condition, line, text, values=(), error=ReversibilityError) -> None:
        k = self.message(f"reversible '{self.name}', line {line}: {text}", error)
        args = "".join(f", {v}" for v in values)
        self.emit(indent, f"if {condition}:")
        self.emit(indent + 1, f"raise CheckFailed({k}{args})")

    def block(self, statements, indent) -> None:
        if not statements:
            self.emit(indent, "pass")
        k = 0
        while k < len(statements):
            if statements[k][0] not in ("inc", "dec", "xor"):
                self.statement(statements[k], indent)
                k += 1
                continue
            end = k
            while end < len(statements) and statements[end][0] in ("inc", "dec", "xor"):
                end += 1
            self.updates(statements[k:end], indent)
            k = end

    def updates(self, run, indent) -> None:
        """A run of accumulations, sharing subexpressions: a subexpression met twice before any variable it reads
        is written is computed once into a temporary (the adjoint of one statement repeats its partials)."""
        self.available = {}
        reads = {}
        subs = [[(repr(sub), sub) for sub in _operations(s[3])] for s in run]
        keyed = [([key for key, _ in pairs], s[2] if isinstance(s[2], str) else s[2][1]) for pairs, s in zip(subs, run)]
        for j, s in enumerate(run):
            for key, sub in subs[j]:
                if key in self.available:
                    continue
                used = reads.setdefault(key, _names(sub))
                if _seen_twice(key, used, keyed, j):
                    temp = self.fresh()
                    self.emit(indent, f"{temp} = {self.expr(sub)}")
                    self.available[key] = temp
            self.statement(s, indent)
            written = keyed[j][1]
            self.available = {k: t for k, t in self.available.items() if written not in reads.get(k, ())}
        self.available = {}

    def statement(self, s, indent) -> None:
        kind, line = s[0], s[1]
        outer, self.origin = self.origin, (self.name, line)
        getattr(self, "_" + kind)(s, line, indent)
        self.origin = outer

    def _distinct(self, targets, line, indent, what, reads=()) -> None:
        """The elements a statement writes must differ from each other and from those it reads, at run time too
        (syntax cannot tell x[i] from x[j] when i == j). Reads may coincide."""
        if not self.check:
            return
        for a, b in colliding_elements(targets, reads):
            pairs = " and ".join(f"({self.expr(i)}) == ({self.expr(j)})" for i, j in zip(a[2:], b[2:]))
            self.fail(indent, pairs, line, f"{what} {expr_text(b)} and {expr_text(a)} are the same element "
                      f"(index {{0}}): one statement must not read and write one element twice",
                      [self.expr(a[2])])

    def _update(self, s, line, indent) -> None:
        if s[0] in ("inc", "dec", "xor") and isinstance(s[2], tuple):
            self._distinct([s[2]], line, indent, "the target and the value:", elements_read(s[3]))
        if s[0] in ("inc", "dec", "xor") and self.check and rank_of(s[2], self.types):
            self._same_shapes(s, line, indent)
        self.emit(indent, f"{self.place(s[2])} {UPDATE_SYMBOLS[s[0]]} {self.expr(s[3])}")

    def place(self, target) -> str:
        """Where a statement writes: an element's indices may come from shared temporaries, the element never."""
        if isinstance(target, tuple):
            return f"{self.names[target[1]]}[{', '.join(self.expr(i) for i in target[2:])}]"
        return self.names[target]

    _inc = _dec = _xor = _mul = _div = _update

    def _same_shapes(self, s, line, indent) -> None:
        """A whole-array update combines arrays of the target's shape (NumPy would raise on others, but Numba's
        in-place operations read and write past the smaller array)."""
        target = self.place(s[2])
        for leaf in array_leaves(s[3], self.types):
            self.fail(indent, f"{self.expr(leaf)}.shape != {target}.shape", line,
                      f"`{expr_text(s[2])} {UPDATE_SYMBOLS[s[0]]} {expr_text(s[3])}`: `{expr_text(leaf)}` has shape "
                      "{0}, the target "
                      "{1}: a whole-array update combines arrays of the target's shape with scalars",
                      [f"{self.expr(leaf)}.shape", f"{target}.shape"], error=ShapeError)

    def _swap(self, s, line, indent) -> None:
        a, b = self.expr(s[2]), self.expr(s[3])
        if not rank_of(s[2], self.types) or (isinstance(s[2], str) and isinstance(s[3], str)):
            self.emit(indent, f"{a}, {b} = {b}, {a}")  # scalars, or two whole arrays: exchange the references
            return
        # a row x[i] is a view: copy it before it is overwritten, and never bind a variable to a view
        temp = self.fresh()
        self.emit(indent, f"{temp} = np.copy({a})")
        self.emit(indent, f"{a} = {b}" if isinstance(s[2], tuple) else f"{a} = np.copy({b})")
        self.emit(indent, f"{b} = {temp}")

    def _neg(self, s, line, indent) -> None:
        a = self.expr(s[2])
        self.emit(indent, f"{a} = -{a}")

    def _rot(self, s, line, indent) -> None:
        self._distinct([s[2], s[3]], line, indent, "rv.rot:", elements_read(s[4]))
        a, b = self.expr(s[2]), self.expr(s[3])
        c, si = self.fresh("c"), self.fresh("s")
        self.emit(indent, f"{c} = np.cos({self.expr(s[4])}); {si} = np.sin({self.expr(s[4])})")
        self.emit(indent, f"{a}, {b} = {a} * {c} - {b} * {si}, {b} * {c} + {a} * {si}")

    def _call(self, s, line, indent) -> None:
        self._distinct(list(s[3]), line, indent, "the arguments")
        result = self.fresh("r")
        slots = [slot for a in s[3] for slot in self.slots(a)]
        self.emit(indent, f"{result} = {self.functions[s[2]]}({', '.join(slots)})")
        for k, slot in enumerate(slots):
            self.emit(indent, f"{slot} = {result}[{k}]")

    def _inst(self, s, line, indent) -> None:
        """A user instruction: its expressions over the values before it, then written back together."""
        spec, targets = s[2], s[3]
        params, exprs = spec[1], spec[2]
        self._distinct(list(targets), line, indent, "the arguments")
        names, types = dict(self.names), dict(self.types)
        for param, target in zip(params, targets):
            names[param] = self.expr(target)
            kind = self.types[target if isinstance(target, str) else target[1]][0]
            types[param] = (kind, rank_of(target, self.types))
        writes = []
        for param, target, expr in zip(params, targets, exprs):
            if expr == param:
                continue  # unchanged
            temp = self.fresh()
            code = expr_source(expr, names, types)
            if types[param][1] and (isinstance(expr, str) or expr[0] == "index"):
                code = f"np.copy({code})"  # a row of an array is a view: copy it before it is written
            self.emit(indent, f"{temp} = {code}")
            writes.append((target, temp))
        for target, temp in writes:
            self.emit(indent, f"{self.place(target)} = {temp}")

    def _push(self, s, line, indent) -> None:
        """rv.push(s, x): x trades places with the slot above the top (zero), which then becomes the top."""
        buffer, top, capacity = self.slots(s[2])
        kind, rank = self.types[s[2]]
        value = self.place(s[3])
        self.emit(indent, f"if {top} == {buffer}.shape[0]:")
        self.fail(indent + 1, f"{capacity} >= 0 and {top} >= {capacity}", line,
                  f"rv.push({s[2]}, {expr_text(s[3])}): the stack '{s[2]}' is full (its capacity is {{0}})",
                  [capacity])
        self.emit(indent + 1, f"{buffer} = _stack_grow({buffer}, {value}, {capacity})")
        if rank and self.check:
            self.fail(indent, f"{buffer}.shape[1:] != np.shape({value})", line,
                      f"rv.push({s[2]}, {expr_text(s[3])}): '{expr_text(s[3])}' has shape {{0}}, the stack holds "
                      "values of shape {1}", [f"np.shape({value})", f"{buffer}.shape[1:]"], error=ShapeError)
        self._trade(buffer, top, value, rank, indent)
        self.emit(indent, f"{top} += 1")

    def _pop(self, s, line, indent) -> None:
        """rv.pop(s, x): the top trades places with x, which must be zero (checked), and the top goes down."""
        buffer, top, _ = self.slots(s[2])
        kind, rank = self.types[s[2]]
        value = self.place(s[3])
        self.fail(indent, f"{top} == 0", line, f"rv.pop({s[2]}, {expr_text(s[3])}): the stack '{s[2]}' is empty")
        if self.check and s[4]:
            zero = "0.0" if kind in ("sf", "sc") else "0" if kind == "si" else "False"
            if kind in ("sf", "sc"):
                gap = f"np.max(np.abs({value}))" if rank else f"abs({value})"
                condition = (f"np.size({value}) and not ({gap} <= {self.atol!r})" if rank
                             else f"not ({gap} <= {self.atol!r})")
            else:
                gap = f"np.any({value} != {zero})" if rank else value
                condition = f"np.any({value} != {zero})" if rank else f"{value} != {zero}"
            self.fail(indent, condition, line, f"rv.pop({s[2]}, {expr_text(s[3])}): '{expr_text(s[3])}' must be zero "
                      "before the pop (it " + ("is {0} away" if rank else "holds {0}") + "); pop into a fresh "
                      "ancilla or one returned to zero", [gap])
        self.emit(indent, f"{top} -= 1")
        self._trade(buffer, top, value, rank, indent)

    def _trade(self, buffer, top, value, rank, indent) -> None:
        temp = self.fresh()
        self.emit(indent, f"{temp} = {buffer}[{top}]" + (".copy()" if rank else ""))
        self.emit(indent, f"{buffer}[{top}] = {value}")
        self.emit(indent, f"{value} = {temp}")

    def _lmul(self, s, line, indent) -> None:
        """p *= x on a lognumber: its log (an int count of 2**-42) grows by log x, rounded; exact to undo."""
        target = self.place(s[2])
        sign = "+" if s[0] == "lmul" else "-"
        log_value = s[3]
        if isinstance(log_value, tuple) and log_value[0] == "llog":
            self.emit(indent, f"{target} {sign}= {self.names[log_value[1]]}")  # another lognumber: exact
        else:
            temp = self.fresh()
            self.emit(indent, f"{temp} = {self.expr(log_value)}")
            if self.check:
                self.fail(indent, f"not np.isfinite({temp})", line,
                          f"`{expr_text(s[2])} {UPDATE_SYMBOLS[s[0]]} {factor_text(log_value)}`: a lognumber is "
                          "multiplied by positive finite numbers (the factor's log is {0})", [temp])
            self.emit(indent, f"{target} {sign}= _fixed({temp})")
        if self.check:
            self.fail(indent, f"abs({target}) > {_LOG_LIMIT}", line,
                      f"`{expr_text(s[2])} {UPDATE_SYMBOLS[s[0]]} {factor_text(log_value)}`: the lognumber "
                      f"'{expr_text(s[2])}' overflows (its log passed 2**20)")

    _ldiv = _lmul

    def init_source(self, name, init) -> str:
        if isinstance(init, tuple) and init[0] == "zeros":
            return f"np.zeros(({''.join(self.expr(d) + ', ' for d in init[1:])}))"
        kind, rank = self.types[name]
        if isinstance(init, tuple) and init[0] == "lognumber":
            return str(fixed_log(init[1]))
        if isinstance(init, tuple) and init[0] == "complex":
            init = complex(*init[1:])
        if isinstance(init, tuple) and init[0] == "zeros_like":
            if rank:
                return f"np.zeros_like({self.expr(init[1])})"
            init = 0
        return _literal(float(init) if kind == "f" else complex(init) if kind == "c" else bool(init) if kind == "b"
                        else int(init))

    def _alloc(self, s, line, indent) -> None:
        if isinstance(s[3], tuple) and s[3][0] == "stack":
            buffer, top, capacity = self.slots(s[2])
            kind, rank = self.types[s[2]]
            dtype = _STACK_DTYPES[kind]
            size = self.expr(s[3][1]) if s[3][1] is not None else "-1"
            self.emit(indent, f"{capacity} = {size}; {top} = 0")
            if s[3][1] is not None:
                self.fail(indent, f"{capacity} < 1", line, f"rv.stack({expr_text(s[3][1])}): the capacity {{0}} is "
                          "not positive", [capacity])
            shape = f"max({capacity}, 0)," if not rank else "0, " * (rank + 1)
            self.emit(indent, f"{buffer} = np.zeros(({shape}), {dtype})")
            return
        self.emit(indent, f"{self.names[s[2]]} = {self.init_source(s[2], s[3])}")

    def _free(self, s, line, indent) -> None:
        if not self.check:
            return
        name, init = s[2], s[3]
        var = self.names[name]
        kind, rank = self.types[name]
        if kind.startswith("s"):
            self.fail(indent, f"{var}t != 0", line, f"the stack '{name}' is not empty at rv.free: it holds {{0}} "
                      "values", [f"{var}t"])
            return
        if kind == "l":
            self.fail(indent, f"{var} != {fixed_log(init[1])}", line, f"the lognumber '{name}' is not restored: "
                      f"rv.free expects {init[1]!r}, it holds {{0}}", [f"np.exp({var} * {LOG_UNIT!r})"])
            return
        value = complex(*init[1:]) if _is_complex(init) else 0.0 if isinstance(init, tuple) else init
        expected = _literal(float(value) if kind == "f" else complex(value) if kind == "c" else value)
        if kind in ("f", "c"):
            gap = f"np.max(np.abs({var} - {expected}))" if rank else f"abs({var} - {expected})"
            condition = f"not ({gap} <= {self.atol!r})" if not rank else f"{var}.size and not ({gap} <= {self.atol!r})"
            shown = gap if rank else var
        else:
            condition = f"np.any({var} != {expected})" if rank else f"{var} != {expected}"
            shown = var
        floating = kind in ("f", "c")
        self.fail(indent, condition, line, f"the ancilla '{name}' is not restored: rv.free expects {value!r}"
                  + (f" (atol {self.atol})" if floating else "") + ", it " + ("is {0} away" if floating and rank
                                                                                else "holds {0}"), [shown])

    def _drop(self, s, line, indent) -> None:
        self.emit(indent, f"pass  # drop {s[2]} (the cotangent of a released ancilla)")

    def _if(self, s, line, indent) -> None:
        pre, post = s[2], s[3]
        flag = self.fresh("c")
        self.emit(indent, f"{flag} = bool({self.expr(pre)})")
        self.emit(indent, f"if {flag}:")
        self.block(s[4], indent + 1)
        if s[5]:
            self.emit(indent, "else:")
            self.block(s[5], indent + 1)
        if self.check:
            self.fail(indent, f"bool({self.expr(post)}) != {flag}", line,
                      f"the post-condition `{expr_text(post)}` is {{0}} after the branch, but the pre-condition "
                      f"`{expr_text(pre)}` was {{1}}: the branch cannot be undone",
                      [f"bool({self.expr(post)})", flag])

    def _for(self, s, line, indent) -> None:
        _, _, var, start, stop, step, reverse, body = s
        a, b, c = self.fresh("a"), self.fresh("b"), self.fresh("s")
        self.emit(indent, f"{a} = int({self.expr(start)}); {b} = int({self.expr(stop)}); {c} = int({self.expr(step)})")
        self.fail(indent, f"{c} == 0", line, f"range() step `{expr_text(step)}` is zero")
        if reverse:
            n = self.fresh("n")
            self.emit(indent, f"{n} = _count({a}, {b}, {c})")
            self.emit(indent, f"for {self.names[var]} in range({a} + ({n} - 1) * {c}, {a} - {c}, -{c}):")
        else:
            self.emit(indent, f"for {self.names[var]} in range({a}, {b}, {c}):")
        self.block(body, indent + 1)
        if self.check:
            now = f"({self.expr(start)}, {self.expr(stop)}, {self.expr(step)})"
            self.fail(indent, f"{now} != ({a}, {b}, {c})", line,
                      f"a bound of range({expr_text(start)}, {expr_text(stop)}, {expr_text(step)}) changed during the "
                      "loop: range({0}, {1}, {2}) became range({3}, {4}, {5})",
                      [a, b, c, self.expr(start), self.expr(stop), self.expr(step)])

    def _while(self, s, line, indent) -> None:
        pre, post, body = s[2], s[3], s[4]
        if self.check:
            self.fail(indent, f"{self.expr(post)}", line,
                      f"the while loop's post-condition `{expr_text(post)}` already holds on entry (it must be false "
                      "before the first iteration and true after every one)")
        self.emit(indent, f"while {self.expr(pre)}:")
        self.block(body, indent + 1)
        if self.check:
            self.fail(indent + 1, f"not ({self.expr(post)})", line,
                      f"the while loop's post-condition `{expr_text(post)}` is false after an iteration (it must hold "
                      "after every iteration)")


_HELPERS = '''
def _count(a, b, s):
    if s > 0:
        return max(0, (b - a + s - 1) // s)
    return max(0, (a - b - s - 1) // (-s))


def _stack_grow(buffer, value, capacity):
    n = buffer.shape[0]
    size = capacity if capacity >= 0 else max(8, 2 * n)
    grown = np.zeros((size,) + np.shape(value), buffer.dtype)
    if n:
        grown[:n] = buffer
    return grown


def _fixed(log_value):
    return int(np.rint(log_value * 4398046511104.0))

'''
_LOG_LIMIT = 2 ** 62


def _is_complex(init) -> bool:
    return isinstance(init, tuple) and init[0] == "complex"
_STACK_DTYPES = {"sf": "np.float64", "sc": "np.complex128", "si": "np.int64", "sb": "np.bool_"}



def generate(program) -> tuple[str, list[str], list]:
    """(Python source of the program table, the check messages, the origin (function, source line) of every
    generated line or None); the entry function is f0."""
    writer = _Writer(program)
    for function in program:
        writer.function(function)
    origins = [None] * _HELPERS.count("\n") + writer.origins
    return _HELPERS + "\n".join(writer.lines) + "\n", writer.messages, origins


# --- running ------------------------------------------------------------------------------------------

class Compiled:
    """A program table as Python functions (interpreted), counting the time its calls take."""

    def __init__(self, program):
        self.program = program
        self.source, self.messages, self.origins = generate(program)
        namespace = {"np": np, "CheckFailed": CheckFailed, "_logistic": _logistic, "_cube": _cube}
        exec(compile(self.source, f"<reversible {program[0][0]}>", "exec"), namespace)
        self.entry = namespace["f0"]
        self.native = None  # the Numba version, once compiled
        self.seconds = 0.0

    def runner(self):
        """The native version to call instead of `entry`, or None: chosen above the backends by
        `ACCELERATORS[reversible_p]` (this object -> a native runner or None), which adarray.api.tiering installs."""
        accelerate = ACCELERATORS.get(reversible_p)
        return None if accelerate is None else accelerate(self)


_COMPILED: dict = {}


def compiled(program) -> Compiled:
    entry = _COMPILED.get(id(program))
    if entry is not None and entry[0] is program:
        return entry[1]
    result = _COMPILED.get(program)
    if result is None:
        if len(_COMPILED) > 2048:  # programs of a long session: keep the memory bounded
            _COMPILED.clear()
        result = _COMPILED[program] = Compiled(program)
    _COMPILED[id(program)] = (program, result)
    return result


def _value(array, kind):
    """A private copy of an argument: Python numbers for float64/int64/bool scalars, arrays copied."""
    array = np.asarray(array)
    if array.ndim:
        return np.array(array, copy=True)
    if array.dtype in (np.float64, np.int64, np.complex128) or kind == "b":
        return array.item()
    return array[()]


def execute(program, args, batch=0, keep=0):
    """Run the entry function of `program` on `args`, each with `batch` leading axes (shared: the program runs once
    per batch index); the updated arguments from the `keep`-th on, one array each."""
    compiled_program = compiled(program)
    names = program[0][1]
    types = {v: k for v, k, _ in program[0][2]}
    kinds = [types[name] for name in names]
    arrays = [np.asarray(a) for a in args]
    native = compiled_program.runner()
    entry = native or compiled_program.entry
    begin = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            if batch == 0:  # one call; its results are returned as they are (the arguments were copied going in)
                results = entry(*[_value(a, kind) for a, kind in zip(arrays, kinds)])
                outs = [_result(program, name, result, arg.shape, arg.dtype)
                        for result, arg, name in zip(results[keep:], arrays[keep:], names[keep:])]
            else:
                outs = _run_batch(program, entry, native, arrays, kinds, batch, keep)
    except CheckFailed as failure:
        index, shown = failure.args[0], failure.args[1:]
        text, error = compiled_program.messages[index]
        raise error(text.format(*[_show(v) for v in shown])) from None
    except (IndexError, ZeroDivisionError, ValueError, TypeError) as error:
        where = _origin(compiled_program, error.__traceback__)
        raise ExecutionError(f"reversible '{where[0]}'" + (f", line {where[1]}" if where[1] else "")
                             + f": {type(error).__name__}: {error}") from None
    if entry is compiled_program.entry:
        compiled_program.seconds = max(compiled_program.seconds, time.perf_counter() - begin)
    return outs


def _run_batch(program, entry, native, arrays, kinds, batch, keep):
    """The entry on every index of the `batch` leading axes: one native loop when compiled, else one call each."""
    shape = arrays[0].shape[:batch] if arrays else ()
    count = int(np.prod(shape, dtype=np.int64))
    flat = [a.reshape((count,) + a.shape[batch:]) for a in arrays]
    outs = [np.empty((count,) + a.shape[batch:], a.dtype) for a in arrays[keep:]]
    unused = [np.empty((count,) + a.shape[batch:], a.dtype) for a in arrays[:keep]] if native is not None else []
    if native is None or count < 2 or not native.batch([np.array(a, copy=True) for a in flat], unused + outs):
        names = program[0][1]
        for b in range(count):
            results = entry(*[_value(a[b], kind) for a, kind in zip(flat, kinds)])
            for out, result, name in zip(outs, results[keep:], names[keep:]):
                out[b] = _result(program, name, result, out.shape[1:], out.dtype)
    return [out.reshape(shape + out.shape[1:]) for out in outs]


def _result(program, name, result, shape, dtype):
    result = np.asarray(result, dtype=dtype)
    if result.shape != shape:
        raise ExecutionError(f"reversible '{program[0][0]}': '{name}' came back with shape {result.shape}, it went in "
                             f"with {shape} (a whole-array update broadcast it)")
    return result


def _origin(compiled_program, traceback) -> tuple:
    """(function, source line) of the statement that raised, from the innermost frame of generated code."""
    filename = f"<reversible {compiled_program.program[0][0]}>"
    where = (compiled_program.program[0][0], None)
    while traceback is not None:
        code_line = traceback.tb_lineno - 1
        if traceback.tb_frame.f_code.co_filename == filename and 0 <= code_line < len(compiled_program.origins):
            where = compiled_program.origins[code_line] or where
        traceback = traceback.tb_next
    return where


def _show(value):
    if isinstance(value, tuple):  # a shape
        return tuple(int(v) for v in value)
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value


@impl(reversible_p)
def _run_reversible(*args, program, batch):
    return execute(program, args, batch)


@impl(reversible_grad_p)
def _run_grad(*args, program, batch):
    """The cotangents of the float arguments: the adjoint program's entry returns them in the seeds' slots."""
    return execute(adjoint_of(program), args, batch, keep=len(program[0][1]))
