"""while_loop with a data-dependent trip count, differentiable in both modes to any order.

while[cond, body, num_consts]: inputs (consts, carry) -> final carry.
  * jvp: a while over (carry, tangent carry) with the body's jvp program.
  * vjp: while_grad[cond, body, body_vjp, num_consts, checkpoint] (consts, initial
    carry, cotangent of the final carry) -> cotangents of the float consts and
    carry. Its NumPy implementation runs the loop forward keeping states per the
    policy ("all"; every k-th; "binomial": checkpoints at 2^j, then recursive
    bisection of each segment, memory logarithmic in the unknown trip count)
    and walks back through the body's vjp program.
  * while_grad's own rules close the family (so hessian and grad-of-grad work):
    with F the loop, g the cotangent and H the Hessian of g.F (symmetric),
      jvp:  d(J^T g)[v, dg] = J^T dg + H v   = while_grad of the jvp loop at (v), cotangent (dg, g)
      vjp:  of (J^T g) against u: (H u, J u) = while_grad of the jvp loop at (u), cotangent (0, g),
            and the tangent carry of the jvp loop.
  * batching: a batched predicate runs the loop until every lane is done; a
    finished lane keeps its carry (a select, whose vjp passes the cotangent on).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError, ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.pytree import flatten, unflatten
from ..passes import simplify
from ..primitives import elementwise as ew
from ..primitives.reduce import reduce
from ..primitives.rules import aval_of_value, broadcast_batch
from ..primitives.structural import broadcast_in_dim
from ..primitives.taylor import FROM_JVP
from ..tracing import eval_program, trace_program
from ..transforms import sparsity, sparsity_nested
from ..transforms.jet import carried_flags, grouped_jet, grouped_series, grouped_values, has_series
from ..transforms.jvp import jvp_program
from ..transforms.vjp import vjp_program
from ..transforms.vmap import vmap_program
from .arguments import operand_avals, require_function
from .common import check_same_structure, float_flags, sample_equation

POLICIES = ("all", "binomial")


def _program(fn, avals, name):
    program, _, _ = trace_program(fn, list(avals), name)
    return simplify(program)


def _while_abstract_eval(*avals, cond, body, num_consts, checkpoint):
    if body.in_avals != tuple(avals) or cond.in_avals != tuple(avals):
        raise ShapeError(f"while_loop: the body and condition take {body.in_avals}, the loop gives {tuple(avals)}")
    if body.out_avals != tuple(avals[num_consts:]):
        raise ShapeError(f"while_loop: the body returns {body.out_avals}, the carry is {tuple(avals[num_consts:])}")
    if len(cond.out_avals) != 1 or cond.out_avals[0].shape != () or cond.out_avals[0].dtype != np.bool_:
        raise ShapeError(f"while_loop: the condition must return a boolean scalar, got {cond.out_avals}")
    return list(avals[num_consts:])


while_p = Primitive("while", _while_abstract_eval, multiple_results=True)


def _tangent_loop(cond, body, num_consts):
    """The jvp loop: consts (c, dc) and carry (x, dx) for the float c and x. Returns (cond, body, flags)."""
    in_avals = body.in_avals
    c_avals, k_avals = in_avals[:num_consts], in_avals[num_consts:]
    c_flags, k_flags = float_flags(c_avals), float_flags(k_avals)
    derived = jvp_program(body, c_flags + k_flags)
    nc = sum(c_flags)
    n_carry = len(k_avals)

    def split(args):
        consts, t_consts = args[:num_consts], args[num_consts:num_consts + nc]
        carry, t_carry = args[num_consts + nc:num_consts + nc + n_carry], args[num_consts + nc + n_carry:]
        return list(consts), list(t_consts), list(carry), list(t_carry)

    def new_body(*args):
        consts, t_consts, carry, t_carry = split(args)
        outs = eval_program(derived, consts + carry + t_consts + t_carry)
        return list(outs[:n_carry]) + [t for t, f in zip(outs[n_carry:], k_flags) if f]

    def new_cond(*args):
        consts, _, carry, _ = split(args)
        return eval_program(cond, consts + carry)

    avals = (list(c_avals) + [a for a, f in zip(c_avals, c_flags) if f] + list(k_avals)
             + [a for a, f in zip(k_avals, k_flags) if f])
    return _program(new_cond, avals, "while jvp cond"), _program(new_body, avals, "while jvp body"), (c_flags, k_flags)


def _instantiated(values, avals, flags):
    return [np.zeros(a.shape, a.dtype) if is_zero(v) else v for v, a, f in zip(values, avals, flags) if f]


def _while_jvp(tangents, primals, outputs, *, cond, body, num_consts, checkpoint):
    new_cond, new_body, (c_flags, k_flags) = _tangent_loop(cond, body, num_consts)
    c_avals, k_avals = body.in_avals[:num_consts], body.in_avals[num_consts:]
    consts, carry = primals[:num_consts], primals[num_consts:]
    outs = while_p.bind(*consts, *_instantiated(tangents[:num_consts], c_avals, c_flags), *carry,
                        *_instantiated(tangents[num_consts:], k_avals, k_flags),
                        cond=new_cond, body=new_body, num_consts=num_consts + sum(c_flags), checkpoint=checkpoint)
    t_out = iter(outs[len(carry):])
    return [next(t_out) if f else Zero(a) for a, f in zip(k_avals, k_flags)]


# --- reverse mode: while_grad ----------------------------------------------------------------------

def _while_grad_abstract_eval(*avals, cond, body, body_vjp, num_consts, checkpoint):
    in_avals = body.in_avals
    flags = float_flags(in_avals)
    k_flags = flags[num_consts:]
    expected = tuple(in_avals) + tuple(a for a, f in zip(in_avals[num_consts:], k_flags) if f)
    if tuple(avals) != expected:
        raise ShapeError(f"while_grad: inputs {tuple(avals)}, expected {expected}")
    return [a for a, f in zip(in_avals, flags) if f]


while_grad_p = Primitive("while_grad", _while_grad_abstract_eval, multiple_results=True)


def while_grad(consts, carry, cotangents, cond, body, checkpoint):
    """Cotangents of the float consts and carry of a while loop, given those of its final float carry."""
    flags = float_flags(body.in_avals)
    derived = vjp_program(body, flags)
    n_carry = len(carry)
    # body_vjp: (consts, carry, cotangent of every carry output) -> (cotangents of float inputs)
    body_vjp = _program(lambda *a: eval_program(derived, list(a))[n_carry:],
                        list(body.in_avals) + list(body.out_avals), "while body vjp")
    return while_grad_p.bind(*consts, *carry, *cotangents, cond=cond, body=body, body_vjp=body_vjp,
                             num_consts=len(consts), checkpoint=checkpoint)


def _while_vjp(cotangents, primals, outputs, needs, *, cond, body, num_consts, checkpoint):
    k_avals = body.in_avals[num_consts:]
    k_flags = float_flags(k_avals)
    seeds = _instantiated(cotangents, k_avals, k_flags)
    results = iter(while_grad(primals[:num_consts], primals[num_consts:], seeds, cond, body, checkpoint))
    flags = float_flags(body.in_avals)
    return [next(results) if f else None for f in flags]


def _split_grad_args(args, body, num_consts):
    n = len(body.inputs)
    return list(args[:num_consts]), list(args[num_consts:n]), list(args[n:])


def _while_grad_jvp(tangents, primals, outputs, *, cond, body, body_vjp, num_consts, checkpoint):
    consts, carry, cts = _split_grad_args(primals, body, num_consts)
    t_consts, t_carry, t_cts = _split_grad_args(tangents, body, num_consts)
    c_avals, k_avals = body.in_avals[:num_consts], body.in_avals[num_consts:]
    new_cond, new_body, (c_flags, k_flags) = _tangent_loop(cond, body, num_consts)
    float_k = [a for a, f in zip(k_avals, k_flags) if f]
    dg = [np.zeros(a.shape, a.dtype) if is_zero(t) else t for t, a in zip(t_cts, float_k)]
    dc, dx = _instantiated(t_consts, c_avals, c_flags), _instantiated(t_carry, k_avals, k_flags)
    # The jvp loop's float carry is (x, dx): its cotangent is dg for x and g for dx.
    results = while_grad([*consts, *dc], [*carry, *dx], dg + list(cts), new_cond, new_body, checkpoint)
    nc = sum(c_flags)
    ct_consts, ct_carry = results[:nc], results[2 * nc:2 * nc + sum(k_flags)]
    return list(ct_consts) + list(ct_carry)


def _while_grad_vjp(cotangents, primals, outputs, needs, *, cond, body, body_vjp, num_consts, checkpoint):
    consts, carry, cts = _split_grad_args(primals, body, num_consts)
    c_avals, k_avals = body.in_avals[:num_consts], body.in_avals[num_consts:]
    c_flags, k_flags = float_flags(c_avals), float_flags(k_avals)
    nc, nk = sum(c_flags), sum(k_flags)
    u = [np.zeros(aval_of_value(o).shape, aval_of_value(o).dtype) if is_zero(c) else c
         for c, o in zip(cotangents, outputs)]
    u_consts, u_carry = u[:nc], u[nc:]
    new_cond, new_body, _ = _tangent_loop(cond, body, num_consts)
    zeros = [np.zeros(a.shape, a.dtype) for a, f in zip(k_avals, k_flags) if f]
    results = while_grad([*consts, *u_consts], [*carry, *u_carry], zeros + list(cts), new_cond, new_body, checkpoint)
    hessian_consts, hessian_carry = results[:nc], results[2 * nc:2 * nc + nk]
    final = while_p.bind(*consts, *u_consts, *carry, *u_carry, cond=new_cond, body=new_body,
                         num_consts=num_consts + nc, checkpoint=checkpoint)
    tangent_of_final = final[len(carry):]
    it_c, it_k = iter(hessian_consts), iter(hessian_carry)
    out = [next(it_c) if f else None for f in c_flags] + [next(it_k) if f else None for f in k_flags]
    return out + list(tangent_of_final)


while_p.jvp, while_p.vjp = _while_jvp, _while_vjp
while_grad_p.jvp, while_grad_p.vjp = _while_grad_jvp, _while_grad_vjp


# --- batching ------------------------------------------------------------------------------------

def _masked_loop(cond, body, num_consts, size):
    """Batched programs of a loop whose lanes may finish at different steps (every input batched):
    the condition is 'any lane still running' and a finished lane keeps its carry."""
    flags = [True] * len(body.inputs)
    batched_cond, _ = vmap_program(cond, flags, size)
    batched_body, _ = vmap_program(body, flags, size)

    def running(*args):
        (pred,) = eval_program(batched_cond, list(args))
        return pred

    def step(*args):
        pred = running(*args)
        new = eval_program(batched_body, list(args))
        return [ew.select(broadcast_in_dim(pred, aval_of_value(n).shape, (0,)), n, old)
                for n, old in zip(new, args[num_consts:])]

    any_running = _program(lambda *a: [reduce(running(*a), "or", (0,))], batched_body.in_avals, "any lane running")
    return any_running, _program(step, batched_body.in_avals, "masked body")


def _while_batch(args, batched, size, *, cond, body, num_consts, checkpoint):
    consts, carry = list(args[:num_consts]), list(args[num_consts:])
    c_flags, k_flags = list(batched[:num_consts]), list(batched[num_consts:])
    while True:
        _, out_flags = vmap_program(body, c_flags + k_flags, size)
        widened = [a or b for a, b in zip(k_flags, out_flags)]
        if widened == k_flags:
            break
        k_flags = widened
    _, (pred_batched,) = vmap_program(cond, c_flags + k_flags, size)
    if not pred_batched:
        batched_body, out_flags = vmap_program(body, c_flags + k_flags, size)
        batched_cond, _ = vmap_program(cond, c_flags + k_flags, size)
        if list(out_flags) != k_flags:
            inner = batched_body
            batched_body = _program(
                lambda *a: [broadcast_batch(o, size) if w and not h else o
                            for o, h, w in zip(eval_program(inner, list(a)), out_flags, k_flags)],
                inner.in_avals, "while batch")
        carry = [c if f or not w else broadcast_batch(c, size) for c, f, w in zip(carry, batched[num_consts:], k_flags)]
        outs = while_p.bind(*consts, *carry, cond=simplify(batched_cond), body=batched_body,
                            num_consts=num_consts, checkpoint=checkpoint)
        return outs, k_flags
    everything = [a if f else broadcast_batch(a, size) for a, f in zip(args, batched)]
    masked_cond, masked_body = _masked_loop(cond, body, num_consts, size)
    outs = while_p.bind(*everything, cond=masked_cond, body=masked_body, num_consts=num_consts,
                        checkpoint=checkpoint)
    return outs, [True] * len(outs)


def _while_grad_batch(args, batched, size, *, cond, body, body_vjp, num_consts, checkpoint):
    everything = [a if f else broadcast_batch(a, size) for a, f in zip(args, batched)]
    consts, carry, cts = _split_grad_args(everything, body, num_consts)
    masked_cond, masked_body = _masked_loop(cond, body, num_consts, size)
    outs = while_grad(consts, carry, cts, masked_cond, masked_body, checkpoint)
    return outs, [True] * len(outs)


while_p.batch, while_grad_p.batch = _while_batch, _while_grad_batch


# --- the user-facing loop ------------------------------------------------------------------------

def _check_policy(checkpoint):
    if isinstance(checkpoint, str) and checkpoint in POLICIES:
        return checkpoint
    if isinstance(checkpoint, int) and not isinstance(checkpoint, bool) and checkpoint > 0:
        return checkpoint
    raise ArgumentError(f"checkpoint must be 'all', 'binomial' or a positive integer, got {checkpoint!r}")


def while_loop(cond_fn, body_fn, init, checkpoint="all"):
    """``while cond_fn(val): val = body_fn(val)``, with a data-dependent trip count.

    Differentiable in forward and reverse mode (JAX refuses the latter). `checkpoint`
    sets what reverse mode keeps: "all" states, every k-th, or "binomial" (memory
    logarithmic in the trip count, which need not be known in advance).

    >>> while_loop(lambda x: x < 10.0, lambda x: x * 1.5, 1.0)  # doctest: +SKIP
    """
    require_function("while_loop", cond_fn, "cond_fn")
    require_function("while_loop", body_fn, "body_fn")
    checkpoint = _check_policy(checkpoint)
    leaves, tree = flatten(init)
    avals = operand_avals("while_loop", "init", init)

    def body(*carry):
        return body_fn(unflatten(tree, carry))

    def test(*carry):
        return cond_fn(unflatten(tree, carry))

    body.__name__ = getattr(body_fn, "__name__", "body")
    test.__name__ = getattr(cond_fn, "__name__", "cond")
    body_program, out_tree, body_closure = trace_program(body, avals, body.__name__)
    check_same_structure("while_loop", "the initial value", tree, avals,
                         f"the value returned by '{body.__name__}'", out_tree, list(body_program.out_avals))
    cond_program, cond_tree, cond_closure = trace_program(test, avals, test.__name__)
    if cond_tree.kind != "leaf" or cond_program.out_avals[0].shape != ():
        raise ShapeError(f"while_loop: '{test.__name__}' must return a scalar, got {cond_program.out_avals}")
    if cond_program.out_avals[0].dtype.kind not in "biu":
        raise ArgumentError(f"while_loop: '{test.__name__}' must return a boolean scalar, got "
                            f"{cond_program.out_avals[0]}; compare explicitly (e.g. `x > 0.0`)")
    if cond_program.out_avals[0].dtype != np.bool_:  # an integer predicate means `!= 0`, as in Python
        cond_program = _program(lambda *a: [ew.ne(eval_program(cond_program, list(a))[0], 0)],
                                cond_program.in_avals, test.__name__)
    consts = list(body_closure) + [c for c in cond_closure if not any(c is b for b in body_closure)]
    body_program = _consts_first(body_program, len(leaves), body_closure, consts)
    cond_program = _consts_first(cond_program, len(leaves), cond_closure, consts)
    outs = while_p.bind(*consts, *leaves, cond=cond_program, body=body_program, num_consts=len(consts),
                        checkpoint=checkpoint)
    return unflatten(tree, outs)


def _consts_first(program, num_operands, own, consts):
    """A traced program (operands, own closure) as one of (all consts, operands)."""
    positions = [next(i for i, c in enumerate(consts) if c is o) for o in own]
    avals = [c.aval for c in consts] + list(program.in_avals[:num_operands])

    def call(*args):
        mine = [args[p] for p in positions]
        return eval_program(program, list(args[len(consts):]) + mine)

    return _program(call, avals, "loop")


def _counted_loop(x, w):
    """Ten steps whatever the values (finite differences need a fixed trip count)."""
    return while_loop(lambda s: ew.lt(s[0], np.int64(10)),
                      lambda s: (ew.add(s[0], np.int64(1)), ew.mul(ew.sin(s[1]), w)), (np.int64(0), x))


def _sample_while(rng):
    return [sample_equation(_counted_loop, [rng.normal(size=3), rng.uniform(0.9, 1.1, size=3)], "while")]


def _sample_while_grad(rng):
    operands, params = _sample_while(rng)[0]
    cond, body, num_consts = params["cond"], params["body"], params["num_consts"]
    consts, carry = operands[:num_consts], operands[num_consts:]
    cotangents = [rng.normal(size=np.shape(c)) for c, a in zip(carry, body.in_avals[num_consts:])
                  if np.issubdtype(a.dtype, np.floating)]

    def call(*args):
        return while_grad(args[:num_consts], args[num_consts:num_consts + len(carry)],
                          args[num_consts + len(carry):], cond, body, params["checkpoint"])

    cases = []
    for policy in ("all", 3, "binomial"):
        args, found = sample_equation(call, list(consts) + list(carry) + cotangents, "while_grad")
        cases.append((args, dict(found, checkpoint=policy)))
    return cases


while_p.sample, while_grad_p.sample = _sample_while, _sample_while_grad


# --- Taylor mode: a while over (carry, coefficients) with the body's Taylor program ----------------------
# The trip count is locally constant in t, so the series of the result is the body's, iterated.
# while_grad takes the series of its jvp rule (exact; its cost grows like 2^K: each order
# differentiates the loop body once more).

def _while_taylor(series, outputs, *, cond, body, num_consts, checkpoint):
    order = len(series[0]) - 1
    n_carry = len(body.outputs)
    wrt = [a.differentiable and has_series(s) for s, a in zip(series, body.in_avals)]
    wrt = carried_flags(body, order, wrt, [(num_consts + i, i) for i in range(n_carry)])
    groups = [range(num_consts), range(num_consts, num_consts + n_carry)]
    program, _ = grouped_jet(body, order, wrt, groups, [range(n_carry)], force=wrt[num_consts:])
    primal_positions = list(range(num_consts)) + list(range(
        num_consts + order * sum(wrt[:num_consts]), num_consts + order * sum(wrt[:num_consts]) + n_carry))
    values = grouped_values(series, groups, wrt)
    avals = [aval_of_value(v) for v in values]

    def new_cond(*args):
        return eval_program(cond, [args[i] for i in primal_positions])

    outs = while_p.bind(*values, cond=_program(new_cond, avals, "while jet cond"), body=program,
                        num_consts=num_consts + order * sum(wrt[:num_consts]), checkpoint=checkpoint)
    result = grouped_series(outs, [range(n_carry)], wrt[num_consts:], order, [aval_of_value(o) for o in outputs])
    return [s[1:] for s in result]


def _set_taylor_rules():
    while_p.taylor = _while_taylor
    while_grad_p.taylor = FROM_JVP


_set_taylor_rules()

sparsity.register(while_p, sparsity.Rule("nested", sparsity_nested.while_dependence, exact=False))
sparsity.register(while_grad_p, sparsity.DENSE)
