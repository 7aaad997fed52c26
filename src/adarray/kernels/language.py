"""The kernel language: the subset of Python a scalar kernel may use, checked when it is decorated.

    scalars      float, int and bool values (Python numbers, or one element of each array argument)
    expressions  + - * / // % **, unary - + not, comparisons (chained too), and/or, `a if c else b`,
                 calls of the math functions below and of other kernels, module constants (math.pi)
    statements   assignment (also tuple unpacking and +=), if/elif/else, `for i in range(...)`, while,
                 return (early returns too; every path must return the same number of values), pass
    functions    exp expm1 exp2 log log1p log2 log10 sqrt sin cos tan asin acos atan arcsin arccos arctan
                 atan2 arctan2 sinh cosh tanh asinh acosh atanh (and arc-) sigmoid softplus erf abs fabs
                 absolute floor ceil sign square min max minimum maximum pow power hypot logaddexp
                 isfinite isnan float int bool, from `math`, `numpy` or `adarray.numpy` (also imported by
                 name: `from math import exp`); the table is FUNCTIONS, from primitives/operations.py

Deviations from Python, all NumPy's: `and`/`or` return booleans, floor/ceil return floats, integer
overflow wraps, 1/0 is inf. Anything else is rejected by `check_function` with the kernel's name,
the construct and the line.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import math
import textwrap

import numpy as np

from ..core.errors import KernelSyntaxError
from ..primitives.operations import BY_KERNEL_NAME

# Function name -> (number of arguments, or None for two or more): the elementwise primitives by
# their math and NumPy names (the operations table, primitives/operations.py), and the functions
# the kernel language writes with them (kernels/lower.py: DERIVED).
DERIVED = {"softplus": 1, "fabs": 1, "square": 1, "isnan": 1, "float": 1, "int": 1, "bool": 1,
           "min": None, "max": None}
FUNCTIONS = {**{name: row.arity for name, row in BY_KERNEL_NAME.items()}, **DERIVED}
CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf, "nan": math.nan}
MODULE_NAMES = ("math", "numpy", "adarray.numpy")
BUILTINS = ("abs", "min", "max", "pow", "float", "int", "bool", "range")

OPERATOR_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
              ast.Pow: "**"}
COMPARISON_SYMBOLS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_NAMES = {  # readable names of rejected constructs
    "Subscript": "indexing (x[...])", "List": "a list", "Dict": "a dict", "Set": "a set",
    "ListComp": "a list comprehension", "SetComp": "a set comprehension", "DictComp": "a dict comprehension",
    "GeneratorExp": "a generator expression", "Lambda": "a lambda", "JoinedStr": "an f-string",
    "Starred": "a starred expression", "NamedExpr": "an assignment expression (:=)", "Await": "await",
    "Yield": "yield", "YieldFrom": "yield from", "Slice": "a slice", "Break": "break", "Continue": "continue",
    "With": "a with statement", "Try": "a try statement", "Raise": "raise", "Assert": "assert",
    "Import": "import", "ImportFrom": "import", "Global": "global", "Nonlocal": "nonlocal", "Delete": "del",
    "FunctionDef": "a nested function", "ClassDef": "a class definition", "AsyncFunctionDef": "a nested function",
    "Match": "a match statement", "AsyncFor": "async for", "AsyncWith": "async with",
}
_HINTS = {
    "Break": "; put the exit test in the while condition",
    "Continue": "; guard the rest of the body with an if",
    "Subscript": "; a kernel sees one element of each array argument",
}


def construct_name(node) -> str:
    kind = type(node).__name__
    if isinstance(node, ast.BinOp):
        return f"the operator {_operator_symbol(node.op)}"
    if isinstance(node, ast.Compare):
        return f"the comparison '{type(node.ops[0]).__name__}'"
    if isinstance(node, ast.Constant):
        return f"a {type(node.value).__name__} constant"
    return _NAMES.get(kind, f"{kind} ({kind.lower()} node)")


def _operator_symbol(op) -> str:
    return {ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
            ast.RShift: ">>"}.get(type(op), OPERATOR_SYMBOLS.get(type(op), type(op).__name__))


class Source:
    """A kernel's parsed source, for messages that name the kernel, the construct and the line."""

    def __init__(self, fn):
        self.name = getattr(fn, "__name__", "<kernel>")
        try:
            lines, first = inspect.getsourcelines(fn)
            self.filename = inspect.getsourcefile(fn) or "<unknown>"
        except (OSError, TypeError):
            raise KernelSyntaxError(
                f"kernel '{self.name}': its source code is not available (kernels are parsed from source; "
                "define them in a file, not in an interactive session or with exec)") from None
        tree = ast.parse(textwrap.dedent("".join(lines)))
        self.offset = first - 1
        self.function = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))

    def line(self, node) -> int:
        return self.offset + getattr(node, "lineno", 1)

    def error(self, node, message: str) -> KernelSyntaxError:
        line = self.line(node)
        return KernelSyntaxError(f"kernel '{self.name}', line {line}: {message} (at {self.filename}:{line})")


def resolve_free(fn, name: str):
    """(found, value) of a free name of `fn`: its closure cells, then its globals, then builtins."""
    code = getattr(fn, "__code__", None)
    if code is not None and name in code.co_freevars and fn.__closure__:
        cell = fn.__closure__[code.co_freevars.index(name)]
        try:
            return True, cell.cell_contents
        except ValueError:  # an empty cell: the variable is assigned later in the enclosing function
            return False, None
    scope = getattr(fn, "__globals__", {})
    if name in scope:
        return True, scope[name]
    if hasattr(builtins, name):
        return True, getattr(builtins, name)
    return False, None


def module_name(value) -> str | None:
    """'math', 'numpy' or 'adarray.numpy' if `value` is one of those modules."""
    name = getattr(value, "__name__", None)
    return name if inspect.ismodule(value) and name in MODULE_NAMES else None


def function_name(value) -> str | None:
    """The kernel-language name of a math function object (math.exp, np.exp, anp.exp, builtin abs...)."""
    if value is None:
        return None
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__name__", None)
    if isinstance(value, np.ufunc):
        module, name = "numpy", value.__name__
    if name in FUNCTIONS and (module in ("math", "builtins") or module.startswith("numpy")
                              or module.startswith("adarray.numpy")):
        return name
    return None


def is_number(value) -> bool:
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf"


def assigned_names(statements) -> list[str]:
    """Names assigned anywhere in `statements` (targets, augmented targets, loop variables), in order."""
    names: list[str] = []
    for node in (n for s in statements for n in ast.walk(s)):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
            targets = [node.target]
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name) and leaf.id not in names:
                    names.append(leaf.id)
    return names


def returns_in(statements) -> list[ast.Return]:
    return [n for s in statements for n in ast.walk(s) if isinstance(n, ast.Return)]


class Checker:
    """Walks a kernel's AST and raises KernelSyntaxError at the first construct outside the language."""

    def __init__(self, source: Source, fn):
        self.source, self.fn = source, fn
        function = source.function
        self.arguments = [a.arg for a in function.args.posonlyargs + function.args.args]
        self.locals = set(self.arguments) | set(assigned_names(function.body))

    def fail(self, node, message):
        raise self.source.error(node, message)

    def check(self) -> None:
        function = self.source.function
        args = function.args
        if isinstance(function, ast.AsyncFunctionDef):
            self.fail(function, "an async function cannot be a kernel")
        if args.vararg or args.kwarg or args.kwonlyargs:
            self.fail(function, "*args, **kwargs and keyword-only arguments are not supported in kernels")
        if args.defaults:
            self.fail(function, "default argument values are not supported in kernels")
        body = function.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
                body[0].value.value, str):
            body = body[1:]  # the docstring
        if not returns_in(body):
            self.fail(function, "a kernel must return a value")
        counts = {self.return_count(r) for r in returns_in(body)}
        if len(counts) > 1:
            self.fail(returns_in(body)[-1], "every return must give the same number of values")
        self.block(body)

    def return_count(self, node: ast.Return) -> int:
        if node.value is None:
            self.fail(node, "a return without a value (kernels return numbers)")
        return len(node.value.elts) if isinstance(node.value, ast.Tuple) else 1

    def block(self, statements) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self.target(target)
            self.expression(node.value, allow_tuple=True)
        elif isinstance(node, ast.AugAssign):
            if not isinstance(node.target, ast.Name):
                self.fail(node, f"augmented assignment to {construct_name(node.target)}")
            self.operator(node, node.op)
            self.expression(node.value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is None or not isinstance(node.target, ast.Name):
                self.fail(node, "an annotation without a value")
            self.expression(node.value)
        elif isinstance(node, ast.If):
            self.expression(node.test)
            self.block(node.body)
            self.block(node.orelse)
        elif isinstance(node, ast.While):
            if node.orelse:
                self.fail(node, "while/else is not supported in kernels")
            self.expression(node.test)
            self.block(node.body)
        elif isinstance(node, ast.For):
            self.for_loop(node)
        elif isinstance(node, ast.Return):
            self.expression(node.value, allow_tuple=True)
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.Expr):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return  # a string used as a comment
            self.fail(node, "an expression statement (its value would be discarded; kernels have no side effects)")
        else:
            self.fail(node, f"{construct_name(node)} is not supported in kernels{_HINTS.get(type(node).__name__, '')}")

    def target(self, node) -> None:
        if isinstance(node, ast.Name):
            return
        if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.elts):
            return
        self.fail(node, f"assignment to {construct_name(node)} (kernels assign names only)"
                  + _HINTS.get(type(node).__name__, ""))

    def for_loop(self, node: ast.For) -> None:
        if node.orelse:
            self.fail(node, "for/else is not supported in kernels")
        if not isinstance(node.target, ast.Name):
            self.fail(node, "a for loop must assign one name (for i in range(...))")
        call = node.iter
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range"
                and call.func.id not in self.locals):
            self.fail(node, "a for loop must iterate over range(...) (kernels have no sequences)")
        if call.keywords or not 1 <= len(call.args) <= 3:
            self.fail(node, "range() takes 1 to 3 positional arguments")
        for arg in call.args:
            self.expression(arg)
        self.block(node.body)

    def operator(self, node, op) -> None:
        if type(op) not in OPERATOR_SYMBOLS:
            self.fail(node, f"the operator {_operator_symbol(op)} is not supported in kernels")

    def expression(self, node, allow_tuple: bool = False) -> None:
        if isinstance(node, ast.Tuple) and allow_tuple:
            for element in node.elts:
                self.expression(element)
        elif isinstance(node, ast.BinOp):
            self.operator(node, node.op)
            self.expression(node.left)
            self.expression(node.right)
        elif isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Invert):
                self.fail(node, "the operator ~ is not supported in kernels (use not)")
            self.expression(node.operand)
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                self.expression(value)
        elif isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in COMPARISON_SYMBOLS:
                    self.fail(node, f"the comparison '{type(op).__name__}' is not supported in kernels "
                                    "(use == != < <= > >=)")
            for value in [node.left, *node.comparators]:
                self.expression(value)
        elif isinstance(node, ast.IfExp):
            for value in (node.test, node.body, node.orelse):
                self.expression(value)
        elif isinstance(node, ast.Constant):
            if not isinstance(node.value, (bool, int, float)):
                self.fail(node, f"{construct_name(node)} is not supported in kernels (numbers only)")
        elif isinstance(node, ast.Name):
            self.name(node)
        elif isinstance(node, ast.Attribute):
            self.attribute(node, called=False)
        elif isinstance(node, ast.Call):
            self.call(node)
        else:
            self.fail(node, f"{construct_name(node)} is not supported in kernels{_HINTS.get(type(node).__name__, '')}")

    def name(self, node: ast.Name) -> None:
        if node.id in self.locals:
            return
        found, value = resolve_free(self.fn, node.id)
        if not found:
            return  # may be defined later in its module: resolved when the kernel is first called
        if module_name(value) or callable(value) and not isinstance(value, np.ndarray):
            self.fail(node, f"'{node.id}' is a {type(value).__name__}, not a number; kernels read numbers "
                            "and call functions")

    def attribute(self, node: ast.Attribute, called: bool) -> None:
        base = node.value
        if not isinstance(base, ast.Name) or base.id in self.locals:
            self.fail(node, f"attribute access .{node.attr} (kernels use math functions of a module only)")
        found, value = resolve_free(self.fn, base.id)
        if found and not module_name(value):
            self.fail(node, f"attribute access {base.id}.{node.attr} (only the modules math, numpy and "
                            "adarray.numpy may be used)")
        if found and called and node.attr not in FUNCTIONS:
            self.fail(node, f"{base.id}.{node.attr} is not a kernel function; supported: {', '.join(FUNCTIONS)}")
        if found and not called and node.attr not in CONSTANTS:
            self.fail(node, f"{base.id}.{node.attr} is not a constant a kernel can read "
                            f"({', '.join(CONSTANTS)})")

    def call(self, node: ast.Call) -> None:
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            self.fail(node, "keyword and starred arguments are not supported in kernel calls")
        func = node.func
        if isinstance(func, ast.Attribute):
            self.attribute(func, called=True)
            name = func.attr
        elif isinstance(func, ast.Name):
            if func.id in self.locals:
                self.fail(node, f"'{func.id}' is a local variable, not a function")
            name = func.id
            found, value = resolve_free(self.fn, func.id)
            if func.id == self.source.name:
                found = False  # the kernel itself (once decorated): recursion is reported when traced
            if found and not _is_kernel(value):
                known = function_name(value)
                if known is None or (known == "range"):
                    self.fail(node, f"calls '{func.id}', which is not a kernel function: kernels call the "
                                    "math functions of the kernel language and other @kernel functions")
                name = known
            elif not found:
                name = None  # resolved at the first call
            else:
                name = None  # another kernel: any number of arguments
        else:
            self.fail(node, f"calling {construct_name(func)} is not supported in kernels")
        arity = FUNCTIONS.get(name, -1) if name else -1
        if arity is None and len(node.args) < 2:
            self.fail(node, f"{name}() needs at least two arguments in kernels")
        if arity not in (None, -1) and len(node.args) != arity:
            self.fail(node, f"{name}() takes {arity} argument{'s' if arity != 1 else ''}, got {len(node.args)}")
        for arg in node.args:
            self.expression(arg)


def _is_kernel(value) -> bool:
    return getattr(value, "_is_adarray_kernel", False)


def check_function(fn) -> Source:
    """Parse `fn`'s source and check it is in the kernel language; return the parsed source."""
    source = Source(fn)
    Checker(source, fn).check()
    return source
