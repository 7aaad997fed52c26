"""einsum on the Numba backend: small contractions as loops, large ones on BLAS.

Loops: each output element runs an inner loop over the contracted letters (a reduction of the
product), so the operands' producers are inlined and nothing is stored. BLAS: the letters split
into batch (both operands and the output), free (one operand and the output) and contracted (both
operands only); each operand is packed into (batch, its letters in their own order) unless it is
already an array of ours in that layout, `np.dot` runs per batch element into a (batch, free a,
free b) array, or (batch, free b, free a) when the output's innermost letter is a's, and the output
reads that array through its index map (no transposing copy). The
choice is the cost model's (options.BLAS_MIN_WORK, options.BLAS_MIN_CONTRACTION).
"""
from __future__ import annotations

import numpy as np

from ...core.types import Aval
from ...primitives import linalg
from ...primitives.linalg import parse_spec
from . import options, scalar
from .reductions import loops
from .symbolic import planned, product
from .table import LOWERINGS, ByEquation, Elemental, Opaque
from .writer import Buffer, Remapped, index_names


def _sizes(eqn) -> dict:
    (sa, sb), _ = parse_spec(eqn.params["spec"])
    sizes = dict(zip(sa, eqn.inputs[0].aval.shape))
    sizes.update(zip(sb, eqn.inputs[1].aval.shape))
    return sizes


def _contracted(eqn) -> list[str]:
    (sa, sb), so = parse_spec(eqn.params["spec"])
    return [letter for letter in dict.fromkeys(sa + sb) if letter not in so]


def _extent(eqn) -> int:
    sizes = _sizes(eqn)
    return int(np.prod([sizes[letter] for letter in _contracted(eqn)], dtype=np.int64))


def _loops(em, eqn, index):
    a, b = eqn.inputs
    (sa, sb), so = parse_spec(eqn.params["spec"])
    sizes = _sizes(eqn)
    contracted = _contracted(eqn)
    names = dict(zip(so, index))
    for letter in contracted:
        names[letter] = em.fresh("r")
    dtype = eqn.outputs[0].aval.dtype
    acc = em.fresh("acc")
    em.emit(f"{acc} = {scalar.constant(0, dtype)}")
    with loops(em, [names[c] for c in contracted], [sizes[c] for c in contracted]):
        left = em.read(a, [names[letter] for letter in sa])
        right = em.read(b, [names[letter] for letter in sb])
        em.emit(f"{acc} = {acc} + {left} * {right}")
    return [acc]


def _reads_repeatedly(eqn, position) -> bool:
    return eqn.outputs[0].aval.size * _extent(eqn) > eqn.inputs[position].aval.size


_LOOPS = Elemental(_loops, cost=2.0, reads=_extent, duplicates=_reads_repeatedly)


def _split(eqn):
    (sa, sb), so = parse_spec(eqn.params["spec"])
    batch = [c for c in so if c in sa and c in sb]
    free_a = [c for c in sa if c in so and c not in sb]
    free_b = [c for c in sb if c in so and c not in sa]
    contracted = [c for c in sa if c in sb and c not in so]
    only = [c for c in sa + sb if c not in so and not (c in sa and c in sb)]
    return batch, free_a, free_b, contracted, only


def _product(sizes, letters) -> int:
    return product(sizes[c] for c in letters)  # symbolic when a batch size is (symbolic.py)


def _linear(names, sizes, letters) -> str:
    """The row-major position of `letters` (their index names in `names`) in a flattened axis."""
    terms, stride = [], 1
    for c in reversed(letters):
        terms.append(names[c] if stride == 1 else f"{names[c]} * {stride}")
        stride *= sizes[c]
    return " + ".join(reversed(terms)) if terms else "0"


def _pack(em, atom, letters, batch, sizes, other):
    """`atom` as a 2-d array (batch, the other letters flattened, in the atom's order when the free
    and contracted letters are not interleaved); returns (name, the other letters in order)."""
    rest = [c for c in letters if c not in batch]
    free = [c for c in rest if c not in other]
    if rest != free + [c for c in rest if c in other] and rest != [c for c in rest if c in other] + free:
        rest = free + [c for c in rest if c in other]  # interleaved: pack as (free, contracted)
    order = batch + rest
    shape = (_product(sizes, batch), _product(sizes, rest))
    source = em.sources.get(id(atom))
    if isinstance(source, Buffer) and source.whole and source.name in em.writer.contiguous and list(letters) == order:
        name = em.fresh("v")
        em.emit(f"{name} = {source.name}.reshape({shape!r})")
        return name, rest
    # at the top level of a program a packed operand is kept: a later product of the same operand in
    # the same layout (the forward and the backward pass often share one) reads it again
    key = (id(atom), tuple(order), shape)
    top = em.depth == 0 and em.indent == 1 and not em.silent
    packs = em.writer.__dict__.setdefault("packs", {})
    if top and key in packs:
        return packs[key], rest
    name = em.fresh("v")
    if top:
        packs[key] = name
    line = f"{name} = np.empty({shape!r}, {_type(atom)})"
    _hoist(em, line, name, Aval(shape, atom.aval.dtype))
    names = dict(zip(order, index_names(em.depth, len(order), "w")))
    with loops(em, [names[c] for c in order], [sizes[c] for c in order]):
        value = em.read(atom, [names[c] for c in letters])
        em.emit(f"{name}[{_linear(names, sizes, batch)}, {_linear(names, sizes, rest)}] = {value}")
    return name, rest


def _hoist(em, line: str, name: str, aval) -> None:
    """An allocation: before the outermost loop inside a loop body, in place otherwise. Its array comes from
    the program's workspace (workspace.py), as `ProgramEmitter.allocate`'s do: a large product allocated on
    every call faults in fresh pages (GMM d=10 K=25's objective: 2.8 ms instead of 0.68)."""
    if em.depth == 0:
        em.emit(line)
    elif not em.silent:
        em.writer.prologue.append("    " + line)
    if not em.silent:
        em.writer.allocations[name] = aval


def _type(atom) -> str:
    return scalar.type_name(atom.aval.dtype)


def _blas(em, eqn):

    a, b = eqn.inputs
    (sa, sb), so = parse_spec(eqn.params["spec"])
    sizes = _sizes(eqn)
    batch, free_a, free_b, contracted, _ = _split(eqn)
    packed_a, rest_a = _pack(em, a, list(sa), batch, sizes, contracted)
    packed_b, rest_b = _pack(em, b, list(sb), batch, sizes, contracted)
    count, inner = _product(sizes, batch), _product(sizes, contracted)
    # each packed operand is (batch, its letters in order): a 2-d view per batch element, transposed
    # when its contracted letters come first (np.dot then sees an F-ordered operand, no copy)
    sides = [(packed_a, rest_a, free_a), (packed_b, rest_b, free_b)]
    # the product is stored (batch, free letters of one side, of the other): the side holding the
    # output's innermost letter goes last, so readers walking the output in order read it contiguously
    # (GMM's "kij,nkj->nki" read as (k, i, n) strode by n on every element)
    innermost = [c for c in so if c not in batch][-1:]
    if innermost and innermost[0] in free_a:
        sides.reverse()
    (first, rest_first, free_first), (second, rest_second, free_second) = sides
    rows, columns = _product(sizes, free_first), _product(sizes, free_second)
    left = _matrix(first, rest_first, free_first, contracted, rows, inner, left=True)
    right = _matrix(second, rest_second, free_second, contracted, columns, inner, left=False)
    result = em.fresh("m")
    line = f"{result} = np.empty({(count, rows, columns)!r}, {_type(eqn.outputs[0])})"
    _hoist(em, line, result, Aval((count, rows, columns), eqn.outputs[0].aval.dtype))
    n = em.fresh("n")
    with em.block(f"for {n} in range({count}):"):
        em.emit(f"_la.dot_into({left.format(n)}, {right.format(n)}, {result}[{n}])")
    em.writer.contiguous.add(result)
    if list(so) == batch + free_first + free_second:
        view = em.fresh("v")
        em.emit(f"{view} = {result}.reshape({tuple(eqn.outputs[0].aval.shape)!r})")
        em.writer.contiguous.add(view)
        return [Buffer(view)]

    def read(index):
        names = dict(zip(so, index))
        return (f"{result}[{_linear(names, sizes, batch)}, {_linear(names, sizes, free_first)}, "
                f"{_linear(names, sizes, free_second)}]")

    return [Remapped(read)]


def _matrix(packed, rest, free, contracted, free_size, inner, left):
    """The text of the 2-d operand for batch element {0}: (free, contracted) for the left operand,
    (contracted, free) for the right one; a transposed view when packed the other way round."""
    if rest == free + contracted:
        text = f"{packed}[{{0}}].reshape({(free_size, inner)!r})"
        return text if left else text + ".T"
    text = f"{packed}[{{0}}].reshape({(inner, free_size)!r})"
    return text + ".T" if left else text


def _choose(eqn):
    batch, free_a, free_b, contracted, only = _split(eqn)
    sizes = _sizes(eqn)
    dtype = np.dtype(eqn.outputs[0].aval.dtype)
    work = _product(sizes, free_a) * _product(sizes, free_b) * _product(sizes, contracted)
    if (not only and dtype in (np.dtype(np.float64), np.dtype(np.float32)) and free_a and free_b
            and planned(_product(sizes, contracted)) >= options.BLAS_MIN_CONTRACTION
            and planned(work) >= options.BLAS_MIN_WORK):
        return _BLAS
    return _LOOPS


_BLAS = Opaque(_blas)
LOWERINGS[linalg.einsum_p] = ByEquation(_choose)
