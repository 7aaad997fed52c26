"""Enclosure rules of the elementwise and structural primitives (installed in their `enclosure` slots).

Functions are recognised however they trace: softplus is ``logaddexp(x, 0)``, relu is
``select(gt(x, 0), x, 0)`` (a max), swish ``mul(x, logistic(x))``, square ``integer_pow[n=2]``;
each gets its own sharp one-dimensional enclosure. maximum(a, b) = a + relu(b - a),
minimum(a, b) = a - relu(a - b), logaddexp(a, b) = a + softplus(b - a): exact identities, so the
kink and softplus enclosures apply. A `where` whose condition is decided over the box takes its
branch; an undecided element encloses both branches.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.errors import UnsupportedError
from ..core.ir import Literal
from ..primitives import arithmetic, special
from ..primitives import elementwise as ew
from ..primitives import structural as st
from .elementwise import FUNCTIONS
from .enclosure import Enclosure
from .interpreter import Undecided, decided, elementwise_rule, truth
from .powers import power_rule


def install_enclosure(prim, rule):
    prim.enclosure = rule


# --- linear and bilinear arithmetic ------------------------------------------------------------------------

def _add(context, eqn, ins):
    a, b = ins
    return [context.arith.add(context.enclose(a), context.enclose(b))]


def _sub(context, eqn, ins):
    a, b = ins
    return [context.arith.sub(context.enclose(a), context.enclose(b))]


def _neg(context, eqn, ins):
    return [context.arith.neg(context.enclose(ins[0]))]


def _scale_by_constant(context, enclosure, constant):
    constant = np.asarray(constant, np.float64)
    return context.arith.scale(enclosure, (constant, constant))


def _is_logistic_of(context, atom, other):
    eqn = context.defining(atom)
    return eqn is not None and eqn.prim is ew.logistic_p and eqn.inputs[0] is other


def _mul(context, eqn, ins):
    a, b = ins
    x, y = eqn.inputs
    if _is_logistic_of(context, y, x) or _is_logistic_of(context, x, y):  # swish: x * logistic(x)
        operand = ins[0] if _is_logistic_of(context, y, x) else ins[1]
        return [context.arith.compose(context.enclose(operand), FUNCTIONS["swish"])]
    if not isinstance(a, Enclosure):
        return [_scale_by_constant(context, b, a)]
    if not isinstance(b, Enclosure):
        return [_scale_by_constant(context, a, b)]
    if x is y:  # x * x: the sharp square
        return [context.arith.compose(a, power_rule(2))]
    return [context.arith.mul(a, b)]


def _div(context, eqn, ins):
    a, b = ins
    if not isinstance(b, Enclosure):
        inverse = context.iv.reciprocal(context.range(b))
        return [context.arith.scale(context.enclose(a), inverse)]
    reciprocal = context.arith.compose(b, power_rule(-1))
    return [context.arith.mul(context.enclose(a), reciprocal) if isinstance(a, Enclosure)
            else _scale_by_constant(context, reciprocal, a)]


def _integer_pow(context, eqn, ins, *, n=None):
    n = eqn.params["n"] if n is None else n
    x = context.enclose(ins[0])
    if n == 0:
        return [context.arith.constant(np.ones(x.shape))]
    if n == 1:
        return [x]
    return [context.arith.compose(x, power_rule(n))]


def _pow(context, eqn, ins):
    a, b = ins
    if not isinstance(b, Enclosure):
        exponent = np.asarray(b, np.float64)
        if exponent.size and np.all(exponent == exponent.reshape(-1)[0]):
            p = float(exponent.reshape(-1)[0])
            if p.is_integer():
                return _integer_pow(context, eqn, [a], n=int(p))
            return [context.arith.compose(context.enclose(a), power_rule(p))]
    # a^b = exp(b log a)
    logarithm = context.arith.compose(context.enclose(a), FUNCTIONS["log"])
    exponent = context.arith.mul(context.enclose(b), logarithm) if isinstance(b, Enclosure) else \
        _scale_by_constant(context, logarithm, b)
    return [context.arith.compose(exponent, FUNCTIONS["exp"])]


def _scaled_input(factor, rule_name):
    """f(x) = rule(factor * x): exp2."""
    def rule(context, eqn, ins):
        x = context.arith.scale(context.enclose(ins[0]), context.iv.constant(factor))
        return [context.arith.compose(x, FUNCTIONS[rule_name])]

    return rule


def _scaled_output(factor, rule_name):
    """f(x) = factor * rule(x): log2, log10."""
    def rule(context, eqn, ins):
        y = context.arith.compose(context.enclose(ins[0]), FUNCTIONS[rule_name])
        return [context.arith.scale(y, context.iv.constant(factor))]

    return rule


# --- kinks: maximum, minimum and relu written as a select --------------------------------------------------

def _relu(context, enclosure):
    return context.arith.compose(enclosure, FUNCTIONS["relu"])


def maximum(context, a, b):
    """max(a, b) = a + relu(b - a) (around the constant if there is one: no dependency); exact, and the
    elements decided over the box take their winner."""
    if not isinstance(b, Enclosure):
        a, b = b, a
    arith = context.arith
    ea, eb = context.enclose(a), context.enclose(b)
    ra, rb = context.range(a), context.range(b)
    exact = (np.maximum(ra[0], rb[0]), np.maximum(ra[1], rb[1]))  # the range of the max, from the ranges
    if context.degree == 0:
        return arith.interval_constant(exact)
    with np.errstate(invalid="ignore"):
        a_wins, b_wins = ra[0] >= rb[1], rb[0] >= ra[1]
        general = arith.add(ea, _relu(context, arith.sub(eb, ea)))
    result = _where_enclosures(context, a_wins, ea, _where_enclosures(context, b_wins, eb, general))
    return Enclosure(result.coefficients, result.shape, bound=exact)


def minimum(context, a, b):
    return context.arith.neg(maximum(context, context.arith.neg(context.enclose(a)),
                                     context.arith.neg(context.enclose(b))))


def _maximum(context, eqn, ins):
    return [maximum(context, *ins)]


def _minimum(context, eqn, ins):
    return [minimum(context, *ins)]


def _where_enclosures(context, mask, a: Enclosure, b: Enclosure) -> Enclosure:
    """Element by element: a where mask (a constant boolean array), else b."""
    mask = np.asarray(mask, bool)
    if not mask.any():
        return b
    if mask.all():
        return a
    out = []
    for i, (x, y) in enumerate(zip(a.coefficients, b.coefficients)):
        if x is None and y is None:
            out.append(None)
            continue
        shape = a.shape + (context.arith.n,) * i
        x = x if x is not None else (np.zeros(shape), np.zeros(shape))
        y = y if y is not None else (np.zeros(shape), np.zeros(shape))
        m = mask.reshape(mask.shape + (1,) * i)
        out.append((np.where(m, x[0], y[0]), np.where(m, x[1], y[1])))
    return Enclosure(out, a.shape)


def _same_atom(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, Literal) and isinstance(b, Literal):
        return a.uniform is not None and a.uniform == b.uniform and a.aval == b.aval
    return False


def _select(context, eqn, ins):
    pred, a, b = ins
    comparison = context.defining(eqn.inputs[0])
    if isinstance(pred, Undecided) and comparison is not None and comparison.prim in _ORDERS:
        p, q = comparison.inputs
        x, y = eqn.inputs[1], eqn.inputs[2]
        larger_first = comparison.prim in (ew.gt_p, ew.ge_p)  # pred: p > q
        if _same_atom(x, p) and _same_atom(y, q):  # select(p > q, p, q) = max(p, q)
            return [maximum(context, a, b) if larger_first else minimum(context, a, b)]
        if _same_atom(x, q) and _same_atom(y, p):
            return [minimum(context, a, b) if larger_first else maximum(context, a, b)]
    maybe_true, maybe_false = truth(pred)
    if isinstance(a, Enclosure) or isinstance(b, Enclosure):
        ea, eb = context.enclose(a), context.enclose(b)
        both = context.arith.hull(ea, eb)
        return [_where_enclosures(context, maybe_true & ~maybe_false, ea,
                                  _where_enclosures(context, maybe_false & ~maybe_true, eb, both))]
    # constant branches, undecided condition: an interval constant
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    lo = np.where(maybe_true & maybe_false, np.minimum(a, b), np.where(maybe_true, a, b))
    hi = np.where(maybe_true & maybe_false, np.maximum(a, b), np.where(maybe_true, a, b))
    return [context.arith.interval_constant((lo, hi))]


# --- comparisons and logic ------------------------------------------------------------------------------

def _order_rule(strict: bool, less: bool):
    def rule(context, eqn, ins):
        a, b = (context.range(v) for v in ins)
        if not less:  # a > b is b < a
            a, b = b, a
        with np.errstate(invalid="ignore"):
            always = a[1] < b[0] if strict else a[1] <= b[0]
            never = a[0] >= b[1] if strict else a[0] > b[1]
        return [decided(~never, ~always)]

    return rule


def _equal_rule(negate: bool):
    def rule(context, eqn, ins):
        a, b = (context.range(v) for v in ins)
        point = (a[0] == a[1]) & (b[0] == b[1]) & (a[0] == b[0])
        apart = (a[1] < b[0]) | (b[1] < a[0])
        maybe_true, maybe_false = ~apart, ~point
        return [decided(maybe_false, maybe_true) if negate else decided(maybe_true, maybe_false)]

    return rule


def _logical(combine):
    def rule(context, eqn, ins):
        (t1, f1), (t2, f2) = truth(ins[0]), truth(ins[1])
        return [decided(*combine(t1, f1, t2, f2))]

    return rule


def _logical_not(context, eqn, ins):
    maybe_true, maybe_false = truth(ins[0])
    return [decided(maybe_false, maybe_true)]


def _isfinite(context, eqn, ins):
    lo, hi = context.range(ins[0])
    finite = np.isfinite(lo) & np.isfinite(hi)
    return [decided(np.ones_like(finite), ~finite)]


def _convert(context, eqn, ins):
    (x,) = ins
    dtype = np.dtype(eqn.params["dtype"])
    if isinstance(x, Undecided):
        if dtype == np.bool_:
            return [x]
        lo = np.where(x.maybe_false, 0.0, 1.0)
        hi = np.where(x.maybe_true, 1.0, 0.0)
        if np.issubdtype(dtype, np.floating):
            return [context.arith.interval_constant((lo, hi))]
        return [x]
    if np.issubdtype(dtype, np.floating):
        return [x]
    raise UnsupportedError(f"adarray.bounds: converting a value that depends on x to {dtype} in '{context.name}'")


def _exp_operand(context, atom):
    """The operand x if `atom` is exp(x) in the program, else None."""
    eqn = context.defining(atom)
    return eqn.inputs[0] if eqn is not None and eqn.prim is ew.exp_p else None


def _softplus_of(context, atom):
    """x if `atom` is 1 + exp(x) or exp(x) + 1 in the program (log of it is softplus(x)), else None."""
    eqn = context.defining(atom)
    if eqn is not None and eqn.prim is ew.add_p:
        for one, other in (eqn.inputs, eqn.inputs[::-1]):
            if isinstance(one, Literal) and one.uniform == 1.0 and _exp_operand(context, other) is not None:
                return _exp_operand(context, other)
    return None


def _log1p(context, eqn, ins):
    """log1p(exp(x)) is softplus(x): its sharp enclosure, not the composition's."""
    operand = _exp_operand(context, eqn.inputs[0])
    if operand is not None and context.value(operand) is not None:
        return [context.arith.compose(context.enclose(context.value(operand)), FUNCTIONS["softplus"])]
    return [context.arith.compose(context.enclose(ins[0]), FUNCTIONS["log1p"])]


def _log(context, eqn, ins):
    """log(1 + exp(x)) is softplus(x)."""
    operand = _softplus_of(context, eqn.inputs[0])
    if operand is not None and context.value(operand) is not None:
        return [context.arith.compose(context.enclose(context.value(operand)), FUNCTIONS["softplus"])]
    return [context.arith.compose(context.enclose(ins[0]), FUNCTIONS["log"])]


def _identity(context, eqn, ins):
    return [ins[0]]


_ORDERS = (ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p)


def _logaddexp(context, eqn, ins):
    """log(e^a + e^b) = a + softplus(b - a) (or c + softplus(g - c) around a constant c)."""
    a, b = ins
    if not isinstance(a, Enclosure):
        a, b = b, a
    arith = context.arith
    base = context.enclose(b) if not isinstance(b, Enclosure) else context.enclose(a)
    other = context.enclose(a) if not isinstance(b, Enclosure) else context.enclose(b)
    return [arith.add(base, arith.compose(arith.sub(other, base), FUNCTIONS["softplus"]))]


# --- structural maps (both bounds of every coefficient; the trailing dx axes ride along) ----------------------

def _structural(shape_of, function):
    """A rule from `shape_of(operand shape, params)` and `function(array, operand shape, params)`, where the
    array has the operand's shape followed by trailing dx axes, which the function keeps."""
    def rule(context, eqn, ins):
        params = eqn.params
        if isinstance(ins[0], Undecided):  # a boolean that depends on x: move both masks
            maybe_true, maybe_false = ins[0].maybe_true, ins[0].maybe_false
            return [decided(function(maybe_true, maybe_true.shape, params),
                            function(maybe_false, maybe_false.shape, params))]
        x = context.enclose(ins[0])
        shape = tuple(shape_of(x.shape, params))
        return [context.arith.map_bounds(x, lambda arr, i: function(arr, x.shape, params), shape)]

    return rule


def _broadcast(arr, shape, params):
    trailing = arr.shape[len(shape):]
    expanded = [1] * len(params["shape"])
    for axis, d in enumerate(params["dims"]):
        expanded[d] = shape[axis]
    return np.broadcast_to(arr.reshape(tuple(expanded) + trailing), tuple(params["shape"]) + trailing)


def _unslice(arr, shape, params):
    out = np.zeros(tuple(params["shape"]) + arr.shape[len(shape):])
    out[st.slice_indices(params["starts"], params["stops"], params["steps"])] = arr
    return out


def _window(params):
    return st.slice_indices(params["starts"], params["stops"], params["steps"])


def _install_structural():
    install_enclosure(st.reshape_p, _structural(lambda shape, p: p["shape"],
                                       lambda arr, shape, p: arr.reshape(tuple(p["shape"]) + arr.shape[len(shape):])))
    install_enclosure(st.broadcast_in_dim_p, _structural(lambda shape, p: p["shape"], _broadcast))
    install_enclosure(st.transpose_p, _structural(
        lambda shape, p: [shape[a] for a in p["perm"]],
        lambda arr, shape, p: arr.transpose(tuple(p["perm"]) + tuple(range(len(shape), arr.ndim)))))
    install_enclosure(st.slice_p, _structural(
        lambda shape, p: st.slice_shape(shape, p["starts"], p["stops"], p["steps"]),
        lambda arr, shape, p: arr[_window(p)]))
    install_enclosure(st.unslice_p, _structural(lambda shape, p: p["shape"], _unslice))
    install_enclosure(st.concatenate_p, _concatenate)


def _concatenate(context, eqn, ins):
    axis = eqn.params["axis"]
    if any(isinstance(v, Undecided) for v in ins):
        masks = [truth(v) for v in ins]
        return [decided(np.concatenate([m[0] for m in masks], axis), np.concatenate([m[1] for m in masks], axis))]
    parts = [context.enclose(v) for v in ins]
    shape = list(parts[0].shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    out = []
    for i in range(context.degree + 1):
        if all(p.coefficients[i] is None for p in parts):
            out.append(None)
            continue
        pieces = [p.coefficients[i] if p.coefficients[i] is not None else
                  (np.zeros(p.shape + (context.arith.n,) * i),) * 2 for p in parts]
        out.append((np.concatenate([q[0] for q in pieces], axis), np.concatenate([q[1] for q in pieces], axis)))
    return [Enclosure(out, tuple(shape))]


# --- installation -----------------------------------------------------------------------------------------

def install() -> None:
    for prim, rule in [
        (ew.add_p, _add), (ew.sub_p, _sub), (ew.neg_p, _neg), (ew.mul_p, _mul), (ew.safe_mul_p, _mul),
        (ew.div_p, _div), (ew.integer_pow_p, _integer_pow), (ew.pow_p, _pow), (ew.maximum_p, _maximum),
        (ew.minimum_p, _minimum), (ew.select_p, _select), (ew.logaddexp_p, _logaddexp),
        (ew.stop_gradient_p, _identity), (ew.log1p_p, _log1p), (ew.log_p, _log), (ew.convert_p, _convert),
        (ew.isfinite_p, _isfinite),
        (ew.lt_p, _order_rule(True, True)), (ew.le_p, _order_rule(False, True)),
        (ew.gt_p, _order_rule(True, False)), (ew.ge_p, _order_rule(False, False)),
        (ew.eq_p, _equal_rule(False)), (ew.ne_p, _equal_rule(True)), (ew.logical_not_p, _logical_not),
        (ew.logical_and_p, _logical(lambda t1, f1, t2, f2: (t1 & t2, f1 | f2))),
        (ew.logical_or_p, _logical(lambda t1, f1, t2, f2: (t1 | t2, f1 & f2))),
        (ew.logical_xor_p, _logical(lambda t1, f1, t2, f2: ((t1 & f2) | (f1 & t2), (t1 & t2) | (f1 & f2)))),
        (ew.exp2_p, _scaled_input(math.log(2.0), "exp")),
        (ew.log2_p, _scaled_output(1.0 / math.log(2.0), "log")),
        (ew.log10_p, _scaled_output(1.0 / math.log(10.0), "log")),
    ]:
        install_enclosure(prim, rule)
    for prim, name in ((ew.exp_p, "exp"), (ew.expm1_p, "expm1"), (ew.sqrt_p, "sqrt"), (ew.sin_p, "sin"),
                       (ew.cos_p, "cos"), (ew.sinh_p, "sinh"), (ew.cosh_p, "cosh"), (ew.tanh_p, "tanh"),
                       (ew.logistic_p, "logistic"), (ew.arctan_p, "arctan"), (ew.erf_p, "erf"), (ew.abs_p, "abs"),
                       (ew.floor_p, "floor"), (ew.ceil_p, "ceil"), (ew.round_p, "round"), (ew.sign_p, "sign"),
                       (arithmetic.cbrt_p, "cbrt")):
        install_enclosure(prim, elementwise_rule(FUNCTIONS[name]))
    install_enclosure(special.erfc_p, _erfc)
    _install_structural()


def _erfc(context, eqn, ins):
    """erfc = 1 - erf."""
    erf = context.arith.compose(context.enclose(ins[0]), FUNCTIONS["erf"])
    one = context.arith.constant(np.ones(erf.shape))
    return [context.arith.sub(one, erf)]


__all__ = ["install", "maximum", "minimum"]
