"""Where a primitive's contract lives, and how complete it is: one coverage matrix, primitive x table.

Every table that holds a rule or an implementation of a primitive is keyed by the `Primitive` object.
A column of the matrix is one such table (a slot of the primitive, or a table of a transformation or
a backend); an entry is one of

    "rule"                a rule or an implementation registered for the primitive
    "marker: <kind>"      a rule absent on purpose (not differentiable, unsupported: reason, from jvp)
    "fallback: <what>"    no entry, and the table's owner does something reasonable instead
    ""                    nothing: the owner raises an error naming the primitive

`checklist()` is the table of docs/adding_a_primitive.md, derived from `TABLES` (tests/test_coverage.py
checks that the page shows exactly it, and that every table a test requires is complete).

    >>> matrix = coverage_matrix()
    >>> matrix["exp"]["NumPy implementation"]
    'rule'
"""
from __future__ import annotations

from dataclasses import dataclass

from ..backends.numba.table import LOWERINGS as NUMBA_LOWERINGS
from ..backends.numpy.registry import IMPLS
from ..core.primitive import REGISTRY, Marker
from ..passes import one_hot
from ..transforms import sparsity


@dataclass(frozen=True)
class Table:
    """One column: `name`, where a primitive's entry is written (`where`), whether the generated tests
    demand one for every primitive (`required`), and what happens without one (`fallback`, None: an
    error). `status(prim)` is the matrix entry."""

    name: str
    where: str
    required: bool
    fallback: str | None
    status: object


def _slot(slot: str, fallback: str | None = None):
    def status(prim) -> str:
        value = getattr(prim, slot)
        if isinstance(value, Marker):
            return f"marker: {value.kind}"
        if value is not None:
            return "rule"
        return f"fallback: {fallback}" if fallback else ""

    return status


def _vjp(prim) -> str:
    if isinstance(prim.vjp, Marker):
        return f"marker: {prim.vjp.kind}"
    return "rule" if prim.vjp is not None or prim.transpose is not None else ""


def _taylor(prim) -> str:
    return _slot("taylor")(prim)


def _in(table, fallback: str | None = None, elementwise_fallback: str | None = None):
    def status(prim) -> str:
        if prim in table():
            return "rule"
        if elementwise_fallback and prim.elementwise:
            return f"fallback: {elementwise_fallback}"
        return f"fallback: {fallback}" if fallback else ""

    return status


def _jax_lowerings():
    try:
        from ..backends import jax as jax_backend
    except ImportError:  # JAX is optional: without it the column is empty
        return {}
    return {**dict.fromkeys(jax_backend.HOST_CALLBACKS), **jax_backend.LOWERINGS}


TABLES = (
    Table("shape rule", "`Primitive(name, abstract_eval)` in `src/adarray/primitives/<family>.py`", True, None,
          lambda prim: "rule"),
    Table("jvp", "`prim.jvp`, or a rule kind of `primitives/rules.py` (`elementwise`, `linear`, ...), beside the "
          "primitive", True, None, _slot("jvp")),
    Table("vjp", "`prim.vjp`, or `prim.transpose` for a linear primitive (the kind `linear` sets both)", True, None,
          _vjp),
    Table("batching", "`prim.batch` (`batch_elementwise(prim)` for a map)", True, None, _slot("batch")),
    Table("taylor", "`prim.taylor`: a hand rule or a kind of `primitives/taylor.py` (`FROM_JVP` is exact for any "
          "primitive with a jvp)", True, None, _taylor),
    Table("test sampler", "`prim.sample = lambda rng: [(args, params), ...]`; edge cases in `EXTRA_CASES` of "
          "`src/adarray/testing/registry.py`", True, None, _slot("sample")),
    Table("NumPy implementation", "`@impl(prim)` in `src/adarray/backends/numpy/<family>.py`", True, None,
          _in(lambda: IMPLS)),
    Table("JAX lowering", "`@lowering(prim)` in `src/adarray/backends/jax/<family>.py`", True, None,
          _in(_jax_lowerings)),
    Table("sparsity rule", "`sparsity.register(prim, rule)` in `transforms/sparsity.py`, or from the primitive's "
          "module when it lies above `transforms/`", True, None,
          _in(lambda: sparsity.RULES, elementwise_fallback="the union of the operands' sets")),
    Table("Numba lowering", "`@elemental(prim)` or `@opaque(prim)` in `src/adarray/backends/numba/<family>.py`", False,
          "the NumPy implementation, between compiled groups", _in(lambda: NUMBA_LOWERINGS, "NumPy")),
    Table("one-hot rule", "`one_hot.RULES` in `passes/one_hot.py`, or `one_hot.register(prim, rule)` from an upper "
          "layer", False, "the tangents are materialised", _in(lambda: one_hot.RULES, "materialised")),
    Table("enclosure", "`prim.enclosure`, registered from `src/adarray/bounds/` (`register_enclosure`)", False,
          None, _slot("enclosure")),
)


def coverage_matrix() -> dict[str, dict[str, str]]:
    """{primitive name: {table name: entry}} for every registered primitive (see the module docstring)."""
    return {name: {table.name: table.status(prim) for table in TABLES} for name, prim in sorted(REGISTRY.items())}


def incomplete(matrix=None) -> dict[str, list[str]]:
    """{table name: primitives without a rule, a marker or a fallback} for the tables the tests require."""
    matrix = coverage_matrix() if matrix is None else matrix
    return {table.name: [name for name, row in matrix.items() if not row[table.name]]
            for table in TABLES if table.required}


def checklist() -> str:
    """The checklist of docs/adding_a_primitive.md: one row per table, as Markdown."""
    rows = ["| What | Where | Required | Without one |", "|---|---|---|---|"]
    for table in TABLES:
        without = "an error naming the primitive" if table.fallback is None else table.fallback
        rows.append(f"| {table.name} | {table.where} | {'yes' if table.required else 'no'} | {without} |")
    return "\n".join(rows) + "\n"
