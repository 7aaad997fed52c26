"""Calls inlined: an equation of a call-like primitive (its value is its `fun` param's: custom_jvp_call,
custom_vjp_call, checkpoint_call, registered beside them in control/custom.py) replaced by `fun`'s
equations, in nested programs too. A backend that fuses across calls runs it once, before emitting.

    program = inline_calls(program)          # the same object when it calls nothing
"""
from __future__ import annotations

from ..core.ir import Eqn, Program, Var

CALLS: set = set()  # the call-like primitives


def register_call(prim):
    """Mark `prim` as call-like: its outputs are those of `params["fun"]` applied to its inputs."""
    CALLS.add(prim)
    return prim


def inline_calls(program: Program) -> Program:
    """`program` with every call-like equation, at any depth, replaced by its `fun`'s equations."""
    rename: dict[int, object] = {}
    changed = False

    def atom(a):
        return rename.get(id(a), a) if isinstance(a, Var) else a

    eqns = []
    for eqn in program.eqns:
        if eqn.prim not in CALLS:
            params = _inline_nested(eqn.params)
            inputs = tuple(atom(a) for a in eqn.inputs)
            if params is eqn.params and all(new is old for new, old in zip(inputs, eqn.inputs)):
                eqns.append(eqn)
            else:
                eqns.append(Eqn(eqn.prim, inputs, params, eqn.outputs))
                changed = True
            continue
        changed = True
        fun = inline_calls(eqn.params["fun"])
        inner = {id(v): atom(a) for v, a in zip(fun.inputs, eqn.inputs)}
        for body_eqn in fun.eqns:
            outputs = tuple(Var(v.aval) for v in body_eqn.outputs)
            for old, new in zip(body_eqn.outputs, outputs):
                inner[id(old)] = new
            inputs = tuple(inner.get(id(a), a) if isinstance(a, Var) else a for a in body_eqn.inputs)
            eqns.append(Eqn(body_eqn.prim, inputs, body_eqn.params, outputs))
        for var, result in zip(eqn.outputs, fun.outputs):
            rename[id(var)] = inner.get(id(result), result) if isinstance(result, Var) else result
    if not changed:
        return program
    return Program(program.inputs, tuple(eqns), tuple(atom(a) for a in program.outputs))


def _inline_nested(params: dict) -> dict:
    """`params` with calls inlined in the programs it holds (a Program, or a tuple or list of them); the same
    dict when none changes."""
    updated = {}
    for name, value in params.items():
        if isinstance(value, Program):
            new = inline_calls(value)
        elif isinstance(value, (tuple, list)) and value and all(isinstance(v, Program) for v in value):
            new = type(value)(inline_calls(v) for v in value)
            new = value if all(a is b for a, b in zip(new, value)) else new
        else:
            continue
        if new is not value:
            updated[name] = new
    return {**params, **updated} if updated else params
