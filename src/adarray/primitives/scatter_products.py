"""The derivatives of scatter_mul_partials (indexing.py): segmented exclusive prefix and suffix
products of the values sorted by slot (a stable sort, two linear recurrences), so the partials of a
scatter-mul are exact at zeros to any order.

The primitive itself, its shape rule and its batching stay with scatter in indexing.py (scatter-mul's
vjp binds it); its jvp and vjp need the recurrences of scan.py, which need gather and scatter, so they
are registered here, above both.
"""
from __future__ import annotations

import numpy as np

from ..core.primitive import Zero, is_zero
from . import elementwise as ew
from .indexing import gather, scatter, scatter_mul_partials, scatter_mul_partials_p, wrapped_slots
from .rules import add_tangents, aval_of_value, instantiate
from .scan import linear_recurrence, recurrence_jvp, recurrence_vjp, shift
from .sort import argsort
from .structural import concatenate, slice_array


def _sorted_slots(x, updates, targets):
    """The sequence [x; updates] sorted stably by slot (each x first in its slot), as IR:
    (order, its inverse, segment starts, segment ends)."""

    m, n = aval_of_value(x).size, aval_of_value(updates).size
    keys = concatenate([np.arange(m, dtype=np.int64), wrapped_slots(targets, m)], 0)
    order = argsort(keys, 0)
    inverse = scatter(np.zeros(m + n, np.int64), (("array",),), [order], np.arange(m + n, dtype=np.int64), "set")
    keys = gather(keys, (("array",),), [order])
    starts = ew.ne(keys, shift(keys, 0, fill=-1))
    ends = ew.ne(keys, shift(keys, 0, reverse=True, fill=-1))
    return order, inverse, starts, ends


def _exclusive_products(values, starts, ends):
    """Segmented exclusive prefix and suffix products of sorted values: linear recurrences
    p_k = a_k p_(k-1) + b_k with a_k = 0, b_k = 1 at a segment's start (else a_k = v_(k-1), b_k = 0)."""

    dtype = aval_of_value(values).dtype
    zero = ew.zeros_like(values)
    coefficients = (ew.select(starts, zero, shift(values, 0)), ew.select(ends, zero, shift(values, 0, reverse=True)))
    offsets = (ew.convert(starts, dtype), ew.convert(ends, dtype))
    products = (linear_recurrence(coefficients[0], offsets[0], 0),
                linear_recurrence(coefficients[1], offsets[1], 0, reverse=True))
    return coefficients, offsets, products


def _split(values, m, n):

    return slice_array(values, (0,), (m,), (1,)), slice_array(values, (m,), (m + n,), (1,))


def _partials_jvp(x, updates, targets, tx, tu):
    """The tangents of the unweighted partials, through the exclusive products."""

    m, n = aval_of_value(x).size, aval_of_value(updates).size
    order, inverse, starts, ends = _sorted_slots(x, updates, targets)
    values = gather(concatenate([x, updates], 0), (("array",),), [order])
    tangent = gather(concatenate([instantiate(tx), instantiate(tu)], 0), (("array",),), [order])
    coefficients, offsets, products = _exclusive_products(values, starts, ends)
    zero = ew.zeros_like(values)
    d_coefficients = (ew.select(starts, zero, shift(tangent, 0)),
                      ew.select(ends, zero, shift(tangent, 0, reverse=True)))
    d_products = [recurrence_jvp([dc, Zero(aval_of_value(b))], [c, b], p, axis=0, reverse=reverse)
                  for dc, c, b, p, reverse in zip(d_coefficients, coefficients, offsets, products, (False, True))]
    d_others = ew.add(ew.mul(d_products[0], products[1]), ew.mul(products[0], d_products[1]))
    return _split(gather(d_others, (("array",),), [inverse]), m, n)


def _partials_vjp(x, updates, targets, ct_x, ct_u):
    """The cotangents of x and updates for cotangents of the unweighted partials."""

    m, n = aval_of_value(x).size, aval_of_value(updates).size
    order, inverse, starts, ends = _sorted_slots(x, updates, targets)
    values = gather(concatenate([x, updates], 0), (("array",),), [order])
    coefficients, offsets, products = _exclusive_products(values, starts, ends)
    ct = gather(concatenate([instantiate(ct_x, aval_of_value(x)), instantiate(ct_u, aval_of_value(updates))], 0),
                (("array",),), [order])
    ct_products = (ew.mul(ct, products[1]), ew.mul(ct, products[0]))
    ct_coefficients = [recurrence_vjp(c_p, [c, b], p, [True, False], axis=0, reverse=reverse)[0]
                       for c_p, c, b, p, reverse in zip(ct_products, coefficients, offsets, products, (False, True))]
    zero = ew.zeros_like(values)
    # the coefficients are the values shifted one step (masked): their transpose shifts back
    ct_values = ew.add(shift(ew.select(starts, zero, ct_coefficients[0]), 0, reverse=True),
                       shift(ew.select(ends, zero, ct_coefficients[1]), 0))
    return _split(gather(ct_values, (("array",),), [inverse]), m, n)


def _hint(primals):
    """The output hint of a scatter_mul_partials equation (None without one); it gets no derivative."""
    return primals[4] if len(primals) == 5 else None


def _mul_partials_jvp(tangents, primals, outputs):
    (tx, tu, _, tw), (x, updates, targets, weights), output = tangents[:4], primals[:4], _hint(primals)
    n = aval_of_value(updates).size
    result = [Zero(aval_of_value(o)) for o in outputs]
    if not (is_zero(tx) and is_zero(tu)) and n:
        d_x, d_u = _partials_jvp(x, updates, targets, tx, tu)
        result = [ew.mul(weights, d_x), ew.mul(gather(weights, (("array",),), [targets]), d_u)]
    if not is_zero(tw):  # linear in the weights
        result = [add_tangents(r, w) for r, w in zip(result, scatter_mul_partials(x, updates, targets, tw, output))]
    return result


def _mul_partials_vjp(cotangents, primals, outputs, needs):
    (x, updates, targets, weights), (ct_x, ct_u), output = primals[:4], cotangents, _hint(primals)
    m, n = aval_of_value(x).size, aval_of_value(updates).size
    if is_zero(ct_x) and is_zero(ct_u):
        return [None] * len(primals)
    grads = [None] * len(primals)
    if (needs[0] or needs[1]) and n:
        weighted_x = Zero(aval_of_value(x)) if is_zero(ct_x) else ew.mul(ct_x, weights)
        weighted_u = Zero(aval_of_value(updates)) if is_zero(ct_u) else ew.mul(
            ct_u, gather(weights, (("array",),), [targets]))
        grads[0], grads[1] = _partials_vjp(x, updates, targets, weighted_x, weighted_u)
    if needs[3]:
        px, pu = scatter_mul_partials(x, updates, targets, np.ones(m, aval_of_value(x).dtype), output)
        from_x = Zero(aval_of_value(x)) if is_zero(ct_x) else ew.mul(ct_x, px)
        from_u = Zero(aval_of_value(x)) if is_zero(ct_u) else scatter(
            np.zeros(m, aval_of_value(x).dtype), (("array",),), [targets], ew.mul(ct_u, pu), "add")
        grads[3] = add_tangents(from_x, from_u)
    return [g if need else None for g, need in zip(grads, needs)]


scatter_mul_partials_p.jvp, scatter_mul_partials_p.vjp = _mul_partials_jvp, _mul_partials_vjp
