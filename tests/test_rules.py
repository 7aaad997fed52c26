"""Rule tests generated from the primitive registry.

Every primitive with a `sample` contributes one test case per sampled (args, params):
forward mode against central differences, the adjoint test of reverse mode, the
same two checks on the derivative programs (second order), and the IR contracts
(verifier, print/parse round trip, simplify) on every derived program.
The coverage tests require every primitive to have jvp/vjp rules or explicit
markers, a Taylor rule (or an unsupported marker), an implementation and a sampler.
"""
from __future__ import annotations

import numpy as np
import pytest

from adarray.backends.numpy import IMPLS, compile_program
from adarray.core.primitive import REGISTRY, Marker
from adarray.core.types import Aval, is_float
from adarray.passes import simplify
from adarray.primitives import elementwise as ew
from adarray.testing import check_jvp, check_passes, check_second_order, check_vjp, check_vmap
from adarray.testing.oracles import random_normal
from adarray.testing.registry import ZERO_BY_DEFINITION, primitive_program, registry_cases, seed
from adarray.tracing import trace_program
from adarray.transforms.jvp import jvp_program
from adarray.transforms.vjp import vjp_program

CASES = [pytest.param(name, args, params, id=case_id) for case_id, name, args, params in registry_cases()]


def _rng(name, args, params, check):
    return np.random.default_rng(seed(name, check, repr(params), *[np.shape(a) for a in args]))


@pytest.mark.parametrize("name, args, params", CASES)
def test_jvp_matches_finite_differences(name, args, params):
    program = primitive_program(name, args, params)
    if name in ZERO_BY_DEFINITION:
        _check_zero_derivative(program, args, _rng(name, args, params, "jvp"))
    else:
        check_jvp(program, args, _rng(name, args, params, "jvp"))


def _check_zero_derivative(program, args, rng):
    wrt = [is_float(a.dtype) for a in program.in_avals]
    tangents = [random_normal(rng, np.shape(a), a.dtype) for a, w in zip(args, wrt) if w]
    derived = simplify(jvp_program(program, wrt))
    outputs = compile_program(derived)(*args, *tangents)
    for tangent in outputs[len(program.outputs):]:
        assert not np.any(tangent), f"{program.eqns[0].prim.name} must have a zero derivative\n{derived}"


@pytest.mark.parametrize("name, args, params", CASES)
def test_vjp_adjoint(name, args, params):
    check_vjp(primitive_program(name, args, params), args, _rng(name, args, params, "vjp"))


@pytest.mark.parametrize("name, args, params", CASES)
def test_second_order(name, args, params):
    check_second_order(primitive_program(name, args, params), args, _rng(name, args, params, "second"),
                       finite_differences=name not in ZERO_BY_DEFINITION)


@pytest.mark.parametrize("name, args, params", CASES)
def test_vmap_matches_a_loop_over_slices(name, args, params):
    check_vmap(primitive_program(name, args, params), args, _rng(name, args, params, "vmap"))


@pytest.mark.parametrize("name, args, params", CASES)
def test_ir_contracts_of_derived_programs(name, args, params):
    program = primitive_program(name, args, params)
    check_passes(program, args)
    wrt = [is_float(a.dtype) for a in program.in_avals]
    if not any(wrt):
        return
    rng = _rng(name, args, params, "passes")
    tangents = [random_normal(rng, np.shape(a), a.dtype) for a, w in zip(args, wrt) if w]
    cotangents = [
        random_normal(rng, a.shape, a.dtype) if is_float(a.dtype) else np.zeros(a.shape, a.dtype)
        for a in program.out_avals
    ]
    forward = jvp_program(program, wrt)
    reverse = vjp_program(program, wrt)
    for derived, derived_args in ((forward, args + tangents), (reverse, args + cotangents)):
        check_passes(derived, derived_args)
        check_passes(simplify(derived), derived_args)


# --- coverage matrix -----------------------------------------------------------------------------


def test_every_primitive_has_a_batching_rule():
    missing = sorted(name for name, prim in REGISTRY.items() if prim.batch is None)
    assert not missing, f"no batching rule: {missing}"


def test_every_primitive_has_jvp_and_vjp_rules_or_markers():
    missing = [
        f"{name}.{rule}"
        for name, prim in sorted(REGISTRY.items())
        for rule in ("jvp", "vjp")
        if not (callable(getattr(prim, rule)) or isinstance(getattr(prim, rule), Marker))
    ]
    assert not missing, "rules that are neither a callable nor an explicit Marker: " + ", ".join(missing)


def test_every_primitive_has_a_taylor_rule_or_an_unsupported_marker():
    """The Taylor column (ad.jet, ad.taylor; checked against nested jvp in tests/test_jet.py)."""
    from adarray.primitives.taylor import FROM_JVP

    missing = sorted(name for name, prim in REGISTRY.items()
                     if not (callable(prim.taylor) or prim.taylor is FROM_JVP
                             or (isinstance(prim.taylor, Marker) and prim.taylor.kind == "unsupported")))
    assert not missing, f"no Taylor rule or unsupported(reason) marker: {missing}"


def test_every_primitive_has_an_impl():
    missing = [name for name, prim in sorted(REGISTRY.items()) if prim not in IMPLS]
    assert not missing, "primitives without a NumPy impl: " + ", ".join(missing)


def test_every_primitive_has_a_sampler():
    missing = [name for name, prim in sorted(REGISTRY.items()) if prim.sample is None]
    assert not missing, f"{len(missing)} primitives without a test sampler: " + ", ".join(missing)


def test_every_sampler_gives_cases_its_shape_rule_accepts():
    for name, prim in sorted(REGISTRY.items()):
        if prim.sample is None:
            continue
        cases = prim.sample(np.random.default_rng(0))
        assert cases, f"the sampler of {name} gives no cases"
        for args, params in cases:
            prim.abstract_eval(*[Aval(np.shape(a), np.asarray(a).dtype) for a in args], **params)


def test_linear_primitives_have_transpose_rules():
    """A primitive that declares a transpose rule must have it callable."""
    for name, prim in sorted(REGISTRY.items()):
        if prim.transpose is not None:
            assert callable(prim.transpose), f"{name}.transpose is not callable"


# --- singular points: forward and reverse mode agree ------------------------------------------------


def _singular_cases():
    from adarray.primitives.scalar import SINGULAR_POINTS

    cases = []
    for prim, points in sorted(SINGULAR_POINTS.items(), key=lambda item: item[0].name):
        name = prim.name
        for index, (operands, params) in enumerate(points):
            cases.append(pytest.param(name, operands, params, id=f"{name}-{index}"))
    return cases


@pytest.mark.parametrize("weighted", [False, True], ids=["alone", "weighted"])
@pytest.mark.parametrize("name, operands, params", _singular_cases())
def test_jvp_equals_grad_times_direction_at_singular_points(name, operands, params, weighted):
    """At a pole, branch point or domain edge, J v (forward mode, along a direction with no zero
    component) equals (J^T 1) . v (reverse mode), or both are NaN: the two modes never disagree.
    `weighted`: the output times a weight that is 0 at the singular point, so the cotangent reaching the
    primitive is a computed zero (IEEE: 0 * inf = NaN in both modes, never a silent 0 in one of them)."""
    prim = REGISTRY[name]
    rng = np.random.default_rng(seed(name, "singular", repr(operands), repr(params)))
    args = [np.array([value, value + 0.5]) for value in operands]  # the singular point, and a regular one
    weight = np.array([0.0, 1.0])
    avals = [Aval((2,), np.float64)] * (len(args) + 1)

    def fn(*xs):
        out = prim.bind(*xs[:-1], **params)
        return ew.mul(out, xs[-1]) if weighted else out

    program, _, _ = trace_program(fn, avals, name)
    wrt = [True] * len(args) + [False]
    directions = [rng.uniform(0.5, 1.5, 2) * rng.choice([-1.0, 1.0], 2) for _ in args]
    with np.errstate(all="ignore"):
        forward = compile_program(simplify(jvp_program(program, wrt)))(*args, weight, *directions)[-1]
        cotangents = compile_program(simplify(vjp_program(program, wrt)))(*args, weight, np.ones(2))[1:]
        reverse = sum(c * v for c, v in zip(cotangents, directions))
    agree = np.isclose(forward, reverse, rtol=1e-12, atol=0.0, equal_nan=True)
    assert agree.all(), f"{name}{operands} {params}: jvp {forward} but grad . v {reverse}"
