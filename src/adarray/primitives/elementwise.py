"""Elementwise primitives: unary and binary maps, comparisons, logic, select, convert.

Operands of a binary primitive have equal shapes and dtypes (adarray.numpy does
broadcasting and promotion first); a Python scalar operand takes the shape and
dtype of the other one. The binder functions here (`add`, `exp`, ...) are the
math namespace that derivative rules are written in.

Here too are the rule kind and the helpers that bind these primitives: `elementwise(prim, partials)`
(jvp and vjp from scalar partials), `add_tangents`, and the masked cotangents of reverse mode
(`Masked`, `masked`, `instantiate`); rules.py gathers them with the other kinds.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import REGISTRY, Primitive, Zero, is_zero
from ..core.types import Aval, is_complex, is_float
from .kinds import FROM_JVP, aval_of_value, linear, nondifferentiable, zero_derivative, zeros
from .scalar import HOLOMORPHIC, register_partials, register_singular_points
from .structural import batch_elementwise

# --- symbolic zeros and masked cotangents (they add and select) ------------------------------------

def instantiate(value, aval: Aval | None = None):
    """Turn a symbolic zero into a (zero-strided) array, a masked cotangent into its select; pass
    anything else through."""
    if is_zero(value):
        return zeros(value.aval if aval is None else aval)
    if isinstance(value, Masked):
        return value.materialize()
    return value


def add_tangents(a, b):
    """Sum of two tangents or cotangents, skipping symbolic zeros. Two masked cotangents stay masked: by
    the same mask, or by the union of theirs (a value used in both branches of a select is zero by
    structure where neither branch is taken)."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    if isinstance(a, Masked) and isinstance(b, Masked):
        if a.keep is b.keep:
            return Masked(a.keep, add(a.value, b.value))
        return Masked(logical_or(a.keep, b.keep), add(a.materialize(), b.materialize()))
    return add(instantiate(a), instantiate(b))


class Masked:
    """A cotangent that the program's structure proves zero where `keep` is False: the branch a select
    (where) does not take, the slots a scatter overwrites, the elements a max does not pick. Reverse
    mode only (transforms/vjp.py): the rule of an elementwise primitive is applied to `value` and its
    results keep the mask, so the mask sinks through the product with the partial derivative,
    select(c, g, 0) * p -> select(c, g * p, 0), and an infinite or NaN partial in the untaken branch
    never meets the zero. Everywhere else (other primitives, the inputs' cotangents) it becomes
    select(keep, value, 0). Only derivative rules make one, so a user's `where(c, g, 0) * p` keeps
    NumPy's value (NaN where p is inf). A zero cotangent that is merely computed follows IEEE: 0 * inf
    is NaN.
    """

    __slots__ = ("keep", "value")

    def __init__(self, keep, value):
        self.keep, self.value = keep, value

    @property
    def aval(self) -> Aval:
        return aval_of_value(self.value)

    def materialize(self):
        aval = aval_of_value(self.value)
        return select(self.keep, self.value, zeros(aval))


def masked(keep, cotangent):
    """`cotangent` zero where `keep` is False, by structure (None and symbolic zeros pass through)."""
    if cotangent is None or is_zero(cotangent):
        return cotangent
    if isinstance(cotangent, Masked):
        return Masked(logical_and(keep, cotangent.keep), cotangent.value)
    return Masked(keep, cotangent)


def elementwise(prim, partials, singular: bool = False) -> None:
    """The rule kind of a map with scalar partials: jvp sum_i partial_i * t_i; vjp ct * partial_i.
    Zeros are skipped (a partial may be None: zero). `partials(m, *primals, output, **params)` gets
    this module as `m`, the math namespace.

    With `singular` (partials may be infinite or NaN), the forward products are `safe_mul`: 0
    wherever the tangent is 0, since a direction that does not move an input does not move the
    output (forward and Taylor mode agree on it). The guard looks at the tangent alone, inside one
    primitive with its own derivative rules, so a partial or a tangent that merely vanishes at a
    point keeps its derivative there (forward over forward stays right). Reverse products are plain
    IEEE products, 0 * inf = NaN: a cotangent that is zero by structure (the branch a select does
    not take) is a `Masked` cotangent, whose mask the transformation sinks through this product.
    """
    namespace = sys.modules[__name__]

    def jvp(tangents, primals, output, **params):
        parts = partials(namespace, *primals, output, **params)
        total = Zero(aval_of_value(output))
        for part, tangent in zip(parts, tangents):
            if not is_zero(tangent) and part is not None:
                total = add_tangents(total, safe_mul(tangent, part) if singular else mul(tangent, part))
        return total

    def vjp(cotangent, primals, output, needs, **params):
        parts = partials(namespace, *primals, output, **params)
        return [mul(cotangent, part) if need and part is not None else None for part, need in zip(parts, needs)]

    prim.jvp, prim.vjp = jvp, vjp
    prim.taylor = FROM_JVP  # exact; the common maps get hand recurrences (elementwise_taylor.py)



def _same_shape_rule(prim, *, floats_only=False, result_dtype=None):
    name = prim.name

    def abstract_eval(*avals, **params):
        first = avals[0]
        for other in avals[1:]:
            if other.shape != first.shape or other.dtype != first.dtype:
                raise ShapeError(
                    f"{name}: operands {', '.join(map(str, avals))} differ in shape or dtype"
                )
        if floats_only and not is_float(first.dtype):
            raise ShapeError(f"{name}: needs floating-point operands, got {first}")
        if is_complex(first.dtype) and prim not in HOLOMORPHIC and prim not in COMPLEX_OPERANDS:
            raise ShapeError(f"{name}: is not defined for complex operands, got {first} (no silent cast to real: "
                             "take anp.real, anp.imag or anp.abs first)")
        return first.update(dtype=result_dtype) if result_dtype else first

    return abstract_eval


def _shaped(name, **checks):
    """A primitive whose shape rule is `_same_shape_rule(prim, **checks)`."""
    prim = Primitive(name, None)
    prim.abstract_eval = _same_shape_rule(prim, **checks)
    return prim


def _unary(name, rule_kind):
    prim = _shaped(name, floats_only=name not in ("neg", "abs", "sign"))
    rule_kind(prim)

    def bind(x):
        return prim.bind(x)

    bind.__name__ = name
    return prim, bind


def _coerce(x, y):
    """Give a Python or 0-d NumPy scalar operand the shape and dtype of the other operand."""
    x_aval, y_aval = aval_of_value(x), aval_of_value(y)
    if _is_python_scalar(x) and not _is_python_scalar(y):
        x = np.broadcast_to(np.asarray(x, y_aval.dtype), y_aval.shape)
    elif _is_python_scalar(y) and not _is_python_scalar(x):
        y = np.broadcast_to(np.asarray(y, x_aval.dtype), x_aval.shape)
    return x, y


def _is_python_scalar(value) -> bool:
    return isinstance(value, (int, float, bool, complex)) and not hasattr(value, "aval")


def _binary(name, rule_kind, *, floats_only=False, result_dtype=None):
    prim = _shaped(name, floats_only=floats_only, result_dtype=result_dtype)
    rule_kind(prim)

    def bind(x, y):
        return prim.bind(*_coerce(x, y))

    bind.__name__ = name
    return prim, bind


def _partials(formula, *, singular=False, holomorphic=False):
    """The rule kind of a map whose scalar partials are `formula`: registered in the table of scalar
    partials (scalar.register_partials), and the jvp and vjp made from it (`elementwise`)."""
    def apply(prim):
        register_partials(prim, formula, singular=singular, holomorphic=holomorphic)
        elementwise(prim, formula, singular=singular)

    return apply


# --- linear maps --------------------------------------------------------------------------------

def _add_transpose(ct, avals):
    return [ct, ct]


def _sub_transpose(ct, avals):
    return [ct, neg(ct) if not isinstance(ct, Zero) else ct]


def _neg_transpose(ct, avals):
    return [neg(ct)]


add_p, add = _binary("add", lambda p: linear(p, _add_transpose))
sub_p, sub = _binary("sub", lambda p: linear(p, _sub_transpose))
neg_p, neg = _unary("neg", lambda p: linear(p, _neg_transpose))


# A symbolic zero operand is skipped, never added or subtracted as a literal 0: x + 0.0 is not x
# where x is -0.0, so the simplifier may not remove it.
def _add_jvp(tangents, primals, output):
    return add_tangents(*tangents)


def _sub_jvp(tangents, primals, output):
    ta, tb = tangents
    if isinstance(tb, Zero):
        return ta
    return neg(tb) if isinstance(ta, Zero) else sub(ta, tb)


def _add_taylor(series, output):
    return [add_tangents(a, b) for a, b in zip(series[0][1:], series[1][1:])]


def _sub_taylor(series, output):
    return [_sub_jvp((a, b), None, None) for a, b in zip(series[0][1:], series[1][1:])]


add_p.jvp, sub_p.jvp, add_p.taylor, sub_p.taylor = _add_jvp, _sub_jvp, _add_taylor, _sub_taylor

# --- maps with scalar partials (the table of primitives/scalar.py) -----------------------------------
# Each map's partials(m, x, out) or partials(m, a, b, out), written once. Conventions at non-smooth points
# (documented in the README): abs'(0) = 0 (sign), floor/ceil/round/sign have zero derivative; maximum and
# minimum give the whole derivative to the first argument at a tie, matching the "lowest index wins" policy
# of the reductions; pow: d/da a**b is 0 where b == 0, d/db a**b is 0 where a**b == 0. `singular`: a partial
# can be infinite or NaN (a pole, or outside the domain); `holomorphic`: the partials are f'(z) for complex z.

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
LN2, LN10 = math.log(2.0), math.log(10.0)
# sinc'(x) = x * sum_k SINC_SERIES[k] x^(2k) near 0, where (cos(pi x) - sinc(x)) / x cancels: the
# terms (-1)^k pi^(2k) 2k / (2k+1)! of the series of sin(pi x) / (pi x), k = 1..7 (truncation error
# below 1e-16 relative for |x| < 0.1, where the closed form has lost less than 1e-13).
SINC_SERIES = tuple((-1) ** k * math.pi ** (2 * k) * 2 * k / math.factorial(2 * k + 1) for k in range(1, 8))


def _pow_partials(m, a, b, out):
    # safe_mul: b * a**(b - 1) is 0 where b == 0 even at a == 0 (a**0 is constant). At a == 0, where
    # a**b is constant (0) in b, log(a) is replaced by log(1) = 0: a literal -inf in the derivative
    # program would turn every later cotangent into NaN (inf * 0) under reverse mode.
    safe_a = m.select(m.eq(a, 0.0), m.full_like(a, 1.0), a)
    return m.safe_mul(b, m.pow(a, m.sub(b, 1.0))), m.safe_mul(out, m.log(safe_a))


def _sinc_partials(m, x, out):
    small = m.lt(m.abs(x), 0.1)
    square = m.mul(x, x)
    series = m.full_like(x, SINC_SERIES[-1])
    for coefficient in reversed(SINC_SERIES[:-1]):
        series = m.add(m.mul(series, square), coefficient)
    safe_x = m.select(small, m.full_like(x, 1.0), x)
    closed = m.div(m.sub(m.cos(m.mul(x, math.pi)), out), safe_x)
    return (m.select(small, m.mul(x, series), closed),)


def _hypot_partials(m, a, b, out):
    safe = m.select(m.eq(out, 0.0), m.full_like(out, 1.0), out)  # 0 at the origin: a subgradient
    return m.div(a, safe), m.div(b, safe)


def _arctan2_partials(m, a, b, out):
    return m.div(b, m.add(m.mul(a, a), m.mul(b, b))), m.neg(m.div(a, m.add(m.mul(a, a), m.mul(b, b))))


exp_p, exp = _unary("exp", _partials(lambda m, x, out: (out,), holomorphic=True))
log_p, log = _unary("log", _partials(lambda m, x, out: (m.div(1.0, x),), singular=True, holomorphic=True))
log1p_p, log1p = _unary("log1p", _partials(lambda m, x, out: (m.div(1.0, m.add(x, 1.0)),), singular=True,
                                           holomorphic=True))
expm1_p, expm1 = _unary("expm1", _partials(lambda m, x, out: (m.add(out, 1.0),), holomorphic=True))
sqrt_p, sqrt = _unary("sqrt", _partials(lambda m, x, out: (m.div(0.5, out),), singular=True, holomorphic=True))
sin_p, sin = _unary("sin", _partials(lambda m, x, out: (m.cos(x),), holomorphic=True))
cos_p, cos = _unary("cos", _partials(lambda m, x, out: (m.neg(m.sin(x)),), holomorphic=True))
tan_p, tan = _unary("tan", _partials(lambda m, x, out: (m.add(m.mul(out, out), 1.0),), singular=True,
                                     holomorphic=True))
arcsin_p, arcsin = _unary("arcsin", _partials(lambda m, x, out: (m.div(1.0, m.sqrt(m.sub(1.0, m.mul(x, x)))),),
                                              singular=True, holomorphic=True))
arccos_p, arccos = _unary("arccos", _partials(lambda m, x, out: (m.div(-1.0, m.sqrt(m.sub(1.0, m.mul(x, x)))),),
                                              singular=True, holomorphic=True))
arctan_p, arctan = _unary("arctan", _partials(lambda m, x, out: (m.div(1.0, m.add(m.mul(x, x), 1.0)),),
                                              holomorphic=True))
sinh_p, sinh = _unary("sinh", _partials(lambda m, x, out: (m.cosh(x),), holomorphic=True))
cosh_p, cosh = _unary("cosh", _partials(lambda m, x, out: (m.sinh(x),), holomorphic=True))
tanh_p, tanh = _unary("tanh", _partials(lambda m, x, out: (m.sub(1.0, m.mul(out, out)),), holomorphic=True))
logistic_p, logistic = _unary("logistic", _partials(lambda m, x, out: (m.mul(out, m.sub(1.0, out)),)))
erf_p, erf = _unary("erf", _partials(lambda m, x, out: (m.mul(TWO_OVER_SQRT_PI, m.exp(m.neg(m.mul(x, x)))),),
                                     holomorphic=True))
abs_p, abs = _unary("abs", _partials(lambda m, x, out: (m.sign(x),)))
arcsinh_p, arcsinh = _unary("arcsinh", _partials(lambda m, x, out: (m.div(1.0, m.sqrt(m.add(m.mul(x, x), 1.0))),),
                                                 holomorphic=True))
arccosh_p, arccosh = _unary("arccosh", _partials(
    lambda m, x, out: (m.div(1.0, m.mul(m.sqrt(m.sub(x, 1.0)), m.sqrt(m.add(x, 1.0)))),),
    singular=True, holomorphic=True))
arctanh_p, arctanh = _unary("arctanh", _partials(lambda m, x, out: (m.div(1.0, m.mul(m.sub(1.0, x), m.add(x, 1.0))),),
                                                 singular=True, holomorphic=True))
log2_p, log2 = _unary("log2", _partials(lambda m, x, out: (m.div(1.0 / LN2, x),), singular=True, holomorphic=True))
log10_p, log10 = _unary("log10", _partials(lambda m, x, out: (m.div(1.0 / LN10, x),), singular=True,
                                           holomorphic=True))
exp2_p, exp2 = _unary("exp2", _partials(lambda m, x, out: (m.mul(out, LN2),), holomorphic=True))
sinc_p, sinc = _unary("sinc", _partials(_sinc_partials, holomorphic=True))
sign_p, sign = _unary("sign", zero_derivative)
floor_p, floor = _unary("floor", zero_derivative)
ceil_p, ceil = _unary("ceil", zero_derivative)
round_p, round = _unary("round", zero_derivative)
div_p, div = _binary("div", _partials(lambda m, a, b, out: (m.div(1.0, b), m.neg(m.div(out, b))), singular=True,
                                      holomorphic=True), floats_only=True)
pow_p, pow = _binary("pow", _partials(_pow_partials, singular=True, holomorphic=True), floats_only=True)
arctan2_p, arctan2 = _binary("arctan2", _partials(_arctan2_partials, singular=True), floats_only=True)
logaddexp_p, logaddexp = _binary("logaddexp", _partials(
    lambda m, a, b, out: (m.exp(m.sub(a, out)), m.exp(m.sub(b, out)))), floats_only=True)
# (a - rem(a, b)) / b is an integer up to rounding: round it (floor would drop to the integer below).
rem_p, rem = _binary("rem", _partials(
    lambda m, a, b, out: (m.full_like(a, 1.0), m.neg(m.round(m.div(m.sub(a, out), b)))), singular=True),
    floats_only=True)
hypot_p, hypot = _binary("hypot", _partials(_hypot_partials, singular=True), floats_only=True)
mul_p, mul = _binary("mul", _partials(lambda m, a, b, out: (b, a), holomorphic=True))
maximum_p, maximum = _binary("maximum", _partials(
    lambda m, a, b, out: (m.convert_like(m.ge(a, b), a), m.convert_like(m.lt(a, b), a))))
minimum_p, minimum = _binary("minimum", _partials(
    lambda m, a, b, out: (m.convert_like(m.le(a, b), a), m.convert_like(m.gt(a, b), a))))


# maximum and minimum are selects (ties to the first argument, as their partials above): the tangent
# of the argument that loses is not taken, and its cotangent is zero by structure (masked), so an infinite
# derivative behind the losing argument never meets a 0.
def _choice_rules(first_wins):
    def jvp(tangents, primals, output):
        ta, tb = tangents
        if isinstance(ta, Zero) and isinstance(tb, Zero):
            return ta
        return select(first_wins(*primals), instantiate(ta), instantiate(tb))

    def vjp(cotangent, primals, output, needs):
        first = first_wins(*primals)
        return [masked(first, cotangent) if needs[0] else None,
                masked(logical_not(first), cotangent) if needs[1] else None]

    return jvp, vjp


maximum_p.jvp, maximum_p.vjp = _choice_rules(lambda a, b: ge(a, b))
minimum_p.jvp, minimum_p.vjp = _choice_rules(lambda a, b: le(a, b))
floor_divide_p, floor_divide = _binary("floor_divide", zero_derivative)

# --- safe_mul: x * y, but exactly 0 wherever x == 0, even where y is infinite or NaN -------------
# The product of a tangent (x) with a partial derivative that may be singular (y), in forward and Taylor
# mode: a zero tangent contributes 0 (reverse mode multiplies as IEEE does, rules.elementwise). The guard
# is on x alone and lives inside the primitive, so its derivatives are the product rule's, also where x
# or y merely vanish at a point.


def _safe_mul_jvp(tangents, primals, output):
    (tx, ty), (x, y) = tangents, primals
    total = Zero(aval_of_value(output))
    if not isinstance(tx, Zero):
        total = add_tangents(total, safe_mul(tx, y))
    if not isinstance(ty, Zero):
        total = add_tangents(total, safe_mul(x, ty))
    return total


def _safe_mul_vjp(cotangent, primals, output, needs):
    x, y = primals  # reverse products are IEEE (see rules.elementwise)
    return [mul(cotangent, y) if needs[0] else None, mul(cotangent, x) if needs[1] else None]


safe_mul_p, safe_mul = _binary("safe_mul", lambda p: None, floats_only=True)
safe_mul_p.jvp, safe_mul_p.vjp = _safe_mul_jvp, _safe_mul_vjp

# --- integer powers: x**n with a static integer n (exact, and no log at x = 0) -----------------

integer_pow_p = Primitive("integer_pow", lambda x, *, n: x)


def _integer_pow_partials(m, x, out, *, n):
    if n == 0:  # x**0 is 1 for every x, NaN and inf included: a symbolic zero derivative
        return (None,)
    if n == 1:
        return (m.full_like(x, 1.0),)
    return (m.mul(float(n), x if n == 2 else integer_pow(x, n - 1)),)


elementwise(integer_pow_p, _integer_pow_partials, singular=True)


def integer_pow(x, n: int):
    return integer_pow_p.bind(x, n=int(n))


# --- stop_gradient: the identity, with zero derivative ------------------------------------------

stop_gradient_p = _shaped("stop_gradient")
zero_derivative(stop_gradient_p)


def stop_gradient(x):
    return stop_gradient_p.bind(x)


# --- comparisons and logic (boolean results, never differentiated) -----------------------------

eq_p, eq = _binary("eq", nondifferentiable, result_dtype=np.bool_)
ne_p, ne = _binary("ne", nondifferentiable, result_dtype=np.bool_)
lt_p, lt = _binary("lt", nondifferentiable, result_dtype=np.bool_)
le_p, le = _binary("le", nondifferentiable, result_dtype=np.bool_)
gt_p, gt = _binary("gt", nondifferentiable, result_dtype=np.bool_)
ge_p, ge = _binary("ge", nondifferentiable, result_dtype=np.bool_)
logical_and_p, logical_and = _binary("logical_and", nondifferentiable)
logical_or_p, logical_or = _binary("logical_or", nondifferentiable)
logical_xor_p, logical_xor = _binary("logical_xor", nondifferentiable)
logical_not_p = _shaped("logical_not")
nondifferentiable(logical_not_p)
isfinite_p = _shaped("isfinite", floats_only=True, result_dtype=np.bool_)
nondifferentiable(isfinite_p)


# The primitives here whose shape rule accepts complex operands besides the holomorphic maps (scalar.HOLOMORPHIC);
# the others (ordering, rounding) raise ShapeError on them. abs of a complex operand is real, with its own rules
# (primitives/complex.py).
COMPLEX_OPERANDS = frozenset({add_p, sub_p, neg_p, abs_p, integer_pow_p, safe_mul_p, stop_gradient_p, eq_p, ne_p,
                              isfinite_p})


def logical_not(x):
    return logical_not_p.bind(x)


def isfinite(x):
    return isfinite_p.bind(x)


# --- select: where(pred, x, y) -----------------------------------------------------------------

def _select_abstract_eval(pred, x, y):
    if pred.dtype != np.bool_:
        raise ShapeError(f"select: the condition must be boolean, got {pred}")
    if not (pred.shape == x.shape == y.shape) or x.dtype != y.dtype:
        raise ShapeError(f"select: operands {pred}, {x}, {y} differ in shape or dtype")
    return x


select_p = Primitive("select", _select_abstract_eval)


def _select_jvp(tangents, primals, output, **params):
    _, tx, ty = tangents
    if isinstance(tx, Zero) and isinstance(ty, Zero):
        return tx
    pred = primals[0]
    return select(pred, instantiate(tx), instantiate(ty))


def _select_vjp(cotangent, primals, output, needs):
    """The cotangent of the branch not taken is zero by structure: masked (rules.Masked), so the
    partials of that branch's operations never multiply it (no 0 * inf = NaN from the untaken branch)."""
    pred = primals[0]
    return [
        None,
        masked(pred, cotangent) if needs[1] else None,
        masked(logical_not(pred), cotangent) if needs[2] else None,
    ]


select_p.jvp, select_p.vjp = _select_jvp, _select_vjp


def select(pred, x, y):
    if _is_python_scalar(x) and _is_python_scalar(y):
        x = np.asarray(x)
    x, y = _coerce(x, y)
    return select_p.bind(pred, x, y)


# --- dtype conversion ---------------------------------------------------------------------------

def _convert_abstract_eval(x, *, dtype):
    return x.update(dtype=dtype)


convert_p = Primitive("convert", _convert_abstract_eval)


def _convert_jvp(tangents, primals, output, *, dtype):
    (tangent,) = tangents
    if isinstance(tangent, Zero) or not is_float(dtype):
        return Zero(aval_of_value(output))
    return convert(tangent, dtype)


def _convert_vjp(cotangent, primals, output, needs, *, dtype):
    source = aval_of_value(primals[0])
    if not is_float(source.dtype) or not is_float(dtype):
        return [None]
    return [convert(cotangent, source.dtype)]


convert_p.jvp, convert_p.vjp = _convert_jvp, _convert_vjp


def convert(x, dtype):
    dtype = np.dtype(dtype)
    if aval_of_value(x).dtype == dtype:
        return x
    return convert_p.bind(x, dtype=dtype)


# --- helpers of the math namespace --------------------------------------------------------------

def full_like(x, value):
    aval = aval_of_value(x)
    return np.broadcast_to(np.asarray(value, aval.dtype), aval.shape)


def zeros_like(x):
    return full_like(x, 0)


def convert_like(x, like):
    return convert(x, aval_of_value(like).dtype)


# Sampling domains for the generated rule tests: primitive -> (low, high).
DOMAINS = {
    log_p: (0.2, 3.0), sqrt_p: (0.2, 3.0), log1p_p: (-0.5, 3.0), arcsin_p: (-0.8, 0.8),
    arccos_p: (-0.8, 0.8), tan_p: (-1.2, 1.2), pow_p: (0.3, 2.5), div_p: (0.5, 2.0),
    rem_p: (0.5, 2.0), arccosh_p: (1.2, 3.0), arctanh_p: (-0.8, 0.8), log2_p: (0.2, 3.0), log10_p: (0.2, 3.0),
}
# Where a partial is infinite, NaN or undefined (scalar.SINGULAR_POINTS): the generated rule tests check there
# that forward and reverse mode agree.
_HALF_PI = math.pi / 2.0
for _prim, _points in {
    sqrt_p: [((0.0,), {})], log_p: [((0.0,), {})], log2_p: [((0.0,), {})], log10_p: [((0.0,), {})],
    log1p_p: [((-1.0,), {})], tan_p: [((_HALF_PI,), {}), ((-_HALF_PI,), {})],
    arcsin_p: [((1.0,), {}), ((-1.0,), {})], arccos_p: [((1.0,), {}), ((-1.0,), {})],
    arctanh_p: [((1.0,), {}), ((-1.0,), {})], arccosh_p: [((1.0,), {})],
    abs_p: [((0.0,), {})], sign_p: [((0.0,), {})], sinc_p: [((0.0,), {})],
    div_p: [((1.0, 0.0), {}), ((0.0, 0.0), {}), ((-2.0, 0.0), {})],
    pow_p: [((0.0, 0.5), {}), ((0.0, 2.0), {}), ((0.0, 0.0), {}), ((0.0, -1.0), {}), ((0.0, 1.0), {})],
    integer_pow_p: [((0.0,), {"n": -1}), ((0.0,), {"n": -2}), ((0.0,), {"n": 0}), ((0.0,), {"n": 3})],
    arctan2_p: [((0.0, 0.0), {})], hypot_p: [((0.0, 0.0), {})], rem_p: [((1.0, 0.0), {})],
    maximum_p: [((1.0, 1.0), {})], minimum_p: [((1.0, 1.0), {})],
}.items():
    register_singular_points(_prim, *_points)


def _sampler(prim, arity):
    low, high = DOMAINS.get(prim, (-2.0, 2.0))

    def sample(rng):
        cases = []
        for shape in [(), (3,), (2, 3), (0, 2)]:
            args = [rng.uniform(low, high, shape) for _ in range(arity)]
            cases.append((args, {}))
        return cases

    return sample


for _prim in (
    neg_p, stop_gradient_p, sign_p, floor_p, ceil_p, round_p, exp_p, log_p, log1p_p, expm1_p, sqrt_p, sin_p,
    cos_p, tan_p, arcsin_p, arccos_p, arctan_p, sinh_p, cosh_p, tanh_p, logistic_p, erf_p, abs_p, arcsinh_p,
    arccosh_p, arctanh_p, log2_p, log10_p, exp2_p, sinc_p,
):
    _prim.sample = _sampler(_prim, 1)
for _prim in (
    add_p, sub_p, mul_p, maximum_p, minimum_p, floor_divide_p, div_p, pow_p, arctan2_p, logaddexp_p, rem_p,
    hypot_p,
):
    _prim.sample = _sampler(_prim, 2)
safe_mul_p.sample = lambda rng: [
    ([np.array([0.0, 1.5, -0.5, 0.0, 2.0]), rng.uniform(-2.0, 2.0, 5)], {}),
    ([rng.uniform(-2.0, 2.0, (2, 3)), rng.uniform(-2.0, 2.0, (2, 3))], {}),
    ([np.zeros((0, 2)), np.zeros((0, 2))], {}),
]
integer_pow_p.sample = lambda rng: [([rng.normal(size=(3,))], {"n": n}) for n in (0, 1, 2, 3, -2)]
for _prim in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    _prim.sample = lambda rng: [([rng.normal(size=(4,)), np.array([0.5, -1.0, 0.0, 2.0])], {})]
for _prim in (logical_and_p, logical_or_p, logical_xor_p):
    _prim.sample = lambda rng: [([rng.normal(size=(4,)) > 0, rng.normal(size=(4,)) > 0], {})]
logical_not_p.sample = lambda rng: [([rng.normal(size=(3,)) > 0], {})]
isfinite_p.sample = lambda rng: [([np.array([1.0, np.inf, np.nan, -2.0])], {})]
select_p.sample = lambda rng: [
    ([rng.normal(size=(4,)) > 0, rng.normal(size=(4,)), rng.normal(size=(4,))], {})
]
convert_p.sample = lambda rng: [([rng.normal(size=(3,))], {"dtype": np.dtype(np.float32)})]

for _prim in list(REGISTRY.values()):
    if _prim.name not in ("convert",) and _prim.abstract_eval.__qualname__.startswith("_same_shape_rule"):
        _prim.elementwise = True
select_p.elementwise = convert_p.elementwise = integer_pow_p.elementwise = True
for _prim in list(REGISTRY.values()):
    if _prim.elementwise:
        batch_elementwise(_prim)

__all__ = [name for name in dir() if not name.startswith("_")]
