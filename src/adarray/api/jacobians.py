"""Jacobians and curvature: jacfwd, jacrev, hessian, hvp, linearize.

jacfwd batches the jvp program over the basis of the input space and jacrev
batches the vjp program over the basis of the output space (one batched
program each, not a Python loop); the primal part is computed once. Pytrees in
and out give pytree Jacobians as in JAX: for every output leaf, the structure
of the differentiated arguments, each block of shape out.shape + in.shape.
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.errors import NonDifferentiableError
from ..core.ir import Program
from ..core.pytree import unflatten
from ..core.types import is_complex
from ..numpy import moveaxis, reshape
from ..passes.one_hot import identity_seed_program
from ..primitives.rules import broadcast_batch
from ..tracing import eval_program, trace_program
from ..transforms.jvp import jvp_program
from ..transforms.vjp import vjp_program
from ..transforms.vmap import vmap_program
from .grad import (
    check_differentiable,
    check_holomorphic_inputs,
    check_tuples,
    derivative_argnums,
    differentiated_leaves,
    grad,
    jvp,
    outside,
    positional_wrt,
    run_split,
    split_staged,
    unflatten_grads,
)
from .staging import Staged, check_static_arguments, like_primals, name_of, stage


def _basis(avals):
    """Identity rows split per leaf: one array (n, *leaf.shape) per aval, n = total size.

    Each piece has its leaf's dtype, as the seed it feeds (a float32 output of a float64
    function takes float32 cotangents).
    """
    total = sum(a.size for a in avals)
    identity = np.eye(total)
    pieces, start = [], 0
    for aval in avals:
        pieces.append(identity[:, start:start + aval.size].reshape((total,) + aval.shape).astype(aval.dtype))
        start += aval.size
    return pieces


# jacfwd keeps its identity seeds symbolic (passes/one_hot.py). False: the seeds are materialised and the
# jvp program batched by vmap, as before the optimisation (tests and benchmarks compare the two).
SYMBOLIC_SEEDS = True


def _jacobian_program(program: Program, wrt, mode: str, symbolic: bool | None = None) -> Program:
    """A program of the primals whose outputs are the batched derivative rows/columns."""
    n = len(program.inputs)
    wrt_avals = [v.aval for v, w in zip(program.inputs, wrt) if w]
    symbolic = SYMBOLIC_SEEDS if symbolic is None else symbolic
    if mode == "fwd" and wrt_avals and symbolic:
        # Forward mode keeps the identity seeds symbolic (passes/one_hot.py): no n x n tangent arrays.
        batched = identity_seed_program(jvp_program(program, wrt), n, wrt_avals)
        result, _, _ = trace_program(lambda *primals: eval_program(batched, list(primals))[len(program.outputs):],
                                     list(program.in_avals), "jacfwd")
        return result
    if mode == "fwd":
        derivative = jvp_program(program, wrt)
        seed_avals, n_out = wrt_avals, len(program.outputs)
    else:
        derivative = vjp_program(program, wrt)
        seed_avals, n_out = list(program.out_avals), len(program.outputs)
    seeds = _basis(seed_avals)
    size = seeds[0].shape[0] if seeds else 0
    batched, out_batched = vmap_program(derivative, [False] * n + [True] * len(seeds), size)

    def rows(*primals):
        # A derivative output that does not depend on the seeds (a block of a constant or linear
        # function, an unused input) comes out of vmap unbatched: give it its row axis here.
        outs = eval_program(batched, list(primals) + seeds)[n_out:]
        return [out if flag else broadcast_batch(out, size) for out, flag in zip(outs, out_batched[n_out:])]

    result, _, _ = trace_program(rows, list(program.in_avals), f"jac{mode}")
    return result


def _check_complex(fn, program, wrt, mode, holomorphic):
    """JAX's rules: jacfwd needs real arguments and jacrev real outputs, unless holomorphic=True, which
    needs complex arguments and outputs (then the Jacobian is f'(z))."""
    name = f"jac{mode}"
    if holomorphic:
        check_holomorphic_inputs(name, fn, program, wrt)
        for aval in program.out_avals:
            if not is_complex(aval.dtype):
                raise NonDifferentiableError(f"{name} of '{name_of(fn)}' with holomorphic=True needs complex outputs, "
                                             f"got {aval}")
        return
    avals = [v.aval for v, w in zip(program.inputs, wrt) if w] if mode == "fwd" else program.out_avals
    for aval in avals:
        if is_complex(aval.dtype):
            what, instead = ("arguments", "jvp or jacrev") if mode == "fwd" else ("outputs", "vjp or jacfwd")
            raise NonDifferentiableError(
                f"{name} of '{name_of(fn)}': it has complex {what} ({aval}); {name} needs real ones, or "
                f"holomorphic=True for a holomorphic function; for anything else use {instead}")


def _jacobian(fn, argnums, mode: str, static_argnums=(), static_argnames=(), holomorphic=False):
    check_static_arguments(fn, static_argnums, static_argnames)

    @functools.wraps(fn)
    def jacobian(*args, **kwargs):
        nums = derivative_argnums(fn, argnums, args, kwargs, static_argnums, static_argnames)

        def build(program, out_tree, closure, call):
            wrt = differentiated_leaves(nums, call)
            check_differentiable(f"jac{mode}", fn, nums, program, wrt)
            _check_complex(fn, program, wrt, mode, holomorphic)
            staged = Staged(_jacobian_program(program, wrt + [False] * len(closure), mode, symbolic), out_tree,
                             closure)
            staged.wrt_avals = [v.aval for v, w in zip(program.inputs, wrt) if w]
            staged.out_avals = program.out_avals
            return staged

        symbolic = SYMBOLIC_SEEDS
        staged, call = stage(fn, ("jac" + mode, nums, holomorphic, symbolic), args, kwargs, build,
                             static_argnums=static_argnums, static_argnames=static_argnames, guarded=True,
                             every_call=True, python_values=outside(nums, args))
        flat = staged(call.leaves)
        blocks = _arrange(flat, staged.wrt_avals, staged.out_avals, mode)
        per_output = [unflatten_grads(args, nums, row, argnums) for row in blocks]
        return unflatten(staged.out_tree, per_output)

    return jacobian


def _arrange(flat, in_avals, out_avals, mode):
    """blocks[i][j]: d out_i / d in_j with shape out_i.shape + in_j.shape."""
    blocks = [[None] * len(in_avals) for _ in out_avals]
    if mode == "fwd":  # flat[i]: (n_in_total, *out_i.shape), rows over the inputs
        for i, (value, out_aval) in enumerate(zip(flat, out_avals)):
            start = 0
            for j, in_aval in enumerate(in_avals):
                part = value[start:start + in_aval.size]
                part = moveaxis(reshape(part, in_aval.shape + out_aval.shape), tuple(range(in_aval.ndim)),
                                tuple(range(out_aval.ndim, out_aval.ndim + in_aval.ndim)))
                blocks[i][j] = part
                start += in_aval.size
    else:  # flat[j]: (n_out_total, *in_j.shape), rows over the outputs
        for j, (value, in_aval) in enumerate(zip(flat, in_avals)):
            start = 0
            for i, out_aval in enumerate(out_avals):
                blocks[i][j] = reshape(value[start:start + out_aval.size], out_aval.shape + in_aval.shape)
                start += out_aval.size
    return blocks


def jacfwd(fn, argnums=0, *, holomorphic=False, static_argnums=(), static_argnames=()):
    """Jacobian by forward mode (efficient for few inputs). Keyword arguments pass through to fn
    and are not differentiated. The arguments must be real (outputs may be complex); with
    holomorphic=True, arguments and outputs are complex and the Jacobian is f'(z), as in JAX.

    >>> jacfwd(lambda x: anp.sin(x))(np.zeros(3))  # doctest: +SKIP   (the 3x3 identity)
    """
    return _jacobian(fn, argnums, "fwd", static_argnums, static_argnames, holomorphic)


def jacrev(fn, argnums=0, *, holomorphic=False, static_argnums=(), static_argnames=()):
    """Jacobian by reverse mode (efficient for few outputs). The outputs must be real (arguments may
    be complex: each row is then a gradient, df/dx - i df/dy); with holomorphic=True, arguments and
    outputs are complex and the Jacobian is f'(z), as in JAX."""
    return _jacobian(fn, argnums, "rev", static_argnums, static_argnames, holomorphic)


def hessian(fn, argnums=0, *, holomorphic=False, static_argnums=(), static_argnames=()):
    """Matrix of second derivatives: forward over reverse, jacfwd(jacrev(fn))."""
    static = {"static_argnums": static_argnums, "static_argnames": static_argnames, "holomorphic": holomorphic}
    return jacfwd(jacrev(fn, argnums, **static), argnums, **static)


def hvp(fn, primals, tangents):
    """Hessian-vector product H(primals) @ tangents of a scalar function (forward over reverse).

    primals and tangents are tuples, one entry per argument, as for jvp. With one argument the
    result is H v (an array shaped like it); with several, a tuple with one block row per argument.

    >>> hvp(lambda x: anp.sum(x ** 3), (np.ones(2),), (np.ones(2),))  # doctest: +SKIP
    array([6., 6.])
    """
    primals, tangents = check_tuples("hvp", fn, primals, tangents)
    argnums = 0 if len(primals) == 1 else tuple(range(len(primals)))
    return jvp(grad(fn, argnums=argnums), primals, tangents)[1]


def linearize(fn, *primals, **kwargs):
    """(fn(*primals), f_jvp) where f_jvp(*tangents) reuses the primal computation. Keyword
    arguments pass through to fn and are not differentiated.

    >>> out, f_jvp = linearize(anp.sin, np.zeros(2)); f_jvp(np.ones(2))  # doctest: +SKIP
    """
    def build(program, out_tree, closure, call):
        wrt = positional_wrt(program, closure, call)
        joint = jvp_program(program, wrt)
        staged = split_staged(joint, len(program.inputs), len(program.outputs), out_tree, closure)
        staged.wrt = wrt[:len(call.leaves)]
        return staged

    staged, call = stage(fn, ("linearize",), primals, kwargs, build, guarded=True, every_call=True)
    outputs, tangents_of = run_split(staged, call.leaves)

    def f_jvp(*tangents):
        tangent_leaves = like_primals("linearize", fn, tuple(primals), tuple(tangents))
        return unflatten(staged.out_tree, tangents_of([t for t, w in zip(tangent_leaves, staged.wrt) if w]))

    return unflatten(staged.out_tree, outputs), f_jvp
