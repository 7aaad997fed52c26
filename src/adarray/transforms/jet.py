"""Taylor mode: propagate truncated power series through a program, Program -> Program.

Every value x of the program becomes a series ``[x_0, x_1, ..., x_K]`` with x(t) = sum_k x_k t^k
(normalised coefficients, x_k = x^(k)(0) / k!); coefficients 1..K may be symbolic zeros, which
rules skip. Each equation binds its primitive on the primal values and asks its `taylor` rule
for the higher coefficients (rule kinds in primitives/taylor.py). The result is an ordinary
program (`jet_program`), so it is simplified, compiled, differentiated or batched like any other.

    jet_program(program, order, wrt)   inputs: the primals, then x_1..x_K of each input flagged in
                                       `wrt`; outputs: the primal outputs, then y_1..y_K of each output
                                       flagged in the returned `out_flags`

Cost: a product is a Cauchy product, O(K^2) multiplications; exp, log, sin, cos, tanh, logistic,
sqrt, pow, div have O(K^2) recurrences; loops and branches transform their bodies, so order K
costs O(K^2) times the primal, not the 2^K of nested jvp. Primitives that use the generic
`FROM_JVP` rule take the series of their jvp program (exact; O(K^3) when that program uses the
primitive's own output).
"""
from __future__ import annotations

from ..core.errors import UnsupportedError
from ..core.ir import Literal, Program, params_key, walk
from ..core.primitive import Marker, Zero, is_zero
from ..core.types import is_float
from ..passes import simplify
from ..primitives import elementwise as ew
from ..primitives.rules import aval_of_value, instantiate
from ..primitives.taylor import FROM_JVP
from ..tracing import trace_program
from .jvp import jvp_program


def zero_series(value, aval, order: int) -> list:
    return [value] + [Zero(aval)] * order


def has_series(series) -> bool:
    """Does the series have a nonzero coefficient beyond the primal?"""
    return any(not is_zero(c) for c in series[1:])


def propagate(program: Program, series, order: int) -> list:
    """The output series of `program` for input series (lists of K + 1 coefficients), binding in
    the current trace (or eagerly on arrays)."""
    def step(eqn, ins):
        primals = [s[0] for s in ins]
        outs = eqn.prim.bind(*primals, **eqn.params)
        out_list = list(outs) if eqn.prim.multiple_results else [outs]
        if not any(has_series(s) for s in ins):
            return [zero_series(o, v.aval, order) for o, v in zip(out_list, eqn.outputs)]
        higher = taylor_rule(eqn.prim, ins, outs, eqn.params)
        higher = higher if eqn.prim.multiple_results else [higher]
        result = []
        for o, var, coefficients in zip(out_list, eqn.outputs, higher):
            if not is_float(var.aval.dtype):
                coefficients = [Zero(var.aval)] * order
            result.append([o] + list(coefficients))
        return result

    return walk(program, series, step, literal=lambda lit: zero_series(lit.value, lit.aval, order))


def taylor_rule(prim, series, outputs, params):
    """The higher output coefficients of one equation from its primitive's `taylor` slot."""
    rule = prim.taylor
    if rule is None:
        raise UnsupportedError(f"primitive '{prim.name}' has no Taylor rule (needed by ad.jet / ad.taylor / "
                               "adarray.bounds); give it one in its `taylor` slot (see primitives/taylor.py)")
    if isinstance(rule, Marker) and rule.kind == "unsupported":
        raise UnsupportedError(f"'{prim.name}' does not support Taylor mode: {rule.reason}")
    if rule is not FROM_JVP:
        result = rule(series, outputs, **params)
        if result is not FROM_JVP:
            return result
    return from_jvp(prim, series, outputs, params)


# --- the generic rule: the series of the jvp program ---------------------------------------------

_JVP_PROGRAMS: dict = {}


def _derivative_program(prim, params, in_avals, wrt) -> Program:
    """(primals, tangents of the inputs flagged in `wrt`) -> one tangent per output, simplified."""
    key = (prim, params_key(params), tuple(in_avals), tuple(wrt))
    if key not in _JVP_PROGRAMS:
        def call(*xs):
            out = prim.bind(*xs, **params)
            return list(out) if prim.multiple_results else [out]

        single, _, _ = trace_program(call, list(in_avals), prim.name)
        derived = jvp_program(single, list(wrt))
        n = len(single.outputs)
        program = simplify(Program(derived.inputs, derived.eqns, derived.outputs[n:]))
        _JVP_PROGRAMS[key] = (program, params)  # params keep their nested programs (the key) alive
    return _JVP_PROGRAMS[key][0]


def from_jvp(prim, series, outputs, params):
    """y_k = [J(x(t)) x'(t)]_(k-1) / k: the series of the jvp program to order K - 1, with the tangent
    x'(t) = sum_j (j + 1) x_(j+1) t^j. Exact for any primitive with a jvp rule."""
    order = len(series[0]) - 1
    in_avals = [aval_of_value(s[0]) for s in series]
    wrt = [is_float(a.dtype) and has_series(s) for s, a in zip(series, in_avals)]
    program = _derivative_program(prim, params, in_avals, wrt)
    inner = [s[:order] for s in series]
    inner += [[_scale(s[j + 1], j + 1) for j in range(order)] for s, w in zip(series, wrt) if w]
    # Symbolic zeros of a primal (order-0) tangent coefficient are materialised: a program input is a value.
    inner = [[instantiate(c) if i == 0 else c for i, c in enumerate(s)] for s in inner]
    derivative = propagate(program, inner, order - 1)
    # A tangent the jvp program gives as a constant 0 (a symbolic zero it had to materialise) is 0 at
    # every order: kept symbolic, never multiplied in.
    derivative = [[Zero(atom.aval)] * order if _is_zero_literal(atom) else d
                  for d, atom in zip(derivative, program.outputs)]
    result = [[_scale(d[k - 1], 1.0 / k) for k in range(1, order + 1)] for d in derivative]
    return result if prim.multiple_results else result[0]


def _is_zero_literal(atom) -> bool:
    return isinstance(atom, Literal) and atom.uniform is not None and atom.uniform == 0


def _scale(value, factor):
    if is_zero(value) or factor == 1:
        return value
    return ew.mul(value, float(factor))


# --- programs --------------------------------------------------------------------------------------

def jet_program(program: Program, order: int, wrt=None, force=None, terms=None):
    """The Taylor program of `program` to `order`; returns (program, out_flags).

    Inputs: the primal inputs, then the coefficients x_k (k in `terms`, default 1..K; the others are
    zero) of each input flagged in `wrt` (default: every float input). Outputs: the primal outputs,
    then y_1..y_K of each output that has a nonzero series or is flagged in `force` (its zeros are
    materialised), in order.

    >>> jet_program(program_of(sin), 2)  # doctest: +SKIP   (x, x1, x2) -> (y, y1, y2)
    """
    wrt = [is_float(a.dtype) for a in program.in_avals] if wrt is None else [bool(w) for w in wrt]
    force = [False] * len(program.outputs) if force is None else list(force)
    terms = tuple(range(1, order + 1)) if terms is None else tuple(terms)
    flags_seen = []
    n = len(program.inputs)

    def forward(*args):
        rest = iter(args[n:])
        series = []
        for primal, var, w in zip(args[:n], program.inputs, wrt):
            given = {k: next(rest) for k in terms} if w else {}
            series.append([primal] + [given.get(k, Zero(var.aval)) for k in range(1, order + 1)])
        outs = propagate(program, series, order)
        flags = [(has_series(s) or f) and is_float(a.dtype) for s, f, a in zip(outs, force, program.out_avals)]
        flags_seen.append(flags)
        result = [s[0] for s in outs]
        for s, f, aval in zip(outs, flags, program.out_avals):
            if f:
                result += [instantiate(c, aval) for c in s[1:]]
        return result

    avals = list(program.in_avals) + [a for a, w in zip(program.in_avals, wrt) if w for _ in terms]
    new_program, _, _ = trace_program(forward, avals, "jet")
    return new_program, flags_seen[-1]


def grouped_jet(body: Program, order: int, wrt, in_groups, out_groups, force=None):
    """The Taylor program of a loop body or branch, its values grouped as the enclosing primitive wants
    them: for each group of input positions (consts, carry, xs), the group's primals, then the
    coefficients x_1..x_K of its inputs flagged in `wrt`; outputs likewise per group of output
    positions. Returns (program, out_flags): which outputs have coefficients (those with a nonzero
    series, and those flagged in `force`)."""
    wrt = [bool(w) for w in wrt]
    _, out_flags = jet_program(body, order, wrt, force)
    in_avals, out_avals = body.in_avals, body.out_avals

    def call(*args):
        values, series = iter(args), [None] * len(in_avals)
        for group in in_groups:
            for i in group:
                series[i] = [next(values)]
            for i in group:
                series[i] += [next(values) for _ in range(order)] if wrt[i] else [Zero(in_avals[i])] * order
        outs = propagate(body, series, order)
        result = []
        for group in out_groups:
            result += [outs[o][0] for o in group]
            result += [instantiate(c, out_avals[o]) for o in group if out_flags[o] for c in outs[o][1:]]
        return result

    avals = []
    for group in in_groups:
        avals += [in_avals[i] for i in group] + [in_avals[i] for i in group if wrt[i] for _ in range(order)]
    program, _, _ = trace_program(call, avals, "jet body")
    return simplify(program), out_flags


def grouped_values(series, groups, flags):
    """The operands of a primitive whose body came from `grouped_jet`: per group, the primals, then the
    coefficients of the flagged values (zeros materialised)."""
    result = []
    for group in groups:
        result += [series[i][0] for i in group]
        result += [instantiate(c) for i in group if flags[i] for c in series[i][1:]]
    return result


def grouped_series(values, groups, flags, order: int, avals):
    """The series of a primitive's outputs laid out as `grouped_values` lays out its operands."""
    series, values = [None] * len(flags), iter(values)
    for group in groups:
        for i in group:
            series[i] = [next(values)]
        for i in group:
            series[i] += [next(values) for _ in range(order)] if flags[i] else [Zero(avals[i])] * order
    return series


def carried_flags(body: Program, order: int, wrt, carried):
    """Which inputs have a series once the loop runs: `wrt`, widened by the body's outputs until
    stable; `carried` pairs (input position, output position) of each carried value."""
    wrt = list(wrt)
    while True:
        _, out_flags = jet_program(body, order, wrt)
        widened = list(wrt)
        for i, o in carried:
            widened[i] = wrt[i] or out_flags[o]
        if widened == wrt:
            return wrt
        wrt = widened
