"""Forward-mode Jacobians with symbolic identity seeds: dF~'s one-hot tangents on array programs.

`ad.jacfwd` runs the jvp program over the identity: input element z gets the unit tangent e_z.
Materialised (what vmap of the jvp program does), every tangent is an (n, *shape) array, so the
forward-mode gradient of a scalar function of n inputs costs O(n^2) time and memory. Shaikhha et al.
(ICFP 2019, the dF~ language; design notes part (c)) recover reverse mode's cost by keeping one-hot
vectors symbolic and rewriting (sum(x * eye) -> x, index equalities in contractions). On our IR,
`identity_seed_program` interprets the jvp program with every tangent held as a *stack of one-hot
terms* (a sparse matrix with R entries per element, the ELL layout):

    T[z, i] = sum over r < R of (z == P[r, i]) * V[r, i]      V: (R, *shape) values
                                                              P: (R, *shape) seed indices
    or P = None: T = V, the dense (n, *shape) rows (R = n)

The seed of an input leaf is R = 1, V = 1, P = offset + arange(size). The jvp program is linear in
its tangents, so every equation that reads one is one of a few linear forms, each with a rule here:
  * products and quotients by primal values scale V; negation and dtype conversion map it;
  * sums add V where P agrees and otherwise stack the terms (R1 + R2 entries);
  * structural operations (broadcast, reshape, transpose, slice, pad, concatenate, gather by
    constant or traced indices) move V and P together (V by the primitive's batching rule);
  * a sum over axes along which P is constant sums V (sum(x * eye) -> x: no n x n array); along the
    others the summed positions become more entries (R * count), as the contracted letters of an
    einsum do (the dot product sum_a e_z[a] y[a] becomes y, entries of y at indices z);
  * anything else (loops, branches, scatters, complex parts) gets its tangents materialised and
    the primitive's batching rule, exactly as vmap would: nothing is lost, only the savings.
Entry rows with equal constant P are merged (a seed reached along several paths is one entry) and
rows that are padding everywhere dropped; lazy broadcasts stay lazy through transposes and einsums and
are contracted with their factor by a sum over their inner axes (one_hot_entries.py holds the
representation: sums, merging, expansion, assembly).
A value whose entries outnumber the seeds (R > n) is materialised: then the dense rows are smaller.
Seed indices known at tracing time stay NumPy constants (so the pass can see that P is constant along
an axis); after a gather by traced indices they are traced values. Outputs are materialised as
(n, *shape) rows (the layout jacfwd returns): V itself when its entries are the seeds in order, else
plain assignments of V at P (a few layers where seeds repeat), a scatter-add beyond that. The primal
part of the program runs once, unbatched.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Eqn, Literal, Program, Var
from ..core.types import Aval
from ..primitives import elementwise as ew
from ..primitives import indexing, structural
from ..primitives import reduce as reductions
from ..primitives.indexing import gather
from ..primitives.linalg import einsum, einsum_p, parse_spec
from ..primitives.reduce import reduce_sum
from ..primitives.rules import aval_of_value, broadcast_batch
from ..primitives.structural import (
    broadcast_in_dim,
    reshape,
    reshape_p,
    transpose,
    transpose_p,
)
from ..tracing import trace_program
from ..tracing.eager import evaluate
from .one_hot_entries import (
    PADDING,
    Broadcast,
    Tangent,
    add,
    add_all,
    bounded,
    densify,
    expand_broadcast,
    flat,
    index_is_known,
    map_entries,
    materialize,
    merge_entries,
    pad_rows,
    scale_entries,
    with_entry_axis,
    zero,
)

# Structural primitives whose output elements are copies of operand elements (or padding zeros).
MOVES = (structural.broadcast_in_dim_p, structural.reshape_p, structural.transpose_p, structural.slice_p,
         structural.unslice_p, structural.concatenate_p, indexing.gather_p)


def identity_seed_program(derivative: Program, num_primals: int, seed_avals, name: str = "jacfwd") -> Program:
    """The jvp program run over the identity seeds, without materialising them.

    `derivative` is a jvp program (inputs: `num_primals` primals, then one tangent per seed aval;
    outputs: the primal outputs, then their tangents). The result takes the primals and returns the
    primal outputs, then each output tangent as (n, *shape) rows, n the total size of `seed_avals`.

    >>> from adarray.core.types import Aval
    >>> from adarray.transforms.jvp import jvp_program
    >>> program, _, _ = trace_program(lambda x: reduce_sum(ew.mul(x, x), (0,)), [Aval((3,), "float64")])
    >>> print(identity_seed_program(jvp_program(program, [True]), 1, [Aval((3,), "float64")]))  # doctest: +SKIP
    { lambda a:f64[3] .  b:f64[3] = mul a a  c:f64[] = reduce[axes=(0,), op=add] b  d:f64[3] = add a a  in (c, d) }
    """
    size = sum(a.size for a in seed_avals)
    n_out = len(derivative.outputs) // 2

    def run(*primals):
        env = {id(var): value for var, value in zip(derivative.inputs, primals)}
        offset = 0
        for var, aval in zip(derivative.inputs[num_primals:], seed_avals):
            index = offset + np.arange(aval.size, dtype=np.int64).reshape((1,) + aval.shape)
            env[id(var)] = Tangent(aval, np.ones((1,) + aval.shape, aval.dtype), index, 1)
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


# --- the interpreter -------------------------------------------------------------------------------------------


class _Interpreter:
    def __init__(self, size):
        self.size = size

    def run(self, program, env):
        for eqn in program.eqns:
            values = [_read(env, a) for a in eqn.inputs]
            if not any(isinstance(v, Tangent) for v in values):
                outs = eqn.prim.bind(*values, **eqn.params)
            else:
                rule = RULES.get(eqn.prim)
                outs = rule(self, eqn, values) if rule is not None else None
                if outs is None:
                    outs = self.fallback(eqn, values)
                elif isinstance(outs, Tangent):
                    outs = bounded(outs, self.size)
            for var, value in zip(eqn.outputs, outs if eqn.prim.multiple_results else [outs]):
                env[id(var)] = value

    def fallback(self, eqn, values):
        """Materialise the tangents and apply the primitive's batching rule (what vmap does)."""
        flags = tuple(isinstance(v, Tangent) for v in values)
        args = [materialize(v, self.size) if flag else v for v, flag in zip(values, flags)]
        outs, out_flags = eqn.prim.batch(args, flags, self.size, **eqn.params)
        if not eqn.prim.multiple_results:
            outs, out_flags = [outs], [out_flags]
        wrapped = [Tangent(var.aval, out, None, self.size) if flag else out
                   for var, out, flag in zip(eqn.outputs, outs, out_flags)]
        return wrapped if eqn.prim.multiple_results else wrapped[0]

    def operands(self, atoms, values):
        """The operands as Tangents (zero literals become zero tangents), or None if a non-zero primal
        operand makes the operation affine rather than linear."""
        result = []
        for atom, value in zip(atoms, values):
            if isinstance(value, Tangent):
                result.append(value)
            elif _is_zero_literal(atom):
                result.append(zero(atom.aval, self.size))
            else:
                return None
        return result


def _apply(interp, prim, params, operands, out_shape, dtype):
    """The rule of `prim` on `operands` (tangents or primal values) as if an equation of the jvp program."""
    inputs = tuple(Var(v.aval if isinstance(v, Tangent) else aval_of_value(v)) for v in operands)
    eqn = Eqn(prim, inputs, dict(params), (Var(Aval(tuple(out_shape), dtype)),))
    out = RULES[prim](interp, eqn, list(operands))
    return out if out is not None else interp.fallback(eqn, list(operands))


def _uniform(factor):
    """The constant c of a factor that is c everywhere (None: 1), or None if it is not known to be."""
    if factor is None:
        return 1.0
    if isinstance(factor, np.ndarray) and factor.size and np.all(factor == factor.flat[0]):
        return factor.flat[0]
    return None


# --- rules: linear maps ----------------------------------------------------------------------------------------


def _linear_sum(interp, eqn, values):
    """add, sub: the entries of both (the second negated for sub)."""
    operands = interp.operands(eqn.inputs, values)
    if operands is None or any(t.aval.shape != eqn.outputs[0].aval.shape for t in operands):
        return None
    first, second = operands
    if eqn.prim is ew.sub_p:
        second = _neg(interp, eqn, [second])
    return add(first, second, interp.size)


def _neg(interp, eqn, values):
    (tangent,) = values
    if not tangent.lazies:
        return map_entries(tangent, eqn.outputs[0].aval, ew.neg)
    minus_one = np.broadcast_to(np.array(-1, tangent.aval.dtype), tangent.aval.shape)
    return scale_entries(tangent, minus_one, ew.mul, interp.size)


def _convert(interp, eqn, values):
    dtype = eqn.params["dtype"]
    return map_entries(flat(values[0], interp.size), eqn.outputs[0].aval, lambda v: ew.convert(v, dtype))


def _scaled(interp, eqn, values):
    """mul, safe_mul and div by a primal value: V times the factor (given the entry axis)."""
    flags = [isinstance(v, Tangent) for v in values]
    position = flags.index(True)
    aval = eqn.outputs[0].aval
    if sum(flags) != 1 or (eqn.prim is ew.div_p and position != 0) or values[position].aval.shape != aval.shape:
        return None
    tangent, factor = values[position], values[1 - position]
    if tangent.is_zero:
        return zero(aval, interp.size)
    if eqn.prim is ew.safe_mul_p:  # safe_mul(f * b, c) is not f * safe_mul(b, c) where c is infinite
        tangent = flat(tangent, interp.size)
    binder = {ew.mul_p: ew.mul, ew.safe_mul_p: ew.safe_mul, ew.div_p: ew.div}[eqn.prim]
    return scale_entries(tangent, factor, binder, interp.size, first=position == 0)


def _select(interp, eqn, values):
    if isinstance(values[0], Tangent):
        return None
    branches = interp.operands(eqn.inputs[1:], values[1:])
    aval = eqn.outputs[0].aval
    if branches is None or any(t.aval.shape != aval.shape for t in branches):
        return None
    predicate, total = values[0], zero(aval, interp.size)
    for side, tangent in enumerate(branches):
        tangent = flat(tangent, interp.size)
        if tangent.value is None:
            continue
        spread = with_entry_axis(predicate, tangent.rank)
        nothing = np.broadcast_to(np.zeros((), aval.dtype), (tangent.rank,) + aval.shape)
        picked = ew.select(spread, tangent.value, nothing) if side == 0 else ew.select(spread, nothing, tangent.value)
        total = add(total, Tangent(aval, picked, tangent.index, tangent.rank), interp.size)
    return total


# --- rules: structural moves -----------------------------------------------------------------------------------


def _moved_index(eqn, operands, tangents, rank):
    """P of the result of a move, when every operand's P is a constant: the primitive applied to
    element ids (0 for padding), then each entry row's P read at those ids (PADDING where padded)."""
    args, tables, offset = [], [np.full((rank, 1), PADDING, np.int64)], 1
    for k, (atom, value) in enumerate(zip(eqn.inputs, operands)):
        if k in tangents:
            aval = tangents[k].aval
            args.append(np.arange(offset, offset + aval.size, dtype=np.int64).reshape(aval.shape))
            table = tangents[k].index.reshape(tangents[k].rank, -1)
            if tangents[k].rank < rank:
                table = np.concatenate([table, np.full((rank - tangents[k].rank, aval.size), PADDING, np.int64)])
            tables.append(table)
            offset += aval.size
        elif k == 0 or eqn.prim is structural.concatenate_p:
            args.append(np.zeros(atom.aval.shape, np.int64))  # a zero operand (concatenate) has no entries
        else:
            args.append(np.asarray(value))
    ids = np.asarray(evaluate(eqn.prim, args, eqn.params))
    return np.concatenate(tables, axis=1)[:, ids.ravel()].reshape((rank,) + ids.shape)


def _move(interp, eqn, values):
    """broadcast_in_dim, reshape, transpose, slice, unslice, concatenate, gather: V by the batching rule,
    with the operands' entries padded to a common count; P the same way (NumPy on constant indices)."""
    prim = eqn.prim
    moved = (range(len(values)) if prim is structural.concatenate_p else [0])
    if any(isinstance(v, Tangent) for k, v in enumerate(values) if k not in moved):
        return None  # a tangent index (never in a jvp program)
    if prim is structural.concatenate_p:
        operands = interp.operands(eqn.inputs, values)
        if operands is None:
            return None
    else:
        operands = list(values)
    aval = eqn.outputs[0].aval
    if prim is structural.transpose_p and operands[0].lazies:
        return _transpose_lazies(interp, eqn, operands[0])
    if prim is structural.broadcast_in_dim_p and not operands[0].is_zero:
        tangent = operands[0]
        entries = tangent.rank if tangent.value is not None else interp.size
        if tangent.lazies or entries * aval.size > interp.size:  # expanded, more entries than seeds
            dims = tuple(eqn.params["dims"])
            kept = [a for a, d in enumerate(dims) if tangent.aval.shape[a] == aval.shape[d]]
            if len(kept) < len(dims) and not tangent.lazies:  # size-1 axes stretched: the inner without them
                shape = tuple(tangent.aval.shape[a] for a in kept)
                tangent, dims = _apply(interp, reshape_p, {"shape": shape}, [tangent], shape,
                                       tangent.aval.dtype), tuple(dims[a] for a in kept)
            return Tangent(aval, None, None, 0, [Broadcast(None, tangent, dims)])
    operands = [flat(v, interp.size) if isinstance(v, Tangent) else v for v in operands]
    tangents = {k: operands[k] for k in moved if operands[k].value is not None}
    if not tangents:
        return zero(aval, interp.size)
    if any(t.dense for t in tangents.values()):
        tangents = {k: densify(t, interp.size) for k, t in tangents.items()}
    rank = max(t.rank for t in tangents.values())
    dense = any(t.dense for t in tangents.values())

    def lead(k, which):
        if k in tangents:
            return pad_rows(getattr(tangents[k], which), tangents[k].rank, rank)
        if k in moved:  # a zero tangent among a concatenation's operands
            atom = eqn.inputs[k]
            return np.zeros((rank,) + atom.aval.shape, atom.aval.dtype if which == "value" else np.int64)
        return operands[k]

    flags = tuple(k in moved for k in range(len(operands)))

    def batched(which):
        out, _ = eqn.prim.batch([lead(k, which) for k in range(len(operands))], flags, rank, **eqn.params)
        return out

    value = batched("value")
    if dense:
        return Tangent(aval, value, None, rank)
    constant = all(index_is_known(t.index) for t in tangents.values()) and all(
        isinstance(a, Literal) for k, a in enumerate(eqn.inputs) if k not in moved)
    index = _moved_index(eqn, operands, tangents, rank) if constant else batched("index")
    return Tangent(aval, value, index, rank)


def _transpose_lazies(interp, eqn, tangent: Tangent) -> Tangent:
    """transpose(factor * broadcast(inner)) = transpose(factor) * broadcast(inner'), the inner transposed only
    when its axes change order: the broadcast stays lazy."""
    perm = tuple(eqn.params["perm"])
    aval = eqn.outputs[0].aval
    entries = Tangent(tangent.aval, tangent.value, tangent.index, tangent.rank)
    total = _move(interp, eqn, [entries]) if entries.value is not None else zero(aval, interp.size)
    lazies = []
    for lazy in tangent.lazies:
        dims = [perm.index(d) for d in lazy.dims]
        order = tuple(int(a) for a in np.argsort(dims))
        inner = lazy.inner
        if order != tuple(range(len(dims))):
            inner = _apply(interp, transpose_p, {"perm": order}, [inner],
                           tuple(inner.aval.shape[a] for a in order), inner.aval.dtype)
        factor = None if lazy.factor is None else (
            np.transpose(lazy.factor, perm) if isinstance(lazy.factor, np.ndarray) else transpose(lazy.factor, perm))
        lazies.append(Broadcast(factor, inner, sorted(dims)))
    return add(total, Tangent(aval, None, None, 0, lazies), interp.size)


# --- rules: sums and contractions ------------------------------------------------------------------------------


def _constant_axes(index, axes):
    """The axes (of the unbatched shape) along which a constant P does not change."""
    if not index_is_known(index):
        return []
    return [a for a in axes if index.size == 0 or np.all(index == index.take([0], axis=a + 1))]


def _arrange(x, letters: str, target: str, shape):
    """x (axes named by `letters`, a subset of `target`'s) laid out along `target` (of `shape`),
    broadcast along the letters x lacks; NumPy for constants."""
    order = sorted(range(len(letters)), key=lambda k: target.index(letters[k]))
    if index_is_known(x):
        view = [shape[p] if c in letters else 1 for p, c in enumerate(target)]
        return np.broadcast_to(x.transpose(order).reshape(view), shape)
    dims = tuple(sorted(target.index(c) for c in letters))
    return broadcast_in_dim(transpose(x, tuple(order)), tuple(shape), dims)


def _fold_entries(value, index, rank, letters, var, out, out_shape, sizes):
    """V with letters 'R' + var + out, P with 'R' + its letters: both as (R * |var|, *out_shape)."""
    entries = rank * int(np.prod([sizes[c] for c in var], dtype=np.int64))
    full = (rank,) + tuple(sizes[c] for c in var) + tuple(out_shape)
    target = "@" + var + out
    index = _arrange(index, letters, target, full)
    shape = (entries,) + tuple(out_shape)
    index = index.reshape(shape) if index_is_known(index) else reshape(index, shape)
    return reshape(value, (entries,) + tuple(out_shape)), index, entries


def _take_first(index, axes):
    """A constant P without `axes` (along which it is constant)."""
    return index[tuple(0 if d - 1 in axes else slice(None) for d in range(index.ndim))]


def _entries(tangent: Tangent, rows) -> Tangent:
    """The tangent's entries `rows` (a NumPy array of entry numbers) alone."""
    value = tangent.value[rows] if isinstance(tangent.value, np.ndarray) else gather(tangent.value, (("array",),),
                                                                                      [rows])
    return Tangent(tangent.aval, value, tangent.index[rows], len(rows))


def _reduce(interp, eqn, values):
    if eqn.params["op"] != "add":
        return None
    (tangent,) = values
    axes, aval = tuple(eqn.params["axes"]), eqn.outputs[0].aval
    if tangent.is_zero or tangent.aval.size == 0:  # an empty operand sums to zero
        return zero(aval, interp.size)
    if tangent.lazies:
        entries = Tangent(tangent.aval, tangent.value, tangent.index, tangent.rank)
        parts = [_reduce(interp, eqn, [entries])] if entries.value is not None else []
        parts += [_reduce_broadcast(interp, eqn, lazy, tangent.aval, axes) for lazy in tangent.lazies]
        return add_all(parts, aval, interp.size)
    if tangent.dense:
        return Tangent(aval, reduce_sum(tangent.value, tuple(a + 1 for a in axes)), None, tangent.rank)
    if index_is_known(tangent.index) and tangent.rank > 1:
        # Entries whose seed does not change along the summed axes are summed; only the others multiply.
        first = tangent.index[tuple(slice(0, 1) if d - 1 in axes else slice(None) for d in range(1 + len(
            tangent.aval.shape)))]
        steady = np.all((tangent.index == first).reshape(tangent.rank, -1), axis=1)
        if steady.any() and not steady.all():
            return add_all([_reduce(interp, eqn, [_entries(tangent, rows)])
                            for rows in (np.flatnonzero(steady), np.flatnonzero(~steady))], aval, interp.size)
    constant = _constant_axes(tangent.index, axes)
    var = [a for a in axes if a not in constant]
    value = reduce_sum(tangent.value, tuple(a + 1 for a in constant)) if constant else tangent.value
    index = _take_first(tangent.index, constant) if constant else tangent.index
    if not var:
        return Tangent(aval, value, index, tangent.rank)
    # The summed positions along `var` become entries: letters name the remaining axes.
    remaining = [d for d in range(tangent.aval.ndim) if d not in constant]
    letters = "".join(chr(ord("a") + d) for d in remaining)
    var_letters = "".join(chr(ord("a") + d) for d in var)
    out_letters = "".join(c for c in letters if c not in var_letters)
    sizes = {chr(ord("a") + d): tangent.aval.shape[d] for d in range(tangent.aval.ndim)}
    value = _arrange(value, "@" + letters, "@" + var_letters + out_letters,
                     (tangent.rank,) + tuple(sizes[c] for c in var_letters + out_letters))
    value, index, entries = _fold_entries(value, index, tangent.rank, "@" + letters, var_letters, out_letters,
                                          aval.shape, sizes)
    return merge_entries(Tangent(aval, value, index, entries))


def _reduce_broadcast(interp, eqn, lazy: Broadcast, in_aval, axes) -> Tangent:
    """A sum of factor * broadcast(inner): over broadcast axes only, the factor is summed; when that
    leaves no broadcast, the result is the inner tangent times the summed factor."""
    aval, size = eqn.outputs[0].aval, interp.size
    if any(a in lazy.dims for a in axes):
        stretched = lazy.inner.aval.shape != tuple(in_aval.shape[d] for d in lazy.dims)  # size-1 axes broadcast
        if lazy.factor is None or stretched or in_aval.ndim > 26:
            return _reduce(interp, eqn, [expand_broadcast(lazy, in_aval, size)])
        # sum over axes of the inner of factor * broadcast(inner): a contraction of the factor with the inner
        # (its entries on the inner's shape: never broadcast to the factor's shape first)
        names = "".join(chr(ord("a") + d) for d in range(in_aval.ndim))
        spec = (names + "," + "".join(names[d] for d in lazy.dims) + "->"
                + "".join(c for d, c in enumerate(names) if d not in axes))
        return _apply(interp, einsum_p, {"spec": spec}, [lazy.factor, lazy.inner], aval.shape, aval.dtype)
    factor = lazy.factor if lazy.factor is not None else np.broadcast_to(np.ones((), in_aval.dtype), in_aval.shape)
    summed = reduce_sum(factor, axes)
    remaining = [d for d in range(in_aval.ndim) if d not in axes]
    dims = tuple(remaining.index(d) for d in lazy.dims)
    if dims == tuple(range(aval.ndim)) and lazy.inner.aval.shape == aval.shape:
        return scale_entries(lazy.inner, summed, ew.mul, size)
    return Tangent(aval, None, None, 0, [Broadcast(summed, lazy.inner, dims)])


def _einsum(interp, eqn, values):
    """einsum of one tangent operand with a primal one: letters contracted where P is constant sum V;
    the other contracted letters become entries."""
    flags = [isinstance(v, Tangent) for v in values]
    if sum(flags) != 1:
        return None
    (sa, sb), so = parse_spec(eqn.params["spec"])
    position = flags.index(True)
    if values[position].lazies:
        return _einsum_lazies(interp, eqn, values, position)
    tangent, other = values[position], values[1 - position]
    letters, other_letters = (sa, sb) if position == 0 else (sb, sa)
    aval = eqn.outputs[0].aval
    if tangent.value is None or tangent.aval.size == 0:  # an empty operand contracts to zero
        return zero(aval, interp.size)
    free = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if c not in sa + sb + so)
    if tangent.dense:
        return Tangent(aval, einsum(f"{free}{letters},{other_letters}->{free}{so}", tangent.value, other), None,
                       tangent.rank)
    contracted = [d for d, c in enumerate(letters) if c not in so]
    constant = _constant_axes(tangent.index, contracted)
    var = "".join(letters[d] for d in contracted if d not in constant)
    value = einsum(f"{free}{letters},{other_letters}->{free}{var}{so}", tangent.value, other)
    index = _take_first(tangent.index, constant) if constant else tangent.index
    kept = "".join(c for d, c in enumerate(letters) if d not in constant)
    sizes = {c: n for c, n in zip(letters, tangent.aval.shape)}
    sizes.update({c: n for c, n in zip(so, aval.shape)})
    index_letters = free + kept
    if not var:
        index = _arrange(index, index_letters, free + so, (tangent.rank,) + aval.shape)
        return Tangent(aval, value, index, tangent.rank)
    value, index, entries = _fold_entries(value, index, tangent.rank, index_letters.replace(free, "@"), var, so,
                                          aval.shape, sizes)
    return merge_entries(Tangent(aval, value, index, entries))


def _einsum_lazies(interp, eqn, values, position) -> Tangent:
    """einsum(other, c * broadcast(inner)) with a uniform factor c and broadcast letters that only the output
    has: c * broadcast(einsum(other, inner)), contracted on the inner's small shape (GMM: the means' tangent,
    broadcast over the points, meets the lower triangle once per component, not once per point)."""
    (sa, sb), so = parse_spec(eqn.params["spec"])
    letters, other_letters = (sa, sb) if position == 0 else (sb, sa)
    tangent, other = values[position], values[1 - position]
    aval = eqn.outputs[0].aval
    total, rest = zero(aval, interp.size), []
    for lazy in tangent.lazies:
        scale = _uniform(lazy.factor)
        spread = [c for d, c in enumerate(letters) if d not in lazy.dims]
        inner_letters = "".join(letters[d] for d in lazy.dims)
        if scale is None or any(c not in so or c in other_letters for c in spread) or lazy.inner.aval.shape != tuple(
                tangent.aval.shape[d] for d in lazy.dims):
            rest.append(lazy)
            continue
        out_letters = "".join(c for c in so if c not in spread)
        spec = f"{other_letters},{inner_letters}->{out_letters}" if position == 1 else \
            f"{inner_letters},{other_letters}->{out_letters}"
        operands = [other, lazy.inner] if position == 1 else [lazy.inner, other]
        out_shape = tuple(aval.shape[so.index(c)] for c in out_letters)
        inner = _apply(interp, eqn.prim, {**eqn.params, "spec": spec}, operands, out_shape, aval.dtype)
        factor = None if scale == 1 else np.broadcast_to(np.array(scale, aval.dtype), aval.shape)
        dims = tuple(so.index(c) for c in out_letters)
        total = add(total, Tangent(aval, None, None, 0, [Broadcast(factor, inner, dims)]), interp.size)
    plain = Tangent(tangent.aval, tangent.value, tangent.index, tangent.rank, rest)
    if not plain.is_zero:
        operands = list(values)
        operands[position] = flat(plain, interp.size)
        total = add(total, _einsum(interp, eqn, operands), interp.size)
    return total


# The rules, keyed by the primitive object; the upper layers register theirs with `register` (control
# flow's fold, in control/loops.py).
RULES = {
    ew.add_p: _linear_sum, ew.sub_p: _linear_sum, ew.neg_p: _neg, ew.convert_p: _convert,
    ew.mul_p: _scaled, ew.safe_mul_p: _scaled, ew.div_p: _scaled,
    ew.select_p: _select,
    **{prim: _move for prim in MOVES},
    reductions.reduce_p: _reduce, einsum_p: _einsum,
}


def register(prim, rule) -> None:
    """`rule(interp, eqn, values)` becomes `prim`'s rule: the equation's outputs (Tangents or values), or
    None for the materialised fallback."""
    RULES[prim] = rule
