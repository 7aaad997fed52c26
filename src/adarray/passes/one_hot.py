"""Forward-mode Jacobians with symbolic identity seeds: dF~'s one-hot tangents on array programs.

`ad.jacfwd` batches the jvp program over the identity: input element z gets the unit tangent e_z.
Materialised, every tangent is an (n, *shape) array, so a gradient of a scalar function of n inputs
costs O(n^2) time and memory. Shaikhha et al. (ICFP 2019, the dF~ language; design notes part (c))
recover reverse mode's cost by keeping one-hot vectors symbolic and rewriting: sum(x * eye) -> x, an
index-equality rule for contractions, folds of one-hot terms collapsed. `identity_seed_program` does
the same on our IR: it runs the jvp program with tangents held as sums of terms

    OneHot(v, P):  T[z, i] = (z == P[i]) * v[i]     v an array of the tangent's shape, P the integer
                                                    seed index of each element (a NumPy constant, or
                                                    a traced value after a gather by traced indices)
    Dense(D):      T = D, a batched array (n, *shape)

The seed of input leaf l is OneHot(1, offset_l + arange(size_l)). The jvp program is linear in its
tangents, so every equation that reads one is one of a few linear forms, each with a rule here:
  * products and quotients by primal values scale v; sums merge terms with the same P;
  * structural operations (broadcast, reshape, transpose, slice, concatenate, gather by known or
    traced indices) move v and P together;
  * a sum over axes along which P is constant sums v (sum(x * eye) -> x); otherwise the term is split
    along those axes into a few terms, or scattered into a Dense value (a full sum: D[P[i]] += v[i],
    and when P enumerates the seeds in order, just v);
  * einsum: P constant along the contracted letters contracts v; otherwise the contraction is split
    into one term per contracted index (few) or scattered (index-equality reasoning: the dot product
    sum_a e_z[a] y[a] becomes y);
  * anything else (loops, branches, products of two tangents) gets its terms materialised and the
    primitive's batching rule, exactly as vmap would; nothing is lost, only the savings.
Outputs are materialised as (n, *shape) arrays, the layout jacfwd returns. Terms per value are capped
(TERM_LIMIT); beyond it they are summed into one Dense value. The primal part of the program runs once,
unbatched (the loop-invariant code motion of dF~'s grad).
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Literal, Program
from ..core.types import Aval
from ..primitives import elementwise as ew
from ..primitives.indexing import gather, scatter
from ..primitives.linalg import einsum, parse_spec
from ..primitives.reduce import reduce_sum
from ..primitives.rules import aval_of_value, broadcast_batch
from ..primitives.structural import broadcast_in_dim, concatenate, reshape, transpose
from ..tracing import trace_program
from ..tracing.eager import evaluate

TERM_LIMIT = 24


class OneHot:
    __slots__ = ("value", "index")

    def __init__(self, value, index):
        self.value, self.index = value, index


class Dense:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Tangent:
    """A batched tangent of unbatched type `aval`: the sum of `terms` (none: zero)."""

    __slots__ = ("aval", "terms")

    def __init__(self, aval: Aval, terms):
        self.aval, self.terms = aval, list(terms)


def identity_seed_program(derivative: Program, num_primals: int, seed_avals, name: str = "jacfwd") -> Program:
    """The batched jvp program over the identity seeds, without materialising them.

    `derivative` is a jvp program (inputs: `num_primals` primals, then one tangent per seed aval; outputs:
    the primal outputs, then their tangents). The result takes the primals and returns the primal
    outputs, then each output tangent as an (n, *shape) array, n the total size of `seed_avals`.
    """
    size = sum(a.size for a in seed_avals)
    n_out = len(derivative.outputs) // 2

    def run(*primals):
        env = {id(var): value for var, value in zip(derivative.inputs, primals)}
        offset = 0
        for var, aval in zip(derivative.inputs[num_primals:], seed_avals):
            index = offset + np.arange(aval.size, dtype=np.int64).reshape(aval.shape)
            env[id(var)] = Tangent(aval, [OneHot(np.ones(aval.shape, aval.dtype), index)])
            offset += aval.size
        _Interpreter(size).run(derivative, env)
        outs = [_read(env, atom) for atom in derivative.outputs]
        rows = [materialize(out, size) if isinstance(out, Tangent) else broadcast_batch(out, size)
                for out in outs[n_out:]]
        return list(outs[:n_out]) + rows

    program, _, _ = trace_program(run, [v.aval for v in derivative.inputs[:num_primals]], name)
    return program


def _read(env, atom):
    return atom.value if isinstance(atom, Literal) else env[id(atom)]


def _is_zero_literal(atom) -> bool:
    return isinstance(atom, Literal) and atom.uniform == 0


# --- terms ----------------------------------------------------------------------------------------------------


def _index_op(index, numpy_fn, traced_fn):
    """Apply a structural operation to a seed index: NumPy on constants, IR on traced ones."""
    return numpy_fn(index) if isinstance(index, np.ndarray) else traced_fn(index)


def _same_index(a, b) -> bool:
    if a is b:
        return True
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b)


def combine(aval, terms, size):
    """Terms with the same seed index merged (their values added), Dense terms summed into one; past
    TERM_LIMIT everything becomes one Dense value."""
    merged, dense = [], None
    for term in terms:
        if isinstance(term, Dense):
            dense = term.value if dense is None else ew.add(dense, term.value)
            continue
        for k, other in enumerate(merged):
            if _same_index(other.index, term.index):
                merged[k] = OneHot(ew.add(other.value, term.value), other.index)
                break
        else:
            merged.append(term)
    if len(merged) + (dense is not None) > TERM_LIMIT:
        for term in merged:
            dense = _dense_of(term, aval, size) if dense is None else ew.add(dense, _dense_of(term, aval, size))
        merged = []
    return Tangent(aval, merged + ([Dense(dense)] if dense is not None else []))


def _dense_of(term, aval, size):
    """A term as an (n, *shape) array: the mask (z == P) times v."""
    if isinstance(term, Dense):
        return term.value
    shape = (size,) + aval.shape
    dims = tuple(range(1, len(shape)))
    seeds = broadcast_in_dim(np.arange(size, dtype=np.int64), shape, (0,))
    mask = ew.convert(ew.eq(seeds, broadcast_in_dim(term.index, shape, dims)), aval.dtype)
    return ew.mul(mask, broadcast_in_dim(_as(term.value, aval), shape, dims))


def _as(value, aval):
    return np.asarray(value, aval.dtype) if isinstance(value, np.ndarray) else value


def materialize(tangent: Tangent, size):
    """The (n, *shape) array of a symbolic tangent."""
    if not tangent.terms:
        return np.broadcast_to(np.zeros((), tangent.aval.dtype), (size,) + tangent.aval.shape)
    total = None
    for term in tangent.terms:
        part = _dense_of(term, tangent.aval, size)
        total = part if total is None else ew.add(total, part)
    return total


def _scatter_sum(term, aval, out_shape, groups, size):
    """Dense (n, *out_shape) with D[P[i], group(i)] += v[i]: a sum of a OneHot term over some of its axes.
    `groups` are NumPy index arrays of aval's shape, one per output axis."""
    index, value = term.index, _as(term.value, aval)
    if not groups and isinstance(index, np.ndarray) and index.size == size and np.array_equal(
            index.ravel(), np.arange(size)):
        return reshape(value, (size,))  # the seeds in order: sum(v * eye) is v
    zeros = np.broadcast_to(np.zeros((), aval.dtype), (size,) + tuple(out_shape))
    spec = (("array",),) * (1 + len(groups))
    return scatter(zeros, spec, [index, *groups], value, "add")


# --- rules ----------------------------------------------------------------------------------------------------


class _Interpreter:
    def __init__(self, size):
        self.size = size

    def run(self, program, env):
        for eqn in program.eqns:
            values = [_read(env, a) for a in eqn.inputs]
            if not any(isinstance(v, Tangent) for v in values):
                outs = eqn.prim.bind(*values, **eqn.params)
            else:
                rule = RULES.get(eqn.prim.name)
                outs = rule(self, eqn, values) if rule is not None else None
                if outs is None:
                    outs = self.fallback(eqn, values)
            for var, value in zip(eqn.outputs, outs if eqn.prim.multiple_results else [outs]):
                env[id(var)] = value

    def fallback(self, eqn, values):
        """Materialise the tangents and apply the primitive's batching rule (what vmap does)."""
        flags = tuple(isinstance(v, Tangent) for v in values)
        args = [materialize(v, self.size) if flag else v for v, flag in zip(values, flags)]
        outs, out_flags = eqn.prim.batch(args, flags, self.size, **eqn.params)
        if not eqn.prim.multiple_results:
            outs, out_flags = [outs], [out_flags]
        wrapped = [Tangent(var.aval, [Dense(out)]) if flag else out
                   for var, out, flag in zip(eqn.outputs, outs, out_flags)]
        return wrapped if eqn.prim.multiple_results else wrapped[0]

    def tangent_operands(self, atoms, values):
        """The operands as Tangents (zero literals become zero tangents), or None if a non-zero primal
        operand makes the operation affine rather than linear."""
        result = []
        for atom, value in zip(atoms, values):
            if isinstance(value, Tangent):
                result.append(value)
            elif _is_zero_literal(atom):
                result.append(Tangent(atom.aval, []))
            else:
                return None
        return result

    def mapped(self, eqn, tangent, value_fn, index_fn, dense_fn):
        """Apply an operation to each term: value_fn to v, index_fn to P, dense_fn to D."""
        out_aval = eqn.outputs[0].aval
        terms = []
        for term in tangent.terms:
            if isinstance(term, Dense):
                terms.append(Dense(dense_fn(term.value)))
            else:
                terms.append(OneHot(value_fn(_as(term.value, tangent.aval)), index_fn(term.index)))
        return combine(out_aval, terms, self.size)


def _linear_sum(interp, eqn, values):
    """add, sub: the terms of both (the second negated for sub)."""
    operands = interp.tangent_operands(eqn.inputs, values)
    if operands is None:
        return None
    first, second = operands
    if eqn.prim.name == "sub":
        second = _negated(second)
    return combine(eqn.outputs[0].aval, first.terms + second.terms, interp.size)


def _negated(tangent):
    return Tangent(tangent.aval, [Dense(ew.neg(t.value)) if isinstance(t, Dense) else
                                  OneHot(ew.neg(_as(t.value, tangent.aval)), t.index) for t in tangent.terms])


def _neg(interp, eqn, values):
    return _negated(values[0])


def _scaled(interp, eqn, values):
    """mul, safe_mul and div by a primal value: scale v (and D, the factor broadcast over the seeds)."""
    name = eqn.prim.name
    (position,) = [k for k, v in enumerate(values) if isinstance(v, Tangent)] or [None]
    if position is None or (name == "div" and position != 0) or sum(isinstance(v, Tangent) for v in values) > 1:
        return None
    tangent, factor = values[position], values[1 - position]
    binder = {"mul": ew.mul, "safe_mul": ew.safe_mul, "div": ew.div}[name]

    def apply(value):
        return binder(value, factor) if position == 0 else binder(factor, value)

    def apply_dense(value):
        spread = broadcast_batch(factor, interp.size)
        return binder(value, spread) if position == 0 else binder(spread, value)

    return interp.mapped(eqn, tangent, apply, lambda index: index, apply_dense)


def _select(interp, eqn, values):
    if isinstance(values[0], Tangent):
        return None
    predicate = values[0]
    branches = interp.tangent_operands(eqn.inputs[1:], values[1:])
    if branches is None:
        return None
    aval = eqn.outputs[0].aval
    zero = np.broadcast_to(np.zeros((), aval.dtype), aval.shape)
    terms = []
    for side, tangent in enumerate(branches):
        for term in tangent.terms:
            if isinstance(term, Dense):
                spread = broadcast_batch(predicate, interp.size)
                batch_zero = np.broadcast_to(np.zeros((), aval.dtype), (interp.size,) + aval.shape)
                picked = ew.select(spread, term.value, batch_zero) if side == 0 else ew.select(spread, batch_zero,
                                                                                                 term.value)
                terms.append(Dense(picked))
            else:
                value = _as(term.value, aval)
                picked = ew.select(predicate, value, zero) if side == 0 else ew.select(predicate, zero, value)
                terms.append(OneHot(picked, term.index))
    return combine(aval, terms, interp.size)


def _convert(interp, eqn, values):
    dtype = eqn.params["dtype"]
    return interp.mapped(eqn, values[0], lambda v: ew.convert(v, dtype), lambda i: i, lambda d: ew.convert(d, dtype))


def _structural(interp, eqn, values):
    """broadcast_in_dim, reshape, transpose, slice, unslice: move v and P alike; D with a leading batch axis
    (the primitive's batching rule)."""
    if len(values) != 1:
        return None
    prim, params = eqn.prim, eqn.params

    def dense(value):
        out, _ = prim.batch([value], (True,), interp.size, **params)
        return out

    return interp.mapped(eqn, values[0], lambda v: prim.bind(v, **params),
                         lambda i: _index_op(i, lambda a: np.asarray(evaluate(prim, [a], params)),
                                             lambda t: prim.bind(t, **params)), dense)


def _concatenate(interp, eqn, values):
    operands = interp.tangent_operands(eqn.inputs, values)
    if operands is None:
        return None
    axis, size = eqn.params["axis"], interp.size
    avals = [atom.aval for atom in eqn.inputs]
    terms = []
    for k, tangent in enumerate(operands):
        for term in tangent.terms:
            if isinstance(term, Dense):
                pieces = [term.value if j == k else np.broadcast_to(np.zeros((), a.dtype), (size,) + a.shape)
                          for j, a in enumerate(avals)]
                terms.append(Dense(concatenate(pieces, axis + 1)))
                continue
            pieces = [_as(term.value, a) if j == k else np.zeros(a.shape, a.dtype) for j, a in enumerate(avals)]
            if isinstance(term.index, np.ndarray):
                index = np.concatenate([term.index if j == k else np.zeros(a.shape, np.int64)
                                        for j, a in enumerate(avals)], axis)
            else:
                index = concatenate([term.index if j == k else np.zeros(a.shape, np.int64)
                                     for j, a in enumerate(avals)], axis)
            terms.append(OneHot(concatenate(pieces, axis), index))
    return combine(eqn.outputs[0].aval, terms, size)


def _gather(interp, eqn, values):
    tangent, *indices = values
    if any(isinstance(i, Tangent) for i in indices):
        return None
    spec = eqn.params["spec"]
    known = all(isinstance(atom, Literal) for atom in eqn.inputs[1:])

    def index_fn(index):
        if isinstance(index, np.ndarray) and known:
            return np.asarray(index[_numpy_index(spec, indices)])
        return gather(index, spec, indices)

    def dense(value):
        out, _ = eqn.prim.batch([value, *indices], (True,) + (False,) * len(indices), interp.size, spec=spec)
        return out

    return interp.mapped(eqn, tangent, lambda v: gather(v, spec, indices), index_fn, dense)


def _numpy_index(spec, indices):
    from ..primitives.indexing import numpy_index

    return numpy_index(spec, [np.asarray(i) for i in indices])


def _reduce(interp, eqn, values):
    if eqn.params["op"] != "add":
        return None
    (tangent,) = values
    axes, aval, size = tuple(eqn.params["axes"]), values[0].aval, interp.size
    out_aval = eqn.outputs[0].aval
    kept = [d for d in range(aval.ndim) if d not in axes]
    terms = []
    for term in tangent.terms:
        if isinstance(term, Dense):
            terms.append(Dense(reduce_sum(term.value, tuple(a + 1 for a in axes))))
            continue
        index, value = term.index, _as(term.value, aval)
        if _constant_along(index, axes) and index.size:
            terms.append(OneHot(reduce_sum(value, axes), index[tuple(0 if d in axes else slice(None)
                                                                    for d in range(aval.ndim))]))
            continue
        if index.size == 0 if isinstance(index, np.ndarray) else False:
            continue  # an empty tangent sums to zero
        count = int(np.prod([aval.shape[a] for a in axes], dtype=np.int64))
        if isinstance(index, np.ndarray) and count * (len(terms) + 1) <= TERM_LIMIT and count < size:
            terms.extend(OneHot(piece, piece_index) for _, piece, piece_index in _split(value, index, aval, axes))
            continue
        groups = [np.broadcast_to(np.arange(aval.shape[d]).reshape([-1 if e == d else 1 for e in range(aval.ndim)]),
                                  aval.shape) for d in kept]
        terms.append(Dense(_scatter_sum(term, aval, out_aval.shape, groups, size)))
    return combine(out_aval, terms, size)


def _constant_along(index, axes) -> bool:
    """Is the (constant) seed index the same at every position along `axes`? (Empty: trivially.)"""
    if not isinstance(index, np.ndarray):
        return False
    return index.size == 0 or all(np.all(index == index.take([0], axis=a)) for a in axes)


def _split(value, index, aval, axes):
    """A OneHot term summed over `axes`, as (position, v there, P there) for each position along them."""
    pieces = []
    for position in np.ndindex(*[aval.shape[a] for a in axes]):
        where = dict(zip(axes, position))
        window = tuple(slice(where[d], where[d] + 1) if d in where else slice(None) for d in range(aval.ndim))
        out_shape = tuple(n for d, n in enumerate(aval.shape) if d not in where)
        pieces.append((where, reshape(_take(value, where, aval.shape), out_shape), index[window].reshape(out_shape)))
    return pieces


def _take(x, where, shape):
    """x at the fixed positions `where` (axis -> position), those axes kept with length 1."""
    from ..primitives.structural import slice_array

    starts = tuple(where.get(d, 0) for d in range(len(shape)))
    stops = tuple(where[d] + 1 if d in where else n for d, n in enumerate(shape))
    return slice_array(x, starts, stops, (1,) * len(shape))


def _einsum(interp, eqn, values):
    """einsum of one tangent operand with a primal one."""
    flags = [isinstance(v, Tangent) for v in values]
    if sum(flags) != 1:
        return None
    (sa, sb), so = parse_spec(eqn.params["spec"])
    position = flags.index(True)
    tangent, other = values[position], values[1 - position]
    letters, other_letters = (sa, sb) if position == 0 else (sb, sa)
    aval, out_aval, size = tangent.aval, eqn.outputs[0].aval, interp.size
    free = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba"
                if c not in sa + sb + so)
    terms = []
    for term in tangent.terms:
        if isinstance(term, Dense):
            spec = f"{free}{letters},{other_letters}->{free}{so}"
            terms.append(Dense(einsum(spec, term.value, other)))
            continue
        terms.extend(_contract(term, aval, letters, other, other_letters, so, out_aval, size, len(terms)))
    return combine(out_aval, terms, size)


def _contract(term, aval, letters, other, other_letters, out_letters, out_aval, size, existing):
    """sum over the contracted letters of (z == P) v Y, for one OneHot term."""
    index, value = term.index, _as(term.value, aval)
    contracted = [d for d, c in enumerate(letters) if c not in out_letters]
    if isinstance(index, np.ndarray) and index.size == 0:
        return []  # an empty operand contracts to zero
    if _constant_along(index, contracted):
        kept = "".join(c for c in letters if c in out_letters)
        reduced = index[tuple(0 if d in contracted else slice(None) for d in range(len(letters)))]
        out_value = einsum(f"{letters},{other_letters}->{out_letters}", value, other)
        return [OneHot(out_value, _spread_index(reduced, kept, out_letters, out_aval.shape))]
    count = int(np.prod([aval.shape[d] for d in contracted], dtype=np.int64))
    if isinstance(index, np.ndarray) and count * (existing + 1) <= TERM_LIMIT and count < size:
        rest = "".join(c for c in letters if c in out_letters)
        other_shape = aval_of_value(other).shape
        pieces = []
        for where, piece, piece_index in _split(value, index, aval, tuple(contracted)):
            # the contracted letters are fixed in this piece: fix them in the primal operand too
            fixed = {other_letters.index(letters[d]): p for d, p in where.items() if letters[d] in other_letters}
            remaining = "".join(c for k, c in enumerate(other_letters) if k not in fixed)
            sliced = reshape(_take(other, fixed, other_shape), tuple(n for k, n in enumerate(other_shape)
                                                                     if k not in fixed))
            out_value = einsum(f"{rest},{remaining}->{out_letters}", piece, sliced)
            pieces.append(OneHot(out_value, _spread_index(piece_index, rest, out_letters, out_aval.shape)))
        return pieces
    # Scatter: W = v Y over the letters of both, then D[P, out] += W summed over the contracted letters.
    union = letters + "".join(c for c in out_letters if c not in letters)
    if isinstance(value, np.ndarray) and np.all(value == 1):  # a seed: the product is the primal operand
        product = _arrange(other, other_letters, union, tuple(aval.shape) + tuple(
            out_aval.shape[out_letters.index(c)] for c in union[len(letters):]))
    else:
        product = einsum(f"{letters},{other_letters}->{union}", value, other)
    shape = tuple(aval_of_value(product).shape)
    spread = broadcast_in_dim(index, shape, tuple(range(len(letters)))) if not isinstance(index, np.ndarray) else \
        np.broadcast_to(index.reshape(index.shape + (1,) * (len(union) - len(letters))), shape)
    groups = [np.broadcast_to(np.arange(shape[union.index(c)]).reshape(
        [-1 if e == union.index(c) else 1 for e in range(len(union))]), shape) for c in out_letters]
    return [Dense(_scatter_sum(OneHot(product, spread), Aval(shape, out_aval.dtype), out_aval.shape, groups, size))]


def _arrange(x, letters, target, shape):
    """x (axes named by `letters`) summed over the letters missing from `target`, then laid out along
    `target` (of `shape`), broadcast along target letters x lacks."""
    summed = tuple(k for k, c in enumerate(letters) if c not in target)
    if summed:
        x = reduce_sum(x, summed)
        letters = "".join(c for c in letters if c in target)
    order = sorted(range(len(letters)), key=lambda k: target.index(letters[k]))
    x = transpose(x, tuple(order))
    dims = tuple(sorted(target.index(c) for c in letters))
    return broadcast_in_dim(x, shape, dims)


def _spread_index(index, letters, out_letters, out_shape):
    """A seed index over `letters` (a subset of the output's, in their order there) broadcast to the output."""
    view = [out_shape[p] if c in letters else 1 for p, c in enumerate(out_letters)]
    order = sorted(range(len(letters)), key=lambda k: out_letters.index(letters[k]))
    if isinstance(index, np.ndarray):
        return np.broadcast_to(index.transpose(order).reshape(view), out_shape)
    dims = tuple(out_letters.index(c) for c in sorted(letters, key=out_letters.index))
    return broadcast_in_dim(transpose(index, tuple(order)), out_shape, dims)


RULES = {
    "add": _linear_sum, "sub": _linear_sum, "neg": _neg,
    "mul": _scaled, "safe_mul": _scaled, "div": _scaled,
    "select": _select, "convert": _convert,
    "broadcast_in_dim": _structural, "reshape": _structural, "transpose": _structural, "slice": _structural,
    "unslice": _structural, "concatenate": _concatenate, "gather": _gather,
    "reduce": _reduce, "einsum": _einsum,
}
