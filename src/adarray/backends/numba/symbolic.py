"""Batch sizes as arguments: a program's leading batch axis written as a name in the generated code.

Shapes are constants of the generated code, so a program traced at another batch size (the last,
shorter minibatch of an epoch) would compile again. `symbolize(program)` picks *batch sizes*: a
leading size shared by at least two inputs and found in no input's other axes (the rows of x and
y, not a weight matrix's sides), of at least 2. Every aval holding such a size is given a `Size`:
an int of that value for the generator, written in the code as `_n0`, `_n1`, ... and passed by the
runtime from the arguments' shapes. Arithmetic on a Size stays a Size (`(_n0 * 64)`).

The cost model's decisions (threads, BLAS, chains, how a reduction reads) weigh a Size's `plan`:
programs that differ only in their batch sizes form a *family* (the text generated with every plan
LARGE is its key), and a family's plans are the largest sizes it has seen (runtime.family_plans).
The last, shorter minibatch then writes the same text as the full ones, and shares their compiled
function (in memory and on disk, both keyed by the text); the first program of a family decides as
it would with constant sizes.

Correctness does not depend on any of this: the code of a program is its text with the size values
named, run with those values; two programs share compiled code only when their texts are equal.

    >>> n = Size(256, "_n0"); f"range({n * 64})"
    'range((_n0 * 64))'
"""
from __future__ import annotations

from ...core.ir import Eqn, Literal, Program, Var
from ...core.types import Aval

LARGE = 1 << 30  # a batch size, when the generated text is only a family's key


class Size(int):
    """A dimension: its value for the generator, a name (or expression) in the generated code, and the
    value the cost model weighs (`plan`: the value of the first program of its family, see symbolize)."""

    def __new__(cls, value: int, text: str, plan: int | None = None):
        size = super().__new__(cls, value)
        size.text, size.plan = text, int(value) if plan is None else plan
        return size

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return self.text if not spec else format(int(self), spec)

    def __hash__(self):
        return int.__hash__(self)

    def _combine(self, other, operator, apply, reflected=False):
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        if operator == "*" and not isinstance(other, Size) and other == 1:
            return self
        if operator == "+" and not isinstance(other, Size) and other == 0:
            return self
        other_plan = other.plan if isinstance(other, Size) else int(other)
        left, right = (other, self) if reflected else (self, other)
        value = apply(int(other), int(self)) if reflected else apply(int(self), int(other))
        plan = apply(other_plan, self.plan) if reflected else apply(self.plan, other_plan)
        return Size(value, f"({left} {operator} {right})", plan)

    def __add__(self, other):
        return self._combine(other, "+", lambda a, b: a + b)

    def __radd__(self, other):
        return self._combine(other, "+", lambda a, b: a + b, True)

    def __sub__(self, other):
        return self._combine(other, "-", lambda a, b: a - b)

    def __rsub__(self, other):
        return self._combine(other, "-", lambda a, b: a - b, True)

    def __mul__(self, other):
        return self._combine(other, "*", lambda a, b: a * b)

    def __rmul__(self, other):
        return self._combine(other, "*", lambda a, b: a * b, True)

    def __floordiv__(self, other):
        return self._combine(other, "//", lambda a, b: a // b)

    def __neg__(self):
        return Size(-int(self), f"(-{self})", -self.plan)


def symbolic(value) -> bool:
    """Does `value` (a size, or a shape) hold a symbolic size?"""
    if isinstance(value, (tuple, list)):
        return any(isinstance(v, Size) for v in value)
    return isinstance(value, Size)


def planned(value) -> int:
    """The value the cost model weighs: a symbolic size's plan (its family's, see symbolize)."""
    return value.plan if isinstance(value, Size) else int(value)


def product(values):
    """The product of sizes, symbolic when one of them is (np.prod would give a plain number)."""
    total = 1
    for value in values:
        total = total * value
    return total


def batch_sizes(program: Program) -> dict[int, tuple[int, int]]:
    """{size: (input, axis 0)} of the program's batch sizes (see the module docstring)."""
    leading: dict[int, list[int]] = {}
    inner = set()
    for k, var in enumerate(program.inputs):
        shape = var.aval.shape
        if shape:
            leading.setdefault(shape[0], []).append(k)
            inner.update(shape[1:])
    return {size: (inputs[0], 0) for size, inputs in leading.items()
            if size >= 2 and len(inputs) >= 2 and size not in inner}


def symbolize(program: Program, plans: dict | None = None):
    """(the program with its batch sizes symbolic, [(name, input, axis)] to pass them). `plans` maps a
    batch size's name to the value the cost model weighs (default: its own value)."""
    found = batch_sizes(program)
    if not found:
        return program, []
    names = {}
    for k, size in enumerate(found):
        text = f"_n{k}"
        names[size] = Size(size, text, (plans or {}).get(text))
    rebuilt = _Rebuild(names)
    return rebuilt.program(program), [(names[size].text, k, axis) for size, (k, axis) in found.items()]


class _Rebuild:
    """A copy of a program (and of its nested programs) whose avals hold Sizes."""

    def __init__(self, names):
        self.names = names
        self.programs: dict[int, Program] = {}

    def aval(self, aval: Aval) -> Aval:
        if not any(d in self.names for d in aval.shape):
            return aval
        copy = Aval(aval.shape, aval.dtype)
        object.__setattr__(copy, "shape", tuple(self.names.get(d, d) for d in aval.shape))
        return copy

    def program(self, program: Program) -> Program:
        done = self.programs.get(id(program))
        if done is not None:
            return done
        renamed: dict[int, Var] = {}

        def atom(a):
            if isinstance(a, Literal):
                return a
            if id(a) not in renamed:
                renamed[id(a)] = Var(self.aval(a.aval))
            return renamed[id(a)]

        inputs = tuple(atom(v) for v in program.inputs)
        eqns = tuple(Eqn(e.prim, tuple(atom(a) for a in e.inputs), self.params(e.params),
                         tuple(atom(v) for v in e.outputs)) for e in program.eqns)
        result = Program(inputs, eqns, tuple(atom(a) for a in program.outputs))
        self.programs[id(program)] = result
        return result

    def params(self, params):
        changed = {}
        for key, value in params.items():
            if isinstance(value, Program):
                changed[key] = self.program(value)
            elif isinstance(value, tuple) and any(isinstance(v, Program) for v in value):
                changed[key] = tuple(self.program(v) if isinstance(v, Program) else v for v in value)
        return {**params, **changed} if changed else params
