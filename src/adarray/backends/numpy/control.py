"""NumPy implementations of the control-flow primitives: their nested programs are compiled
once (per program object) and run by Python loops and branches; fixed_point iterates its step."""
from __future__ import annotations

import weakref

import numpy as np

from ...control.cond import cond_p
from ...control.custom import checkpoint_call_p, custom_jvp_call_p, custom_vjp_call_p
from ...control.fixed_point import fixed_point_p
from ...control.loops import fold_p
from ...control.while_loop import while_grad_p, while_p
from ...core.errors import ExecutionError
from ...core.types import is_float
from .interpreter import compile_program
from .registry import IMPLS

_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def compiled(program):
    """The compiled callable of a nested program, cached on the program object."""
    run = _compiled.get(program)
    if run is None:
        run = _compiled[program] = compile_program(program)
    return run


def _cond(index, *operands, branches):
    chosen = min(max(int(index), 0), len(branches) - 1)
    return compiled(branches[chosen])(*operands)


IMPLS[cond_p] = _cond



def _while(*args, cond, body, num_consts, checkpoint):
    consts, carry = args[:num_consts], list(args[num_consts:])
    test, step = compiled(cond), compiled(body)
    while test(*consts, *carry)[0]:
        carry = step(*consts, *carry)
    return carry


IMPLS[while_p] = _while


def _while_grad(*args, cond, body, body_vjp, num_consts, checkpoint):
    """Run the loop forward keeping states per `checkpoint`, then walk back through the body's vjp."""
    n = len(body.inputs)
    consts, start, cotangent = args[:num_consts], list(args[num_consts:n]), list(args[n:])
    test, step, back = compiled(cond), compiled(body), compiled(body_vjp)
    carry_avals = body.in_avals[num_consts:]
    carry_flags = [is_float(a.dtype) for a in carry_avals]
    const_count = sum(is_float(a.dtype) for a in body.in_avals[:num_consts])
    accumulated = [None] * const_count

    def full(ct):
        it = iter(ct)
        return [next(it) if f else np.zeros(a.shape, a.dtype) for a, f in zip(carry_avals, carry_flags)]

    def reverse_through(states, ct):
        for state in reversed(states):
            outs = back(*consts, *state, *full(ct))
            for i, value in enumerate(outs[:const_count]):
                accumulated[i] = value if accumulated[i] is None else accumulated[i] + value
            ct = outs[const_count:]
        return ct

    def advance(state, steps):
        for _ in range(steps):
            state = step(*consts, *state)
        return state

    def reverse_segment(state, length, ct):
        """Reverse `length` steps from `state` by recursive bisection: O(log length) states kept
        (plus a short run of at most 16 kept whole at the bottom of the recursion)."""
        if length <= 16:
            states = [state]
            for _ in range(length - 1):
                states.append(step(*consts, *states[-1]))
            return reverse_through(states, ct)
        half = length // 2
        ct = reverse_segment(advance(state, half), length - half, ct)
        return reverse_segment(state, half, ct)

    kept, count, state = [], 0, start
    while test(*consts, *state)[0]:
        if checkpoint == "all" or (checkpoint == "binomial" and (count & (count - 1)) == 0) or (
                isinstance(checkpoint, int) and count % checkpoint == 0):
            kept.append((count, state))
        state = step(*consts, *state)
        count += 1
    if checkpoint == "all":
        cotangent = reverse_through([s for _, s in kept], cotangent)
    else:
        bounds = [i for i, _ in kept] + [count]
        for (begin, saved), end in reversed(list(zip(kept, bounds[1:]))):
            if checkpoint == "binomial":
                cotangent = reverse_segment(saved, end - begin, cotangent)
            else:
                states = [saved]
                for _ in range(end - begin - 1):
                    states.append(step(*consts, *states[-1]))
                cotangent = reverse_through(states, cotangent)
    const_avals = [a for a in body.in_avals[:num_consts] if is_float(a.dtype)]
    grads = [np.zeros(a.shape, a.dtype) if g is None else g for g, a in zip(accumulated, const_avals)]
    return grads + list(cotangent)


IMPLS[while_grad_p] = _while_grad


def _fold(*args, body, length, reverse, num_consts, num_carry):
    consts = args[:num_consts]
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    run = compiled(body)
    y_avals = body.out_avals[num_carry:]
    ys = [np.empty((length,) + a.shape, a.dtype) for a in y_avals]
    for t in (reversed(range(length)) if reverse else range(length)):
        outs = run(*consts, *carry, *[x[t] for x in xs])
        carry = outs[:num_carry]
        for buffer, value in zip(ys, outs[num_carry:]):
            buffer[t] = value
    return list(carry) + ys


IMPLS[fold_p] = _fold


def _call(*args, fun, **params):
    return compiled(fun)(*args)


for _primitive in (custom_jvp_call_p, custom_vjp_call_p, checkpoint_call_p):
    IMPLS[_primitive] = _call



def _fixed_point(*args, step, num_params, tol, max_iter):
    """x <- step(params, x) until every element moves by at most tol * (1 + |x|)."""
    params, state = args[:num_params], [np.asarray(x) for x in args[num_params:]]
    run = compiled(step)
    for _ in range(max_iter):
        new = [np.asarray(x) for x in run(*params, *state)]
        # NaN never compares as converged, so a diverging loop ends in the error below.
        converged = all(np.all(np.abs(n - x) <= tol * (1.0 + np.abs(n))) if np.issubdtype(n.dtype, np.inexact)
                        else np.array_equal(n, x) for n, x in zip(new, state))
        state = new
        if converged:
            return state
    changes = [float(np.max(np.abs(n - x), initial=0.0)) for n, x in zip(run(*params, *state), state)]
    raise ExecutionError(f"fixed_point: no convergence to tol={tol:g} after max_iter={max_iter} iterations "
                         f"(the last step still moved the state by up to {max(changes, default=0.0):g}); "
                         "f must be a contraction near the fixed point, or raise max_iter")


IMPLS[fixed_point_p] = _fixed_point
