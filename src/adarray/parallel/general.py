"""general_scan[op] and general_reduce[op]: inclusive scan and reduction along axis 0 with a
user operator, traced once into a program of (a leaves, b leaves) -> leaves, that the user
declares associative with a constant identity (a param: a program of no inputs). Elements may be tuples of
leaves and carry trailing axes; nothing needs the operator to be commutative.

Rules (Futhark, IFL23 sections 1.1 and 2.1), division-free:
  * scan vjp: rho_i = g_i + C_i rho_(i+1) with C_i = J1(ys_i, x_(i+1))^T, a matrix recurrence
    over the operator's Jacobians; then x_bar_i = J2(ys_(i-1), x_i)^T rho_i (a batched vjp).
  * scan jvp: dy_i = J1(ys_(i-1), x_i) dy_(i-1) + J2(ys_(i-1), x_i) dx_i, the same recurrence forward.
  * reduce vjp: l = exclusive scan, r = exclusive scan from the end with the flipped operator,
    x_bar_i = vjp of a -> (l_i . a) . r_i at x_i (one batched map); the jvp sums the matching jvps.
Every rule emits general scans, matrix recurrences and batched programs, so derivatives of any
order work.
Vectorised operators (Futhark's Iswim/Irwim/Irbiwim): when the operator acts on every position of
the elements' trailing axes on its own (`lanes`), the scan rules take per-position k x k Jacobians
(k leaves per element) and solve one recurrence per position (linear_recurrence for k = 1) instead
of dense (k |T|)^2 Jacobians; vmap of a scalar operator gives such an operator too.
The NumPy implementations (backends/numpy/parallel.py): log2(n) passes of the operator batched
over the whole array (Hillis-Steele for the scan, a pairwise tree for the reduction).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import Literal, Program, Var
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import Aval, is_float
from ..passes import simplify
from ..passes.guards import guard_square_roots
from ..primitives import elementwise as ew
from ..primitives import linalg
from ..primitives.reduce import reduce_sum
from ..primitives.rules import aval_of_value, batch_all, broadcast_batch
from ..primitives.scan import linear_recurrence, matrix_recurrence
from ..primitives.structural import broadcast_in_dim, concatenate, reshape, slice_array, transpose
from ..tracing import eval_program, trace_program
from ..transforms import sparsity, sparsity_nested
from ..transforms.jet import grouped_jet, grouped_series, grouped_values
from ..transforms.jvp import jvp_program, propagate
from ..transforms.vjp import vjp_program
from ..transforms.vmap import vmap_program


def _element_avals(op: Program):
    k = len(op.outputs)
    return op.in_avals[:k]


def _check(op: Program, identity: Program, xs, what):
    k = len(op.outputs)
    elements = tuple(op.in_avals[:k])
    if op.in_avals[k:] != elements or op.out_avals != elements:
        raise ShapeError(f"{what}: the operator must map two elements {elements} to one, got "
                         f"{op.in_avals} -> {op.out_avals}")
    if identity.in_avals or identity.out_avals != elements or not all(isinstance(o, Literal) for o in identity.outputs):
        raise ShapeError(f"{what}: the identity {identity.out_avals} must be constants like the elements {elements}")
    if len(xs) != k:
        raise ShapeError(f"{what}: {len(xs)} operands for elements of {k} leaves")
    lengths = {x.shape[0] if x.shape else None for x in xs}
    if len(lengths) != 1 or None in lengths or tuple(x.update(shape=x.shape[1:]) for x in xs) != elements:
        raise ShapeError(f"{what}: operands {tuple(xs)} are not stacks of elements {elements}")
    return lengths.pop()


def _scan_abstract_eval(*avals, op, identity):
    _check(op, identity, avals, "general_scan")
    return list(avals)


def _reduce_abstract_eval(*avals, op, identity):
    _check(op, identity, avals, "general_reduce")
    return list(_element_avals(op))


general_scan_p = Primitive("general_scan", _scan_abstract_eval, multiple_results=True)
general_reduce_p = Primitive("general_reduce", _reduce_abstract_eval, multiple_results=True)


def constant_program(values) -> Program:
    """A program of no inputs returning `values` (how a constant identity rides in params)."""
    return Program((), (), tuple(Literal(np.asarray(v)) for v in values))


def identity_values(identity: Program):
    return [o.value for o in identity.outputs]


def general_scan(op: Program, xs, identity):
    """Inclusive scan along axis 0; `identity` is a list of constant arrays (one per leaf)."""
    return general_scan_p.bind(*xs, op=op, identity=constant_program(identity))


def general_reduce(op: Program, xs, identity):
    return general_reduce_p.bind(*xs, op=op, identity=constant_program(identity))


# --- element plumbing ----------------------------------------------------------------------------

def _program(fn, avals, name):
    program, _, _ = trace_program(fn, list(avals), name)
    return simplify(program)


def _stack(identity, count: int):
    """The identity element repeated `count` times along a new leading axis."""
    return [broadcast_in_dim(e, (count,) + aval_of_value(e).shape, tuple(range(1, len(aval_of_value(e).shape) + 1)))
            for e in identity]


def shifted_by_one(xs, identity, later: bool = False):
    """x_(i-1) (or x_(i+1) if later) for every i, the identity entering at the edge."""
    out = []
    for x, e in zip(xs, identity):
        shape = aval_of_value(x).shape
        n = shape[0]
        if n == 0:
            out.append(x)
            continue
        starts, stops = (1,) + (0,) * (len(shape) - 1), shape
        if later:
            kept = slice_array(x, starts, stops, (1,) * len(shape))
            out.append(concatenate([kept, _stack([e], 1)[0]], 0))
        else:
            kept = slice_array(x, (0,) * len(shape), (n - 1,) + shape[1:], (1,) * len(shape))
            out.append(concatenate([_stack([e], 1)[0], kept], 0))
    return out


def _flatten(leaves, n):
    """Leaves (n, *shape_j) -> one (n, d) array."""
    parts = [reshape(leaf, (n, int(np.prod(aval_of_value(leaf).shape[1:], dtype=np.int64)))) for leaf in leaves]
    return concatenate(parts, 1) if len(parts) > 1 else parts[0]


def _unflatten(flat, avals, n):
    """(n, d) -> leaves (n, *shape_j)."""
    leaves, start = [], 0
    for aval in avals:
        size = aval.size
        part = slice_array(flat, (0, start), (n, start + size), (1, 1))
        leaves.append(reshape(part, (n,) + aval.shape))
        start += size
    return leaves


def _batched(program: Program, n: int, flags=None):
    flags = [True] * len(program.inputs) if flags is None else flags
    batched, out_flags = vmap_program(program, flags, n)
    return batched, out_flags


def map_program(program: Program, n: int, args, flags=None):
    """Apply a per-element program to stacks of n elements (batched: one call, no loop)."""
    batched, out_flags = _batched(program, n, flags)
    outs = eval_program(batched, list(args))

    return [o if f else broadcast_batch(o, n) for o, f in zip(outs, out_flags)]


def _transposed_jacobian(op: Program, first: bool) -> Program:
    """Per element: (a, b) -> J^T as a (d, d) matrix, J = d(a.b)/da (first) or /db."""
    elements = _element_avals(op)
    k = len(elements)
    d = sum(a.size for a in elements)
    wrt = [first] * k + [not first] * k
    derived = jvp_program(op, wrt)
    basis, start = [], 0
    for aval in elements:
        basis.append(np.eye(d)[:, start:start + aval.size].reshape((d,) + aval.shape).astype(aval.dtype))
        start += aval.size
    rows, _ = vmap_program(derived, [False] * 2 * k + [True] * k, d)

    def jacobian(*args):
        tangents = eval_program(rows, list(args) + basis)[k:]
        return [_flatten(tangents, d)]

    return _program(jacobian, list(op.in_avals), "operator jacobian")


def lanes(op: Program):
    """The element shape T when the operator works on every position of T on its own (Futhark's
    vectorised operators, `map2 f` over trailing axes), else None: every leaf has shape T and one float
    dtype, and every equation that depends on the operands is elementwise. Its Jacobians are then
    diagonal across positions, k x k per position for elements of k leaves, never (k|T|)^2."""
    elements = _element_avals(op)
    shape, dtype = elements[0].shape, elements[0].dtype
    if not shape or not is_float(dtype) or any(a.shape != shape or a.dtype != dtype for a in op.in_avals):
        return None
    dependent = {id(v) for v in op.inputs}
    for eqn in op.eqns:
        if not any(isinstance(a, Var) and id(a) in dependent for a in eqn.inputs):
            continue  # a constant: it mixes no positions of the operands
        if not eqn.prim.elementwise or any(a.aval.shape != shape for a in eqn.inputs if isinstance(a, Var)):
            return None
        dependent.update(id(o) for o in eqn.outputs)
    return shape


def _lane_jacobian(op: Program, first: bool) -> Program:
    """Per element: (a, b) -> the k*k entries J[r][c] = d out_r / d a_c (first) or d b_c, row-major, each
    of the element shape: the diagonal of every block of a lane-wise operator's Jacobian."""
    elements = _element_avals(op)
    k = len(elements)
    op = guard_square_roots(op)  # as jvp_program does

    def jacobian(*args):
        columns = []
        for c in range(k):
            # the other leaves' seeds are symbolic zeros, never a literal 0 multiplied in
            seeds = [np.ones(a.shape, a.dtype) if j == c else Zero(a) for j, a in enumerate(elements)]
            none = [None] * k
            columns.append(propagate(op, list(args), seeds + none if first else none + seeds)[k:])
        return [columns[c][r] for r in range(k) for c in range(k)]

    return _program(jacobian, list(op.in_avals), "operator lane jacobian")


def _lane_recurrence(entries, offsets, transposed: bool, reverse: bool):
    """s_i = A_i s_(i-1) + b_i (s_(i+1) if reverse) at every position of the element shape, with the
    k x k matrices A_i given by their row-major entries (transposed if asked), each (n, *T)."""
    k = len(offsets)
    if k == 1:
        return [linear_recurrence(entries[0], offsets[0], 0, reverse)]
    shape = aval_of_value(offsets[0]).shape
    n, lane_shape, ndim = shape[0], shape[1:], len(shape) - 1
    lanes_first = tuple(range(1, ndim + 1)) + (0,)

    def moved(x, extra):
        return reshape(transpose(x, lanes_first), lane_shape + (n,) + extra)

    rows = [concatenate([moved(entries[c * k + r] if transposed else entries[r * k + c], (1, 1)) for c in range(k)],
                        ndim + 2) for r in range(k)]
    solved = matrix_recurrence(concatenate(rows, ndim + 1), concatenate([moved(b, (1,)) for b in offsets], ndim + 1),
                               reverse)
    back = tuple([ndim] + list(range(ndim)))
    return [transpose(reshape(slice_array(solved, (0,) * (ndim + 1) + (j,), lane_shape + (n, j + 1),
                                          (1,) * (ndim + 2)), lane_shape + (n,)), back) for j in range(k)]


def _vjp_of(op: Program, argument: int) -> Program:
    """Per element: (a, b, ct) -> cotangent of argument 0 (a) or 1 (b)."""
    k = len(op.outputs)
    wrt = [argument == 0] * k + [argument == 1] * k
    derived = vjp_program(op, wrt)
    return _program(lambda *args: eval_program(derived, list(args))[k:], list(op.in_avals) + list(op.out_avals),
                    "operator vjp")


def _jvp_of(op: Program, argument: int, moving) -> Program:
    """Per element: (a, b, t) -> the output tangent for a tangent t of argument 0 or 1, t holding only
    the leaves flagged in `moving` (the others are symbolic zeros)."""
    k = len(op.outputs)
    flags = [bool(m) for m in moving]
    derived = jvp_program(op, [False] * k + flags if argument == 1 else flags + [False] * k)
    tangent_avals = [a for a, m in zip(_element_avals(op), flags) if m]
    return _program(lambda *args: eval_program(derived, list(args))[k:], list(op.in_avals) + tangent_avals,
                    "operator jvp")


def _flipped(op: Program) -> Program:
    k = len(op.outputs)
    return _program(lambda *args: eval_program(op, list(args[k:]) + list(args[:k])), op.in_avals, "flipped operator")


def _sandwich(op: Program) -> Program:
    """(l, a, r) -> (l . a) . r."""
    k = len(op.outputs)
    elements = list(_element_avals(op))

    def apply(*args):
        left, middle, right = args[:k], args[k:2 * k], args[2 * k:]
        return eval_program(op, list(eval_program(op, list(left) + list(middle))) + list(right))

    return _program(apply, elements * 3, "l . a . r")


def _instantiated(values, like):
    return [ew.zeros_like(x) if is_zero(v) else v for v, x in zip(values, like)]


def _moving(tangents):
    """Which tangents are not symbolic zeros, and those tangents."""
    return [not is_zero(t) for t in tangents], [t for t in tangents if not is_zero(t)]


# --- scan rules ----------------------------------------------------------------------------------

def _scan_vjp(cotangents, primals, outputs, needs, *, op, identity):
    xs, identity = list(primals), identity_values(identity)
    n = aval_of_value(xs[0]).shape[0]
    if n == 0:
        return [None] * len(primals)
    elements = _element_avals(op)
    following = shifted_by_one(xs, identity, later=True)
    if lanes(op) is not None:
        entries = map_program(_lane_jacobian(op, first=True), n, list(outputs) + following)
        rho = _lane_recurrence(entries, _instantiated(cotangents, outputs), transposed=True, reverse=True)
    else:
        g = _flatten(_instantiated(cotangents, outputs), n)
        jacobians = map_program(_transposed_jacobian(op, first=True), n, list(outputs) + following)[0]
        rho = _unflatten(matrix_recurrence(jacobians, g, reverse=True), elements, n)
    previous = shifted_by_one(list(outputs), identity)
    grads = map_program(_vjp_of(op, 1), n, previous + xs + rho)
    return [gr if need else None for gr, need in zip(grads, needs)]


def _scan_jvp(tangents, primals, outputs, *, op, identity):
    k = len(op.outputs)
    xs, identity = list(primals), identity_values(identity)
    n = aval_of_value(xs[0]).shape[0]
    if n == 0:
        return list(outputs)
    elements = _element_avals(op)
    previous = shifted_by_one(list(outputs), identity)
    moving, nonzero = _moving(tangents[:k])
    pushed = map_program(_jvp_of(op, 1, moving), n, previous + xs + nonzero)
    if lanes(op) is not None:
        entries = map_program(_lane_jacobian(op, first=True), n, previous + xs)
        return _lane_recurrence(entries, pushed, transposed=False, reverse=False)
    jacobians = map_program(_transposed_jacobian(op, first=True), n, previous + xs)[0]
    forward = transpose(jacobians, (0, 2, 1))
    return _unflatten(matrix_recurrence(forward, _flatten(pushed, n)), elements, n)


def _reduce_vjp(cotangents, primals, outputs, needs, *, op, identity):
    k = len(op.outputs)
    xs, identity = list(primals), identity_values(identity)
    n = aval_of_value(xs[0]).shape[0]
    if n == 0:
        return [None] * len(primals)
    left, right = _exclusive_both_ways(op, xs, identity, n)
    seeds = [broadcast_in_dim(c, (n,) + aval_of_value(c).shape, tuple(range(1, len(aval_of_value(c).shape) + 1)))
             for c in _instantiated(cotangents, outputs)]
    sandwich = _sandwich(op)
    derived = _program(lambda *a: eval_program(vjp_program(sandwich, [False] * k + [True] * k + [False] * k),
                                               list(a))[k:], list(sandwich.in_avals) + list(sandwich.out_avals),
                       "sandwich vjp")
    grads = map_program(derived, n, left + xs + right + seeds)
    return [gr if need else None for gr, need in zip(grads, needs)]


def _exclusive_both_ways(op, xs, identity, n):
    left = shifted_by_one(general_scan(op, xs, identity), identity)
    flipped = [slice_array(x, (n - 1,) + (0,) * (len(aval_of_value(x).shape) - 1), (None,) + aval_of_value(x).shape[1:],
                           (-1,) + (1,) * (len(aval_of_value(x).shape) - 1)) for x in xs]
    suffix = general_scan(_flipped(op), flipped, identity)
    suffix = [slice_array(s, (n - 1,) + (0,) * (len(aval_of_value(s).shape) - 1), (None,) + aval_of_value(s).shape[1:],
                          (-1,) + (1,) * (len(aval_of_value(s).shape) - 1)) for s in suffix]
    return left, shifted_by_one(suffix, identity, later=True)


def _reduce_jvp(tangents, primals, outputs, *, op, identity):
    k = len(op.outputs)
    xs, identity = list(primals), identity_values(identity)
    n = aval_of_value(xs[0]).shape[0]
    if n == 0:
        return [ew.zeros_like(o) for o in outputs]
    left, right = _exclusive_both_ways(op, xs, identity, n)
    sandwich = _sandwich(op)
    moving, nonzero = _moving(tangents[:k])
    derived = _program(lambda *a: eval_program(jvp_program(sandwich, [False] * k + moving + [False] * k),
                                               list(a))[k:],
                       list(sandwich.in_avals) + [a for a, m in zip(_element_avals(op), moving) if m], "sandwich jvp")
    pushed = map_program(derived, n, left + xs + right + nonzero)
    return [reduce_sum(p, (0,)) for p in pushed]


general_scan_p.vjp, general_scan_p.jvp = _scan_vjp, _scan_jvp
general_reduce_p.vjp, general_reduce_p.jvp = _reduce_vjp, _reduce_jvp


def _batch(primitive, leading_output: bool):
    """vmap: the batch axis goes inside each element (after the scanned axis); the operator is batched."""
    def batch(args, batched, size, *, op, identity):
        k = len(op.outputs)
        everything = batch_all(args, batched, size)
        xs = [transpose(x, (1, 0) + tuple(range(2, len(aval_of_value(x).shape)))) for x in everything]
        wide = [np.broadcast_to(e, (size,) + e.shape) for e in identity_values(identity)]
        new_op, flags = vmap_program(op, [True] * 2 * k, size)
        if not all(flags):
            inner = new_op
            new_op = _program(lambda *a: [o if f else broadcast_batch(o, size)
                                          for o, f in zip(eval_program(inner, list(a)), flags)], inner.in_avals,
                              "batched operator")
        outs = primitive.bind(*xs, op=simplify(new_op), identity=constant_program(wide))
        if leading_output:
            outs = [transpose(o, (1, 0) + tuple(range(2, len(aval_of_value(o).shape)))) for o in outs]
        return outs, [True] * len(outs)

    return batch


general_scan_p.batch = _batch(general_scan_p, True)
general_reduce_p.batch = _batch(general_reduce_p, False)


def _sample_operators():
    """Operators for the generated rule tests: 2x2 matrix product, linear-function composition
    (tuple elements), and an elementwise product of vectors (trailing axes)."""

    matrix, scalar, vector = Aval((2, 2), np.float64), Aval((), np.float64), Aval((3,), np.float64)
    matmul = _program(lambda a, b: [linalg.einsum("ij,jk->ik", a, b)], [matrix, matrix], "matmul")
    compose = _program(lambda a0, a1, b0, b1: [ew.mul(a0, b0), ew.add(ew.mul(a1, b0), b1)], [scalar] * 4, "compose")
    product = _program(lambda a, b: [ew.mul(a, b)], [vector, vector], "product")
    lanes_compose = _program(lambda a0, a1, b0, b1: [ew.mul(a0, b0), ew.add(ew.mul(a1, b0), b1)], [vector] * 4,
                             "compose per lane")
    return [(matmul, [(5, 2, 2)], [np.eye(2)]), (compose, [(6,), (6,)], [1.0, 0.0]), (product, [(4, 3)], [np.ones(3)]),
            (lanes_compose, [(5, 3), (5, 3)], [np.ones(3), np.zeros(3)])]


def _sample(rng):
    cases = []
    for op, shapes, identity in _sample_operators():
        xs = [rng.normal(size=s) * 0.8 for s in shapes]
        cases.append((xs, {"op": op, "identity": constant_program(identity)}))
    op, shapes, identity = _sample_operators()[2]
    cases.append(([np.array([[2.0, 0.0, 1.0], [0.0, 0.0, 3.0], [1.5, 2.0, 0.5], [0.5, 0.0, -1.0]])],
                  {"op": op, "identity": constant_program(identity)}))
    return cases


general_scan_p.sample = general_reduce_p.sample = _sample


# --- Taylor mode: the same scan or reduction over truncated series ----------------------------------------
# An associative operator stays associative on truncated Taylor series (it acts on functions of t,
# and truncation mod t^(K+1) commutes with it), so the Taylor program of the operator, with elements
# (leaves, then the coefficients of each float leaf) and the identity's coefficients zero, is a
# user operator of the same primitive.

def _general_taylor(primitive):
    def taylor(series, outputs, *, op, identity):
        order = len(series[0]) - 1
        k = len(op.outputs)
        flags = [a.differentiable for a in _element_avals(op)]
        program, _ = grouped_jet(op, order, flags + flags, [range(k), range(k, 2 * k)], [range(k)], force=flags)
        values = identity_values(identity)
        wide_identity = values + [np.zeros_like(v) for v, f in zip(values, flags) if f for _ in range(order)]
        outs = primitive.bind(*grouped_values(series, [range(k)], flags), op=program,
                              identity=constant_program(wide_identity))
        result = grouped_series(outs, [range(k)], flags, order, [aval_of_value(o) for o in outputs])
        return [s[1:] for s in result]

    return taylor


general_scan_p.taylor = _general_taylor(general_scan_p)
general_reduce_p.taylor = _general_taylor(general_reduce_p)

sparsity.register(general_scan_p, sparsity.Rule("prefix", sparsity_nested.general_scan_dependence, exact=False))
sparsity.register(general_reduce_p, sparsity.Rule("dense", sparsity_nested.general_reduce_dependence, exact=False))
