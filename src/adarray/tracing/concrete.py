"""Concrete values of a trace, and the guards that Python control flow records on them.

grad, value_and_grad, vjp, jvp, jacfwd, jacrev, hessian, hvp and linearize (and `jit(f, guards=True)`)
trace a function with the call's concrete arguments beside their types. Python code that needs a
concrete value of a traced one (`if x > 0:`, `while abs(term) > tol:`, `break`, `int(n)`,
`range(n)`) then gets it: the trace evaluates, on demand, only the recorded equations that value
depends on, and records a *guard*: the traced value, the Python conversion applied to it (`bool`,
`int`, `operator.index` or `float`) and the result. The traced program is valid for every input on
which the guards give the same results; the api layer evaluates them before it reuses a cached
program and re-traces when one differs (as torch.compile does), so each path through the Python
control flow is traced once.

Traces without concrete inputs (jit, vmap, the bodies of loops and branches, custom rules) know
no values: there, Python control flow on traced values stays a TracingError.

One conversion is refused even when the value is known: float() of a traced float value. It is
the identity, and the Python float it returns would be a constant of the program, so the
derivative 1 would silently become 0. int() of a float is allowed: truncation is piecewise
constant, so 0 is its derivative wherever one exists.
"""
from __future__ import annotations

import operator

import numpy as np

from ..core.errors import ExecutionError, TracingError
from ..core.ir import Literal, Program
from ..core.types import is_float
from .eager import evaluate


def integer_array(value) -> np.ndarray:
    """The conversion NumPy applies to an integer or boolean array it must read (`table[i, j]` with
    traced indices i and j, `np.int64(n)`): its value, as a new array."""
    return np.array(value)


# The Python conversions a guard may apply, by the word used in messages.
CONVERSIONS = {bool: "bool()", int: "int()", float: "float()", operator.index: "an index",
               integer_array: "np.asarray()"}


class ConcreteValues:
    """Mixin of `Trace`: the concrete value of every traced value (when the inputs have one),
    computed on demand, and the guards recorded on them.

    `sources` has one entry per program input: a NumPy value, a tracer of an enclosing trace
    (resolved by that trace, so nested transformations see the outermost values), or None
    (unknown). Without sources (`None`) the trace knows no values at all.
    """

    def set_sources(self, sources) -> None:
        self.knows_values = sources is not None
        self._sources = {id(var): source for var, source in zip(self.inputs, sources or ())}
        self._values: dict = {}
        self._producers: dict = {}  # id(var) -> index of the equation that computes it
        self._indexed = 0
        self.guards: list = []  # (var, conversion, result) in the order Python asked
        self.depends_on_outer = False  # Python control flow here read a value of an enclosing trace

    def concrete_value(self, atom):
        """The NumPy value of `atom` (a Var of this trace or a Literal), or None when unknown."""
        if isinstance(atom, Literal):
            return atom.value
        if not self.knows_values:
            return None
        if id(atom) in self._values:
            return self._values[id(atom)]
        needed = self._slice(atom)
        if needed is None:
            return None
        for index in sorted(needed):
            self._evaluate(self.eqns[index])
        return self._values[id(atom)]

    def _slice(self, atom):
        """Indices of the equations `atom` depends on that are not evaluated yet (None: an input
        they need has no known value). Inputs met on the way get their values."""
        for index in range(self._indexed, len(self.eqns)):
            for var in self.eqns[index].outputs:
                self._producers[id(var)] = index
        self._indexed = len(self.eqns)
        needed, stack = set(), [atom]
        while stack:  # an explicit stack: a long series must not hit Python's recursion limit
            var = stack.pop()
            if isinstance(var, Literal) or id(var) in self._values:
                continue
            index = self._producers.get(id(var))
            if index is None:
                value = self._input_value(var)
                if value is None:
                    return None
                self._values[id(var)] = value
            elif index not in needed:
                needed.add(index)
                stack.extend(self.eqns[index].inputs)
        return needed

    def _input_value(self, var):
        source = self._sources.get(id(var))
        if source is None:  # a closed-over value of an enclosing trace?
            source = next((tracer for tracer, inner in self.closure.values() if inner is var), None)
        if source is None:
            return None
        if hasattr(source, "variable"):  # a tracer of an enclosing trace
            return source.trace.concrete_value(source.variable)
        return np.asarray(source)

    def _evaluate(self, eqn) -> None:
        if all(id(var) in self._values for var in eqn.outputs):
            return
        args = [a.value if isinstance(a, Literal) else self._values[id(a)] for a in eqn.inputs]
        try:
            with np.errstate(all="ignore"):  # NaN and inf are values, as in the backend
                outs = evaluate(eqn.prim, args, eqn.params)
        except IndexError as error:
            raise ExecutionError(f"index out of range in `{eqn!r}`: {error}") from None
        for var, out in zip(eqn.outputs, outs if eqn.prim.multiple_results else (outs,)):
            self._values[id(var)] = np.asarray(out)

    def add_guard(self, var, conversion, result) -> None:
        if not any(v is var and c is conversion for v, c, _ in self.guards):
            self.guards.append((var, conversion, result))

    def guard_program(self, closure_vars) -> Program | None:
        """The program computing the guarded values from this trace's inputs (then `closure_vars`,
        as the traced program takes them), or None when nothing was guarded."""
        if not self.guards:
            return None
        return Program(tuple(self.inputs) + tuple(closure_vars), tuple(self.eqns),
                       tuple(var for var, _, _ in self.guards))


def convert(value, conversion):
    """Apply a guard's Python conversion to a NumPy value of one element (an integer_array: any)."""
    if conversion is integer_array:
        return integer_array(value)
    return conversion(np.asarray(value).reshape(())[()])


def same_result(a, b) -> bool:
    """Did a guard give the result recorded (arrays compared as wholes)?"""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b))
    return a == b


def check_conversion(aval, conversion, what: str) -> None:
    """Refuse conversions that would lose a derivative or that NumPy refuses."""
    if conversion is integer_array:
        return  # integer and boolean arrays only (the caller's check): no derivative to lose
    if aval.size != 1:
        kind = "the truth value" if conversion is bool else CONVERSIONS[conversion]
        raise TracingError(
            f"{what} on a traced array {aval}: {kind} of an array with {aval.size} elements is ambiguous; "
            "use anp.any or anp.all (or anp.where for an elementwise choice)"
        )
    if conversion is float and is_float(aval.dtype):
        raise TracingError(
            f"float() of a traced value ({aval}): the Python float would be a constant of the program, and "
            "the derivative would silently be lost. Keep it an array (comparisons such as `if x > 0:` work "
            "under grad), or pass it as a static argument (static_argnums, static_argnames or a non-array keyword)"
        )
    if conversion is operator.index and aval.dtype.kind not in "iu":
        raise TracingError(f"only integer arrays can be used as a Python index; this traced value is {aval}")
