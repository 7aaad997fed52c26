"""The user-facing transformations: grad, value_and_grad, vjp, jvp, jit, make_ir.

Each call flattens its arguments (pytrees of tuples, lists, dicts and None),
traces the function once per input signature into a Program, transforms and
simplifies it, and caches the compiled result per (function, signature, static
arguments); later calls only execute. Called on traced values (inside another
transformation), the cached program is inlined instead, so transformations
compose to any order: grad(grad(grad(f))).
"""
from __future__ import annotations

import functools
import operator
import weakref

import numpy as np

from .backends.numpy_backend import compile_program
from .core.errors import ArgumentError, NonDifferentiableError
from .core.ir import Program
from .core.pytree import flatten, unflatten
from .core.types import Aval, is_float
from .passes import simplify
from .tracing import Tracer, eval_program, trace_program
from .transforms.jvp import jvp_program
from .transforms.partial_eval import split_program
from .transforms.vjp import vjp_program

_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Staged:
    """A traced, transformed, simplified and compiled program with its pytree metadata."""

    def __init__(self, program: Program, out_tree, closure):
        self.program = simplify(program)
        self.out_tree = out_tree
        self.closure = closure
        self._compiled = None

    def __call__(self, leaves, extra=()):
        """Run on the argument leaves (then the closure, then `extra` inputs)."""
        return self.run(list(leaves) + list(self.closure) + list(extra))

    def run(self, args):
        if any(isinstance(a, Tracer) for a in args):
            return eval_program(self.program, args)  # inside another trace: inline
        if self._compiled is None:
            self._compiled = compile_program(self.program)
        return self._compiled(*[np.asarray(a) for a in args])


def _name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _aval(value, where: str) -> Aval:
    if isinstance(value, Tracer):
        return value.aval
    if isinstance(value, (np.ndarray, np.generic, bool, int, float)):
        array = np.asarray(value)
        return Aval(array.shape, np.float64 if isinstance(value, float) else array.dtype)
    raise ArgumentError(
        f"{where} is a {type(value).__name__}, not an array; pass it as a static argument "
        "(static_argnums) or close over it"
    )


def _is_single(argnums) -> bool:
    """argnums=1 gives one result; argnums=(1,) or [0, 1] a tuple of them."""
    return not isinstance(argnums, (tuple, list))


def _normalize_argnums(argnums, num_args: int, fn, what: str = "argnums") -> tuple[int, ...]:
    """argnums (an int or a tuple of ints, negative from the end) as indices in range.

    For derivatives (`what` = "argnums") each argument may appear once: JAX rejects repeats too
    (with a TypeError from deep inside), and a repeat would ask for one gradient twice.
    """
    try:
        nums = (operator.index(argnums),) if _is_single(argnums) else tuple(operator.index(n) for n in argnums)
    except TypeError:
        raise ArgumentError(f"{what} of '{_name(fn)}' must be an int or a tuple of ints, got {argnums!r}") from None
    for n in nums:
        if not -num_args <= n < num_args:
            raise ArgumentError(
                f"{what} {argnums!r} is out of range for '{_name(fn)}' called with {num_args} "
                "positional arguments"
            )
    normalized = tuple(n % num_args for n in nums)
    if what == "argnums" and len(set(normalized)) != len(normalized):
        raise ArgumentError(
            f"argnums {argnums!r} of '{_name(fn)}' name the same argument more than once; "
            "list each argument once"
        )
    return normalized


def _stage(fn, kind, args, static_argnums, build):
    """Trace `fn` at `args`' signature and build (with `build`) a staged program, cached."""
    static = set(_normalize_argnums(static_argnums, len(args), fn, "static_argnums")) if static_argnums else set()
    dynamic = [a for i, a in enumerate(args) if i not in static]
    leaves, in_tree = flatten(dynamic)
    avals = [_aval(leaf, f"an argument of '{_name(fn)}'") for leaf in leaves]
    static_values = tuple((i, args[i]) for i in sorted(static))
    key = (kind, in_tree, tuple(avals), static_values)
    try:
        cache = _CACHES.setdefault(fn, {})
    except TypeError:  # not weak-referenceable: no caching
        cache = {}
    try:
        hit = cache.get(key)
    except TypeError as error:
        raise ArgumentError(f"static arguments of '{_name(fn)}' must be hashable: {error}") from None
    if hit is not None:
        return hit, leaves

    def flat_fn(*flat):
        rebuilt = iter(unflatten(in_tree, flat))
        full = [args[i] if i in static else next(rebuilt) for i in range(len(args))]
        return fn(*full)

    flat_fn.__name__ = _name(fn)
    program, out_tree, closure = trace_program(flat_fn, avals, _name(fn))
    staged = build(program, out_tree, closure, in_tree, len(leaves))
    if not staged.closure:
        cache[key] = staged
    return staged, leaves


def _leaf_ranges(in_tree):
    """For each positional argument, the range of its leaves in the flat list."""
    ranges, start = [], 0
    for child in in_tree.children:
        ranges.append(range(start, start + child.num_leaves))
        start += child.num_leaves
    return ranges


def jit(fn=None, *, static_argnums=()):
    """Stage `fn` once per input signature, then only execute.

    >>> fast = jit(lambda x: anp.sin(x) * x)  # doctest: +SKIP
    """
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums)

    def build(program, out_tree, closure, in_tree, num_leaves):
        return _Staged(program, out_tree, closure)

    @functools.wraps(fn)
    def jitted(*args):
        staged, leaves = _stage(fn, ("jit",), args, static_argnums, build)
        return unflatten(staged.out_tree, staged(leaves))

    return jitted


def _wrt(argnums, in_tree, num_leaves):
    """One flag per argument leaf: is it differentiated?"""
    ranges = _leaf_ranges(in_tree)
    wrt = [False] * num_leaves
    for n in argnums:
        for i in ranges[n]:
            wrt[i] = True
    return wrt


def value_and_grad(fn, argnums=0, has_aux=False):
    """Return a function computing (fn(*args), gradient w.r.t. args[argnums]).

    fn must return a scalar (or (scalar, aux) with has_aux=True). The gradient
    has the pytree structure of the differentiated arguments.

    >>> value_and_grad(lambda x: anp.sum(x ** 2))(np.ones(3))  # doctest: +SKIP
    (3.0, array([2., 2., 2.]))
    """
    return _gradient_function(fn, argnums, has_aux, with_value=True)


def grad(fn, argnums=0, has_aux=False):
    """The gradient of a scalar function: grad(f)(x) has the structure of x.

    >>> grad(lambda x: anp.sum(x * x))(np.array([1.0, 2.0]))  # doctest: +SKIP
    array([2., 4.])
    """
    return _gradient_function(fn, argnums, has_aux, with_value=False)


def _gradient_function(fn, argnums, has_aux, with_value):
    @functools.wraps(fn)
    def gradient(*args):
        nums = _normalize_argnums(argnums, len(args), fn)

        def build(program, out_tree, closure, in_tree, num_leaves):
            wrt = _wrt(nums, in_tree, num_leaves)
            _check_differentiable(fn, args, nums, program, wrt)
            value_leaves = _check_scalar_output(fn, program, out_tree, has_aux)
            seeds = [np.ones((), a.dtype) if i == 0 else None for i, a in enumerate(program.out_avals)]
            joint = vjp_program(program, wrt + [False] * len(closure), seeds)
            n_out = len(program.outputs)
            keep = ([0] if with_value else []) + list(range(1, value_leaves)) + list(
                range(n_out, len(joint.outputs))
            )
            pruned = Program(joint.inputs, joint.eqns, tuple(joint.outputs[i] for i in keep))
            return _Staged(pruned, out_tree, closure)

        staged, leaves = _stage(fn, ("grad", nums, has_aux, with_value), args, (), build)
        flat = staged(leaves)
        n_value = int(with_value)
        n_aux = staged.out_tree.num_leaves - 1 if has_aux else 0
        aux = unflatten(staged.out_tree.children[1], flat[n_value: n_value + n_aux]) if has_aux else None
        grads = _unflatten_grads(args, nums, flat[n_value + n_aux:], argnums)
        if with_value:
            return ((flat[0], aux) if has_aux else flat[0]), grads
        return (grads, aux) if has_aux else grads

    return gradient


def _unflatten_grads(args, nums, flat, argnums):
    """Per-argument results from `flat`, which holds one entry per leaf of the differentiated
    arguments in argument order (the order of the program's inputs), returned in argnums order:
    argnums=(1, 0) gives (d/d args[1], d/d args[0])."""
    per_argument, start = {}, 0
    for n in sorted(nums):
        leaves, tree = flatten(args[n])
        per_argument[n] = unflatten(tree, list(flat[start:start + len(leaves)]))
        start += len(leaves)
    grads = [per_argument[n] for n in nums]
    return grads[0] if _is_single(argnums) else tuple(grads)


def _check_differentiable(fn, args, nums, program, wrt):
    for var, flag in zip(program.inputs, wrt):
        if flag and not is_float(var.aval.dtype):
            raise NonDifferentiableError(
                f"'{_name(fn)}' is differentiated with respect to an input of type {var.aval} "
                f"(argnums={nums}); only floating-point inputs have derivatives. Convert it with "
                ".astype(float) or leave it out of argnums"
            )


def _check_scalar_output(fn, program, out_tree, has_aux) -> int:
    """Validate the output structure; return how many leaves the value part has (1)."""
    if has_aux:
        if out_tree.kind not in ("tuple", "list") or len(out_tree.children) != 2:
            raise ArgumentError(f"'{_name(fn)}' was given has_aux=True but does not return a pair (value, aux)")
        value_tree = out_tree.children[0]
    else:
        value_tree = out_tree
    if value_tree.kind != "leaf" or program.out_avals[0].shape != ():
        shape = program.out_avals[0].shape if value_tree.kind == "leaf" else value_tree
        raise ArgumentError(
            f"grad needs '{_name(fn)}' to return a scalar, but it returned {shape}; "
            "use vjp or jacrev for non-scalar outputs, or reduce it (e.g. anp.sum)"
        )
    if not is_float(program.out_avals[0].dtype):
        raise NonDifferentiableError(f"'{_name(fn)}' returns {program.out_avals[0]}, which has no gradient")
    return 1 + (out_tree.num_leaves - 1 if has_aux else 0)


def _split_staged(joint: Program, num_known: int, num_outputs: int, out_tree, closure) -> _Staged:
    """Stage `joint` (inputs: `num_known` primals, then the later inputs; outputs: `num_outputs`
    primal outputs, then derivatives) in two parts: what the primals give, run once now, and the
    rest, run on demand with the later inputs (cotangents for vjp, tangents for linearize).

    Derivative outputs that do not depend on the later inputs (the zero cotangent of an unused
    input, the zero tangent of a constant output) land in the first part; `_run_split` puts them
    back in place, so the second part always returns every derivative output.
    """
    known, later, known_outputs = split_program(simplify(joint), num_known)
    if not all(known_outputs[:num_outputs]):
        raise AssertionError("a primal output depends on a derivative input")  # invariant of jvp/vjp
    staged = _Staged(known, out_tree, closure)
    staged.later = _Staged(later, out_tree, [])
    staged.num_outputs = num_outputs
    staged.later_known = tuple(known_outputs[num_outputs:])
    return staged


def _run_split(staged: _Staged, leaves):
    """Run the first part of a `_split_staged` program: (primal outputs, function of the later inputs)."""
    forward = staged(leaves)
    n, num_known = staged.num_outputs, staged.num_outputs + sum(staged.later_known)
    outputs, known, residuals = forward[:n], forward[n:num_known], forward[num_known:]

    def later(inputs):
        computed = iter(staged.later.run(list(residuals) + list(inputs)))
        stored = iter(known)
        return [next(stored) if is_known else next(computed) for is_known in staged.later_known]

    return outputs, later


def vjp(fn, *primals, has_aux=False):
    """Run fn forward once and return (outputs, pullback); pullback(cotangents) gives one
    cotangent per primal (zeros for integer leaves).

    >>> out, pullback = vjp(lambda x: anp.sin(x), np.ones(3))  # doctest: +SKIP
    >>> (dx,) = pullback(np.ones(3))  # doctest: +SKIP
    """
    def build(program, out_tree, closure, in_tree, num_leaves):
        wrt = [is_float(v.aval.dtype) for v in program.inputs[:num_leaves]] + [False] * len(closure)
        staged = _split_staged(vjp_program(program, wrt), len(program.inputs), len(program.outputs), out_tree,
                               closure)
        staged.out_avals = program.out_avals
        return staged

    staged, leaves = _stage(fn, ("vjp",), primals, (), build)
    outputs, backward = _run_split(staged, leaves)
    value_tree = staged.out_tree.children[0] if has_aux else staged.out_tree
    n_value = value_tree.num_leaves
    if has_aux and (staged.out_tree.kind not in ("tuple", "list") or len(staged.out_tree.children) != 2):
        raise ArgumentError(f"'{_name(fn)}' was given has_aux=True but does not return a pair (value, aux)")

    def pullback(cotangents):
        ct_leaves, ct_tree = flatten(cotangents)
        if ct_tree != value_tree:
            raise ArgumentError(
                f"pullback of '{_name(fn)}' expects cotangents structured like {value_tree}, got {ct_tree}"
            )
        for ct, aval in zip(ct_leaves, staged.out_avals):
            if tuple(np.shape(ct)) != aval.shape:
                raise ArgumentError(
                    f"pullback of '{_name(fn)}': a cotangent of shape {np.shape(ct)} for an output {aval}"
                )
        aux_zeros = [np.zeros(a.shape, a.dtype) for a in staged.out_avals[n_value:]]
        # One cotangent per float leaf of the primals (in order); integer leaves get zeros.
        flat = iter(backward(list(ct_leaves) + aux_zeros))
        results = []
        for primal in primals:
            primal_leaves, tree = flatten(primal)
            results.append(unflatten(tree, [
                next(flat) if is_float(_aval(leaf, "a primal").dtype) else np.zeros_like(leaf)
                for leaf in primal_leaves
            ]))
        return tuple(results)

    value = unflatten(value_tree, outputs[:n_value])
    if has_aux:
        return value, pullback, unflatten(staged.out_tree.children[1], outputs[n_value:])
    return value, pullback


def jvp(fn, primals, tangents):
    """Forward mode: (fn(*primals), J @ tangents).

    >>> jvp(anp.sin, (np.zeros(2),), (np.ones(2),))  # doctest: +SKIP
    (array([0., 0.]), array([1., 1.]))
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if flatten(primals)[1] != flatten(tangents)[1]:
        raise ArgumentError(f"jvp of '{_name(fn)}': tangents must have the structure of the primals")

    def build(program, out_tree, closure, in_tree, num_leaves):
        wrt = [is_float(v.aval.dtype) for v in program.inputs[:num_leaves]]
        staged = _Staged(jvp_program(program, wrt + [False] * len(closure)), out_tree, closure)
        staged.wrt = wrt
        return staged

    staged, leaves = _stage(fn, ("jvp",), primals, (), build)
    tangent_leaves = flatten(tangents)[0]
    for primal, tangent in zip(leaves, tangent_leaves):
        if tuple(np.shape(primal)) != tuple(np.shape(tangent)):
            raise ArgumentError(
                f"jvp of '{_name(fn)}': a tangent of shape {np.shape(tangent)} for a primal of shape "
                f"{np.shape(primal)}"
            )
    flat = staged(leaves, [t for t, w in zip(tangent_leaves, staged.wrt) if w])
    n = staged.out_tree.num_leaves
    return unflatten(staged.out_tree, flat[:n]), unflatten(staged.out_tree, flat[n:])


def make_ir(fn, static_argnums=()):
    """Return a function that traces fn(*args) and returns its simplified Program (prints as text).

    >>> print(make_ir(grad(lambda x: anp.sum(x * x)))(np.ones(3)))  # doctest: +SKIP
    """
    @functools.wraps(fn)
    def make(*args):
        def build(program, out_tree, closure, in_tree, num_leaves):
            return _Staged(program, out_tree, closure)

        staged, _ = _stage(fn, ("make_ir",), args, static_argnums, build)
        return staged.program

    return make

