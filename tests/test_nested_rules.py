"""Nested derivatives of every primitive, generated from the registry.

For each sampled case, with random directions v, u (inputs) and w (outputs), the scalar function

    psi(s, r) = <w, f(x0 + s v + (r^2 / 2) u)>

has the Hessian [[v' H v, 0], [0, <w, J u>]] at (0, 0). The second entry is where forward over
forward used to fail: the inner tangent r u vanishes at r = 0 while the second derivative does not.
All four compositions of jacfwd and jacrev must agree with each other, with the first-order jvp
(checked against finite differences in test_rules), and with central second differences; three
nested forward passes of <w, f(x0 + (t^3 / 6) u)> must give <w, J u> as well. Each case runs at the
sampled point and at x0 = 0 (stationary points: the partials of mul, cos, ... vanish there).
"""
from __future__ import annotations

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.backends.numpy import compile_program
from adarray.core.types import is_float
from adarray.testing import program_tolerance
from adarray.testing.oracles import pairing, random_normal
from adarray.testing.registry import ZERO_BY_DEFINITION, primitive_program, registry_cases, seed
from adarray.tracing import eval_program
from adarray.transforms.jvp import jvp_program

# Kinks at 0 (or ties when every input is 0): finite differences do not apply at x0 = 0, where the
# derivative is a convention (abs'(0) = 0, the first argument wins a tie); the compositions must
# still agree with each other and with the first-order rule.
KINKED_AT_ZERO = {"abs", "sign", "floor", "ceil", "round", "rem", "floor_divide", "maximum", "minimum",
                  "reduce", "scan", "scatter", "argsort", "sort", "reduce_by_index", "segment_reduce",
                  "hypot", "i0e", "ive",
                  # the zero matrix: a multiple eigenvalue (eigenvectors), singular values at 0, a rank jump
                  "eigh", "svd", "pinv",
                  # ... and for a general matrix even its eigenvalues (those of 0 + t E are t eig(E))
                  "eig"}
# Samplers whose domain excludes 0 in a way that evaluation cannot detect: the sample kernels
# iterate Newton's method to a relative tolerance, which never ends near a = 0 from the negative side;
# a ** b at (0, 0) is a branch point, finite in value with first derivatives 0 by convention, but
# with no second derivative in any mode. E_n(x) at x = 0 is finite for n >= 2, but its (n-1)-th
# derivative (E_1, a logarithm) is infinite there. The square root of the zero matrix is 0, but it
# has no derivative (the Frechet derivative of sqrtm at a singular matrix does not exist).
NOT_AT_ZERO = {"kernel", "pow", "expn", "sqrtm"}
# For complex operands 0 lies on the branch cut of arccosh ((-inf, 1] on the real axis), across which
# it jumps: no derivative there (for real operands 0 is outside its domain, and the case skips itself).
BRANCH_CUT_AT_ZERO = {"arccosh"}
COMPOSITIONS = {
    "fwd(fwd)": lambda f: ad.jacfwd(ad.jacfwd(f)),
    "fwd(rev)": lambda f: ad.jacfwd(ad.jacrev(f)),
    "rev(fwd)": lambda f: ad.jacrev(ad.jacfwd(f)),
    "rev(rev)": lambda f: ad.jacrev(ad.jacrev(f)),
}
CASES = [pytest.param(name, args, params, id=case_id) for case_id, name, args, params in registry_cases()
         if any(is_float(np.asarray(a).dtype) for a in args)]


def _directions(program, rng):
    floats = [is_float(a.dtype) for a in program.in_avals]
    v = [random_normal(rng, a.shape, a.dtype) if f else None for a, f in zip(program.in_avals, floats)]
    u = [random_normal(rng, a.shape, a.dtype) if f else None for a, f in zip(program.in_avals, floats)]
    w = [random_normal(rng, a.shape, a.dtype) if is_float(a.dtype) else None for a in program.out_avals]
    return v, u, w


def _moved(args, steps):
    """args + sum of (scale, directions) over `steps`, cast back to each argument's dtype."""
    moved = []
    for k, arg in enumerate(args):
        value = arg
        for scale, direction in steps:
            if direction[k] is not None:
                value = value + scale * direction[k].astype(np.asarray(arg).dtype)
        moved.append(value)
    return moved


def _pairing(program, w):
    def pair(outputs):  # the real pairing Re(sum o * c): psi is real also for complex outputs
        return sum(anp.real(anp.sum(o * c)) for o, c in zip(outputs, w) if c is not None)

    return pair


def _check_nested(name, program, x0, rng, at_zero=False):
    v, u, w = _directions(program, rng)
    if not any(c is not None for c in w):
        pytest.skip("no float output")
    pair = _pairing(program, w)

    def psi(z):
        return pair(eval_program(program, _moved(x0, [(z[0], v), (z[1] * z[1] / 2.0, u)])))

    def cubic(t):
        return pair(eval_program(program, _moved(x0, [(t * t * t / 6.0, u)])))

    tol = program_tolerance(program)
    wrt = [d is not None for d in u]
    n_out = len(program.outputs)
    tangent = compile_program(jvp_program(program, wrt))(*x0, *[d for d in u if d is not None])[n_out:]
    first_order = float(sum(pairing(t, c) for t, c in zip(tangent, w) if c is not None))
    if at_zero and not np.isfinite(first_order):
        pytest.skip("not differentiable at 0 (arctan2(0, 0), ...)")
    hessians = {label: np.asarray(compose(psi)(np.zeros(2))) for label, compose in COMPOSITIONS.items()}
    third = float(ad.jacfwd(ad.jacfwd(ad.jacfwd(cubic)))(0.0))
    reference = hessians["rev(rev)"]
    scale = 1.0 + np.abs(reference).max()
    context = f"{name} at x0 = {x0}\n{program}\nhessians {hessians}, third {third}, <w, J u> {first_order}"
    for label, hessian in hessians.items():
        assert np.allclose(hessian, reference, rtol=tol.exact ** 0.5, atol=tol.exact ** 0.5 * scale), \
            f"{label} disagrees with rev(rev): {context}"
    assert np.isclose(reference[1, 1], first_order, rtol=1e-6, atol=1e-8 * scale), context
    assert np.isclose(third, first_order, rtol=1e-6, atol=1e-8 * scale), context
    return psi, reference, scale, tol


def _check_against_differences(psi, reference, scale, tol, context):
    run = lambda s, r: float(psi(np.array([s, r])))  # noqa: E731
    with np.errstate(all="ignore"):
        h = 1e-3 if tol.eps < 1e-4 else 0.1
        line = (run(h, 0.0) - 2.0 * run(0.0, 0.0) + run(-h, 0.0)) / h ** 2
        bend = 2.0 * (run(0.0, h) - run(0.0, 0.0)) / h ** 2
    for got, want, what in ((reference[0, 0], line, "v'Hv"), (reference[1, 1], bend, "<w, J u>")):
        assert np.isclose(got, want, rtol=tol.rtol * 30, atol=tol.atol * 30 * scale), \
            f"{what}: {got} vs second differences {want}: {context}"


@pytest.mark.parametrize("name, args, params", CASES)
def test_four_compositions_agree_at_the_sample(name, args, params):
    program = primitive_program(name, args, params)
    rng = np.random.default_rng(seed(name, "nested", repr(params), *[np.shape(a) for a in args]))
    psi, reference, scale, tol = _check_nested(name, program, list(args), rng)
    if name not in ZERO_BY_DEFINITION:
        _check_against_differences(psi, reference, scale, tol, f"{name}\n{program}")


@pytest.mark.parametrize("name, args, params", CASES)
def test_four_compositions_agree_at_zero(name, args, params):
    if name in NOT_AT_ZERO:
        pytest.skip("0 is outside the sampled domain")
    if name in BRANCH_CUT_AT_ZERO and any(np.iscomplexobj(a) for a in args):
        pytest.skip("0 is on the branch cut")
    program = primitive_program(name, args, params)
    zeros = [np.zeros_like(a) if is_float(np.asarray(a).dtype) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            values = compile_program(program)(*zeros)
    except ad.Error:  # a singular matrix at 0 (solve, cholesky): nothing to differentiate
        pytest.skip("0 is outside the domain")
    if not all(np.all(np.isfinite(v)) for v in values if is_float(np.asarray(v).dtype)):
        pytest.skip("0 is outside the domain")
    rng = np.random.default_rng(seed(name, "nested-zero", repr(params), *[np.shape(a) for a in args]))
    psi, reference, scale, tol = _check_nested(name, program, zeros, rng, at_zero=True)
    if name not in ZERO_BY_DEFINITION | KINKED_AT_ZERO:
        _check_against_differences(psi, reference, scale, tol, f"{name} at 0\n{program}")


@pytest.mark.parametrize("build", [
    lambda s: s * s / 2,
    lambda s: anp.log(1 + s ** 2),
    lambda s: anp.sqrt(1 + s * s),
    lambda s: s * s / (1 + s * s),
], ids=["half-square", "log", "sqrt", "ratio"])
def test_second_derivatives_where_the_first_vanishes(build):
    """The reported cases: at s = 0 the first derivative is 0, the second is not."""
    expected = {0: 1.0}
    second = [compose(build)(0.0) for compose in COMPOSITIONS.values()]
    h = 1e-4
    differences = (build(h) - 2 * build(0.0) + build(-h)) / h ** 2
    assert np.allclose(second, differences, rtol=1e-5), (second, differences)
    assert not np.isclose(differences, 0.0) and expected


def test_third_derivative_by_three_forward_passes():
    third = ad.jacfwd(ad.jacfwd(ad.jacfwd(lambda s: s ** 3 / 6)))(0.0)
    assert third == pytest.approx(1.0)
