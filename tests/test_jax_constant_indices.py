"""Gathers and scatters with constant index arrays on the JAX backend (backends/jax/constant_indices.py):
rows of whole-axis windows, slices for progressions, folded constant gathers. Each program is checked
against the NumPy backend's result (NumPy's own indexing and ufunc.at), on index patterns chosen to hit
every branch (in order, progressions, permutations, duplicates, negative indices, broadcast index
arrays between slices and new axes) and on random ones, with first and second derivatives."""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import adarray as ad  # noqa: E402
from adarray.backends import jax as jax_backend  # noqa: E402
from adarray.backends.jax.constant_indices import WindowForm, window_form  # noqa: E402
from adarray.backends.numpy import compile_program  # noqa: E402
from adarray.core.ir import Literal  # noqa: E402
from adarray.core.types import Aval  # noqa: E402
from adarray.primitives import indexing  # noqa: E402
from adarray.primitives.indexing import numpy_index  # noqa: E402
from adarray.tracing import trace_program  # noqa: E402

A = ("array",)
ALL = ("slice", None, None, None)


def _run_both(fn, *args):
    """fn traced with `args` as inputs (the index arrays it closes over become literals): (JAX, NumPy)."""
    program, _, _ = trace_program(fn, [Aval(np.shape(a), np.asarray(a).dtype) for a in args], "case")
    literal_indices = [a for e in program.eqns if e.prim in (indexing.gather_p, indexing.scatter_p)
                       for a in e.inputs[1 if e.prim is indexing.gather_p else 2:]]
    assert literal_indices and all(isinstance(a, Literal) for a in literal_indices)
    with jax_backend.x64():
        got = jax.jit(jax_backend.lower_program(program))(*args)
    want = compile_program(program)(*args)
    return [np.asarray(g) for g in got], want


GATHERS = [  # (shape, spec, indices)
    ((5, 4), (A,), [np.arange(5)]),                             # every row in order: no gather
    ((9, 4), (A,), [np.array([0, 3, 6])]),                      # progression: a strided slice
    ((9, 4), (A,), [np.array([2, 5, 8, 8])]),                   # duplicates
    ((6, 3, 2), (A,), [np.array([4, 1, 5, 0])]),                # general rows
    ((4, 3), (A,), [np.array([1, 3, 0, 2])]),                   # a permutation: scatters gather the updates
    ((4, 3), (A,), [np.array([3, 0, 2])]),                      # unique, one row left out: a masked gather
    ((3, 2), (A,), [np.array([0, 2, 2, 1, 0, 2])]),             # dense repeats: scatters as layers of gathers
    ((6, 3), (A,), [np.array([-1, 0, -6])]),                    # negative indices wrap
    ((6, 5), (ALL, A), [np.array([[1, 4], [0, 0]])]),           # columns, 2-d index
    ((27, 8, 3), (A, A, ("slice", 0, 3, 1)), [np.arange(27)[:, None], np.array([3, 1, 7, 7, 0])]),
    ((4, 5, 6), (A, ("newaxis",), ALL, A), [np.array([[0], [3]]), np.array([5, 0, 2])]),
    ((4, 5), (A, A), [np.array(2), np.array([4, 0])]),          # a scalar index and an array
    ((3, 4, 5), (ALL, ("slice", 3, 0, -1), A), [np.array([1, 1])]),
    ((7,), (A,), [np.array([], np.int64)]),                     # empty: the generic path
]


@pytest.mark.parametrize("shape, spec, indices", GATHERS)
def test_gather_with_constant_indices(shape, spec, indices):
    x = np.random.default_rng(0).normal(size=shape)
    got, want = _run_both(lambda x: indexing.gather(x, spec, indices), x)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[0], x[numpy_index(spec, indices)])


@pytest.mark.parametrize("op", indexing.SCATTER_OPS)
@pytest.mark.parametrize("shape, spec, indices", GATHERS[:-1])
def test_scatter_with_constant_indices(shape, spec, indices, op):
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape)
    window = x[numpy_index(spec, indices)].shape
    updates = rng.normal(size=window)
    if op == "set" and len(np.unique(np.ravel(_positions(shape, spec, indices)))) < int(np.prod(window)):
        pytest.skip("set with duplicate targets keeps an unspecified one of them")
    got, want = _run_both(lambda x, u: indexing.scatter(x, spec, indices, u, op), x, updates)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14, atol=1e-14)


def _positions(shape, spec, indices):
    return np.arange(int(np.prod(shape))).reshape(shape)[numpy_index(spec, indices)]


def test_scatter_add_of_a_jacobians_columns():
    """The pattern of a compressed forward Jacobian: out[column[i, k], j, k] += u[i, j, k], with the column
    numbers repeated (several tangents land in one column) and the other two index arrays aranges."""
    rng = np.random.default_rng(2)
    columns = rng.integers(0, 6, size=(5, 1, 3)) * np.ones((1, 7, 1), np.int64)
    rows, lanes = np.broadcast_to(np.arange(7)[None, :, None], (5, 7, 3)), np.broadcast_to(np.arange(3), (5, 7, 3))
    form = window_form((6, 7, 3), (A, A, A), [columns, rows, lanes])
    assert form.window_e == [1] and not form.unique  # rows of 7: whole windows, duplicate columns
    u = rng.normal(size=(5, 7, 3))
    got, want = _run_both(lambda x, u: indexing.scatter(x, (A, A, A), [columns, rows, lanes], u, "add"),
                          np.zeros((6, 7, 3)), u)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("seed", range(12))
def test_random_constant_indices_agree_with_numpy(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 5, size=rng.integers(1, 4)))
    common = [(3,), (2, 3)][rng.integers(2)]  # the index arrays' (broadcast) shape
    spec, indices = [], []
    for size in shape:
        kind = rng.integers(3)
        if kind == 0:
            spec.append(ALL)
        elif kind == 1:  # in order (clipped to the axis), or a random selection with repeats
            spec.append(A)
            ordered = np.broadcast_to(np.minimum(np.arange(common[-1]), size - 1), common)
            indices.append(ordered if rng.integers(2) else rng.integers(-size, size, size=common))
        else:
            spec.append(("slice", int(rng.integers(size)), None, 1))
    if not indices:
        spec[0], indices = A, [rng.integers(-shape[0], shape[0], size=common)]
    spec, x = tuple(spec), rng.normal(size=shape)
    got, want = _run_both(lambda x: indexing.gather(x, spec, indices), x)
    np.testing.assert_array_equal(got[0], want[0])
    updates = rng.normal(size=want[0].shape)
    for op in ("add", "mul", "min", "max"):
        got, want = _run_both(lambda x, u, op=op: indexing.scatter(x, spec, indices, u, op), x, updates)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-14, atol=1e-14, err_msg=op)


def test_window_form_rows_and_windows():
    """x[:, [2, 0]] of a (3, 4) array: axis 0 is a window (whole, in order), the rows are columns 2, 0."""
    form = WindowForm((3, 4), _positions((3, 4), (ALL, A), [np.array([2, 0])]))
    assert (form.window_d, form.window_e, list(form.rows)) == ([0], [0], [2, 0])
    assert form.unique and not form.sorted
    assert window_form((3,), (A,), [np.array([3])]) is None  # out of bounds: left to the generic lowering


def test_constant_operand_uniform_along_runtime_index_is_folded():
    """A constant table equal along the axis a run-time index selects: the gather is a constant, and the scatter
    consuming it sees constant indices: here every row in order, so neither remains."""
    table = np.broadcast_to(np.array([[0], [1], [2]]), (3, 5)).copy()  # rows of a (3, 2) result, per row

    def f(x, where):
        columns = indexing.gather(table, (ALL, A), [where])           # (3, 2): [[0, 0], [1, 1], [2, 2]]
        lanes = np.broadcast_to(np.arange(2), (3, 2))
        return indexing.scatter(np.ones((3, 2)), (A, A), [columns, lanes], x, "add")

    x, where = np.arange(6.0).reshape(3, 2), np.array([4, 1])
    program, _, _ = trace_program(f, [Aval((3, 2), np.float64), Aval((2,), np.int64)], "fold")
    with jax_backend.x64():
        lowered = jax.jit(jax_backend.lower_program(program))
        got = np.asarray(lowered(x, where)[0])
        text = lowered.lower(x, where).as_text()
    np.testing.assert_array_equal(got, compile_program(program)(x, where)[0])
    assert "gather" not in text and "scatter" not in text


def test_derivatives_through_constant_indices():
    """Gradients and second derivatives of a program indexing with constants (its vjp scatters with them)."""
    rows, cols = np.array([[0, 2, 2], [1, 0, 3]]), np.array([1, 1, 0])

    def loss(x):
        picked = x[rows, cols] * x[::-1][rows][:, :, 1]
        return ad.numpy.sum(ad.numpy.sin(picked) * picked)

    x = np.random.default_rng(3).normal(size=(4, 2))
    on_jax = ad.jit(ad.grad(loss), backend="jax")
    np.testing.assert_allclose(np.asarray(on_jax(x)), ad.grad(loss)(x), rtol=1e-12, atol=1e-13)
    hessian = ad.jit(ad.jacrev(ad.grad(loss)), backend="jax")
    np.testing.assert_allclose(np.asarray(hessian(x)), ad.jacrev(ad.grad(loss))(x), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("shape, starts, stops, steps", [
    ((7, 5), (1, 0), (6, 5), (2, 1)),         # strided: interior padding
    ((7, 5), (6, 4), (None, 0), (-3, -1)),    # negative steps: the positions read upwards
    ((4, 3), (2, 0), (2, 3), (1, 1)),         # empty along one axis: all zeros
    ((6,), (-1,), (-7,), (-2,)),
])
def test_unslice_is_a_pad(shape, starts, stops, steps):
    from adarray.primitives import structural

    where = structural.slice_indices(starts, stops, steps)
    x = np.random.default_rng(4).normal(size=np.zeros(shape)[where].shape)
    program, _, _ = trace_program(
        lambda v: structural.unslice_p.bind(v, shape=shape, starts=starts, stops=stops, steps=steps),
        [Aval(x.shape, np.float64)], "unslice")
    with jax_backend.x64():
        got = np.asarray(jax.jit(jax_backend.lower_program(program))(x)[0])
    want = np.zeros(shape)
    want[where] = x
    np.testing.assert_array_equal(got, want)


def test_analysis_is_bounded_by_the_result():
    """A few elements of a large array: the positions cost memory of the result only (no arange of x); past
    MAX_ANALYSED elements along an axis the generic lowering is used."""
    import tracemalloc

    from adarray.backends.jax.constant_indices import MAX_ANALYSED

    tracemalloc.start()
    form = window_form((2000, 3000), (A, A), [np.array([5, 1999]), np.array([0, 2999])])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert list(form.rows) == [5 * 3000, 1999 * 3000 + 2999] and peak < 1_000_000
    assert window_form((MAX_ANALYSED + 1,), (A,), [np.array([3])]) is None


def test_scatter_layers():
    """Row r of x gets its j-th update in layer j; rows without one are -1 there."""
    form = WindowForm((3, 2), _positions((3, 2), (A,), [np.array([0, 2, 2, 1, 0, 2])]))
    assert [list(layer) for layer in form._layers()] == [[0, 3, 1], [4, -1, 2], [-1, -1, 5]]


def test_constant_operands_with_run_time_or_constant_indices():
    """A constant table that varies along the run-time-indexed axis is gathered at run time; with constant
    indices too (negative ones included) it is folded by NumPy; both equal NumPy's indexing."""
    table = np.arange(12.0).reshape(3, 4)

    def f(where):
        varying = indexing.gather(table, (A,), [where])                      # rows differ: not folded
        folded = indexing.gather(table, (ALL, A), [np.array([-1, 0, 2])])    # all constant: folded
        return varying * 2.0, folded

    where = np.array([2, 0, 2, 1])
    program, _, _ = trace_program(f, [Aval((4,), np.int64)], "tables")
    with jax_backend.x64():
        got = [np.asarray(g) for g in jax.jit(jax_backend.lower_program(program))(where)]
    np.testing.assert_array_equal(got[0], table[where] * 2.0)
    np.testing.assert_array_equal(got[1], table[:, [-1, 0, 2]])


def _registry_cases(names):
    from adarray.testing.registry import registry_cases

    return [(case_id, args, params) for case_id, name, args, params in registry_cases() if name in names]


@pytest.mark.parametrize("case_id, args, params", _registry_cases({"gather", "scatter"}),
                         ids=lambda value: value if isinstance(value, str) else "")
def test_registry_cases_with_literal_indices(case_id, args, params):
    """Every sampled and edge case of gather and scatter, with its index arrays made literals of the program
    (the constant-index lowering) instead of inputs, and their jvp and vjp programs, against the NumPy backend."""
    from adarray.passes import simplify
    from adarray.transforms.jvp import jvp_program
    from adarray.transforms.vjp import vjp_program

    operands = 1 if case_id.startswith("gather") else 2
    inputs, indices = args[:operands], args[operands:]
    prim = indexing.gather_p if operands == 1 else indexing.scatter_p
    program, _, _ = trace_program(lambda *xs: prim.bind(*xs, *indices, **params),
                                  [Aval(np.shape(a), np.asarray(a).dtype) for a in inputs], case_id)
    assert all(isinstance(a, Literal) for a in program.eqns[-1].inputs[operands:])
    rng = np.random.default_rng(5)
    wrt = [np.issubdtype(np.asarray(a).dtype, np.inexact) for a in inputs]
    programs = [(program, list(inputs))]
    if all(wrt):
        tangents = [rng.normal(size=np.shape(a)).astype(np.asarray(a).dtype) for a in inputs]
        cotangents = [rng.normal(size=a.shape).astype(a.dtype) for a in program.out_avals]
        programs += [(simplify(jvp_program(program, wrt)), list(inputs) + tangents),
                     (simplify(vjp_program(program, wrt)), list(inputs) + cotangents)]
    for each, values in programs:
        with jax_backend.x64():
            got = jax.jit(jax_backend.lower_program(each))(*values)
        want = compile_program(each)(*values)
        positions = _positions(np.shape(inputs[0]), params["spec"], indices)
        duplicates = positions is not None and len(np.unique(positions)) < positions.size
        for g, w in zip(got, want):
            if params.get("op") == "set" and duplicates:
                continue  # which duplicate wins is unspecified
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12, err_msg=case_id)
