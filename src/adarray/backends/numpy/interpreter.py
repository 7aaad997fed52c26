"""The reference backend: an interpreter of programs over NumPy arrays.

`compile_program(program)` resolves every equation to its NumPy implementation once (the table in `registry.py`,
keyed by primitive) and returns a callable. Its first calls run the list of steps in a loop. A program that has
been called HOT_CALLS times (a loop body after as many iterations) is written out as the source of one Python
function, one line per equation, and compiled: later calls pay for the implementations and little else (about
0.05 µs an equation instead of 0.6). Compiling costs about 20 µs an equation, which a program called once never
pays. Either way, each value is dropped after its last use: holding every intermediate until the program ends
would make peak memory the sum of all arrays, and rematerialisation (checkpoint) save nothing.

`evaluate` runs one primitive eagerly on concrete arrays (what `bind` does outside a trace, and what constant
folding uses).

    run = compile_program(program)
    outputs = run(*arrays)            # a list, one array per program output
"""
from __future__ import annotations

import threading

import numpy as np

from ...core.errors import ExecutionError
from ...core.ir import Literal, Program, dead_after
from .registry import implementation

# Calls after which a program is compiled to Python source (its loop has then cost a few times the compile).
HOT_CALLS = 8
# Longer programs stay in the loop: Python's compiler would take seconds.
MAX_GENERATED = 20_000

_state = threading.local()  # .quiet: a program of this thread is running with NumPy's floating-point errors off


def evaluate(primitive, arrays, params):
    """`primitive` applied to concrete arrays: its outputs (a list for several results)."""
    return implementation(primitive)(*arrays, **params)


def compile_program(program: Program):
    """A Python callable running `program` on NumPy arrays."""
    plan = _Plan(program)
    execute, calls = plan.interpret, 0

    def run(*args):
        nonlocal execute, calls
        if calls < HOT_CALLS:
            calls += 1
            if calls == HOT_CALLS and len(program.eqns) <= MAX_GENERATED:
                execute = plan.generate()
        if getattr(_state, "quiet", False):  # a nested program (a loop body, a branch): errors are already off
            return execute(args)
        _state.quiet = True
        try:
            with np.errstate(all="ignore"):  # NaN and inf are values, not errors
                return execute(args)
        finally:
            _state.quiet = False

    run.plan = plan
    return run


class _Plan:
    """A program's equations resolved to implementations, with the positions of their values, for the loop
    (`interpret`) and for the generated function (`generate`)."""

    def __init__(self, program: Program):
        self.program = program
        slots = {id(v): i for i, v in enumerate(program.inputs)}
        constants: list = []

        def slot(atom):
            if isinstance(atom, Literal):
                constants.append(atom.value)
                return -len(constants)
            return slots[id(atom)]

        self.functions, steps = [], []
        for eqn in program.eqns:
            fn = implementation(eqn.prim)
            self.functions.append(fn)  # resolved once: a profiler that swaps the table later does not see this
            in_slots = tuple(slot(a) for a in eqn.inputs)
            out_slots = []
            for var in eqn.outputs:
                slots[id(var)] = len(slots)
                out_slots.append(slots[id(var)])
            steps.append((fn, in_slots, tuple(out_slots) if eqn.prim.multiple_results else out_slots[0],
                          eqn.params, eqn))
        self.out_slots = tuple(slot(a) for a in program.outputs)
        self.size = len(slots)
        constants.reverse()  # slot -k is constants[len - k] after reversal: index with -k
        self.constants = constants
        self.dead = dead_after(program)
        self.steps = [step + (tuple(slots[id(v)] for v in dead),) for step, dead in zip(steps, self.dead)]

    def interpret(self, args):
        env = list(args) + [None] * (self.size - len(args)) + self.constants
        for fn, ins, outs, params, eqn, release in self.steps:
            try:
                result = fn(*[env[i] for i in ins], **params)
            except IndexError as error:
                raise _index_error(eqn, error) from None
            if isinstance(outs, int):
                env[outs] = result
            else:
                for o, r in zip(outs, result):
                    env[o] = r
            for i in release:
                env[i] = None
        return [env[i] for i in self.out_slots]

    def generate(self):
        """The program as one compiled Python function of the argument tuple, e.g.
            def program(args):
                a0, a1 = args
                v2 = f0(a0, a1)
                del a1
                v3 = f1(v2, axes=p1_axes, op=p1_op)
                ...
                return [v3]
        """
        program, namespace, names, lines = self.program, {}, {}, []

        def name(atom):
            if isinstance(atom, Literal):
                key = f"c{len(namespace)}"
                namespace[key] = atom.value
                return key
            return names[id(atom)]

        inputs = [f"a{i}" for i in range(len(program.inputs))]
        names.update((id(v), n) for v, n in zip(program.inputs, inputs))
        body = [f"{', '.join(inputs)}, = args"] if inputs else []
        for k, (eqn, fn, dead) in enumerate(zip(program.eqns, self.functions, self.dead)):
            namespace[f"f{k}"] = fn
            arguments = [name(a) for a in eqn.inputs]
            for key, value in eqn.params.items():
                namespace[f"p{k}_{key}"] = value
                arguments.append(f"{key}=p{k}_{key}")
            for var in eqn.outputs:
                names[id(var)] = f"v{len(names)}"
            targets = ", ".join(names[id(v)] for v in eqn.outputs) + (", *_" if eqn.prim.multiple_results else "")
            lines.append((len(body), eqn))
            body.append(f"{targets} = f{k}({', '.join(arguments)})")
            if dead:
                body.append(f"del {', '.join(names[id(v)] for v in dead)}")
        body.append(f"return [{', '.join(name(a) for a in program.outputs)}]")
        # line numbers: 1 is `def`, 2 is `try:`, the body starts at 3
        where = {index + 3: eqn for index, eqn in lines}
        source = "\n".join(["def program(args):", "    try:"] + [f"        {line}" for line in body] + [
            "    except IndexError as error:", "        raise index_error(where[error.__traceback__.tb_lineno], error) "
            "from None"])
        namespace.update(index_error=_index_error, where=where)
        exec(compile(source, "<adarray program>", "exec"), namespace)
        self.source = source
        return namespace["program"]


def _index_error(eqn, error) -> ExecutionError:
    return ExecutionError(f"index out of range in `{eqn!r}`: {error}")
