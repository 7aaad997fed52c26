"""Taylor mode: the rule kinds of the `taylor` slot and truncated-series arithmetic for the rules.

A series is a list ``[x_0, x_1, ..., x_K]`` of arrays of one shape (normalised coefficients:
x(t) = sum_k x_k t^k, so x_k = x^(k)(0) / k!); any coefficient may be the symbolic `Zero`. A
primitive's rule maps its input series and its already computed primal output(s) to the higher
coefficients of its output(s):

    taylor(series, output, **params) -> [y_1, ..., y_K]         (one list per output if it has several)

It emits IR through binders, like every rule, so a Taylor program can be differentiated again.
The kinds, as in JAX's jet (most primitives need no hand-written rule):

    linear_taylor(prim)           linear primitives: y_k = prim(x_k)
    ZERO_TAYLOR                   piecewise-constant or integer outputs: y_k = 0
    piecewise_linear_taylor(prim) maps that are linear in the tangent for fixed primals (abs, max,
                                  select, gather, a max-reduction's winner): y_k = jvp(x_k)
    FROM_JVP                      exact for any primitive with a jvp rule: y' = J(x) x', so
                                  y_k = [J(x(t)) x'(t)]_(k-1) / k, the series of the jvp program
                                  (transforms/jet.py); O(K^2) work when the jvp rule does not use the
                                  output, O(K^3) when it does, exponential when it re-binds the
                                  primitive twice (those get hand rules)

A rule may also return FROM_JVP for the params it does not handle itself (reduce[op=mul]).
"""
from __future__ import annotations

from ..core.primitive import Zero, is_zero
from . import elementwise as ew
from .elementwise import instantiate
from .kinds import (  # noqa: F401  (the kinds of the taylor slot, re-exported beside the series arithmetic)
    FROM_JVP,
    ZERO_TAYLOR,
    aval_of_value,
    linear_taylor,
    order_of,
    piecewise_linear_taylor,
    zero_taylor,
)

# --- series arithmetic (Zero-aware) ------------------------------------------------------------------

def add(a, b):
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    return ew.add(a, b)


def sub(a, b):
    if is_zero(b):
        return a
    if is_zero(a):
        return ew.neg(b)
    return ew.sub(a, b)


def mul(a, b):
    if is_zero(a):
        return a
    if is_zero(b):
        return b
    return ew.mul(a, b)


def guarded(a, b):
    """a * b, but exactly 0 wherever a is 0, even where b is infinite or NaN: `a` is built from the
    coefficients of an input's series, zero where the direction does not move that input, and what an
    unmoved input feeds does not move either (forward mode's tangent-guarded product, safe_mul).
    The rules of singular maps (sqrt, log, div, pow, ...) multiply by their singular factors (1 / x_0,
    a pole's output) only through it."""
    if is_zero(a):
        return a
    if is_zero(b):
        return b
    return ew.safe_mul(a, b)


def scale(a, factor: float):
    if is_zero(a) or factor == 1:
        return a
    if factor == 0:
        return Zero(aval_of_value(a))
    return ew.mul(a, float(factor))


def total(terms, aval):
    """The sum of `terms` (Zero if there are none)."""
    result = Zero(aval)
    for term in terms:
        result = add(result, term)
    return result


def cauchy(a, b, k: int, start: int = 0, product=mul, aval=None):
    """sum_{i = start}^{k - start} a_i b_(k - i): the coefficient k of a product (with start = 1, the
    terms that do not involve a_0 or b_0). `aval` is the product's (default: a's)."""
    aval = aval_of_value(a[0]) if aval is None else aval
    return total([product(a[i], b[k - i]) for i in range(start, k - start + 1)], aval)


def series_mul(a, b, product=mul):
    return [cauchy(a, b, k, product=product) for k in range(len(a))]


def series_reciprocal_times(a, b, q0=None):
    """q = a / b: q_k = (a_k - sum_{j=1}^k b_j q_(k-j)) / b_0 (guarded: 0 where neither a nor b moves,
    also where b_0 = 0). `q0` is a_0 / b_0 if already known."""
    q = [ew.div(instantiate(a[0]), b[0]) if q0 is None else q0]
    reciprocal = ew.div(1.0, b[0]) if len(a) > 1 else None
    for k in range(1, len(a)):
        rest = sub(a[k], total([guarded(b[j], q[k - j]) for j in range(1, k + 1)], aval_of_value(b[0])))
        q.append(guarded(rest, reciprocal))
    return q


def integrate(x, d, y0):
    """y with y' = d x' and y(0) = y0, given the series of d to order K - 1:
    y_k = (1/k) sum_{j=1}^k j x_j d_(k-j)."""
    aval = aval_of_value(y0)
    return [y0] + [scale(total([scale(mul(x[j], d[k - j]), j) for j in range(1, k + 1)], aval), 1.0 / k)
                   for k in range(1, len(x))]


def integrate_online(x, y0, derivative):
    """y with y' = d x', where d_m depends on y_0..y_m: `derivative(y, m)` returns d_m from the
    coefficients of y computed so far. O(K^2) products (tanh, logistic, tan)."""
    aval = aval_of_value(y0)
    y, d = [y0], [derivative([y0], 0)]
    for k in range(1, len(x)):
        y.append(scale(total([scale(mul(x[j], d[k - j]), j) for j in range(1, k + 1)], aval), 1.0 / k))
        if k < len(x) - 1:
            d.append(derivative(y, k))
    return y


def exp_series(u, y0):
    """exp(u(t)) with exp(u_0) = y0: y_k = (1/k) sum_{j=1}^k j u_j y_(k-j)."""
    aval = aval_of_value(y0)
    y = [y0]
    for k in range(1, len(u)):
        y.append(scale(total([scale(mul(u[j], y[k - j]), j) for j in range(1, k + 1)], aval), 1.0 / k))
    return y


def log_series(u, y0):
    """log(u(t)) with log(u_0) = y0: y_k = (u_k - (1/k) sum_{j=1}^{k-1} j y_j u_(k-j)) / u_0 (guarded: 0
    where u does not move, also where u_0 = 0)."""
    aval = aval_of_value(y0)
    y = [y0]
    reciprocal = ew.div(1.0, u[0]) if len(u) > 1 else None
    for k in range(1, len(u)):
        rest = sub(u[k], scale(total([scale(mul(y[j], u[k - j]), j) for j in range(1, k)], aval), 1.0 / k))
        y.append(guarded(rest, reciprocal))
    return y


def higher(series):
    """The coefficients 1..K of a full series (what a rule returns)."""
    return list(series[1:])
