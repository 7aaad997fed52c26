"""rv.instruction: a user's own instruction, with a hand-written inverse and (optionally) adjoint, used in
reversible functions like rv.rot.

    @rv.instruction
    def scale(y, s):                       # y <- y exp(s); s unchanged
        return y * anp.exp(s), s

    @scale.definverse
    def _(y, s):
        return y * anp.exp(-s), s

    @scale.defadjoint                      # the inputs' cotangents from the inputs and the outputs' cotangents
    def _(y, s, y_bar, s_bar):
        return y_bar * anp.exp(s), s_bar + y_bar * y * anp.exp(s)

Each rule returns one expression of the reversible language per parameter (in the order of the parameters),
computed from the values before the instruction; the parameters are then updated together. Without
`defadjoint`, the adjoint is derived from the forward expressions. The instruction is one "inst" statement
(ir.py) whose spec holds the expressions, so every backend runs it and every derivative transformation reads it:
the adjoint undoes the instruction with the inverse and then maps the cotangents with the adjoint; the tangent
program runs the tangent instruction (the forward expressions and their derivative, derivatives.tangent_spec),
whose own adjoint follows from the hand-written one, so that second order is again reverse computing.
Outside a reversible function an instruction runs like one: `scale(1.0, 0.5)` returns (exp(0.5), 0.5).
"""
from __future__ import annotations

import ast

import numpy as np

from ..core.errors import ArgumentError
from ..tracing import Tracer
from .derivatives import derived_adjoint
from .ir import expr_text, inverse_name
from .language import Parser, Source
from .primitive import reversible_p
from .specialize import DIFFERENTIABLE, expression_type, kind_of_dtype

_FITS = {"f": ("f", "i"), "c": ("c", "f", "i"), "i": ("i",), "b": ("b",)}  # a parameter's kind <- value kinds


def _parse_rule(fn, what, count=None) -> tuple[list, tuple]:
    """(parameter names, one expression per returned value) of `def rule(...): return e1, e2, ...`, after names
    bound by plain assignments (`c = anp.cos(theta)`, `c, s = anp.cos(t), anp.sin(t)`), which are inlined."""
    source = Source(fn)
    parser = Parser(fn, source)
    body = source.function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    usage = (f"the {what} of an instruction is `return` of one expression per parameter (e.g. `return a * c - b * "
             "s, b * c + a * s, theta`), after plain assignments of names")
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        raise source.error(source.function, usage)
    bound: dict = {}
    for statement in body[:-1]:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            raise source.error(statement, usage)
        target, value = statement.targets[0], statement.value
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        values = value.elts if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) else [value]
        if len(names) != len(values) or not all(isinstance(n, ast.Name) for n in names):
            raise source.error(statement, usage)
        parser.locals |= {n.id for n in names}
        for name, expr in zip(names, values):
            bound[name.id] = _rename(parser.expression(expr), bound)
    value = body[-1].value
    elements = value.elts if isinstance(value, ast.Tuple) else [value]
    if count is not None and len(elements) != count:
        raise source.error(value, f"the {what} returns {len(elements)} values; the instruction has {count} "
                                  "parameters (return every parameter, updated or not)")
    return parser.args, tuple(_rename(parser.expression(e), bound) for e in elements)


def _rename(expr, names):
    """`expr` with the names of `names` replaced (by names, or by expressions where they are read as values)."""
    if isinstance(expr, str):
        return names.get(expr, expr)
    if isinstance(expr, tuple):
        start = 2 if expr[0] in ("index", "len", "shape", "llog") else 1
        head = (expr[0], names.get(expr[1], expr[1])) if start == 2 else (expr[0],)
        return head + tuple(_rename(o, names) for o in expr[start:])
    return expr


class Instruction:
    """A reversible instruction with hand-written rules (see the module docstring)."""

    _is_adarray_reversible = True
    _is_adarray_instruction = True

    def __init__(self, forward):
        if not callable(forward):
            raise ArgumentError(f"@rv.instruction decorates a function, got {type(forward).__name__}")
        self.name = getattr(forward, "__name__", "<instruction>")
        source = Source(forward)
        self.args = [a.arg for a in source.function.args.posonlyargs + source.function.args.args]
        self.count = len(self.args)
        if not self.count:
            raise ArgumentError(f"rv.instruction '{self.name}' needs at least one parameter")
        self.forward = _parse_rule(forward, "forward rule", self.count)[1]
        self.inverse_rule = self.bars = self.adjoint = self.inverse_adjoint = None
        self.check, self.atol = True, 1e-8
        self._inverted = None
        self._programs: dict = {}

    def _rule(self, fn, what, bars=False):
        params, exprs = _parse_rule(fn, what, self.count)
        expected = 2 * self.count if bars else self.count
        if len(params) != expected:
            raise ArgumentError(f"rv.instruction '{self.name}': the {what} takes {expected} parameters ("
                                + ("the values, then one cotangent per value" if bars else "the values") +
                                f"), got {len(params)}")
        names = dict(zip(params[:self.count], self.args))
        extra = tuple(params[self.count:])
        clash = set(extra) & set(self.args)
        if clash:
            raise ArgumentError(f"rv.instruction '{self.name}': the {what} names a cotangent '{sorted(clash)[0]}' "
                                "like a parameter")
        return extra, tuple(_rename(e, names) for e in exprs)

    def definverse(self, fn):
        """Decorator: the inverse rule, `def inverse(params...): return (the values before the instruction)`."""
        self.inverse_rule = self._rule(fn, "inverse")[1]
        return fn

    def defadjoint(self, fn):
        """Decorator: the adjoint rule, `def adjoint(params..., cotangents...)`: from the values before the
        instruction and the cotangents of the values after it, the cotangents of the values before it (the
        transposed Jacobian applied to the cotangents). Integer and boolean parameters get 0.0."""
        self.bars, self.adjoint = self._rule(fn, "adjoint", bars=True)
        return fn

    def definverse_adjoint(self, fn):
        """Decorator (optional): the adjoint of the inverse rule, in the form of defadjoint. Without it, it is
        derived from the inverse expressions."""
        bars, self.inverse_adjoint = self._rule(fn, "inverse adjoint", bars=True)
        if self.bars is not None and bars != self.bars:
            renamed = dict(zip(bars, self.bars))
            self.inverse_adjoint = tuple(_rename(e, renamed) for e in self.inverse_adjoint)
        elif self.bars is None:
            self.bars = bars
        return fn

    # --- the statement's spec -------------------------------------------------------------------------------

    def spec(self) -> tuple:
        if self.inverse_rule is None:
            raise ArgumentError(f"rv.instruction '{self.name}' has no inverse: define it with "
                                f"@{self.name}.definverse")
        bars = self.bars or tuple(f"{a}_bar" for a in self.args)
        while set(bars) & set(self.args):
            bars = tuple(b + "_" for b in bars)
        return (self.name, tuple(self.args), self.forward, self.inverse_rule, bars, self.adjoint,
                self.inverse_adjoint)

    def typed_spec(self, types, fail) -> tuple:
        """The spec checked for parameters of `types` ((kind, rank) each), adjoints derived where not given."""
        name, params, forward, inverse, bars, adjoint, inverse_adjoint = self.spec()
        if len(types) != len(params):
            fail(f"the instruction '{name}' takes {len(params)} arguments ({', '.join(params)}), got {len(types)}")
        table = dict(zip(params, types))
        for param, (kind, _) in table.items():
            if kind not in _FITS:
                fail(f"the instruction '{name}': the argument for '{param}' is a {kind!r} value; instructions take "
                     "floats, complex values, integers and booleans")
        bar_types = {b: (DIFFERENTIABLE.get(k, "f"), r) for b, (k, r) in zip(bars, types)}

        def check(exprs, what, outputs):
            for param, expr in zip(params, exprs):
                kind, rank = expression_type(expr, {**table, **bar_types}, lambda m: fail(f"'{name}' {what}: {m}"))
                want_kind, want_rank = outputs[param]
                if kind not in _FITS.get(want_kind, (want_kind,)) or rank != want_rank:
                    fail(f"the {what} of the instruction '{name}' gives `{expr_text(expr)}` ({kind}, {rank} axes) "
                         f"for '{param}', which is ({want_kind}, {want_rank} axes)")

        check(forward, "forward rule", table)
        check(inverse, "inverse", table)
        cotangent_types = {p: bar_types[b] for p, b in zip(params, bars)}
        if adjoint is None:
            adjoint = derived_adjoint(params, forward, bars, table)
        if inverse_adjoint is None:
            inverse_adjoint = derived_adjoint(params, inverse, bars, table)
        check(adjoint, "adjoint", cotangent_types)
        check(inverse_adjoint, "inverse adjoint", cotangent_types)
        return (name, params, forward, inverse, bars, adjoint, inverse_adjoint)

    # --- as a function --------------------------------------------------------------------------------------

    @property
    def inverse(self) -> Instruction:
        if self._inverted is None:
            other = object.__new__(Instruction)
            other.__dict__.update(self.__dict__)
            other.name = inverse_name(self.name)
            other.forward, other.inverse_rule = self.inverse_rule, self.forward
            other.adjoint, other.inverse_adjoint = self.inverse_adjoint, self.adjoint
            other._inverted, other._programs = self, {}
            self._inverted = other
        return self._inverted

    def program(self, types) -> tuple:
        types = tuple(types)
        program = self._programs.get(types)
        if program is None:
            def fail(message):
                raise ArgumentError(f"rv.instruction '{self.name}': {message}")

            spec = self.typed_spec(types, fail)
            body = (("inst", 0, spec, tuple(self.args)),)
            program = self._programs[types] = ((self.name, tuple(self.args), tuple(
                (a, k, r) for a, (k, r) in zip(self.args, types)), True, 1e-8, body),)
        return program

    def _arguments(self, args, what, keywords=None):
        if keywords:
            raise ArgumentError(f"{what} '{self.name}' takes positional arguments")
        if len(args) != self.count:
            raise ArgumentError(f"{what} '{self.name}' takes {self.count} arguments ({', '.join(self.args)}), got "
                                f"{len(args)}")
        values, types = [], []
        for name, arg in zip(self.args, args):
            value = arg if isinstance(arg, Tracer) else np.asarray(arg)
            kind = kind_of_dtype(value.dtype)
            if kind is None:
                raise ArgumentError(f"{what} '{self.name}': argument '{name}' has dtype {np.dtype(value.dtype)}")
            values.append(value)
            types.append((kind, len(value.shape)))
        return values, self.program(types), [None] * len(values)

    def __call__(self, *args):
        values, program, _ = self._arguments(args, "instruction")
        return tuple(reversible_p.bind(*values, program=program, batch=0))

    def __repr__(self) -> str:
        return f"<reversible instruction {self.name}>"


def instruction(forward) -> Instruction:
    """Decorator: a reversible instruction whose forward rule is `forward` (see the module docstring); give its
    inverse with `.definverse` and, optionally, its adjoint with `.defadjoint`."""
    return Instruction(forward)
