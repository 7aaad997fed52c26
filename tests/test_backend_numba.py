"""The Numba backend against the NumPy backend, generated from the primitive registry.

For a registry case, the primitive's program, its jvp, its vjp, the jvp of its vjp (second order)
and its vmap are renamed apart and joined into one program (one compilation per case instead of
five), run by both backends on read-only inputs, and compared output by output. The NumPy backend
is checked against finite differences and the adjoint identity by test_rules.py, so agreement here
checks the compiled code of every primitive under every transformation (a primitive without a
Numba lowering runs on the NumPy backend inside the compiled program: its segments are tested too).

Compiling is the cost (about 0.1 s per case on a quiet machine; the machine code is cached on disk
for later runs): by default the first sampled case of every primitive runs, ADARRAY_TEST_NUMBA=all
runs every case. `make test` runs this file at LLVM -O0 (NUMBA_OPT=0, with caches of its own: see the
Makefile), which compiles 3-4x faster; the values differ at most by the reassociation the comparison allows.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("numba")

# At -O0 (`make test`) Numba does not cache functions that read global arrays (the special functions' tables):
# expected there, and said once per function and worker.
pytestmark = pytest.mark.filterwarnings("ignore:Cannot cache compiled function:numba.core.errors.NumbaWarning")

from adarray.backends import numba as numba_backend  # noqa: E402
from adarray.backends.numba import options, runtime  # noqa: E402
from adarray.backends.numba.table import lowerable  # noqa: E402
from adarray.backends.numpy import compile_program as numpy_program  # noqa: E402
from adarray.core.ir import Eqn, Literal, Program, Var  # noqa: E402
from adarray.core.types import is_float  # noqa: E402
from adarray.testing.registry import primitive_program, registry_cases, seed  # noqa: E402
from adarray.transforms.jvp import jvp_program  # noqa: E402
from adarray.transforms.vjp import vjp_program  # noqa: E402
from adarray.transforms.vmap import vmap_program  # noqa: E402


@pytest.fixture(autouse=True)
def chains_at_every_size_and_short_functions(monkeypatch):
    """Loops sharing leading axes run as chains however small their arrays (planning.FusionPlan._chain),
    so that the vmapped and differentiated programs here test chains as well; and generated functions hold at
    most 120 equations (LLVM's time grows faster than a function's length: scatter_mul_partials' joined
    programs, 362 equations, compile in 13 s instead of 25), which also cuts more programs into segments."""
    monkeypatch.setattr(options, "CHAIN_MIN_BYTES", 0)
    monkeypatch.setattr(options, "MAX_SEGMENT_EQUATIONS", 120)


def _selected_cases():
    every = os.environ.get("ADARRAY_TEST_NUMBA") == "all"
    seen, chosen = set(), []
    for case_id, name, args, params in registry_cases():
        if every or name not in seen:
            seen.add(name)
            chosen.append(pytest.param(name, args, params, id=case_id))
    return chosen


def renamed(program: Program) -> Program:
    """A copy of `program` with fresh variables (nested programs are shared: they are closed)."""
    fresh: dict[int, Var] = {}

    def atom(a):
        if isinstance(a, Literal):
            return a
        if id(a) not in fresh:
            fresh[id(a)] = Var(a.aval)
        return fresh[id(a)]

    inputs = tuple(atom(v) for v in program.inputs)
    eqns = tuple(Eqn(e.prim, tuple(atom(a) for a in e.inputs), e.params, tuple(atom(v) for v in e.outputs))
                 for e in program.eqns)
    return Program(inputs, eqns, tuple(atom(a) for a in program.outputs))


def joined(programs) -> Program:
    """One program computing every program of `programs` on its own inputs."""
    copies = [renamed(p) for p in programs]
    return Program(sum((c.inputs for c in copies), ()), sum((c.eqns for c in copies), ()),
                   sum((c.outputs for c in copies), ()))


def derived_programs(name, args, params):
    """(label, program, arguments) for the primitive and its jvp, vjp, second-order and vmap programs."""
    rng = np.random.default_rng(seed(name, "numba", repr(params), *[np.shape(a) for a in args]))
    program = primitive_program(name, args, params)
    found = [("primal", program, list(args))]
    wrt = [is_float(a.dtype) for a in program.in_avals]
    if any(wrt):
        tangents = [rng.standard_normal(a.shape).astype(a.dtype) for a, w in zip(program.in_avals, wrt) if w]
        cotangents = [rng.standard_normal(a.shape).astype(a.dtype) if is_float(a.dtype) else np.zeros(a.shape, a.dtype)
                      for a in program.out_avals]
        found.append(("jvp", jvp_program(program, wrt), list(args) + tangents))
        reverse = vjp_program(program, wrt)
        found.append(("vjp", reverse, list(args) + cotangents))
        second = [is_float(a.dtype) for a in reverse.in_avals]
        more = [rng.standard_normal(a.shape).astype(a.dtype) for a, w in zip(reverse.in_avals, second) if w]
        found.append(("jvp of vjp", jvp_program(reverse, second), list(args) + cotangents + more))
    batched, _ = vmap_program(program, [True] * len(args), 3)
    stacked = [np.stack([a + 0.1 * k * rng.standard_normal(np.shape(a)) if is_float(np.asarray(a).dtype) else a
                         for k in range(3)]).astype(np.asarray(a).dtype) for a in args]
    found.append(("vmap", batched, stacked))
    return found


def tolerance(dtype) -> float:
    """Single precision: 1e-4 (LAPACK's single-precision routines differ by build: NumPy's and SciPy's)."""
    return 1e-4 if np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64)) else 1e-9


def assert_agree(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, f"{what}: {got.dtype}{got.shape} != {want.dtype}" \
                                                                f"{want.shape}"
    if want.dtype.kind in "biu":
        assert np.array_equal(got, want), f"{what}: {got} != {want}"
        return
    rtol = tolerance(want.dtype)
    scale = float(np.max(np.abs(want[np.isfinite(want)]), initial=1.0))
    assert np.allclose(got, want, rtol=rtol, atol=rtol * scale, equal_nan=True), f"{what}:\n{got}\n!=\n{want}"
    assert np.array_equal(np.isinf(got), np.isinf(want)), f"{what}: infinities differ"


def _frozen(value):
    array = np.array(value, copy=True)
    array.flags.writeable = False
    return array


@pytest.mark.parametrize("name, args, params", _selected_cases())
def test_every_transformation_agrees_with_the_numpy_backend(name, args, params):
    parts = derived_programs(name, args, params)
    program = joined([p for _, p, _ in parts])
    # where the primitive is: compiled when it has a lowering for these dtypes, else a NumPy step
    # between compiled segments (whose answers are checked all the same)
    primal = parts[0][1]
    steps = runtime.segments(primal)
    own = [eqn for eqn in primal.eqns if eqn.prim.name == name]
    for eqn in own:
        kind = next(kind for kind, what in steps if eqn is what or (kind == "numba" and any(e is eqn for e in what)))
        assert kind == ("numba" if lowerable(eqn) else "numpy"), f"{name} ran as {kind}"
    if own and all(lowerable(eqn) for eqn in own):
        assert all(kind == "numba" for kind, _ in steps), f"{name}: {[kind for kind, _ in steps]}"
    values = [_frozen(v) for _, _, vs in parts for v in vs]  # an in-place write would raise
    with np.errstate(all="ignore"):
        want = numpy_program(program)(*values)
    got = numba_backend.compile_program(program, f"test {name}")(*values)
    outputs = iter(zip(got, want))
    for label, part, _ in parts:
        for k in range(len(part.outputs)):
            g, w = next(outputs)
            assert_agree(g, w, f"{name}: {label} output {k}")
