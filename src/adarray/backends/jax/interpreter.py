"""Lowering a Program to one JAX function, and compiling it with `jax.jit`.

`lower_program(program)` gives a Python function over JAX arrays that applies each equation's
lowering (registry.py) in order; nested programs (loop bodies, branches, operators, kernels) are
lowered by the same function. Constants of the program stay NumPy arrays until a lowering that
is not registered with `constants=True` needs them (registry.py). `compile_program(program)`
wraps it in `jax.jit` and runs tracing, compilation and every call with 64-bit types enabled
(`jax.enable_x64(True)`, a context manager: the user's global `jax_enable_x64` setting is not
changed) and with the highest matmul precision (on GPUs and TPUs XLA would otherwise use
reduced-precision passes for float32 products). A program with reversible functions waits for its
results (`_RaisingFailedChecks`).
"""
from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np

from ...core.ir import Literal, Program
from .registry import CHECKED, HOST_CALLBACKS, TAKES_CONSTANTS, host_call, lowering_of, take_pending_error, x64

_lowered: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def lower_program(program: Program):
    """A function of JAX arrays (one per input of `program`) returning the list of its outputs."""
    fn = _lowered.get(program)
    if fn is None:
        fn = _lowered[program] = _lower(program)
    return fn


def _lower(program: Program):
    steps = []
    for eqn in program.eqns:
        fn = None if eqn.prim in HOST_CALLBACKS else lowering_of(eqn.prim)
        steps.append((fn, eqn))

    def run(*args):
        env = {id(v): a for v, a in zip(program.inputs, args)}

        def constant_or_traced(atom):  # a constant is a NumPy array here
            return np.asarray(atom.value) if isinstance(atom, Literal) else env[id(atom)]

        def read(atom):
            value = constant_or_traced(atom)
            return jnp.asarray(value) if isinstance(value, np.ndarray) else value

        for fn, eqn in steps:
            if fn is None:
                result = host_call(eqn.prim, [v.aval for v in eqn.outputs], [read(a) for a in eqn.inputs],
                                   eqn.params)
            elif eqn.prim in TAKES_CONSTANTS:
                result = fn(*[constant_or_traced(a) for a in eqn.inputs], **eqn.params)
            else:
                result = fn(*[read(a) for a in eqn.inputs], **eqn.params)
            outs = result if eqn.prim.multiple_results else [result]
            for var, value in zip(eqn.outputs, outs):
                if isinstance(value, np.ndarray):  # folded while lowering: stays a constant
                    env[id(var)] = np.asarray(value, var.aval.dtype)
                    continue
                value = jnp.asarray(value)
                if value.dtype != var.aval.dtype:
                    value = value.astype(var.aval.dtype)
                env[id(var)] = value
        return [read(a) for a in program.outputs]

    return run


class Compiled:
    """`program` lowered and wrapped in `jax.jit`: call it with arrays (NumPy or JAX), get JAX arrays."""

    def __init__(self, program: Program, *, in_shardings=None, out_shardings=None):
        self.program = program
        lowered = lower_program(program)
        options = {}
        if out_shardings is not None:
            options["out_shardings"] = out_shardings
        if in_shardings is not None:
            options["in_shardings"] = in_shardings
        self.jitted = jax.jit(lambda *args: lowered(*args), **options)
        if _contains(program, CHECKED):
            self.jitted = _RaisingFailedChecks(self.jitted)

    def __call__(self, *args):
        with x64():
            return self.jitted(*args)

    def lower(self, *args):
        """The `jax.stages.Lowered` computation for these arguments (its HLO: `.as_text()`)."""
        with x64():
            return self.jitted.lower(*args)


class _RaisingFailedChecks:
    """A jitted program with checked lowerings (reversible functions, sqrtm, logm): calls wait for their results,
    so that the error of a failed run-time check (raised on the host by registry.fail_on_host) is raised by the
    call as itself."""

    def __init__(self, jitted):
        self.jitted = jitted

    def __call__(self, *args):
        try:
            return jax.block_until_ready(self.jitted(*args))
        except jax.errors.JaxRuntimeError:
            failed = take_pending_error()
            if failed is None:
                raise
            error, message = failed
            raise error(message) from None  # the ReversibilityError (or ExecutionError) itself, not JAX's wrapping

    def lower(self, *args):
        return self.jitted.lower(*args)

    def __getattr__(self, name):
        return getattr(self.jitted, name)


def _contains(program: Program, primitives) -> bool:
    """Whether `program` or a program nested in its params binds one of `primitives`."""
    def nested(value):
        if isinstance(value, Program):
            return _contains(value, primitives)
        if isinstance(value, (tuple, list)):
            return any(nested(v) for v in value)
        return False

    return any(eqn.prim in primitives or any(nested(v) for v in eqn.params.values()) for eqn in program.eqns)


def compile_program(program: Program, **shardings) -> Compiled:
    """`program` as a jitted JAX callable (see `Compiled`)."""
    return Compiled(program, **shardings)
