"""Reverse mode of while loops on the Numba backend: while_grad as native loops over a stack of states.

while_grad[cond, body, body_vjp, num_consts, checkpoint] (consts, initial carry, cotangents of the
final float carry) runs the NumPy backend's schedule (backends/numpy/control.py), written as loops:

* The carry states kept live on a *stack*: one array per carry whose rows are states, and the step
  number of each row. The initial state is row 0.
* Forward: `while cond(top)`: body from the current row into a free one; the new state is pushed
  where the policy keeps it (every step for "all", every k-th, steps 1, 2, 4, 8, ... for
  "binomial"), else the next step overwrites it (two scratch rows above the stack, used in turn).
* Reverse, while the stack is not empty, with b the top's step and e the first step not yet
  reversed: if e = b + 1, body_vjp at the top state (the consts' cotangents accumulate) and pop;
  if e - b is at most the policy's base (1, k, 16 for "binomial"), replay the body from the top
  pushing every state up to e - 1; otherwise replay half way and push that state (recursive
  bisection, as a loop: O(log n) states kept).

One copy of the body serves both the forward run and the replays (compile time grows with the
code's length), and the steps are reversed in the same order as on the NumPy backend, so the
results agree. The stack starts with `_rows` rows and doubles when full (the only allocation in
the loop); inside an enclosing loop it is allocated once and keeps its size across iterations.
"""
from __future__ import annotations

import numpy as np

from ...control.while_loop import while_grad_p
from ...core.types import is_float
from . import scalar
from .control import carry_storage, nested, swap
from .symbolic import planned, product
from .table import opaque
from .writer import Buffer, Local, Remapped

# "binomial": segments this short are replayed keeping every state (the NumPy backend's threshold)
BINOMIAL_BASE = 16
STACK_BYTES = 1 << 22  # the stack's first size: this many bytes, between 4 and 64 rows


def _rows(avals) -> int:
    row = sum(planned(product(a.shape)) * np.dtype(a.dtype).itemsize for a in avals) or 1
    return int(min(64, max(4, STACK_BYTES // row)))


def _policy(checkpoint):
    """(the test that keeps the state at step `j`, the base length of a replay that keeps every state)."""
    if checkpoint == "all":
        return "True", 1
    if checkpoint == "binomial":
        return "({j} & ({j} - 1)) == 0", BINOMIAL_BASE
    return "{j} % " + str(int(checkpoint)) + " == 0", int(checkpoint)


def _zero(aval, text="0") -> str:
    return scalar.constant(float(text) if is_float(aval.dtype) else 0, aval.dtype)


@opaque(while_grad_p, materialized=lambda eqn: range(eqn.params["num_consts"]))
def _while_grad(em, eqn):
    cond, body, body_vjp = eqn.params["cond"], eqn.params["body"], eqn.params["body_vjp"]
    num_consts = eqn.params["num_consts"]
    keep, base = _policy(eqn.params["checkpoint"])
    c_avals, k_avals = body.in_avals[:num_consts], body.in_avals[num_consts:]
    k_flags = [is_float(a.dtype) for a in k_avals]
    n_carry = len(k_avals)
    consts = [em.source(a) for a in eqn.inputs[:num_consts]]
    init, seeds = eqn.inputs[num_consts:num_consts + n_carry], eqn.inputs[num_consts + n_carry:]
    n = {key: em.fresh(key) for key in ("cap", "sp", "steps", "fwd", "count", "end", "b", "m", "every", "half",
                                        "r", "w", "j", "keep", "top")}

    # the stack: one array per carry (rows of states) and the step of each row
    em.hoist(f"{n['cap']} = {_rows(k_avals)}")
    stacks = [em.fresh("st") for _ in k_avals]
    for name, aval in zip(stacks, k_avals):
        em.hoist(f"{name} = np.empty(({n['cap']},) + {tuple(aval.shape)!r}, {scalar.type_name(aval.dtype)})")
    em.hoist(f"{n['steps']} = np.empty({n['cap']}, np.int64)")
    for atom, name in zip(init, stacks):
        em.copy(atom, Buffer(name, ("0",)))
    em.emit(f"{n['steps']}[0] = 0")
    em.emit(f"{n['sp']} = 1")

    # the cotangents of the float carry (two storages, swapped) and the accumulated ones of the float consts;
    # these start at -0.0, which adds exactly (-0.0 + x is x, also for x = -0.0)
    float_k = [a for a, f in zip(k_avals, k_flags) if f]
    ct, ct_next = carry_storage(em, seeds, float_k)
    float_c = [a for a in c_avals if is_float(a.dtype)]
    accumulated, increments = [], []
    for aval in float_c:
        if aval.ndim == 0:
            accumulated.append(Local(em.fresh("g")))
            em.emit(f"{accumulated[-1].text} = {_zero(aval, '-0.0')}")
            increments.append(Local(em.fresh("g")))
        else:
            accumulated.append(Buffer(em.allocate(aval, "g")))
            em.copy_from(Local(_zero(aval, "-0.0")), accumulated[-1], aval.shape)
            increments.append(Buffer(em.allocate(aval, "g")))
    full_ct, it = [], iter(ct)
    for aval, is_flt in zip(k_avals, k_flags):
        if is_flt:
            full_ct.append(next(it))
        elif aval.ndim == 0:
            full_ct.append(Local(_zero(aval)))
        else:
            zeros = em.fresh("z")
            em.hoist(f"{zeros} = np.zeros({tuple(aval.shape)!r}, {scalar.type_name(aval.dtype)})")
            full_ct.append(Buffer(zeros))

    em.emit(f"{n['fwd']} = True")
    for key in ("count", "end", "b", "half"):
        em.emit(f"{n[key]} = 0")
    em.emit(f"{n['every']} = False")
    with em.block("while True:"):
        with em.block(f"if not {n['fwd']}:"):
            em.emit(f"if {n['sp']} == 0:")
            em.emit("    break")
            em.emit(f"{n['b']} = {n['steps']}[{n['sp']} - 1]")
            em.emit(f"{n['m']} = {n['end']} - {n['b']}")
            with em.block(f"if {n['m']} == 1:"):
                _reverse_step(em, n, body_vjp, consts, stacks, full_ct, ct, ct_next, accumulated, increments, float_c)
                em.emit(f"{n['sp']} -= 1")
                em.emit(f"{n['end']} = {n['b']}")
                em.emit("continue")
            em.emit(f"{n['every']} = {n['m']} <= {base}")
            em.emit(f"{n['half']} = {n['m']} - 1 if {n['every']} else {n['m']} // 2")
        _run(em, n, cond, body, consts, stacks, k_avals, keep)
        with em.block(f"if {n['fwd']}:"):  # the forward run ended: its last state starts no step
            em.emit(f"{n['fwd']} = False")
            em.emit(f"{n['count']} = {n['end']} = {n['j']}")
            em.emit(f"if {n['steps']}[{n['sp']} - 1] == {n['end']}:")
            em.emit(f"    {n['sp']} -= 1")
        with em.block(f"elif not {n['every']}:"):  # bisection: keep the state half way
            with em.block(f"if {n['r']} != {n['sp']}:"):
                for name, aval in zip(stacks, k_avals):
                    em.copy_from(Buffer(name, (n["r"],)), Buffer(name, (n["sp"],)), aval.shape)
            em.emit(f"{n['steps']}[{n['sp']}] = {n['b']} + {n['half']}")
            em.emit(f"{n['sp']} += 1")
    if accumulated:
        with em.block(f"if {n['count']} == 0:"):  # no step: the consts' cotangents are +0.0, as on NumPy
            for source, aval in zip(accumulated, float_c):
                em.copy_from(Local(_zero(aval)), source, aval.shape)
    return accumulated + ct


def _run(em, n, cond, body, consts, stacks, k_avals, keep):
    """The forward run (until cond fails) or a replay (`half` steps) from the top of the stack: a state
    kept goes to the row above the top (pushed), the others to one of the two rows above that, in turn."""
    em.emit(f"{n['r']} = {n['sp']} - 1")
    em.emit(f"{n['j']} = 0")
    with em.block("while True:"):
        with em.block(f"if {n['fwd']}:"):
            (test,) = nested(em, cond, consts + [Buffer(name, (n["r"],)) for name in stacks])
            em.emit(f"if not {test.read(())}:")
            em.emit("    break")
        em.emit(f"elif {n['j']} == {n['half']}:")
        em.emit("    break")
        with em.block(f"if {n['sp']} + 3 > {n['cap']}:"):
            _grow(em, n, stacks, k_avals)
        em.emit(f"{n['j']} += 1")
        kept = keep.format(j=n["j"])
        em.emit(f"{n['keep']} = ({n['fwd']} and {kept}) or (not {n['fwd']} and {n['every']})")
        em.emit(f"{n['w']} = {n['sp']} if {n['keep']} else ({n['sp']} + 2 if {n['r']} == {n['sp']} + 1 "
                f"else {n['sp']} + 1)")
        nested(em, body, consts + [Buffer(name, (n["r"],)) for name in stacks],
                [Buffer(name, (n["w"],)) for name in stacks])
        em.emit(f"{n['r']} = {n['w']}")
        with em.block(f"if {n['keep']}:"):
            em.emit(f"{n['steps']}[{n['sp']}] = {n['b']} + {n['j']}")
            em.emit(f"{n['sp']} += 1")


def _grow(em, n, stacks, k_avals):
    """Twice the rows (the old ones copied, the scratch rows too)."""
    for name, aval in zip([*stacks, n["steps"]], [*k_avals, None]):
        shape = tuple(aval.shape) if aval is not None else ()
        dtype = scalar.type_name(aval.dtype) if aval is not None else "np.int64"
        grown = em.fresh("st")
        em.emit(f"{grown} = np.empty((2 * {n['cap']},) + {shape!r}, {dtype})")
        row = em.fresh("q")
        with em.block(f"for {row} in range({n['cap']}):"):  # a loop: Numba compiles a slice copy for seconds
            em.copy_from(Buffer(name, (row,)), Buffer(grown, (row,)), shape)
        em.emit(f"{name} = {grown}")
    em.emit(f"{n['cap']} = 2 * {n['cap']}")


def _reverse_step(em, n, body_vjp, consts, stacks, full_ct, ct, ct_next, accumulated, increments, const_avals):
    """body_vjp at the top state: the carry's cotangent moves one step back, the consts' accumulate."""
    em.emit(f"{n['top']} = {n['sp']} - 1")
    nested(em, body_vjp, consts + [Buffer(name, (n["top"],)) for name in stacks] + full_ct,
            increments + ct_next)
    for total, increment, aval in zip(accumulated, increments, const_avals):
        if isinstance(total, Local):
            em.emit(f"{total.text} = {total.text} + {increment.text}")
        else:
            em.copy_from(Remapped(lambda index, a=total, b=increment: f"{a.read(index)} + {b.read(index)}"), total,
                         aval.shape)
    swap(em, ct, ct_next)
