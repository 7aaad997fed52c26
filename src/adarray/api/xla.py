"""The compiled backends behind `jit(f, backend=...)`, `lower(f, backend=...)` and
`data_parallel`: today JAX/XLA (backends/jax/), for GPUs, TPUs and programs sharded over many
devices and hosts.

`f` is traced and transformed as for the NumPy backend (one program per signature and static
values, staging.py); the program is lowered to JAX and compiled by `jax.jit`, with 64-bit types
enabled for it only. Results are `jax.Array`s (they stay on their devices, with their shardings;
`np.asarray` brings one to the host). Called on traced values (inside grad, vmap, ...), the
program is inlined into the enclosing trace instead, as with `jit`.
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.errors import ArgumentError
from ..core.pytree import flatten, unflatten
from ..tracing import Tracer
from .staging import Staged, stage

BACKENDS = ("jax",)


def _jax_backend():
    try:
        from ..backends import jax as jax_backend
    except ImportError as error:  # pragma: no cover - jax is an optional dependency
        raise ArgumentError("backend='jax' needs JAX: pip install 'adarray[jax]'") from error
    return jax_backend


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise ArgumentError(f"unknown backend {backend!r}: choose 'numpy' or one of {', '.join(BACKENDS)}")


def _flat_shardings(shardings, args, call):
    """One sharding (or None) per argument leaf: `shardings` is one sharding for every argument, or
    a tuple with one entry per positional argument (a sharding for all its leaves, or None)."""
    if shardings is None:
        return [None] * len(call.leaves)
    if not isinstance(shardings, (tuple, list)):
        return [shardings] * len(call.leaves)
    if len(shardings) != len(args):
        raise ArgumentError(f"in_shardings has {len(shardings)} entries for {len(args)} positional arguments; give "
                            "one sharding (or None) per positional argument, or a single sharding for all")
    flat = []
    for sharding, arg in zip(shardings, args):
        flat += [sharding] * len(flatten(arg)[0])
    return flat + [None] * (len(call.leaves) - len(flat))  # keyword arguments: unconstrained


def _place(leaves, avals, shardings):
    """The leaves as arrays of the program's dtypes, put on devices per their sharding."""
    import jax

    placed = []
    for leaf, aval, sharding in zip(leaves, avals, shardings):  # under x64: float64 stays float64 on the device
        if not hasattr(type(leaf), "addressable_shards"):  # not a jax.Array already
            leaf = np.asarray(leaf, aval.dtype)
        placed.append(leaf if sharding is None else jax.device_put(leaf, sharding))
    return placed


class _JaxFunction:
    """`fn` staged on the JAX backend with optional shardings (see jit)."""

    def __init__(self, fn, static_argnums, static_argnames, in_shardings, out_shardings):
        self.fn, self.static_argnums, self.static_argnames = fn, static_argnums, static_argnames
        self.in_shardings, self.out_shardings = in_shardings, out_shardings
        self.kind = ("jit", "jax", object())  # this function's own cache entries (its shardings)
        self._fast: dict = {}  # (shape, dtype) of each array argument -> staged program, when that is all it takes
        self._x64 = None

    def staged(self, args, kwargs):
        jax_backend = _jax_backend()

        def build(program, out_tree, closure, call):
            staged = Staged(program, out_tree, closure)
            out_shardings = self.out_shardings
            if out_shardings is not None and not _is_sharding(out_shardings):
                out_shardings = flatten(out_shardings)[0]
            staged.jax = jax_backend.compile_program(staged.program, out_shardings=out_shardings)
            return staged

        return stage(self.fn, self.kind, args, kwargs, build, static_argnums=self.static_argnums,
                     static_argnames=self.static_argnames)

    def inputs(self, staged, call, args):
        leaves = list(call.leaves) + list(staged.closure)
        if self.in_shardings is None:
            return [leaf if hasattr(type(leaf), "addressable_shards") else np.asarray(leaf, aval.dtype)
                    for leaf, aval in zip(leaves, staged.program.in_avals)]
        shardings = _flat_shardings(self.in_shardings, args, call) + [None] * len(staged.closure)
        return _place(leaves, staged.program.in_avals, shardings)

    def __call__(self, *args, **kwargs):
        key, leaves = (None, None) if kwargs or self.static_argnums or self.static_argnames else _array_key(args)
        staged = self._fast.get(key) if key is not None else None
        if staged is not None:  # arrays (or tuples of arrays) only, seen before: no pytree walk, no staging lookup
            with self.x64():
                if self.in_shardings is not None:  # one leaf per argument here
                    shardings = (self.in_shardings if isinstance(self.in_shardings, (tuple, list))
                                 else [self.in_shardings] * len(args))
                    leaves = _place(args, staged.program.in_avals, shardings)
                return unflatten(staged.out_tree, staged.jax.jitted(*leaves))
        staged, call = self.staged(args, kwargs)
        if (key is not None and not staged.closure and staged.guards is None and len(call.leaves) == len(leaves)
                and (self.in_shardings is None or len(leaves) == len(args))):
            self._fast[key] = staged
        if any(isinstance(leaf, Tracer) for leaf in call.leaves):
            return unflatten(staged.out_tree, staged(call.leaves))  # inside another trace: inline
        with self.x64():
            return unflatten(staged.out_tree, staged.jax.jitted(*self.inputs(staged, call, args)))

    def lower(self, *args, **kwargs):
        staged, call = self.staged(args, kwargs)
        with self.x64():
            return staged.jax.jitted.lower(*self.inputs(staged, call, args))

    def x64(self):
        if self._x64 is None:  # imported once, not on every call
            self._x64 = _jax_backend().x64
        return self._x64()


def _is_array(value) -> bool:
    return isinstance(value, np.ndarray) or hasattr(type(value), "addressable_shards")


def _array_key(args):
    """(signature, leaves) of arguments that are all NumPy or JAX arrays or tuples and lists of them, as
    ADBench's hand passes its parameters; (None, None) otherwise."""
    key, leaves = [], []
    for arg in args:
        if isinstance(arg, (tuple, list)) and all(_is_array(a) for a in arg):
            key.append((type(arg), tuple((a.shape, a.dtype) for a in arg)))
            leaves.extend(arg)
        elif _is_array(arg):
            key.append((arg.shape, arg.dtype))
            leaves.append(arg)
        else:
            return None, None
    return tuple(key), leaves


def _is_sharding(value) -> bool:
    return hasattr(value, "addressable_devices") or type(value).__name__.endswith("Sharding")


def jit_on(backend, fn, *, static_argnums=(), static_argnames=(), in_shardings=None, out_shardings=None):
    """`fn` compiled by `backend` (see adarray.jit)."""
    check_backend(backend)
    jitted = _JaxFunction(fn, static_argnums, static_argnames, in_shardings, out_shardings)
    wrapper = functools.wraps(fn)(lambda *args, **kwargs: jitted(*args, **kwargs))
    wrapper.lower = jitted.lower
    return wrapper


def lower(fn, *, backend="jax", static_argnums=(), static_argnames=(), in_shardings=None, out_shardings=None):
    """A function of `fn`'s arguments returning the compiler's view of `fn` at them: for JAX the
    `jax.stages.Lowered` computation (`.as_text()` is its StableHLO, `.compile()` the executable).
    The executable takes 64-bit arrays: call it inside `with adarray.backends.jax.x64():` (or with
    jax.Arrays made there), or JAX converts NumPy float64 arguments to float32 and refuses them;
    it takes and returns the flat lists of argument and output leaves.

    >>> print(lower(grad(loss), backend="jax")(w, x).as_text())  # doctest: +SKIP
    """
    check_backend(backend)
    jitted = _JaxFunction(fn, static_argnums, static_argnames, in_shardings, out_shardings)
    return functools.wraps(fn)(lambda *args, **kwargs: jitted.lower(*args, **kwargs))


def data_parallel(fn, mesh, batch_argnums=0, *, static_argnums=(), static_argnames=()):
    """`fn` on the JAX backend with the arguments `batch_argnums` split along their first axis over
    the first axis of `mesh` (a `jax.sharding.Mesh`) and every other argument replicated.

    The common use is the gradient of a loss that sums over data points: each device computes the
    terms of its shard and XLA adds the partial gradients across devices. NumPy arguments are placed
    on the devices; already-sharded `jax.Array`s are used as they are. The first axis of a batch
    argument must be divisible by the size of the mesh's first axis.

    >>> step = data_parallel(grad(loss), mesh, batch_argnums=1)  # doctest: +SKIP
    >>> g = step(params, points)  # points split over mesh.axis_names[0]
    """
    from jax.sharding import NamedSharding, PartitionSpec

    batch = {batch_argnums} if isinstance(batch_argnums, int) else set(batch_argnums)
    axis = mesh.axis_names[0]
    functions: dict[int, object] = {}

    @functools.wraps(fn)
    def parallel(*args, **kwargs):
        count = len(args)
        if count not in functions:
            shardings = tuple(NamedSharding(mesh, PartitionSpec(axis) if i in batch or i - count in batch
                                            else PartitionSpec()) for i in range(count))
            functions[count] = jit_on("jax", fn, static_argnums=static_argnums, static_argnames=static_argnames,
                                      in_shardings=shardings)
        return functions[count](*args, **kwargs)

    return parallel
