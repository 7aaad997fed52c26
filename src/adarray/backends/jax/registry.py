"""The JAX backend's table: one lowering per primitive, keyed by the Primitive object.

    @lowering(sin_p)
    def _sin(x):
        return jnp.sin(x)

A lowering takes JAX arrays (tracers under `jax.jit`, one per input) and the equation's params
as keywords, and returns one array (a list of them for a primitive with several results); it
only calls `jax.numpy` / `jax.lax`, so the whole program becomes one XLA computation.

A primitive that has no XLA formulation (yet) is registered with `host_callback(prim)`: it runs
its NumPy implementation on the host through `jax.pure_callback` (correct values everywhere, but
the data goes to the host and back, and XLA cannot fuse across it): `host_call`. `x64()` is the
context every lowered program is traced, compiled and run in.

A lowering registered with `lowering(prim, constants=True)` receives the inputs that are constants
of the program (literals, and results folded from them) as NumPy arrays, so that it can specialise
on their values (constant_indices.py), and may return a NumPy array: a constant folded at lowering.

A lowering registered with `lowering(prim, checked=True)` may fail at run time (a reversibility check,
a matrix without a real square root): it calls `fail_on_host(failed, describe, ...)`, and adarray.jit
waits for the results of programs containing it and raises the adarray error itself (interpreter.py).
"""
from __future__ import annotations

import jax
import numpy as np

from ...core.errors import ExecutionError
from ...core.primitive import Primitive
from ..numpy.registry import implementation  # the reference implementations

LOWERINGS: dict[Primitive, object] = {}
HOST_CALLBACKS: set[Primitive] = set()
TAKES_CONSTANTS: set[Primitive] = set()  # lowerings that see constant inputs as NumPy arrays (module doc)
CHECKED: set[Primitive] = set()  # lowerings that may report a failure through fail_on_host (module doc)
_pending: list = []  # (error class, message) of the failure raised on the host during the last call


def lowering(*primitives: Primitive, constants: bool = False, checked: bool = False):
    """Register the decorated function as the JAX lowering of `primitives` (`constants`, `checked`: see the
    module doc)."""
    for primitive in primitives:
        if not isinstance(primitive, Primitive):
            raise TypeError(f"lowering takes Primitive objects, got {primitive!r}")

    def register(fn):
        for primitive in primitives:
            LOWERINGS[primitive] = fn
            if constants:
                TAKES_CONSTANTS.add(primitive)
            else:
                TAKES_CONSTANTS.discard(primitive)
            if checked:
                CHECKED.add(primitive)
        return fn

    return register


def host_callback(*primitives: Primitive) -> None:
    """Lower `primitives` to a host callback into their NumPy implementation (see the module doc)."""
    for primitive in primitives:
        HOST_CALLBACKS.add(primitive)
        LOWERINGS.pop(primitive, None)


def fail_on_host(failed, describe, *operands) -> None:
    """Inside a checked lowering: when the traced flag `failed` is true, raise on the host the error that
    `describe(*operand values)` returns as (error class, message), through one jax.debug.callback under a
    lax.cond (the host is only called on failure); adarray.jit re-raises it as itself after the call."""

    def raise_it(failed_now, *values):
        if not failed_now:  # under jax.vmap the cond is a select that runs this branch too
            return
        error, message = describe(*values)
        _pending[:] = [(error, message)]
        exception = error.__new__(error)
        Exception.__init__(exception, message)  # no source location: this frame is JAX's, the caller's is unknown
        raise exception

    jax.lax.cond(failed, lambda: jax.debug.callback(raise_it, failed, *operands), lambda: None)


def take_pending_error():
    """(error class, message) of the failure raised on the host during the last call, if any (once)."""
    return _pending.pop() if _pending else None


def lowering_of(primitive: Primitive):
    """The lowering of `primitive`, or an ExecutionError naming it."""
    fn = LOWERINGS.get(primitive)
    if fn is None and primitive not in HOST_CALLBACKS:
        raise ExecutionError(f"the JAX backend has no lowering of '{primitive.name}'")
    return fn


def host_call(primitive, out_avals, args, params):
    """`primitive` run by its NumPy implementation on the host (jax.pure_callback)."""
    impl = implementation(primitive)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in out_avals]

    def on_host(*arrays):
        with np.errstate(all="ignore"):
            outs = impl(*[np.asarray(a) for a in arrays], **params)
        outs = outs if primitive.multiple_results else [outs]
        return [np.asarray(o, a.dtype).reshape(a.shape) for o, a in zip(outs, out_avals)]

    results = jax.pure_callback(on_host, shapes, *args, vmap_method="sequential")
    return list(results) if primitive.multiple_results else results[0]


class x64:
    """64-bit types and exact matmuls for what runs inside; the global JAX settings are restored after.
    (A class rather than a generator context manager: it is entered on every call of a compiled program.)

    >>> with x64(): y = jitted(x)  # doctest: +SKIP
    """

    __slots__ = ("_entered",)

    def __enter__(self):
        self._entered = (jax.enable_x64(True), jax.default_matmul_precision("highest"))
        for manager in self._entered:
            manager.__enter__()
        return self

    def __exit__(self, *exc_info):
        for manager in reversed(self._entered):
            manager.__exit__(*exc_info)
        return False
