"""Regression: simplify keyed its tables by id() of Vars it created and then dropped (a rescaled
product that CSE merged with an earlier one). A later Var at the same address inherited the dropped
one's replacement, and the simplified program computed something else (found through odeint's
Runge-Kutta stages, whose products by constants rescale)."""
import numpy as np

from adarray.backends.numpy import compile_program
from adarray.core.types import Aval
from adarray.passes import simplify
from adarray.primitives import elementwise as ew
from adarray.tracing import trace_program


def _many_rescaled_products(x, y):
    total = None
    for i in range(50):
        first = ew.mul(ew.mul(x, 2.0 + i), 3.0)
        again = ew.mul(ew.mul(x, 2.0 + i), 3.0)  # (x * c1) * c2 once more: CSE drops the rescaled Var
        other = ew.mul(ew.mul(y, 5.0 + i), 7.0 + i)
        negated = ew.sub(0.0, ew.sub(0.0, other))  # negate creates Vars too
        term = ew.add(ew.add(first, again), negated)
        total = term if total is None else ew.add(total, term)
    return total


def test_simplify_keeps_the_values_when_it_drops_vars_it_created():
    program, _, _ = trace_program(_many_rescaled_products, [Aval((2,), np.float64)] * 2, "f")
    x, y = np.array([1.0, 2.0]), np.array([-1.0, 0.5])
    expected = sum(2 * (2.0 + i) * 3.0 * x + (5.0 + i) * (7.0 + i) * y for i in range(50))
    np.testing.assert_allclose(compile_program(program)(x, y)[0], expected, rtol=1e-14)
    np.testing.assert_allclose(compile_program(simplify(program))(x, y)[0], expected, rtol=1e-14)
