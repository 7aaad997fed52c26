"""The JAX/XLA backend against the NumPy backend, generated from the primitive registry.

Every sampled case of every primitive runs through the JAX lowering, and so do its forward-mode
(jvp) and reverse-mode (vjp) programs; each must agree with the NumPy backend to rounding. One
`jax.jit` per primitive holds all its cases and their derivative programs (compiling one small
computation per case would dominate the suite's time). A primitive without a lowering fails here.
"""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from adarray.backends import jax as jax_backend  # noqa: E402
from adarray.backends.numpy import compile_program  # noqa: E402
from adarray.core.primitive import REGISTRY  # noqa: E402
from adarray.core.types import is_complex, is_float  # noqa: E402
from adarray.passes import simplify  # noqa: E402
from adarray.testing.oracles import random_normal  # noqa: E402
from adarray.testing.registry import primitive_program, registry_cases, seed  # noqa: E402
from adarray.transforms.jvp import jvp_program  # noqa: E402
from adarray.transforms.vjp import vjp_program  # noqa: E402

CASES: dict[str, list] = {}
for _case_id, _name, _args, _params in registry_cases():
    CASES.setdefault(_name, []).append((_case_id, _args, _params))

# Outputs defined only up to a gauge (signs or phases of eigenvectors and singular vectors): compared
# through a gauge-invariant product instead (see _gauge_free).
GAUGED = {"eig", "eigh", "svd"}


# Derivative programs are lowered for the first DERIVATIVE_CASES sampled cases of each primitive and for
# every edge case (compiling them all would triple the time of this file; the values of every case run). The
# primitives a derivative program binds are registry primitives whose every case runs here as a value; a
# second case's derivative programs cost 48 s of CPU (XLA's compile of the special functions) for no new one.
DERIVATIVE_CASES = 1


def _programs(name, case_id, index, args, params):
    """(label, program, arguments): the primitive's program and its jvp and vjp programs."""
    program = primitive_program(name, args, params)
    out = [("value", program, list(args))]
    wrt = [is_float(a.dtype) for a in program.in_avals]
    if any(wrt) and (index < DERIVATIVE_CASES or "-edge" in case_id):
        rng = np.random.default_rng(seed(name, "jax", repr(params), *[np.shape(a) for a in args]))
        tangents = [random_normal(rng, np.shape(a), a.dtype) for a, w in zip(args, wrt) if w]
        cotangents = [random_normal(rng, a.shape, a.dtype) if is_float(a.dtype) else np.zeros(a.shape, a.dtype)
                      for a in program.out_avals]
        out.append(("jvp", simplify(jvp_program(program, wrt)), list(args) + tangents))
        out.append(("vjp", simplify(vjp_program(program, wrt)), list(args) + cotangents))
    return out


def _tolerance(value):
    dtype = np.asarray(value).dtype
    return 2e-4 if dtype in (np.float32, np.complex64) else 1e-8


def _close(label, got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{label}: shape {got.shape}, NumPy backend {want.shape}"
    assert got.dtype == want.dtype, f"{label}: dtype {got.dtype}, NumPy backend {want.dtype}"
    if not (is_float(want.dtype) or is_complex(want.dtype)):
        np.testing.assert_array_equal(got, want, err_msg=label)
        return
    tol = _tolerance(want)
    finite = want[np.isfinite(want)]
    scale = float(np.max(np.abs(finite))) if finite.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(scale, 1.0), err_msg=label, equal_nan=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowering_agrees_with_numpy_backend(name):
    programs = [(f"{case_id} {label}", program, args) for index, (case_id, args, params) in enumerate(CASES[name])
                for label, program, args in _programs(name, case_id, index, args, params)]
    lowered = [jax_backend.lower_program(program) for _, program, _ in programs]
    counts = [len(args) for _, _, args in programs]

    def together(*flat):
        outs, start = [], 0
        for fn, count in zip(lowered, counts):
            outs.append(fn(*flat[start:start + count]))
            start += count
        return outs

    flat = [np.asarray(a) for _, _, args in programs for a in args]
    with jax_backend.x64():
        results = jax.jit(together)(*flat)
    for (label, program, args), got in zip(programs, results):
        want = compile_program(program)(*args)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            if name in GAUGED and label.endswith("value") and i > 0:
                continue  # vectors: checked through the reconstruction below
            _close(f"{label} output {i}", g, w)
        if name in GAUGED and label.endswith("value"):
            _check_vectors(name, program, args, [np.asarray(g) for g in got])


def _check_vectors(name, program, args, outs):
    """Eigen- and singular vectors up to their gauge: they must reconstruct the matrix."""
    a = np.asarray(args[0])
    params = program.eqns[0].params
    if name == "eigh" and params.get("compute_v"):
        w, v = outs
        lower = np.tril(a) + np.conj(np.swapaxes(np.tril(a, -1), -1, -2))
        np.testing.assert_allclose((v * w[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2)), lower,
                                   atol=1e-6 * max(1.0, np.abs(a).max(initial=0)))
    elif name == "eig" and params.get("compute_v"):
        w, v = outs
        np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-6 * max(1.0, np.abs(a).max(initial=0)))
    elif name == "svd" and params.get("compute_uv"):
        u, s, vh = outs
        k = s.shape[-1]
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a,
                                   atol=1e-6 * max(1.0, np.abs(a).max(initial=0)))


def test_every_primitive_has_a_lowering():
    missing = sorted(name for name, prim in REGISTRY.items()
                     if prim not in jax_backend.LOWERINGS and prim not in jax_backend.HOST_CALLBACKS)
    assert not missing, "primitives without a JAX lowering: " + ", ".join(missing)


HOST_CALLBACKS: list = []


def test_host_callbacks_are_the_documented_ones():
    """None runs on the host now: every primitive lowers to XLA. See the family modules. A primitive moved to
    the host (or back) must change this list, the family module's docstring and docs/choosing_a_backend.md,
    which lists them by name."""
    import pathlib
    import re

    assert sorted(p.name for p in jax_backend.HOST_CALLBACKS) == HOST_CALLBACKS
    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "choosing_a_backend.md").read_text()
    paragraph = page[page.index("on the host through `jax.pure_callback`"):]
    paragraph = paragraph[:paragraph.index("\n* ")]
    documented = {name for name in re.findall(r"`(\w+)`", paragraph) if name in REGISTRY}
    assert sorted(documented) == HOST_CALLBACKS


def _relative_error(got, want):
    got, want = np.asarray(got), np.asarray(want)
    agree = (np.isnan(got) & np.isnan(want)) | (got == want)
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity: agreed above
        return np.where(agree, 0.0, np.abs(got - want) / np.maximum(np.abs(want), 1e-300))


def test_binom_and_zeta_agree_with_scipy_beyond_their_samplers():
    """binom and zeta are SciPy's formulas in jnp (backends/jax/gamma_functions.py): negative and integer
    arguments, poles, and the Riemann zeta continued to s < 1, against scipy.special."""
    import scipy.special as sc

    from adarray.primitives import gamma_functions as gf

    rng = np.random.default_rng(15)
    ints = np.meshgrid(np.arange(-6.0, 40.0), np.arange(-6.0, 40.0))
    halves = np.meshgrid(np.arange(-10.0, 30.0) + 0.5, np.arange(-10.0, 30.0))
    binom_cases = [(ints[0].ravel(), ints[1].ravel()), (halves[0].ravel(), halves[1].ravel()),
                   (rng.uniform(-30, 30, 4000), rng.uniform(-30, 30, 4000)),
                   (rng.uniform(-1e-9, 1e-9, 100), np.round(rng.uniform(0, 5, 100)))]
    s_values = np.concatenate([rng.uniform(-170, 1, 2000), np.arange(-40.0, 40.0), np.linspace(0, 0.999, 200),
                               rng.uniform(1.01, 60, 500)])
    binom, zeta = jax_backend.LOWERINGS[gf.binom_p], jax_backend.LOWERINGS[gf.zeta_p]
    with jax_backend.x64():
        for n, k in binom_cases:
            assert _relative_error(jax.jit(binom)(n, k), sc.binom(n, k)).max() < 5e-13
        got = jax.jit(zeta)(s_values, np.ones_like(s_values))
        assert _relative_error(got, sc.zeta(s_values)).max() < 1e-11
        s, q = rng.uniform(-3, 8, 2000), rng.uniform(0.2, 4, 2000)
        assert _relative_error(jax.jit(zeta)(s, q), sc.zeta(s, q)).max() < 1e-13  # NaN for s < 1 in both


def test_adjugate_derivative_at_every_rank_and_past_the_minor_limit():
    """The minor expansion (backends/jax/linalg.py) against the NumPy backend's pivoted formula: graded, rank
    one and zero matrices up to n = 8 and order n - 2 (n - 1 is the polarised adjugate, in the registry cases); large
    n and order go to the host."""
    from adarray.backends.numpy.registry import implementation
    from adarray.primitives import matrix_functions as mf

    rng = np.random.default_rng(15)
    reference, lowered = implementation(mf.adjugate_derivative_p), jax_backend.LOWERINGS[mf.adjugate_derivative_p]

    def graded(n):
        q1, q2 = np.linalg.qr(rng.normal(size=(n, n)))[0], np.linalg.qr(rng.normal(size=(n, n)))[0]
        return q1 @ np.diag(10.0 ** -np.arange(0, 2 * n, 2)) @ q2

    cases = [(np.stack([rng.normal(size=(n, n)), graded(n), np.outer(rng.normal(size=n), rng.normal(size=n)),
                        np.zeros((n, n))]), order) for n, order in ((3, 1), (5, 1), (5, 3), (8, 2), (8, 6))]
    cases += [(rng.normal(size=(20, 20)), 3), (rng.normal(size=(40, 40)), 4)]  # 6195 minors; 760,098: the host
    with jax_backend.x64():
        for a, order in cases:
            directions = [rng.normal(size=a.shape) for _ in range(order)]
            want = reference(a, *directions)
            got = np.asarray(jax.jit(lowered)(a, *directions))
            scale = np.abs(want).max(axis=(-2, -1), keepdims=True)
            assert np.all(np.abs(got - want) <= 1e-10 * np.maximum(scale, 1e-300)), (a.shape, order)
