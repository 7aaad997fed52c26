"""cond and switch: one primitive, cond[branches] index *operands.

The index picks a branch (clamped into range, as in JAX's switch); every branch
is a program of the same operands with the same output types.
  * jvp: a cond of the branches' jvp programs;
  * vjp: a cond of the branches' vjp programs (the taken branch is recomputed
    in the backward sweep, so nothing is stored per branch);
  * batching: with an unbatched index, a cond of batched branches; with a
    batched index, every branch runs on the whole batch and a select picks
    each lane's result. The select's vjp gives the untaken branches an exactly
    zero cotangent, and rules never multiply a zero cotangent into NaN, so an
    untaken sqrt(-1) does not poison the gradient.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ArgumentError, ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..core.pytree import flatten, unflatten
from ..core.types import Aval, is_float
from ..passes import prune_nested, simplify
from ..primitives import elementwise as ew
from ..primitives.elementwise import mul, sin
from ..primitives.rules import aval_of_value, batch_all, broadcast_batch
from ..primitives.structural import broadcast_in_dim
from ..tracing import eval_program, trace_program
from ..transforms import sparsity, sparsity_nested
from ..transforms.jet import grouped_jet, grouped_series, grouped_values, has_series
from ..transforms.jvp import jvp_program
from ..transforms.vjp import vjp_program
from ..transforms.vmap import vmap_program
from .arguments import integer_scalar, operand_avals, require_function
from .common import check_same_structure, float_flags, select_outputs, trace_body, unify_closures


def _cond_abstract_eval(index, *operands, branches):
    if index.shape != () or index.dtype.kind not in "iu":
        raise ShapeError(f"cond: the branch index must be an integer scalar, got {index}")
    for k, branch in enumerate(branches):
        if branch.in_avals != tuple(operands):
            raise ShapeError(f"cond: branch {k} takes {branch.in_avals}, the operands are {tuple(operands)}")
        if branch.out_avals != branches[0].out_avals:
            raise ShapeError(f"cond: branch {k} returns {branch.out_avals}, branch 0 {branches[0].out_avals}")
    return list(branches[0].out_avals)


cond_p = Primitive("cond", _cond_abstract_eval, multiple_results=True)


def _cond_jvp(tangents, primals, outputs, *, branches):
    index, *operands = primals
    in_avals = branches[0].in_avals
    wrt = float_flags(in_avals)
    n_out = len(branches[0].outputs)
    derived = tuple(
        select_outputs(jvp_program(b, wrt), range(n_out, 2 * n_out)) for b in branches
    )
    operand_tangents = [
        np.zeros(a.shape, a.dtype) if is_zero(t) else t for t, a, w in zip(tangents[1:], in_avals, wrt) if w
    ]
    results = cond_p.bind(index, *operands, *operand_tangents, branches=derived)
    return [r if is_float(a.dtype) else Zero(a) for r, a in zip(results, branches[0].out_avals)]


def _cond_vjp(cotangents, primals, outputs, needs, *, branches):
    index, *operands = primals
    in_avals, out_avals = branches[0].in_avals, branches[0].out_avals
    wrt = [need and is_float(a.dtype) for need, a in zip(needs[1:], in_avals)]
    if not any(wrt):
        return [None] * len(primals)
    n_out = len(out_avals)
    derived = tuple(
        select_outputs(vjp_program(b, wrt), range(n_out, n_out + sum(wrt))) for b in branches
    )
    seeds = [np.zeros(a.shape, a.dtype) if is_zero(c) else c for c, a in zip(cotangents, out_avals)]
    results = iter(cond_p.bind(index, *operands, *seeds, branches=derived))
    return [None] + [next(results) if w else None for w in wrt]


def _broadcast_outputs(program, flags, wanted, size):
    """`program` with the outputs flagged in `wanted` (but not `flags`) given a batch axis."""
    if list(flags) == list(wanted):
        return program

    def call(*args):
        outs = eval_program(program, list(args))
        return [broadcast_batch(o, size) if w and not f else o for o, f, w in zip(outs, flags, wanted)]

    result, _, _ = trace_program(call, list(program.in_avals), "broadcast")
    return result


def _cond_batch(args, batched, size, *, branches):
    index, *operands = args
    if not batched[0]:
        pairs = [vmap_program(b, batched[1:], size) for b in branches]
        wanted = [any(flags[i] for _, flags in pairs) for i in range(len(branches[0].outputs))]
        batched_branches = tuple(simplify(_broadcast_outputs(p, f, wanted, size)) for p, f in pairs)
        return cond_p.bind(index, *operands, branches=batched_branches), wanted
    operands = batch_all(operands, batched[1:], size)
    results = None
    for k in reversed(range(len(branches))):
        program, flags = vmap_program(branches[k], [True] * len(operands), size)
        outs = [o if f else broadcast_batch(o, size) for o, f in zip(eval_program(program, operands), flags)]
        if results is None:
            results = outs
            continue
        index_aval = aval_of_value(index)
        chosen = ew.le(index, np.full(index_aval.shape, k, index_aval.dtype))
        results = [ew.select(broadcast_in_dim(chosen, aval_of_value(o).shape, (0,)), o, r)
                   for o, r in zip(outs, results)]
    return results, [True] * len(results)


cond_p.jvp, cond_p.vjp, cond_p.batch = _cond_jvp, _cond_vjp, _cond_batch


cond_p.prune = lambda eqn, used: prune_nested(eqn, used, "branches")  # unused outputs leave every branch


def switch(index, branches, *operands):
    """Run ``branches[index](*operands)``; the index is clamped into range.

    >>> switch(i, [lambda x: x, lambda x: -x, anp.sin], x)  # doctest: +SKIP
    """
    if not isinstance(branches, (list, tuple)):
        raise ArgumentError(f"switch: branches must be a list or tuple of functions, got a {type(branches).__name__}")
    index = integer_scalar("switch", "the index", index, allow_bool=True)
    return _switch(index, list(branches), operands, [f"branch {k}" for k in range(len(branches))], "switch")


def _switch(index, branches, operands, names, what):
    if not branches:
        raise ShapeError("switch: needs at least one branch")
    for branch, name in zip(branches, names):
        require_function(what, branch, name)
    leaves, in_tree = flatten(list(operands))
    avals = operand_avals(what, "the operands", list(operands))
    traced, trees = [], []
    for k, branch in enumerate(branches):
        program, out_tree, closure = trace_body(branch, in_tree, avals, getattr(branch, "__name__", f"branch {k}"))
        traced.append((program, closure))
        trees.append(out_tree)
    for k in range(1, len(branches)):
        check_same_structure("cond", names[0], trees[0], traced[0][0].out_avals,
                             names[k], trees[k], traced[k][0].out_avals)
    programs, consts = unify_closures(traced)
    index = ew.convert(np.asarray(index) if not hasattr(index, "aval") else index, np.int64)
    outs = cond_p.bind(index, *leaves, *consts, branches=tuple(simplify(p) for p in programs))
    return unflatten(trees[0], outs)


def cond(pred, true_fn, false_fn, *operands):
    """``true_fn(*operands) if pred else false_fn(*operands)`` for a traced boolean scalar.

    >>> cond(x > 0, lambda x: x * 2, lambda x: -x, x)  # doctest: +SKIP
    """
    pred_avals = operand_avals("cond", "the predicate", pred)
    if len(pred_avals) != 1 or isinstance(pred, (tuple, list, dict)):
        raise ArgumentError(f"cond: the predicate must be one boolean scalar, got a {type(pred).__name__}")
    (pred_aval,) = pred_avals
    if pred_aval.shape != ():
        raise ShapeError(f"cond: the predicate must be a scalar, got {pred_aval}; use anp.where for arrays")
    if pred_aval.dtype.kind not in "biu":
        raise ArgumentError(f"cond: the predicate must be a boolean (or integer) scalar, got {pred_aval}; compare "
                            "explicitly (e.g. `x > 0.0`)")
    pred = np.asarray(pred) if not hasattr(pred, "aval") else pred
    return _switch(ew.convert(pred, np.int64), [false_fn, true_fn], operands, ["the false branch", "the true branch"],
                   "cond")


cond_p.sample = lambda rng: [
    ([np.asarray(k), rng.normal(size=(3,))], {"branches": _sample_branches()}) for k in (0, 1)
]


def _sample_branches():

    aval = [Aval((3,), np.float64)]
    first, _, _ = trace_program(lambda x: [sin(x)], aval, "first")
    second, _, _ = trace_program(lambda x: [mul(x, x)], aval, "second")
    return (first, second)


# --- Taylor mode: a cond of the branches' Taylor programs ------------------------------------------------

def _cond_taylor(series, outputs, *, branches):
    order = len(series[0]) - 1
    operands = series[1:]
    wrt = [a.differentiable and has_series(s) for s, a in zip(operands, branches[0].in_avals)]
    groups, out_groups = [range(len(operands))], [range(len(branches[0].outputs))]
    flags = [False] * len(branches[0].outputs)
    for branch in branches:  # an output has coefficients if any branch gives it some
        flags = [f or g for f, g in zip(flags, grouped_jet(branch, order, wrt, groups, out_groups)[1])]
    derived = tuple(grouped_jet(b, order, wrt, groups, out_groups, force=flags)[0] for b in branches)
    outs = cond_p.bind(series[0][0], *grouped_values(operands, groups, wrt), branches=derived)
    result = grouped_series(outs, out_groups, flags, order, [aval_of_value(o) for o in outputs])
    return [s[1:] for s in result]


cond_p.taylor = _cond_taylor

sparsity.register(cond_p, sparsity.Rule("nested", sparsity_nested.cond_dependence, exact=False))
