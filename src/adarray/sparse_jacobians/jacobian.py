"""Sparse Jacobians: the structural sparsity pattern, graph colouring, compressed batched passes.

    pattern = ad.jacobian_sparsity(f, x)          # scipy.sparse boolean CSR, shape (outputs, inputs)
    jac = ad.sparse_jacobian(f)                   # mode="auto" | "forward" | "reverse"
    J = jac(x)                                    # scipy.sparse.csr_matrix
    jac.num_passes(x)                             # batched passes per evaluation (the colours)

The pattern comes from index sets pushed through the traced program (transforms/sparsity.py): no
numerical probing. The columns (forward) or rows (reverse) are coloured so that no two of a colour
share a row (column) (colouring.py); one batched jvp (vjp) program then computes J S (S^T J) for all
colours at once, with the seed matrix S as an input, and the non-zeros are read back from it.
Pattern, colouring and compiled program are cached per input signature (and per value of the
arguments the pattern read: index arrays passed as arguments). Rows are the outputs' leaves,
flattened in order; columns the leaves of the differentiated arguments, in order.
"""
from __future__ import annotations

import functools
import hashlib

import numpy as np
import scipy.sparse as sp

from ..api.grad import derivative_argnums, differentiated_leaves, outside
from ..api.staging import Staged, name_of, stage
from ..core.errors import ArgumentError, NonDifferentiableError, ShapeError
from ..core.pytree import flatten, unflatten
from ..core.types import is_float
from ..primitives.rules import broadcast_batch
from ..tracing import Tracer, eval_program, trace_program
from ..transforms.jvp import jvp_program
from ..transforms.sparsity import jacobian_pattern
from ..transforms.vjp import vjp_program
from ..transforms.vmap import vmap_program
from . import colouring

MODES = ("auto", "forward", "reverse")


class _SparseStaged(Staged):
    """The traced program of one signature, with its patterns, colourings and compressed programs."""

    def __init__(self, program, out_tree, wrt):
        super().__init__(program, out_tree, [])
        self.wrt = wrt
        self.columns = sum(v.aval.size for v, w in zip(self.program.inputs, wrt) if w)
        self.rows = sum(a.size for a in self.program.out_avals)
        self.patterns = []      # (positions read, their digest, pattern)
        self.plans = {}         # (id of the pattern, mode, method) -> _Plan
        self.compressed = {}    # (mode, colours) -> Staged

    def pattern(self, leaves):
        for reads, digest, pattern in self.patterns:
            if _digest(reads, leaves) == digest:
                return pattern
        values = [None if w else np.asarray(leaf) for leaf, w in zip(leaves, self.wrt)]
        result = jacobian_pattern(self.program, self.wrt, values)
        pattern = result.matrix(self.program.out_avals, self.columns)
        pattern.sort_indices()
        self.patterns.append((result.reads, _digest(result.reads, leaves), pattern))
        return pattern


def _digest(positions, leaves):
    """A fingerprint of the values of the arguments at `positions` (what a pattern was read from)."""
    hasher = hashlib.blake2b(digest_size=16)
    for k in sorted(positions):
        array = np.ascontiguousarray(leaves[k])
        hasher.update(repr((k, array.shape, array.dtype.str)).encode())
        hasher.update(array.tobytes())
    return hasher.digest()


def _stage(fn, argnums, args, kwargs, what):
    nums = derivative_argnums(fn, argnums, args, kwargs, (), ())

    def build(program, out_tree, closure, call):
        wrt = differentiated_leaves(nums, call)
        for var, flag in zip(program.inputs, wrt):
            if flag and not is_float(var.aval.dtype):
                raise NonDifferentiableError(f"{what}: '{name_of(fn)}' has a {var.aval} input in argnums {nums}; "
                                             "only floating-point inputs have derivatives")
        return _SparseStaged(program, out_tree, wrt)

    for leaf in flatten((args, kwargs))[0]:
        if isinstance(leaf, Tracer):
            raise ArgumentError(f"{what} of '{name_of(fn)}' returns a SciPy matrix, so it cannot run inside another "
                                "transformation (it was called on traced values)")
    staged, call = stage(fn, ("sparse_jacobian", nums), args, kwargs, build, guarded=True, every_call=True,
                         python_values=outside(nums, args))
    return staged, call


def jacobian_sparsity(fn, *args, argnums=0, **kwargs):
    """The structural sparsity pattern of fn's Jacobian at these arguments' signature: a boolean
    `scipy.sparse.csr_matrix` with a row per output element and a column per element of the
    differentiated arguments (pytree leaves flattened in order). Entry (i, j) is set when output i
    may depend on input j for some values; it is found by propagating index sets through the traced
    program, never by evaluating derivatives. Integer arguments (index arrays) are read.

    >>> jacobian_sparsity(lambda x: x[1:] * x[:-1], np.ones(3)).toarray()  # doctest: +SKIP
    array([[ True,  True, False],
           [False,  True,  True]])
    """
    staged, call = _stage(fn, argnums, args, kwargs, "jacobian_sparsity")
    return staged.pattern(call.leaves).copy()


class _Plan:
    """How one pattern is evaluated: the mode, a colour per column (forward) or row (reverse), and the
    seeds and decompression index that follow from it."""

    def __init__(self, pattern, mode, colours):
        self.mode, self.colours = mode, np.asarray(colours, np.int64)
        self.num_colours = int(self.colours.max()) + 1 if self.colours.size else 0
        self.pattern = pattern
        rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
        # The compressed result C has a row per colour; entry k of the pattern's data is C[colour, position].
        if mode == "forward":
            self.take = (self.colours[pattern.indices], rows)
        else:
            self.take = (self.colours[rows], pattern.indices)

    def seeds(self, avals):
        """The seed matrix split per leaf: (colours, *leaf.shape), 1 where the element has the colour."""
        pieces, start = [], 0
        for aval in avals:
            seed = np.zeros((self.num_colours, aval.size), aval.dtype)
            if is_float(aval.dtype):  # integer outputs take no cotangent
                seed[self.colours[start:start + aval.size], np.arange(aval.size)] = 1
            pieces.append(seed.reshape((self.num_colours,) + aval.shape))
            start += aval.size
        return pieces


def _choose(pattern, mode, method):
    """The plan with the fewest passes for `mode` ("auto" compares both directions, colouring the second
    only when its lower bound could beat the first; ties go to forward mode)."""
    if mode == "forward":
        return _Plan(pattern, "forward", colouring.colour_columns(pattern, method))
    if mode == "reverse":
        return _Plan(pattern, "reverse", colouring.colour_rows(pattern, method))
    transposed = pattern.T.tocsr()
    bounds = {"forward": colouring.lower_bound(pattern), "reverse": colouring.lower_bound(transposed)}
    first = min(bounds, key=lambda m: (bounds[m], m != "forward"))
    second = "reverse" if first == "forward" else "forward"
    best = _choose(pattern, first, method)
    if bounds[second] < best.num_colours or (bounds[second] == best.num_colours and second == "forward"):
        other = _choose(pattern, second, method)
        if (other.num_colours, other.mode != "forward") < (best.num_colours, best.mode != "forward"):
            best = other
    return best


def _compressed_program(program, wrt, mode, size):
    """A program of (primals, seed leaves) returning (outputs, compressed derivative leaves): forward, the
    jvp batched over `size` tangents of the differentiated inputs; reverse, the vjp batched over
    `size` cotangents of the outputs."""
    n_in, n_out = len(program.inputs), len(program.outputs)
    if mode == "forward":
        derivative = jvp_program(program, wrt)
        seed_avals = [v.aval for v, w in zip(program.inputs, wrt) if w]
    else:
        derivative = vjp_program(program, wrt)
        seed_avals = list(program.out_avals)
    batched, out_batched = vmap_program(derivative, [False] * n_in + [True] * len(seed_avals), size)
    seed_avals = [a.update(shape=(size,) + a.shape) for a in seed_avals]

    def run(*args):
        outs = eval_program(batched, list(args))
        derived = [out if flag else broadcast_batch(out, size) for out, flag in zip(outs[n_out:], out_batched[n_out:])]
        return list(outs[:n_out]) + derived

    traced, _, _ = trace_program(run, list(program.in_avals) + seed_avals, f"sparse jac{mode[:3]}")
    return Staged(traced, None, [])


class SparseJacobian:
    """fn's Jacobian as a `scipy.sparse.csr_matrix`, by graph colouring (see `sparse_jacobian`)."""

    def __init__(self, fn, argnums=0, mode="auto", sparsity=None, method=colouring.DEFAULT_METHOD, check=False):
        if mode not in MODES:
            raise ArgumentError(f"sparse_jacobian of '{name_of(fn)}': mode must be one of {', '.join(MODES)}, "
                                f"got {mode!r}")
        if method not in colouring.METHODS:
            raise ArgumentError(f"sparse_jacobian of '{name_of(fn)}': method must be one of "
                                f"{', '.join(colouring.METHODS)}, got {method!r}")
        self.fn, self.argnums, self.mode, self.method, self.check = fn, argnums, mode, method, check
        self.user_pattern = None if sparsity is None else sp.csr_matrix(sparsity, dtype=bool)
        if self.user_pattern is not None:
            self.user_pattern.sort_indices()
        functools.update_wrapper(self, fn, updated=())

    def _prepare(self, args, kwargs):
        staged, call = _stage(self.fn, self.argnums, args, kwargs, "sparse_jacobian")
        if self.user_pattern is not None:
            if self.user_pattern.shape != (staged.rows, staged.columns):
                raise ShapeError(f"sparse_jacobian of '{name_of(self.fn)}': the sparsity pattern has shape "
                                 f"{self.user_pattern.shape}, the Jacobian ({staged.rows}, {staged.columns})")
            pattern = self.user_pattern
        else:
            pattern = staged.pattern(call.leaves)
        key = (id(pattern), self.mode, self.method)
        plan = staged.plans.get(key)
        if plan is None or plan.pattern is not pattern:
            plan = staged.plans[key] = _choose(pattern, self.mode, self.method)
        return staged, call, plan

    def num_passes(self, *args, **kwargs) -> int:
        """How many batched passes (colours) one evaluation at these arguments' signature makes."""
        return self._prepare(args, kwargs)[2].num_colours

    def plan(self, *args, **kwargs):
        """(mode, colours, pattern) used at these arguments' signature."""
        _, _, plan = self._prepare(args, kwargs)
        return plan.mode, plan.colours.copy(), plan.pattern.copy()

    def __call__(self, *args, **kwargs):
        return self.value_and_jacobian(*args, **kwargs)[1]

    def value_and_jacobian(self, *args, **kwargs):
        """(fn(*args, **kwargs), its Jacobian), both from the same batched pass."""
        staged, call, plan = self._prepare(args, kwargs)
        if plan.num_colours == 0:  # no input or no output: nothing to differentiate
            matrix = sp.csr_matrix(plan.pattern.shape, dtype=np.float64)
            return unflatten(staged.out_tree, staged(call.leaves)), matrix
        key = (plan.mode, plan.num_colours)
        compressed = staged.compressed.get(key)
        if compressed is None:
            compressed = staged.compressed[key] = _compressed_program(staged.program, staged.wrt, plan.mode,
                                                                      plan.num_colours)
        if plan.mode == "forward":
            seed_avals = [v.aval for v, w in zip(staged.program.inputs, staged.wrt) if w]
        else:
            seed_avals = staged.program.out_avals
        n_out = len(staged.program.outputs)
        results = compressed.run(list(call.leaves) + plan.seeds(seed_avals))
        outputs, derived = results[:n_out], results[n_out:]
        stacked = np.concatenate([np.reshape(d, (plan.num_colours, -1)) for d in derived], axis=1) if derived else \
            np.zeros((plan.num_colours, 0))
        values = stacked[plan.take]
        dtype = np.result_type(*[a.dtype for a in seed_avals]) if seed_avals else np.float64
        matrix = sp.csr_matrix((values.astype(dtype, copy=False), plan.pattern.indices.copy(),
                                plan.pattern.indptr.copy()), shape=plan.pattern.shape)
        if self.check:
            self._probe(staged, call, matrix)
        return unflatten(staged.out_tree, outputs), matrix

    def _probe(self, staged, call, matrix):
        """Debug mode: J v by one exact jvp against the sparse matrix times v, for a random v."""
        rng = np.random.default_rng(0)
        wrt_avals = [v.aval for v, w in zip(staged.program.inputs, staged.wrt) if w]
        tangents = [rng.standard_normal(a.shape).astype(a.dtype) for a in wrt_avals]
        exact_program = Staged(jvp_program(staged.program, staged.wrt), None, [])
        exact = exact_program.run(list(call.leaves) + tangents)[len(staged.program.outputs):]
        exact = np.concatenate([np.ravel(e) for e in exact]) if exact else np.zeros(0)
        flat = np.concatenate([np.ravel(t) for t in tangents]) if tangents else np.zeros(0)
        error = np.abs(matrix @ flat - exact)
        scale = np.abs(exact) + np.abs(matrix) @ np.abs(flat) + 1e-300
        bad = np.flatnonzero(error > 1e-8 * scale + 1e-12)
        if bad.size:
            raise ArgumentError(
                f"sparse_jacobian of '{name_of(self.fn)}': the sparsity pattern misses non-zeros of the Jacobian "
                f"(a probe J v disagrees in {bad.size} rows, first rows {bad[:5].tolist()}); give a pattern that "
                "contains every non-zero, or leave sparsity=None to have it computed")


def sparse_jacobian(fn, argnums=0, mode="auto", sparsity=None, *, method=colouring.DEFAULT_METHOD, check=False):
    """fn's Jacobian as a `scipy.sparse.csr_matrix`, by colouring its sparsity pattern.

    mode="forward" colours the columns (one batched jvp pass per colour), "reverse" the rows (one
    batched vjp pass per colour), "auto" picks the direction with fewer passes. `sparsity` (a
    matrix of shape (outputs, inputs)) replaces the computed pattern: every entry missing from it
    is silently dropped unless `check=True`, which compares one exact J v with the result on every
    call and raises ArgumentError when they differ. `method` is the colouring order (colouring.py).
    Rows are fn's output leaves, flattened in order; columns the leaves of args[argnums].

    >>> jac = sparse_jacobian(lambda x: x[1:] - x[:-1])
    >>> jac(np.arange(4.0)).toarray()  # doctest: +SKIP
    array([[-1.,  1.,  0.,  0.], [ 0., -1.,  1.,  0.], [ 0.,  0., -1.,  1.]])
    >>> jac.num_passes(np.arange(4.0))  # doctest: +SKIP
    2
    """
    return SparseJacobian(fn, argnums, mode, sparsity, method, check)
