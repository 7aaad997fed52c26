"""check_grads: the derivatives of a Python function against central differences, to any order.

For users' functions what `oracles` is for single primitives (and what JAX's
`jax.test_util.check_grads` and autograd's `test_util.check_grads` are):

    forward   J v (the jvp program)   ~ (f(x + h v) - f(x - h v)) / 2h        for a random v
    reverse   <J^T u, v> (the vjp program) ~ <u, the central difference of f along v>  for random u, v
    order k   the same checks on the jvp function (x, v) -> J v and on the vjp function
              (x, u) -> J^T u, recursively, so order 2 checks every second derivative rule.

Only floating-point leaves of the arguments (real or complex) are perturbed; integer and boolean
leaves are held fixed, and only floating-point outputs are compared. A complex leaf is moved along a
random complex direction (its real and imaginary directions at once), and reverse mode pairs values
by Re(sum u * v), under which it is the linear transpose of forward mode (JAX's and autograd's
convention). The function is traced at the given values, so Python control flow on them works (the
path they take is checked). The tolerances are the project's policy (`oracles.tolerances`) plus the
rounding error of the central difference itself, 4 ulp(|f|) / h, which is what a finite difference
of a large value cannot resolve.
"""
from __future__ import annotations

import numpy as np

from ..backends.numpy import compile_program
from ..core.pytree import flatten, unflatten
from ..core.types import Aval, is_float, real_dtype
from ..passes import simplify
from ..tracing import Tracer, eval_program, trace_guarded
from ..transforms.jvp import jvp_program
from ..transforms.vjp import vjp_program
from .oracles import pairing, random_normal, tolerances, wide

MODES = ("fwd", "rev")


def _aval(leaf) -> Aval:
    if isinstance(leaf, Tracer):
        return leaf.aval
    array = np.asarray(leaf)
    return Aval(array.shape, np.float64 if isinstance(leaf, float) else array.dtype)


def _traced(f, leaves, tree, name):
    """The program of f at the leaves' signature, traced with their values (Python control flow on them works)."""
    sources = [None if isinstance(x, Tracer) else np.asarray(x) for x in leaves]
    program, _, closure, _ = trace_guarded(lambda *xs: f(*unflatten(tree, xs)), [_aval(x) for x in leaves], sources,
                                           name)
    if closure:  # only inside another trace, which check_grads is not meant for
        raise ValueError(f"check_grads: '{name}' closes over traced values; pass them as arguments")
    return program


def _run(program, args):
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in compile_program(program)(*[np.asarray(a) for a in args])]


def _fail(message, name, program=None):
    text = f"check_grads of '{name}': {message}"
    if program is not None:
        text += f"\n{program}"
    raise AssertionError(text)


def check_grads(f, args, order=2, modes=MODES, *, eps=None, rtol=None, atol=None, rng=None):
    """Check f's forward and reverse derivatives at `args` (a tuple of pytrees) up to `order`.

    Raises AssertionError naming the function, the mode, the order and the mismatch.

    >>> check_grads(lambda x, y: anp.sin(x) * y, (np.ones(3), 2.0), order=2)  # doctest: +SKIP
    """
    modes = tuple(modes)
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise ValueError(f"check_grads: modes must be a non-empty subset of {MODES}, got {modes}")
    if int(order) < 1:
        raise ValueError(f"check_grads: order must be at least 1, got {order}")
    rng = np.random.default_rng(0) if rng is None else rng
    leaves, tree = flatten(tuple(args))
    name = getattr(f, "__name__", type(f).__name__)
    _check(f, [np.asarray(x) if not isinstance(x, float) else x for x in leaves], tree, int(order), modes,
           eps, rtol, atol, rng, name)


def _check(f, leaves, tree, order, modes, eps, rtol, atol, rng, name):
    program = _traced(f, leaves, tree, name)
    wrt = [is_float(a.dtype) for a in program.in_avals]
    out_floats = [is_float(a.dtype) for a in program.out_avals]
    if not any(wrt) or not any(out_floats):
        return
    dtypes = [a.dtype for a, w in zip(program.in_avals, wrt) if w] + [
        a.dtype for a, w in zip(program.out_avals, out_floats) if w]
    policy = tolerances(min((real_dtype(d) for d in dtypes), key=lambda d: d.itemsize))
    eps = policy.eps if eps is None else eps
    rtol = policy.rtol if rtol is None else rtol
    atol = policy.atol if atol is None else atol
    n_out = len(program.outputs)

    tangents = [random_normal(rng, a.shape, a.dtype) if w else None for a, w in zip(program.in_avals, wrt)]
    numeric, rounding = _central_difference(program, leaves, tangents, eps, out_floats)

    forward = jvp_program(program, wrt)
    reverse = vjp_program(program, wrt)
    if "fwd" in modes:
        analytic = _run(simplify(forward), list(leaves) + [t for t in tangents if t is not None])[n_out:]
        for i, (got, want, floor) in enumerate(zip(analytic, numeric, rounding)):
            if want is None:
                continue
            allowed = atol + floor + rtol * np.abs(want)
            if got.shape != want.shape or not np.all(np.abs(got - want) <= allowed):
                error = np.max(np.abs(got - want) - allowed) if got.shape == want.shape else "shape"
                _fail(f"forward mode (order {order} from the top): output {i} J v = {got}, central differences "
                      f"give {want} (h={eps:g}; worst excess {error})", name, forward)
    if "rev" in modes:
        cotangents = [random_normal(rng, a.shape, a.dtype) if w else np.zeros(a.shape, a.dtype)
                      for a, w in zip(program.out_avals, out_floats)]
        pulled = _run(simplify(reverse), list(leaves) + cotangents)[n_out:]
        v = [t for t in tangents if t is not None]
        for got, t in zip(pulled, v):
            if got.shape != t.shape:
                _fail(f"reverse mode: a cotangent of shape {got.shape} for an input of shape {t.shape}", name, reverse)
        left = sum(pairing(g, t) for g, t in zip(pulled, v))
        pairs = [(u, w, r) for u, w, r in zip(cotangents, numeric, rounding) if w is not None]
        right = sum(pairing(u, w) for u, w, _ in pairs)
        norm = lambda xs: float(np.sqrt(sum(np.sum(np.abs(wide(x)) ** 2) for x in xs)))
        scale = norm([u for u, _, _ in pairs]) * norm([w for _, w, _ in pairs]) + norm(pulled) * norm(v)
        allowed = atol + rtol * scale + sum(float(np.sum(np.abs(u) * r)) for u, _, r in pairs)
        if not np.isfinite(left) or abs(left - right) > allowed:
            _fail(f"reverse mode (order {order} from the top): <J^T u, v> = {left!r} but <u, central differences> "
                  f"= {right!r} (allowed difference {allowed:g})", name, reverse)
    if order > 1:
        for mode, derived, extra in (("fwd", forward, [t for t in tangents if t is not None]),
                                     ("rev", reverse, None)):
            if mode not in modes:
                continue
            if extra is None:
                extra = [random_normal(rng, a.shape, a.dtype) if w else np.zeros(a.shape, a.dtype)
                         for a, w in zip(program.out_avals, out_floats)]

            def derivative(*values, derived=derived):
                return eval_program(derived, list(values))[n_out:]

            derivative.__name__ = f"{'jvp' if mode == 'fwd' else 'vjp'}_of_{name}"
            inner_leaves, inner_tree = flatten(tuple(list(leaves) + list(extra)))
            _check(derivative, inner_leaves, inner_tree, order - 1, modes, eps, rtol, atol, rng, derivative.__name__)


def _central_difference(program, leaves, tangents, eps, out_floats):
    """(f(x + h v) - f(x - h v)) / 2h per float output, and the rounding error it cannot resolve."""
    def moved(sign):
        return [x if t is None else (wide(x) + sign * eps * t).astype(np.asarray(x).dtype)
                for x, t in zip(leaves, tangents)]

    plus, minus = _run(program, moved(1.0)), _run(program, moved(-1.0))
    numeric, rounding = [], []
    for p, m, f in zip(plus, minus, out_floats):
        if not f:
            numeric.append(None)
            rounding.append(None)
            continue
        p64, m64 = wide(p), wide(m)
        numeric.append((p64 - m64) / (2 * eps))
        ulp = np.finfo(p.dtype).eps
        rounding.append(4 * ulp * np.maximum(np.abs(p64), np.abs(m64)) / (2 * eps))
    return numeric, rounding
