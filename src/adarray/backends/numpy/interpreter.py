"""The reference backend: an interpreter of programs over NumPy arrays.

`compile_program(program)` resolves every equation to its NumPy implementation once (the table
in `registry.py`, keyed by primitive), so a call only runs the list of steps; values are dropped
after their last use. `evaluate` runs one primitive eagerly on concrete arrays (what `bind` does
outside a trace, and what constant folding uses).
"""
from __future__ import annotations

import numpy as np

from ...core.errors import ExecutionError
from ...core.ir import Literal, Program, dead_after
from .registry import implementation


def evaluate(primitive, arrays, params):
    """`primitive` applied to concrete arrays: its outputs (a list for several results)."""
    return implementation(primitive)(*arrays, **params)


def compile_program(program: Program):
    """A Python callable running `program` on NumPy arrays."""
    slots = {id(v): i for i, v in enumerate(program.inputs)}
    constants: list = []

    def slot(atom):
        if isinstance(atom, Literal):
            constants.append(atom.value)
            return -len(constants)
        return slots[id(atom)]

    steps = []
    for eqn in program.eqns:
        fn = implementation(eqn.prim)
        in_slots = tuple(slot(a) for a in eqn.inputs)
        out_slots = []
        for var in eqn.outputs:
            slots[id(var)] = len(slots)
            out_slots.append(slots[id(var)])
        steps.append((fn, in_slots, tuple(out_slots) if eqn.prim.multiple_results else out_slots[0], eqn.params, eqn))
    out_slots = tuple(slot(a) for a in program.outputs)
    size = len(slots)
    constants.reverse()  # slot -k is constants[len - k] after reversal: index with -k
    # Each value is dropped after its last use: holding every intermediate until the program ends
    # would make peak memory the sum of all arrays, and rematerialisation (checkpoint) save nothing.
    releases = [tuple(slots[id(v)] for v in dead) for dead in dead_after(program)]
    steps = [step + (release,) for step, release in zip(steps, releases)]

    def run(*args):
        env = list(args) + [None] * (size - len(args)) + constants
        with np.errstate(all="ignore"):  # NaN and inf are values, not errors
            _execute(steps, env)
        return [env[i] for i in out_slots]

    return run


def _execute(steps, env) -> None:
    for fn, ins, outs, params, eqn, release in steps:
        try:
            result = fn(*[env[i] for i in ins], **params)
        except IndexError as error:
            raise ExecutionError(f"index out of range in `{eqn!r}`: {error}") from None
        if isinstance(outs, int):
            env[outs] = result
        else:
            for o, r in zip(outs, result):
                env[o] = r
        for i in release:
            env[i] = None
