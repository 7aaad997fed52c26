"""Derivatives of a kernel's scalar IR, by source transformation (each result is again scalar IR).

    tangent_program(P, wrt)       forward mode, one tangent input per differentiated input at once:
                                  (x, t) -> dy = sum_j (dy/dx_j) t_j            (the kernel's jvp)
    partials_program(P, wrt)      all partials in one pass, dual numbers with k partials:
                                  x -> (y, dy_o/dx_j for every structurally nonzero pair (o, j))
    cotangent_program(P, ...)     the partials contracted with output cotangents inside the pass:
                                  (x, u) -> (y, sum_o u_o dy_o/dx_j)             (the fused vjp)

Every equation's contribution comes from its primitive's jvp rule, so the elementwise partials
come from the one table in primitives/scalar.py. `partials_program` propagates k tangents per
value, kept sparse (a value's tangent is a dict from input index to its nonzero component), and
transforms structured control flow in place: a `cond` becomes a cond whose branches also return
the partials of their outputs (their sparsity pattern is the union over the branches: the phi of
the partials), a `while` carries the partials of its carried values (the pattern is widened until
the body keeps it). `simplify` after each transformation is the CSE that keeps the result from
swelling: the primal values the k directions share are computed once. Higher derivatives repeat
the transformation on its own output.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..control.cond import cond_p
from ..control.while_loop import while_p
from ..core.ir import Literal, Program
from ..core.primitive import Marker, Zero, is_zero
from ..core.types import is_float
from ..passes import simplify
from ..primitives import elementwise as ew
from ..tracing import Tracer, eval_program, trace_program
from ..transforms.jvp import jvp_program

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _cached(program, key, build):
    table = _CACHE.setdefault(program, {})
    if key not in table:
        table[key] = build()
    return table[key]


def float_flags(avals) -> list[bool]:
    return [is_float(a.dtype) for a in avals]


# --- forward mode ---------------------------------------------------------------------------------

def tangent_program(program: Program, wrt) -> Program:
    """(inputs, one tangent per input flagged in `wrt`) -> one tangent per float output."""
    wrt = tuple(bool(w) for w in wrt)

    def build():
        derived = jvp_program(program, wrt)
        n = len(program.outputs)
        keep = [n + i for i, f in enumerate(float_flags(program.out_avals)) if f]
        return simplify(Program(derived.inputs, derived.eqns, tuple(derived.outputs[i] for i in keep)))

    return _cached(program, ("tangent", wrt), build)


# --- all partials in one pass (dual numbers with k partials) ---------------------------------------

def _one(dtype):
    return np.ones((), dtype)


def _zero(dtype):
    return np.zeros((), dtype)


def propagate_partials(program: Program, primals, tangents):
    """Bind `program` on `primals`; `tangents[i]` is a dict {direction: tangent} of input i.

    Returns (outputs, one tangent dict per output)."""
    env, tangent_env = {}, {}
    for var, value, tangent in zip(program.inputs, primals, tangents):
        env[id(var)] = value
        tangent_env[id(var)] = {j: t for j, t in tangent.items() if not is_zero(t)}

    def read(atom):
        return atom.value if isinstance(atom, Literal) else env[id(atom)]

    def read_tangent(atom):
        return {} if isinstance(atom, Literal) else tangent_env.get(id(atom), {})

    for eqn in program.eqns:
        ins = [read(a) for a in eqn.inputs]
        tangents_in = [read_tangent(a) for a in eqn.inputs]
        if not any(tangents_in):
            outs = eqn.prim.bind(*ins, **eqn.params)
            out_tangents = [{} for _ in eqn.outputs]
        elif eqn.prim is cond_p:
            outs, out_tangents = _cond_partials(ins, tangents_in, **eqn.params)
        elif eqn.prim is while_p:
            outs, out_tangents = _while_partials(ins, tangents_in, **eqn.params)
        else:
            outs = eqn.prim.bind(*ins, **eqn.params)
            out_tangents = _apply_rule(eqn, ins, outs, tangents_in)
        out_list = outs if eqn.prim.multiple_results else [outs]
        for var, value, tangent in zip(eqn.outputs, out_list, out_tangents):
            env[id(var)] = value
            if is_float(var.aval.dtype) and tangent:
                tangent_env[id(var)] = tangent
    return [read(a) for a in program.outputs], [dict(read_tangent(a)) for a in program.outputs]


def _apply_rule(eqn, ins, outs, tangents_in):
    """The rule is linear in the tangents: apply it once per direction (CSE shares the partials)."""
    rule = eqn.prim.rule("jvp")
    n_out = len(eqn.outputs)
    result = [{} for _ in range(n_out)]
    if isinstance(rule, Marker):
        return result
    directions = sorted({j for t in tangents_in for j in t})
    for j in directions:
        column = [t.get(j, Zero(a.aval)) for t, a in zip(tangents_in, eqn.inputs)]
        out = rule(column, ins, outs, **eqn.params)
        for k, value in enumerate(out if eqn.prim.multiple_results else [out]):
            if not is_zero(value):
                result[k][j] = value
    return result


def _split(tangents):
    """(pattern of the traced components [(position, direction)], {(position, direction): constant}).

    Constant components (the seeds) are baked into nested programs instead of passed in."""
    pattern, fixed = [], {}
    for i, tangent in enumerate(tangents):
        for j in sorted(tangent):
            if isinstance(tangent[j], Tracer):
                pattern.append((i, j))
            else:
                fixed[(i, j)] = tangent[j]
    return pattern, fixed


def _rebuild(values, pattern, count, fixed=None):
    tangents = [{} for _ in range(count)]
    for (i, j), value in (fixed or {}).items():
        tangents[i][j] = value
    for (i, j), value in zip(pattern, values):
        tangents[i][j] = value
    return tangents


def _cond_partials(ins, tangents_in, *, branches):
    index, operands = ins[0], ins[1:]
    in_pattern, fixed = _split(tangents_in[1:])
    in_avals = list(branches[0].in_avals)
    n_ops, n_out = len(operands), len(branches[0].outputs)
    out_avals = branches[0].out_avals
    tangent_avals = [in_avals[i] for i, _ in in_pattern]
    found = []

    def transformed(branch, out_pattern=None):
        def run(*args):
            tangents = _rebuild(args[n_ops:], in_pattern, n_ops, fixed)
            outs, out_tangents = propagate_partials(branch, list(args[:n_ops]), tangents)
            if out_pattern is None:  # first pass: which output partials this branch has
                found.append(out_tangents)
                return list(outs)
            return list(outs) + [out_tangents[o].get(j, _zero(out_avals[o].dtype)) for o, j in out_pattern]
        return run

    for branch in branches:
        trace_program(transformed(branch), in_avals + tangent_avals, "cond partials")
    out_pattern = sorted({(o, j) for tangents in found for o, t in enumerate(tangents) for j in t})
    new_branches = tuple(simplify(trace_program(transformed(b, out_pattern), in_avals + tangent_avals,
                                                "cond partials")[0]) for b in branches)
    traced = [tangents_in[1 + i][j] for i, j in in_pattern]
    results = cond_p.bind(index, *operands, *traced, branches=new_branches)
    return results[:n_out], _rebuild(results[n_out:], out_pattern, n_out)


def _while_partials(ins, tangents_in, *, cond, body, num_consts, checkpoint):
    consts, carry = ins[:num_consts], ins[num_consts:]
    c_pattern, c_fixed = _split(tangents_in[:num_consts])
    k_tangents = tangents_in[num_consts:]
    in_avals = list(body.in_avals)
    c_avals, k_avals = in_avals[:num_consts], in_avals[num_consts:]
    n_carry, nc = len(carry), len(c_pattern)
    found = []

    def step(k_pattern):
        def run(*args):
            cs, ct = list(args[:num_consts]), args[num_consts:num_consts + nc]
            ks, kt = list(args[num_consts + nc:num_consts + nc + n_carry]), args[num_consts + nc + n_carry:]
            tangents = _rebuild(ct, c_pattern, num_consts, c_fixed) + _rebuild(kt, k_pattern, n_carry)
            outs, out_tangents = propagate_partials(body, cs + ks, tangents)
            found.append(out_tangents)
            return list(outs) + [out_tangents[i].get(j, _zero(k_avals[i].dtype)) for i, j in k_pattern]
        return run

    k_pattern = sorted((i, j) for i, t in enumerate(k_tangents) for j in t)
    while True:  # widen the carried pattern until one step keeps it (at most once per direction)
        avals = c_avals + [c_avals[i] for i, _ in c_pattern] + k_avals + [k_avals[i] for i, _ in k_pattern]
        program, _, _ = trace_program(step(k_pattern), avals, "while partials")
        wider = sorted(set(k_pattern) | {(i, j) for i, t in enumerate(found[-1]) for j in t})
        if wider == k_pattern:
            break
        k_pattern = wider

    def test(*args):
        return eval_program(cond, list(args[:num_consts]) + list(args[num_consts + nc:num_consts + nc + n_carry]))

    new_cond = simplify(trace_program(test, avals, "while partials cond")[0])
    init = [k_tangents[i].get(j, _zero(k_avals[i].dtype)) for i, j in k_pattern]
    c_traced = [tangents_in[i][j] for i, j in c_pattern]
    results = while_p.bind(*consts, *c_traced, *carry, *init, cond=new_cond, body=simplify(program),
                           num_consts=num_consts + nc, checkpoint=checkpoint)
    return results[:n_carry], _rebuild(results[n_carry:], k_pattern, n_carry)


def partials_program(program: Program, wrt):
    """(Q, pairs): Q maps the inputs to the outputs, then dy_o/dx_j for each (o, j) in `pairs`."""
    wrt = tuple(bool(w) for w in wrt)

    def build():
        pairs_box = []

        def run(*args):
            seeds = [{j: _one(a.dtype)} if w else {} for j, (a, w) in enumerate(zip(program.in_avals, wrt))]
            outs, out_tangents = propagate_partials(program, list(args), seeds)
            flags = float_flags(program.out_avals)
            pairs = [(o, j) for o, t in enumerate(out_tangents) if flags[o] for j in sorted(t)]
            pairs_box.append(pairs)
            return list(outs) + [out_tangents[o][j] for o, j in pairs]

        derived, _, _ = trace_program(run, list(program.in_avals), "partials")
        derived = simplify(derived)
        n = len(program.outputs)
        pairs = [pair for pair, atom in zip(pairs_box[0], derived.outputs[n:])
                 if not (isinstance(atom, Literal) and atom.uniform == 0)]
        keep = list(range(n)) + [n + k for k, atom in enumerate(derived.outputs[n:])
                                 if not (isinstance(atom, Literal) and atom.uniform == 0)]
        return Program(derived.inputs, derived.eqns, tuple(derived.outputs[i] for i in keep)), tuple(pairs)

    return _cached(program, ("partials", wrt), build)


# --- the fused vjp: partials contracted with the cotangent inside the pass ------------------------

def scale(cotangent, partial):
    """u * p: a reverse product, IEEE (0 * inf = NaN) whether or not the partial may be infinite, as
    in reverse mode over array operations (primitives/rules.py); a cotangent the structure proves
    zero (the branch of a select) reaches a kernel masked, and the mask sinks through it."""
    return ew.mul(cotangent, partial)


def cotangent_program(program: Program, needed, seeded, with_values: bool = True):
    """(C, inputs): C maps (inputs, one cotangent per output flagged in `seeded`) to the outputs (if
    `with_values`), then sum_o u_o dy_o/dx_j for each input index j in `inputs` (the needed ones
    with a nonzero partial)."""
    needed, seeded = tuple(bool(n) for n in needed), tuple(bool(s) for s in seeded)

    def build():
        partials, pairs = partials_program(program, needed)
        n_in, n_out = len(program.inputs), len(program.outputs)
        used = sorted({j for o, j in pairs if seeded[o]})
        seeded_avals = [a for a, s in zip(program.out_avals, seeded) if s]

        def run(*args):
            values = eval_program(partials, list(args[:n_in]))
            cotangents = dict(zip([o for o, s in enumerate(seeded) if s], args[n_in:]))
            totals = {}
            for (o, j), partial in zip(pairs, values[n_out:]):
                if o in cotangents:
                    term = scale(cotangents[o], partial)
                    totals[j] = term if j not in totals else ew.add(totals[j], term)
            return (list(values[:n_out]) if with_values else []) + [totals[j] for j in used]

        derived, _, _ = trace_program(run, list(program.in_avals) + seeded_avals, "cotangent")
        return simplify(derived), tuple(used)

    return _cached(program, ("cotangent", needed, seeded, with_values), build)
