"""Rule kinds named for the math, so most primitives need no hand-written rule.

    elementwise(prim, partials)   jvp/vjp from a table of scalar partials
    linear(prim, transpose)       jvp applies the primitive to tangents; vjp is the transpose
    nondifferentiable(prim)       integer/boolean outputs: zero tangent, no cotangent
    zero_derivative(prim)         piecewise-constant float outputs (floor, sign, ...)
"""
from __future__ import annotations

import numpy as np

from ..core.primitive import NOT_DIFFERENTIABLE, Zero, is_zero
from ..core.types import Aval


def aval_of_value(value) -> Aval:
    aval = getattr(value, "aval", None)
    if aval is not None:
        return aval
    array = np.asarray(value)
    return Aval(array.shape, array.dtype)


def zeros(aval: Aval):
    """A concrete zero array that costs no memory (zero-strided)."""
    return np.broadcast_to(np.zeros((), aval.dtype), aval.shape)


def instantiate(value, aval: Aval | None = None):
    """Turn a symbolic zero into a (zero-strided) array, a masked cotangent into its select; pass
    anything else through."""
    if is_zero(value):
        return zeros(value.aval if aval is None else aval)
    if isinstance(value, Masked):
        return value.materialize()
    return value


def add_tangents(a, b):
    """Sum of two tangents or cotangents, skipping symbolic zeros (masked cotangents of one mask stay
    masked)."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    from .elementwise import add

    if isinstance(a, Masked) and isinstance(b, Masked) and a.keep is b.keep:
        return Masked(a.keep, add(a.value, b.value))
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
        from .elementwise import select

        aval = aval_of_value(self.value)
        return select(self.keep, self.value, zeros(aval))


# Non-elementwise primitives whose vjp is pointwise when every operand has the output's shape (a scalar
# kernel applied elementwise): a masked cotangent sinks through them as through an elementwise rule.
POINTWISE_VJP: set = set()


def masked(keep, cotangent):
    """`cotangent` zero where `keep` is False, by structure (None and symbolic zeros pass through)."""
    if cotangent is None or is_zero(cotangent):
        return cotangent
    if isinstance(cotangent, Masked):
        from .elementwise import logical_and

        return Masked(logical_and(keep, cotangent.keep), cotangent.value)
    return Masked(keep, cotangent)


def elementwise(prim, partials, singular: bool = False) -> None:
    """jvp: sum_i partial_i * t_i; vjp: ct * partial_i. Zeros are skipped (a partial may be None: zero).

    With `singular` (partials may be infinite or NaN), the forward products are `safe_mul`: 0
    wherever the tangent is 0, since a direction that does not move an input does not move the
    output (forward and Taylor mode agree on it). The guard looks at the tangent alone, inside one
    primitive with its own derivative rules, so a partial or a tangent that merely vanishes at a
    point keeps its derivative there (forward over forward stays right). Reverse products are plain
    IEEE products, 0 * inf = NaN: a cotangent that is zero by structure (the branch a select does
    not take) is a `Masked` cotangent, whose mask the transformation sinks through this product.
    """
    from . import elementwise as m

    def jvp(tangents, primals, output, **params):
        parts = partials(m, *primals, output, **params)
        total = Zero(aval_of_value(output))
        for part, tangent in zip(parts, tangents):
            if not is_zero(tangent) and part is not None:
                total = add_tangents(total, m.safe_mul(tangent, part) if singular else m.mul(tangent, part))
        return total

    def vjp(cotangent, primals, output, needs, **params):
        parts = partials(m, *primals, output, **params)
        return [m.mul(cotangent, part) if need and part is not None else None for part, need in zip(parts, needs)]

    prim.jvp, prim.vjp = jvp, vjp
    from .taylor import FROM_JVP

    prim.taylor = FROM_JVP  # exact; the common maps get hand recurrences (elementwise_taylor.py)


def linear(prim, transpose) -> None:
    """A primitive linear in all its inputs: its transpose gives its vjp."""

    def jvp(tangents, primals, output, **params):
        if all(is_zero(t) for t in tangents):
            return Zero(aval_of_value(output))
        return prim.bind(*[instantiate(t) for t in tangents], **params)

    def vjp(cotangent, primals, output, needs, **params):
        cts = transpose(cotangent, [aval_of_value(p) for p in primals], **params)
        return [ct if need else None for ct, need in zip(cts, needs)]

    prim.jvp, prim.vjp, prim.transpose = jvp, vjp, transpose
    from .taylor import linear_taylor

    prim.taylor = linear_taylor(prim)


def nondifferentiable(prim) -> None:
    from .taylor import ZERO_TAYLOR

    prim.jvp = prim.vjp = NOT_DIFFERENTIABLE
    prim.taylor = ZERO_TAYLOR


def zero_derivative(prim) -> None:
    """Derivative zero wherever it exists (floor, sign, ...)."""
    prim.jvp = lambda tangents, primals, output, **params: Zero(aval_of_value(output))
    prim.vjp = lambda cotangent, primals, output, needs, **params: [None] * len(primals)
    from .taylor import ZERO_TAYLOR

    prim.taylor = ZERO_TAYLOR


def broadcast_batch(x, size: int):
    """An unbatched value given a leading batch axis of `size` (zero-copy)."""
    from .structural import broadcast_in_dim

    shape = aval_of_value(x).shape
    return broadcast_in_dim(x, (size,) + shape, tuple(range(1, len(shape) + 1)))


def batch_all(args, batched, size: int):
    """Every argument with a leading batch axis."""
    return [a if b else broadcast_batch(a, size) for a, b in zip(args, batched)]


def batch_elementwise(prim) -> None:
    """Batching of a map: give every operand the batch axis, then apply the map."""

    def batch(args, batched, size, **params):
        return prim.bind(*batch_all(args, batched, size), **params), True

    prim.batch = batch


def refuse_complex(name: str, *avals) -> None:
    """ShapeError if an operand is complex: `name` needs an ordering or a real domain (max, sort, ...).

    A complex value is never cast to real behind the user's back."""
    from ..core.errors import ShapeError
    from ..core.types import is_complex

    for aval in avals:
        if is_complex(aval.dtype):
            raise ShapeError(f"{name}: is not defined for complex operands, got {aval} (no silent cast to real: "
                             "take anp.real, anp.imag or anp.abs first)")
