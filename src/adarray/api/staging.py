"""Staging: trace a user function at a call's arguments, build a transformed program, cache it.

A call ``f(*args, **kwargs)`` is split into
  * dynamic leaves, the program's inputs: the leaves of the positional arguments (pytrees of
    arrays; Python and NumPy scalars are 0-d arrays) and of the keyword arguments whose leaves
    are all arrays (np.ndarray, NumPy scalars, traced values);
  * static values, passed to f unchanged and part of the cache key: the positional arguments
    named by static_argnums / static_argnames, and every other keyword argument (Python numbers,
    strings, tuples of them, ...), which must then be hashable.
Only positional arguments are differentiated.

The cache (per function, then per kind of transformation, signature and static values) holds one
staged program per path through the function's Python control flow. A guarded trace (grad and
the other derivatives, jit(guards=True)) records a guard for each concrete value Python asked for
(tracing/concrete.py); its program is reused only when the guards give the same results on the
new arguments, and otherwise the function is traced again.
"""
from __future__ import annotations

import copy
import inspect
import operator
import weakref
from collections import OrderedDict

import numpy as np

from ..backends import compiler
from ..backends.numpy import compile_program
from ..core.config import BACKENDS, config
from ..core.errors import ArgumentError, Error
from ..core.fingerprint import fingerprint
from ..core.ir import Eqn, Literal, Program, Var
from ..core.precision import narrow
from ..core.pytree import TreeDef, flatten, leaf_paths, unflatten
from ..core.types import SHORT_NAMES, Aval
from ..passes import eliminate_dead_code, simplify
from ..tracing import Tracer, eval_program, record_guard, trace_guarded
from ..tracing.concrete import convert, same_result
from ..tracing.tracer import CONSTANT_LIMIT
from .tiering import compile_tiered

_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_NO_KEYWORDS = flatten({})[1]

# At most this many paths are kept per signature (the oldest is dropped): a loop whose trip count
# depends on the data makes one path per count.
MAX_PATHS = 64


def set_backend(name: str) -> str:
    """Run every staged program (jit, grad, vjp, jvp, vmap, jacfwd, ...) on backend `name` from now on:
    'auto' (the default: the NumPy interpreter first, compiled by Numba once a program is hot, when Numba is
    installed; tiering.py), 'numpy' (the reference interpreter only) or 'numba' (compiled fused loops at the
    first call; needs numba). Returns the previous backend. `$ADARRAY_BACKEND` sets the initial choice
    (core/config.py). XLA is not a backend of every staged call: name it per function, `ad.jit(f, backend="jax")`.

    >>> previous = set_backend("numba")  # doctest: +SKIP
    """
    program_compiler(name)  # an unknown or uninstalled backend fails here, not at the next call
    return config.update("backend", name)


def get_backend() -> str:
    return config.backend


def program_compiler(name: str):
    """The `compile(program, name)` of backend `name`."""
    if name == "auto":
        return compile_tiered
    if name not in BACKENDS and name != "jax":
        raise ArgumentError(f"unknown backend {name!r}; choose one of {', '.join(map(repr, BACKENDS))} (or name "
                            "'jax' per function: ad.jit(f, backend='jax'))")
    if name == "jax":
        raise ArgumentError("the JAX backend runs a function staged for it: ad.jit(f, backend='jax') (or ad.lower, "
                            "ad.data_parallel); set_backend and the un-jitted transformations use 'auto', 'numpy' "
                            "or 'numba'")
    return compiler(name)


class Staged:
    """A traced, transformed, simplified and compiled program with its pytree metadata."""

    def __init__(self, program: Program, out_tree, closure):
        self.program = simplify(program)
        self.out_tree = out_tree
        self.closure = closure
        self.guards = None
        self.name = "program"
        self._compiled = {}

    def __call__(self, leaves, extra=(), backend=None):
        """Run on the argument leaves (then the closure, then `extra` inputs)."""
        return self.run(list(leaves) + list(self.closure) + list(extra), backend)

    def with_closure(self, closure) -> Staged:
        """This program with the closed-over values of another call (the compiled code is shared)."""
        if len(closure) == 0 and len(self.closure) == 0:
            return self
        bound = copy.copy(self)
        bound.closure = closure
        return bound

    def run(self, args, backend=None):
        if any(isinstance(a, Tracer) for a in args):
            return eval_program(self.program, args)  # inside another trace: inline
        backend = backend or config.backend
        run = self._compiled.get(backend)
        if run is None:
            run = self._compiled[backend] = program_compiler(backend)(self.program, self.name)
        return run(*[np.asarray(a) for a in args])


class _Guards:
    """The guards of a staged program: a program computing the guarded values from the traced
    program's inputs, and per value the Python conversion applied and the result the trace saw."""

    def __init__(self, program: Program, checks):
        # Only dead code goes: the simplifier's one reassociation ((x * c1) * c2 -> x * (c1 c2)) could change a
        # guarded value's last bit, so that it disagrees with the value Python saw, and the program would then
        # be traced on every call.
        self.program = eliminate_dead_code(program)
        self.checks = checks
        used = {id(a) for eqn in self.program.eqns for a in eqn.inputs} | {id(a) for a in self.program.outputs}
        self._used = [id(var) in used for var in self.program.inputs]
        self._compiled = None

    def hold(self, inputs) -> bool:
        """Do the guards give the recorded results on `inputs` (arrays or traced values whose
        concrete values are known)?"""
        values = []
        for var, used, value in zip(self.program.inputs, self._used, inputs):
            if not used:
                values.append(np.zeros(var.aval.shape, var.aval.dtype))
                continue
            if isinstance(value, Tracer):
                value = value.trace.concrete_value(value.variable) if value.trace.knows_values else None
                if value is None:
                    return False
            values.append(np.asarray(value))
        if self._compiled is None:
            self._compiled = compile_program(self.program)
        try:
            outs = self._compiled(*values)
            return all(same_result(convert(out, conversion), result)
                       for out, (conversion, result) in zip(outs, self.checks))
        except (Error, ArithmeticError, ValueError, TypeError, IndexError):
            return False  # a guard that cannot even be evaluated here does not hold: trace again

    def replay(self, inputs) -> None:
        """Record these guards in the enclosing trace: a program chosen by them is inlined there."""
        for out, (conversion, result) in zip(eval_program(self.program, list(inputs)), self.checks):
            if isinstance(out, Tracer):
                record_guard(out, conversion, result)


def name_of(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def like_primals(what: str, fn, primals, values, kind: str = "the tangents") -> list:
    """The leaves of `values` (tangents, a Taylor term), which must have the pytree structure and the leaf
    shapes of `primals`; otherwise an ArgumentError naming `what`, fn and `kind`."""
    leaves, tree = flatten(values)
    primal_leaves, primal_tree = flatten(primals)
    if tree != primal_tree:
        raise ArgumentError(f"{what} of '{name_of(fn)}': {kind} must be structured like the primals {primal_tree}, "
                            f"got {tree}")
    for primal, leaf in zip(primal_leaves, leaves):
        if np.shape(primal) != np.shape(leaf):
            raise ArgumentError(f"{what} of '{name_of(fn)}': a leaf of {kind} has shape {np.shape(leaf)} for a primal "
                                f"of shape {np.shape(primal)}")
    return leaves


def is_single(argnums) -> bool:
    """argnums=1 gives one result; argnums=(1,) or [0, 1] a tuple of them."""
    return not isinstance(argnums, (tuple, list))


def normalize_argnums(argnums, num_args: int, fn, what: str = "argnums") -> tuple[int, ...]:
    """argnums (an int or a tuple of ints, negative from the end) as indices in range.

    For derivatives (`what` = "argnums") each argument may appear once: JAX rejects repeats too
    (with a TypeError from deep inside), and a repeat would ask for one gradient twice.
    """
    try:
        nums = (operator.index(argnums),) if is_single(argnums) else tuple(operator.index(n) for n in argnums)
    except TypeError:
        raise ArgumentError(f"{what} of '{name_of(fn)}' must be an int or a tuple of ints, got {argnums!r}") from None
    for n in nums:
        if not -num_args <= n < num_args:
            raise ArgumentError(
                f"{what} {argnums!r} is out of range for '{name_of(fn)}' called with {num_args} "
                "positional arguments"
            )
    normalized = tuple(n % num_args for n in nums)
    if what == "argnums" and len(set(normalized)) != len(normalized):
        raise ArgumentError(
            f"argnums {argnums!r} of '{name_of(fn)}' name the same argument more than once; "
            "list each argument once"
        )
    return normalized


def _is_array(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic, Tracer))


def split_keywords(fn, kwargs: dict, static_names=()) -> tuple[dict, dict]:
    """(traced keyword arguments, static ones): a keyword is traced when it is not named static
    and its value is a pytree of arrays with at least one leaf."""
    traced, static = {}, {}
    for name, value in kwargs.items():
        leaves = flatten(value)[0]
        if name not in static_names and leaves and all(_is_array(leaf) for leaf in leaves):
            traced[name] = value
        else:
            static[name] = value
    return traced, static


def _parameter_names(fn) -> list | None:
    """Names of fn's positional parameters, or None when its signature is unknown."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in parameters if p.kind in kinds]


def check_static_arguments(fn, static_argnums, static_argnames) -> None:
    """static_argnames and static_argnums must name parameters of fn (as JAX checks), when its
    signature tells: a misspelt name would otherwise silently trace the argument."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return
    kinds = {p.kind for p in parameters}
    names = [p.name for p in parameters if p.kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                           inspect.Parameter.VAR_KEYWORD)]
    for name in (static_argnames,) if isinstance(static_argnames, str) else static_argnames or ():
        if name not in names and inspect.Parameter.VAR_KEYWORD not in kinds:
            raise ArgumentError(f"static_argnames names {name!r}, which is not a parameter of '{name_of(fn)}' "
                                f"(its parameters: {', '.join(names) or 'none'})")
    positional = [p for p in parameters if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                      inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return
    for n in (static_argnums,) if isinstance(static_argnums, int) else static_argnums or ():
        if isinstance(n, int) and not -len(positional) <= n < len(positional):
            raise ArgumentError(f"static_argnums {n} is out of range: '{name_of(fn)}' has {len(positional)} "
                                "positional parameters")


def static_parts(fn, num_args, kwargs, static_argnums, static_argnames) -> tuple[set, set]:
    """Static positions among the positional arguments and static keyword names: static_argnums
    and static_argnames name the same parameters whether they are passed by position or keyword."""
    if not static_argnames and (static_argnums is None or static_argnums == ()):
        return set(), set()  # the common case, kept cheap: this runs on every call
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    names = set(static_argnames or ())
    try:
        nums = [operator.index(static_argnums)] if is_single(static_argnums) else [
            operator.index(n) for n in static_argnums]
    except TypeError:
        raise ArgumentError(f"static_argnums of '{name_of(fn)}' must be an int or a tuple of ints, "
                            f"got {static_argnums!r}") from None
    parameters = _parameter_names(fn) if (names or any(n >= num_args for n in nums)) else None
    positions = set()
    for n in nums:
        if -num_args <= n < num_args:
            positions.add(n % num_args)
        elif parameters is not None and 0 <= n < len(parameters) and parameters[n] in kwargs:
            names.add(parameters[n])
        else:
            raise ArgumentError(f"static_argnums {static_argnums!r} is out of range for '{name_of(fn)}' called "
                                f"with {num_args} positional arguments")
    for i, name in enumerate(parameters or ()):
        if name in names and i < num_args:
            positions.add(i)
    return positions, names


class _Call:
    """One call's arguments: dynamic leaves with their avals and structure, static values, and the
    flat function of the leaves that calls fn with everything in place.

    `python_values`: positions of arguments whose leaves stay Python values unless they are arrays or
    floats (integers, booleans, functions, strings: `_stays_python`), as in jax.grad for the arguments
    outside argnums: a count, an exponent or a shift (`matrix_power(a, n)`, `x[:n]`, `range(n)`) or a
    function is then usable as such.
    """

    def __init__(self, fn, args, kwargs, static_argnums=(), static_argnames=(), python_values=()):
        static_positions, static_names = static_parts(fn, len(args), kwargs, static_argnums, static_argnames)
        traced_kwargs, static_kwargs = split_keywords(fn, kwargs, static_names) if kwargs else ({}, {})
        positional = [None if i in static_positions else a for i, a in enumerate(args)]
        if traced_kwargs:
            leaves, self.in_tree = flatten((positional, traced_kwargs))
        else:  # the common case, without building the empty dict's node on every call
            leaves, positional_tree = flatten(positional)
            self.in_tree = TreeDef("tuple", (positional_tree, _NO_KEYWORDS))
        leaves = [narrow(leaf) for leaf in leaves]   # longdouble -> float64 (core/precision.py)
        self.positions = _leaf_positions(self.in_tree)
        self.kept = {}  # leaf index -> the Python value passed through unchanged
        if python_values:
            self.kept = {i: leaf for i, (leaf, position) in enumerate(zip(leaves, self.positions))
                         if position in python_values and _stays_python(leaf)}
        self.avals = [_aval(leaf, fn, self.in_tree, i) for i, leaf in enumerate(leaves) if i not in self.kept]
        if self.kept:
            leaves = [leaf for i, leaf in enumerate(leaves) if i not in self.kept]
            self.positions = [p for i, p in enumerate(self.positions) if i not in self.kept]
        self.leaves = leaves
        self.static_positions = static_positions
        static = tuple((i, type(args[i]), args[i]) for i in sorted(static_positions))
        static += tuple((name, type(static_kwargs[name]), static_kwargs[name]) for name in sorted(static_kwargs))
        static += tuple((("leaf", i), type(value), value) for i, value in self.kept.items())
        try:
            hash(static)
        except TypeError:
            raise ArgumentError(_unhashable(fn, args, static_positions, static_kwargs)) from None
        self.static_key = static
        self._call = (fn, args, static_kwargs)

    def flat_fn(self, *flat):
        """fn called on the dynamic leaves `flat`, with the static values in place (what is traced)."""
        fn, args, static_kwargs = self._call
        if self.kept:
            dynamic = iter(flat)
            flat = [self.kept[i] if i in self.kept else next(dynamic) for i in range(len(flat) + len(self.kept))]
        rebuilt, keywords = unflatten(self.in_tree, flat)
        full = [args[i] if i in self.static_positions else rebuilt[i] for i in range(len(args))]
        return fn(*full, **keywords, **static_kwargs)

    @property
    def num_positional_leaves(self) -> int:
        return sum(1 for position in self.positions if position >= 0)


def _leaf_positions(in_tree) -> list:
    """For each leaf, the index of the positional argument it belongs to (-1: a keyword argument)."""
    positional, keywords = in_tree.children
    positions = [n for n, child in enumerate(positional.children) for _ in range(child.num_leaves)]
    return positions + [-1] * keywords.num_leaves


def _stays_python(value) -> bool:
    """Outside argnums, what is not floating-point data stays a Python value: integers and booleans (NumPy's
    scalars included), functions, strings and other objects; arrays and floats are traced."""
    if isinstance(value, (np.ndarray, Tracer, float, complex, np.inexact)):
        return False
    return not hasattr(type(value), "addressable_shards")  # a jax.Array is data


def _unhashable(fn, args, static_positions, static_kwargs) -> str:
    for i in sorted(static_positions):
        try:
            hash(args[i])
        except TypeError:
            return (f"static argument {i} of '{name_of(fn)}' must be hashable, got a {type(args[i]).__name__}; "
                    "pass arrays as ordinary (traced) arguments")
    for name, value in static_kwargs.items():
        try:
            hash(value)
        except TypeError:
            return (f"keyword argument {name!r} of '{name_of(fn)}' is a {type(value).__name__}: it is not an array "
                    "(or a pytree of arrays), which would be traced, and not hashable, so it cannot be a static "
                    "value either; pass arrays (np.asarray), or a hashable value such as a tuple, or close over it")
    return f"static arguments of '{name_of(fn)}' must be hashable"


def _argument_name(in_tree, index: int) -> str:
    """'argument 1', "argument 0 ['w']" or "keyword argument 'scale'" for leaf `index`."""
    positional, keywords = in_tree.children
    if index < positional.num_leaves:
        for n, child in enumerate(positional.children):
            if index < child.num_leaves:
                path = leaf_paths(child)[index]
                return f"argument {n}" + ("" if child.kind == "leaf" else f" {path}")
            index -= child.num_leaves
    index -= positional.num_leaves
    for key, child in zip(keywords.keys, keywords.children):
        if index < child.num_leaves:
            path = leaf_paths(child)[index]
            return f"keyword argument {key!r}" + ("" if child.kind == "leaf" else f" {path}")
        index -= child.num_leaves
    return "an argument"


def _aval(value, fn, in_tree, index: int) -> Aval:
    if isinstance(value, Tracer):
        return value.aval
    if hasattr(type(value), "addressable_shards"):  # a jax.Array (backend="jax"): left on its devices
        return Aval(tuple(value.shape), np.dtype(value.dtype))
    if isinstance(value, (np.ndarray, np.generic, bool, int, float, complex)):
        array = np.asarray(value)
        if array.dtype in SHORT_NAMES:
            return Aval(array.shape, np.float64 if isinstance(value, float) else array.dtype)
        raise ArgumentError(
            f"{_argument_name(in_tree, index)} of '{name_of(fn)}' is an array of dtype {array.dtype}, which "
            "adarray does not support; convert it to a numeric dtype (floats are differentiated)"
        )
    raise ArgumentError(
        f"{_argument_name(in_tree, index)} of '{name_of(fn)}' is a {type(value).__name__}, not an array; pass it as "
        "a static argument (static_argnums, static_argnames, or a keyword argument) or close over it"
    )


def stage(fn, kind, args, kwargs, build, *, static_argnums=(), static_argnames=(), guarded=False,
          every_call=False, python_values=()):
    """Trace fn at the call's signature and build (with `build`) a staged program, cached.

    `build(program, out_tree, closure, call)` turns the traced program into a `Staged`. With
    `guarded`, the trace knows the call's concrete values, so Python control flow on traced values
    works. Returns (staged, call).

    Two caching rules:
      * `every_call` (grad, vjp, jvp, vmap, the Jacobians, Taylor mode, make_ir): fn is traced at every
        call, so closures, globals and random draws are read as they are now (as in JAX without jit);
        the transformed program of an earlier call is reused when the traced program is the same,
        constants included (core/fingerprint.py).
      * otherwise (jit): fn is traced once per signature and static values (and, with guards, per
        path), and the values it closes over are those of the first call, as in jax.jit.
    """
    call = _Call(fn, args, kwargs, static_argnums, static_argnames, python_values)
    if every_call:
        return _stage_this_call(fn, kind, call, build, guarded), call
    key = (kind, guarded, call.in_tree, tuple(call.avals), call.static_key)
    try:
        cache = _CACHES.setdefault(fn, {})
    except TypeError:  # not weak-referenceable: no caching
        cache = {}
    try:
        entries = cache.setdefault(key, [])
    except TypeError:
        raise ArgumentError(f"the pytree structure of the arguments of '{name_of(fn)}' is not hashable (the aux "
                            "data of a registered node type must be hashable)") from None
    for staged in entries:
        if staged.guards is None:
            return staged, call
        if staged.guards.hold(call.leaves):
            if any(isinstance(leaf, Tracer) for leaf in call.leaves):
                staged.guards.replay(call.leaves)
            return staged, call
    program, out_tree, closure, record = trace_guarded(call.flat_fn, call.avals, call.leaves if guarded else None,
                                                       name_of(fn))
    staged = _build(fn, kind, build, program, out_tree, closure, call)
    if record.guards is not None:
        staged.guards = _Guards(record.guards, record.checks)
        _replay_outer_guards(staged.guards, call, closure)
    if not closure and not record.depends_on_outer:
        entries.append(staged)
        if len(entries) > MAX_PATHS:
            del entries[0]
    return staged, call


def _build(fn, kind, build, program, out_tree, closure, call):
    staged = build(program, out_tree, closure, call)
    staged.name = f"{kind[0]}({name_of(fn)})"
    if hasattr(staged, "later"):
        staged.later.name = f"{kind[0]}({name_of(fn)}) backward"
    return staged


def _replay_outer_guards(guards, call, closure) -> None:
    """Called on traced values, fn's Python control flow read values of the enclosing trace: record
    those guards there too (the enclosing program is valid only where they hold)."""
    inputs = list(call.leaves) + list(closure)
    if any(isinstance(value, Tracer) for value in inputs):
        guards.replay(inputs)


# The transformed programs of the un-jitted transformations, by (kind, structure, traced program's
# fingerprint); the least recently used goes first.
_PROGRAMS: OrderedDict = OrderedDict()
MAX_PROGRAMS = 512


def _stage_this_call(fn, kind, call, build, guarded):
    program, out_tree, closure, record = trace_guarded(call.flat_fn, call.avals, call.leaves if guarded else None,
                                                       name_of(fn))
    if record.guards is not None:
        _replay_outer_guards(_Guards(record.guards, record.checks), call, closure)
    program, constants = _hoist_constants(program)
    closure = list(closure) + constants
    try:
        key = (kind, call.in_tree, out_tree, config.key(), fingerprint(program))
        staged = _PROGRAMS.get(key)
    except TypeError:
        raise ArgumentError(f"the pytree structure of the arguments of '{name_of(fn)}' is not hashable (the aux "
                            "data of a registered node type must be hashable)") from None
    if staged is None:
        staged = _build(fn, kind, build, program, out_tree, closure, call)
        # Cached without this call's closed-over values: the cache must not keep a caller's data alive.
        _PROGRAMS[key] = staged.with_closure(())
        if len(_PROGRAMS) > MAX_PROGRAMS:
            _PROGRAMS.popitem(last=False)
    else:
        _PROGRAMS.move_to_end(key)
    return staged.with_closure(closure)


def clear_caches() -> None:
    """Forget every staged program (jit's and the transformations'), as jax.clear_caches: the next calls trace,
    transform and compile again (to free memory; a changed setting needs none: settings are part of the key)."""
    _PROGRAMS.clear()
    _CACHES.clear()


def _hoist_constants(program: Program) -> tuple[Program, list]:
    """Large non-uniform constants of `program` (data the function closes over) as extra inputs, with
    their values: the cached program then serves every call whatever those values are, and the
    fingerprint need not read them."""
    found: dict[int, Var] = {}
    constants = []
    for eqn in program.eqns:
        for atom in eqn.inputs:
            if isinstance(atom, Literal) and atom.aval.size > CONSTANT_LIMIT and id(atom) not in found \
                    and atom.uniform is None:
                found[id(atom)] = Var(atom.aval)
                constants.append(atom.value)
    if not found:
        return program, []
    eqns = tuple(Eqn(eqn.prim, tuple(found.get(id(a), a) for a in eqn.inputs), eqn.params, eqn.outputs)
                 if any(id(a) in found for a in eqn.inputs) else eqn for eqn in program.eqns)
    outputs = tuple(found.get(id(a), a) for a in program.outputs)
    return Program(program.inputs + tuple(found.values()), eqns, outputs), constants
