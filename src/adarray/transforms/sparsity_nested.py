"""Sparsity rules of the primitives that hold programs: control flow, custom rules, kernels and the
parallel operators with user functions (see sparsity.py for the analysis and the other rules). Each
primitive's module registers its rule from here (`sparsity.register`), beside its other rules.

  cond            a known branch index: that branch only; otherwise the union of all branches
  fold            unrolled (exact, with known values per iteration) when short; otherwise a
                  summary: the body's own dependence (its inputs on local columns), whose
                  carry-to-carry part is closed under iteration (I + S + S^2 + ...), so the carry
                  may depend on anything that reaches it in any number of steps, while each
                  iteration's ys keep their own xs slice (a fold used as a map stays block diagonal)
  while           the summary of fold, for any number of iterations (the predicate is not read)
  fixed_point     x* = f(params, x*): (I + A + A^2 + ...) B, A and B the step's dependence on x
                  and on params (the implicit function theorem's (I - A)^-1 B); x0 does not count
  custom_jvp_call the user's rule: tangent outputs from the tangent inputs, primals without
                  dependence (custom_vjp_call: the backward rule, transposed)
  checkpoint_call its program
  kernel          per output, the union of the operands its scalar program depends on
  general_scan    a prefix union along axis 0 over every leaf; general_reduce: every element
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.types import is_float
from .sparsity import (
    Info,
    analyze,
    broadcast_rows,
    closure,
    compose,
    empty,
    group_matrix,
    local_dependence,
    prefix_union,
    spread,
    union,
)

# A fold is unrolled (exact per iteration) while length x equations stays below this.
UNROLL_BUDGET = 4096


def _stack_local(matrices, avals, columns):
    return sp.vstack([m if m is not None else empty(a.size, columns) for m, a in zip(matrices, avals)], format="csr")


def _split_rows(matrix, avals):
    parts, start = [], 0
    for aval in avals:
        part = matrix[start:start + aval.size] if matrix is not None else None
        parts.append(part if part is not None and part.nnz else None)
        start += aval.size
    return parts


def cond_dependence(context, eqn, infos):
    index, *operands = infos
    branches = eqn.params["branches"]
    if index.known:
        chosen = int(np.clip(context.value(index), 0, len(branches) - 1))
        return [out.deps for out in analyze(branches[chosen], operands, context)]
    per_branch = [analyze(branch, operands, context) for branch in branches]
    return [union([outs[k].deps for outs in per_branch]) for k in range(len(eqn.outputs))]


def _slice_info(info, t: int, aval):
    """Iteration t's slice of a stacked xs value."""
    if info.known:
        return Info(aval, known=True, compute=lambda: info.value()[t], source=info.source)
    deps = info.deps[t * aval.size:(t + 1) * aval.size] if info.deps is not None else None
    return Info(aval, deps)


def _stack_infos(per_step, aval):
    """The stacked ys of an unrolled fold from each iteration's Info (in order)."""
    if all(info.known for info in per_step):
        source = frozenset().union(*[info.source for info in per_step])
        return Info(aval, known=True, compute=lambda: np.stack([info.value() for info in per_step]), source=source)
    if all(info.deps is None for info in per_step):
        return Info(aval)
    columns = next(info.deps.shape[1] for info in per_step if info.deps is not None)
    return Info(aval, sp.vstack([info.deps if info.deps is not None else empty(info.aval.size, columns)
                                 for info in per_step], format="csr"))


def _fold_unrolled(context, eqn, infos):
    body, length, reverse = eqn.params["body"], eqn.params["length"], eqn.params["reverse"]
    num_consts, num_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    consts, carry, xs = infos[:num_consts], infos[num_consts:num_consts + num_carry], infos[num_consts + num_carry:]
    slice_avals = body.in_avals[num_consts + num_carry:]
    y_avals = body.out_avals[num_carry:]
    steps = [None] * length
    for t in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = analyze(body, [*consts, *carry, *[_slice_info(x, t, a) for x, a in zip(xs, slice_avals)]], context)
        carry, steps[t] = outs[:num_carry], outs[num_carry:]
    ys = [_stack_infos([steps[t][j] for t in range(length)], eqn.outputs[num_carry + j].aval)
          for j in range(len(y_avals))] if length else [Info(v.aval) for v in eqn.outputs[num_carry:]]
    return [info.deps for info in [*carry, *ys]]


def _loop_summary(context, body, infos, num_consts, num_carry):
    """The fixed point of a loop's carry: (carried, local, offsets, const flags), where `carried` has a row
    per carry element holding what it may depend on after any number of iterations, `local` is the
    body's dependence per output on local columns (the consts that are not known, then the float
    carry and xs slices) and `offsets` their column offsets."""
    consts, carry, xs = infos[:num_consts], infos[num_consts:num_consts + num_carry], infos[num_consts + num_carry:]
    carry_avals = body.in_avals[num_consts:num_consts + num_carry]
    slice_avals = body.in_avals[num_consts + num_carry:]
    # Known consts keep their values (a gather's indices); the carry and the xs slices change with
    # the iteration, so their values are unknown here.
    # Integer carries get local columns too (the carry-to-carry block stays square); their own index
    # sets are empty, so nothing flows through those columns.
    const_flags = [not info.known for info in consts]
    local_infos = [*consts, *[Info(a) for a in carry_avals], *[Info(a) for a in slice_avals]]
    flags = const_flags + [True] * (len(carry_avals) + len(slice_avals))
    local, offsets = local_dependence(context, body, local_infos, flags)
    columns = int(offsets[-1])
    c0, k0, x0 = int(offsets[0]), int(offsets[num_consts]), int(offsets[num_consts + num_carry])
    carry_rows = _stack_local(local[:num_carry], body.out_avals[:num_carry], columns)
    xs_union = [Info(a, _union_over_steps(x, a)) for x, a in zip(xs, slice_avals)]
    sources = union([
        sp.vstack([context.deps(info) for info in carry], format="csr") if num_carry else None,
        compose(context, carry_rows[:, c0:k0], consts, const_flags),
        compose(context, carry_rows[:, x0:], xs_union),
    ])
    carried = closure(carry_rows[:, k0:x0]) @ sources if sources is not None and num_carry else None
    return carried, local, offsets, const_flags


def _union_over_steps(x, slice_aval):
    """The union over the leading axis of a stacked value's index sets: (slice size, columns)."""
    if x.deps is None:
        return None
    groups = np.tile(np.arange(slice_aval.size), x.aval.shape[0] if x.aval.shape else 1)
    return group_matrix(groups, slice_aval.size) @ x.deps


def _fold_summary(context, eqn, infos):
    body, length = eqn.params["body"], eqn.params["length"]
    num_consts, num_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    carried, local, offsets, const_flags = _loop_summary(context, body, infos, num_consts, num_carry)
    consts, xs = infos[:num_consts], infos[num_consts + num_carry:]
    carry_avals = body.out_avals[:num_carry]
    slice_avals = body.in_avals[num_consts + num_carry:]
    columns = int(offsets[-1])
    c0, k0, x0 = int(offsets[0]), int(offsets[num_consts]), int(offsets[num_consts + num_carry])
    carry_union = [Info(a, d) for a, d in zip(carry_avals, _split_rows(carried, carry_avals))]
    results = _split_rows(carried, carry_avals)
    for j, y_aval in enumerate(body.out_avals[num_carry:]):
        rows = local[num_carry + j] if local[num_carry + j] is not None else empty(y_aval.size, columns)
        common = union([compose(context, rows[:, c0:k0], consts, const_flags),
                        compose(context, rows[:, k0:x0], carry_union)])
        parts = [common[np.tile(np.arange(y_aval.size), length)] if common is not None else None]
        for x, aval, offset in zip(xs, slice_avals, offsets[num_consts + num_carry:]):
            block = rows[:, int(offset):int(offset) + aval.size]
            if x.deps is not None and block.nnz:
                parts.append(sp.kron(sp.identity(length, bool), block, format="csr") @ x.deps)
        results.append(union(parts))
    return results


def fold_dependence(context, eqn, infos):
    if eqn.params["length"] * max(1, len(eqn.params["body"].eqns)) <= UNROLL_BUDGET:
        return _fold_unrolled(context, eqn, infos)
    return _fold_summary(context, eqn, infos)


def while_dependence(context, eqn, infos):
    body, num_consts = eqn.params["body"], eqn.params["num_consts"]
    carried, _, _, _ = _loop_summary(context, body, infos, num_consts, len(infos) - num_consts)
    return _split_rows(carried, body.out_avals)


def fixed_point_dependence(context, eqn, infos):
    step, num_params = eqn.params["step"], eqn.params["num_params"]
    params, state_avals = infos[:num_params], step.in_avals[num_params:]
    param_flags = [not info.known for info in params]
    flags = param_flags + [True] * len(state_avals)
    local, offsets = local_dependence(context, step, [*params, *[Info(a) for a in state_avals]], flags)
    columns, split = int(offsets[-1]), int(offsets[num_params])
    rows = _stack_local(local, step.out_avals, columns)
    through_params = compose(context, rows[:, :split], params, param_flags)
    if through_params is None:
        return [None] * len(eqn.outputs)
    return _split_rows(closure(rows[:, split:]) @ through_params, step.out_avals)


def custom_jvp_dependence(context, eqn, infos):
    """The user's rule maps input tangents to output tangents: they carry the inputs' index sets."""
    fun, rule = eqn.params["fun"], eqn.params["rule"]
    primals = [info.without_deps() for info in infos]
    tangents = [Info(info.aval, info.deps) for info in infos if is_float(info.aval.dtype)]
    return [out.deps for out in analyze(rule, primals + tangents, context)[len(fun.outputs):]]


def custom_vjp_dependence(context, eqn, infos):
    """The backward rule maps output cotangents to input cotangents: its dependence, transposed."""
    fun, fwd, bwd = eqn.params["fun"], eqn.params["fwd"], eqn.params["bwd"]
    residual_avals = fwd.out_avals[len(fun.outputs):]
    local_infos = [*[Info(a) for a in residual_avals], *[Info(a) for a in fun.out_avals]]
    flags = [False] * len(residual_avals) + [is_float(a.dtype) for a in fun.out_avals]
    local, offsets = local_dependence(context, bwd, local_infos, flags)
    float_infos = [info for info in infos if is_float(info.aval.dtype)]
    backward = _stack_local(local, [info.aval for info in float_infos], int(offsets[-1]))
    float_outputs = [a for a in fun.out_avals if is_float(a.dtype)]
    per_output = iter(_split_rows(compose(context, backward.T.tocsr(), float_infos), float_outputs))
    return [next(per_output) if is_float(a.dtype) else None for a in fun.out_avals]


def checkpoint_dependence(context, eqn, infos):
    return [out.deps for out in analyze(eqn.params["fun"], infos, context)]


def kernel_dependence(context, eqn, infos):
    """A scalar program mapped over the broadcast operands: each output depends, element by element,
    on the operands its program depends on."""
    program = eqn.params["kernel"]
    flags = [is_float(a.dtype) for a in program.in_avals]
    local, _ = local_dependence(context, program, [Info(a) for a in program.in_avals], flags)
    positions = [k for k, flag in enumerate(flags) if flag]  # local column c is operand positions[c]
    shape = eqn.outputs[0].aval.shape
    results = []
    for rows in local:
        used = [positions[c] for c in rows.indices] if rows is not None else []
        results.append(union([broadcast_rows(infos[k].deps, infos[k].aval.shape, shape) for k in used]))
    return results


def general_scan_dependence(context, eqn, infos):
    """Position k of every leaf depends on every element of positions 0..k of every leaf."""
    length = infos[0].aval.shape[0]
    united = union([prefix_union(info.deps, 1, length, info.aval.size // max(length, 1), 1, False)
                    for info in infos])
    if united is None:
        return [None] * len(infos)
    return [united[np.repeat(np.arange(length), var.aval.size // max(length, 1))] for var in eqn.outputs]


def general_reduce_dependence(context, eqn, infos):
    everything = union([spread(info.deps, 1) for info in infos])
    return [spread(everything, var.aval.size) for var in eqn.outputs]
