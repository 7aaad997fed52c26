"""Structural sparsity of Jacobians: index sets propagated through a program.

`jacobian_pattern(program, wrt, values)` gives, for every output of `program`, a boolean CSR matrix
with one row per output element and one column per element of the differentiated inputs (those
flagged in `wrt`, in order): entry (i, j) is set when output element i may depend on input element
j. Every value of the program carries such a matrix (its index sets, one row per element), pushed
equation by equation through one rule per primitive (`RULES`, keyed by the primitive object; `rule`
and `register` add one, from the primitive's own module when it lies above this one).

No numerical probing: the values of the differentiated inputs are never read, so an entry that is
zero only for some values (a product with a number that happens to be 0, the losing side of a
maximum) counts as non-zero, and the pattern is the same at every point. Values that do not depend
on the differentiated inputs at all (integer index arrays, constants, the other arguments) are
*known*: a rule may read them (a gather's indices, a select's predicate, a cond's branch index), and
the analysis records which program inputs it read (`Pattern.reads`) so that a cached pattern is
reused only while those inputs keep their values. Known values are computed lazily, only when a
rule asks for one.

Rule kinds, so most primitives need no hand-written rule:
  elementwise   the union of the operands' sets, element by element (broadcasting included)
  zero          piecewise-constant or integer results: no dependence
  move          each output element is a copy of one operand element (or a constant): the
                primitive's own implementation applied to element ids (reshape, transpose, slice,
                concatenate, broadcast, gather and scatter-set with known indices)
  reduce        the union over each reduced group; prefix: the union over each prefix of a scan
  einsum        union over the contracted letters, then placed along the output's letters
  matrix        linear algebra on stacks of matrices: every output of a matrix depends on all of it
  nested        cond (one branch when the index is known, else the union of all), fold (unrolled
                when short, else a fixed point over the iterations), while_loop and fixed_point
                (fixed points), custom rules (the user's rule), kernel (its scalar program)
`exact` marks the rules whose pattern equals the non-zeros of the Jacobian at generic values; the
others may add entries (a maximum's losing side, the branches of a select with an unknown
predicate). A missing rule raises UnsupportedError naming the primitive; `tests/test_sparsity.py`
demands a rule for every registered primitive.

    >>> from adarray.core.types import Aval
    >>> program, _, _ = trace_program(lambda x: x[1:] * x[:-1], [Aval((4,), "float64")])
    >>> jacobian_pattern(program, [True], [None]).outputs[0].toarray().astype(int)
    array([[1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..core.errors import IndexOutOfRangeError, UnsupportedError
from ..core.ir import Literal, Program
from ..core.primitive import REGISTRY
from ..core.types import is_float
from ..primitives import (
    arithmetic,
    eig,
    factorizations,
    fft,
    indexing,
    linalg,
    matrix_functions,
    scan,
    sort,
    spectral,
    sqrtm_logm,
    structural,
    sylvester,
    triangular,
)
from ..primitives import elementwise as ew
from ..primitives import reduce as reductions
from ..primitives.indexing import numpy_index
from ..primitives.linalg import parse_spec
from ..tracing import trace_program  # noqa: F401  (used by the doctest)
from ..tracing.eager import evaluate

# --- index sets: boolean CSR matrices, one row per element ----------------------------------------


def empty(rows: int, columns: int):
    return sp.csr_matrix((rows, columns), dtype=bool)


def identity_block(size: int, offset: int, columns: int):
    """Rows of the identity: element e depends on column offset + e."""
    return sp.csr_matrix((np.ones(size, bool), (np.arange(size), offset + np.arange(size))), shape=(size, columns))


def union(matrices):
    """The element-by-element union of index sets (None stands for no dependence)."""
    present = [m for m in matrices if m is not None]
    if not present:
        return None
    total = present[0]
    for matrix in present[1:]:
        total = total + matrix
    return total


def take_rows(blocks, ids, columns: int):
    """Rows of the stacked blocks picked by `ids` (0 is an empty row, then the blocks' rows from 1)."""
    stacked = sp.vstack([empty(1, columns)] + list(blocks), format="csr")
    return stacked[np.asarray(ids, np.int64).ravel()]


def group_matrix(groups, num_groups: int):
    """(num_groups, len(groups)) boolean: element e belongs to group groups[e]."""
    groups = np.asarray(groups, np.int64).ravel()
    return sp.csr_matrix((np.ones(groups.size, bool), (groups, np.arange(groups.size))),
                         shape=(num_groups, groups.size))


def reduced_groups(shape, axes):
    """For every element of `shape`, the index of its group when `axes` are reduced; and the count."""
    kept = [n if i not in axes else 1 for i, n in enumerate(shape)]
    count = int(np.prod([n for i, n in enumerate(shape) if i not in axes], dtype=np.int64))
    return np.broadcast_to(np.arange(count, dtype=np.int64).reshape(kept), shape).ravel(), count


def reduce_union(deps, shape, axes):
    """Index sets of the groups formed by reducing `axes` of a value of `shape`."""
    if deps is None:
        return None
    groups, count = reduced_groups(shape, axes)
    return group_matrix(groups, count) @ deps


def broadcast_rows(deps, shape, out_shape):
    """Index sets of a value of `shape` broadcast (NumPy's trailing alignment) to `out_shape`."""
    if deps is None or tuple(shape) == tuple(out_shape):
        return deps
    ids = np.broadcast_to(np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape), out_shape)
    return deps[ids.ravel()]


def spread(deps, out_size: int):
    """Every one of `out_size` elements depends on everything any row of `deps` depends on."""
    if deps is None:
        return None
    everything = group_matrix(np.zeros(deps.shape[0], np.int64), 1) @ deps
    return everything[np.zeros(out_size, np.int64)]


def closure(step):
    """I + S + S^2 + ...: what a loop-carried value may depend on after any number of iterations."""
    reach = (sp.identity(step.shape[0], dtype=bool, format="csr") + step).tocsr()
    while True:
        wider = (reach @ reach).tocsr()
        if wider.nnz == reach.nnz:
            return reach
        reach = wider


# --- what the analysis knows of each value --------------------------------------------------------


class Info:
    """One value: its index sets (`deps`, a CSR matrix or None for no dependence) and, when it does
    not depend on the differentiated inputs, `known`: its concrete value can be computed (lazily,
    by `value()`), and `source` names the program inputs it was computed from."""

    __slots__ = ("aval", "deps", "known", "source", "_compute", "_value")

    def __init__(self, aval, deps=None, known=False, compute=None, source=frozenset()):
        self.aval, self.deps, self.known, self.source = aval, deps, known, source
        self._compute, self._value = compute, None

    @staticmethod
    def constant(value, aval, source=frozenset()):
        info = Info(aval, known=True, source=source)
        info._value = np.asarray(value)
        return info

    def value(self):
        if self._value is None:
            self._value = np.asarray(self._compute())
            self._compute = None
        return self._value

    def without_deps(self):
        """The same value seen from an analysis with other columns: no dependence, known stays known."""
        if self.known:
            return self
        return Info(self.aval)


class Context:
    """One analysis: `columns` differentiated elements; `reads` collects the program inputs whose
    values a rule read (shared with nested analyses)."""

    def __init__(self, columns: int, reads: set):
        self.columns, self.reads = columns, reads

    def value(self, info: Info):
        self.reads.update(info.source)
        return info.value()

    def deps(self, info: Info):
        """The index sets of `info`, as a matrix (empty rows for no dependence)."""
        return info.deps if info.deps is not None else empty(info.aval.size, self.columns)


@dataclass
class Pattern:
    """The result: one boolean CSR matrix per output (None: no dependence), and the positions of the
    program inputs whose values were read."""

    outputs: list
    reads: frozenset

    def matrix(self, out_avals, columns: int):
        """All outputs stacked (rows in output order), as a boolean CSR matrix."""
        blocks = [m if m is not None else empty(a.size, columns) for m, a in zip(self.outputs, out_avals)]
        if not blocks:
            return empty(0, columns)
        return sp.vstack(blocks, format="csr") if len(blocks) > 1 else blocks[0].tocsr()


def jacobian_pattern(program: Program, wrt, values) -> Pattern:
    """The structural sparsity pattern of `program`'s Jacobian with respect to the inputs flagged in
    `wrt`. `values` gives the other inputs' concrete values (None where unknown); the flagged
    inputs' values are never read."""
    columns = sum(v.aval.size for v, w in zip(program.inputs, wrt) if w)
    context = Context(columns, set())
    infos, offset = [], 0
    for position, (var, flag, value) in enumerate(zip(program.inputs, wrt, values)):
        if flag:
            infos.append(Info(var.aval, identity_block(var.aval.size, offset, columns)))
            offset += var.aval.size
        elif value is not None:
            infos.append(Info.constant(value, var.aval, frozenset([position])))
        else:
            infos.append(Info(var.aval))
    outputs = analyze(program, infos, context)
    return Pattern([o.deps for o in outputs], frozenset(context.reads))


def analyze(program: Program, in_infos, context: Context) -> list:
    """Push index sets through `program`'s equations; one Info per output."""
    env = {id(var): info for var, info in zip(program.inputs, in_infos)}

    def read(atom):
        if isinstance(atom, Literal):
            return Info.constant(atom.value, atom.aval)
        return env[id(atom)]

    for eqn in program.eqns:
        infos = [read(a) for a in eqn.inputs]
        if all(info.known for info in infos):
            outs = _known_outputs(eqn, infos)
        else:
            results = rule_for(eqn.prim).apply(context, eqn, infos)
            outs = [Info(var.aval, deps if is_float(var.aval.dtype) else None)
                    for var, deps in zip(eqn.outputs, results)]
        for var, info in zip(eqn.outputs, outs):
            env[id(var)] = info
    return [read(a) for a in program.outputs]


def _known_outputs(eqn, infos):
    """Outputs of an equation on known values: known too, computed when first asked for."""
    results = []
    source = frozenset().union(*[info.source for info in infos])

    def compute_all():
        if not results:
            with np.errstate(all="ignore"):
                value = evaluate(eqn.prim, [info.value() for info in infos], eqn.params)
            results.extend(value if eqn.prim.multiple_results else [value])
        return results

    return [Info(var.aval, known=True, compute=lambda k=k: compute_all()[k], source=source)
            for k, var in enumerate(eqn.outputs)]


def local_dependence(context: Context, program: Program, in_infos, local):
    """For each output of `program`, which elements of its inputs flagged in `local` it depends on:
    a CSR matrix over local columns (the flagged inputs' elements, in order), or None. The other
    inputs keep their known values, without dependence. Returns (matrices, column offsets)."""
    sizes = [info.aval.size if flag else 0 for info, flag in zip(in_infos, local)]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    inner = Context(int(offsets[-1]), context.reads)
    infos = [Info(info.aval, identity_block(size, int(offset), inner.columns)) if flag else info.without_deps()
             for info, flag, size, offset in zip(in_infos, local, sizes, offsets)]
    return [out.deps for out in analyze(program, infos, inner)], offsets


def compose(context: Context, local, in_infos, flags=None):
    """Global index sets from a local dependence matrix (rows: outputs; columns: the elements of the
    `in_infos` flagged in `flags`, default all, stacked) and those inputs' own index sets."""
    chosen = [info for k, info in enumerate(in_infos) if flags is None or flags[k]]
    if local is None or all(info.deps is None for info in chosen):
        return None
    stacked = sp.vstack([context.deps(info) for info in chosen], format="csr")
    result = local @ stacked
    return result if result.nnz else None


# --- the rule table ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """How index sets cross one primitive. `apply(context, eqn, infos)` returns one index-set matrix
    (or None) per output; `exact`: the pattern has no entries beyond the Jacobian's generic non-zeros."""

    kind: str
    apply: object
    exact: bool = True


def _elementwise(context, eqn, infos):
    shape = eqn.outputs[0].aval.shape
    return [union([broadcast_rows(info.deps, info.aval.shape, shape) for info in infos])]


def _zero(context, eqn, infos):
    return [None] * len(eqn.outputs)


def _select(context, eqn, infos):
    """A known predicate picks each element's source; otherwise both sources count."""
    predicate, on_true, on_false = infos
    if not predicate.known:
        return _elementwise(context, eqn, infos)
    size = eqn.outputs[0].aval.size
    mask = np.broadcast_to(context.value(predicate), eqn.outputs[0].aval.shape).ravel()
    ids = np.where(mask, 1 + np.arange(size), 1 + size + np.arange(size))
    return [take_rows([context.deps(on_true), context.deps(on_false)], ids, context.columns)]


def _integer_pow(context, eqn, infos):
    return [None] if eqn.params["n"] == 0 else _elementwise(context, eqn, infos)


def move(context, eqn, infos, operands):
    """The output elements are operand elements (or constants): run the primitive's implementation
    on element ids (0 for none) instead of values; the other inputs must be known."""
    if all(infos[k].deps is None for k in operands):
        return None
    args, blocks, offset = [], [], 1
    for k, info in enumerate(infos):
        if k in operands:
            args.append(np.arange(offset, offset + info.aval.size, dtype=np.int64).reshape(info.aval.shape))
            blocks.append(context.deps(info))
            offset += info.aval.size
        else:
            args.append(context.value(info))
    try:
        ids = evaluate(eqn.prim, args, eqn.params)
    except IndexError as error:
        raise IndexOutOfRangeError(f"jacobian_sparsity: index out of range in `{eqn!r}`: {error}") from None
    return take_rows(blocks, ids, context.columns)


def _move_all(context, eqn, infos):
    return [move(context, eqn, infos, range(len(infos)))]


def _gather(context, eqn, infos):
    x, *indices = infos
    if all(i.known for i in indices):
        return [move(context, eqn, infos, (0,))]
    return [spread(x.deps, eqn.outputs[0].aval.size)]  # unknown indices: any element may be taken


def _scatter(context, eqn, infos):
    """set: each slot keeps its last update (a move); add, mul, min, max: a slot depends on the
    destination and every update landing on it. Unknown indices: on every update."""
    x, updates, *indices = infos
    op, spec = eqn.params["op"], eqn.params["spec"]
    if not all(i.known for i in indices):
        return [union([x.deps, spread(updates.deps, x.aval.size)])]
    if op == "set":
        return [move(context, eqn, infos, (0, 1))]
    if updates.deps is None:
        return [x.deps]
    ids = np.arange(x.aval.size, dtype=np.int64).reshape(x.aval.shape)
    try:
        targets = ids[numpy_index(spec, [context.value(i) for i in indices])]
    except IndexError as error:
        raise IndexOutOfRangeError(f"jacobian_sparsity: index out of range in `{eqn!r}`: {error}") from None
    landing = group_matrix(targets, x.aval.size) @ updates.deps
    return [union([x.deps, landing])]


def _scatter_mul_partials(context, eqn, infos):
    """(x (m,), updates (n,), targets (n,), weights (m,)[, output hint]) -> (d out / d x, d out / d updates)
    weighted: per slot, the updates landing on it; per update, its slot's destination, weight and updates
    (the hint, out itself, adds nothing: the partials are a function of the other operands)."""
    x, updates, targets, weights = infos[:4]
    m = x.aval.size
    if not targets.known:
        everything = union([spread(i.deps, 1) for i in (x, updates, weights)])
        return [spread(everything, m), spread(everything, updates.aval.size)]
    slots = np.mod(np.asarray(context.value(targets), np.int64).ravel(), max(m, 1))
    gather_slots = group_matrix(slots, m)
    per_slot = union([gather_slots @ updates.deps if updates.deps is not None else None, weights.deps])
    per_update = union([per_slot, x.deps])
    return [per_slot, gather_slots.T.tocsr() @ per_update if per_update is not None else None]


def _reduce(context, eqn, infos):
    return [reduce_union(infos[0].deps, infos[0].aval.shape, eqn.params["axes"])]


def _product_others(context, eqn, infos):
    x, scale = infos
    groups, count = reduced_groups(x.aval.shape, eqn.params["axes"])
    others = None if x.deps is None else (group_matrix(groups, count) @ x.deps)[groups]
    return [union([others, scale.deps])]


def prefix_union(deps, lines: int, length: int, inner: int, out_inner: int, reverse: bool, skip_edge=False):
    """Index sets of a scan along an axis: a value viewed as (lines, length, inner) whose output
    (lines, length, out_inner) at position k depends on every element of positions j <= k (j >= k
    when `reverse`) of its line. `skip_edge` leaves out the first position (the last when reverse):
    a recurrence's coefficient there multiplies the zero start."""
    if deps is None:
        return None
    if inner != 1:
        deps = group_matrix(np.arange(lines * length * inner) // inner, lines * length) @ deps
    earlier, later = np.triu_indices(length)  # every pair of positions, earlier <= later
    source, target = (later, earlier) if reverse else (earlier, later)
    if skip_edge:
        keep = source != (length - 1 if reverse else 0)
        source, target = source[keep], target[keep]
    base = (np.arange(lines) * length)[:, None]
    matrix = sp.csr_matrix((np.ones(lines * source.size, bool), ((base + target).ravel(), (base + source).ravel())),
                           shape=(lines * length, lines * length))
    result = matrix @ deps
    return result[np.repeat(np.arange(lines * length), out_inner)] if out_inner != 1 else result


def _along_axis(deps, shape, axis, reverse, skip_edge=False):
    """prefix_union for a scan along `axis` of `shape` (other axes are independent lines)."""
    if deps is None:
        return None
    ids = np.moveaxis(np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape), axis, -1).ravel()
    length = shape[axis]
    result = prefix_union(deps[ids], ids.size // max(length, 1), length, 1, 1, reverse, skip_edge)
    return result[np.argsort(ids)]


def _scan(context, eqn, infos):
    (x,) = infos
    return [_along_axis(x.deps, x.aval.shape, eqn.params["axis"], eqn.params["reverse"])]


def _linear_recurrence(context, eqn, infos):
    a, b = infos
    axis, reverse = eqn.params["axis"], eqn.params["reverse"]
    return [union([_along_axis(a.deps, a.aval.shape, axis, reverse, skip_edge=True),
                   _along_axis(b.deps, b.aval.shape, axis, reverse)])]


def _matrix_recurrence(context, eqn, infos):
    """s_k = A_k s_(k-1) + b_k along axis -2 of b: s_k mixes every component of earlier A and b."""
    a, b = infos
    *lead, length, d = b.aval.shape
    lines = int(np.prod(lead, dtype=np.int64))
    reverse = eqn.params["reverse"]
    return [union([prefix_union(a.deps, lines, length, d * d, d, reverse, skip_edge=True),
                   prefix_union(b.deps, lines, length, d, d, reverse)])]


def _einsum(context, eqn, infos):
    """Each operand: union over its letters missing from the output, then broadcast along the output's."""
    (sa, sb), so = parse_spec(eqn.params["spec"])
    out_shape = eqn.outputs[0].aval.shape
    parts = []
    for letters, info in ((sa, infos[0]), (sb, infos[1])):
        if info.deps is None:
            continue
        dropped = tuple(i for i, c in enumerate(letters) if c not in so)
        kept = [c for c in letters if c in so]
        deps = reduce_union(info.deps, info.aval.shape, dropped) if dropped else info.deps
        kept_shape = [info.aval.shape[letters.index(c)] for c in kept]
        ids = np.arange(int(np.prod(kept_shape, dtype=np.int64))).reshape(kept_shape)
        ids = ids.transpose(sorted(range(len(kept)), key=lambda i: so.index(kept[i])))
        view = [out_shape[p] if c in kept else 1 for p, c in enumerate(so)]
        parts.append(deps[np.broadcast_to(ids.reshape(view), out_shape).ravel()])
    return [union(parts)]


def _matrix(context, eqn, infos):
    """Linear algebra on stacks (..., m, n): each output's matrix depends on all of the operands' matrices
    at the same stack position."""
    batch = eqn.inputs[0].aval.ndim - 2
    per_matrix = union([reduce_union(info.deps, info.aval.shape, tuple(range(batch, info.aval.ndim)))
                        for info in infos])
    if per_matrix is None:
        return [None] * len(eqn.outputs)
    batch_shape = eqn.inputs[0].aval.shape[:batch]
    results = []
    for var in eqn.outputs:
        shape = var.aval.shape
        ids = np.arange(int(np.prod(batch_shape, dtype=np.int64))).reshape(batch_shape + (1,) * (len(shape) - batch))
        results.append(per_matrix[np.broadcast_to(ids, shape).ravel()])
    return results


def _fft(context, eqn, infos):
    """Each output element depends on every operand element of its line: the same position along the
    axes not transformed, anywhere along the transformed ones (rfft/irfft change the last one's length)."""
    (info,) = infos
    if info.deps is None:
        return [None]
    axes = tuple(eqn.params["axes"])
    per_line = reduce_union(info.deps, info.aval.shape, axes)
    out_shape = eqn.outputs[0].aval.shape
    kept = [1 if d in axes else n for d, n in enumerate(out_shape)]
    ids = np.arange(int(np.prod(kept, dtype=np.int64))).reshape(kept)
    return [per_line[np.broadcast_to(ids, out_shape).ravel()]]


def _dense(context, eqn, infos):
    """Every output element depends on everything every input depends on."""
    everything = union([spread(info.deps, 1) for info in infos])
    return [spread(everything, var.aval.size) for var in eqn.outputs]


_ELEMENTWISE = Rule("elementwise", _elementwise)
_ZERO = Rule("zero", _zero)
_MOVE = Rule("move", _move_all)
_MATRIX = Rule("matrix", _matrix, exact=False)

# The rules, keyed by the primitive object. The primitives of this layer and below (primitives/) get
# theirs here; the upper layers (control flow, kernels, parallel operators, reversible programs) register
# theirs beside their other rules, with `rule` or `register`. Elementwise primitives without an entry get
# the elementwise kind (the fallback of `rule_for`).
RULES: dict = {}


def register(prims, rule: Rule) -> None:
    """Give each primitive of `prims` (one or several) the sparsity rule `rule`."""
    for prim in (prims if isinstance(prims, (tuple, list)) else (prims,)):
        RULES[prim] = rule


def rule(prim, kind: str, exact: bool = True):
    """Decorator: the function becomes `prim`'s sparsity rule of the given kind.

        @sparsity.rule(while_p, "nested", exact=False)
        def _while_sparsity(context, eqn, infos): ...
    """
    def decorate(function):
        register(prim, Rule(kind, function, exact))
        return function

    return decorate


# Only one side of a maximum/minimum (one element of a select) passes its derivative on; d rem(x, y) / dy
# = -floor(x / y) and d fmod(x, y) / dy = -trunc(x / y) are 0 for |x| < |y|; nextafter's direction y moves
# nothing.
_SOMETIMES_ZERO = Rule("elementwise", _elementwise, exact=False)
register([ew.sign_p, ew.floor_p, ew.ceil_p, ew.round_p, ew.stop_gradient_p, ew.floor_divide_p, reductions.argmax_p,
          reductions.argmin_p, sort.argsort_p, sort.searchsorted_p, factorizations.lu_pivots_to_permutation_p,
          indexing.scatter_winner_p, arithmetic.frexp_exponent_p, arithmetic.gcd_p, arithmetic.lcm_p,
          arithmetic.signbit_p], _ZERO)
register([ew.maximum_p, ew.minimum_p, ew.rem_p, arithmetic.fmod_p, arithmetic.nextafter_p], _SOMETIMES_ZERO)
register(ew.select_p, Rule("elementwise", _select, exact=False))
register(ew.integer_pow_p, Rule("elementwise", _integer_pow))
register([structural.broadcast_in_dim_p, structural.reshape_p, structural.transpose_p, structural.slice_p,
          structural.unslice_p, structural.concatenate_p], _MOVE)
register(indexing.gather_p, Rule("move", _gather))
register(indexing.scatter_p, Rule("move", _scatter, exact=False))
register(indexing.scatter_mul_partials_p, Rule("move", _scatter_mul_partials, exact=False))
# max/min reductions and scans pass the derivative to one winner per group.
register(reductions.reduce_p, Rule("reduce", _reduce, exact=False))
register(reductions.product_others_p, Rule("reduce", _product_others, exact=False))
register(scan.scan_p, Rule("prefix", _scan, exact=False))
register(scan.linear_recurrence_p, Rule("prefix", _linear_recurrence))
register(scan.matrix_recurrence_p, Rule("prefix", _matrix_recurrence, exact=False))
register(linalg.einsum_p, Rule("einsum", _einsum))
register([triangular.triangular_solve_p, triangular.cholesky_p, factorizations.solve_p, factorizations.lu_p,
          factorizations.qr_p, spectral.eigh_p, spectral.svd_p, matrix_functions.det_p, matrix_functions.adjugate_p,
          matrix_functions.pinv_p, matrix_functions.expm_p, eig.eig_p, matrix_functions.adjugate_derivative_p,
          sqrtm_logm.sqrtm_p, sqrtm_logm.logm_p, sylvester.solve_sylvester_p], _MATRIX)
# The DFT matrix has no zero entry, but irfft ignores the imaginary parts of its edge bins.
register(fft.fft_p, Rule("matrix", _fft, exact=False))
# The kinds that upper layers register with (their primitives hold programs, or are opaque).
DENSE = Rule("dense", _dense, exact=False)


def rule_for(prim) -> Rule:
    """The sparsity rule of a primitive (registered, or the elementwise kind for an elementwise
    primitive), or UnsupportedError naming it."""
    found = RULES.get(prim)
    if found is None and prim.elementwise:
        found = _ELEMENTWISE
    if found is None:
        raise UnsupportedError(f"primitive '{prim.name}' has no sparsity rule (jacobian_sparsity)")
    return found


def rules_table() -> dict:
    """Primitive object -> Rule, for every registered primitive that has one (the fallbacks included)."""
    table = {prim: RULES[prim] for prim in REGISTRY.values() if prim in RULES}
    table.update({prim: _ELEMENTWISE for prim in REGISTRY.values() if prim not in RULES and prim.elementwise})
    return table
