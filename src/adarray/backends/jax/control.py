"""JAX lowerings of the control-flow primitives: `cond` -> `lax.switch`, `while` ->
`lax.while_loop`, `fold` -> `lax.scan`, the custom-rule and checkpoint calls inline their
program, `fixed_point` -> a `lax.while_loop` with the convergence test.

`while_grad` (reverse mode through a while loop, which JAX itself cannot differentiate) runs the
loop once to count its steps n, once more to keep m evenly spaced states (stride s = ceil(n / m)),
then walks back: step k is recomputed from the snapshot before it (at most s - 1 body evaluations)
and pulled back through the body's vjp. XLA needs static buffer sizes, so this replaces the NumPy
backend's checkpoint policies (all / every-k / binomial): m is as many states as fit in
SNAPSHOT_BYTES (between MIN_SNAPSHOTS and MAX_SNAPSHOTS), whatever n is; the extra work is about
n (s - 1) / 2 body evaluations, so loops much longer than m steps are slower than on the NumPy
backend, whose binomial checkpointing does O(n log n).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...control.cond import cond_p
from ...control.custom import checkpoint_call_p, custom_jvp_call_p, custom_vjp_call_p
from ...control.fixed_point import fixed_point_p
from ...control.loops import fold_p
from ...control.while_loop import while_grad_p, while_p
from ...core.types import is_float
from .interpreter import lower_program
from .registry import lowering

SNAPSHOT_BYTES = 256 * 2 ** 20
MIN_SNAPSHOTS, MAX_SNAPSHOTS = 64, 8192


def _snapshot_count(avals) -> int:
    state_bytes = sum(max(1, a.size) * np.dtype(a.dtype).itemsize for a in avals)
    return int(min(MAX_SNAPSHOTS, max(MIN_SNAPSHOTS, SNAPSHOT_BYTES // state_bytes)))


def _typed(values, like):
    return tuple(jnp.asarray(v).astype(a.dtype) for v, a in zip(values, like))


@lowering(cond_p)
def _cond(index, *operands, branches):
    lowered = [lower_program(b) for b in branches]
    if len(branches) == 1:
        return lowered[0](*operands)
    chosen = jnp.clip(index.astype(jnp.int32), 0, len(branches) - 1)
    functions = [_returning_tuple(fn) for fn in lowered]
    return list(jax.lax.switch(chosen, functions, *operands))


def _returning_tuple(fn):
    return lambda *xs: tuple(fn(*xs))


def _loop_functions(cond, body, consts, carry_avals):
    test, step = lower_program(cond), lower_program(body)

    def keep_going(carry):
        return jnp.asarray(test(*consts, *carry)[0]).astype(bool).reshape(())

    def advance(carry):
        return _typed(step(*consts, *carry), carry_avals)

    return keep_going, advance


@lowering(while_p)
def _while(*args, cond, body, num_consts, checkpoint):
    consts, carry = args[:num_consts], tuple(args[num_consts:])
    keep_going, advance = _loop_functions(cond, body, consts, body.out_avals)
    return list(jax.lax.while_loop(keep_going, advance, _typed(carry, body.out_avals)))


@lowering(while_grad_p)
def _while_grad(*args, cond, body, body_vjp, num_consts, checkpoint):
    n_in = len(body.inputs)
    consts, start, cotangent = args[:num_consts], _typed(args[num_consts:n_in], body.out_avals), list(args[n_in:])
    carry_avals = body.in_avals[num_consts:]
    keep_going, advance = _loop_functions(cond, body, consts, carry_avals)
    back = lower_program(body_vjp)
    carry_flags = [is_float(a.dtype) for a in carry_avals]
    const_avals = [a for a in body.in_avals[:num_consts] if is_float(a.dtype)]

    count = jax.lax.while_loop(lambda c: keep_going(c[1]), lambda c: (c[0] + 1, advance(c[1])),
                               (jnp.asarray(0, jnp.int64), start))[0]
    kept = _snapshot_count(carry_avals)
    stride = jnp.maximum(1, -(-count // kept))
    snapshots = tuple(jnp.zeros((kept,) + a.shape, a.dtype) for a in carry_avals)

    def record(k, state):
        saved, carry = state
        saved = jax.lax.cond(k % stride == 0,
                             lambda s: tuple(b.at[k // stride].set(c) for b, c in zip(s, carry)), lambda s: s, saved)
        return saved, advance(carry)

    snapshots = jax.lax.fori_loop(0, count, record, (snapshots, start))[0]

    def full(ct):
        it = iter(ct)
        return [next(it) if flag else jnp.zeros(a.shape, a.dtype) for a, flag in zip(carry_avals, carry_flags)]

    def pull_back(i, state):
        accumulated, ct = state
        k = count - 1 - i
        saved = tuple(b[k // stride] for b in snapshots)
        carry = jax.lax.fori_loop(0, k % stride, lambda _, c: advance(c), saved)
        outs = back(*consts, *carry, *full(ct))
        accumulated = tuple(g + o for g, o in zip(accumulated, outs[:len(const_avals)]))
        return accumulated, _typed(outs[len(const_avals):], [a for a, f in zip(carry_avals, carry_flags) if f])

    zeros = tuple(jnp.zeros(a.shape, a.dtype) for a in const_avals)
    float_carry = [a for a, f in zip(carry_avals, carry_flags) if f]
    grads, ct = jax.lax.fori_loop(0, count, pull_back, (zeros, _typed(cotangent, float_carry)))
    return list(grads) + list(ct)


@lowering(fold_p)
def _fold(*args, body, length, reverse, num_consts, num_carry):
    consts = args[:num_consts]
    carry = _typed(args[num_consts:num_consts + num_carry], body.out_avals[:num_carry])
    xs = tuple(args[num_consts + num_carry:])
    run = lower_program(body)

    def step(carry, x):
        outs = run(*consts, *carry, *x)
        carry_avals, y_avals = body.out_avals[:num_carry], body.out_avals[num_carry:]
        return _typed(outs[:num_carry], carry_avals), _typed(outs[num_carry:], y_avals)

    carry, ys = jax.lax.scan(step, carry, xs, length=length, reverse=reverse)
    return list(carry) + list(ys)


@lowering(custom_jvp_call_p, custom_vjp_call_p, checkpoint_call_p)
def _call(*args, fun, **params):
    return lower_program(fun)(*args)


@lowering(fixed_point_p)
def _fixed_point(*args, step, num_params, tol, max_iter):
    """x <- step(params, x) until every element moves by at most tol * (1 + |x|). Inside XLA a loop
    cannot raise: where the NumPy backend reports no convergence after max_iter steps, the state
    becomes NaN (integer parts keep their last value)."""
    params, state = args[:num_params], _typed(args[num_params:], step.out_avals)
    run = lower_program(step)

    def converged(new, old):
        flags = [jnp.all(jnp.abs(n - x) <= tol * (1.0 + jnp.abs(n))) if jnp.issubdtype(n.dtype, jnp.inexact)
                 else jnp.array_equal(n, x) for n, x in zip(new, old)]
        return jnp.all(jnp.stack(flags)) if flags else jnp.asarray(True)

    def body(loop):
        i, _, old = loop
        new = _typed(run(*params, *old), step.out_avals)
        return i + 1, converged(new, old), new

    _, done, state = jax.lax.while_loop(lambda loop: (loop[0] < max_iter) & ~loop[1], body,
                                        (jnp.asarray(0, jnp.int64), jnp.asarray(False), state))
    return [jnp.where(done, x, jnp.nan) if jnp.issubdtype(x.dtype, jnp.inexact) else x for x in state]
