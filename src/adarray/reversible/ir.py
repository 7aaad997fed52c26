"""The reversible statement IR: nested tuples of names, numbers and tags, so that a program is a hashable
param of the `reversible` primitive that the IR printer writes and `ad.parse_program` reads back.

Expressions
    "x"                          a variable (scalar or array)
    1.5, 2, True                 a constant
    ("index", "x", i, j)         the element x[i, j] (indices are integer expressions)
    ("len", "x"), ("shape", "x", k)      len(x), x.shape[k] (integers)
    ("llog", "p")                the logarithm of the lognumber p, a float (exact: p holds it)
    ("complex", re, im)          the complex constant re + im j
    (op, e1, e2, ...)            op: add sub mul div pow mod floordiv neg; eq ne lt le gt ge and or not;
                                 select (c ? a : b); sum; the math functions of MATH (exp, log, sqrt, ...);
                                 real imag conj angle (of complex values)
Targets (what a statement updates): a variable "y" or an element ("index", "x", i).
Statements: (kind, line, ...operands); `line` is the source line, for messages.
    ("inc", l, t, e)   t += e        ("dec", l, t, e)   t -= e        (e does not read t)
    ("xor", l, t, e)   t ^= e        (integers and booleans; its own inverse)
    ("mul", l, t, c)   t *= c        ("div", l, t, c)   t /= c        (c a non-zero constant)
    ("lmul", l, p, e)  p *= exp(e)   ("ldiv", l, p, e)  p /= exp(e)   (p a lognumber: its log += e, exactly)
    ("swap", l, a, b)  ("neg", l, a) ("rot", l, a, b, theta): (a, b) <- (a cos - b sin, b cos + a sin)
    ("push", l, s, x, checked)   x moves onto the stack s and x becomes the slot's old value (zero)
    ("pop", l, s, x, checked)    the top of s moves into x (checked: x must be zero); inverses of each other
    ("call", l, f, (a1, a2, ...))   the reversible function f on the targets a1... (updated in place)
    ("inst", l, spec, (a1, a2, ...))   a user instruction (instructions.py): spec = (name, params, forward,
                                 inverse, bars, adjoint, inverse_adjoint), each a tuple of expressions over the params
    ("alloc", l, t, init)  ("free", l, t, init)   init: a number, ("zeros", n1, ...), ("zeros_like", e),
                                 ("stack", capacity or None), ("lognumber", c)
    ("if", l, pre, post, then, else)     then/else are tuples of statements; post == pre after the branch
    ("for", l, i, start, stop, step, reverse, body)    reverse: walk range(start, stop, step) backwards
    ("while", l, pre, post, body)        post false on entry, true after every iteration
A function is (name, args, types, check, atol, body) with types ((var, kind, rank), ...), kind "f" (float),
"c" (complex), "i", "b", "l" (lognumber) or a stack "s" + its elements' kind (rank: the elements' rank); a
program is a tuple of functions, the entry first, whose calls name functions of the tuple.
`invert_block` gives the inverse (the table of NiLang's paper, section 2.2): blocks run backwards,
each statement replaced by its inverse. For loops reverse the realised index sequence, so stepped
ranges that do not end on `stop` (range(1, 6, 2): 1, 3, 5) come back as 5, 3, 1.
"""
from __future__ import annotations

import math

from ..primitives import elementwise as ew
from ..primitives.operations import BY_REVERSIBLE_NAME, OPERATIONS

# The operations of expressions: the rows of the one table of operations (primitives/operations.py) that
# have a `reversible` name, grouped by how they are written and typed; and the parts of complex values.
COMPLEX_PARTS = ("real", "imag", "conj", "angle")  # named as in NumPy and adarray.numpy (np.real, anp.conj, ...)
SYMBOLS = {name: row.symbol for name, row in BY_REVERSIBLE_NAME.items() if row.symbol and row.arity == 2}
LOGICAL = tuple(OPERATIONS[prim].reversible for prim in (ew.logical_and_p, ew.logical_or_p, ew.logical_not_p))
ARITHMETIC = tuple(name for name in SYMBOLS if not BY_REVERSIBLE_NAME[name].boolean)
COMPARISONS = tuple(name for name in SYMBOLS if BY_REVERSIBLE_NAME[name].boolean and name not in LOGICAL)
_FUNCTIONS = {name: row for name, row in BY_REVERSIBLE_NAME.items() if not row.symbol and not row.boolean}
UNARY_MATH = tuple(name for name, row in _FUNCTIONS.items() if row.arity == 1) + COMPLEX_PARTS
BINARY_MATH = tuple(name for name, row in _FUNCTIONS.items() if row.arity == 2)
LEAVES = ("index", "len", "shape")
STATEMENTS = ("inc", "dec", "xor", "mul", "div", "lmul", "ldiv", "swap", "neg", "rot", "push", "pop", "call", "inst",
              "alloc", "free", "if", "for", "while")
_INVERSE_KIND = {"inc": "dec", "dec": "inc", "mul": "div", "div": "mul", "lmul": "ldiv", "ldiv": "lmul",
                 "push": "pop", "pop": "push", "alloc": "free", "free": "alloc"}
FRACTION_BITS = 42  # a lognumber holds its log as an int64 count of 2**-42: |log| < 2**20, exact += and -=
LOG_UNIT = 2.0 ** -FRACTION_BITS


def literal(value):
    """A constant as the IR holds it: numbers as they are, a complex number as ("complex", re, im) (the IR's text
    form, through which programs print and parse back, has no complex literal)."""
    if isinstance(value, complex):
        return ("complex", float(value.real), float(value.imag))
    return value


def fixed_log(value) -> int:
    """The int a lognumber holding the constant `value` stores: log(value) in units of 2**-42, rounded to even."""
    return round(math.log(value) * 2.0 ** FRACTION_BITS)
UPDATE_SYMBOLS = {"inc": "+=", "dec": "-=", "xor": "^=", "mul": "*=", "div": "/=", "lmul": "*=", "ldiv": "/="}


def is_name(expr) -> bool:
    return isinstance(expr, str)


def is_element(expr) -> bool:
    return isinstance(expr, tuple) and expr[0] == "index"


def root_name(name: str) -> str:
    """The argument a path of a structured argument starts from: 'layer' for 'layer.W1' and "p['w']"."""
    if name.startswith("%"):  # an ancilla the parser made
        return name
    for k, char in enumerate(name):
        if char in ".[" and k:
            return name[:k]
    return name


def base_name(target) -> str:
    """The variable a target lives in: 'x' for x and for x[i]."""
    return target if isinstance(target, str) else target[1]


def names_read(expr, into=None) -> set:
    """Every variable an expression reads (arrays read through an index or len count, indices too)."""
    into = set() if into is None else into
    if isinstance(expr, str):
        into.add(expr)
    elif isinstance(expr, tuple):
        if expr[0] in ("index", "len", "shape"):
            into.add(expr[1])
            for index in expr[2:]:
                if expr[0] == "index":
                    names_read(index, into)
        else:
            for operand in expr[1:]:
                names_read(operand, into)
    return into


def values_read(expr) -> set:
    """Variables whose values an expression reads (len(x) and x.shape read only x's shape)."""
    into = set()
    if isinstance(expr, str):
        into.add(expr)
    elif isinstance(expr, tuple) and expr[0] not in ("len", "shape"):
        if expr[0] == "index":
            into.add(expr[1])
        for operand in expr[(2 if expr[0] == "index" else 1):]:
            into |= values_read(operand)
    return into


def shapes_read(expr) -> set:
    """Variables whose shapes an expression reads (len(x), x.shape[k])."""
    if isinstance(expr, tuple):
        if expr[0] in ("len", "shape"):
            return {expr[1]}
        return set().union(*(shapes_read(o) for o in expr[1:])) if len(expr) > 1 else set()
    return set()


def names_rebound(statements, into=None) -> set:
    """Variables a statement binds to another array, changing their shape: whole-variable swaps. (A callee that
    swaps its arguments can too: the run-time check of the loop bounds catches that.)"""
    into = set() if into is None else into
    for statement in statements:
        if statement[0] == "swap":
            into |= {t for t in statement_targets(statement) if isinstance(t, str)}
        for block in blocks(statement):
            names_rebound(block, into)
    return into


def elements_read(expr, into=None) -> list:
    """The references an expression reads as values: names and ("index", ...) elements, in order."""
    into = [] if into is None else into
    if isinstance(expr, str) or is_element(expr):
        into.append(expr)
    elif isinstance(expr, tuple) and expr[0] not in ("len", "shape"):
        for operand in expr[1:]:
            elements_read(operand, into)
    return into


def target_reads(target) -> set:
    """What evaluating a target's place reads besides the target: its index expressions."""
    into = set()
    if is_element(target):
        for index in target[2:]:
            names_read(index, into)
    return into


def statement_targets(statement) -> list:
    """The targets one statement writes (not descending into blocks)."""
    kind = statement[0]
    if kind in ("inc", "dec", "xor", "mul", "div", "lmul", "ldiv", "neg"):
        return [statement[2]]
    if kind in ("swap", "rot", "push", "pop"):
        return [statement[2], statement[3]]
    if kind in ("call", "inst"):
        return list(statement[3])
    if kind in ("alloc", "free"):
        return [statement[2]]
    return []


def names_written(statements, into=None) -> set:
    """Every variable written anywhere in `statements` (an element write writes its array)."""
    into = set() if into is None else into
    for statement in statements:
        for target in statement_targets(statement):
            into.add(base_name(target))
        for block in blocks(statement):
            names_written(block, into)
    return into


def blocks(statement) -> list:
    """The nested statement blocks of a statement."""
    kind = statement[0]
    if kind == "if":
        return [statement[4], statement[5]]
    if kind == "for":
        return [statement[7]]
    if kind == "while":
        return [statement[4]]
    return []


def invert_statement(statement):
    """The statement that undoes `statement`."""
    kind, line = statement[0], statement[1]
    if kind in _INVERSE_KIND:
        return (_INVERSE_KIND[kind],) + statement[1:]
    if kind in ("xor", "swap", "neg"):
        return statement
    if kind == "rot":
        return ("rot", line, statement[2], statement[3], ("neg", statement[4]))
    if kind == "call":
        return ("call", line, inverse_name(statement[2]), statement[3])
    if kind == "inst":
        return ("inst", line, invert_spec(statement[2]), statement[3])
    if kind == "if":
        _, _, pre, post, then, orelse = statement
        return ("if", line, post, pre, invert_block(then), invert_block(orelse))
    if kind == "for":
        _, _, var, start, stop, step, reverse, body = statement
        return ("for", line, var, start, stop, step, not reverse, invert_block(body))
    if kind == "while":
        _, _, pre, post, body = statement
        return ("while", line, post, pre, invert_block(body))
    raise ValueError(f"not a reversible statement: {statement!r}")


def invert_block(statements) -> tuple:
    return tuple(invert_statement(s) for s in reversed(statements))


def invert_spec(spec) -> tuple:
    """The instruction that undoes the instruction `spec`: forward and inverse, and their adjoints, trade places."""
    name, params, forward, inverse, bars, adjoint, inverse_adjoint = spec
    return (inverse_name(name), params, inverse, forward, bars, inverse_adjoint, adjoint)


def inverse_name(name: str) -> str:
    """The table name of the inverse of function `name`: '~f', and '~~f' is 'f'."""
    return name[1:] if name.startswith("~") else "~" + name


def rename_calls(statements, rename) -> tuple:
    """`statements` with every called function name replaced by rename(name)."""
    out = []
    for s in statements:
        if s[0] == "call":
            s = ("call", s[1], rename(s[2]), s[3])
        elif s[0] == "if":
            s = s[:4] + (rename_calls(s[4], rename), rename_calls(s[5], rename))
        elif s[0] == "for":
            s = s[:7] + (rename_calls(s[7], rename),)
        elif s[0] == "while":
            s = s[:4] + (rename_calls(s[4], rename),)
        out.append(s)
    return tuple(out)


def called_names(statements, into=None) -> list:
    into = [] if into is None else into
    for s in statements:
        if s[0] == "call" and s[2] not in into:
            into.append(s[2])
        for block in blocks(s):
            called_names(block, into)
    return into


# --- text: a Python-like listing (print(rv.invert(f)) shows the inverse program) ----------------------------

def rank_of(expr, types) -> int:
    """The number of axes of an expression's value; `types` maps each name to (kind, rank)."""
    if isinstance(expr, str):
        return types[expr][1]
    if not isinstance(expr, tuple):
        return 0
    op = expr[0]
    if op == "index":
        return types[expr[1]][1] - (len(expr) - 2)
    if op in ("len", "shape", "sum", "and", "or", "not"):
        return 0
    return max([rank_of(o, types) for o in expr[1:]] or [0])


def array_leaves(expr, types) -> list:
    """The array-valued variables and partial elements an expression combines (not those inside sum())."""
    if isinstance(expr, str):
        return [expr] if types[expr][1] else []
    if not isinstance(expr, tuple) or expr[0] in ("len", "shape", "sum"):
        return []
    if expr[0] == "index":
        return [expr] if rank_of(expr, types) else []
    return [leaf for operand in expr[1:] for leaf in array_leaves(operand, types)]


def colliding_elements(targets, reads=()) -> list:
    """Pairs (a, b) of elements of one array that a statement writes (b) and writes or reads (a), whose
    equality only the run time can rule out: syntax cannot tell x[i] from x[j] when i == j."""
    elements = [t for t in targets if is_element(t)]
    written = len(elements)
    elements += [r for r in reads if is_element(r)]
    return [(a, b) for k, a in enumerate(elements) for b in elements[:min(k, written)]
            if a[1] == b[1] and a != b and len(a) == len(b)]


def expr_text(expr) -> str:
    if isinstance(expr, str):
        return expr
    if not isinstance(expr, tuple):
        return repr(expr)
    op, operands = expr[0], expr[1:]
    if op == "index":
        return f"{operands[0]}[{', '.join(expr_text(i) for i in operands[1:])}]"
    if op == "len":
        return f"len({operands[0]})"
    if op == "shape":
        return f"{operands[0]}.shape[{operands[1]}]"
    if op == "neg":
        return f"(-{expr_text(operands[0])})"
    if op == "llog":
        return f"log({expr_text(operands[0])})"
    if op == "complex":
        return repr(complex(*operands))
    if op == "not":
        return f"(not {expr_text(operands[0])})"
    if op == "select":
        return f"({expr_text(operands[1])} if {expr_text(operands[0])} else {expr_text(operands[2])})"
    if op in SYMBOLS:
        return "(" + f" {SYMBOLS[op]} ".join(expr_text(o) for o in operands) + ")"
    return f"{op}({', '.join(expr_text(o) for o in operands)})"


def factor_text(log_expr) -> str:
    """The factor of a lognumber update p *= factor whose log is `log_expr`."""
    if isinstance(log_expr, tuple) and log_expr[0] in ("log", "llog"):
        return expr_text(log_expr[1])
    return f"exp({expr_text(log_expr)})"


def _init_text(init) -> str:
    if isinstance(init, tuple) and init[0] == "complex":
        return expr_text(init)
    if isinstance(init, tuple) and init[0] == "stack":
        return "stack()" if init[1] is None else f"stack({expr_text(init[1])})"
    if isinstance(init, tuple) and init[0] == "lognumber":
        return f"lognumber({init[1]!r})"
    if isinstance(init, tuple) and init[0] == "zeros":
        return f"zeros(({', '.join(expr_text(n) for n in init[1:])},))"
    if isinstance(init, tuple) and init[0] == "zeros_like":
        return f"zeros_like({expr_text(init[1])})"
    return repr(init)


def block_text(statements, indent: int = 1) -> list[str]:
    pad = "    " * indent
    lines = []
    for s in statements:
        kind = s[0]
        if kind in ("lmul", "ldiv"):
            lines.append(f"{pad}{expr_text(s[2])} {UPDATE_SYMBOLS[kind]} {factor_text(s[3])}")
        elif kind in UPDATE_SYMBOLS:
            lines.append(f"{pad}{expr_text(s[2])} {UPDATE_SYMBOLS[kind]} {expr_text(s[3])}")
        elif kind in ("swap", "neg", "rot"):
            lines.append(f"{pad}{kind}({', '.join(expr_text(o) for o in s[2:])})")
        elif kind in ("push", "pop"):
            unchecked = "" if s[4] else "  # unchecked"
            lines.append(f"{pad}{kind}({expr_text(s[2])}, {expr_text(s[3])}){unchecked}")
        elif kind == "call":
            lines.append(f"{pad}{s[2]}({', '.join(expr_text(a) for a in s[3])})")
        elif kind == "inst":
            lines.append(f"{pad}{s[2][0]}({', '.join(expr_text(a) for a in s[3])})")
        elif kind == "alloc":
            lines.append(f"{pad}{s[2]} = alloc({_init_text(s[3])})")
        elif kind == "free":
            lines.append(f"{pad}free({s[2]}, {_init_text(s[3])})")
        elif kind == "if":
            lines.append(f"{pad}if if_({expr_text(s[2])}, {expr_text(s[3])}):")
            lines += block_text(s[4], indent + 1) or [pad + "    pass"]
            if s[5]:
                lines.append(f"{pad}else:")
                lines += block_text(s[5], indent + 1)
        elif kind == "for":
            bounds = f"range({expr_text(s[3])}, {expr_text(s[4])}, {expr_text(s[5])})"
            lines.append(f"{pad}for {s[2]} in {'reversed(' + bounds + ')' if s[6] else bounds}:")
            lines += block_text(s[7], indent + 1) or [pad + "    pass"]
        elif kind == "while":
            lines.append(f"{pad}while while_({expr_text(s[2])}, {expr_text(s[3])}):")
            lines += block_text(s[4], indent + 1) or [pad + "    pass"]
    return lines


def function_text(function) -> str:
    name, args, _, _, _, body = function
    return "\n".join([f"def {name}({', '.join(args)}):"] + (block_text(body) or ["    pass"]))


def program_text(program) -> str:
    """All the functions of a program table, entry first."""
    return "\n\n".join(function_text(f) for f in program)
