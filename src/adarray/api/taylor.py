"""Taylor mode for users: `jet` (JAX's convention) and `taylor` (plain coefficients).

    ad.jet(f, primals, series) -> (primal_out, series_out)
        series[i] = [x_1, ..., x_K] for primals[i], with x(t) = x_0 + x_1 t + x_2 t^2/2! + ... (the terms
        are derivatives, as in jax.experimental.jet); series_out has the structure of primal_out with
        each leaf replaced by its K terms.
    ad.taylor(f, order)(x0, v) -> [c_0, ..., c_order]
        the coefficients of t -> f(x0 + t v): c_k = (d/dt)^k f(x0 + t v) / k! at t = 0.

Both trace f once per signature and order into a Taylor program (transforms/jet.py), cached like
every other transformation; called on traced values they inline it, so they compose with grad, vmap
and jit.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..core.errors import ArgumentError
from ..core.pytree import flatten, unflatten
from ..core.types import is_float
from ..tracing import Tracer
from ..transforms.jet import jet_program
from .staging import Staged, like_primals, name_of, stage


def _scaled(value, factor: float):
    """value * factor, keeping a float array's dtype."""
    if isinstance(value, Tracer):
        return value if factor == 1.0 else value * factor
    array = np.asarray(value)
    dtype = array.dtype if is_float(array.dtype) else np.float64
    return (array * factor).astype(dtype)


def _taylor_call(fn, what, primals, coefficients, order, terms):
    """Run fn's Taylor program: `coefficients[k]` holds the leaves of x_k for k in `terms`.
    Returns (output tree, primal leaves, per output leaf its K coefficients)."""
    def build(program, out_tree, closure, call):
        wrt = [is_float(v.aval.dtype) for v in program.inputs[:len(call.leaves)]]
        jetted, out_flags = jet_program(program, order, wrt + [False] * len(closure), terms=terms)
        staged = Staged(jetted, out_tree, closure)
        staged.wrt, staged.out_flags, staged.out_avals = wrt, out_flags, program.out_avals
        return staged

    staged, call = stage(fn, (what, order, tuple(terms)), tuple(primals), {}, build, guarded=True, every_call=True)
    avals = staged.program.in_avals
    extra = [c if isinstance(c, Tracer) else np.asarray(c, avals[i].dtype)
             for i, w in enumerate(staged.wrt) if w for c in (coefficients[k][i] for k in terms)]
    flat = staged(call.leaves, extra)
    n = len(staged.out_avals)
    rest = iter(flat[n:])
    series = []
    for aval, flag in zip(staged.out_avals, staged.out_flags):
        series.append([next(rest) for _ in range(order)] if flag else
                      [np.zeros(aval.shape, aval.dtype) for _ in range(order)])
    return staged.out_tree, list(flat[:n]), series


def jet(fun, primals, series):
    """Taylor-mode propagation with jax.experimental.jet.jet's convention.

    `primals` is a tuple of arguments, `series` a tuple with, per argument, a list of K terms of its
    structure (derivatives: x(t) = x_0 + sum_k x_k t^k / k!). Returns (primal_out, series_out), with
    series_out shaped like primal_out and a list of K terms at each leaf.

    >>> jet(anp.sin, (0.5,), ([1.0, 0.0, 0.0],))  # doctest: +SKIP
    (0.479..., [0.877..., -0.479..., -0.877...])
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise ArgumentError(f"jet of '{name_of(fun)}': primals and series must be tuples (one entry per argument), "
                            f"got {type(primals).__name__} and {type(series).__name__}")
    if len(primals) != len(series):
        raise ArgumentError(f"jet of '{name_of(fun)}': {len(primals)} primals but {len(series)} series")
    lengths = {len(terms) if isinstance(terms, (tuple, list)) else -1 for terms in series}
    if -1 in lengths:
        raise ArgumentError(f"jet of '{name_of(fun)}': each entry of series must be a list of terms")
    if len(lengths) > 1:
        raise ArgumentError(f"jet of '{name_of(fun)}': jet terms have inconsistent lengths for different arguments: "
                            f"{sorted(lengths)}")
    order = lengths.pop() if lengths else 0
    coefficients = {}
    for k in range(1, order + 1):
        leaves = like_primals("jet", fun, tuple(primals), tuple(terms[k - 1] for terms in series), f"term {k}")
        coefficients[k] = [_scaled(leaf, 1.0 / math.factorial(k)) for leaf in leaves]
    out_tree, primal_out, out_series = _taylor_call(fun, "jet", primals, coefficients, order, range(1, order + 1))
    terms_out = [[_scaled(c, float(math.factorial(k + 1))) for k, c in enumerate(s)] for s in out_series]
    return unflatten(out_tree, primal_out), unflatten(out_tree, terms_out)


def taylor(fun, order: int):
    """The Taylor coefficients of t -> fun(x0 + t v) at t = 0, to `order`: ``taylor(f, K)(x0, v)``
    returns [c_0, ..., c_K] (each shaped like fun's output), c_k = (d/dt)^k fun(x0 + t v) / k!.

    >>> taylor(anp.exp, 3)(0.0, 1.0)  # doctest: +SKIP
    [1.0, 1.0, 0.5, 0.1666...]
    """
    if not isinstance(order, (int, np.integer)) or isinstance(order, bool) or order < 0:
        raise ArgumentError(f"taylor of '{name_of(fun)}': the order must be a non-negative int, got {order!r}")
    order = int(order)

    @functools.wraps(fun)
    def coefficients(x0, v):
        x_leaves, x_tree = flatten(x0)
        v_leaves, v_tree = flatten(v)
        if x_tree != v_tree:
            raise ArgumentError(f"taylor of '{name_of(fun)}': the direction v has the structure {v_tree}, x0 {x_tree}")
        for leaf, direction in zip(x_leaves, v_leaves):
            if np.shape(leaf) != np.shape(direction):
                raise ArgumentError(f"taylor of '{name_of(fun)}': a direction of shape {np.shape(direction)} for x0 of "
                                    f"shape {np.shape(leaf)}")
        terms = (1,) if order >= 1 else ()
        out_tree, primal_out, series = _taylor_call(fun, "taylor", (x0,), {1: v_leaves}, order, terms)
        return [unflatten(out_tree, primal_out)] + [unflatten(out_tree, [s[k] for s in series]) for k in range(order)]

    return coefficients
