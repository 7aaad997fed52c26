"""`reversible` and `reversible_grad` on the JAX backend: the statement program (reversible/ir.py) traced into
`jax.numpy` / `lax` operations, so that it becomes part of the one XLA computation.

    y += e, x[i] -= e      functional updates: y = y + e, x = dynamic_update_slice(x, x[i] - e, i)
    swap, neg, rot         the same arithmetic as the NumPy interpreter (rot: a c - b s, b c + a s)
    g(a, x[i])             g's statements inlined on (a, x[i]); the results written back
    inst, push / pop, p *= x (lognumber)     in reversible_statements.py (stacks need a static capacity)
    for i in range(...)    lax.fori_loop over the trip count (static when the bounds are), the index
                           a + k s, or a + (n - 1 - k) s for a reversed loop (the realised sequence backwards)
    if if_(pre, post)      lax.cond on pre (plain Python when pre is a constant)
    while while_(pre, post) lax.while_loop (its trip count depends on the data)
    alloc / free / drop    a new variable / its check and removal / removal
A loop or branch carries the variables that exist before it and that its block writes. `reversible_grad`
runs the adjoint program of reversible/derivatives.py forwards (gradient by reverse computing, no tape):
the same statements, so the same lowering. `batch` leading axes are `jax.vmap`s of the traced program.

The NumPy interpreter's run-time checks (ancillas restored, if and while post-conditions, unchanged loop
bounds, distinct elements, a zero range() step, indices in bounds, whole-array updates of one shape) are
evaluated in XLA into a failure record (the first failed check's number and up to 6 values) threaded
through the loops; a while loop stops at a failure. When a check failed, one `jax.debug.callback` (under a
`lax.cond`: the host is only contacted then) raises the interpreter's error with the interpreter's message;
`adarray.jit(..., backend="jax")` re-raises it as that ReversibilityError / ExecutionError / ShapeError.
Not reproduced: Python's ZeroDivisionError for a scalar division by zero (XLA gives inf or nan, as NumPy
does on arrays).

Run on the host instead (`jax.pure_callback` into the NumPy implementation, whose values and errors are
exact): recursive programs (XLA cannot inline an unbounded recursion) and the rare programs whose shapes
XLA cannot fix at compile time (zeros(n) of a data-dependent n, a loop that swaps arrays of different
shapes). `lowered_natively(program)` tells which way a program goes.
"""
from __future__ import annotations

import functools
import operator

import jax
import jax.numpy as jnp
from jax import lax

from ...core.errors import ExecutionError, ReversibilityError, ShapeError
from ...primitives import elementwise as ew
from ...primitives.operations import BY_REVERSIBLE_NAME, OPERATIONS
from ...reversible.ir import (
    COMPLEX_PARTS,
    LOG_UNIT,
    UPDATE_SYMBOLS,
    array_leaves,
    base_name,
    blocks,
    called_names,
    colliding_elements,
    elements_read,
    expr_text,
    fixed_log,
    statement_targets,
)
from ...reversible.primitive import adjoint_of, reversible_grad_p, reversible_p
from .registry import fail_on_host, host_call, lowering, x64
from .reversible_statements import (
    DTYPES,
    KIND_NAMES,
    MovingStatements,
    Stack,
    Unsupported,
    read_at,
    static_int,
    truth,
    typed,
    write_at,
)

UNROLL, UNROLL_STATEMENTS = 8, 64  # loops of at most 8 known iterations and 64 inlined statements: unrolled
VALUE_SLOTS = 6  # the most values a check shows: range(a, b, s) became range(a', b', s')
# The operations of the reversible language (primitives/operations.py) by their jax.numpy function, but for the
# NumPy interpreter's own choices (rint, a truth value for not, logistic written out); then sum and complex parts.
_OVERRIDES = {ew.round_p: jnp.rint, ew.logical_not_p: lambda x: jnp.logical_not(truth(x)),
              ew.logistic_p: lambda x: 1.0 / (1.0 + jnp.exp(-x))}
_FUNCTIONS = {name: _OVERRIDES.get(row.prim) or getattr(jnp, row.numpy) for name, row in BY_REVERSIBLE_NAME.items()}
_FUNCTIONS.update({"sum": jnp.sum, **{n: getattr(jnp, n) for n in COMPLEX_PARTS}})
# On Python ints, so that loop bounds and shapes stay static: the operations that keep integers integers.
_INTEGER_CLOSED = {ew.add_p: operator.add, ew.sub_p: operator.sub, ew.mul_p: operator.mul,
                   ew.floor_divide_p: operator.floordiv, ew.rem_p: operator.mod, ew.maximum_p: max, ew.minimum_p: min}
_STATIC = {OPERATIONS[prim].reversible: function for prim, function in _INTEGER_CLOSED.items()}
_UPDATE = {"inc": jnp.add, "dec": jnp.subtract, "xor": jnp.bitwise_xor, "mul": jnp.multiply,
           "div": jnp.true_divide}
class _Frame:
    """One function's variables while its statements are traced."""

    def __init__(self, function, values):
        self.name, args, types, self.check, self.atol, self.body = function
        self.types = {v: (k, r) for v, k, r in types}
        self.env = dict(zip(args, values))
        self.args = args
        self.ranges = {}  # loop index -> (lowest, highest), for loops with static bounds

    def view(self, env, types):
        """The same frame seeing other variables (an instruction's parameters)."""
        other = object.__new__(_Frame)
        other.__dict__.update(self.__dict__)
        other.env, other.types, other.ranges = env, {**self.types, **types}, {}
        return other


class _Tracer(MovingStatements):
    """Traces the statements of one program table into JAX operations, collecting the checks' messages."""

    def __init__(self, program):
        self.functions = {f[0]: f for f in program}
        self._written: dict = {}
        self.messages: list = []  # (text with {0}.. slots, error class, value kinds)
        self.code = jnp.int32(-1)
        self.values = (jnp.float64(0.0),) * VALUE_SLOTS  # scalars: a check updates only the slots it shows

    # --- checks ------------------------------------------------------------------------------------------

    def fail(self, condition, frame, line, text, values=(), error=ReversibilityError) -> None:
        """Record a failure of this check where `condition` holds (unless an earlier check failed)."""
        if not isinstance(condition, jax.core.Tracer) and not bool(condition):
            return  # known at trace time to hold
        kinds = tuple("f" if isinstance(v, float) else "b" if isinstance(v, bool) else "i" if isinstance(v, int)
                      else jnp.asarray(v).dtype.kind for v in values)
        self.messages.append((f"reversible '{frame.name}', line {line}: {text}", error, kinds))
        now = jnp.logical_and(self.code < 0, condition)
        self.code = lax.select(now, jnp.int32(len(self.messages) - 1), self.code)
        self.values = tuple(lax.select(now, typed(v, jnp.float64).reshape(()), old) if j < len(values) else old
                            for j, (old, v) in enumerate(zip(self.values, list(values) + [None] * VALUE_SLOTS)))

    # --- expressions -------------------------------------------------------------------------------------

    def value(self, frame, expr, line):
        if isinstance(expr, str):
            if expr not in frame.env:
                raise Unsupported(f"'{expr}' is read where it is not bound")
            return frame.env[expr]
        if not isinstance(expr, tuple):
            return expr
        op, operands = expr[0], expr[1:]
        if op == "index":
            name, indices = self.element(frame, expr, line)
            return read_at(frame.env[name], indices)
        if op == "llog":
            return self.value(frame, operands[0], line) * LOG_UNIT
        if op == "complex":
            return complex(*operands)
        if op == "len":
            return self.value(frame, operands[0], line).shape[0]
        if op == "shape":
            return self.value(frame, operands[0], line).shape[operands[1]]
        args = [self.value(frame, o, line) for o in operands]
        if all(static_int(a) for a in args) and (op in _STATIC or op == "neg"
                                                  or (op in ("floordiv", "mod") and args[1] != 0)):
            return -args[0] if op == "neg" else _STATIC[op](*args)
        if op == "pow":
            if static_int(operands[1]) and 1 <= operands[1] <= 3:  # the interpreter's products (np.square)
                base = jnp.asarray(args[0])
                return [base, base * base, base * base * base][operands[1] - 1]
            return jnp.power(*args)
        if op in ("and", "or"):
            combine = jnp.logical_and if op == "and" else jnp.logical_or
            return functools.reduce(combine, [truth(a) for a in args])
        if op == "select":
            return jnp.where(truth(args[0]), args[1], args[2])
        if op == "safe_mul":  # x * y, exactly 0 where x == 0
            return jnp.where(jnp.asarray(args[0]) == 0, 0.0, jnp.multiply(args[0], args[1]))
        if op in _FUNCTIONS:
            return _FUNCTIONS[op](*args)
        raise ExecutionError(f"reversible programs: unknown operation {op!r}")

    def element(self, frame, expr, line):
        """(array name, indices made non-negative) of an element `x[i, j]`, checking the bounds as NumPy does."""
        name = expr[1]
        array = self.value(frame, name, line)
        indices = []
        for axis, index_expr in enumerate(expr[2:]):
            index, size = self.value(frame, index_expr, line), array.shape[axis]
            known = None if static_int(index) else self.interval(frame, index_expr)
            if known is not None and -size <= known[0] and known[1] < size:
                indices.append(index if known[0] >= 0 else jnp.where(index < 0, index + size, index))
                continue  # in bounds whatever the loop index: no check
            if static_int(index):
                outside = not -size <= index < size
            else:
                index = jnp.asarray(index)
                outside = jnp.logical_or(index < -size, index >= size)
            self.fail(outside, frame, line, f"IndexError: index {{0}} is out of bounds for axis {axis} with size "
                      f"{size}", [index], ExecutionError)
            indices.append(index + size if static_int(index) and index < 0
                           else index if static_int(index) else jnp.where(index < 0, index + size, index))
        return name, indices

    def interval(self, frame, expr):
        """(lowest, highest) an integer index expression can take, from the static ranges of the loop indices
        it combines (+, -, *, // by a positive constant); None if unknown."""
        if static_int(expr):
            return (expr, expr)
        if isinstance(expr, str):
            return frame.ranges.get(expr)
        if not isinstance(expr, tuple):
            return None
        op = expr[0]
        if op in ("len", "shape"):
            value = self.value(frame, expr, 0)
            return (value, value)
        if op in ("add", "sub", "mul", "floordiv") and len(expr) == 3:
            x, y = self.interval(frame, expr[1]), self.interval(frame, expr[2])
            if x is None or y is None:
                return None
            if op == "add":
                return (x[0] + y[0], x[1] + y[1])
            if op == "sub":
                return (x[0] - y[1], x[1] - y[0])
            if op == "mul":
                products = [p * q for p in x for q in y]
                return (min(products), max(products))
            if y[0] == y[1] and y[0] > 0:
                return (x[0] // y[0], x[1] // y[0])
        return None

    # --- places ------------------------------------------------------------------------------------------

    def read(self, frame, target, line):
        return self.value(frame, target, line)

    def write(self, frame, target, value, line) -> None:
        """Store `value` in a variable (cast to its type) or an element (cast to the array's dtype)."""
        if isinstance(target, str):
            old = frame.env.get(target)
            if isinstance(value, Stack):
                frame.env[target] = value
                return
            frame.env[target] = typed(value, old.dtype) if old is not None else jnp.asarray(value)
            frame.ranges.pop(target, None)
            return
        name, indices = self.element(frame, target, line)
        array = frame.env[name]
        frame.env[name] = write_at(array, indices, typed(value, array.dtype))

    def same_shapes(self, frame, s, line) -> bool:
        """A whole-array update combines arrays of the target's shape with scalars (the interpreter's check; the
        shapes are static here, so the message is complete at trace time). Whether the update can run."""
        target = jnp.shape(self.read(frame, s[2], line))
        for leaf in array_leaves(s[3], frame.types):
            shape = tuple(jnp.shape(self.value(frame, leaf, line)))
            if shape != tuple(target):
                self.fail(True, frame, line, f"`{expr_text(s[2])} {UPDATE_SYMBOLS[s[0]]} {expr_text(s[3])}`: "
                          f"`{expr_text(leaf)}` has shape {shape}, the target {tuple(target)}: a whole-array "
                          "update combines arrays of the target's shape with scalars", (), ShapeError)
                return False
        return True

    # --- statements --------------------------------------------------------------------------------------

    def run(self, name, values, ranges=None):
        """The function `name` on `values`: its arguments' values after its body. `ranges`: the known ranges of
        integer arguments that the function does not write (for the bounds checks it can skip)."""
        frame = _Frame(self.functions[name], values)
        frame.ranges.update(ranges or {})
        self.block(frame, frame.body)
        return [frame.env[a] for a in frame.args]

    def written_arguments(self, name) -> set:
        """The parameters function `name` writes (a call writes what its callee writes, not all it passes)."""
        if name not in self._written:
            function = self.functions[name]
            self._written[name] = set(function[1])  # (recursive programs run on the host: no cycle here)
            self._written[name] = set(function[1]) & self.writes(function[5])
        return self._written[name]

    def writes(self, statements) -> set:
        """The variables `statements` write."""
        out = set()
        for statement in statements:
            if statement[0] == "call":
                params = self.functions[statement[2]][1]
                written = self.written_arguments(statement[2])
                out |= {base_name(t) for p, t in zip(params, statement[3]) if p in written}
            else:
                out |= {base_name(t) for t in statement_targets(statement)}
            for block in blocks(statement):
                out |= self.writes(block)
        return out

    def block(self, frame, statements) -> None:
        for statement in statements:
            getattr(self, "_" + statement[0])(frame, statement, statement[1])

    def distinct(self, frame, targets, line, what, reads=()) -> None:
        """Elements a statement writes differ from each other and from those it reads (the interpreter's check)."""
        if not frame.check:
            return
        for a, b in colliding_elements(targets, reads):
            same = functools.reduce(jnp.logical_and, [jnp.equal(self.value(frame, i, line), self.value(frame, j, line))
                                                      for i, j in zip(a[2:], b[2:])])
            self.fail(same, frame, line, f"{what} {expr_text(b)} and {expr_text(a)} are the same "
                      "element (index {0}): one statement must not read and write one element twice",
                      [self.value(frame, a[2], line)])

    def _update(self, frame, s, line) -> None:
        kind, target, expr = s[0], s[2], s[3]
        if kind in ("inc", "dec", "xor") and isinstance(target, tuple):
            self.distinct(frame, [target], line, "the target and the value:", elements_read(expr))
        old = self.read(frame, target, line)
        if jnp.ndim(old) and not self.same_shapes(frame, s, line):
            return
        before = self.interval(frame, target) if kind in ("inc", "dec") and isinstance(target, str) else None
        change = self.interval(frame, expr) if before is not None else None
        self.write(frame, target, _UPDATE[kind](old, self.value(frame, expr, line)), line)
        if change is not None:  # an integer ancilla holding a loop index (a copy made for a call) keeps its range
            frame.ranges[target] = ((before[0] + change[0], before[1] + change[1]) if kind == "inc"
                                    else (before[0] - change[1], before[1] - change[0]))

    _inc = _dec = _xor = _mul = _div = _update

    def _swap(self, frame, s, line) -> None:
        a, b = self.read(frame, s[2], line), self.read(frame, s[3], line)
        self.write(frame, s[2], b, line)
        self.write(frame, s[3], a, line)

    def _neg(self, frame, s, line) -> None:
        self.write(frame, s[2], -self.read(frame, s[2], line), line)

    def _rot(self, frame, s, line) -> None:
        self.distinct(frame, [s[2], s[3]], line, "rv.rot:", elements_read(s[4]))
        a, b = self.read(frame, s[2], line), self.read(frame, s[3], line)
        theta = self.value(frame, s[4], line)
        c, si = jnp.cos(theta), jnp.sin(theta)
        self.write(frame, s[2], a * c - b * si, line)
        self.write(frame, s[3], b * c + a * si, line)

    def _call(self, frame, s, line) -> None:
        self.distinct(frame, list(s[3]), line, "the arguments")
        params, written = self.functions[s[2]][1], self.written_arguments(s[2])
        values, ranges = [], {}
        for param, target in zip(params, s[3]):
            value = self.read(frame, target, line)
            if param not in written:  # read only: a constant stays one, a loop index keeps its range
                known = self.interval(frame, target) if not static_int(value) else None
                if known is not None:
                    ranges[param] = known
            values.append(value if isinstance(value, Stack) or (param not in written and static_int(value))
                          else jnp.asarray(value))
        results = self.run(s[2], values, ranges)
        for param, target, result in zip(params, s[3], results):
            if param not in written:
                continue  # unchanged
            if isinstance(target, str):
                frame.env[target] = result  # a whole variable takes what the callee gives back, as in Python
                frame.ranges.pop(target, None)
            else:
                self.write(frame, target, result, line)

    def initial(self, frame, name, init, line):
        kind, rank = frame.types[name]
        if isinstance(init, tuple) and init[0] == "stack":
            return self.new_stack(frame, name, init, line)
        if isinstance(init, tuple) and init[0] == "lognumber":
            return jnp.asarray(fixed_log(init[1]), jnp.int64)
        if isinstance(init, tuple) and init[0] == "complex":
            init = complex(*init[1:])
        if isinstance(init, tuple) and init[0] == "zeros":
            shape = [self.value(frame, d, line) for d in init[1:]]
            if not all(static_int(d) for d in shape):
                raise Unsupported(f"zeros() of a shape known only at run time ('{name}', line {line})")
            return jnp.zeros(shape, jnp.float64)
        if isinstance(init, tuple) and init[0] == "zeros_like":
            if rank:
                return jnp.zeros_like(self.value(frame, init[1], line))
            init = 0
        return jnp.asarray(KIND_NAMES[kind](init), DTYPES[kind])

    def _alloc(self, frame, s, line) -> None:
        frame.env[s[2]] = self.initial(frame, s[2], s[3], line)
        frame.ranges.pop(s[2], None)
        start = 0 if isinstance(s[3], tuple) and s[3][0] == "zeros_like" else s[3]
        if frame.types[s[2]] == ("i", 0) and static_int(start):
            frame.ranges[s[2]] = (start, start)

    def _free(self, frame, s, line) -> None:
        name, init = s[2], s[3]
        if name not in frame.env:
            raise Unsupported(f"'{name}' is released where it is not bound")
        var = frame.env.pop(name)
        frame.ranges.pop(name, None)
        if not frame.check:
            return
        kind, rank = frame.types[name]
        if isinstance(var, Stack):
            self.fail(var.top != 0, frame, line, f"the stack '{name}' is not empty at rv.free: it holds {{0}} values",
                      [var.top])
            return
        if kind == "l":
            expected = fixed_log(init[1])
            self.fail(var != expected, frame, line, f"the lognumber '{name}' is not restored: rv.free expects "
                      f"{init[1]!r}, it holds {{0}}", [jnp.exp(var * LOG_UNIT)])
            return
        value = complex(*init[1:]) if isinstance(init, tuple) and init[0] == "complex" else (
            0.0 if isinstance(init, tuple) else init)
        expected = float(value) if kind == "f" else complex(value) if kind == "c" else value
        if kind in ("f", "c"):
            gap = jnp.max(jnp.abs(var - expected)) if rank else jnp.abs(var - expected)
            failed = jnp.logical_not(gap <= frame.atol)
            if rank and not var.size:
                failed = False  # an empty array holds every value
            shown = gap if rank or kind == "c" else var
        else:
            differs = var != expected
            failed = jnp.any(differs)
            shown = var.reshape(-1)[jnp.argmax(differs.reshape(-1))] if rank else var  # the first that differs
        floating = kind in ("f", "c")
        self.fail(failed, frame, line, f"the ancilla '{name}' is not restored: rv.free expects {value!r}"
                  + (f" (atol {frame.atol})" if floating else "") + ", it "
                  + ("is {0} away" if floating and (rank or kind == "c") else "holds {0}"), [shown])

    def _drop(self, frame, s, line) -> None:
        frame.env.pop(s[2], None)
        frame.ranges.pop(s[2], None)

    def _if(self, frame, s, line) -> None:
        _, _, pre, post, then, orelse = s
        flag = truth(self.value(frame, pre, line))
        if isinstance(flag, bool):
            self.block(frame, then if flag else orelse)
        else:
            names = self.carried_names(frame, then + orelse)
            branches = [self.carried_block(frame, names, block, line) for block in (then, orelse)]
            carry = lax.cond(flag, branches[0], branches[1], self.carry(frame, names))
            self.restore(frame, names, carry)
        if frame.check:
            after = truth(self.value(frame, post, line))
            self.fail(jnp.not_equal(after, flag), frame, line, f"the post-condition `{expr_text(post)}` is {{0}} "
                      f"after the branch, but the pre-condition `{expr_text(pre)}` was {{1}}: the branch cannot "
                      "be undone", [after, flag])

    def _for(self, frame, s, line) -> None:
        _, _, var, start, stop, step, reverse, body = s
        bounds = [self.value(frame, e, line) for e in (start, stop, step)]
        a, b, c = [v if static_int(v) else typed(v, jnp.int64) for v in bounds]
        self.fail(c == 0 if static_int(c) else jnp.equal(c, 0), frame, line,
                  f"range() step `{expr_text(step)}` is zero")
        if all(static_int(v) for v in (a, b, c)):
            n = len(range(a, b, c)) if c else 0
        else:
            a, b, c = (jnp.asarray(v, jnp.int64) for v in (a, b, c))
            safe = jnp.where(c == 0, 1, c)
            n = jnp.where(c > 0, jnp.maximum(0, (b - a + safe - 1) // safe),
                          jnp.maximum(0, (a - b - safe - 1) // -safe))
            n = jnp.where(c == 0, 0, n)
        if static_int(n) and 0 < n <= UNROLL and _size(body, self.functions) * n <= UNROLL_STATEMENTS:
            for k in range(n):  # short loops of known length: inline, with a constant index (no loop, no gathers)
                frame.env[var] = a + ((n - 1 - k) if reverse else k) * c
                self.block(frame, body)
            frame.env.pop(var, None)
        elif not (static_int(n) and n == 0):
            names = self.carried_names(frame, body)
            run_body = self.carried_block(frame, names, body, line, var)

            def step_body(k, carry):
                index = a + ((n - 1 - k) if reverse else k) * c
                return run_body(carry, index=typed(index, jnp.int64))

            if static_int(n) and static_int(a) and var not in self.writes(body):
                frame.ranges[var] = (min(a, a + (n - 1) * c), max(a, a + (n - 1) * c))
            carry = lax.fori_loop(0, n, step_body, self.carry(frame, names))
            frame.ranges.pop(var, None)
            self.restore(frame, names, carry)
        if frame.check and not all(static_int(v) for v in bounds):
            now = [self.value(frame, e, line) for e in (start, stop, step)]
            changed = functools.reduce(jnp.logical_or, [jnp.not_equal(x, y) for x, y in zip(now, (a, b, c))])
            self.fail(changed, frame, line, f"a bound of range({expr_text(start)}, {expr_text(stop)}, "
                      f"{expr_text(step)}) changed during the loop: range({{0}}, {{1}}, {{2}}) became "
                      "range({3}, {4}, {5})", [a, b, c] + now)

    def _while(self, frame, s, line) -> None:
        _, _, pre, post, body = s
        if frame.check:
            self.fail(truth(self.value(frame, post, line)), frame, line, f"the while loop's post-condition "
                      f"`{expr_text(post)}` already holds on entry (it must be false before the first "
                      "iteration and true after every one)")
        names = self.carried_names(frame, body)

        def checked_body(statements_frame, statements):
            self.block(statements_frame, statements)
            if frame.check:
                self.fail(jnp.logical_not(truth(self.value(statements_frame, post, line))), frame, line,
                          f"the while loop's post-condition `{expr_text(post)}` is false after an iteration "
                          "(it must hold after every iteration)")

        run_body = self.carried_block(frame, names, body, line, runner=checked_body)

        def keep_going(carry):
            code, values = self.code, self.values
            outer = self.enter(frame, names, carry)
            going = jnp.logical_and(truth(self.value(frame, pre, line)), self.code < 0)
            frame.env, self.code, self.values = outer, code, values
            return going

        carry = lax.while_loop(keep_going, run_body, self.carry(frame, names))
        self.restore(frame, names, carry)

    # --- carries of loops and branches ------------------------------------------------------------------

    def carried_names(self, frame, statements) -> list:
        return sorted(n for n in self.writes(statements) if n in frame.env)

    def carry(self, frame, names):
        return ([frame.env[n] for n in names], self.code, self.values)

    def enter(self, frame, names, carry):
        """Bind the carry's values (inside a loop or branch trace); returns the outer bindings to restore."""
        outer = frame.env
        frame.env = dict(outer)
        frame.env.update(zip(names, carry[0]))
        self.code, self.values = carry[1], carry[2]
        return outer

    def restore(self, frame, names, carry) -> None:
        frame.env.update(zip(names, carry[0]))
        for name in names:
            frame.ranges.pop(name, None)
        self.code, self.values = carry[1], carry[2]

    def carried_block(self, frame, names, statements, line, var=None, runner=None):
        """A function carry -> carry that runs `statements` (with loop variable `var` = index)."""
        runner = runner or self.block

        def run_block(carry, index=None):
            outer_code, outer_values, outer_ranges = self.code, self.values, dict(frame.ranges)
            for name in names:  # what the block writes varies from one iteration (or branch) to the next
                frame.ranges.pop(name, None)
            outer = self.enter(frame, names, carry)
            if var is not None:
                frame.env[var] = index
            runner(frame, statements)
            out = []
            for name, before in zip(names, carry[0]):
                after = frame.env.get(name)
                if isinstance(before, Stack):
                    if not isinstance(after, Stack) or after.buffer.shape != before.buffer.shape:
                        raise Unsupported(f"the stack '{name}' is released or reshaped inside a block (line {line})")
                    out.append(Stack(typed(after.buffer, before.buffer.dtype), typed(after.top, jnp.int64),
                                      before.capacity))
                    continue
                if after is None or jnp.shape(after) != jnp.shape(before):
                    raise Unsupported(f"'{name}' changes its shape or is released inside a block (line {line})")
                out.append(typed(after, before.dtype))
            result = (out, self.code, self.values)
            frame.env, self.code, self.values, frame.ranges = outer, outer_code, outer_values, outer_ranges
            return result

        return run_block


def _size(statements, functions, depth=0) -> int:
    """Statements a block runs when inlined, loops counted once and calls by their callee's size."""
    total = 0
    for s in statements:
        total += 1
        if s[0] == "call" and depth < 8:
            total += _size(functions[s[2]][5], functions, depth + 1)
        for block in blocks(s):
            total += _size(block, functions, depth)
    return total


# --- the primitives --------------------------------------------------------------------------------------

def recursive(program) -> bool:
    """Whether a function of the table calls itself, directly or not (XLA cannot inline that)."""
    table = {f[0]: called_names(f[5]) for f in program}

    def reaches(start):
        seen, todo = set(), list(table[start])
        while todo:
            name = todo.pop()
            if name == start:
                return True
            if name not in seen:
                seen.add(name)
                todo += table.get(name, [])
        return False

    return any(reaches(name) for name in table)


def _trace(program, args):
    """(outputs, failure code, failure values) of the entry function on one instance (no batch axes)."""
    tracer = _Tracer(program)
    outs = tracer.run(program[0][0], [jnp.asarray(a) for a in args])
    return outs, tracer.code, tracer.values, tracer.messages


def lowered_natively(program, args) -> bool:
    """Whether `program` on arguments like `args` (one instance) traces into XLA (else it runs on the host)."""
    if recursive(program):
        return False

    try:
        with x64():
            jax.eval_shape(lambda *xs: _trace(program, xs)[:3], *args)
    except Unsupported:
        return False
    return True


def _run(program, args, batch, keep, out_avals, primitive, params):
    if recursive(program):
        return _on_host(primitive, out_avals, args, params)
    messages = []

    def one(*xs):
        outs, code, values, found = _trace(program, xs)
        messages[:] = found
        return [typed(o, jnp.asarray(x).dtype) for o, x in zip(outs[keep:], xs[keep:])], code, values

    fn = one
    for _ in range(batch):
        fn = jax.vmap(fn)
    try:
        outs, code, values = fn(*args)
    except Unsupported:
        return _on_host(primitive, out_avals, args, params)
    for out, x in zip(outs, args[keep:]):
        if out.shape != jnp.shape(x):
            raise ExecutionError(f"reversible '{program[0][0]}': an argument came back with shape {out.shape}, it "
                                 f"went in with {jnp.shape(x)}")
    if messages:
        _report(messages, code, values)
    return [typed(o, a.dtype) for o, a in zip(outs, out_avals)]


def _on_host(primitive, out_avals, args, params):

    return host_call(primitive, out_avals, args, params)


def _report(messages, code, values) -> None:
    """Raise the first failed check's error on the host, only if one failed."""
    flat = code.reshape(-1)
    first = jnp.argmax(flat >= 0)

    def describe(k, shown):
        text, error, kinds = messages[int(k)]
        return error, text.format(*[KIND_NAMES[kind if kind in "fb" else "i"](v)
                                    for kind, v in zip(kinds, shown.tolist())])

    shown = jnp.stack(values, axis=-1).reshape(-1, VALUE_SLOTS)[first]
    fail_on_host(jnp.any(flat >= 0), describe, flat[first], shown)


class _Aval:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


@lowering(reversible_p, checked=True)
def _reversible(*args, program, batch):
    avals = [_Aval(jnp.shape(a), jnp.asarray(a).dtype) for a in args]
    return _run(program, args, batch, 0, avals, reversible_p, {"program": program, "batch": batch})


@lowering(reversible_grad_p, checked=True)
def _reversible_grad(*args, program, batch):
    keep = len(program[0][1])
    avals = [_Aval(jnp.shape(a), jnp.asarray(a).dtype) for a in args[keep:]]
    return _run(adjoint_of(program), args, batch, keep, avals, reversible_grad_p, {"program": program, "batch": batch})
