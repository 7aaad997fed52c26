"""reduce[op, axes]: reduction of an array over static axes with a known monoid,
and argmax/argmin.

Reverse-mode rules (Futhark's specialisations, see shared/design/papers):
  * add: the cotangent is broadcast back (linear; transpose = broadcast_in_dim);
  * mul: the partial of x_i is the product of the others (product_others):
    zero counting computes it (exact with any number of zeros, never NaN), and
    its own derivatives go through exclusive prefix and suffix products, which
    stay exact at zeros to any order;
  * max/min: the whole cotangent goes to the first (lowest-index, in row-major
    order over the reduced axes) element equal to the result: argmax/argmin's
    choice, so the rule is a scatter of the cotangent to it (a gather in jvp).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import Aval, is_float
from . import elementwise as ew
from .indexing import gather, scatter
from .rules import aval_of_value, batch_all, instantiate, linear, masked, nondifferentiable, refuse_complex
from .scan import cumprod, cumprod_jvp, cumprod_vjp, shift
from .structural import broadcast_in_dim, broadcast_in_dim_p, reshape, transpose
from .taylor import FROM_JVP, linear_taylor, piecewise_linear_taylor

MONOIDS = ("add", "mul", "max", "min", "and", "or")


def _reduce_abstract_eval(x, *, op, axes):
    if op not in MONOIDS:
        raise ShapeError(f"reduce: unknown operator {op!r}; known: {', '.join(MONOIDS)}")
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"reduce: axes {tuple(axes)} out of range for {x}")
    if op in ("max", "min") and any(x.shape[a] == 0 for a in axes):
        raise ShapeError(f"reduce: {op} of an empty axis of {x} has no identity")
    if op in ("and", "or") and x.dtype != np.bool_:
        raise ShapeError(f"reduce: {op} needs a boolean operand, got {x}")
    if op in ("max", "min"):
        refuse_complex(f"reduce[op={op}]", x)
    return x.update(shape=tuple(n for i, n in enumerate(x.shape) if i not in axes))


reduce_p = Primitive("reduce", _reduce_abstract_eval)


def reduce(x, op: str, axes):
    axes = tuple(sorted(int(a) for a in axes))
    if not axes:
        return x
    return reduce_p.bind(x, op=op, axes=axes)


def reduce_sum(x, axes):
    return reduce(x, "add", axes)


# --- broadcast_in_dim's rules (structural.py): linear, and its transpose is a sum over the broadcast
# axes. They are registered here, beside reduce_sum, since the sum's own rules broadcast.

def _broadcast_transpose(ct, avals, *, shape, dims):
    (aval,) = avals
    if isinstance(ct, Zero):
        return [Zero(aval)]
    summed = [i for i in range(len(shape)) if i not in dims]
    summed += [d for size, d in zip(aval.shape, dims) if size == 1 and shape[d] != 1]
    out = reduce_sum(ct, tuple(sorted(summed))) if summed else ct
    return [reshape(out, aval.shape)]


linear(broadcast_in_dim_p, _broadcast_transpose)


def _expand(value, aval: Aval, axes):
    """Broadcast a reduced value back to the operand's shape."""
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    return broadcast_in_dim(value, aval.shape, kept)


def _flatten_reduced(x, axes):
    """Move the reduced axes last and merge them: (kept..., count); returns the inverse too."""
    aval = aval_of_value(x)
    kept = [i for i in range(aval.ndim) if i not in axes]
    kept_shape = tuple(aval.shape[i] for i in kept)
    count = int(np.prod([aval.shape[a] for a in axes], dtype=np.int64))
    flat = reshape(transpose(x, kept + list(axes)), kept_shape + (count,))

    def restore(value):
        moved = reshape(value, tuple(aval.shape[i] for i in kept + list(axes)))
        return transpose(moved, tuple(np.argsort(kept + list(axes))))

    return flat, kept_shape, count, restore


def _winner_index(x, op, axes):
    """(flattened x, index arrays of each reduced row's winner): the first maximal (minimal)
    element, which is exactly what argmax (argmin) returns."""
    flat, kept_shape, count, restore = _flatten_reduced(x, axes)
    last = len(kept_shape)
    winner = (argmax if op == "max" else argmin)(flat, last)
    grids = [np.broadcast_to(np.arange(n, dtype=np.int64).reshape([-1 if d == i else 1 for d in range(last)]),
                             kept_shape) for i, n in enumerate(kept_shape)]
    return flat, grids + [winner], restore


def _extremum_jvp(tangent, x, op, axes):
    _, index, _ = _winner_index(x, op, axes)
    flat_tangent = _flatten_reduced(tangent, axes)[0]
    return gather(flat_tangent, (("array",),) * len(index), index)


def _extremum_vjp(cotangent, x, op, axes):
    """The cotangent goes to each row's winner; the other elements' are zero by structure (masked, so an
    infinite derivative behind a value the max did not pick never meets the 0)."""
    flat, index, restore = _winner_index(x, op, axes)
    spread = restore(scatter(ew.zeros_like(flat), (("array",),) * len(index), index, cotangent, "add"))
    flat_aval, row_aval = aval_of_value(flat), aval_of_value(cotangent)
    won = scatter(np.zeros(flat_aval.shape, np.bool_), (("array",),) * len(index), index,
                  np.ones(row_aval.shape, np.bool_), "set")
    return masked(restore(won), spread)


# --- product_others: d prod(x) / d x_i, the product of the other elements -----------------------

def _product_others_abstract_eval(x, scale, *, axes):
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"product_others: axes {tuple(axes)} out of range for {x}")
    if scale.shape != x.shape or scale.dtype != x.dtype:
        raise ShapeError(f"product_others: the scale {scale} must have the operand's shape and dtype, {x}")
    return x


product_others_p = Primitive("product_others", _product_others_abstract_eval)


def product_others(x, axes, scale=None):
    """For each element, `scale` times the product of the other elements of its reduced group.

    The scale (default 1) is the cotangent of reduce's vjp or the tangent of its jvp, taken in
    so that a backend writes the whole partial in one pass. Computed by zero counting (fast,
    exact, never NaN); its own derivatives go through exclusive prefix and suffix products,
    which stay exact at zeros to any order (zero counting does not).

    >>> product_others(np.array([2.0, 3.0, 4.0]), (0,))  # [12, 8, 6] when run
    """
    scale = ew.full_like(x, 1) if scale is None else scale
    return product_others_p.bind(x, scale, axes=tuple(sorted(int(a) for a in axes)))


def _prefix_suffix(x, axes):
    flat, kept_shape, count, restore = _flatten_reduced(x, axes)
    last = len(kept_shape)
    prefix, suffix = cumprod(flat, last), cumprod(flat, last, reverse=True)
    return flat, last, prefix, suffix, restore


def _product_others_jvp(tangents, primals, output, *, axes):
    (tangent, scale_tangent), (x, scale) = tangents, primals
    parts = []
    if not is_zero(scale_tangent):  # linear in the scale
        parts.append(product_others(x, axes, scale_tangent))
    if not is_zero(tangent):
        flat, last, prefix, suffix, restore = _prefix_suffix(x, axes)
        flat_tangent = _flatten_reduced(tangent, axes)[0]
        before, after = shift(prefix, last, fill=1.0), shift(suffix, last, reverse=True, fill=1.0)
        d_before = shift(cumprod_jvp(flat_tangent, flat, prefix, last, False), last)
        d_after = shift(cumprod_jvp(flat_tangent, flat, suffix, last, True), last, reverse=True)
        parts.append(ew.mul(scale, restore(ew.add(ew.mul(d_before, after), ew.mul(before, d_after)))))
    if not parts:
        return Zero(aval_of_value(output))
    return parts[0] if len(parts) == 1 else ew.add(*parts)


def _product_others_vjp(cotangent, primals, output, needs, *, axes):
    x, scale = primals
    if is_zero(cotangent):
        return [None, None]
    ct_scale = product_others(x, axes, cotangent) if needs[1] else None
    if not needs[0]:
        return [None, ct_scale]

    flat, last, prefix, suffix, restore = _prefix_suffix(x, axes)
    ct = _flatten_reduced(ew.mul(cotangent, scale), axes)[0]
    before, after = shift(prefix, last, fill=1.0), shift(suffix, last, reverse=True, fill=1.0)
    # shift's transpose moves values back one step (the entering constant gets no cotangent)
    ct_prefix, ct_suffix = shift(ew.mul(ct, after), last, reverse=True), shift(ew.mul(ct, before), last)
    grad = ew.add(cumprod_vjp(ct_prefix, flat, prefix, last, False), cumprod_vjp(ct_suffix, flat, suffix, last, True))
    return [restore(grad), ct_scale]


product_others_p.jvp, product_others_p.vjp = _product_others_jvp, _product_others_vjp


def _product_others_batch(args, batched, size, *, axes):
    x, scale = batch_all(args, batched, size)
    return product_others(x, tuple(a + 1 for a in axes), scale), True


product_others_p.batch = _product_others_batch


def _product_others_sample(rng):
    # groups of three: the scale times two others is a cubic, whose second differences at 0 (the
    # nested-rule tests') are exact; a fourth factor would make them differ from 0 by h^2
    with_zeros = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 1.5], [0.5, 1.5, -2.0]])
    return [
        ([rng.normal(size=(4, 3)), rng.normal(size=(4, 3))], {"axes": (1,)}),
        ([with_zeros, rng.normal(size=(3, 3))], {"axes": (1,)}),
        ([rng.normal(size=(3, 2, 1)), rng.normal(size=(3, 2, 1))], {"axes": (0, 2)}),
    ]


product_others_p.sample = _product_others_sample


def _reduce_jvp(tangents, primals, output, *, op, axes):
    (tangent,), (x,) = tangents, primals
    if is_zero(tangent) or not is_float(aval_of_value(x).dtype):
        return Zero(aval_of_value(output))
    if op == "add":
        return reduce_sum(tangent, axes)
    if op == "mul":
        return reduce_sum(product_others(x, axes, tangent), axes)
    return _extremum_jvp(tangent, x, op, axes)


def _reduce_vjp(cotangent, primals, output, needs, *, op, axes):
    (x,) = primals
    aval = aval_of_value(x)
    if not is_float(aval.dtype) or is_zero(cotangent):
        return [None]
    if op in ("max", "min"):
        return [_extremum_vjp(cotangent, x, op, axes)]
    spread = _expand(cotangent, aval, axes)
    if op == "add":
        return [spread]
    return [product_others(x, axes, spread)]


def _reduce_transpose(cotangent, avals, *, op, axes):
    assert op == "add", "only reduce[op=add] is linear"
    return [_expand(instantiate(cotangent), avals[0], axes)]


reduce_p.jvp, reduce_p.vjp, reduce_p.transpose = _reduce_jvp, _reduce_vjp, _reduce_transpose


# --- argmax / argmin (first occurrence, like NumPy) ----------------------------------------------

def _arg_abstract_eval(name):
    def abstract_eval(x, *, axis):
        if not 0 <= axis < x.ndim or x.shape[axis] == 0:
            raise ShapeError(f"{name}: axis {axis} is empty or out of range for {x}")
        refuse_complex(name, x)
        return Aval(tuple(n for i, n in enumerate(x.shape) if i != axis), np.int64)

    return abstract_eval


argmax_p = Primitive("argmax", _arg_abstract_eval("argmax"))
argmin_p = Primitive("argmin", _arg_abstract_eval("argmin"))
nondifferentiable(argmax_p)
nondifferentiable(argmin_p)


def argmax(x, axis: int):
    return argmax_p.bind(x, axis=int(axis))


def argmin(x, axis: int):
    return argmin_p.bind(x, axis=int(axis))


def _reduce_sampler(rng):
    cases = []
    for op in ("add", "mul", "max", "min"):
        cases.append(([rng.normal(size=(3, 4))], {"op": op, "axes": (1,)}))
        cases.append(([rng.normal(size=(2, 3, 2))], {"op": op, "axes": (0, 2)}))
    cases.append(([rng.normal(size=(0, 3))], {"op": "add", "axes": (0,)}))
    cases.append(([rng.normal(size=(0, 3))], {"op": "mul", "axes": (0,)}))
    return cases


reduce_p.sample = _reduce_sampler
argmax_p.sample = argmin_p.sample = lambda rng: [
    ([rng.normal(size=(3, 4))], {"axis": 1}),
    ([np.array([1.0, 3.0, 3.0])], {"axis": 0}),
]


reduce_p.batch = lambda args, batched, size, *, op, axes: (reduce(args[0], op, tuple(a + 1 for a in axes)), True)
argmax_p.batch = lambda args, batched, size, *, axis: (argmax(args[0], axis + 1), True)
argmin_p.batch = lambda args, batched, size, *, axis: (argmin(args[0], axis + 1), True)


# --- Taylor mode: add is linear, max/min follow their winner, mul is the series of its jvp ------------

def _reduce_taylor(series, output, *, op, axes):
    if op == "add":
        return linear_taylor(reduce_p)(series, output, op=op, axes=axes)
    if op in ("max", "min"):
        return piecewise_linear_taylor(reduce_p)(series, output, op=op, axes=axes)
    return FROM_JVP  # mul: through product_others, exact with zeros


def _set_taylor_rules():
    reduce_p.taylor = _reduce_taylor
    product_others_p.taylor = FROM_JVP


_set_taylor_rules()
