"""The arithmetic maps of primitives/arithmetic.py on the Numba backend: one scalar expression per
element, inlined like the other elementwise primitives (elementwise.py).

NumPy's scalar functions on Numba scalars keep float32 float32 and follow NumPy at NaN, inf, -0.0
and a zero divisor, except fmod of integers, which Numba computes as Python's %: it is written
out (C's remainder, with the sign of the dividend; 0 for a zero divisor, as NumPy's). frexp has no
scalar form in Numba: math.frexp gives the same exponent (a float32 widens to float64 exactly).
cbrt is libm's, within a few ulp of NumPy's.

    >>> _TEMPLATES[arithmetic.fmod_p]
    'np.fmod({0}, {1})'
"""
from __future__ import annotations

import numpy as np

from ...primitives import arithmetic
from . import scalar
from .elementwise import TRANSCENDENTAL_COST
from .table import elemental

_TEMPLATES = {
    arithmetic.cbrt_p: "np.cbrt({0})",
    arithmetic.fmod_p: "np.fmod({0}, {1})",
    arithmetic.nextafter_p: "np.nextafter({0}, {1})",
    arithmetic.ldexp_p: "np.ldexp({0}, {1})",
    arithmetic.signbit_p: "np.signbit({0})",
    arithmetic.gcd_p: "np.gcd({0}, {1})",
    arithmetic.lcm_p: "np.lcm({0}, {1})",
    arithmetic.frexp_exponent_p: "math.frexp({0})[1]",
}
_EXPENSIVE = {arithmetic.cbrt_p, arithmetic.fmod_p, arithmetic.gcd_p, arithmetic.lcm_p}


def _cost(eqn) -> float:
    return TRANSCENDENTAL_COST if eqn.prim in _EXPENSIVE else 1.0


@elemental(*_TEMPLATES, cost=_cost)
def _arithmetic(em, eqn, index):
    args = [em.read(atom, index) for atom in eqn.inputs]
    dtype = np.dtype(eqn.outputs[0].aval.dtype)
    if eqn.prim is arithmetic.fmod_p and dtype.kind in "iu":
        text = _integer_fmod(em, *(em.let(a) for a in args))
    else:
        text = _TEMPLATES[eqn.prim].format(*args)
    if dtype == np.bool_:
        return [f"bool({text})"]
    return [text if dtype in (np.dtype(np.float64), np.dtype(np.int64)) else f"{scalar.type_name(dtype)}({text})"]


def _integer_fmod(em, a, b) -> str:
    """C's remainder (the sign of a; 0 for a zero divisor, as NumPy's) from Python's (the sign of b),
    which is what Numba computes for np.fmod and % on integers."""
    floored = em.let(f"({a} % {b}) if {b} != 0 else 0")
    return f"({floored} - {b} if ({floored} != 0 and ({floored} < 0) != ({a} < 0)) else {floored})"
