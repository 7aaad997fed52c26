"""adarray.bounds: Taylor enclosures checked against the function at thousands of points, AutoBound's own
figures, the Lagrange bound, gradients, outward rounding (an adversarial case) and bad input."""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import adarray as ad
import adarray.bounds as ab
import adarray.nn as nn
import adarray.numpy as anp
import adarray.scipy.special as sp
from adarray.primitives import elementwise as ew

AUTOBOUND_F = lambda x: 1.5 * anp.exp(3 * x) - 25 * x ** 2  # noqa: E731 - AutoBound's README example
W = np.array([[0.7, -1.2], [0.4, 0.9], [-0.3, 0.5]])
INDEX = np.array([0, 2, 1, 0])

# name -> (function of a scalar, the domain boxes are drawn from)
SCALAR = {
    "exp": (anp.exp, (-2, 2)), "log": (anp.log, (0.2, 3)), "sqrt": (anp.sqrt, (0.1, 3)),
    "x^1.5": (lambda x: x ** 1.5, (0.1, 3)), "x^-0.5": (lambda x: x ** -0.5, (0.1, 3)),
    "1/x": (lambda x: 1 / x, (0.3, 3)), "x^3": (lambda x: x ** 3, (-2, 2)), "x^-2": (lambda x: x ** -2, (0.3, 2)),
    "cbrt": (anp.cbrt, (-2, 2)), "sin": (anp.sin, (-3, 3)), "cos": (anp.cos, (-3, 3)), "tanh": (anp.tanh, (-3, 3)),
    "arctan": (anp.arctan, (-3, 3)), "erf": (sp.erf, (-2, 2)), "sigmoid": (nn.sigmoid, (-4, 4)),
    "softplus": (nn.softplus, (-4, 4)), "swish": (nn.silu, (-4, 4)), "abs": (anp.abs, (-2, 2)),
    "relu": (nn.relu, (-2, 2)), "maximum": (lambda x: anp.maximum(x, 0.3), (-2, 2)),
    "minimum": (lambda x: anp.minimum(2 * x, 1 - x), (-2, 2)), "clip": (lambda x: anp.clip(x, -0.5, 0.7), (-2, 2)),
    "where": (lambda x: anp.where(x > 0.2, x ** 2, -x), (-2, 2)),
    "logaddexp": (lambda x: anp.logaddexp(x, 2 * x), (-2, 2)),
    "sin(x) exp(-x^2)": (lambda x: anp.sin(x) * anp.exp(-x ** 2), (-2, 2)),
    "tanh(3x) + x^2": (lambda x: anp.tanh(3 * x) + x ** 2, (-2, 2)),
    "1 / (1 + x^2)": (lambda x: 1 / (1 + x ** 2), (-2, 2)),
    "softplus(2x - 1) sigmoid(x)": (lambda x: nn.softplus(2 * x - 1) * nn.sigmoid(x), (-2, 2)),
    "logsumexp": (lambda x: sp.logsumexp(anp.stack([x, 2 * x, -x])), (-2, 2)),
    "expm1": (anp.expm1, (-2, 2)), "log1p": (anp.log1p, (-0.5, 2)), "sinh": (anp.sinh, (-2, 2)),
    "cosh": (anp.cosh, (-2, 2)), "exp2": (anp.exp2, (-2, 2)), "log10": (anp.log10, (0.2, 3)),
    "autobound": (AUTOBOUND_F, (0, 1)),
    "fold": (lambda x: ad.fold(lambda c, _: (anp.sin(c) * 0.9 + 0.1 * x, None), x, length=5)[0], (-1, 1)),
    "cond": (lambda x: ad.cond(x > 0.5, lambda y: y * 2, lambda y: -y, x), (-1, 1)),
}
# name -> (function of a vector, its length)
VECTOR = {
    "sum of squares": (lambda x: anp.sum(x ** 2), 2), "product": (lambda x: x[0] * x[1], 2),
    "matmul + tanh": (lambda x: anp.sum(anp.tanh(W @ x)), 2), "max": (lambda x: anp.max(x), 3),
    "cumsum": (lambda x: anp.sum(anp.cumsum(x) ** 2), 3),
    "gather": (lambda x: anp.sum(x[INDEX] * anp.arange(4.0)), 3),
    "slicing": (lambda x: anp.sum(x[1:] * x[:-1]) + x[::2].sum(), 3),
    "reduce_by_index add": (lambda x: anp.sum(ad.reduce_by_index(anp.zeros(3), "add", INDEX,
                                                                 anp.concatenate([x, x[:1]])) ** 2), 3),
    "reduce_by_index max": (lambda x: anp.sum(ad.reduce_by_index(anp.full(3, -np.inf), "max", INDEX,
                                                                 anp.concatenate([x, x[:1]]))), 3),
    "scan max": (lambda x: anp.sum(ad.scan("max", x)), 3), "prod": (lambda x: anp.prod(x), 3),
    "logsumexp": (lambda x: sp.logsumexp(x), 3),
    "fold over xs": (lambda x: ad.fold(lambda c, xi: (c * 0.5 + anp.sin(xi), None), 0.0, x)[0], 3),
    "einsum": (lambda x: anp.einsum("i,j,ij->", x, x, np.eye(3) + 0.5), 3),
    "mlp": (lambda x: anp.sum(nn.softplus(W @ x - 0.2) ** 2), 2),
}


def _values(f, xs):
    return np.asarray(ad.jit(ad.vmap(f))(xs), np.float64)


def _check_contains(name, f, tb, xs, degree):
    fx = _values(f, xs)
    lower, upper = tb(xs)
    slack = 1e-12 * (1.0 + np.abs(fx))  # f itself is evaluated in floating point here
    outside = (fx < lower - slack) | (fx > upper + slack)
    assert not outside.any(), (f"{name}, degree {degree}: f leaves its enclosure at x = {xs[outside][:3]}: "
                               f"f = {fx[outside][:3]}, bounds {lower[outside][:3]}, {upper[outside][:3]}")


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_scalar_enclosures_contain_the_function(name):
    f, (a, b) = SCALAR[name]
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    for degree in range(5):
        for _ in range(3):
            lo, hi = np.sort(rng.uniform(a, b, 2))
            x0 = rng.uniform(lo, hi)
            tb = ab.taylor_bounds(f, degree)(x0, (lo, hi))
            xs = np.concatenate([np.linspace(lo, hi, 180), [lo, x0, hi]])
            _check_contains(name, f, tb, xs, degree)


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_enclosures_contain_the_function(name):
    f, n = VECTOR[name]
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    for degree in range(5 if n <= 2 else 4):
        lo = rng.uniform(-1, 0, n)
        hi = lo + rng.uniform(0.1, 1, n)
        x0 = rng.uniform(lo, hi)
        tb = ab.taylor_bounds(f, degree)(x0, (lo, hi))
        corners = np.array(np.meshgrid(*zip(lo, hi))).reshape(n, -1).T
        xs = np.concatenate([rng.uniform(lo, hi, (400, n)), corners, x0[None]])
        _check_contains(name, f, tb, xs, degree)


# --- AutoBound's figures ----------------------------------------------------------------------------------

def test_autobound_readme_example_is_reproduced():
    tb = ab.taylor_bounds(AUTOBOUND_F, 2, verified=False)(0.5, (0.0, 1.0))
    c0, c1, (lo, hi) = tb.coefficients
    # AutoBound prints (0.47253, -4.83240, [-5.55494, 28.28789]); the exact sharp values (closed forms of
    # R(0) and R(3) for exp around 1.5) agree to 1e-5, and the lower end is 7e-6 tighter than AutoBound's
    e, e3 = Decimal(1.5).exp(), Decimal(3).exp()  # 28 significant digits
    exact = [Decimal(1.5) * e - Decimal(6.25), Decimal(4.5) * e - 25, Decimal(13.5) * (1 + e / 2) / Decimal(2.25) - 25,
             Decimal(13.5) * (e3 - Decimal(2.5) * e) / Decimal(2.25) - 25]
    np.testing.assert_allclose([c0, c1, lo, hi], [float(v) for v in exact], rtol=1e-13)
    np.testing.assert_allclose([c0, c1, lo, hi], [0.47253, -4.83240, -5.55494, 28.28789], atol=1e-5)
    assert lo >= -5.55494 and hi <= 28.28789 + 5e-6  # never looser than AutoBound
    f1, f0 = 1.5 * math.exp(3.0) - 25.0, 1.5
    np.testing.assert_allclose(tb.upper(1.0), f1, rtol=1e-14)  # the sharp bound touches f at both ends
    np.testing.assert_allclose(tb.lower(0.0), f0, rtol=1e-14)
    verified = ab.taylor_bounds(AUTOBOUND_F, 2)(0.5, (0.0, 1.0))
    (c0_lo, c0_hi), (c1_lo, c1_hi), (lo_v, hi_v) = verified.coefficients
    # thin intervals around the exact coefficients (exact up to the last bit of the closed forms above)
    assert Decimal(float(c0_lo)) <= exact[0] <= Decimal(float(c0_hi)) and c0_hi - c0_lo < 1e-13
    assert Decimal(float(c1_lo)) <= exact[1] <= Decimal(float(c1_hi)) and c1_hi - c1_lo < 1e-12
    assert Decimal(float(lo_v)) <= exact[2] and exact[3] <= Decimal(float(hi_v)) and hi_v - lo_v < hi - lo + 1e-12


@pytest.mark.parametrize("degree, cells, expected", [
    (2, 1, (0.00962, 2.82986)), (4, 1, (1.12612, 1.30569)), (8, 1, (1.209357, 1.209518)), (2, 8, (1.20602, 1.21298)),
])
def test_autobound_integration_figures(degree, cells, expected):
    lower, upper = ab.integrate(AUTOBOUND_F, 0.0, 1.0, degree, cells)
    truth = 0.5 * (math.exp(3.0) - 1.0) - 25.0 / 3.0
    assert lower <= truth <= upper
    decimals = len(str(expected[0]).split(".")[1])
    np.testing.assert_allclose([lower, upper], expected, atol=0.6 * 10.0 ** -decimals)


def test_integral_bounds_shrink_with_degree_and_cells():
    truth = 0.5 * (math.exp(3.0) - 1.0) - 25.0 / 3.0
    widths = []
    for degree in (1, 2, 3, 4, 6):
        lower, upper = ab.integrate(AUTOBOUND_F, 0.0, 1.0, degree, 1)
        assert lower <= truth <= upper
        widths.append(upper - lower)
    assert all(a > b for a, b in zip(widths, widths[1:])), widths
    by_cells = [np.subtract(*ab.integrate(AUTOBOUND_F, 0.0, 1.0, 2, c)[::-1]) for c in (1, 2, 4, 8, 16)]
    assert all(a > b for a, b in zip(by_cells, by_cells[1:])), by_cells


# --- theory: sharpness, Lagrange, gradients ------------------------------------------------------------------

@pytest.mark.parametrize("degree", [1, 2, 3, 4])
@pytest.mark.parametrize("name, box", [("exp", (-0.7, 0.1, 1.3)), ("log", (0.4, 0.9, 2.3)), ("sqrt", (0.4, 0.9, 2.3)),
                                       ("1/x", (0.4, 0.9, 2.3)), ("x^1.5", (0.4, 0.9, 2.3)),
                                       ("x^-0.5", (0.4, 0.9, 2.3)), ("x^-2", (0.4, 0.9, 2.3)),
                                       ("cbrt", (0.4, 0.9, 2.3)), ("cbrt", (-2.3, -0.9, -0.4)),
                                       ("sigmoid", (0.4, 0.9, 2.3)), ("sigmoid", (-2.3, -0.9, -0.4)),
                                       ("softplus", (0.4, 0.9, 2.3)), ("softplus", (-2.3, -0.9, -0.4)),
                                       ("swish", (0.4, 0.9, 2.3)), ("swish", (-3.5, -2.9, -2.3)),
                                       ("abs", (0.4, 0.9, 2.3)), ("tanh", (0.4, 0.9, 2.3)),
                                       ("arctan", (0.4, 0.9, 2.3)), ("erf", (0.4, 0.9, 2.3))])
def test_enclosure_touches_the_function_at_both_ends(name, box, degree):
    """Where f^(k) is monotone on the box (exp, log, powers on x > 0, at every degree) the remainder
    quotient is monotone, so its interval is attained at both ends and the lower or the upper polynomial
    meets f there (Streeter & Dillon, 2308.00679); on these boxes the same holds for AutoBound's sigmoid,
    softplus, swish and abs and for what it lacks (tanh, arctan, erf)."""
    f = SCALAR[name][0]
    lo, x0, hi = box
    tb = ab.taylor_bounds(f, degree)(x0, (lo, hi))
    for x in (lo, hi):
        lower, upper = tb(x)
        fx = float(f(x))
        gap = min(abs(float(lower) - fx), abs(float(upper) - fx))
        assert gap < 1e-13 * abs(fx), (x, lower, upper, fx)


def _lagrange_range(f, degree, lo, hi):
    """The classical bound: the range of f^(k) / k! over the box, sampled densely (an inner estimate)."""
    coefficient = ad.jit(ad.vmap(lambda x: ad.taylor(f, degree)(x, 1.0)[degree]))
    values = np.asarray(coefficient(np.linspace(lo, hi, 4001)))
    return values.min(), values.max()


@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tanh", "arctan", "erf", "sigmoid", "softplus", "swish",
                                  "x^1.5", "x^-0.5", "1/x", "sqrt", "x^3"])
def test_never_wider_than_the_lagrange_bound(name):
    f, (a, b) = SCALAR[name]
    rng = np.random.default_rng(7)
    for degree in (1, 2, 3):
        lo, hi = np.sort(rng.uniform(a, b, 2))
        x0 = 0.5 * (lo + hi)
        top = ab.taylor_bounds(f, degree)(x0, (lo, hi)).coefficients[-1]
        lagrange = _lagrange_range(f, degree, lo, hi)
        width = lagrange[1] - lagrange[0]
        # within the (sampled) Lagrange range, up to 2% of its width where the enclosure is not sharp
        assert top[1] - top[0] <= width * 1.02 + 1e-12, (name, degree, top, lagrange)


def test_degree_one_coefficient_is_the_gradient():
    for name in ("sin(x) exp(-x^2)", "softplus(2x - 1) sigmoid(x)", "autobound"):
        f, (a, b) = SCALAR[name]
        x0 = 0.3 * a + 0.7 * b
        c1 = ab.taylor_bounds(f, 3)(x0, (a, b)).coefficients[1]
        lo, hi = c1 if isinstance(c1, tuple) else (c1, c1)
        g = ad.grad(f)(x0)
        assert lo - 1e-14 * abs(g) <= g <= hi + 1e-14 * abs(g) and hi - lo < 1e-12 * (1 + abs(g))
    f, _ = VECTOR["matmul + tanh"]
    x0 = np.array([0.2, -0.1])
    lo, hi = ab.taylor_bounds(f, 2)(x0, (x0 - 0.5, x0 + 0.5)).coefficients[1]
    np.testing.assert_allclose(lo, ad.grad(f)(x0), rtol=1e-13)
    assert np.all(lo <= hi)


def test_kink_on_the_centre_gives_an_unbounded_top_coefficient():
    """relu at degree >= 2 with the centre on the kink: no polynomial follows it; say so with (-inf, inf)."""
    tb = ab.taylor_bounds(nn.relu, 2)(0.0, (-1.0, 1.0))
    assert tb.coefficients[-1][0] == -np.inf and tb.coefficients[-1][1] == np.inf
    np.testing.assert_allclose(tb.final_interval(), (0.0, 1.0), atol=1e-15)  # the range stays finite
    lo, hi = ab.taylor_bounds(nn.relu, 1)(0.0, (-1.0, 1.0)).coefficients[-1]
    assert -1e-300 < lo <= 0.0 and 1.0 <= hi < 1.0 + 1e-15
    lo, hi = ab.taylor_bounds(nn.relu, 2)(0.5, (-1.0, 1.0)).coefficients[-1]  # off the kink: finite
    assert np.isfinite(lo) and np.isfinite(hi)


def test_functions_are_recognised_however_they_trace():
    box = (-1.0, 2.0)
    softplus = ab.taylor_bounds(nn.softplus, 2)(0.5, box).coefficients[-1]  # logaddexp(x, 0)
    for spelled in (lambda x: anp.log(1 + anp.exp(x)), lambda x: anp.log1p(anp.exp(x)),
                    lambda x: anp.logaddexp(0.0, x)):  # the same sharp softplus enclosure, however spelled
        np.testing.assert_array_equal(ab.taylor_bounds(spelled, 2)(0.5, box).coefficients[-1], softplus)
    swish = ab.taylor_bounds(nn.silu, 2)(0.5, box).coefficients[-1]  # x * logistic(x)
    product = ab.taylor_bounds(lambda x: x / (1 + anp.exp(-x)), 2)(0.5, box).coefficients[-1]
    assert swish[1] - swish[0] < product[1] - product[0]
    relu = ab.taylor_bounds(nn.relu, 1)(0.5, box).coefficients[-1]  # select(x > 0, x, 0) is a max
    np.testing.assert_allclose(relu, (1.0 / 3.0, 1.0), rtol=1e-14)  # the secant to relu(-1), then slope 1


def test_decided_where_takes_its_branch():
    f = lambda x: anp.where(x > 0.0, anp.exp(x), -x)  # noqa: E731
    decided = ab.taylor_bounds(f, 2)(1.0, (0.5, 1.5))
    plain = ab.taylor_bounds(anp.exp, 2)(1.0, (0.5, 1.5))
    for a, b in zip(decided.coefficients, plain.coefficients):
        np.testing.assert_array_equal(a, b)


# --- verified: outward rounding -------------------------------------------------------------------------------

def test_outward_rounding_holds_where_plain_floating_point_fails():
    """sum(0.1 * x) over 1000 terms at x = 0.3: the float result is not the exact value; the interval
    computed without outward rounding is a single float that misses it, the verified one contains it."""
    w = np.full(1000, 0.1)
    f = lambda x: anp.sum(w * x) + x * x * x  # noqa: E731
    x = 0.3
    exact = sum(Fraction(0.1) * Fraction(x) for _ in range(1000)) + Fraction(x) ** 3
    for degree in (0, 2):
        plain = ab.taylor_bounds(f, degree, verified=False)(x, (x, x)).final_interval()
        verified = ab.taylor_bounds(f, degree)(x, (x, x)).final_interval()
        assert not Fraction(float(plain[0])) <= exact <= Fraction(float(plain[1]))  # fails without rounding
        assert Fraction(float(verified[0])) <= exact <= Fraction(float(verified[1]))  # holds with it
        assert float(verified[1]) - float(verified[0]) < 1e-11


def test_verified_bounds_enclose_exact_polynomials_on_a_box():
    """A polynomial with inexact coefficients, checked in exact rational arithmetic at many points."""
    f = lambda x: 0.1 * x ** 3 - 0.3 * x * x + 0.7 * x - 0.2  # noqa: E731
    tb = ab.taylor_bounds(f, 2)(0.35, (0.1, 0.6))
    for x in np.linspace(0.1, 0.6, 101):
        q = Fraction(x)
        exact = Fraction(0.1) * q ** 3 - Fraction(0.3) * q * q + Fraction(0.7) * q - Fraction(0.2)
        lower, upper = tb(x)
        assert Fraction(float(lower)) <= exact <= Fraction(float(upper))


# --- register_enclosure and errors ----------------------------------------------------------------------------

def test_register_enclosure_for_an_elementwise_primitive(monkeypatch):
    monkeypatch.setattr(ew.arcsinh_p, "enclosure", None)
    with pytest.raises(ad.UnsupportedError, match="'arcsinh'.*register_enclosure"):
        ab.taylor_bounds(anp.arcsinh, 1)(0.5, (0.0, 1.0))

    def arcsinh_rule(center, lower, upper, degree):  # degree 1: the Lagrange range of 1 / sqrt(1 + y^2)
        slope = lambda y: 1.0 / np.sqrt(1.0 + y * y)  # noqa: E731
        nearest = np.clip(0.0, lower, upper)
        far = np.where(np.abs(lower) > np.abs(upper), lower, upper)
        return [np.arcsinh(center), (slope(far) * (1 - 1e-12), slope(nearest) * (1 + 1e-12))]

    ab.register_enclosure(ew.arcsinh_p, arcsinh_rule)
    tb = ab.taylor_bounds(lambda x: 2.0 * anp.arcsinh(x), 1)(0.5, (0.0, 1.0))
    xs = np.linspace(0.0, 1.0, 101)
    lower, upper = tb(xs)
    assert np.all(lower <= 2 * np.arcsinh(xs) + 1e-12) and np.all(2 * np.arcsinh(xs) <= upper + 1e-12)


@pytest.mark.parametrize("f, x0, name", [
    (lambda x: anp.real(anp.exp(1j * x)), 0.3, "convert"),
    (lambda x: anp.sum(anp.real(anp.fft.rfft(x))), np.array([0.1, 0.2, 0.3]), "fft"),
    (lambda x: anp.sum(anp.abs(anp.fft.fft(x))), np.array([0.1, 0.2, 0.3]), "convert"),
    (lambda x: anp.real(anp.linalg.eigvals(anp.reshape(x, (2, 2)))[0]), np.array([1.0, 2.0, 0.5, 3.0]), "eig"),
])
def test_complex_primitives_raise_naming_the_primitive(f, x0, name):
    with pytest.raises(ad.UnsupportedError, match=f"does not support complex values: the primitive '{name}'"):
        ab.taylor_bounds(f, 2)(x0, (x0 - 0.1, x0 + 0.1))


@pytest.mark.parametrize("call, message", [
    (lambda: ab.taylor_bounds(anp.exp, 2)(0.5, (0.0, 1.0))(3.0), "outside the box"),
    (lambda: ab.taylor_bounds(anp.exp, 2)(0.5, (0.0, 1.0)).upper(np.array([0.5, -1e-300])), "outside the box"),
    (lambda: ab.taylor_bounds(anp.sum, 2)(np.zeros(2), (-np.ones(2), np.ones(2)))(np.array([0.0, 1.5])),
     "outside the box"),
    (lambda: ab.taylor_bounds(anp.exp, 2)(np.inf, (0.0, 1.0)), "finite"),
    (lambda: ab.taylor_bounds(anp.exp, 2)(0.5, (1.0, 0.0)), "lo > hi"),
    (lambda: ab.taylor_bounds(anp.exp, 2)(0.5, (np.nan, 1.0)), "NaN"),
    (lambda: ab.taylor_bounds(lambda x: (x, x), 2)(0.5, (0.0, 1.0)), "one float array"),
    (lambda: ab.taylor_bounds(anp.exp, ab.MAX_DEGREE + 1), "outside the supported range"),
    (lambda: ab.taylor_bounds(anp.exp, 2)(np.zeros((2, 2)), (-1.0, 1.0)), "scalar or a 1-d"),
    (lambda: ab.taylor_bounds(sp.gammaln, 2)(1.5, (1.0, 2.0)), "no enclosure rule for the primitive 'gammaln'.*"
                                                              "register_enclosure"),
    (lambda: ab.integrate(anp.exp, 1.0, 0.0), "lo > hi"),
    (lambda: ab.integrate(anp.exp, 0.0, 1.0, cells=0), "cells"),
    (lambda: ab.minimize_global(anp.exp, (0.0, 1.0), tol=-1.0), "tol"),
    (lambda: ab.minimize_global(anp.exp, (0.0, np.inf)), "finite"),
])
def test_bad_input_is_an_adarray_error(call, message):
    with pytest.raises(ad.Error, match=message):
        call()


# --- global optimisation ---------------------------------------------------------------------------------------

def test_minimize_global_certifies_the_minimum():
    f = lambda x: anp.sin(3 * x) + 0.5 * x ** 2  # noqa: E731
    result = ab.minimize_global(f, (-3.0, 3.0), tol=1e-8)
    grid = np.linspace(-3.0, 3.0, 200001)
    best = np.min(np.sin(3 * grid) + 0.5 * grid ** 2)
    assert result.converged and result.upper - result.lower <= 1e-8
    assert result.lower <= best + 1e-12 and best - 1e-9 <= result.upper
    assert abs(float(np.sin(3 * result.x) + 0.5 * result.x ** 2) - best) < 1e-7


def test_minimize_global_in_two_dimensions():
    def camel(x):  # the six-hump camel: global minima -1.0316285 at (0.0898, -0.7126) and (-0.0898, 0.7126)
        a, b = x[0], x[1]
        return (4 - 2.1 * a ** 2 + a ** 4 / 3) * a ** 2 + a * b + (-4 + 4 * b ** 2) * b ** 2

    result = ab.minimize_global(camel, (np.array([-0.5, -1.0]), np.array([1.0, 0.0])), tol=1e-4)
    assert result.converged and result.lower <= -1.031628453 <= result.upper + 1e-9
    assert result.upper - result.lower <= 1e-4
