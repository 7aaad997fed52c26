"""The user-facing transformations: grad, value_and_grad, vjp, jvp, jit, make_ir.

Each call splits its arguments into traced leaves (pytrees of arrays) and static values,
traces the function once per input signature into a Program, transforms and simplifies it, and
caches the compiled result per (function, signature, static values); later calls only execute
(staging.py). The derivatives trace with the call's concrete values, so Python control flow on
traced values works there, one trace per path (tracing/concrete.py). Called on traced values
(inside another transformation), the cached program is inlined instead, so transformations
compose to any order: grad(grad(grad(f))).
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.errors import ArgumentError, NonDifferentiableError
from ..core.ir import Program
from ..core.pytree import flatten, unflatten
from ..core.types import is_complex, is_float
from ..passes import simplify
from ..tracing import Tracer
from ..transforms.jvp import jvp_program
from ..transforms.partial_eval import split_program
from ..transforms.vjp import vjp_program
from .staging import (
    Staged,
    check_static_arguments,
    is_single,
    like_primals,
    name_of,
    normalize_argnums,
    program_compiler,
    stage,
    static_parts,
)
from .xla import jit_on

_name, _is_single, _normalize_argnums = name_of, is_single, normalize_argnums


def differentiated_leaves(argnums, call):
    """One flag per argument leaf: is it differentiated?"""
    return [position in argnums for position in call.positions]


def outside(argnums, args) -> frozenset:
    """The positions of the arguments that are not differentiated: their Python integers stay Python values."""
    return frozenset(range(len(args))) - frozenset(argnums)


def derivative_argnums(fn, argnums, args, kwargs, static_argnums, static_argnames):
    """argnums normalized, refusing an argument that is also static."""
    nums = normalize_argnums(argnums, len(args), fn)
    if not static_argnums and not static_argnames:
        return nums
    static, _ = static_parts(fn, len(args), kwargs, static_argnums, static_argnames)
    both = sorted(set(nums) & static)
    if both:
        raise ArgumentError(f"argument {both[0]} of '{name_of(fn)}' is both differentiated (argnums) and static "
                            "(static_argnums / static_argnames)")
    return nums


def jit(fn=None, *, static_argnums=(), static_argnames=(), guards=False, backend=None, **compile_options):
    """Stage `fn` once per input signature (and static values), then only execute.

    With guards=True the trace knows the arguments' values, so Python control flow on traced
    values works as under grad: one program per path taken, chosen by its guards on each call.
    backend: 'numpy', 'numba' (compiled fused loops) or 'jax' (XLA: compiled.py; `in_shardings` /
    `out_shardings` take `jax.sharding` objects, results are `jax.Array`s); by default the one
    `set_backend` chose.

    >>> fast = jit(lambda x: anp.sin(x) * x, backend="numba")  # doctest: +SKIP
    """
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames, guards=guards,
                                 backend=backend, **compile_options)
    check_static_arguments(fn, static_argnums, static_argnames)
    if backend == "jax":
        return jit_on(backend, fn, static_argnums=static_argnums, static_argnames=static_argnames, **compile_options)
    if compile_options:
        raise ArgumentError(f"jit: {', '.join(sorted(compile_options))} need a compiled backend (backend='jax')")
    if backend is not None:
        program_compiler(backend)  # an unknown or uninstalled backend fails here

    def build(program, out_tree, closure, call):
        return Staged(program, out_tree, closure)

    @functools.wraps(fn)
    def jitted(*args, **kwargs):
        staged, call = stage(fn, ("jit",), args, kwargs, build, static_argnums=static_argnums,
                             static_argnames=static_argnames, guarded=guards)
        return unflatten(staged.out_tree, staged(call.leaves, backend=backend))

    return jitted


def value_and_grad(fn, argnums=0, has_aux=False, *, holomorphic=False, static_argnums=(), static_argnames=()):
    """Return a function computing (fn(*args, **kwargs), gradient w.r.t. args[argnums]).

    fn must return a real scalar or an array of one element (or (value, aux) with has_aux=True); with
    holomorphic=True, a complex one of complex arguments (see `grad`). The gradient has the pytree
    structure of the differentiated arguments. Keyword arguments pass through to fn and are not
    differentiated.

    >>> value_and_grad(lambda x: anp.sum(x ** 2))(np.ones(3))  # doctest: +SKIP
    (3.0, array([2., 2., 2.]))
    """
    return _gradient_function(fn, argnums, has_aux, True, static_argnums, static_argnames, holomorphic)


def grad(fn, argnums=0, has_aux=False, *, holomorphic=False, static_argnums=(), static_argnames=()):
    """The gradient of a scalar function: grad(f)(x) has the structure of x.

    Python control flow on traced values (`if x > 0:`, `while abs(term) > tol:`) works: each path
    taken is traced once and reused while its branch decisions hold.

    Complex arguments follow JAX: for a real f of complex z = x + iy, grad(f)(z) = df/dx - i df/dy
    (the conjugate of the steepest-ascent direction: step along its conjugate). A complex-valued f
    needs holomorphic=True (complex arguments), and then grad(f)(z) = f'(z).

    >>> grad(lambda x: anp.sum(x * x))(np.array([1.0, 2.0]))  # doctest: +SKIP
    array([2., 4.])
    """
    return _gradient_function(fn, argnums, has_aux, False, static_argnums, static_argnames, holomorphic)


def _gradient_function(fn, argnums, has_aux, with_value, static_argnums, static_argnames, holomorphic=False):
    check_static_arguments(fn, static_argnums, static_argnames)

    @functools.wraps(fn)
    def gradient(*args, **kwargs):
        nums = derivative_argnums(fn, argnums, args, kwargs, static_argnums, static_argnames)

        def build(program, out_tree, closure, call):
            wrt = differentiated_leaves(nums, call)
            check_differentiable("grad", fn, nums, program, wrt)
            value_leaves = _check_scalar_output(fn, program, out_tree, has_aux, holomorphic)
            if holomorphic:
                check_holomorphic_inputs("grad", fn, program, wrt)
            seeds = [np.ones(a.shape, a.dtype) if i == 0 else None for i, a in enumerate(program.out_avals)]
            joint = vjp_program(program, wrt + [False] * len(closure), seeds)
            n_out = len(program.outputs)
            keep = ([0] if with_value else []) + list(range(1, value_leaves)) + list(
                range(n_out, len(joint.outputs))
            )
            pruned = Program(joint.inputs, joint.eqns, tuple(joint.outputs[i] for i in keep))
            return Staged(pruned, out_tree, closure)

        staged, call = stage(fn, ("grad", nums, has_aux, with_value, holomorphic), args, kwargs, build,
                             static_argnums=static_argnums, static_argnames=static_argnames, guarded=True,
                             every_call=True, python_values=outside(nums, args))
        flat = staged(call.leaves)
        n_value = int(with_value)
        n_aux = staged.out_tree.num_leaves - 1 if has_aux else 0
        aux = unflatten(staged.out_tree.children[1], flat[n_value: n_value + n_aux]) if has_aux else None
        grads = unflatten_grads(args, nums, flat[n_value + n_aux:], argnums)
        if with_value:
            return ((flat[0], aux) if has_aux else flat[0]), grads
        return (grads, aux) if has_aux else grads

    return gradient


def unflatten_grads(args, nums, flat, argnums):
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


def check_differentiable(what: str, fn, nums, program, wrt) -> None:
    """Every differentiated input is a float (or complex) array: a clear error naming `fn` otherwise."""
    for var, flag in zip(program.inputs, wrt):
        if flag and not is_float(var.aval.dtype):
            raise NonDifferentiableError(
                f"{what}: '{_name(fn)}' is differentiated with respect to an input of type {var.aval} "
                f"(argnums={nums}); only floating-point inputs have derivatives. Convert it with "
                ".astype(float) or leave it out of argnums"
            )


def _is_pair(tree) -> bool:
    return tree.kind in ("tuple", "list", "namedtuple") and len(tree.children) == 2


def check_holomorphic_inputs(what: str, fn, program, wrt) -> None:
    """holomorphic=True differentiates complex arguments only (as JAX)."""
    for var, flag in zip(program.inputs, wrt):
        if flag and not is_complex(var.aval.dtype):
            raise NonDifferentiableError(f"{what} of '{_name(fn)}' with holomorphic=True needs complex arguments, got "
                                         f"{var.aval}; convert it with anp.asarray(x, complex)")


def _check_scalar_output(fn, program, out_tree, has_aux, holomorphic=False) -> int:
    """Validate the output structure; return how many leaves the value part has (1).

    The value may have any shape with exactly one element ((), (1,), (1, 1)), as in autograd and
    PyTorch; its gradient is seeded with ones of that shape."""
    if has_aux:
        if not _is_pair(out_tree):
            raise ArgumentError(f"'{_name(fn)}' was given has_aux=True but does not return a pair (value, aux)")
        value_tree = out_tree.children[0]
    else:
        value_tree = out_tree
    if value_tree.kind != "leaf" or program.out_avals[0].size != 1:
        shape = program.out_avals[0].shape if value_tree.kind == "leaf" else value_tree
        raise ArgumentError(
            f"grad needs '{_name(fn)}' to return a scalar (or an array of one element), but it returned {shape}; "
            "use vjp or jacrev for non-scalar outputs, or reduce it (e.g. anp.sum)"
        )
    out = program.out_avals[0]
    if not is_float(out.dtype):
        raise NonDifferentiableError(f"'{_name(fn)}' returns {out}, which has no gradient")
    if holomorphic and not is_complex(out.dtype):
        raise NonDifferentiableError(f"grad of '{_name(fn)}' with holomorphic=True needs a complex output, got {out}")
    if is_complex(out.dtype) and not holomorphic:
        raise NonDifferentiableError(
            f"grad of '{_name(fn)}': its output {out} is complex; grad needs a real output (e.g. anp.abs(f)**2 or "
            "anp.real(f)), or holomorphic=True for the complex derivative of a holomorphic function; for "
            "anything else use vjp"
        )
    return 1 + (out_tree.num_leaves - 1 if has_aux else 0)


def split_staged(joint: Program, num_known: int, num_outputs: int, out_tree, closure) -> Staged:
    """Stage `joint` (inputs: `num_known` primals, then the later inputs; outputs: `num_outputs`
    primal outputs, then derivatives) in two parts: what the primals give, run once now, and the
    rest, run on demand with the later inputs (cotangents for vjp, tangents for linearize).

    Derivative outputs that do not depend on the later inputs (the zero cotangent of an unused
    input, the zero tangent of a constant output) land in the first part; `run_split` puts them
    back in place, so the second part always returns every derivative output.
    """
    known, later, known_outputs = split_program(simplify(joint), num_known)
    if not all(known_outputs[:num_outputs]):
        raise AssertionError("a primal output depends on a derivative input")  # invariant of jvp/vjp
    staged = Staged(known, out_tree, closure)
    staged.later = Staged(later, out_tree, [])
    staged.num_outputs = num_outputs
    staged.later_known = tuple(known_outputs[num_outputs:])
    return staged


def run_split(staged: Staged, leaves):
    """Run the first part of a `split_staged` program: (primal outputs, function of the later inputs)."""
    forward = staged(leaves)
    n, num_known = staged.num_outputs, staged.num_outputs + sum(staged.later_known)
    outputs, known, residuals = forward[:n], forward[n:num_known], forward[num_known:]

    def later(inputs):
        computed = iter(staged.later.run(list(residuals) + list(inputs)))
        stored = iter(known)
        return [next(stored) if is_known else next(computed) for is_known in staged.later_known]

    return outputs, later


def positional_wrt(program, closure, call):
    """Differentiate every float leaf of the positional arguments (not keywords, not the closure)."""
    n = call.num_positional_leaves
    return [is_float(v.aval.dtype) and i < n for i, v in enumerate(program.inputs[:len(call.leaves)])] + [
        False] * len(closure)


def _leaf_is_float(leaf) -> bool:
    return is_float(leaf.dtype if hasattr(leaf, "aval") else np.result_type(leaf))


def vjp(fn, *primals, has_aux=False, **kwargs):
    """Run fn forward once and return (outputs, pullback); pullback(cotangents) gives one
    cotangent per primal (zeros for integer leaves). Keyword arguments pass through to fn and are
    not differentiated.

    >>> out, pullback = vjp(lambda x: anp.sin(x), np.ones(3))  # doctest: +SKIP
    >>> (dx,) = pullback(np.ones(3))  # doctest: +SKIP
    """
    def build(program, out_tree, closure, call):
        wrt = positional_wrt(program, closure, call)
        staged = split_staged(vjp_program(program, wrt), len(program.inputs), len(program.outputs), out_tree,
                               closure)
        staged.out_avals = program.out_avals
        return staged

    staged, call = stage(fn, ("vjp",), primals, kwargs, build, guarded=True, every_call=True)
    outputs, backward = run_split(staged, call.leaves)
    if has_aux and not _is_pair(staged.out_tree):
        raise ArgumentError(f"'{_name(fn)}' was given has_aux=True but does not return a pair (value, aux)")
    value_tree = staged.out_tree.children[0] if has_aux else staged.out_tree
    n_value = value_tree.num_leaves

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
                next(flat) if _leaf_is_float(leaf) else np.zeros(np.shape(leaf), np.result_type(leaf))
                for leaf in primal_leaves
            ]))
        return tuple(results)

    value = unflatten(value_tree, outputs[:n_value])
    if has_aux:
        return value, pullback, unflatten(staged.out_tree.children[1], outputs[n_value:])
    return value, pullback


def check_tuples(what: str, fn, primals, tangents) -> tuple[tuple, tuple]:
    """jvp and hvp take one tuple (or list) of primals and one of tangents, as in JAX."""
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, (tuple, list)):
            raise ArgumentError(
                f"{what} of '{_name(fn)}': {name} must be a tuple (or list) with one entry per argument of the "
                f"function, e.g. {what}(f, (x,), (t,)), got a {type(value).__name__}"
            )
    if len(primals) != len(tangents):
        raise ArgumentError(f"{what} of '{_name(fn)}': {len(primals)} primals but {len(tangents)} tangents")
    return tuple(primals), tuple(tangents)


def _dtype_of(value) -> np.dtype:
    return value.dtype if hasattr(value, "dtype") else np.result_type(value)


def check_tangent_dtypes(what: str, fn, primal_leaves, tangent_leaves) -> None:
    """A tangent of a floating-point primal has its dtype, as in JAX (a Python float fits any real one, a
    Python complex any complex one); an integer tangent is refused: it is a mistake, not a direction."""
    for primal, tangent in zip(primal_leaves, tangent_leaves):
        primal_dtype = _dtype_of(primal)
        if not is_float(primal_dtype):
            continue  # integer and boolean primals have no tangent; what is passed is ignored
        if not isinstance(tangent, np.generic) and (
                isinstance(tangent, float) or (isinstance(tangent, complex) and is_complex(primal_dtype))):
            continue
        tangent_dtype = _dtype_of(tangent)
        if tangent_dtype != primal_dtype:
            raise ArgumentError(
                f"{what} of '{_name(fn)}': a tangent of dtype {tangent_dtype} for a primal of dtype {primal_dtype}; "
                f"tangents must have their primal's dtype (e.g. np.asarray(t, {primal_dtype.name!r}))")


def jvp(fn, primals, tangents):
    """Forward mode: (fn(*primals), J @ tangents). primals and tangents are tuples, as in JAX (for
    keyword arguments, use functools.partial).

    >>> jvp(anp.sin, (np.zeros(2),), (np.ones(2),))  # doctest: +SKIP
    (array([0., 0.]), array([1., 1.]))
    """
    primals, tangents = check_tuples("jvp", fn, primals, tangents)
    tangent_leaves = like_primals("jvp", fn, primals, tangents)
    check_tangent_dtypes("jvp", fn, flatten(primals)[0], tangent_leaves)

    def build(program, out_tree, closure, call):
        wrt = [is_float(v.aval.dtype) for v in program.inputs[:len(call.leaves)]]
        staged = Staged(jvp_program(program, wrt + [False] * len(closure)), out_tree, closure)
        staged.wrt = wrt
        return staged

    staged, call = stage(fn, ("jvp",), primals, {}, build, guarded=True, every_call=True)
    flat = staged(call.leaves, [t if isinstance(t, Tracer) else np.asarray(t, aval.dtype)
                                for t, aval, w in zip(tangent_leaves, call.avals, staged.wrt) if w])
    n = staged.out_tree.num_leaves
    return unflatten(staged.out_tree, flat[:n]), unflatten(staged.out_tree, flat[n:])


def make_ir(fn, static_argnums=(), *, static_argnames=(), guards=False):
    """Return a function that traces fn(*args, **kwargs) and returns its simplified Program
    (prints as text). With guards=True, Python control flow on traced values follows the path
    the given arguments take.

    >>> print(make_ir(grad(lambda x: anp.sum(x * x)))(np.ones(3)))  # doctest: +SKIP
    """
    @functools.wraps(fn)
    def make(*args, **kwargs):
        def build(program, out_tree, closure, call):
            return Staged(program, out_tree, closure)

        staged, _ = stage(fn, ("make_ir",), args, kwargs, build, static_argnums=static_argnums,
                          static_argnames=static_argnames, guarded=guards, every_call=True)
        return staged.program

    return make
