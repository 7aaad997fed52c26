"""The Numba backend's table: how each primitive is written as Numba source, keyed by the Primitive.

Two kinds of lowering:

* `Elemental(emit, cost=...)`: the value of the outputs at one index, from the inputs read at
  indices of the lowering's choosing: `emit(em, eqn, index) -> one expression per output`, where
  `index` is a tuple of index expressions (source text) and `em.read(atom, index)` reads an input
  (inlining its producer when that is elemental too). Elementwise maps, broadcasts, reshapes,
  slices, gathers, selects, scalar kernels, and reductions and small contractions (which run an
  inner loop per output element) are elemental: the fusion planner (`planning.py`) decides which
  values are inlined into their consumers and which are stored.
* `Opaque(emit, materialized=...)`: statements computing the whole outputs, returning one
  `Source` per output: scatters, scans, recurrences, BLAS products, fold/while/cond (their bodies
  are emitted inline: a loop runs as one native loop). `materialized(eqn)` lists the input
  positions that must be stored arrays (the others may be read elementally).

`supports(eqn)` may refuse an equation (a dtype, an operator): it then runs on the NumPy backend, as does a
primitive absent from `LOWERINGS`: at the top level the compiled groups are cut there; inside a loop body it is
a call back into NumPy from compiled code (`CALLBACK`, callbacks.py), so the loop stays native.
"""
from __future__ import annotations

import numpy as np

from ...core.ir import Program
from ...core.primitive import Primitive
from ...core.types import Aval
from .callbacks import register
from .writer import Buffer, Local

LOWERINGS: dict[Primitive, object] = {}

# dtypes the generated code handles: bool, signed and unsigned integers, float32 and float64 (not
# complex, float16 or longdouble, which Numba's scalar code does not compute as NumPy does)
PLAIN = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                         np.uint32, np.uint64, np.float32, np.float64))


def plain_dtypes(eqn) -> bool:
    """Are every input and output of `eqn` of a dtype in PLAIN? (Otherwise it runs on NumPy.)"""
    return all(np.dtype(atom.aval.dtype) in PLAIN for atom in (*eqn.inputs, *eqn.outputs))


class Elemental:
    """An output element is an expression of input elements (see the module docstring).

    `cost`: work per input element read (1 = an add; a number or a function of the equation);
    `reads(eqn)`: input elements read per output element (a reduction's extent; default 1);
    `duplicates(eqn, position)`: does one element of that input feed several output elements (a
    broadcast, a gather, a contraction)? The planner stores an expensive input instead of
    recomputing it then.
    """

    opaque = False

    def __init__(self, emit, *, cost=1.0, reads=None, duplicates=None, supports=plain_dtypes):
        self.emit = emit
        self._cost, self._reads = cost, reads
        self._duplicates = duplicates
        self.supports = supports

    def cost(self, eqn, input_costs=()) -> float:
        """Work per output element, with the inlined producers' work per element `input_costs`."""
        own = self._cost(eqn) if callable(self._cost) else self._cost
        reads = self._reads(eqn) if self._reads else 1
        return reads * (own + sum(input_costs))

    def duplicates(self, eqn, position: int) -> bool:
        return bool(self._duplicates and self._duplicates(eqn, position))


class Opaque:
    """Statements producing whole outputs (see the module docstring)."""

    opaque = True

    def __init__(self, emit, *, materialized=None, supports=plain_dtypes, programs=None):
        self.emit = emit
        self._materialized = materialized
        self.supports = supports
        self.programs = programs  # the nested programs that are compiled (default: all of them)

    def materialized(self, eqn) -> set[int]:
        return set(self._materialized(eqn)) if self._materialized else set()


class ByEquation:
    """A lowering chosen per equation (e.g. a contraction: loops when small, BLAS when large)."""

    def __init__(self, choose, supports=plain_dtypes):
        self.choose, self.supports = choose, supports


def lowering_of(eqn):
    """The lowering that writes `eqn`: a call back into NumPy inside a loop body where it has no native one."""
    lowering = LOWERINGS.get(eqn.prim)
    if lowering is None or not lowering.supports(eqn):
        return CALLBACK
    return lowering.choose(eqn) if isinstance(lowering, ByEquation) else lowering


def elemental(*primitives, **options):
    """Register the decorated `emit(em, eqn, index)` as the elemental lowering of `primitives`."""
    def register(emit):
        for primitive in primitives:
            LOWERINGS[primitive] = Elemental(emit, **options)
        return emit

    return register


def opaque(*primitives, **options):
    """Register the decorated `emit(em, eqn)` as the opaque lowering of `primitives`."""
    def register(emit):
        for primitive in primitives:
            LOWERINGS[primitive] = Opaque(emit, **options)
        return emit

    return register


def lowerable(eqn, nested: bool = False) -> bool:
    """Can `eqn` (and every equation of its nested programs) be compiled? In a nested program (`nested`), an
    equation without a native lowering is a call back into NumPy (callbacks.py), so the loop around it compiles;
    at the top level it is not: the runtime runs it between compiled segments."""
    lowering = LOWERINGS.get(eqn.prim)
    if lowering is None or not lowering.supports(eqn):
        return nested
    programs = getattr(lowering, "programs", None)
    programs = programs(eqn) if programs else nested_programs(eqn)
    return all(lowerable(inner, nested=True) for program in programs for inner in program.eqns)


def native(eqn) -> bool:
    """Does `eqn` have a native lowering (not a call back into NumPy)?"""
    lowering = LOWERINGS.get(eqn.prim)
    return lowering is not None and lowering.supports(eqn)


def _call_back(em, eqn):
    """`eqn` run by the NumPy backend's implementation from compiled code (callbacks.py): one Python call."""
    key = register(eqn)
    inputs = [em.let(em.read(atom, ())) if atom.aval.ndim == 0 else em.array(atom) for atom in eqn.inputs]
    names = [em.allocate(var.aval if var.aval.ndim else Aval((1,), var.aval.dtype), "cb") for var in eqn.outputs]
    em.emit("with numba.objmode():")
    em.emit(f"    _cb.call({key!r}, ({''.join(i + ', ' for i in inputs)}), ({''.join(n + ', ' for n in names)}))")
    em.raises = True
    em.writer.callbacks = True  # `with numba.objmode()` needs Numba's default pipeline (runtime.generate)
    return [Buffer(name) if var.aval.ndim else Local(f"{name}[0]") for name, var in zip(names, eqn.outputs)]


CALLBACK = Opaque(_call_back, materialized=lambda eqn: [k for k, atom in enumerate(eqn.inputs) if atom.aval.ndim],
                  supports=lambda eqn: True, programs=lambda eqn: [])


def nested_programs(eqn):
    """The programs held in `eqn`'s params (loop bodies, branches, kernels, operators)."""
    found = []
    for value in eqn.params.values():
        if isinstance(value, Program):
            found.append(value)
        elif isinstance(value, tuple):
            found.extend(v for v in value if isinstance(v, Program))
    return found
