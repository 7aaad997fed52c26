"""The reversible language: a checked subset of Python, read from a function's source when it is decorated.

    statements   y += e, y -= e (e does not read y; scalars, arrays and elements x[i] alike), y ^= e (integers,
                 booleans), y *= c, y /= c (c a non-zero constant; any factor for a lognumber), rv.swap(a, b),
                 rv.rot(a, b, theta), rv.neg(a), rv.push(s, x), rv.pop(s, x), g(a, b) and rv.invert(g)(a, b) for
                 a reversible function or instruction g, t = rv.alloc(constant) ... rv.free(t, value),
                 with rv.compute(): ... rv.uncompute(), if c: / if rv.if_(pre, post):, for i in range(a, b, s),
                 while rv.while_(pre, post):, pass
    expressions  numbers (complex too), variables, x[i, j], + - * / ** % //, comparisons, and/or/not,
                 `a if c else b`, len(x), x.shape[k], sum(e), the math functions of MATH_FUNCTIONS (from math, numpy
                 or adarray.numpy), module-level numeric constants

`parse_function` returns the function's statement IR (see ir.py) with compute/uncompute expanded and
rv.free(t, e) of a non-constant e written as `t -= e; rv.free(t, 0)`. Everything outside the language, and
every statically visible way to lose information, raises ReversibilityError naming the function and line.
"""
from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np

from ..core.errors import ReversibilityError
from ..kernels.language import COMPARISON_SYMBOLS, CONSTANTS, OPERATOR_SYMBOLS, module_name, resolve_free
from ..primitives.operations import BY_REVERSIBLE_NAME, BY_SYMBOL
from .ir import (
    COMPLEX_PARTS,
    base_name,
    elements_read,
    expr_text,
    invert_block,
    is_element,
    literal,
    names_read,
    names_rebound,
    names_written,
    shapes_read,
    values_read,
)
from .markers import marker_name
from .symbols import check_symbols

# Python function name -> IR operator (and how many arguments it takes): the operations of the reversible
# language (primitives/operations.py) by the names a kernel calls them (math's, NumPy's), and a few more.
MATH_FUNCTIONS = {
    **{name: (row.reversible, row.arity) for row in BY_REVERSIBLE_NAME.values() for name in row.kernel_names},
    "fabs": ("abs", 1), "rint": ("round", 1), "square": ("square", 1), "sum": ("sum", 1),
    **{n: (n, 1) for n in COMPLEX_PARTS}, "conjugate": ("conj", 1),
}
_MODULES = ("math", "numpy", "adarray.numpy", "builtins")
# An operator's IR operation, by its symbol in the operations table.
_BINARY = {node: BY_SYMBOL[symbol].reversible for node, symbol in OPERATOR_SYMBOLS.items()}
_COMPARE = {node: BY_SYMBOL[symbol].reversible for node, symbol in COMPARISON_SYMBOLS.items()}
_UPDATES = {ast.Add: "inc", ast.Sub: "dec", ast.BitXor: "xor", ast.Mult: "mul", ast.Div: "div"}
STATEMENT_HELP = ("a statement is y += e, y -= e, y ^= e, y *= c, y /= c, rv.swap/rot/neg/push/pop, a call of a "
                  "@rv.reversible function or rv.instruction, t = rv.alloc(...), rv.free(t, v), with rv.compute(), "
                  "rv.uncompute(), if, for i in range(...) or while rv.while_(pre, post)")


class Source:
    """A reversible function's parsed source, for messages that name the function and the line."""

    def __init__(self, fn):
        self.name = getattr(fn, "__name__", "<reversible>")
        try:
            lines, first = inspect.getsourcelines(fn)
            self.filename = inspect.getsourcefile(fn) or "<unknown>"
        except (OSError, TypeError):
            raise ReversibilityError(
                f"reversible '{self.name}': its source code is not available (reversible functions are parsed from "
                "source; define them in a file, not in an interactive session or with exec)") from None
        tree = ast.parse(textwrap.dedent("".join(lines)))
        self.offset = first - 1
        self.function = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))

    def line(self, node) -> int:
        return self.offset + getattr(node, "lineno", 1)

    def error(self, node, message: str) -> ReversibilityError:
        line = node if isinstance(node, int) else self.line(node)
        return ReversibilityError(f"reversible '{self.name}', line {line}: {message} (at {self.filename}:{line})")


def _is_reversible(value) -> bool:
    return getattr(value, "_is_adarray_reversible", False)


def _math_name(value) -> str | None:
    """The language name of a math function object (math.exp, np.exp, anp.exp, builtin abs, np.sum ...)."""
    name = getattr(value, "__name__", None)
    module = getattr(value, "__module__", None) or ""
    if isinstance(value, np.ufunc):
        module = "numpy"
    if name in MATH_FUNCTIONS and (module in ("math", "builtins") or module.startswith(("numpy", "adarray.numpy"))):
        return name
    return None


class Parser:
    """Turns a function's AST into statement IR, checking the language as it goes."""

    def __init__(self, fn, source: Source):
        self.fn, self.source = fn, source
        function = source.function
        self.args = [a.arg for a in function.args.posonlyargs + function.args.args]
        self.locals = set(self.args)
        self.loop_variables: list[str] = []
        self.allocations: dict = {}  # ancilla -> its initial value, as allocated
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.locals.add(node.targets[0].id)
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                self.locals.add(node.target.id)

    def fail(self, node, message):
        raise self.source.error(node, message)

    # --- the function ------------------------------------------------------------------------------------

    def parse(self) -> tuple:
        function = self.source.function
        args = function.args
        if isinstance(function, ast.AsyncFunctionDef):
            self.fail(function, "an async function cannot be reversible")
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
            self.fail(function, "reversible functions take positional arguments only (no defaults, *args, **kwargs)")
        if len(set(self.args)) != len(self.args):
            self.fail(function, "an argument name is repeated")
        body = function.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
                body[0].value.value, str):
            body = body[1:]
        if body and isinstance(body[-1], ast.Return) and body[-1].value is None:
            body = body[:-1]  # a bare return at the end changes nothing
        statements = self.block(body, function)
        check_symbols(statements, self.args, self.source)
        return statements

    def block(self, nodes, owner) -> tuple:
        out, pending = [], []  # pending: (line, statements of a rv.compute() block not yet uncomputed)
        for node in nodes:
            if self._is_marker_call(node, "uncompute"):
                if node.value.args or node.value.keywords:
                    self.fail(node, "rv.uncompute() takes no arguments")
                if not pending:
                    self.fail(node, "rv.uncompute() without a preceding `with rv.compute():` block in the same "
                                    "block of statements")
                _, computed = pending.pop()
                out += _uncompute(computed)
            elif isinstance(node, ast.With):
                computed = self.compute_block(node)
                out += computed
                pending.append((self.source.line(node), computed))
            else:
                out += self.statement(node)
        if pending:
            line = pending[-1][0]
            self.fail(line, "`with rv.compute():` has no matching rv.uncompute() in the same block (compute and "
                            "uncompute come in pairs)")
        return tuple(out)

    def _is_marker_call(self, node, name) -> bool:
        return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and self.marker(node.value.func) == name)

    def compute_block(self, node: ast.With) -> tuple:
        if len(node.items) != 1 or node.items[0].optional_vars is not None:
            self.fail(node, "only `with rv.compute():` is supported in reversible functions")
        call = node.items[0].context_expr
        if not (isinstance(call, ast.Call) and self.marker(call.func) == "compute") or call.args or call.keywords:
            self.fail(node, "only `with rv.compute():` is supported in reversible functions")
        return self.block(node.body, node)

    def marker(self, func) -> str | None:
        """'swap' for rv.swap / swap imported from adarray.reversible, else None."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id not in self.locals:
            found, value = resolve_free(self.fn, func.value.id)
            if found and inspect.ismodule(value):
                attribute = getattr(value, func.attr, None)
                return marker_name(attribute) or ("invert" if getattr(attribute, "_is_rv_invert", False) else None)
            return None
        if isinstance(func, ast.Name) and func.id not in self.locals:
            found, value = resolve_free(self.fn, func.id)
            if found:
                return marker_name(value) or ("invert" if getattr(value, "_is_rv_invert", False) else None)
        return None

    # --- statements --------------------------------------------------------------------------------------

    def statement(self, node) -> list:
        line = self.source.line(node)
        if isinstance(node, ast.AugAssign):
            return self.update(node, line)
        if isinstance(node, ast.Assign):
            return [self.allocation(node, line)]
        if isinstance(node, ast.Expr):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return []
            if isinstance(node.value, ast.Call):
                return self.call_statement(node.value, line)
            self.fail(node, f"an expression statement does nothing; {STATEMENT_HELP}")
        if isinstance(node, ast.If):
            return [self.branch(node, line)]
        if isinstance(node, ast.For):
            return [self.for_loop(node, line)]
        if isinstance(node, ast.While):
            return [self.while_loop(node, line)]
        if isinstance(node, ast.Pass):
            return []
        if isinstance(node, ast.Return):
            if node.value is not None:
                self.fail(node, "return of a value: a reversible function returns all its arguments, updated (write "
                                "the result into an argument, e.g. `out += value`)")
            self.fail(node, "an early return cannot be reversed (only a bare `return` at the end is allowed)")
        if isinstance(node, ast.AnnAssign):
            self.fail(node, "plain assignment is not reversible (it forgets the old value); use += on an ancilla")
        kind = type(node).__name__
        self.fail(node, f"{kind} is not supported in reversible functions; {STATEMENT_HELP}")

    def update(self, node: ast.AugAssign, line) -> list:
        kind = _UPDATES.get(type(node.op))
        symbol = ast.unparse(node)
        if kind is None:
            self.fail(node, f"`{symbol}`: the operator is not reversible; use +=, -=, ^=, or *= / /= by a "
                            "non-zero constant")
        target = self.target(node.target)
        if kind in ("mul", "div"):
            value = self.constant(node.value)
            if value is not None and not isinstance(value, bool) and value != 0:
                return [(kind, line, target, literal(value))]
            if value is not None:  # zero, or a truth value: never a reversible factor
                self.fail(node, f"`{symbol}`: *= and /= are reversible only by a non-zero constant (or, on a "
                                "lognumber, by a positive factor); to multiply by a variable accumulate into an "
                                "ancilla (t += y * x)")
            # a variable factor: reversible on a lognumber only, which typing checks (the target's kind)
        value = self.expression(node.value)
        self.check_not_reading_target(node, symbol, target, value)
        self.check_indices(node, [target], value)
        return [(kind, line, target, value)]

    def check_not_reading_target(self, node, symbol, target, value) -> None:
        if isinstance(target, str) and target in names_read(value):
            self.fail(node, f"`{symbol}` reads its target '{target}' on the right, so it cannot be undone (the old "
                            f"value of '{target}' is lost); accumulate into another variable")
        if not isinstance(target, str) and target in _references(value):
            self.fail(node, f"`{symbol}` reads its target {ast.unparse(node.target)} on the right, so it cannot be "
                            "undone; accumulate into another variable")

    def allocation(self, node: ast.Assign, line):
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            self.fail(node, "plain assignment is not reversible (it forgets the old value)")
        name = node.targets[0].id
        call = node.value
        if not (isinstance(call, ast.Call) and self.marker(call.func) == "alloc"):
            self.fail(node, f"plain assignment `{ast.unparse(node)}` is not reversible (it forgets the old value of "
                            f"'{name}'); allocate an ancilla with `{name} = rv.alloc(0.0)` and accumulate into it "
                            f"with +=")
        if len(call.args) != 1 or call.keywords:
            self.fail(node, "rv.alloc takes one argument: the ancilla's initial value (a constant)")
        init = self.initial_value(call.args[0], node)
        self.allocations[name] = init
        return ("alloc", line, name, init)

    def initial_value(self, node, owner):
        constant = self.constant(node)
        if constant is not None:
            return literal(constant)
        if isinstance(node, ast.Call) and self.marker(node.func) in ("stack", "lognumber"):
            return self.special_value(node, owner)
        if isinstance(node, ast.Call) and not node.keywords:
            function = self.function_object(node.func)
            name = getattr(function, "__name__", None)
            if name == "zeros" and len(node.args) == 1:
                shape = node.args[0]
                dims = shape.elts if isinstance(shape, ast.Tuple) else [shape]
                return ("zeros",) + tuple(self.expression(d) for d in dims)
            if name == "zeros_like" and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
                return ("zeros_like", self.variable(node.args[0]))
        self.fail(owner, f"`{ast.unparse(owner)}`: rv.alloc takes a constant (a number, anp.zeros(shape) or "
                         "anp.zeros_like(x)); allocating from another variable would silently copy it (and lose its "
                         "gradient): allocate a zero and accumulate, `t = rv.alloc(0.0); t += y`")

    def special_value(self, call, owner):
        """rv.stack(capacity=None) -> ("stack", capacity); rv.lognumber(c) -> ("lognumber", c)."""
        marker = self.marker(call.func)
        if marker == "stack":
            if call.keywords or len(call.args) > 1:
                self.fail(owner, "rv.stack takes at most one argument: its capacity (without one, it grows)")
            capacity = self.expression(call.args[0]) if call.args else None
            if isinstance(capacity, (bool, float)) or (isinstance(capacity, int) and capacity < 1):
                self.fail(owner, f"rv.stack({capacity!r}): the capacity is a positive integer")
            return ("stack", capacity)
        value = self.constant(call.args[0]) if len(call.args) == 1 and not call.keywords else None
        if value is None or isinstance(value, (bool, complex)) or not 0 < value < float("inf"):
            self.fail(owner, f"`{ast.unparse(call)}`: a lognumber holds a positive finite constant, such as "
                             "rv.lognumber(1.0)")
        return ("lognumber", float(value))

    def call_statement(self, call: ast.Call, line) -> list:
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            self.fail(call, "keyword and starred arguments are not supported in reversible functions")
        marker = self.marker(call.func)
        text = ast.unparse(call)
        if marker == "swap":
            a, b = self.targets(call, 2)
            if a == b:
                self.fail(call, f"`{text}` swaps a variable with itself")
            return [("swap", line, a, b)]
        if marker == "neg":
            (a,) = self.targets(call, 1)
            return [("neg", line, a)]
        if marker == "rot":
            if len(call.args) != 3:
                self.fail(call, "rv.rot takes (a, b, theta)")
            a, b = self.targets(ast.Call(call.func, call.args[:2], []), 2, call)
            theta = self.expression(call.args[2])
            if a == b:
                self.fail(call, f"`{text}` rotates a variable with itself")
            self.check_angle(call, text, (a, b), theta)
            return [("rot", line, a, b, theta)]
        if marker in ("push", "pop"):
            stack, value = self.targets(call, 2)
            if not isinstance(stack, str):
                self.fail(call, f"`{text}`: the stack is a variable made by rv.alloc(rv.stack())")
            return [(marker, line, stack, value, True)]
        if marker == "free":
            return self.free(call, line)
        if marker in ("stack", "lognumber"):
            self.fail(call, f"rv.{marker}(...) is an initial value: write `t = rv.alloc(rv.{marker}(...))`")
        if marker in ("alloc", "compute", "if_", "while_"):
            self.fail(call, f"rv.{marker} cannot be used as a statement here; "
                            + {"alloc": "write `t = rv.alloc(0.0)`", "compute": "write `with rv.compute():`",
                               "if_": "write `if rv.if_(pre, post):`", "while_": "write `while rv.while_(pre, post):`"}
                            [marker])
        callee = self.callee(call.func, call)
        # An argument that is not a variable or element (a constant, a loop variable, an expression) is passed in an
        # ancilla holding its value; rv.free afterwards checks that the callee left it unchanged.
        before, after, arguments = [], [], []
        for k, arg in enumerate(call.args):
            constant = self.constant(arg)
            variable = isinstance(arg, ast.Name) and arg.id not in self.loop_variables
            field = isinstance(arg, ast.Attribute) and self.is_path(arg)
            element = isinstance(arg, ast.Subscript) and not (isinstance(arg.value, ast.Attribute)
                                                               and arg.value.attr == "shape")  # x.shape[k]: a value
            passed = variable or field or element
            if constant is None and passed:
                arguments.append(arg)
                continue
            name = f"%{line}.{k}"
            self.locals.add(name)
            arguments.append(ast.Name(name))
            if constant is not None:
                before.append(("alloc", line, name, literal(constant)))
                after[:0] = [("free", line, name, literal(constant))]
            else:
                value = self.expression(arg)
                before += [("alloc", line, name, ("zeros_like", value)), ("inc", line, name, value)]
                after[:0] = [("dec", line, name, value), ("free", line, name, ("zeros_like", value))]
        targets = self.targets(ast.Call(call.func, arguments, []), len(arguments), call)
        return before + [("call", line, callee, targets)] + after

    def check_angle(self, call, text, rotated, theta) -> None:
        """The angle of rv.rot must not change with the rotation: it may read other elements of a rotated array
        (`rv.rot(p[0], p[1], p[2])`, checked at run time to be other elements, as `x[i] += x[j]`), but not a
        rotated variable, nor a whole rotated array, nor a rotated element."""
        elements = {t[1]: t for t in rotated if is_element(t)}
        wholes = {t for t in rotated if isinstance(t, str)}
        clash = sorted((wholes & names_read(theta)) | (set(elements) & _whole_reads(theta)))
        if clash:
            self.fail(call, f"`{text}`: the angle reads '{clash[0]}', which the rotation updates")
        for reference in _references(theta):
            if reference in rotated:
                self.fail(call, f"`{text}`: the angle reads {expr_text(reference)}, which the rotation updates")
        self.check_indices(call, list(rotated), theta)

    def callee(self, func, call) -> str:
        """The name of the reversible function a call statement calls ('~g' for rv.invert(g))."""
        if isinstance(func, ast.Call) and self.marker(func.func) == "invert":
            if len(func.args) != 1 or func.keywords:
                self.fail(call, "rv.invert takes one reversible function")
            return "~" + self.callee(func.args[0], call)
        text = ast.unparse(call)
        if not isinstance(func, ast.Name):
            self.fail(call, f"`{text}`: call statements call a @rv.reversible function by name (or rv.invert(g))")
        if func.id in self.locals:
            self.fail(call, f"`{text}`: '{func.id}' is a variable, not a reversible function")
        if func.id == self.source.name:
            return func.id  # recursion: the name is bound to this function once decorated
        found, value = resolve_free(self.fn, func.id)
        if found and not _is_reversible(value):
            self.fail(call, f"`{text}` calls '{func.id}', which is not a reversible function: a plain call cannot be "
                            f"undone; {STATEMENT_HELP}")
        return func.id

    def free(self, call, line) -> list:
        if len(call.args) != 2:
            self.fail(call, "rv.free takes (t, value): the ancilla and the value it must hold")
        if not isinstance(call.args[0], ast.Name):
            self.fail(call, "rv.free releases an ancilla (a variable made by rv.alloc)")
        name = self.variable(call.args[0])
        # An array ancilla is released in the shape it was allocated in (the inverse allocates it again).
        allocated = self.allocations.get(name)
        special = isinstance(allocated, tuple) and allocated[0] in ("stack", "lognumber")
        value = call.args[1]
        if isinstance(value, ast.Call) and self.marker(value.func) in ("stack", "lognumber"):
            given = self.special_value(value, call)
            if not special or given[0] != allocated[0]:
                self.fail(call, f"`{ast.unparse(call)}`: '{name}' was not allocated as a {given[0]}")
            if given[0] == "stack":
                return [("free", line, name, allocated)]  # empty, whatever capacity it is given here
            value = ast.Constant(given[1])
        if special and allocated[0] == "stack":
            self.fail(call, f"`{ast.unparse(call)}`: a stack is released empty: rv.free({name}, rv.stack())")
        zero = (allocated if isinstance(allocated, tuple) and allocated[0] in ("zeros", "zeros_like")
                else False if isinstance(allocated, bool) else 0)
        constant = self.constant(value)
        if special:  # a lognumber: rv.free(p, c) checks its value; rv.free(p, e) divides it by e and checks 1
            if constant is not None:
                if isinstance(constant, (bool, complex)) or not 0 < constant < float("inf"):
                    self.fail(call, f"`{ast.unparse(call)}`: a lognumber holds a positive finite value")
                return [("free", line, name, ("lognumber", float(constant)))]
            expression = self.expression(value)
            if name in names_read(expression):
                self.fail(call, f"`{ast.unparse(call)}`: the value reads the ancilla itself")
            return [("div", line, name, expression), ("free", line, name, ("lognumber", 1.0))]
        if constant is not None and not isinstance(zero, tuple):
            return [("free", line, name, literal(constant))]
        if constant is not None and constant == 0:
            return [("free", line, name, zero)]
        expression = self.expression(value)
        if name in names_read(expression):
            self.fail(call, f"`{ast.unparse(call)}`: the value reads the ancilla itself")
        undo = "xor" if isinstance(allocated, bool) else "dec"  # a truth value is cleared by ^=
        return [(undo, line, name, expression), ("free", line, name, zero)]  # free(t, e) is t -= e; free(t, 0)

    def branch(self, node: ast.If, line):
        then = self.block(node.body, node)
        orelse = self.block(node.orelse, node)
        test = node.test
        if isinstance(test, ast.Call) and self.marker(test.func) == "if_":
            if len(test.args) != 2 or test.keywords:
                self.fail(node, "rv.if_ takes (pre, post): the condition before and after the branch")
            return ("if", line, self.expression(test.args[0]), self.expression(test.args[1]), then, orelse)
        condition = self.expression(test)
        written = sorted(_changed(condition, then + orelse))
        if written:
            self.fail(node, f"the branch writes '{written[0]}', which its condition `{ast.unparse(test)}` reads, so "
                            "the condition cannot choose the branch when running backwards; give the condition "
                            "after the branch: `if rv.if_(pre, post):`")
        return ("if", line, condition, condition, then, orelse)

    def for_loop(self, node: ast.For, line):
        if node.orelse:
            self.fail(node, "for/else is not supported in reversible functions")
        if not isinstance(node.target, ast.Name):
            self.fail(node, "a for loop assigns one name: for i in range(...)")
        call, reverse = node.iter, False
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "reversed" \
                and len(call.args) == 1 and call.func.id not in self.locals:
            call, reverse = call.args[0], True
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range"
                and call.func.id not in self.locals) or call.keywords or not 1 <= len(call.args) <= 3:
            self.fail(node, "a for loop iterates over range(stop), range(start, stop) or range(start, stop, step)")
        bounds = [self.expression(a) for a in call.args]
        start, stop, step = ([0] + bounds + [1])[:3] if len(bounds) == 1 else (bounds + [1])[:3]
        if isinstance(step, (int, float)) and step == 0:
            self.fail(node, "range() step must not be zero")
        self.loop_variables.append(node.target.id)
        body = self.block(node.body, node)
        self.loop_variables.pop()
        var = node.target.id
        written = names_written(body)
        if var in written:
            self.fail(node, f"the loop body writes the loop variable '{var}'")
        changed = sorted(set().union(*(_changed(b, body) for b in (start, stop, step))))
        if changed:
            self.fail(node, f"the loop body writes '{changed[0]}', which the loop bounds `{ast.unparse(call)}` read: "
                            "the inverse loop would run over other indices")
        return ("for", line, var, start, stop, step, reverse, body)

    def while_loop(self, node: ast.While, line):
        if node.orelse:
            self.fail(node, "while/else is not supported in reversible functions")
        test = node.test
        if not (isinstance(test, ast.Call) and self.marker(test.func) == "while_"):
            self.fail(node, "a reversible while loop needs a post-condition: `while rv.while_(pre, post):` where pre "
                            "is the loop condition and post is false on entry and true after every iteration (e.g. "
                            "a counter that is not zero)")
        if len(test.args) != 2 or test.keywords:
            self.fail(node, "rv.while_ takes (pre, post)")
        return ("while", line, self.expression(test.args[0]), self.expression(test.args[1]),
                self.block(node.body, node))

    # --- targets and expressions -------------------------------------------------------------------------

    def targets(self, call, count, owner=None):
        owner = owner or call
        if len(call.args) != count:
            self.fail(owner, f"`{ast.unparse(owner)}` takes {count} argument{'s' if count != 1 else ''}")
        out = [self.target(a, owner) for a in call.args]
        for k, later in enumerate(out):
            for earlier in out[:k]:
                same_base = (later if isinstance(later, str) else later[1]) == (
                    earlier if isinstance(earlier, str) else earlier[1])
                if same_base and (isinstance(later, str) or isinstance(earlier, str) or later == earlier):
                    self.fail(owner, f"`{ast.unparse(owner)}` passes '{later if isinstance(later, str) else later[1]}' "
                                     "twice: the arguments of one statement must be distinct (elements x[i], x[j] of "
                                     "one array are allowed)")
        self.check_indices(owner, out)
        return tuple(out)

    def check_indices(self, node, targets, value=None) -> None:
        """An index must not read what its statement writes: `x[x[i]] += 1`, `y[i] += w[y[0]]` and
        `g(k, x[k])` would be undone at another element (the index changes with the write); nor may an element
        update read its whole array (`x[i] += sum(x)` changes that sum)."""
        written = {base_name(t) for t in targets}
        places = [i for t in targets if is_element(t) for i in t[2:]] + _index_expressions(value)
        for index in places:
            clash = sorted(names_read(index) & written)
            if clash:
                self.fail(node, f"`{ast.unparse(node)}`: the index `{expr_text(index)}` reads '{clash[0]}', which "
                                "the statement updates, so the inverse would index another element; copy the index "
                                f"into an ancilla first (j = rv.alloc(0); j += {expr_text(index)})")
        if value is not None:
            whole = _whole_reads(value)
            for target in targets:
                if is_element(target) and target[1] in whole:
                    self.fail(node, f"`{ast.unparse(node)}` updates an element of '{target[1]}' from the whole array "
                                    f"'{target[1]}', which that update changes, so it cannot be undone; accumulate "
                                    "into an ancilla first")

    def target(self, node, owner=None):
        owner = owner or node
        if isinstance(node, ast.Name):
            return self.variable(node)
        if isinstance(node, (ast.Attribute, ast.Subscript)) and self.is_path(node):
            return self.path(node)
        if isinstance(node, ast.Subscript):
            element = self.expression(node)
            if isinstance(element, tuple) and element[0] == "index":
                return element
        self.fail(owner, f"`{ast.unparse(node)}` cannot be updated: targets are variables and elements x[i] "
                         "(constants and expressions cannot be written back)")

    def path(self, node) -> str | None:
        """The name of a field of a structured argument: 'layer.W1' for layer.W1, "p['w']" for p["w"] (None when
        `node` is no such path). Typing checks that the argument has that field (structures.py)."""
        if isinstance(node, ast.Name):
            return self.variable(node)
        if isinstance(node, ast.Attribute) and node.attr != "shape":
            base = self.path(node.value)
            return None if base is None else f"{base}.{node.attr}"
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(
                node.slice.value, str):
            base = self.path(node.value)
            return None if base is None else f"{base}[{node.slice.value!r}]"
        return None

    def is_path(self, node) -> bool:
        """Is `node` a field path (layer.W1, p["w"]) of a local variable?"""
        root = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            if isinstance(root, ast.Subscript) and not (isinstance(root.slice, ast.Constant) and isinstance(
                    root.slice.value, str)):
                return False
            if isinstance(root, ast.Attribute) and root.attr == "shape":
                return False
            root = root.value
        return isinstance(root, ast.Name) and root.id in self.locals and root is not node

    def variable(self, node: ast.Name) -> str:
        if node.id not in self.locals:
            found, value = resolve_free(self.fn, node.id)
            if found:
                self.fail(node, f"'{node.id}' is a {type(value).__name__} from outside the function: reversible "
                                "functions read their arguments, ancillas and numeric constants (pass arrays as "
                                "arguments)")
            self.fail(node, f"'{node.id}' is not an argument or ancilla of this function (reversible functions "
                            "update only their arguments and ancillas)")
        return node.id

    def constant(self, node):
        """The number `node` denotes if it is a constant (literal, -literal, module constant), else None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float, complex)):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = self.constant(node.operand)
            return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and isinstance(
                node.right, ast.Constant) and isinstance(node.right.value, complex):
            real = self.constant(node.left)  # a complex literal written a + bj
            if isinstance(real, (int, float)) and not isinstance(real, bool):
                return real + node.right.value if isinstance(node.op, ast.Add) else real - node.right.value
        if isinstance(node, ast.Name) and node.id not in self.locals:
            found, value = resolve_free(self.fn, node.id)
            if found and isinstance(value, (bool, int, float, complex, np.number, np.bool_)) and not callable(value):
                return value.item() if isinstance(value, np.generic) else value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id not in self.locals:
            found, value = resolve_free(self.fn, node.value.id)
            if found and module_name(value) and node.attr in CONSTANTS:
                return CONSTANTS[node.attr]
        return None

    def function_object(self, func):
        if isinstance(func, ast.Name) and func.id not in self.locals:
            return resolve_free(self.fn, func.id)[1]
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id not in self.locals:
            found, module = resolve_free(self.fn, func.value.id)
            if found and getattr(module, "__name__", None) in _MODULES:
                return getattr(module, func.attr, None)
        return None

    def expression(self, node):
        constant = self.constant(node)
        if constant is not None:
            return literal(constant)
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return node.id
            found, value = resolve_free(self.fn, node.id)
            what = f"a {type(value).__name__}" if found else "not defined"
            self.fail(node, f"'{node.id}' is {what}: reversible functions read their arguments, ancillas and numeric "
                            "constants (pass arrays as arguments)")
        if isinstance(node, ast.BinOp):
            op = _BINARY.get(type(node.op))
            if op is None:
                self.fail(node, f"the operator in `{ast.unparse(node)}` is not supported in reversible functions")
            return (op, self.expression(node.left), self.expression(node.right))
        if isinstance(node, ast.UnaryOp):
            operand = self.expression(node.operand)
            if isinstance(node.op, ast.USub):
                return ("neg", operand)
            if isinstance(node.op, ast.UAdd):
                return operand
            if isinstance(node.op, ast.Not):
                return ("not", operand)
            self.fail(node, "the operator ~ is not supported in expressions (use not)")
        if isinstance(node, ast.BoolOp):
            return ("and" if isinstance(node.op, ast.And) else "or",) + tuple(self.expression(v) for v in node.values)
        if isinstance(node, ast.Compare):
            operands = [self.expression(v) for v in [node.left, *node.comparators]]
            parts = []
            for op, left, right in zip(node.ops, operands, operands[1:]):
                if type(op) not in _COMPARE:
                    self.fail(node, f"the comparison in `{ast.unparse(node)}` is not supported (use == != < <= > >=)")
                parts.append((_COMPARE[type(op)], left, right))
            return parts[0] if len(parts) == 1 else ("and",) + tuple(parts)
        if isinstance(node, ast.IfExp):
            return ("select", self.expression(node.test), self.expression(node.body), self.expression(node.orelse))
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call):
            return self.call_expression(node)
        if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute, ast.Subscript)):
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and root.id in self.locals:
                path = self.path(node)
                if path is not None:
                    return path
        self.fail(node, f"`{ast.unparse(node)}` is not supported in reversible expressions")

    def subscript(self, node: ast.Subscript):
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape" and self.path(
                node.value.value) is not None:
            axis = self.constant(node.slice)
            if not isinstance(axis, int):
                self.fail(node, "x.shape[k] needs a constant k")
            return ("shape", self.path(node.value.value), axis)
        if self.path(node) is not None:  # p["w"]: a field of a structured argument
            return self.path(node)
        indices, base = [], node
        while isinstance(base, ast.Subscript) and self.path(base) is None:  # x[i][j] is x[i, j]
            part = base.slice
            parts = part.elts if isinstance(part, ast.Tuple) else [part]
            if any(isinstance(p, ast.Slice) for p in parts):
                self.fail(node, f"`{ast.unparse(node)}`: slices are not supported; loop over the elements")
            indices = [self.expression(p) for p in parts] + indices
            base = base.value
        name = self.path(base) if isinstance(base, (ast.Name, ast.Attribute, ast.Subscript)) else None
        if name is None:
            self.fail(node, f"`{ast.unparse(node)}`: only variables can be indexed")
        return ("index", name) + tuple(indices)

    def call_expression(self, node: ast.Call):
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            self.fail(node, "keyword and starred arguments are not supported in reversible expressions")
        func = node.func
        if isinstance(func, ast.Name) and func.id == "len" and func.id not in self.locals:
            if len(node.args) != 1 or self.path(node.args[0]) is None:
                self.fail(node, "len takes one variable")
            return ("len", self.path(node.args[0]))
        marker = self.marker(func)
        if marker in ("stack", "lognumber"):
            self.fail(node, f"rv.{marker}(...) is the initial value of an ancilla: `t = rv.alloc(rv.{marker}(...))`")
        if marker is not None:
            self.fail(node, f"rv.{marker} is a statement, not a value")
        name = _math_name(self.function_object(func))
        if name is None:
            self.fail(node, f"`{ast.unparse(node)}` calls a function reversible expressions do not know; supported: "
                            f"len, {', '.join(MATH_FUNCTIONS)} (from math, numpy or adarray.numpy)")
        op, arity = MATH_FUNCTIONS[name]
        if len(node.args) != arity:
            self.fail(node, f"{name}() takes {arity} argument{'s' if arity != 1 else ''}")
        operands = tuple(self.expression(a) for a in node.args)
        if op == "square":
            return ("pow", operands[0], 2)
        return (op,) + operands


def _changed(expr, statements) -> set:
    """Variables `expr` reads that `statements` may change (values written, or arrays rebound for len/shape)."""
    return (values_read(expr) & names_written(statements)) | (shapes_read(expr) & names_rebound(statements))


def _references(expr) -> list:
    """Variables and elements an expression reads as values (for the read-write and product checks)."""
    return elements_read(expr)


def _index_expressions(expr) -> list:
    """The index expressions of every element an expression reads (nested ones included)."""
    found = []
    if isinstance(expr, tuple) and expr[0] not in ("len", "shape"):
        if expr[0] == "index":
            found += list(expr[2:])
        for operand in expr[(2 if expr[0] == "index" else 1):]:
            found += _index_expressions(operand)
    return found


def _whole_reads(expr) -> set:
    """Variables an expression reads whole (not through an element, len or shape)."""
    if isinstance(expr, str):
        return {expr}
    if not isinstance(expr, tuple) or expr[0] in ("len", "shape"):
        return set()
    operands = expr[2:] if expr[0] == "index" else expr[1:]
    return set().union(*(_whole_reads(o) for o in operands)) if operands else set()


def _uncompute(computed) -> list:
    """The inverse of a rv.compute() block, keeping the ancillas it allocated alive (they are freed by rv.free)."""
    allocated = {s[2] for s in computed if s[0] == "alloc"}
    return [s for s in invert_block(computed) if not (s[0] == "free" and s[2] in allocated)]


def parse_function(fn) -> tuple[Source, list[str], tuple]:
    """(source, argument names, statement IR) of a @rv.reversible function; raises ReversibilityError."""
    source = Source(fn)
    parser = Parser(fn, source)
    return source, parser.args, parser.parse()

