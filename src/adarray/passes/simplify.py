"""simplify: constant folding, algebraic identities and common-subexpression
elimination in one forward walk, then dead-code elimination.

A simplified program computes, element for element, the values the program
computes (NaN, inf and the sign of zero included), so `jit` never changes what
NumPy would give; the one exception is the folding of constant factors below,
a reassociation. The identities are therefore only those exact for every IEEE
input:
  x * 1, 1 * x, x / 1, x - 0.0, x + (-0.0), (-0.0) + x, x**1 -> x;
  (-0.0) - x -> -x; -(-x) -> x; a reshape to its operand's shape -> x, of a
  reshape -> one reshape; select(p, x, x) -> x; a select with a constant
  predicate picks its branch; a sum, cumulative sum or data movement of +0.0 is
  +0.0; safe_mul(0, y) -> 0 (its definition).
Not x * 0 -> 0 (inf * 0 is NaN), x + 0.0 -> x (-0.0 + 0.0 is 0.0), 0.0 - x -> -x
(0.0 - 0.0 is 0.0, -(0.0) is -0.0), x - x -> 0, x / x -> 1, nor an einsum with a
zero operand -> 0. Derivative programs do not need them: the zeros that
differentiation creates are symbolic (`Zero`), never multiplied in.
The reassociation: (x * c1) * c2 -> x * (c1 c2) for constants c1, c2 (it can
round differently, or not overflow where the product of three did).
Constant inputs fold through any primitive (evaluated by NumPy, the reference,
with its IEEE results); constant-filled inputs of elementwise primitives fold at
no cost whatever their size.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ExecutionError
from ..core.ir import Eqn, Literal, Program, Var, params_key
from ..core.types import is_complex, is_float
from ..primitives import elementwise as ew
from ..primitives import indexing, reduce, scan, structural
from ..primitives.operations import OPERATIONS
from ..tracing import evaluate
from ..tracing.tracer import CONSTANT_LIMIT  # non-uniform constants fold up to this size, in and out
from .dce import eliminate_dead_code

# Maps that move the values of their first operand (or pad them with +0.0): of +0.0 they give +0.0.
_MOVES_FIRST = frozenset({structural.reshape_p, structural.transpose_p, structural.broadcast_in_dim_p,
                          structural.slice_p, structural.unslice_p, indexing.gather_p})
_MULTIPLICATIVE = frozenset({ew.mul_p, ew.div_p, ew.safe_mul_p})


def simplify(program: Program) -> Program:
    """Return an equivalent program without foldable, redundant or dead equations."""
    return eliminate_dead_code(_Simplifier().run(program))


class _Simplifier:
    def __init__(self):
        self.replaced: dict[int, object] = {}
        self.seen: dict[tuple, tuple] = {}
        self.negated: dict[int, object] = {}  # id(b) -> a for every kept `b = neg a`
        self.inverted: dict[int, object] = {}  # id(b) -> a for every kept `b = logical_not a`
        self.reshaped: dict[int, object] = {}  # id(b) -> a for every kept `b = reshape a`
        self.scaled: dict[int, tuple] = {}  # id(b) -> (a, c) for every kept `b = mul a c`, c a constant
        self.eqns: list[Eqn] = []
        # The tables above are keyed by id(): a Var created here (rescale, negate) whose equation CSE
        # drops must stay alive, or a later Var reusing its address would inherit its replacement.
        self.created: list[Var] = []

    def subst(self, atom):
        return self.replaced.get(id(atom), atom) if isinstance(atom, Var) else atom

    def run(self, program: Program) -> Program:
        for eqn in program.eqns:
            inputs = tuple(self.subst(a) for a in eqn.inputs)
            result = _fold(eqn, inputs) or self.identity(eqn, inputs)
            if result is not None:
                for var, value in zip(eqn.outputs, result):
                    self.replaced[id(var)] = value
                continue
            self.keep(Eqn(eqn.prim, inputs, eqn.params, eqn.outputs))
        outputs = tuple(self.subst(a) for a in program.outputs)
        return Program(program.inputs, tuple(self.eqns), outputs)

    def keep(self, eqn: Eqn) -> None:
        key = (eqn.prim, tuple(_atom_key(a) for a in eqn.inputs), params_key(eqn.params))
        if key in self.seen:
            for var, previous in zip(eqn.outputs, self.seen[key]):
                self.replaced[id(var)] = previous
            return
        self.seen[key] = eqn.outputs
        if eqn.prim is ew.neg_p:
            self.negated[id(eqn.outputs[0])] = eqn.inputs[0]
        if eqn.prim is ew.logical_not_p:
            self.inverted[id(eqn.outputs[0])] = eqn.inputs[0]
        if eqn.prim is structural.reshape_p:
            self.reshaped[id(eqn.outputs[0])] = eqn.inputs[0]
        if eqn.prim is ew.mul_p:
            base, factor = _split_constant(*eqn.inputs)
            if base is not None:
                self.scaled[id(eqn.outputs[0])] = (base, factor)
        self.eqns.append(eqn)

    def rescale(self, inputs, out):
        """(a * c1) * c2 -> a * (c1 c2): consecutive constant factors fold into one."""
        variable, factor = _split_constant(*inputs)
        if variable is None or id(variable) not in self.scaled:
            return None
        base, inner = self.scaled[id(variable)]
        combined = Var(out.aval)
        self.created.append(combined)
        constant = Literal(np.asarray(inner * factor, out.aval.dtype), out.aval)
        self.keep(Eqn(ew.mul_p, (base, constant), {}, (combined,)))
        return [self.subst(combined)]

    def product(self, a, b, like: Var):
        out = Var(like.aval)
        self.created.append(out)
        self.keep(Eqn(ew.mul_p, (a, b), {}, (out,)))
        return self.subst(out)

    def negate(self, atom, like: Eqn):
        if isinstance(atom, Var) and id(atom) in self.negated:
            return self.negated[id(atom)]
        out = Var(atom.aval)
        self.created.append(out)
        self.keep(Eqn(ew.neg_p, (atom,), {}, (out,)))
        return self.subst(out)

    def reshape(self, atom, out: Var):
        """reshape(x) to x's shape -> x; reshape(reshape(a)) -> reshape(a) (both move elements in row-major order)."""
        source = self.reshaped.get(id(atom), atom) if isinstance(atom, Var) else atom
        if source.aval.shape == out.aval.shape:
            return [source]
        if source is atom:
            return None
        combined = Var(out.aval)
        self.created.append(combined)
        self.keep(Eqn(structural.reshape_p, (source,), {"shape": out.aval.shape}, (combined,)))
        return [self.subst(combined)]

    def identity(self, eqn: Eqn, inputs):
        """The replacement of a single-output equation by an identity exact for every IEEE input, or None."""
        prim, out = eqn.prim, eqn.outputs[0]
        row = OPERATIONS.get(prim)
        if row is not None and row.arity == 2:
            a, b = inputs
            # complex x * (1 + 0j) is not x where x has an infinite part (0 * inf in the cross terms)
            units = not (is_complex(out.aval.dtype) and prim in _MULTIPLICATIVE)
            if units and row.right_unit is not None and _is_exactly(b, row.right_unit):
                return [a]
            if units and row.left_unit is not None and _is_exactly(a, row.left_unit):
                return [b]
            if prim is ew.sub_p and _is_exactly(a, -0.0):
                return [self.negate(b, eqn)]
            if prim is ew.safe_mul_p and _is(a, 0):  # its definition: 0 wherever the first operand is 0
                return [Literal(np.zeros((), out.aval.dtype), out.aval)]
            if prim is ew.safe_mul_p and (_is_nonzero_constant(a) or _is_finite_constant(b)):
                # the guard of safe_mul(x, y) (0 where x == 0) cannot change x * y here (up to the sign of a
                # zero; safe_mul only appears in derivative programs): a product
                return self.rescale(inputs, out) or [self.product(a, b, out)]
            if prim is ew.mul_p:
                return self.rescale(inputs, out)
            return None
        if prim is ew.neg_p and isinstance(inputs[0], Var) and id(inputs[0]) in self.negated:
            return [self.negated[id(inputs[0])]]
        if prim is ew.integer_pow_p and eqn.params["n"] == 1:
            return [inputs[0]]
        if prim is structural.reshape_p:
            return self.reshape(inputs[0], out)
        if prim is ew.select_p:
            pred, a, b = inputs
            if _atom_key(a) == _atom_key(b):
                return [a]
            if isinstance(pred, Literal) and pred.uniform is not None:
                return [a if pred.uniform else b]
            if isinstance(pred, Var) and id(pred) in self.inverted:  # select(not p, a, b) -> select(p, b, a)
                out_var = Var(out.aval)
                self.created.append(out_var)
                self.keep(Eqn(ew.select_p, (self.inverted[id(pred)], b, a), {}, (out_var,)))
                return [self.subst(out_var)]
        sums = prim in (reduce.reduce_p, scan.scan_p) and eqn.params["op"] == "add"
        if (prim in _MOVES_FIRST or sums) and _is_exactly(inputs[0], 0.0):
            # +0.0 moved, padded with +0.0 or summed is +0.0 (not -0.0: an empty sum of it is +0.0)
            return [Literal(np.zeros((), out.aval.dtype), out.aval)]
        return None


def _split_constant(a, b):
    """(variable, constant) if exactly one operand is a constant-filled literal, else (None, None)."""
    for variable, constant in ((a, b), (b, a)):
        if isinstance(variable, Var) and isinstance(constant, Literal) and constant.uniform is not None:
            return variable, constant.uniform
    return None, None


def _atom_key(atom):
    if isinstance(atom, Var):
        return ("var", id(atom))
    uniform = atom.uniform
    if uniform is not None:
        return ("uniform", repr(uniform), str(atom.aval))  # repr keeps -0.0 apart from 0.0
    return ("literal", id(atom.value))


def _is_nonzero_constant(atom) -> bool:
    return isinstance(atom, Literal) and atom.uniform is not None and atom.uniform != 0


def _is_finite_constant(atom) -> bool:
    return isinstance(atom, Literal) and atom.uniform is not None and bool(np.isfinite(atom.uniform))


def _is_exactly(atom, number) -> bool:
    """Is `atom` a literal filled with `number`, the sign of a floating-point zero included?"""
    if not (isinstance(atom, Literal) and atom.uniform is not None) or atom.uniform != number:
        return False
    if not (is_float(atom.aval.dtype) or is_complex(atom.aval.dtype)):
        return True
    value, wanted = complex(atom.uniform), complex(number)
    return bool(np.signbit(value.real) == np.signbit(wanted.real) and np.signbit(value.imag) == np.signbit(wanted.imag))


def _is(atom, number) -> bool:
    return isinstance(atom, Literal) and atom.uniform is not None and atom.uniform == number


def _fold(eqn: Eqn, inputs):
    """Evaluate an equation whose inputs are all literals, or return None."""
    if not all(isinstance(a, Literal) for a in inputs):
        return None
    uniform = [a.uniform for a in inputs]
    if eqn.prim.elementwise and all(u is not None for u in uniform):
        with np.errstate(all="ignore"):
            value = evaluate(eqn.prim, [np.asarray(u, a.aval.dtype) for u, a in zip(uniform, inputs)], eqn.params)
        return [Literal(np.asarray(value, eqn.outputs[0].aval.dtype), eqn.outputs[0].aval)]
    if eqn.prim in (structural.broadcast_in_dim_p, structural.reshape_p, structural.transpose_p) \
            and uniform[0] is not None:
        return [Literal(np.asarray(uniform[0], inputs[0].aval.dtype), eqn.outputs[0].aval)]
    # Both sides are bounded: a small non-uniform literal broadcast to a batch (a vmapped Jacobian's
    # seed basis) must stay a broadcast at run time, not become a batch-sized constant in the program.
    if sum(a.aval.size for a in inputs) > CONSTANT_LIMIT or sum(v.aval.size for v in eqn.outputs) > CONSTANT_LIMIT:
        return None
    with np.errstate(all="ignore"):
        try:
            value = evaluate(eqn.prim, [a.value for a in inputs], eqn.params)
        except (IndexError, ValueError, ExecutionError):
            return None  # leave it for run time, where the error names the equation
    values = value if eqn.prim.multiple_results else [value]
    return [Literal(np.asarray(v, var.aval.dtype), var.aval) for v, var in zip(values, eqn.outputs)]
