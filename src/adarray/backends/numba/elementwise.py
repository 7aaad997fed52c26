"""Elementwise primitives on the Numba backend: one scalar expression per element (scalar.py), inlined
into whatever reads it. `select` writes both sides, as NumPy's `where` computes both.

Complex operands are compiled for the maps that Numba computes exactly as NumPy does (sums, products, negation,
comparisons, selects, |z| by hypot, conversions into complex); the others (division, transcendental functions,
whose algorithms differ in the last bits and at inf and NaN) run on the NumPy backend."""
from __future__ import annotations

import numpy as np

from ...primitives import elementwise as ew
from . import scalar
from .table import PLAIN, elemental, plain_dtypes

COMPLEX = frozenset(np.dtype(t) for t in (np.complex64, np.complex128))
COMPLEX_EXACT = frozenset({ew.add_p, ew.sub_p, ew.mul_p, ew.neg_p, ew.eq_p, ew.ne_p, ew.select_p, ew.stop_gradient_p,
                           ew.safe_mul_p, ew.abs_p, ew.convert_p})


def supports(eqn) -> bool:
    """Plain dtypes, or complex ones for the maps in COMPLEX_EXACT (a conversion only into complex)."""
    if plain_dtypes(eqn):
        return True
    if eqn.prim not in COMPLEX_EXACT:
        return False
    if not all(np.dtype(a.aval.dtype) in PLAIN | COMPLEX for a in (*eqn.inputs, *eqn.outputs)):
        return False
    return eqn.prim is not ew.convert_p or np.dtype(eqn.outputs[0].aval.dtype) in COMPLEX

# Work per element, an add counting 1: a libm call costs about 20 adds on this machine (exp 4 ns,
# tanh 20 ns against 0.2 ns for an add in a vectorised loop).
TRANSCENDENTAL_COST = 20.0


def _cost(eqn) -> float:
    return TRANSCENDENTAL_COST if eqn.prim in scalar.TRANSCENDENTAL else 1.0


@elemental(*scalar.ELEMENTWISE, cost=_cost, supports=supports)
def _elementwise(em, eqn, index):
    args = [em.read(atom, index) for atom in eqn.inputs]
    return [scalar.expression(eqn.prim, args, eqn.outputs[0].aval.dtype, eqn.params)]
