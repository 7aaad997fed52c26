"""Walk a program with Taylor enclosures: the value of every variable is an `Enclosure` (it depends on x),
a NumPy array (a constant: it does not), or `Undecided` (a boolean that comparisons over the box could
not decide).

Each equation whose inputs are all constants is evaluated (its primitive bound on arrays); any other
one goes to the primitive's `enclosure` rule: ``rule(context, eqn, inputs) -> list of outputs``
(rules.py and structured.py hold the built-in ones; `register_enclosure` adds more).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import UnsupportedError
from ..core.ir import Literal, Program, walk
from ..core.primitive import Primitive
from ..core.types import Aval, is_complex
from .elementwise import monotone_rule
from .enclosure import Arithmetic, Enclosure


class Undecided:
    """A boolean array whose value depends on x: where each element may be true, where it may be false."""

    __slots__ = ("maybe_true", "maybe_false")

    def __init__(self, maybe_true, maybe_false):
        self.maybe_true, self.maybe_false = np.asarray(maybe_true, bool), np.asarray(maybe_false, bool)

    @property
    def shape(self):
        return self.maybe_true.shape


def decided(maybe_true, maybe_false):
    """A constant boolean array where every element is decided, else Undecided."""
    maybe_true, maybe_false = np.asarray(maybe_true, bool), np.asarray(maybe_false, bool)
    if not np.any(maybe_true & maybe_false):
        return maybe_true.copy()
    return Undecided(maybe_true, maybe_false)


def truth(value):
    """(maybe_true, maybe_false) of a constant or undecided boolean."""
    if isinstance(value, Undecided):
        return value.maybe_true, value.maybe_false
    value = np.asarray(value, bool)
    return value, ~value


class Context:
    """What a rule sees: the arithmetic (degree, region, rounding), the program's definitions (to
    recognise functions however they trace) and the name of the function being bounded."""

    def __init__(self, arithmetic: Arithmetic, name: str):
        self.arith = arithmetic
        self.name = name
        self.definitions: dict = {}
        self.values: dict = {}  # id(var) -> its value so far in the walk (to recognise log1p(exp(x)))

    @property
    def iv(self):
        return self.arith.iv

    @property
    def degree(self) -> int:
        return self.arith.degree

    def enclose(self, value) -> Enclosure:
        """An enclosure of a float value (a constant becomes one)."""
        if isinstance(value, Enclosure):
            return value
        if isinstance(value, Undecided):
            raise UnsupportedError(f"adarray.bounds: a boolean that depends on x is used as a number in "
                                   f"'{self.name}'; use it in anp.where instead")
        return self.arith.constant(value)

    def range(self, value):
        """An interval enclosing the value over the box."""
        if isinstance(value, Enclosure):
            return self.arith.range(value)
        value = np.asarray(value, np.float64)
        return value, value

    def defining(self, atom):
        """The equation that computes `atom` in the program being walked, or None."""
        return None if isinstance(atom, Literal) else self.definitions.get(id(atom))

    def value(self, atom):
        """The value of `atom` in the walk so far (a literal's value), or None."""
        if isinstance(atom, Literal):
            return atom.value
        return self.values.get(id(atom))

    def run(self, program: Program, inputs) -> list:
        return enclose_program(self, program, inputs)


def enclose_program(context: Context, program: Program, inputs, record=None, ranges=None) -> list:
    """The outputs of `program` for enclosure / constant inputs. `record` (a dict) receives the range of
    every enclosed variable (from a degree-0 pass); `ranges` gives them back to a later pass, which
    attaches them to its enclosures as bounds (AutoBound's propagate_trust_regions)."""
    outer, outer_values = context.definitions, context.values
    context.definitions = {id(var): eqn for eqn in program.eqns for var in eqn.outputs}
    context.values = {id(var): value for var, value in zip(program.inputs, inputs)}

    def step(eqn, ins):
        outs = compute(eqn, ins)
        for var, out in zip(eqn.outputs, outs):
            context.values[id(var)] = out
            if isinstance(out, Enclosure):
                if record is not None:
                    record[id(var)] = out.coefficients[0]
                if ranges is not None and id(var) in ranges:
                    out.bound = ranges[id(var)]
        return outs

    def compute(eqn, ins):
        if not any(isinstance(v, (Enclosure, Undecided)) for v in ins):
            outs = eqn.prim.bind(*ins, **eqn.params)
            return [np.asarray(o) for o in outs] if eqn.prim.multiple_results else [np.asarray(outs)]
        if any(is_complex(var.aval.dtype) for var in eqn.outputs) or any(
                is_complex(np.asarray(v).dtype) for v in ins if not isinstance(v, (Enclosure, Undecided))):
            raise UnsupportedError(
                f"adarray.bounds does not support complex values: the primitive '{eqn.prim.name}' (used in "
                f"'{context.name}') computes {', '.join(str(v.aval) for v in eqn.outputs)} from a value that "
                "depends on x; Taylor enclosures are real intervals (bound the real and imaginary parts as "
                "real functions instead)")
        rule = eqn.prim.enclosure
        if rule is None:
            raise UnsupportedError(
                f"adarray.bounds has no enclosure rule for the primitive '{eqn.prim.name}' (used in "
                f"'{context.name}'); register one with adarray.bounds.register_enclosure({eqn.prim.name}_p, rule): "
                "for an elementwise map, rule(center, lower, upper, degree) returns its degree + 1 Taylor "
                "coefficients at center, the last an interval (lo, hi) valid on [lower, upper]")
        return rule(context, eqn, ins)

    try:
        return walk(program, list(inputs), step)
    finally:
        context.definitions, context.values = outer, outer_values


# --- registration ----------------------------------------------------------------------------------------

def register_enclosure(primitive, rule) -> None:
    """Give `primitive` an enclosure rule for adarray.bounds.

    For an elementwise map of one operand, `rule(center, lower, upper, degree)` returns degree + 1
    Taylor coefficients at `center` (arrays shaped like it, or (lo, hi) pairs), the last an interval
    (lo, hi) with f(y) - sum_{i<k} c_i (y - center)^i in [lo, hi] (y - center)^k for y in [lower, upper]
    (the rule is trusted to be sound; it is not rounded). Any other primitive takes the low-level
    form ``rule(context, eqn, inputs) -> list of outputs`` on enclosures (see adarray/bounds/rules.py).

    >>> register_enclosure(my_exp_p, lambda c, lo, hi, k: ...)  # doctest: +SKIP
    """
    if not isinstance(primitive, Primitive):
        raise TypeError(f"register_enclosure: expected a Primitive (e.g. adarray.primitives.elementwise.exp_p), "
                        f"got {type(primitive).__name__}")
    if not callable(rule):
        raise TypeError(f"register_enclosure: the rule for '{primitive.name}' must be callable")
    if primitive.elementwise and _arity(primitive) == 1:
        primitive.enclosure = elementwise_rule(_user_rule(rule))
    else:
        primitive.enclosure = rule


def _arity(primitive) -> int:
    """How many operands an elementwise primitive takes (1 for the maps of one operand)."""
    scalar = Aval((), np.float64)
    for count in (1, 2, 3):
        try:
            primitive.abstract_eval(*[scalar] * count)
            return count
        except Exception:  # noqa: BLE001 - probing the shape rule
            continue
    return 0


def _user_rule(rule):
    def wrapped(iv, y0, y, degree):
        out = rule(y0, y[0], y[1], degree)
        if len(out) != degree + 1:
            raise UnsupportedError(f"an enclosure rule returned {len(out)} coefficients for degree {degree}")
        result = []
        for c in out:
            if isinstance(c, tuple):
                result.append((np.broadcast_to(np.asarray(c[0], np.float64), y0.shape),
                               np.broadcast_to(np.asarray(c[1], np.float64), y0.shape)))
            else:
                c = np.broadcast_to(np.asarray(c, np.float64), y0.shape)
                result.append((c, c))
        return result

    return wrapped


def elementwise_rule(one_dimensional):
    """A primitive rule from a 1-D enclosure rule (elementwise.py): compose it with the operand."""
    def rule(context: Context, eqn, inputs):
        (x,) = inputs
        return [context.arith.compose(context.enclose(x), one_dimensional)]

    return rule


def series_rule(series, pieces: int = 1):
    return elementwise_rule(monotone_rule(series, pieces))
