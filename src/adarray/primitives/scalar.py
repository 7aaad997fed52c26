"""The table of scalar partial derivatives, written once.

Each entry maps an elementwise operation to a function
``partials(m, *inputs, output) -> one partial per input`` where `m` is a math
namespace (array binders for array programs; scalar binders for kernels).
Forward mode, reverse mode and (later) scalar kernels and Taylor mode all read
this table, so a derivative is never written twice.

Conventions at non-smooth points (documented in the README):
  * abs'(0) = 0 (sign), floor/ceil/round/sign have zero derivative;
  * maximum/minimum give the whole derivative to the first argument at a tie,
    matching the "lowest index wins" policy of the reductions;
  * pow: d/da a**b is 0 where b == 0, d/db a**b is 0 where a**b == 0.
"""
from __future__ import annotations

import math

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _pow_partials(m, a, b, out):
    # safe_mul: b * a**(b - 1) is 0 where b == 0 even at a == 0 (a**0 is constant). At a == 0, where
    # a**b is constant (0) in b, log(a) is replaced by log(1) = 0: a literal -inf in the derivative
    # program would turn every later cotangent into NaN (inf * 0) under reverse mode.
    safe_a = m.select(m.eq(a, 0.0), m.full_like(a, 1.0), a)
    return m.safe_mul(b, m.pow(a, m.sub(b, 1.0))), m.safe_mul(out, m.log(safe_a))


PARTIALS = {
    "exp": lambda m, x, out: (out,),
    "log": lambda m, x, out: (m.div(1.0, x),),
    "log1p": lambda m, x, out: (m.div(1.0, m.add(x, 1.0)),),
    "expm1": lambda m, x, out: (m.add(out, 1.0),),
    "sqrt": lambda m, x, out: (m.div(0.5, out),),
    "sin": lambda m, x, out: (m.cos(x),),
    "cos": lambda m, x, out: (m.neg(m.sin(x)),),
    "tan": lambda m, x, out: (m.add(m.mul(out, out), 1.0),),
    "arcsin": lambda m, x, out: (m.div(1.0, m.sqrt(m.sub(1.0, m.mul(x, x)))),),
    "arccos": lambda m, x, out: (m.div(-1.0, m.sqrt(m.sub(1.0, m.mul(x, x)))),),
    "arctan": lambda m, x, out: (m.div(1.0, m.add(m.mul(x, x), 1.0)),),
    "sinh": lambda m, x, out: (m.cosh(x),),
    "cosh": lambda m, x, out: (m.sinh(x),),
    "tanh": lambda m, x, out: (m.sub(1.0, m.mul(out, out)),),
    "logistic": lambda m, x, out: (m.mul(out, m.sub(1.0, out)),),
    "erf": lambda m, x, out: (m.mul(TWO_OVER_SQRT_PI, m.exp(m.neg(m.mul(x, x)))),),
    "abs": lambda m, x, out: (m.sign(x),),
    "mul": lambda m, a, b, out: (b, a),
    "div": lambda m, a, b, out: (m.div(1.0, b), m.neg(m.div(out, b))),
    "pow": _pow_partials,
    "maximum": lambda m, a, b, out: (m.convert_like(m.ge(a, b), a), m.convert_like(m.lt(a, b), a)),
    "minimum": lambda m, a, b, out: (m.convert_like(m.le(a, b), a), m.convert_like(m.gt(a, b), a)),
    "arctan2": lambda m, a, b, out: (
        m.div(b, m.add(m.mul(a, a), m.mul(b, b))),
        m.neg(m.div(a, m.add(m.mul(a, a), m.mul(b, b)))),
    ),
    "logaddexp": lambda m, a, b, out: (m.exp(m.sub(a, out)), m.exp(m.sub(b, out))),
    # (a - rem(a, b)) / b is an integer up to rounding: round it (floor would drop to the integer below).
    "rem": lambda m, a, b, out: (m.full_like(a, 1.0), m.neg(m.round(m.div(m.sub(a, out), b)))),
}

# Operations whose partials can be infinite or NaN (poles, or outside the domain). Their forward
# rules multiply by a partial only where the tangent is nonzero (a direction that does not move the
# input does not move the output); reverse products are IEEE, 0 * inf = NaN, and the branch `where`
# does not take reaches them as a masked cotangent (rules.Masked), never as a multiplied 0.
SINGULAR = ("log", "log1p", "sqrt", "tan", "arcsin", "arccos", "div", "pow", "arctan2", "rem")



# --- special functions (primitives/special.py) ------------------------------------------------------
# There `m` also holds the special binders (digamma, polygamma, xlogy, gammainc_da, betainc_dab, ...).
# The derivatives of the regularized incomplete gamma P(a, x) and beta I_x(a, b) in their shape
# parameters have no closed form: they are primitives of their own (gammainc_da, betainc_dab, with a
# static derivative order) whose own partials are again primitives of the same kind, so the tower closes.

SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0
SQRT_2PI = math.sqrt(2.0 * math.pi)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def exp_derivative(m, g, i: int, j: int = 0):
    """d^i/da^i d^j/db^j exp(g) divided by exp(g), from the mixed partials g(p, q) of g (p + q >= 1).

    Leibniz on d_a^i d_b^j e^g = d_a^(i-1) d_b^j (g_a e^g) (and likewise in b when i = 0): the
    complete Bell polynomials in two variables. Returns None for the empty derivative (i = j = 0: 1).
    """
    table = {(0, 0): None}

    def term(coefficient, factor, rest):
        product = factor if rest is None else m.mul(factor, rest)
        return product if coefficient == 1 else m.mul(float(coefficient), product)

    def total(parts):
        out = parts[0]
        for part in parts[1:]:
            out = m.add(out, part)
        return out

    for p in range(i + 1):
        for q in range(j + 1):
            if (p, q) == (0, 0):
                continue
            if p >= 1:
                parts = [term(math.comb(p - 1, s) * math.comb(q, t), g(s + 1, t), table[(p - 1 - s, q - t)])
                         for s in range(p) for t in range(q + 1)]
            else:
                parts = [term(math.comb(q - 1, t), g(0, t + 1), table[(0, q - 1 - t)]) for t in range(q)]
            table[(p, q)] = total(parts)
    return table[(i, j)]


def gamma_density_da(m, a, x, order: int):
    """d^order/da^order of the gamma density x^(a-1) e^(-x) / Gamma(a): the x-partial of gammainc_da."""
    density = m.exp(m.sub(m.sub(m.xlogy(m.sub(a, 1.0), x), x), m.gammaln(a)))
    log_derivative = lambda p, q: (m.sub(m.log(x), m.digamma(a)) if p == 1
                                   else m.neg(m.polygamma(a, p - 1)))
    factor = exp_derivative(m, log_derivative, order)
    return density if factor is None else m.mul(density, factor)


def beta_density_dab(m, a, b, x, da: int, db: int):
    """d^da/da d^db/db of the beta density x^(a-1) (1-x)^(b-1) / B(a, b): the x-partial of betainc_dab."""
    density = m.exp(m.sub(m.add(m.xlogy(m.sub(a, 1.0), x), m.xlog1py(m.sub(b, 1.0), m.neg(x))), m.betaln(a, b)))
    total = m.add(a, b)

    def log_derivative(p, q):  # mixed partials of (a-1) log x + (b-1) log(1-x) - betaln(a, b)
        if (p, q) == (1, 0):
            return m.add(m.sub(m.log(x), m.digamma(a)), m.digamma(total))
        if (p, q) == (0, 1):
            return m.add(m.sub(m.log1p(m.neg(x)), m.digamma(b)), m.digamma(total))
        shared = m.polygamma(total, p + q - 1)
        if q == 0:
            return m.sub(shared, m.polygamma(a, p - 1))
        if p == 0:
            return m.sub(shared, m.polygamma(b, q - 1))
        return shared

    factor = exp_derivative(m, log_derivative, da, db)
    return density if factor is None else m.mul(density, factor)


def _i1e_partials(m, x, out):
    # i1e' = i0e - i1e (sign x + 1/x); its limit at x = 0 is 1/2 (a removable singularity)
    at_zero = m.eq(x, 0.0)
    safe = m.select(at_zero, m.full_like(x, 1.0), x)
    general = m.sub(m.i0e(x), m.mul(out, m.add(m.sign(x), m.div(1.0, safe))))
    return (m.select(at_zero, m.full_like(x, 0.5), general),)


PARTIALS.update({
    "erfc": lambda m, x, out: (m.mul(-TWO_OVER_SQRT_PI, m.exp(m.neg(m.mul(x, x)))),),
    "erfinv": lambda m, x, out: (m.mul(SQRT_PI_OVER_2, m.exp(m.mul(out, out))),),
    "ndtri": lambda m, x, out: (m.mul(SQRT_2PI, m.exp(m.mul(0.5, m.mul(out, out)))),),
    # phi(x) / Phi(x) = exp(-x^2/2 - log sqrt(2 pi) - log Phi(x)): no overflow or 0/0 in the lower tail
    "log_ndtr": lambda m, x, out: (m.exp(m.sub(m.sub(m.mul(-0.5, m.mul(x, x)), HALF_LOG_2PI), out)),),
    "gammaln": lambda m, x, out: (m.digamma(x),),
    "digamma": lambda m, x, out: (m.polygamma(x, 1),),
    "polygamma": lambda m, x, out, *, order: (m.polygamma(x, order + 1),),
    "i0e": lambda m, x, out: (m.sub(m.i1e(x), m.mul(m.sign(x), out)),),
    "i1e": _i1e_partials,
    # JAX's convention: d/dx x log y = log y and d/dy = x / y, also where x == 0
    "xlogy": lambda m, x, y, out: (m.log(y), m.div(x, y)),
    "xlog1py": lambda m, x, y, out: (m.log1p(y), m.div(x, m.add(y, 1.0))),
    "betaln": lambda m, a, b, out: (m.sub(m.digamma(a), m.digamma(m.add(a, b))),
                                    m.sub(m.digamma(b), m.digamma(m.add(a, b)))),
    "gammainc": lambda m, a, x, out: (m.gammainc_da(a, x, 1), gamma_density_da(m, a, x, 0)),
    "gammaincc": lambda m, a, x, out: (m.neg(m.gammainc_da(a, x, 1)), m.neg(gamma_density_da(m, a, x, 0))),
    "gammainc_da": lambda m, a, x, out, *, order: (m.gammainc_da(a, x, order + 1),
                                                   gamma_density_da(m, a, x, order)),
    "betainc": lambda m, a, b, x, out: (m.betainc_dab(a, b, x, 1, 0), m.betainc_dab(a, b, x, 0, 1),
                                        beta_density_dab(m, a, b, x, 0, 0)),
    "betainc_dab": lambda m, a, b, x, out, *, da, db: (m.betainc_dab(a, b, x, da + 1, db),
                                                       m.betainc_dab(a, b, x, da, db + 1),
                                                       beta_density_dab(m, a, b, x, da, db)),
})
SINGULAR += ("erfinv", "ndtri", "gammaln", "digamma", "polygamma", "xlogy", "xlog1py", "betaln", "gammainc",
             "gammaincc", "gammainc_da", "betainc", "betainc_dab", "i1e")
# --- inverse hyperbolics, base-2/10 logarithms and exponentials, hypot, sinc (adarray.numpy issue 10) ---
LN2, LN10 = math.log(2.0), math.log(10.0)
# sinc'(x) = x * sum_k SINC_SERIES[k] x^(2k) near 0, where (cos(pi x) - sinc(x)) / x cancels: the
# terms (-1)^k pi^(2k) 2k / (2k+1)! of the series of sin(pi x) / (pi x), k = 1..7 (truncation error
# below 1e-16 relative for |x| < 0.1, where the closed form has lost less than 1e-13).
SINC_SERIES = tuple((-1) ** k * math.pi ** (2 * k) * 2 * k / math.factorial(2 * k + 1) for k in range(1, 8))


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


PARTIALS.update({
    "arcsinh": lambda m, x, out: (m.div(1.0, m.sqrt(m.add(m.mul(x, x), 1.0))),),
    "arccosh": lambda m, x, out: (m.div(1.0, m.mul(m.sqrt(m.sub(x, 1.0)), m.sqrt(m.add(x, 1.0)))),),
    "arctanh": lambda m, x, out: (m.div(1.0, m.mul(m.sub(1.0, x), m.add(x, 1.0))),),
    "log2": lambda m, x, out: (m.div(1.0 / LN2, x),),
    "log10": lambda m, x, out: (m.div(1.0 / LN10, x),),
    "exp2": lambda m, x, out: (m.mul(out, LN2),),
    "sinc": _sinc_partials,
    "hypot": _hypot_partials,
})
SINGULAR += ("arccosh", "arctanh", "log2", "log10", "hypot")

# --- singular points: where a partial is infinite, NaN or undefined ---------------------------------------
# name -> [(operands, params)]: poles, branch points and domain edges of the elementwise primitives (of this
# table and of arithmetic.py and special.py). The generated rule tests (tests/test_rules.py) check there that
# jvp along a direction with no zero component equals grad times that direction, or both are NaN.
_HALF_PI = math.pi / 2.0
SINGULAR_POINTS = {
    "sqrt": [((0.0,), {})], "log": [((0.0,), {})], "log2": [((0.0,), {})], "log10": [((0.0,), {})],
    "log1p": [((-1.0,), {})], "tan": [((_HALF_PI,), {}), ((-_HALF_PI,), {})],
    "arcsin": [((1.0,), {}), ((-1.0,), {})], "arccos": [((1.0,), {}), ((-1.0,), {})],
    "arctanh": [((1.0,), {}), ((-1.0,), {})], "arccosh": [((1.0,), {})], "cbrt": [((0.0,), {})],
    "abs": [((0.0,), {})], "sign": [((0.0,), {})], "sinc": [((0.0,), {})], "i1e": [((0.0,), {})],
    "div": [((1.0, 0.0), {}), ((0.0, 0.0), {}), ((-2.0, 0.0), {})],
    "pow": [((0.0, 0.5), {}), ((0.0, 2.0), {}), ((0.0, 0.0), {}), ((0.0, -1.0), {}), ((0.0, 1.0), {})],
    "integer_pow": [((0.0,), {"n": -1}), ((0.0,), {"n": -2}), ((0.0,), {"n": 0}), ((0.0,), {"n": 3})],
    "arctan2": [((0.0, 0.0), {})], "hypot": [((0.0, 0.0), {})], "rem": [((1.0, 0.0), {})],
    "fmod": [((1.0, 0.0), {})], "maximum": [((1.0, 1.0), {})], "minimum": [((1.0, 1.0), {})],
    "gammaln": [((0.0,), {}), ((-1.0,), {})], "digamma": [((0.0,), {}), ((-2.0,), {})],
    "polygamma": [((0.0,), {"order": 1})], "erfinv": [((1.0,), {}), ((-1.0,), {})],
    "ndtri": [((0.0,), {}), ((1.0,), {})], "xlogy": [((0.0, 0.0), {}), ((1.0, 0.0), {})],
    "xlog1py": [((0.0, -1.0), {}), ((1.0, -1.0), {})], "betaln": [((0.0, 1.0), {})],
    "gammainc": [((1.0, 0.0), {})], "gammaincc": [((1.0, 0.0), {})],
}

# --- complex operands (primitives/complex.py) ------------------------------------------------------
# The maps whose partials above are also their complex derivative f'(z): they are holomorphic (on
# the principal branch, where they have a cut), so the same rules serve complex operands under JAX's
# convention (jvp t -> f'(z) t, vjp c -> c f'(z): a linear transpose, no conjugate).
HOLOMORPHIC = ("exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
               "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "log2", "log10", "exp2", "sinc",
               "mul", "div", "pow", "erf")
# Every elementwise primitive that accepts complex operands; the others (ordering, rounding, the real
# special functions) raise ShapeError on them. abs of a complex operand is real, with its own rules.
COMPLEX_OPERANDS = HOLOMORPHIC + ("add", "sub", "neg", "abs", "integer_pow", "safe_mul", "stop_gradient",
                                  "eq", "ne", "isfinite")
