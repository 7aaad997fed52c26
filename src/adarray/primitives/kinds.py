"""The bottom of primitives/: rule kinds that bind no other primitive, and the value helpers every rule uses.

    linear(prim, transpose)       jvp applies the primitive to tangents; vjp is the transpose
    nondifferentiable(prim)       integer/boolean outputs: zero tangent, no cotangent
    zero_derivative(prim)         piecewise-constant float outputs (floor, sign, ...)

and the kinds of the `taylor` slot (see primitives/taylor.py, which re-exports them beside the series
arithmetic): FROM_JVP, ZERO_TAYLOR, linear_taylor, piecewise_linear_taylor. The kinds that bind other
primitives live with them: `elementwise` (partials) and the cotangent helpers in elementwise.py, the
batching helpers in structural.py; rules.py gathers them all for the families above.

    >>> aval_of_value(np.zeros((2, 3)))
    f64[2,3]
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import NOT_DIFFERENTIABLE, Marker, Zero, is_zero
from ..core.types import Aval, is_complex


def aval_of_value(value) -> Aval:
    aval = getattr(value, "aval", None)
    if aval is not None:
        return aval
    array = np.asarray(value)
    return Aval(array.shape, array.dtype)


def zeros(aval: Aval):
    """A concrete zero array that costs no memory (zero-strided)."""
    return np.broadcast_to(np.zeros((), aval.dtype), aval.shape)


def instantiate_zero(value, aval: Aval | None = None):
    """A symbolic zero as a (zero-strided) array; anything else unchanged. Tangents and Taylor
    coefficients are never masked (masks are reverse mode's), so their rules need no more than this;
    elementwise.instantiate also materialises a masked cotangent."""
    if is_zero(value):
        return zeros(value.aval if aval is None else aval)
    return value


# Non-elementwise primitives whose vjp is pointwise when every operand has the output's shape (a scalar
# kernel applied elementwise): a masked cotangent sinks through them as through an elementwise rule
# (transforms/vjp.py).
POINTWISE_VJP: set = set()


# --- the kinds of the taylor slot ------------------------------------------------------------------

FROM_JVP = Marker("from jvp", "the series of the jvp rule: y' = J(x) x'")


def order_of(series) -> int:
    return len(series[0]) - 1


def zero_taylor(series, output, **params):
    """Every higher coefficient is zero (integer outputs, piecewise-constant maps)."""
    outputs = output if isinstance(output, (list, tuple)) else None
    order = order_of(series)
    if outputs is None:
        return [Zero(aval_of_value(output))] * order
    return [[Zero(aval_of_value(o))] * order for o in outputs]


ZERO_TAYLOR = zero_taylor


def linear_taylor(prim):
    """A primitive linear in all its inputs: y_k = prim(x_k) (zeros skipped)."""
    def taylor(series, output, **params):
        result = []
        for k in range(1, order_of(series) + 1):
            terms = [s[k] for s in series]
            if all(is_zero(t) for t in terms):
                result.append(Zero(aval_of_value(output)))
            else:
                result.append(prim.bind(*[instantiate_zero(t) for t in terms], **params))
        return result

    return taylor


def piecewise_linear_taylor(prim):
    """A map that is linear in its float inputs once the primal values fix its pieces (abs, maximum,
    select, gather, the winner of a max-reduction): every coefficient goes through the jvp rule with
    the same primals, y_k = J(x_0) x_k, exactly what nested jvp gives (the pieces have zero derivative)."""
    def taylor(series, output, **params):
        primals = [s[0] for s in series]
        result = []
        for k in range(1, order_of(series) + 1):
            terms = [s[k] for s in series]
            if all(is_zero(t) for t in terms):
                out = [Zero(aval_of_value(o)) for o in output] if prim.multiple_results else Zero(aval_of_value(output))
            else:
                out = prim.jvp(terms, primals, output, **params)
            result.append(out)
        if prim.multiple_results:
            return [list(column) for column in zip(*result)] if result else [[] for _ in output]
        return result

    return taylor


# --- derivative rule kinds -------------------------------------------------------------------------

def linear(prim, transpose) -> None:
    """A primitive linear in all its inputs: its transpose gives its vjp."""

    def jvp(tangents, primals, output, **params):
        if all(is_zero(t) for t in tangents):
            return Zero(aval_of_value(output))
        return prim.bind(*[instantiate_zero(t) for t in tangents], **params)

    def vjp(cotangent, primals, output, needs, **params):
        cts = transpose(cotangent, [aval_of_value(p) for p in primals], **params)
        return [ct if need else None for ct, need in zip(cts, needs)]

    prim.jvp, prim.vjp, prim.transpose = jvp, vjp, transpose
    prim.taylor = linear_taylor(prim)


def nondifferentiable(prim) -> None:
    prim.jvp = prim.vjp = NOT_DIFFERENTIABLE
    prim.taylor = ZERO_TAYLOR


def zero_derivative(prim) -> None:
    """Derivative zero wherever it exists (floor, sign, ...)."""
    prim.jvp = lambda tangents, primals, output, **params: Zero(aval_of_value(output))
    prim.vjp = lambda cotangent, primals, output, needs, **params: [None] * len(primals)
    prim.taylor = ZERO_TAYLOR


def refuse_complex(name: str, *avals) -> None:
    """ShapeError if an operand is complex: `name` needs an ordering or a real domain (max, sort, ...).

    A complex value is never cast to real behind the user's back."""
    for aval in avals:
        if is_complex(aval.dtype):
            raise ShapeError(f"{name}: is not defined for complex operands, got {aval} (no silent cast to real: "
                             "take anp.real, anp.imag or anp.abs first)")
