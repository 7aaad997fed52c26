"""Primitives: one object per operation, holding its rules side by side.

A primitive owns its shape rule (`abstract_eval`) and its transformation rules
(`jvp`, `vjp`, `transpose`, `batch`), or an explicit marker saying why a rule is
absent. Implementations live in the backends, in tables keyed by the primitive object.

Rule signatures (single-output primitives get and return single values, the
others lists; zeros are `Zero` markers):

    jvp(tangents, primals, output, **params) -> output tangent
    vjp(cotangent, primals, output, needs, **params) -> one cotangent per input (None if not needed)
    transpose(cotangent, in_avals, **params) -> one cotangent per input (linear primitives)
    taylor(series, output, **params) -> output series (each series [x_0, x_1, ..., x_K], x_k a value
                                         or Zero for k >= 1: x(t) = sum_k x_k t^k)
"""
from __future__ import annotations

from .errors import UnsupportedError
from .types import Aval

REGISTRY: dict[str, Primitive] = {}


class Marker:
    """Stands in for a rule that is absent on purpose."""

    def __init__(self, kind: str, reason: str = ""):
        self.kind, self.reason = kind, reason

    def __repr__(self) -> str:
        return f"{self.kind}({self.reason})" if self.reason else self.kind


NOT_DIFFERENTIABLE = Marker("not differentiable")


def unsupported(reason: str) -> Marker:
    return Marker("unsupported", reason)


class Zero:
    """A symbolic zero tangent or cotangent of the given aval."""

    __slots__ = ("aval",)

    def __init__(self, aval: Aval):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval})"


def is_zero(value) -> bool:
    return isinstance(value, Zero)


_binder = None  # set by adarray.tracing: (primitive, args, params) -> outputs


def set_binder(binder) -> None:
    global _binder
    _binder = binder


class Primitive:
    """An IR operation. Create with a name and a shape rule, then attach rules.

    The slots are every rule a primitive can have; a transformation reads only these.
    """

    __slots__ = ("name", "abstract_eval", "multiple_results", "jvp", "vjp", "transpose", "batch", "sample",
                 "elementwise", "prune", "forward_with_residuals", "taylor", "enclosure")

    def __init__(self, name: str, abstract_eval, *, multiple_results: bool = False):
        if name in REGISTRY:
            raise ValueError(f"primitive {name!r} is already registered")
        self.name = name
        self.abstract_eval = abstract_eval
        self.multiple_results = multiple_results
        self.jvp = None
        self.vjp = None
        self.transpose = None
        self.batch = None
        self.sample = None  # test sampler: rng -> list of (args, params)
        self.elementwise = False  # a map of a scalar function (lets passes fold uniform literals)
        # Optional, for multiple results: (eqn, used flags) -> an Eqn computing only the used outputs
        # (dead-code elimination calls it; without it an equation runs whole or not at all).
        self.prune = None
        # Optional, for reverse mode: (*inputs, **params) -> (outputs, residuals): the forward sweep
        # computes the outputs and whatever its vjp rule will need (a loop's tape, checkpoints) at once;
        # the vjp rule then gets `residuals=`.
        self.forward_with_residuals = None
        # Taylor mode (transforms/jet.py): taylor(series, outputs, **params) -> output series, a rule kind
        # (primitives/taylor.py), or unsupported(reason). Bounds (adarray.bounds): an enclosure rule.
        self.taylor = None
        self.enclosure = None
        REGISTRY[name] = self

    def bind(self, *args, **params):
        return _binder(self, args, params)

    def rule(self, transformation: str):
        """The rule for a transformation, or raise UnsupportedError naming both."""
        rule = getattr(self, transformation)
        if rule is None:
            raise UnsupportedError(f"primitive '{self.name}' has no {transformation} rule")
        if isinstance(rule, Marker) and rule.kind == "unsupported":
            raise UnsupportedError(f"'{self.name}' does not support {transformation}: {rule.reason}")
        return rule

    def __repr__(self) -> str:
        return self.name
