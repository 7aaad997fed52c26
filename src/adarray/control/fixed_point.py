"""fixed_point: x* = f(params, x*) by iteration, differentiated by the implicit function theorem.

One primitive, fixed_point[step, num_params, tol, max_iter]: inputs (params, x0) -> x*.
`step` is the traced f, a program (params, x) -> x. The NumPy implementation iterates
x <- f(params, x) until every element moves by at most tol * (1 + |x|).

With A = df/dx and B = df/dparams at (params, x*), differentiating x* = f(params, x*) gives
dx* = A dx* + B dparams, so dx* = (I - A)^-1 B dparams: the derivative never looks at the
iterations that led to x* (and x0 has no influence on x*, its derivative is zero).
  * jvp: dx* is itself a fixed point, of dx <- A dx + B dparams (the jvp of f at x*): a
    fixed_point equation of f's jvp program, so nothing is taped and no iteration unrolled;
  * vjp: u = A^T u + g is a fixed point too (the vjp of f in x, plus g), and the cotangent of
    params is B^T u (the vjp of f in params). Also a fixed_point equation: reverse mode keeps
    only params and x*, whatever the number of iterations;
  * both rules bind fixed_point again, so every order of derivative is implicit (the lead's
    second-order checks run on it; the adjoint iteration converges at the rate of the forward
    one, since A^T and A have the same spectrum);
  * batching: the vmapped step; every lane iterates until all have converged (a converged lane
    of a contraction stays where it is, within the tolerance).
This is the rule of autograd's `fixed_point` example and of JAX's documented `fixed_point`
(custom_vjp) recipe, as one primitive so that forward mode and vmap need no transposition.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError, ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.pytree import flatten, unflatten
from ..passes import simplify
from ..primitives import elementwise as ew
from ..primitives.rules import batch_all, broadcast_batch
from ..primitives.taylor import FROM_JVP
from ..tracing import eval_program, trace_program
from ..transforms import sparsity, sparsity_nested
from ..transforms.jvp import jvp_program
from ..transforms.vjp import vjp_program
from ..transforms.vmap import vmap_program
from .common import aval_of, float_flags, sample_equation


def _abstract_eval(*avals, step, num_params, tol, max_iter):
    params, state = tuple(avals[:num_params]), tuple(avals[num_params:])
    if step.in_avals != params + state:
        raise ShapeError(f"fixed_point: the step takes {step.in_avals}, the operands are {params + state}")
    if step.out_avals != state:
        raise ShapeError(f"fixed_point: the step returns {step.out_avals} for the state {state}")
    return list(state)


fixed_point_p = Primitive("fixed_point", _abstract_eval, multiple_results=True)


def _program(fn, avals, name):
    program, _, _ = trace_program(fn, list(avals), name)
    return simplify(program)


def _bind(params, state, step, tol, max_iter):
    return fixed_point_p.bind(*params, *state, step=step, num_params=len(params), tol=tol, max_iter=max_iter)


def _zeros(avals):
    return [np.zeros(a.shape, a.dtype) for a in avals]


# --- forward mode: dx = A dx + B dparams ---------------------------------------------------------

def _fixed_point_jvp(tangents, primals, outputs, *, step, num_params, tol, max_iter):
    param_avals, state_avals = step.in_avals[:num_params], step.in_avals[num_params:]
    moving = [not is_zero(t) for t in tangents[:num_params]]  # params whose tangent is not a symbolic zero
    if not any(moving):
        return [Zero(a) for a in state_avals]
    derived = jvp_program(step, moving + float_flags(state_avals))
    n_params, n_state, n_moving = num_params, len(state_avals), sum(moving)
    state_flags = float_flags(state_avals)

    def tangent_step(*args):
        # args: params, x*, the nonzero param tangents, then the state tangent dx (float leaves)
        params, x_star = args[:n_params], args[n_params:n_params + n_state]
        rest = args[n_params + n_state:]
        t_params, dx = rest[:n_moving], iter(rest[n_moving:])
        t_state = [next(dx) if f else np.zeros(a.shape, a.dtype) for a, f in zip(state_avals, state_flags)]
        outs = eval_program(derived, [*params, *x_star, *t_params, *[t for t, f in zip(t_state, state_flags) if f]])
        return [t for t, f in zip(outs[n_state:], state_flags) if f]

    float_state = [a for a, f in zip(state_avals, state_flags) if f]
    avals = [*param_avals, *state_avals, *[a for a, m in zip(param_avals, moving) if m], *float_state]
    program = _program(tangent_step, avals, "fixed_point jvp step")
    known = [*primals[:num_params], *outputs, *[t for t in tangents[:num_params] if not is_zero(t)]]
    result = iter(_bind(known, _zeros(float_state), program, tol, max_iter))
    return [next(result) if f else Zero(a) for a, f in zip(state_avals, state_flags)]


# --- reverse mode: u = A^T u + g, then B^T u ----------------------------------------------------

def _fixed_point_vjp(cotangents, primals, outputs, needs, *, step, num_params, tol, max_iter):
    param_avals, state_avals = step.in_avals[:num_params], step.in_avals[num_params:]
    param_flags = [need and f for need, f in zip(needs[:num_params], float_flags(param_avals))]
    if not any(param_flags):
        return [None] * len(primals)
    state_flags = float_flags(state_avals)
    n_params, n_state = num_params, len(state_avals)
    float_state = [a for a, f in zip(state_avals, state_flags) if f]
    in_state = vjp_program(step, [False] * n_params + state_flags)  # (params, x, cotangents of f) -> A^T u
    in_params = vjp_program(step, param_flags + [False] * n_state)  # -> B^T u

    def full(values):
        it = iter(values)
        return [next(it) if f else np.zeros(a.shape, a.dtype) for a, f in zip(state_avals, state_flags)]

    def adjoint_step(*args):
        # args: params, x*, g (float leaves), then u (float leaves)
        params, x_star = args[:n_params], args[n_params:n_params + n_state]
        rest = args[n_params + n_state:]
        g, u = rest[:len(float_state)], rest[len(float_state):]
        pulled = eval_program(in_state, [*params, *x_star, *full(u)])[n_state:]
        return [ew.add(p, gi) for p, gi in zip(pulled, g)]

    seeds = [np.zeros(a.shape, a.dtype) if is_zero(c) else c
             for c, a, f in zip(cotangents, state_avals, state_flags) if f]
    avals = [*param_avals, *state_avals, *float_state, *float_state]
    program = _program(adjoint_step, avals, "fixed_point vjp step")
    u = _bind([*primals[:num_params], *outputs, *seeds], seeds, program, tol, max_iter)
    results = iter(eval_program(in_params, [*primals[:num_params], *outputs, *full(u)])[n_state:])
    return [next(results) if f else None for f in param_flags] + [None] * n_state


fixed_point_p.jvp, fixed_point_p.vjp = _fixed_point_jvp, _fixed_point_vjp


# --- batching ------------------------------------------------------------------------------------

def _fixed_point_batch(args, batched, size, *, step, num_params, tol, max_iter):
    everything = batch_all(args, batched, size)
    batched_step, out_flags = vmap_program(step, [True] * len(args), size)
    if not all(out_flags):
        inner = batched_step
        batched_step = _program(
            lambda *a: [o if f else broadcast_batch(o, size) for o, f in zip(eval_program(inner, list(a)), out_flags)],
            inner.in_avals, "fixed_point batch")
    outs = fixed_point_p.bind(*everything, step=batched_step, num_params=num_params, tol=tol, max_iter=max_iter)
    return outs, [True] * len(outs)


fixed_point_p.batch = _fixed_point_batch


# --- the user-facing function --------------------------------------------------------------------

def fixed_point(f, params, x0, *, tol=1e-10, max_iter=1000):
    """The x with x = f(params, x), found by iterating from x0; derivatives by implicit differentiation.

    The loop stops when every element moves by at most ``tol * (1 + |x|)``; more than `max_iter`
    iterations raise ExecutionError when the loop runs. `params` and `x0` are pytrees (x0 gives the
    state's structure). Derivatives (any order, forward and reverse) follow from the implicit
    function theorem, dx*/dparams = (I - df/dx)^-1 df/dparams, each solved by iteration too:
    the iterations of the forward loop are never taped. The derivative with respect to x0 is zero.
    f must be a contraction near x* for the iterations (and their derivatives) to converge.
    Traced values that f closes over are treated as further params.

    >>> fixed_point(lambda a, x: a * anp.cos(x), 0.5, 0.0)   # x = 0.5 cos(x)   # doctest: +SKIP
    array(0.45018361)
    """
    if not (isinstance(max_iter, (int, np.integer)) and max_iter > 0):
        raise ArgumentError(f"fixed_point: max_iter must be a positive integer, got {max_iter!r}")
    if not (isinstance(tol, (int, float, np.floating)) and tol > 0):
        raise ArgumentError(f"fixed_point: tol must be a positive number, got {tol!r}")
    param_leaves, param_tree = flatten(params)
    state_leaves, state_tree = flatten(x0)
    param_avals = [aval_of(p) for p in param_leaves]
    state_avals = [aval_of(x) for x in state_leaves]
    name = getattr(f, "__name__", "f")
    n_params = len(param_leaves)

    def step(*leaves):
        return f(unflatten(param_tree, leaves[:n_params]), unflatten(state_tree, leaves[n_params:]))

    step.__name__ = name
    program, out_tree, closure = trace_program(step, param_avals + state_avals, name)
    if out_tree != state_tree or tuple(program.out_avals) != tuple(state_avals):
        raise ShapeError(f"fixed_point: '{name}' returns {out_tree} of {tuple(program.out_avals)}, but the state "
                         f"x0 is {state_tree} of {tuple(state_avals)}; f(params, x) must return x's structure, "
                         "shapes and dtypes")
    if closure:  # (params, x, closure) -> (params, closure, x): what f closes over becomes params
        inner, n_closure = program, len(closure)
        def reordered(*a):
            return eval_program(inner, [*a[:n_params], *a[n_params + n_closure:], *a[n_params:n_params + n_closure]])

        program = _program(reordered, param_avals + [c.aval for c in closure] + state_avals, name)
    else:
        program = simplify(program)
    outs = _bind([*param_leaves, *closure], state_leaves, program, float(tol), int(max_iter))
    return unflatten(state_tree, outs)


def _sample(rng):
    def cosine(a, x):      # x = a cos(x): a contraction for |a| < 1
        return fixed_point(lambda a, x: ew.mul(a, ew.cos(x)), a, x, tol=1e-15)

    def newton_sqrt(a, x):  # x = (x + a / x) / 2: df/dx vanishes at x* = sqrt(a)
        return fixed_point(lambda a, x: ew.mul(0.5, ew.add(x, ew.div(a, x))), a, x, tol=1e-15)

    def two_leaves(p, x):  # a state of two leaves coupled through params of two leaves
        def f(p, x):
            return (ew.mul(p[0], ew.sin(x[1])), ew.add(ew.mul(p[1], ew.tanh(x[0])), p[0]))
        return fixed_point(f, p, x, tol=1e-15)

    return [
        sample_equation(cosine, [rng.uniform(0.2, 0.6, size=3), np.zeros(3)], "fixed_point"),
        sample_equation(newton_sqrt, [rng.uniform(1.0, 3.0, size=2), np.ones(2)], "fixed_point"),
        sample_equation(lambda p0, p1, x0, x1: two_leaves((p0, p1), (x0, x1)),
                        [rng.uniform(0.2, 0.5, size=2), rng.uniform(0.2, 0.5, size=2), np.zeros(2), np.zeros(2)],
                        "fixed_point"),
    ]


fixed_point_p.sample = _sample


def _set_taylor_rules():
    """Taylor mode: the series of the jvp rule (exact)."""
    fixed_point_p.taylor = FROM_JVP


_set_taylor_rules()

sparsity.register(fixed_point_p, sparsity.Rule("nested", sparsity_nested.fixed_point_dependence, exact=False))
