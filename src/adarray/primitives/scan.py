"""Scans along one axis: scan[op, axis, reverse] (inclusive cumsum and cumprod) and
linear_recurrence[axis, reverse] (s_k = a_k * s_(k-1) + b_k, s_(-1) = 0; a product with a zero factor is 0).

cumsum is linear; its transpose is the cumsum running the other way.
cummax/cummin send each output's derivative to the element it took its value from
(the first to reach the running extremum: ties keep the earlier element, the tie
policy of every reduction here): a gather in forward mode, a scatter-add in reverse.
cumprod's rules are division-free, exact with zeros and differentiable to any
order, because they are linear recurrences (the Futhark paper's scan rule with
the operator's Jacobians, specialised to multiplication):
    jvp:  dy = linrec(x, dx * y_(k-1))              with y_(-1) = 1
    vjp:  l  = linrec(x_(k+1), g, reversed);  dx = l * y_(k-1)
The linear recurrence's own rules use only itself, shifts and products, so
derivatives of every order stay in this family.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import is_float
from . import elementwise as ew
from .indexing import gather, scatter
from .linalg import einsum
from .rules import add_tangents, aval_of_value, batch_all, instantiate, refuse_complex
from .structural import concatenate, slice_array, transpose
from .taylor import FROM_JVP, linear_taylor, piecewise_linear_taylor, total
from .taylor import add as add_series


def _scan_abstract_eval(x, *, op, axis, reverse):
    if op not in ("add", "mul", "max", "min"):
        raise ShapeError(f"scan: unknown operator {op!r}; known: add, mul, max, min")
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"scan: axis {axis} out of range for {x}")
    if op in ("max", "min"):
        refuse_complex(f"scan[op={op}]", x)
    return x


scan_p = Primitive("scan", _scan_abstract_eval)


def cumsum(x, axis: int, reverse: bool = False):
    return scan_p.bind(x, op="add", axis=int(axis), reverse=bool(reverse))


def cumprod(x, axis: int, reverse: bool = False):
    return scan_p.bind(x, op="mul", axis=int(axis), reverse=bool(reverse))


def cumulative(x, op: str, axis: int, reverse: bool = False):
    """Inclusive scan of a known monoid ("add", "mul", "max", "min") along `axis`."""
    return scan_p.bind(x, op=op, axis=int(axis), reverse=bool(reverse))


def _along(shape, axis, values):
    """`values` (length shape[axis]) broadcast along `axis` of `shape` (a constant)."""
    view = [1] * len(shape)
    view[axis] = shape[axis]
    return np.broadcast_to(np.reshape(values, view), shape)


def running_winner(x, output, op, axis, reverse):
    """For each position i, the index (along `axis`) of the element that the running max/min
    took its value from: the first one to reach it (ties keep the earlier element)."""
    shape = aval_of_value(x).shape
    n = shape[axis]
    edge = -np.inf if op == "max" else np.inf
    previous = shift(output, axis, reverse, fill=edge)
    beats = ew.gt(x, previous) if op == "max" else ew.lt(x, previous)
    start = _along(shape, axis, np.arange(n) == (n - 1 if reverse else 0))
    new = ew.logical_or(beats, start)
    positions = _along(shape, axis, np.arange(n, dtype=np.int64))
    if reverse:
        return cumulative(ew.select(new, positions, np.full(shape, n, np.int64)), "min", axis, reverse=True)
    return cumulative(ew.select(new, positions, np.full(shape, -1, np.int64)), "max", axis)


def _index_along(values, winners, axis):
    """values taken along `axis` at `winners` (same shape as values): a gather."""
    shape = aval_of_value(values).shape
    grids = [winners if d == axis else _along(shape, d, np.arange(shape[d], dtype=np.int64))
             for d in range(len(shape))]
    return gather(values, (("array",),) * len(shape), grids)


def _add_along(values, winners, axis):
    """The transpose of _index_along: values added into the positions `winners` along `axis`."""
    shape = aval_of_value(values).shape
    grids = [winners if d == axis else _along(shape, d, np.arange(shape[d], dtype=np.int64))
             for d in range(len(shape))]
    return scatter(ew.zeros_like(values), (("array",),) * len(shape), grids, values, "add")


def shift(x, axis: int, reverse: bool = False, fill: float = 0.0):
    """x moved one step along `axis` (toward higher indices, or lower if reverse), `fill` entering:
    the kept part and a one-wide edge of `fill`, concatenated (one pass, whatever the fill)."""
    shape = aval_of_value(x).shape
    n, ndim = shape[axis], len(shape)
    if n == 0:
        return x
    starts, stops = [0] * ndim, list(shape)
    if reverse:
        starts[axis] = 1
    else:
        stops[axis] = n - 1
    kept = slice_array(x, starts, stops, [1] * ndim)
    edge = np.full(shape[:axis] + (1,) + shape[axis + 1:], fill, aval_of_value(x).dtype)
    return concatenate([kept, edge] if reverse else [edge, kept], axis)


def cumprod_jvp(tangent, x, y, axis, reverse):
    return linear_recurrence(x, ew.mul(tangent, shift(y, axis, reverse, fill=1.0)), axis, reverse)


def cumprod_vjp(cotangent, x, y, axis, reverse):
    adjoint = linear_recurrence(shift(x, axis, not reverse), cotangent, axis, not reverse)
    return ew.mul(adjoint, shift(y, axis, reverse, fill=1.0))


def _scan_jvp(tangents, primals, output, *, op, axis, reverse):
    (tangent,), (x,) = tangents, primals
    if is_zero(tangent) or not is_float(aval_of_value(x).dtype):
        return Zero(aval_of_value(output))
    if op == "add":
        return cumsum(tangent, axis, reverse)
    if op in ("max", "min"):
        return _index_along(tangent, running_winner(x, output, op, axis, reverse), axis)
    return cumprod_jvp(tangent, x, output, axis, reverse)


def _scan_vjp(cotangent, primals, output, needs, *, op, axis, reverse):
    (x,) = primals
    if is_zero(cotangent) or not is_float(aval_of_value(x).dtype):
        return [None]
    if op == "add":
        return [cumsum(cotangent, axis, not reverse)]
    if op in ("max", "min"):
        return [_add_along(cotangent, running_winner(x, output, op, axis, reverse), axis)]
    return [cumprod_vjp(cotangent, x, output, axis, reverse)]


def _scan_transpose(cotangent, avals, *, op, axis, reverse):
    assert op == "add", "only scan[op=add] is linear"
    return [cumsum(instantiate(cotangent), axis, not reverse)]


scan_p.jvp, scan_p.vjp, scan_p.transpose = _scan_jvp, _scan_vjp, _scan_transpose


# --- linear_recurrence ---------------------------------------------------------------------------

def _recurrence_abstract_eval(a, b, *, axis, reverse):
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ShapeError(f"linear_recurrence: coefficients {a} and offsets {b} differ")
    if not 0 <= axis < a.ndim:
        raise ShapeError(f"linear_recurrence: axis {axis} out of range for {a}")
    return b


linear_recurrence_p = Primitive("linear_recurrence", _recurrence_abstract_eval)


def linear_recurrence(a, b, axis: int, reverse: bool = False):
    """s_k = a_k * s_(k-1) + b_k along `axis` (s_(k+1) if reverse), starting from 0, where a_k * s_(k-1) is 0 if
    either is 0: a zero coefficient restarts the recurrence (s_k = b_k) even after an infinite or NaN state
    (segmented products restart at each segment after one that overflowed)."""
    return linear_recurrence_p.bind(a, b, axis=int(axis), reverse=bool(reverse))


def recurrence_jvp(tangents, primals, output, *, axis, reverse):
    (ta, tb), (a, b) = tangents, primals
    if is_zero(ta) and is_zero(tb):
        return Zero(aval_of_value(output))
    offsets = Zero(aval_of_value(b)) if is_zero(ta) else ew.safe_mul(ta, shift(output, axis, reverse))
    offsets = add_tangents(offsets, tb)
    return linear_recurrence(a, offsets, axis, reverse)


def recurrence_vjp(cotangent, primals, output, needs, *, axis, reverse):
    a, _ = primals
    if is_zero(cotangent):
        return [None, None]
    adjoint = linear_recurrence(shift(a, axis, not reverse), cotangent, axis, not reverse)
    return [ew.safe_mul(adjoint, shift(output, axis, reverse)) if needs[0] else None, adjoint]


linear_recurrence_p.jvp, linear_recurrence_p.vjp = recurrence_jvp, recurrence_vjp

scan_p.sample = lambda rng: [
    ([rng.normal(size=(5,))], {"op": "add", "axis": 0, "reverse": False}),
    ([rng.normal(size=(2, 4))], {"op": "add", "axis": 1, "reverse": True}),
    ([rng.normal(size=(2, 4))], {"op": "mul", "axis": 1, "reverse": False}),
    ([np.array([2.0, 0.0, 0.0, 3.0])], {"op": "mul", "axis": 0, "reverse": False}),
    ([np.array([2.0, 0.5, 0.0, 3.0])], {"op": "mul", "axis": 0, "reverse": False}),
    ([np.array([[2.0, 0.5, 0.0, 3.0]])], {"op": "mul", "axis": 1, "reverse": True}),
    ([np.zeros((0, 3))], {"op": "mul", "axis": 0, "reverse": False}),
    ([rng.normal(size=(2, 5))], {"op": "max", "axis": 1, "reverse": False}),
    ([rng.normal(size=(5, 2))], {"op": "min", "axis": 0, "reverse": True}),
    ([np.array([1.0, 3.0, 2.5, 2.0, 5.0])], {"op": "max", "axis": 0, "reverse": False}),
    ([np.array([1.0, 3.0, 2.5, 2.0, 5.0])], {"op": "min", "axis": 0, "reverse": True}),
]
linear_recurrence_p.sample = lambda rng: [
    ([rng.normal(size=(6,)), rng.normal(size=(6,))], {"axis": 0, "reverse": False}),
    ([rng.normal(size=(2, 5)), rng.normal(size=(2, 5))], {"axis": 1, "reverse": True}),
    ([np.array([1.0, 0.0, 2.0, 0.0]), np.array([0.5, 1.0, 0.0, 2.0])], {"axis": 0, "reverse": False}),
]


scan_p.batch = lambda args, batched, size, *, op, axis, reverse: (
    scan_p.bind(args[0], op=op, axis=axis + 1, reverse=reverse), True)
linear_recurrence_p.batch = lambda args, batched, size, *, axis, reverse: (
    linear_recurrence(*batch_all(args, batched, size), axis + 1, reverse), True)


# --- matrix_recurrence: the linear recurrence of the general scan rule ----------------------------

def _matrix_recurrence_abstract_eval(a, b, *, reverse):
    if a.ndim < 3 or a.shape[:-1] != b.shape or a.shape[-1] != a.shape[-2] or a.dtype != b.dtype:
        raise ShapeError(f"matrix_recurrence: matrices {a} and vectors {b} do not fit (..., n, d, d), (..., n, d)")
    return b


matrix_recurrence_p = Primitive("matrix_recurrence", _matrix_recurrence_abstract_eval)


def matrix_recurrence(a, b, reverse: bool = False):
    """s_k = A_k s_(k-1) + b_k along axis -2 of b (s_(k+1) if reverse), starting from 0.

    The derivative of a general scan is this recurrence over the operator's Jacobians
    (Futhark's scan rule); its own rules use only itself, so every order stays in the family.
    """
    return matrix_recurrence_p.bind(a, b, reverse=bool(reverse))


def _shift_vectors(s, reverse):
    """s_(k-1) (or s_(k+1) if reverse) along axis -2, zero entering."""
    return shift(s, len(aval_of_value(s).shape) - 2, reverse)


def _matrix_recurrence_jvp(tangents, primals, output, *, reverse):
    (ta, tb), (a, _) = tangents, primals
    if is_zero(ta) and is_zero(tb):
        return Zero(aval_of_value(output))
    offsets = tb
    if not is_zero(ta):
        batch = "".join(chr(ord("A") + i) for i in range(len(aval_of_value(a).shape) - 3))
        pushed = einsum(f"{batch}kij,{batch}kj->{batch}ki", ta, _shift_vectors(output, reverse))
        offsets = add_tangents(offsets, pushed)
    return matrix_recurrence(a, offsets, reverse)


def _matrix_recurrence_vjp(cotangent, primals, output, needs, *, reverse):

    a, _ = primals
    if is_zero(cotangent):
        return [None, None]
    ndim = len(aval_of_value(a).shape)
    batch = "".join(chr(ord("A") + i) for i in range(ndim - 3))
    following = shift(a, ndim - 3, not reverse)  # A_(k+1) (A_(k-1) if reverse), zero entering
    swapped = transpose(following, tuple(range(ndim - 2)) + (ndim - 1, ndim - 2))
    adjoint = matrix_recurrence(swapped, cotangent, not reverse)
    ct_a = einsum(f"{batch}ki,{batch}kj->{batch}kij", adjoint, _shift_vectors(output, reverse)) if needs[0] else None
    return [ct_a, adjoint]


matrix_recurrence_p.jvp, matrix_recurrence_p.vjp = _matrix_recurrence_jvp, _matrix_recurrence_vjp
matrix_recurrence_p.batch = lambda args, batched, size, *, reverse: (
    matrix_recurrence(*batch_all(args, batched, size), reverse), True)
matrix_recurrence_p.sample = lambda rng: [
    ([rng.normal(size=(5, 2, 2)) * 0.7, rng.normal(size=(5, 2))], {"reverse": False}),
    ([rng.normal(size=(3, 4, 3, 3)) * 0.5, rng.normal(size=(3, 4, 3))], {"reverse": True}),
    ([np.zeros((0, 2, 2)), np.zeros((0, 2))], {"reverse": False}),
]


# --- Taylor mode ---------------------------------------------------------------------------------------
# cumsum is linear, cummax/cummin follow their running winner, cumprod is the series of its jvp (a
# linear recurrence). The recurrences are bilinear in (a, s): with s(t) = linrec(a(t), b(t)),
#     s_k = linrec(a_0, b_k + sum_{j=1}^k a_j * shift(s_(k-j)))
# (einsum for the matrix recurrence), K recurrences with the same coefficients a_0.

def _scan_taylor(series, output, *, op, axis, reverse):
    if op == "add":
        return linear_taylor(scan_p)(series, output, op=op, axis=axis, reverse=reverse)
    if op in ("max", "min"):
        return piecewise_linear_taylor(scan_p)(series, output, op=op, axis=axis, reverse=reverse)
    return FROM_JVP


def _recurrence_series(series, output, push, solve):
    (a, b) = series
    s = [output]
    for k in range(1, len(a)):
        offsets = total([push(a[j], s[k - j]) for j in range(1, k + 1) if not is_zero(a[j])], aval_of_value(output))
        offsets = add_series(offsets, b[k])
        s.append(offsets if is_zero(offsets) else solve(a[0], offsets))
    return s[1:]


def _recurrence_taylor(series, output, *, axis, reverse):
    return _recurrence_series(series, output, lambda a, s: ew.safe_mul(a, shift(s, axis, reverse)),
                              lambda a, b: linear_recurrence(a, b, axis, reverse))


def _matrix_recurrence_taylor(series, output, *, reverse):
    batch = "".join(chr(ord("A") + i) for i in range(len(aval_of_value(output).shape) - 2))
    return _recurrence_series(
        series, output, lambda a, s: einsum(f"{batch}kij,{batch}kj->{batch}ki", a, _shift_vectors(s, reverse)),
        lambda a, b: matrix_recurrence(a, b, reverse))


scan_p.taylor = _scan_taylor
linear_recurrence_p.taylor = _recurrence_taylor
matrix_recurrence_p.taylor = _matrix_recurrence_taylor
