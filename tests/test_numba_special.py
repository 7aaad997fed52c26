"""The Numba backend's native special functions (gammalib.py, speciallib.py, incompletelib.py) against SciPy,
the NumPy backend's reference, on dense grids with their edges: zeros of both signs, negatives, poles, inf,
NaN, subnormals, huge arguments. NaN, inf and signed zeros must match exactly; finite values to a relative
tolerance (plus an absolute one where the value is a small difference of O(1) terms, near zeros of the function).

Where SciPy itself loses digits (it computes a difference of nearly equal terms that ours avoids), the two are
compared at the looser tolerance that SciPy's error allows, and ours is checked against an independent
high-precision evaluation (Python's decimal module) instead.
"""
from __future__ import annotations

from decimal import Decimal, getcontext

import numpy as np
import pytest

pytest.importorskip("numba")
sc = pytest.importorskip("scipy.special")

# `make test` runs this file at -O0 with the registry's Numba tests, where Numba does not cache functions that read
# global arrays (the special functions' tables): expected there.
pytestmark = pytest.mark.filterwarnings("ignore:Cannot cache compiled function:numba.core.errors.NumbaWarning")

import adarray as ad  # noqa: E402
from adarray.backends.numba import gammalib, incompletelib, runtime, speciallib  # noqa: E402
from adarray.backends.numpy import special as numpy_special  # noqa: E402
from adarray.backends.numpy.registry import IMPLS  # noqa: E402
from adarray.primitives import bessel  # noqa: E402
from adarray.primitives.gamma_functions import zeta_ds_p  # noqa: E402

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1e-300, -1e-300, 5e-324,
                  1e300, -1e300, 1e-20, 1e20, 3.0, 10.0, -10.5, 171.5, 200.0])


def line(low=-50.0, high=50.0, count=4001):
    """A dense line, both signs of a log-spaced range and the edges."""
    return np.concatenate([np.linspace(low, high, count), np.geomspace(1e-300, 1e300, 301),
                           -np.geomspace(1e-300, 1e300, 301), EDGES])


def grid(*axes):
    return [m.ravel() for m in np.meshgrid(*axes, indexing="ij")]


def evaluate(function, *arrays):
    """The scalar function at every element (a Python loop: the kernels are what is tested, not a fused loop)."""
    return np.array([function(*(float(v) for v in values)) for values in zip(*arrays)])


def assert_matches(got, want, *arguments, rtol=1e-13, atol=0.0, what=""):
    """NaN where SciPy is NaN, the same infinities and signed zeros, finite values within rtol |want| + atol."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    where = lambda mask: [tuple(float(a[i]) for a in arguments) for i in np.flatnonzero(mask)[:5]]  # noqa: E731
    nan = np.isnan(got) != np.isnan(want)
    assert not nan.any(), f"{what}: NaN differs at {where(nan)}: {got[nan][:5]} vs {want[nan][:5]}"
    infinite = (np.isinf(got) | np.isinf(want)) & ~np.isnan(want) & (got != want)
    assert not infinite.any(), f"{what}: infinities differ at {where(infinite)}: {got[infinite][:5]} vs " \
                               f"{want[infinite][:5]}"
    zero = (got == 0) & (want == 0) & (np.signbit(got) != np.signbit(want))
    assert not zero.any(), f"{what}: signed zeros differ at {where(zero)}"
    finite = np.isfinite(want) & np.isfinite(got)
    with np.errstate(all="ignore"):
        bad = finite & (np.abs(got - want) > rtol * np.abs(want) + atol)
    assert not bad.any(), f"{what}: values differ at {where(bad)}: {got[bad][:5]} vs {want[bad][:5]}"


def quietly(function, *arguments, **keywords):
    with np.errstate(all="ignore"):
        return function(*arguments, **keywords)


# --- the gamma family ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gamma", "gammaln", "digamma"])
def test_gamma_gammaln_digamma_on_the_whole_line(name):
    x = line()
    got = evaluate(getattr(gammalib, name), x)
    # digamma: an absolute error of a few ulp of psi's O(1) terms near its negative zeros
    assert_matches(got, quietly(getattr(sc, name), x), x, rtol=1e-13, atol=1e-14 if name != "gamma" else 0.0,
                   what=name)


def test_digamma_keeps_its_relative_accuracy_at_its_positive_zero():
    x = np.linspace(1.3, 1.6, 3001)
    assert_matches(evaluate(gammalib.digamma, x), sc.digamma(x), x, rtol=1e-13, what="digamma near 1.4616")


def test_beta_betaln_binom_on_a_grid_with_their_poles():
    v = np.concatenate([np.linspace(-6.0, 6.0, 49), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 1e7, 1e9, 1e300,
                                                     -1e300, 30.0, 171.0, 172.0, 2e6]])
    a, b = grid(v, v)
    # B(171, 5): SciPy's log-gamma differences there, 1e-13 apart from ours
    assert_matches(evaluate(gammalib.beta, a, b), quietly(sc.beta, a, b), a, b, rtol=3e-13, what="beta")
    assert_matches(evaluate(gammalib.betaln, a, b), quietly(sc.betaln, a, b), a, b, rtol=3e-13, atol=1e-13,
                   what="betaln")
    # binom(n, k) for k ~ 1e9 >> |n| (the general formula's log-gamma differences of large arguments): both
    # SciPy and ours lose |log Gamma| ulps there (up to 1e-6 relative)
    large = (np.abs(b) > 1e6) & (np.abs(a) < 1e6)
    got, want = evaluate(gammalib.binom, a, b), quietly(sc.binom, a, b)
    assert_matches(got[~large], want[~large], a[~large], b[~large], rtol=1e-12, what="binom")
    assert_matches(got[large], want[large], a[large], b[large], rtol=1e-5, what="binom, large k")


def test_hurwitz_and_riemann_zeta():
    s = np.concatenate([np.linspace(-3.0, 40.0, 87), [1.0, 1.0 + 1e-10, np.inf, np.nan, 100.0, 300.0]])
    q = np.concatenate([np.linspace(-5.0, 20.0, 51), [0.0, -0.0, 1e-300, 1e-5, 1e7, 1e8, 2e8, 1e12, np.inf, -np.inf,
                                                      np.nan]])
    ss, qq = grid(s, q)
    assert_matches(evaluate(gammalib.hurwitz_zeta, ss, qq), quietly(sc.zeta, ss, qq), ss, qq, rtol=1e-13,
                   atol=1e-300, what="hurwitz zeta")
    r = np.concatenate([np.linspace(-300.0, 60.0, 7201), [0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 1 - 1e-10,
                                                         -1e-10, 1e-10]])
    assert_matches(evaluate(gammalib.riemann_zeta, r), quietly(sc.zeta, r), r, rtol=1e-12, what="riemann zeta")
    # the primitive: Riemann's function where q == 1 (as the NumPy backend), Hurwitz elsewhere
    assert gammalib.zeta(-1.0, 1.0) == pytest.approx(-1 / 12, rel=1e-15) and np.isnan(gammalib.zeta(-1.0, 2.0))


@pytest.mark.parametrize("order", [1, 2, 3, 5, 10])
def test_polygamma_on_the_line(order):
    x = line()
    # SciPy sums -x terms one by one for negative x (10 s at x = -1e8): the line stops at -20 there, and the
    # reflection formula used below -20 is checked against the direct sum next
    x = x[(x > -20.0) | (x == np.floor(x)) | ~np.isfinite(x)]
    got, want = evaluate(lambda v: gammalib.polygamma(order, v), x), quietly(sc.polygamma, order, x)
    # for x < 0 both sum terms (x + k)^-(order+1) that cancel in pairs: an absolute error of a few ulp of the
    # largest, order! / distance(x, Z)^(order+1)
    with np.errstate(all="ignore"):
        distance = np.abs(x - np.round(x))
        factorial = np.prod(np.arange(1.0, order + 1.0))
        largest = np.where((x < 0) & (distance > 0), factorial * distance ** -(order + 1.0), 0.0)
        atol = np.nan_to_num(1e-14 * np.abs(x) * largest) + 1e-300
    assert_matches(got, want, x, rtol=1e-12, atol=atol, what=f"polygamma({order})")


@pytest.mark.parametrize("order", [1, 2, 4, 9])
def test_polygamma_reflection_below_minus_twenty_against_the_direct_sum(order):
    """For an integer s = order + 1 and q < -20, zeta(s, q) comes from the sum over all integers (a cotangent
    derivative); against sum_(k<m) (q + k)^-s (each term rounded once, math.fsum) + zeta(s, q + m), q + m > 0."""
    import math

    for q in (-20.25, -23.5, -37.9, -49.5, -128.125):
        m = int(-math.floor(q)) + 2
        direct = math.fsum((q + k) ** -(order + 1.0) for k in range(m)) + gammalib.hurwitz_zeta(order + 1.0, q + m)
        largest = max(abs(q + k) ** -(order + 1.0) for k in range(m))  # the size of the terms that cancel
        assert abs(gammalib.hurwitz_zeta(order + 1.0, q) - direct) <= 1e-14 * largest + 1e-14 * abs(direct)


@pytest.mark.parametrize("order", [0, 1, 2, 3])
def test_zeta_ds_is_the_numpy_backends_series(order):
    s = np.concatenate([np.linspace(-3.0, 12.0, 31), [1.0, 1.5, np.inf, np.nan]])
    q = np.concatenate([np.linspace(0.1, 8.0, 21), [1.0, -1.0, 0.0, np.inf, np.nan]])
    ss, qq = grid(s, q)
    want = quietly(IMPLS[zeta_ds_p], ss, qq, order=order)
    got = evaluate(lambda s, q: gammalib.zeta_ds(s, q, order), ss, qq)
    # for s < 0 (q = 1) the formula's terms, up to 20^(1-s) log(20)^order, cancel: an absolute error of their ulps
    with np.errstate(all="ignore"):
        terms = np.where(np.isfinite(ss) & (ss < 1), 20.0 ** (1.0 - ss) * np.log(20.0) ** order, 0.0)
    assert_matches(got, want, ss, qq, rtol=1e-11, atol=1e-14 * terms + 1e-300, what=f"zeta_ds[{order}]")


# --- error functions, Bessel, xlogy ----------------------------------------------------------------------------


def test_erfc_erfinv_ndtri_log_ndtr():
    x = line()
    assert_matches(evaluate(speciallib.erfc, x), sc.erfc(x), x, rtol=1e-13, atol=1e-300, what="erfc")
    u = np.concatenate([np.linspace(-1.0, 1.0, 20001), 1 - np.geomspace(1e-17, 1, 301),
                        -1 + np.geomspace(1e-17, 1, 301), np.geomspace(1e-320, 1, 301), -np.geomspace(1e-320, 1, 301),
                        EDGES])
    assert_matches(evaluate(speciallib.erfinv, u), quietly(sc.erfinv, u), u, rtol=1e-14, atol=1e-318, what="erfinv")
    p = np.concatenate([np.linspace(0.0, 1.0, 20001), np.geomspace(5e-324, 1, 601), 1 - np.geomspace(1e-17, 1, 301),
                        EDGES])
    assert_matches(evaluate(speciallib.ndtri, p), quietly(sc.ndtri, p), p, rtol=1e-14, atol=1e-16, what="ndtri")
    # log_ndtr in the upper tail is -ndtr(-x): SciPy's erfc(x / sqrt 2) of the rounded quotient is off by
    # x^2 ulp there (2e-13 at x = 35); ours splits x^2 exactly from x = 14 on (checked against decimal below),
    # and both erfc's differ by 1e-14 relative below
    got, want = evaluate(speciallib.log_ndtr, x), quietly(sc.log_ndtr, x)
    tail = x > 5.0
    assert_matches(got[~tail], want[~tail], x[~tail], rtol=1e-14, atol=1e-300, what="log_ndtr")
    assert_matches(got[tail], want[tail], x[tail], rtol=1e-12, atol=1e-300, what="log_ndtr upper tail")


def test_log_ndtr_in_the_upper_tail_against_decimal():
    getcontext().prec = 50
    pi = Decimal("3.14159265358979323846264338327950288419716939937510")
    for x in (15.0, 20.5, 33.705, 37.0):
        t = Decimal(x) / Decimal(2).sqrt()
        fraction = t
        for k in range(400, 0, -1):  # Laplace's continued fraction for erfc, far beyond convergence
            fraction = t + Decimal(k) / 2 / fraction
        exact = -float((-t * t).exp() / pi.sqrt() / fraction / 2)
        assert speciallib.log_ndtr(x) == pytest.approx(exact, rel=2e-15)


@pytest.mark.parametrize("name", ["i0e", "i1e"])
def test_scaled_bessel_functions(name):
    x = line()
    assert_matches(evaluate(getattr(speciallib, name), x), getattr(sc, name)(x), x, rtol=1e-14, atol=1e-300,
                   what=name)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_xlogy_xlog1py(name):
    v = np.concatenate([np.linspace(-3.0, 3.0, 61), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 1e300,
                                                     -1.0]])
    a, b = grid(v, v)
    assert_matches(evaluate(getattr(speciallib, name), a, b), quietly(getattr(sc, name), a, b), a, b, rtol=1e-15,
                   what=name)


# --- incomplete gamma and beta, E_n ----------------------------------------------------------------------------


def decimal_gammainc(a, x):
    """P(a, x) by its series in 45-digit decimal arithmetic (Stirling's series for log Gamma(a + 1), a > 1000)."""
    getcontext().prec = 45
    pi = Decimal("3.14159265358979323846264338327950288419716939937510")
    a, x = Decimal(a), Decimal(x)
    z = a + 1
    log_gamma = (z - Decimal("0.5")) * z.ln() - z + (2 * pi).ln() / 2 + 1 / (12 * z) - 1 / (360 * z ** 3)
    term = total = Decimal(1)
    n = 0
    while term > total * Decimal("1e-40"):
        n += 1
        term = term * x / (a + n)
        total += term
    return float((a * x.ln() - x - log_gamma).exp() * total)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_on_a_grid(name):
    a = np.concatenate([np.geomspace(1e-6, 1e4, 61), [0.0, np.inf, np.nan, -1.0, 0.5, 1.0, 2.0, 1e5]])
    x = np.concatenate([np.geomspace(1e-8, 1e4, 81), [0.0, np.inf, np.nan, -1.0, 0.5, 1.0, 2.0, 1e5]])
    aa, xx = grid(a, x)
    function = getattr(incompletelib, name)
    # deep in the tails (values below 1e-50) of large a, SciPy's prefactor is good to 1e-10 relative only
    got, want = evaluate(function, aa, xx), quietly(getattr(sc, name), aa, xx)
    deep = np.abs(want) < 1e-50
    assert_matches(got[~deep], want[~deep], aa[~deep], xx[~deep], rtol=1e-12, atol=1e-300, what=name)
    assert_matches(got[deep], want[deep], aa[deep], xx[deep], rtol=1e-9, atol=1e-300, what=f"{name} tails")


def test_incomplete_gamma_for_large_a_against_decimal():
    for a, x in [(1e6, 990000.0), (790604.3210907702, 782698.2778798625), (2610.157215682533, 1496.2356560944297),
                 (5e4, 5.1e4)]:
        assert incompletelib.gammainc(a, x) == pytest.approx(decimal_gammainc(a, x), rel=1e-12)


def test_betainc_on_a_grid():
    v = np.concatenate([np.geomspace(1e-3, 1e3, 19), [0.0, np.inf, np.nan, 1.0, 0.5, 1e5]])
    t = np.concatenate([np.linspace(0.0, 1.0, 26), [1e-10, 1 - 1e-10, 1e-300, -0.1, 1.1, np.nan]])
    a, b, x = grid(v, v, t)
    got, want = evaluate(incompletelib.betainc, a, b, x), quietly(sc.betainc, a, b, x)
    # below 1e-250 SciPy (Boost) drifts by up to 0.5 % or flushes to 0 (ours: checked against decimal below);
    # for a tiny parameter beyond the mean ours is 1 - I_(1-x)(b, a) of a number near 1 (1e-4 loses 4 digits)
    deep = np.abs(want) < 1e-250
    tiny = (np.minimum(a, b) < 0.01) & ~deep
    rest = ~deep & ~tiny
    assert_matches(got[rest], want[rest], a[rest], b[rest], x[rest], rtol=1e-11, atol=1e-300, what="betainc")
    assert_matches(got[tiny], want[tiny], a[tiny], b[tiny], x[tiny], rtol=1e-10, atol=1e-300, what="betainc, tiny")
    assert np.all(np.abs(got[deep]) < 1e-240)


def test_betainc_deep_tails_against_decimal():
    getcontext().prec = 50
    pi = Decimal("3.14159265358979323846264338327950288419716939937510")

    def log_gamma(z):
        shift = Decimal(0)
        while z < 40:
            shift -= z.ln()
            z += 1
        return shift + (z - Decimal("0.5")) * z.ln() - z + (2 * pi).ln() / 2 + 1 / (12 * z) - 1 / (360 * z ** 3) + \
            1 / (1260 * z ** 5) - 1 / (1680 * z ** 7)

    def exact(a, b, x):  # x below the mean: the continued fraction, modified Lentz, in decimal
        a, b, x = Decimal(a), Decimal(b), Decimal(x)
        prefactor = (a * x.ln() + b * (1 - x).ln() - log_gamma(a) - log_gamma(b) + log_gamma(a + b) - a.ln()).exp()
        c, d = Decimal(1), 1 / (1 - (a + b) * x / (a + 1))
        value = d
        for m in range(1, 5000):
            for coefficient in (m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m)),
                                -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m))):
                d = 1 / (1 + coefficient * d)
                c = 1 + coefficient / c
                value *= d * c
            if abs(d * c - 1) < Decimal("1e-45"):
                break
        return float(prefactor * value)

    for a, b, x in [(1000.0, 17.78279410038923, 0.475), (562.341325190349, 31.622776601683793, 0.25),
                    (31.622776601683793, 100.0, 1e-10), (40.0, 60.0, 0.3)]:
        assert incompletelib.betainc(a, b, x) == pytest.approx(exact(a, b, x), rel=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 10, 30, 60, 200])
def test_expn(n):
    x = np.concatenate([np.geomspace(1e-10, 800.0, 801), [0.0, -1.0, np.inf, np.nan, 1.0, 709.0, 710.0]])
    assert_matches(evaluate(lambda v: incompletelib.expn(n, v), x), quietly(sc.expn, n, x), x, rtol=1e-13, atol=1e-300,
                   what=f"expn({n})")
    assert np.isnan(incompletelib.expn(-1, 1.0))


# --- the derivatives in the shape parameters: the NumPy backend's expansions ----------------------------------


@pytest.mark.parametrize("order", [1, 2, 3])
def test_gammainc_da_is_the_numpy_backends_series(order):
    a = np.concatenate([np.geomspace(1e-3, 300.0, 25), [0.0, np.inf, np.nan, -1.0, 1.0]])
    x = np.concatenate([np.geomspace(1e-6, 500.0, 31), [0.0, np.inf, np.nan, -1.0, 1.0]])
    aa, xx = grid(a, x)
    want = quietly(numpy_special._gammainc_da, aa, xx, order=order)
    got = evaluate(lambda a, x: incompletelib.gammainc_da(a, x, order), aa, xx)
    # the NumPy backend stops when every element of the array has converged (to 1e-10 of P), ours per element;
    # for a < 0.01 the series' coefficients grow like a^-order (polygamma(2, 0.001) = -2e9) and both round
    small = aa < 0.01
    assert_matches(got[~small], want[~small], aa[~small], xx[~small], rtol=1e-9, atol=1e-14,
                   what=f"gammainc_da[{order}]")
    assert_matches(got[small], want[small], aa[small], xx[small], rtol=1e-7, atol=1e-12,
                   what=f"gammainc_da[{order}], small a")


@pytest.mark.parametrize("da, db", [(1, 0), (0, 1), (1, 1), (2, 0), (0, 2), (2, 1)])
def test_betainc_dab_is_the_numpy_backends_fraction(da, db):
    v = np.concatenate([np.geomspace(1e-2, 100.0, 6), [0.0, np.inf, np.nan, 1.0]])
    t = np.concatenate([np.linspace(0.0, 1.0, 7), [1e-8, 1 - 1e-8, np.nan, -0.1]])
    a, b, x = grid(v, v, t)
    # element by element: on a whole array the NumPy backend iterates until every element converged (minutes)
    want = np.array([quietly(numpy_special._betainc_dab, np.array([p]), np.array([q]), np.array([r]), da=da,
                             db=db)[0] for p, q, r in zip(a, b, x)])
    got = evaluate(lambda p, q, r: incompletelib.betainc_dab(p, q, r, da, db), a, b, x)
    assert_matches(got, want, a, b, x, rtol=1e-10, atol=1e-14, what=f"betainc_dab[{da}, {db}]")


@pytest.mark.parametrize("name", ["jn", "yn", "iv", "ive"])
@pytest.mark.parametrize("order_dtype", [np.int64, np.int32, np.float64])
def test_bessel_functions_are_the_numpy_backends_bit_for_bit(name, order_dtype):
    """SciPy's compiled functions called from compiled code (bessellib.py): the same values as the NumPy backend,
    NaN, inf and signed zeros included; a float order that is not an integer gives NaN for jn and yn."""
    prim = getattr(bessel, f"{name}_p")
    orders = np.array([-3, -1, 0, 1, 2, 5, 30] + ([0.5, -2.5, np.nan, np.inf] if order_dtype is np.float64 else []))
    points = np.concatenate([np.linspace(-20.0, 40.0, 61), [0.0, -0.0, 1e-300, -1e-300, 700.0, -700.0, 1e5,
                                                             np.inf, -np.inf, np.nan]])
    n, x = grid(orders.astype(order_dtype), points)
    n = n.astype(order_dtype)
    assert [kind for kind, _ in runtime.segments(ad.make_ir(prim.bind)(n, x))] == ["numba"]  # native, no fallback
    want = quietly(IMPLS[prim], n, x)
    with np.errstate(all="ignore"):
        got = ad.jit(prim.bind, backend="numba")(n, x)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    got32 = ad.jit(prim.bind, backend="numba")(n, x.astype(np.float32))
    np.testing.assert_array_equal(got32, quietly(IMPLS[prim], n, x.astype(np.float32)))
