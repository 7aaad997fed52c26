"""fold: a sequential loop that threads a carry and stacks per-step outputs (the role of
lax.scan), and fori_loop built on it (or on while_loop for traced bounds).

One primitive, fold[body, length, reverse, num_consts, num_carry] with inputs
(consts, initial carry, xs) and outputs (final carry, stacked ys); the body
maps (consts, carry, x) to (carry, y).
  * jvp: a fold of the body's jvp program (tangents ride along in the carry);
  * vjp: the forward fold also stacks every step's input carry (the tape); the
    backward fold runs the body's vjp program in reverse over it, accumulating
    the cotangents of the consts in its carry. Both are folds of programs, so
    derivatives of every order work;
  * batching: a fold of the batched body (the carry's batching is a fixed point).
Memory policies (`checkpoint=`) restructure the loop before any derivative:
an integer k nests a fold of k steps inside a fold over blocks, so reverse mode
keeps one carry per block plus k inside the block being reversed; "binomial"
nests recursively (about log(n) levels of three-way blocks), so the tape stays
logarithmic in the trip count at the price of about log(n) forward recomputations.
"""
from __future__ import annotations

import inspect
import math

import numpy as np

from ..core.errors import ArgumentError, IndexOutOfRangeError, ShapeError, TracingError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.pytree import flatten, unflatten
from ..passes import one_hot, simplify
from ..passes.one_hot_loops import fold_rule as fold_one_hot_rule
from ..primitives import elementwise as ew
from ..primitives.rules import aval_of_value, broadcast_batch
from ..primitives.structural import concatenate, reshape, slice_array, transpose
from ..tracing import Tracer, eval_program, trace_program
from ..transforms import sparsity, sparsity_nested
from ..transforms.jet import carried_flags, grouped_jet, grouped_series, grouped_values, has_series
from ..transforms.jvp import jvp_program
from ..transforms.vjp import vjp_program
from ..transforms.vmap import vmap_program
from .arguments import integer_scalar, operand_avals, require_function
from .common import aval_of, check_same_structure, float_flags, sample_equation
from .while_loop import while_loop


def _split(values, num_consts, num_carry):
    return values[:num_consts], values[num_consts:num_consts + num_carry], values[num_consts + num_carry:]


def _fold_abstract_eval(*avals, body, length, reverse, num_consts, num_carry):
    consts, carry, xs = _split(list(avals), num_consts, num_carry)
    slices = []
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise ShapeError(f"fold: every xs leaf needs a leading axis of length {length}, got {x}")
        slices.append(x.update(shape=x.shape[1:]))
    expected = tuple(consts + carry + slices)
    if body.in_avals != expected:
        raise ShapeError(f"fold: the body takes {body.in_avals}, the loop gives it {expected}")
    out_carry, ys = body.out_avals[:num_carry], body.out_avals[num_carry:]
    if tuple(out_carry) != tuple(carry):
        raise ShapeError(f"fold: the body returns the carry {out_carry}, it came in as {tuple(carry)}")
    return list(carry) + [y.update(shape=(length,) + y.shape) for y in ys]


fold_p = Primitive("fold", _fold_abstract_eval, multiple_results=True)


def _program(fn, avals, name):
    program, _, _ = trace_program(fn, list(avals), name)
    return simplify(program)


# --- forward mode --------------------------------------------------------------------------------

def _fold_jvp(tangents, primals, outputs, *, body, length, reverse, num_consts, num_carry):
    consts, carry, xs = _split(list(primals), num_consts, num_carry)
    t_consts, t_carry, t_xs = _split(list(tangents), num_consts, num_carry)
    c_avals, k_avals, x_avals = _split(list(body.in_avals), num_consts, num_carry)
    c_flags, k_flags, x_flags = float_flags(c_avals), float_flags(k_avals), float_flags(x_avals)
    derived = jvp_program(body, c_flags + k_flags + x_flags)
    y_avals = body.out_avals[num_carry:]
    y_flags = float_flags(y_avals)
    n_out, nc, nk = len(body.outputs), sum(c_flags), sum(k_flags)

    def step(*args):
        consts_, t_consts_ = args[:num_consts], args[num_consts:num_consts + nc]
        rest = args[num_consts + nc:]
        carry_, t_carry_ = rest[:num_carry], rest[num_carry:num_carry + nk]
        x_, t_x_ = rest[num_carry + nk:num_carry + nk + len(x_avals)], rest[num_carry + nk + len(x_avals):]
        outs = eval_program(derived, [*consts_, *carry_, *x_, *t_consts_, *t_carry_, *t_x_])
        primal, tangent = outs[:n_out], outs[n_out:]
        return ([*primal[:num_carry], *[t for t, f in zip(tangent[:num_carry], k_flags) if f],
                 *primal[num_carry:], *[t for t, f in zip(tangent[num_carry:], y_flags) if f]])

    def pick(values, avals, flags):
        return [np.zeros(a.shape, a.dtype) if is_zero(v) else v for v, a, f in zip(values, avals, flags) if f]

    step_avals = ([*c_avals, *[a for a, f in zip(c_avals, c_flags) if f], *k_avals,
                   *[a for a, f in zip(k_avals, k_flags) if f], *x_avals, *[a for a, f in zip(x_avals, x_flags) if f]])
    new_body = _program(step, step_avals, "fold jvp")
    stacked_x_avals = [aval_of_value(x) for x in xs]
    outs = fold_p.bind(*consts, *pick(t_consts, c_avals, c_flags), *carry, *pick(t_carry, k_avals, k_flags),
                       *xs, *pick(t_xs, stacked_x_avals, x_flags),
                       body=new_body, length=length, reverse=reverse,
                       num_consts=num_consts + nc, num_carry=num_carry + nk)
    t_carry_out = iter(outs[num_carry:num_carry + nk])
    t_ys = iter(outs[num_carry + nk + len(y_avals):])
    result = [next(t_carry_out) if f else Zero(a) for a, f in zip(k_avals, k_flags)]
    result += [next(t_ys) if f else Zero(a.update(shape=(length,) + a.shape)) for a, f in zip(y_avals, y_flags)]
    return result


# --- reverse mode --------------------------------------------------------------------------------

def _forward_with_tape(*args, body, length, reverse, num_consts, num_carry):
    """The fold, also stacking each step's input carry: (outputs, the tape of carries)."""
    n_in = len(body.inputs)

    def step(*inputs):
        return list(eval_program(body, list(inputs))) + list(inputs[num_consts:num_consts + num_carry])

    taping = _program(step, body.in_avals[:n_in], "fold with tape")
    outs = fold_p.bind(*args, body=taping, length=length, reverse=reverse, num_consts=num_consts,
                       num_carry=num_carry)
    return outs[:len(body.outputs)], outs[len(body.outputs):]


def _fold_vjp(cotangents, primals, outputs, needs, *, residuals, body, length, reverse, num_consts, num_carry):
    consts, carry, xs = _split(list(primals), num_consts, num_carry)
    c_avals, k_avals, x_avals = _split(list(body.in_avals), num_consts, num_carry)
    out_avals = body.out_avals
    flags = float_flags(body.in_avals)
    c_flags, k_flags, x_flags = _split(flags, num_consts, num_carry)
    derived = vjp_program(body, flags)
    n_out = len(out_avals)
    nc, nk = sum(c_flags), sum(k_flags)
    seeds = [np.zeros(aval_of_value(o).shape, aval_of_value(o).dtype) if is_zero(c) else c
             for c, o in zip(cotangents, outputs)]
    ct_carry, ct_ys = seeds[:num_carry], seeds[num_carry:]
    float_ct_carry = [c for c, f in zip(ct_carry, k_flags) if f]
    accumulators = [np.zeros(a.shape, a.dtype) for a, f in zip(c_avals, c_flags) if f]

    def step(*args):
        consts_ = args[:num_consts]
        ct_carry_, acc = args[num_consts:num_consts + nk], args[num_consts + nk:num_consts + nk + nc]
        rest = args[num_consts + nk + nc:]
        carry_, x_, ct_y = rest[:num_carry], rest[num_carry:num_carry + len(x_avals)], rest[num_carry + len(x_avals):]
        full_ct_carry, it = [], iter(ct_carry_)
        for a, f in zip(k_avals, k_flags):
            full_ct_carry.append(next(it) if f else np.zeros(a.shape, a.dtype))
        outs = eval_program(derived, [*consts_, *carry_, *x_, *full_ct_carry, *ct_y])[n_out:]
        ct_c, ct_k, ct_x = outs[:nc], outs[nc:nc + nk], outs[nc + nk:]
        # a constant's cotangent the step's program gives as a constant 0 is not added in (symbolic zero)
        return [*ct_k, *[a if _constant_zero(c) else ew.add(a, c) for a, c in zip(acc, ct_c)], *ct_x]

    y_avals = list(out_avals[num_carry:])
    step_avals = [*c_avals, *[a for a, f in zip(k_avals, k_flags) if f], *[a for a, f in zip(c_avals, c_flags) if f],
                  *k_avals, *x_avals, *y_avals]
    backward = _program(step, step_avals, "fold vjp")
    outs = fold_p.bind(*consts, *float_ct_carry, *accumulators, *residuals, *xs, *ct_ys,
                       body=backward, length=length, reverse=not reverse, num_consts=num_consts,
                       num_carry=nk + nc)
    ct_k, ct_c, ct_x = iter(outs[:nk]), iter(outs[nk:nk + nc]), iter(outs[nk + nc:])
    result = [next(ct_c) if f else None for f in c_flags]
    result += [next(ct_k) if f else None for f in k_flags]
    result += [next(ct_x) if f else None for f in x_flags]
    return [r if need else None for r, need in zip(result, needs)]


def _constant_zero(value) -> bool:
    return not isinstance(value, Tracer) and not np.any(value)


fold_p.jvp, fold_p.vjp = _fold_jvp, _fold_vjp
fold_p.forward_with_residuals = _forward_with_tape


# --- batching ------------------------------------------------------------------------------------

def _fold_batch(args, batched, size, *, body, length, reverse, num_consts, num_carry):
    consts, carry, xs = _split(list(args), num_consts, num_carry)
    c_flags, k_flags, x_flags = _split(list(batched), num_consts, num_carry)
    k_flags = list(k_flags)
    while True:  # the carry is batched if it starts batched or the body makes it so
        program, out_flags = vmap_program(body, [*c_flags, *k_flags, *x_flags], size)
        widened = [a or b for a, b in zip(k_flags, out_flags[:num_carry])]
        if widened == k_flags:
            break
        k_flags = widened
    carry = [c if f or not w else broadcast_batch(c, size) for c, f, w in zip(carry, batched[num_consts:], k_flags)]
    carry = [c for c in carry]
    y_flags = list(out_flags[num_carry:])
    # The body returns its carry batched exactly where k_flags says (broadcast the rest).
    if list(out_flags[:num_carry]) != k_flags:
        inner = program

        def widen(*inputs):
            outs = eval_program(inner, list(inputs))
            return [broadcast_batch(o, size) if want and not have else o
                    for o, have, want in zip(outs, out_flags, k_flags + y_flags)]

        program = _program(widen, program.in_avals, "fold batch")
    # xs are stacked along the loop axis first: a batched x is (batch, length, ...) -> (length, batch, ...)
    xs = [transpose(x, (1, 0) + tuple(range(2, len(aval_of_value(x).shape)))) if f else x
          for x, f in zip(xs, x_flags)]
    outs = fold_p.bind(*consts, *carry, *xs, body=program, length=length, reverse=reverse,
                       num_consts=num_consts, num_carry=num_carry)
    ys = [transpose(y, (1, 0) + tuple(range(2, len(aval_of_value(y).shape)))) if f else y
          for y, f in zip(outs[num_carry:], y_flags)]
    return list(outs[:num_carry]) + ys, k_flags + y_flags


fold_p.batch = _fold_batch


# --- the user-facing loops -----------------------------------------------------------------------

_BRANCHING = 8  # "binomial": blocks of 8 per level, about log_8(n) levels


def _policy_blocks(length: int, checkpoint):
    """Block sizes from the outermost level inward, or [] to keep every step ("all")."""
    if checkpoint is None or (isinstance(checkpoint, str) and checkpoint == "all"):
        return []
    if isinstance(checkpoint, str) and checkpoint == "binomial":
        levels = max(1, round(math.log(max(length, 2), _BRANCHING)))
        sizes = [_BRANCHING ** level for level in range(levels - 1, 0, -1)]
        return [s for s in sizes if s < length]
    if isinstance(checkpoint, int) and not isinstance(checkpoint, bool) and checkpoint >= 1:
        return [checkpoint] if checkpoint < length else []
    raise ArgumentError(f"checkpoint must be 'all', 'binomial' or a positive integer, got {checkpoint!r}")


def _fold_leaves(consts, carry, xs, body, length, reverse, blocks):
    """Bind a fold (nested per `blocks`) on flat leaves; returns (carry, ys) leaves."""
    num_consts, num_carry = len(consts), len(carry)
    if not blocks or length == 0:
        outs = fold_p.bind(*consts, *carry, *xs, body=body, length=length, reverse=reverse,
                           num_consts=num_consts, num_carry=num_carry)
        return list(outs[:num_carry]), list(outs[num_carry:])
    block, inner_blocks = blocks[0], blocks[1:]
    count, rest = divmod(length, block)
    tail = [_window(x, count * block, length) for x in xs]

    def run_tail(carry):  # the last `rest` steps, after the blocks (before them when reversed)
        return _fold_leaves(consts, carry, tail, body, rest, reverse, inner_blocks) if rest else (carry, [])

    if reverse:
        carry, tail_ys = run_tail(carry)
    head = [reshape(_window(x, 0, count * block), (count, block) + aval_of_value(x).shape[1:]) for x in xs]
    c_avals, k_avals = [aval_of_value(c) for c in consts], [aval_of_value(c) for c in carry]
    x_avals = [aval_of_value(x).update(shape=aval_of_value(x).shape[1:]) for x in head]

    def block_step(*args):
        consts_, carry_, xs_ = _split(list(args), num_consts, num_carry)
        new_carry, ys = _fold_leaves(consts_, carry_, xs_, body, block, reverse, inner_blocks)
        return new_carry + ys

    block_body = _program(block_step, c_avals + k_avals + x_avals, "checkpointed block")
    outs = fold_p.bind(*consts, *carry, *head, body=block_body, length=count, reverse=reverse,
                       num_consts=num_consts, num_carry=num_carry)
    carry = list(outs[:num_carry])
    ys = [reshape(y, (count * block,) + aval_of_value(y).shape[2:]) for y in outs[num_carry:]]
    if not reverse:
        carry, tail_ys = run_tail(carry)
    if rest:
        ys = [concatenate([y, t], 0) for y, t in zip(ys, tail_ys)]
    return carry, ys


def _window(x, start, stop):
    shape = aval_of_value(x).shape
    return slice_array(x, (start,) + (0,) * (len(shape) - 1), (stop,) + shape[1:], (1,) * len(shape))


def fold(f, init, xs=None, length=None, reverse=False, checkpoint="all"):
    """Sequential loop: ``carry, y = f(carry, x)`` for each x in xs; returns (carry, stacked ys).

    `init` and `xs` are pytrees; xs leaves share a leading axis (or give `length`
    when xs is None). `checkpoint` sets what reverse mode keeps: "all" (every
    step's carry), an integer k (every k-th, recomputing the rest) or
    "binomial" (memory logarithmic in the length).

    >>> fold(lambda c, x: (c + x, c * x), 0.0, anp.arange(5.0))  # doctest: +SKIP
    """
    require_function("fold", f, "f")
    if not isinstance(reverse, (bool, int, np.bool_, np.integer)):
        raise ArgumentError(f"fold: reverse must be True or False, got a {type(reverse).__name__}")
    _policy_blocks(0, checkpoint)  # a bad policy is an error whatever the length
    carry_leaves, carry_tree = flatten(init)
    x_leaves, x_tree = flatten(xs)
    operand_avals("fold", "init", init)
    operand_avals("fold", "xs", xs)
    if not x_leaves and length is None:
        raise ArgumentError("fold: give xs (inputs stacked along a leading axis) or length (the number of steps)")
    if length is not None:
        length = integer_scalar("fold", "length", length)
        if isinstance(length, Tracer) or length < 0:
            raise ArgumentError(f"fold: length must be a non-negative Python int (the number of steps is static; "
                                f"use while_loop for a traced count), got {length!r}")
    lengths = {(x.shape if isinstance(x, Tracer) else np.shape(x))[0] if np.ndim(x) or isinstance(x, Tracer)
               else None for x in x_leaves}
    if length is not None:
        lengths.add(length)
    if len(lengths) != 1 or None in lengths:
        raise ShapeError(f"fold: xs leaves need one common leading axis (and length must agree), got {lengths}")
    length = lengths.pop()
    carry_avals = [aval_of(c) for c in carry_leaves]
    x_avals = [aval_of(x).update(shape=aval_of(x).shape[1:]) for x in x_leaves]
    name = getattr(f, "__name__", "body")

    def step(*leaves):
        carry = unflatten(carry_tree, leaves[:len(carry_leaves)])
        x = unflatten(x_tree, leaves[len(carry_leaves):])
        result = f(carry, x)
        if not isinstance(result, tuple) or len(result) != 2:
            raise ShapeError(f"fold: '{name}' must return a pair (carry, y)")
        return result

    program, out_tree, closure = trace_program(step, carry_avals + x_avals, name)
    new_carry_tree = out_tree.children[0]
    check_same_structure("fold", "the initial carry", carry_tree, carry_avals,
                         f"the carry returned by '{name}'", new_carry_tree,
                         list(program.out_avals[:new_carry_tree.num_leaves]))
    consts = list(closure)
    body = _move_consts_first(program, len(carry_leaves) + len(x_leaves), len(consts))
    carry_out, ys = _fold_leaves(consts, carry_leaves, x_leaves, simplify(body), length, bool(reverse),
                                 _policy_blocks(length, checkpoint))
    return unflatten(new_carry_tree, carry_out), unflatten(out_tree.children[1], ys)


def _move_consts_first(program, num_operands: int, num_consts: int):
    """A traced body takes (operands, closure); the fold primitive wants (consts, operands)."""
    if num_consts == 0:
        return program
    avals = list(program.in_avals[num_operands:]) + list(program.in_avals[:num_operands])

    def reordered(*args):
        return eval_program(program, list(args[num_consts:]) + list(args[:num_consts]))

    result, _, _ = trace_program(reordered, avals, "body")
    return result


# Parameter names that say "loop index": a body_fn whose second parameter has one of them (and whose
# first has none) was written body(carry, i), the order fori_loop does not use.
_INDEX_NAMES = frozenset({"i", "j", "k", "idx", "index", "step", "it", "iteration", "t"})


def fori_loop(lower, upper, body_fn, init, checkpoint="all"):
    """``for i in range(lower, upper): val = body_fn(i, val)``; bounds static or traced.

    Static (Python int) bounds give a fold (any checkpoint policy); traced bounds a while_loop.
    The bounds must be integers, and body_fn takes the index first, as in JAX.
    """
    require_function("fori_loop", body_fn, "body_fn")
    lower = integer_scalar("fori_loop", "lower", lower)
    upper = integer_scalar("fori_loop", "upper", upper)
    _check_body_order(body_fn)
    try:
        return _fori_loop(lower, upper, body_fn, init, checkpoint)
    except (ShapeError, TracingError, IndexOutOfRangeError) as error:
        if getattr(error, "fori_loop_hint", False):
            raise
        hinted = type(error)(f"fori_loop: {error}. Note that fori_loop calls body_fn(i, carry), the loop index "
                             "first (as in JAX)")
        hinted.fori_loop_hint = True
        raise hinted from None


def _check_body_order(body_fn) -> None:
    try:
        names = [p.name for p in inspect.signature(body_fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return
    if len(names) >= 2 and names[1] in _INDEX_NAMES and names[0] not in _INDEX_NAMES:
        raise ArgumentError(
            f"fori_loop: body_fn '{getattr(body_fn, '__name__', 'body')}' takes ({names[0]}, {names[1]}), which reads "
            f"as (carry, index); fori_loop calls body_fn(i, carry) with the loop index first (as in JAX): swap "
            "its parameters"
        )


def _fori_loop(lower, upper, body_fn, init, checkpoint):
    if isinstance(lower, Tracer) or isinstance(upper, Tracer):
        def cond_fn(state):
            return state[0] < state[1]

        def body(state):
            i, stop, value = state
            return i + 1, stop, body_fn(i, value)

        start = ew.convert(lower, np.int64) if isinstance(lower, Tracer) else np.int64(lower)
        stop = ew.convert(upper, np.int64) if isinstance(upper, Tracer) else np.int64(upper)
        return while_loop(cond_fn, body, (start, stop, init), checkpoint=checkpoint)[2]
    steps = np.arange(lower, max(lower, upper), dtype=np.int64)
    carry, _ = fold(lambda value, i: (body_fn(i, value), None), init, steps, checkpoint=checkpoint)
    return carry


def _sample_fold(rng):
    def loop(c0, xs, w):
        return fold(lambda c, x: (ew.add(ew.sin(ew.mul(c, x)), w), ew.mul(c, x)), c0, xs)

    args = [rng.normal(size=2), rng.normal(size=(4, 2)), rng.normal(size=2)]
    forward = sample_equation(loop, args, "fold")
    backward = sample_equation(lambda c0, xs, w: fold(lambda c, x: (ew.mul(c, x), c), c0, xs, reverse=True),
                               args, "fold")
    return [forward, backward]


fold_p.sample = _sample_fold


# --- Taylor mode: a fold of the body's Taylor program (the coefficients ride along in the carry) -----

def _fold_taylor(series, outputs, *, body, length, reverse, num_consts, num_carry):
    order = len(series[0]) - 1
    wrt = [a.differentiable and has_series(s) for s, a in zip(series, body.in_avals)]
    wrt = carried_flags(body, order, wrt, [(num_consts + i, i) for i in range(num_carry)])
    groups = [range(num_consts), range(num_consts, num_consts + num_carry), range(num_consts + num_carry,
                                                                                  len(body.inputs))]
    out_groups = [range(num_carry), range(num_carry, len(body.outputs))]
    force = wrt[num_consts:num_consts + num_carry] + [False] * (len(body.outputs) - num_carry)
    program, out_flags = grouped_jet(body, order, wrt, groups, out_groups, force)
    carry_flags = wrt[num_consts:num_consts + num_carry]
    outs = fold_p.bind(*grouped_values(series, groups, wrt), body=program, length=length, reverse=reverse,
                       num_consts=num_consts + order * sum(wrt[:num_consts]),
                       num_carry=num_carry + order * sum(carry_flags))
    out_avals = [aval_of_value(o) for o in outputs]
    result = grouped_series(outs, out_groups, list(out_flags), order, out_avals)
    return [s[1:] for s in result]


fold_p.taylor = _fold_taylor

sparsity.register(fold_p, sparsity.Rule("nested", sparsity_nested.fold_dependence, exact=False))
one_hot.register(fold_p, fold_one_hot_rule)
