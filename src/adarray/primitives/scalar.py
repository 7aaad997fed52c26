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
  * pow: d/da a**b is 0 where b == 0, d/db a**b is 0 where a == 0.
"""
from __future__ import annotations

import math

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _pow_partials(m, a, b, out):
    safe_a = m.select(m.eq(a, 0.0), m.full_like(a, 1.0), a)
    d_a = m.select(m.eq(b, 0.0), m.full_like(a, 0.0), m.mul(b, m.pow(a, m.sub(b, 1.0))))
    d_b = m.select(m.eq(a, 0.0), m.full_like(a, 0.0), m.mul(out, m.log(safe_a)))
    return d_a, d_b


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
    # (a - out) / b is the quotient, an integer up to rounding: round it (floor would jump by one
    # where rounding lands just below the integer, and a second derivative would see the jump).
    "rem": lambda m, a, b, out: (m.full_like(a, 1.0), m.neg(m.round(m.div(m.sub(a, out), b)))),
}

# Operations whose partials can be infinite or NaN (poles, or outside the domain). Their rules
# multiply by a partial only where the incoming tangent/cotangent is nonzero, so a value masked
# out by `where` (cotangent exactly 0) contributes 0, not 0 * inf = NaN.
SINGULAR = ("log", "log1p", "sqrt", "tan", "arcsin", "arccos", "div", "pow", "arctan2", "rem")

# Operations whose derivative is zero wherever it exists (piecewise constant).
PIECEWISE_CONSTANT = ("sign", "floor", "ceil", "round")
