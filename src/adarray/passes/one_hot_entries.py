"""The representation of jacfwd's symbolic tangents (passes/one_hot.py): stacks of one-hot entries.

A Tangent over n seeds holds entries V (R, *shape) at seed indices P (R, *shape), or dense rows (P None),
plus lazy broadcasts (Broadcast). Here: sums of tangents (entries with equal P rows merged, padding rows
dropped), scaling, lazy expansion, and the assembly of the (n, *shape) rows jacfwd returns.

>>> from adarray.core.types import Aval
>>> seed = Tangent(Aval((3,), "float64"), np.ones((1, 3)), np.arange(3).reshape(1, 3), 1)
>>> add(seed, seed, 3).rank   # the same seeds: one entry, V = 2
1
"""
from __future__ import annotations

import numpy as np

from ..primitives import elementwise as ew
from ..primitives.indexing import gather, scatter
from ..primitives.rules import aval_of_value, broadcast_batch
from ..primitives.structural import broadcast_in_dim, concatenate, reshape, slice_array

# Rows from at most this many entries per element are selected (no scatter; vmap keeps them small).
MASKED_ENTRIES = 4

# Rows with at most this many entries per element and seed are assembled by as many plain assignments;
# more take one scatter-add.
MAX_LAYERS = 4

# The seed index of a padding entry (value 0: the zeros a pad, a zero operand of a concatenation or a short
# stack of entries add). It matches no seed; an entry row that is padding everywhere is dropped (merge_entries).
PADDING = -1

class Tangent:
    """A tangent of unbatched type `aval` over `size` seeds: entries `value` (R, *shape) at seed
    indices `index` (R, *shape; None for dense rows, R = size; value None: no entries), plus the
    `lazies`, broadcast tangents kept unexpanded (Broadcast)."""

    __slots__ = ("aval", "value", "index", "rank", "lazies")

    def __init__(self, aval, value, index, rank: int, lazies=()):
        self.aval, self.value, self.index, self.rank = aval, value, index, rank
        self.lazies = tuple(lazies)

    @property
    def is_zero(self) -> bool:
        return self.value is None and not self.lazies

    @property
    def dense(self) -> bool:
        return self.index is None and self.value is not None


class Broadcast:
    """factor * broadcast_in_dim(inner, shape, dims) (factor None: 1). Expanded, the inner tangent's
    entries would be repeated along the new axes (a scalar that depends on every seed, broadcast to b
    elements: n * b entries); unexpanded, a later sum over those axes sums only the primal factor
    (dF~'s fusion of reductions of broadcasts): sum_i g_i * dL = dL * sum_i g_i."""

    __slots__ = ("factor", "inner", "dims")

    def __init__(self, factor, inner: Tangent, dims):
        self.factor, self.inner, self.dims = factor, inner, tuple(dims)


def index_is_known(index) -> bool:
    return isinstance(index, np.ndarray)


# --- the representation ----------------------------------------------------------------------------------------


def zero(aval, size):
    return Tangent(aval, None, None, 0)


def expand_broadcast(lazy: Broadcast, aval, size: int) -> Tangent:
    """A Broadcast as entries: the inner entries broadcast, times the factor."""
    inner = flat(lazy.inner, size)
    if inner.value is None:
        return zero(aval, size)
    shape, dims = (inner.rank,) + aval.shape, (0,) + tuple(d + 1 for d in lazy.dims)
    value = broadcast_in_dim(inner.value, shape, dims)
    if lazy.factor is not None:
        value = ew.mul(value, with_entry_axis(lazy.factor, inner.rank))
    if inner.dense:
        return Tangent(aval, value, None, size)
    index = inner.index
    if index_is_known(index):
        view = [inner.rank] + [1] * aval.ndim
        for axis, d in enumerate(lazy.dims):
            view[d + 1] = index.shape[axis + 1]
        index = np.broadcast_to(index.reshape(view), shape)
    else:
        index = broadcast_in_dim(index, shape, dims)
    return Tangent(aval, value, index, inner.rank)


def flat(tangent: Tangent, size: int) -> Tangent:
    """The tangent with its lazy broadcasts expanded into entries."""
    if not tangent.lazies:
        return tangent
    entries = Tangent(tangent.aval, tangent.value, tangent.index, tangent.rank)
    expanded = [expand_broadcast(lazy, tangent.aval, size) for lazy in tangent.lazies]
    return add_all([entries] + expanded, tangent.aval, size)


def materialize(tangent: Tangent, size: int):
    """The (n, *shape) rows of a tangent: V itself when dense or when its entries are the seeds in order,
    else the scatter-add D[P[r, i], i] += V[r, i]."""
    tangent = flat(tangent, size)
    aval = tangent.aval
    if tangent.value is None:
        return np.broadcast_to(np.zeros((), aval.dtype), (size,) + aval.shape)
    if tangent.dense:
        return tangent.value
    index = tangent.index
    if index_is_known(index):
        index = np.where(index == PADDING, 0, index)  # padding entries hold 0: added anywhere, they add nothing
    if index_is_known(index) and tangent.rank == size and np.array_equal(
            index, np.broadcast_to(np.arange(size).reshape((size,) + (1,) * aval.ndim), index.shape)):
        return tangent.value
    if tangent.rank <= MASKED_ENTRIES:
        return _masked(tangent, size)
    # Trailing axes along which a constant P does not change are sliced whole: one index per row of them.
    lead = aval.ndim
    while lead > 0 and index_is_known(index) and aval.shape[lead - 1] > 0 and np.all(
            index == index.take([0], axis=lead)):
        lead -= 1
    if lead < aval.ndim:
        index = index[(slice(None),) * (1 + lead) + (0,) * (aval.ndim - lead)]
    shape = (tangent.rank,) + aval.shape[:lead]
    grids = [np.broadcast_to(np.arange(n).reshape([n if e == d else 1 for e in range(len(shape))]), shape)
             for d, n in enumerate(shape) if d > 0]
    zeros = np.broadcast_to(np.zeros((), aval.dtype), (size,) + aval.shape)
    spec = (("array",),) * (1 + lead) + tuple(("slice", 0, n, 1) for n in aval.shape[lead:])
    # Distinct seed indices in every element's entries: plain assignment (much faster than a scatter-add).
    distinct = index_is_known(index) and (tangent.rank == 1 or not np.any(np.diff(np.sort(index, axis=0), axis=0) == 0))
    if index_is_known(index) and not distinct:
        layers = _layers(index)
        if len(layers) <= MAX_LAYERS:
            return _layered(tangent.value, index, layers, zeros, spec, lead)
    return scatter(zeros, spec, [index, *grids], tangent.value, "set" if distinct else "add")


def _layers(index):
    """The entries of a constant P split into layers in which every element's seeds are distinct: layer l
    holds each element's l-th entry for a seed (as positions of P: tuples of index arrays)."""
    order = np.argsort(index, axis=0, kind="stable")
    ordered = np.take_along_axis(index, order, axis=0)
    rows = np.arange(index.shape[0]).reshape((-1,) + (1,) * (index.ndim - 1))
    starts = np.where(np.concatenate([np.ones_like(ordered[:1], bool), ordered[1:] != ordered[:-1]]), rows, 0)
    occurrence = np.empty_like(index)
    np.put_along_axis(occurrence, order, rows - np.maximum.accumulate(starts, axis=0), axis=0)
    return [np.nonzero(occurrence == level) for level in range(int(occurrence.max()) + 1)]


def _layered(value, index, layers, zeros, spec, lead: int):
    """The scatter-add of V at P as a sum of plain assignments, one per layer (_layers): NumPy's fancy
    assignment, not its much slower np.add.at."""
    total = None
    for where in layers:
        picked = gather(value, spec, list(where))
        part = scatter(zeros, spec, [index[where], *where[1:]], picked, "set")
        total = part if total is None else ew.add(total, part)
    return total


def _row(x, r: int):
    """x[r] of a constant or traced (R, ...) array."""
    if isinstance(x, np.ndarray):
        return x[r]
    shape = aval_of_value(x).shape
    piece = slice_array(x, (r,) + (0,) * (len(shape) - 1), (r + 1,) + tuple(shape[1:]), (1,) * len(shape))
    return reshape(piece, tuple(shape[1:]))


def _masked(tangent: Tangent, size: int):
    """Rows from few entries without a scatter: the sum over r of (z == P[r]) * V[r] (as the identity
    seeds would give, 0 * inf included)."""
    aval = tangent.aval
    shape = (size,) + aval.shape
    dims = tuple(range(1, len(shape)))
    seeds = broadcast_in_dim(np.arange(size, dtype=np.int64), shape, (0,))
    total = None
    for r in range(tangent.rank):
        hit = ew.convert(ew.eq(seeds, broadcast_in_dim(_row(tangent.index, r), shape, dims)), aval.dtype)
        part = ew.mul(hit, broadcast_in_dim(_row(tangent.value, r), shape, dims))
        total = part if total is None else ew.add(total, part)
    return total


def densify(tangent: Tangent, size: int) -> Tangent:
    """The entries as dense rows (the lazies kept)."""
    if tangent.dense or tangent.value is None:
        return tangent
    entries = Tangent(tangent.aval, tangent.value, tangent.index, tangent.rank)
    return Tangent(tangent.aval, materialize(entries, size), None, size, tangent.lazies)


def bounded(tangent: Tangent, size: int) -> Tangent:
    """Materialised when it has more entries per element than there are seeds (after merging duplicates)."""
    if not tangent.dense and tangent.rank > size:
        tangent = merge_entries(tangent)
    return densify(tangent, size) if not tangent.dense and tangent.rank > size else tangent


def _same_index(a, b) -> bool:
    if a is b:
        return True
    return index_is_known(a) and index_is_known(b) and a.shape == b.shape and np.array_equal(a, b)


def pad_rows(value, rank: int, target: int):
    """V (rank, ...) with zero entries appended up to `target` rows."""
    if rank == target:
        return value
    shape = aval_of_value(value).shape
    filler = np.zeros((target - rank,) + tuple(shape[1:]), aval_of_value(value).dtype)
    return concatenate([value, filler], 0)


def _stack(values, axis=0):
    if all(isinstance(v, np.ndarray) for v in values):
        return np.concatenate(values, axis)
    return concatenate(values, axis)


def add(a: Tangent, b: Tangent, size: int) -> Tangent:
    """The sum of two tangents of the same aval."""
    lazies = _merge_lazies(a.lazies + b.lazies, a.aval)
    if a.value is None:
        return Tangent(b.aval, b.value, b.index, b.rank, lazies)
    if b.value is None:
        return Tangent(a.aval, a.value, a.index, a.rank, lazies)
    if a.dense or b.dense or a.rank + b.rank > size and not _same_index(a.index, b.index):
        return Tangent(a.aval, ew.add(densify(a, size).value, densify(b, size).value), None, size, lazies)
    if _same_index(a.index, b.index):
        return Tangent(a.aval, ew.add(a.value, b.value), a.index, a.rank, lazies)
    if index_is_known(a.index) and index_is_known(b.index):
        return _merged_blocks(a.aval, [(a.value, a.index), (b.value, b.index)], lazies)
    return Tangent(a.aval, _stack([a.value, b.value]), _stack([a.index, b.index]), a.rank + b.rank, lazies)


def add_all(tangents, aval, size: int) -> Tangent:
    """The sum of several tangents of `aval`: the entries of all the parts with constant P merged and stacked
    at once (adding them two by two would copy the growing stack once per part)."""
    tangents = [t for t in tangents if not t.is_zero]
    lazies = _merge_lazies(tuple(lazy for t in tangents for lazy in t.lazies), aval)
    known = [t for t in tangents if t.value is not None and not t.dense and index_is_known(t.index)]
    total = zero(aval, size)
    if len(known) > 1:
        total = _merged_blocks(aval, [(t.value, t.index) for t in known], ())
        if total.rank > size:
            total = densify(total, size)
    elif known:
        total = Tangent(aval, known[0].value, known[0].index, known[0].rank)
    for t in tangents:
        if t.value is not None and not any(t is k for k in known):
            total = add(total, Tangent(aval, t.value, t.index, t.rank), size)
    return Tangent(aval, total.value, total.index, total.rank, lazies)


def merge_entries(tangent: Tangent) -> Tangent:
    """The entries with one row per distinct seed-index row (_merged_blocks)."""
    if tangent.value is None or tangent.dense or not index_is_known(tangent.index):
        return tangent
    return _merged_blocks(tangent.aval, [(tangent.value, tangent.index)], tangent.lazies)


def _merged_blocks(aval, blocks, lazies) -> Tangent:
    """The entries of `blocks` ((V, P) pairs with constant P) stacked, with one row per distinct seed-index
    row: rows with the same P are added (a seed reached along several paths: GMM's means through the
    diagonal and the lower triangle), rows that are padding everywhere are dropped. Without this, every
    path's entry would be carried (and multiplied by later folds) to the end. Rows are compared whole, and
    the blocks are never stacked before merging (one copy of the merged rows only)."""
    ranks = [int(index.shape[0]) for _, index in blocks]
    owner = [(b, r) for b, rank in enumerate(ranks) for r in range(rank)]
    groups, position = [], {}
    if aval.size:
        for g, (b, r) in enumerate(owner):
            row = np.ascontiguousarray(blocks[b][1][r])
            if np.all(row == PADDING):
                continue
            key = row.tobytes()
            if key in position:
                groups[position[key]].append(g)
            else:
                position[key] = len(groups)
                groups.append([g])
    else:
        groups = [[g] for g in range(len(owner))]
    if len(groups) == len(owner):
        if len(blocks) == 1:
            return Tangent(aval, blocks[0][0], blocks[0][1], ranks[0], lazies)
        return Tangent(aval, _stack([v for v, _ in blocks]), _stack([p for _, p in blocks]), len(owner), lazies)
    if not groups:
        return Tangent(aval, None, None, 0, lazies)

    def take(ids):  # rows by global number: one slice or gather per run of rows from the same block
        pieces, run = [], []
        for g in ids:
            if run and owner[g][0] != owner[run[0]][0]:
                pieces.append(_take_rows(blocks[owner[run[0]][0]][0], [owner[h][1] for h in run]))
                run = []
            run.append(g)
        pieces.append(_take_rows(blocks[owner[run[0]][0]][0], [owner[h][1] for h in run]))
        return pieces[0] if len(pieces) == 1 else _stack(pieces)

    # Groups by decreasing size: those with more than t members are a prefix, so the t-th members of
    # each group are added by one gather of rows and one add, from the deepest level up.
    groups.sort(key=len, reverse=True)
    depth = len(groups[0])
    total = take([g[depth - 1] for g in groups if len(g) == depth])
    for level in range(depth - 2, -1, -1):
        covered = sum(len(g) > level + 1 for g in groups)
        head = ew.add(total, take([g[level] for g in groups[:covered]]))
        rest = [g[level] for g in groups[covered:] if len(g) == level + 1]
        total = _stack([head, take(rest)]) if rest else head
    index = np.stack([blocks[owner[g[0]][0]][1][owner[g[0]][1]] for g in groups])
    return Tangent(aval, total, index, len(groups), lazies)


def _take_rows(value, rows):
    """value[rows] along the entry axis: a slice when the rows are consecutive."""
    rows = np.asarray(rows, np.int64)
    if isinstance(value, np.ndarray):
        return value[rows]
    if len(rows) and np.array_equal(rows, np.arange(rows[0], rows[0] + len(rows))):
        shape = aval_of_value(value).shape
        if len(rows) == shape[0]:
            return value
        return slice_array(value, (int(rows[0]),) + (0,) * (len(shape) - 1),
                           (int(rows[0]) + len(rows),) + tuple(shape[1:]), (1,) * len(shape))
    return gather(value, (("array",),), [rows])


def _merge_lazies(lazies, aval):
    """Broadcasts of the same inner tangent along the same axes as one, their factors added (x * dx + dx * x
    makes two)."""
    merged = []
    for lazy in lazies:
        twin = next((k for k, m in enumerate(merged) if m.inner is lazy.inner and m.dims == lazy.dims), None)
        if twin is None:
            merged.append(lazy)
            continue
        ones = np.broadcast_to(np.ones((), aval.dtype), aval.shape)
        first, second = merged[twin].factor, lazy.factor
        merged[twin] = Broadcast(ew.add(ones if first is None else first, ones if second is None else second),
                                 lazy.inner, lazy.dims)
    return tuple(merged)


def map_entries(tangent: Tangent, aval, fn) -> Tangent:
    """fn applied to V (elementwise maps of the tangent; lazies expanded)."""
    if tangent.value is None:
        return Tangent(aval, None, None, 0)
    return Tangent(aval, fn(tangent.value), tangent.index, tangent.rank)


def scale_entries(tangent: Tangent, factor, binder, size: int, first: bool = True) -> Tangent:
    """binder(tangent, factor) (or binder(factor, tangent)) for a primal factor of the tangent's shape:
    the entries and the lazies' factors scaled."""
    def scale(value, spread):
        return binder(value, spread) if first else binder(spread, value)

    value = None if tangent.value is None else scale(tangent.value, with_entry_axis(factor, tangent.rank))
    lazies = []
    for lazy in tangent.lazies:
        current = lazy.factor if lazy.factor is not None else np.broadcast_to(
            np.ones((), tangent.aval.dtype), tangent.aval.shape)
        lazies.append(Broadcast(scale(current, factor), lazy.inner, lazy.dims))
    return Tangent(tangent.aval, value, tangent.index, tangent.rank, lazies)


def with_entry_axis(value, rank: int):
    """A primal value given the leading entry axis."""
    return broadcast_batch(value, rank)
