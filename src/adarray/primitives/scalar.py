"""The table of scalar partial derivatives, keyed by the `Primitive` object: its owner.

`PARTIALS[prim]` is ``partials(m, *inputs, output, **params) -> one partial per input``, where `m` is a
math namespace: the array binders of primitives/elementwise.py (so a partial is itself IR), or the
expression builder of the reversible language (reversible/derivatives.py). Each primitive's module
writes its formula beside the primitive and registers it here with `register_partials(prim, formula, ...)`,
as the module makes the primitive; the primitive's jvp and vjp (rules.elementwise) and the reversible
language read that one entry, so a derivative is never written twice.

    >>> import numpy as np
    >>> from adarray.primitives import elementwise as ew
    >>> PARTIALS[ew.log_p](ew, np.array(4.0), None)      # d log(x) / dx = 1 / x, eagerly
    (np.float64(0.25),)
    >>> ew.div_p in SINGULAR, ew.exp_p in HOLOMORPHIC
    (True, True)

Conventions at non-smooth points (documented in the README):
  * abs'(0) = 0 (sign), floor/ceil/round/sign have zero derivative;
  * maximum/minimum give the whole derivative to the first argument at a tie,
    matching the "lowest index wins" policy of the reductions;
  * pow: d/da a**b is 0 where b == 0, d/db a**b is 0 where a**b == 0.
"""
from __future__ import annotations

from collections.abc import Callable

from ..core.primitive import Primitive

# prim -> partials(m, *inputs, output, **params)
PARTIALS: dict[Primitive, Callable] = {}
# The primitives whose partials can be infinite or NaN (poles, or outside the domain). Their forward
# rules multiply by a partial only where the tangent is nonzero (a direction that does not move the
# input does not move the output); reverse products are IEEE, 0 * inf = NaN, and the branch `where`
# does not take reaches them as a masked cotangent (rules.Masked), never as a multiplied 0.
SINGULAR: set[Primitive] = set()
# The maps whose partials are also their complex derivative f'(z): they are holomorphic (on the
# principal branch, where they have a cut), so the same rules serve complex operands under JAX's
# convention (jvp t -> f'(z) t, vjp c -> c f'(z): a linear transpose, no conjugate; primitives/complex.py).
HOLOMORPHIC: set[Primitive] = set()
# prim -> [(operands, params)]: poles, branch points and domain edges of the elementwise primitives,
# whatever their rule kind. The generated rule tests (tests/test_rules.py) check there that jvp along
# a direction with no zero component equals grad times that direction, or both are NaN.
SINGULAR_POINTS: dict[Primitive, list] = {}


def register_partials(prim: Primitive, formula: Callable, *, singular: bool = False,
                      holomorphic: bool = False) -> Callable:
    """Register `formula` as the scalar partials of `prim` (`singular`: they can be infinite or NaN;
    `holomorphic`: they are f'(z) for complex operands too). Returns `formula`."""
    if prim in PARTIALS:
        raise ValueError(f"the partials of {prim.name} are already registered")
    PARTIALS[prim] = formula
    if singular:
        SINGULAR.add(prim)
    if holomorphic:
        HOLOMORPHIC.add(prim)
    return formula


def register_singular_points(prim: Primitive, *points) -> None:
    """Register points (operands, params) where a partial of `prim` is infinite, NaN or undefined:
    `register_singular_points(log_p, ((0.0,), {}))`."""
    SINGULAR_POINTS.setdefault(prim, []).extend(points)
