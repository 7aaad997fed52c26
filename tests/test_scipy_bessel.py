"""Bessel functions (j0 j1 y0 y1 jn yn iv ive): values against scipy.special on the NumPy and JAX backends (real
orders for iv and ive, negative and non-integer ones included), derivatives in x against central differences and
against SciPy's jvp/yvp/ivp to several orders (at x = 0 and at zeros of J too), the order's derivative refused."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.special as sps
from adarray.testing import check_grads

rng = np.random.default_rng(1234)
UNARY = {"j0": (sc.j0, (0.0, 30.0)), "j1": (sc.j1, (-30.0, 30.0)), "y0": (sc.y0, (0.05, 30.0)),
         "y1": (sc.y1, (0.05, 30.0))}


def _jax(f, *args):
    pytest.importorskip("jax")
    return np.asarray(ad.jit(f, backend="jax")(*args))


def _close_to_envelope(got, want, x, rtol):
    """|got - want| <= rtol max(|want|, sqrt(2 / (pi |x|))): relative where the function is large, absolute near
    its zeros, whose positions no double computation fixes to better than the rounding of x."""
    envelope = np.maximum(np.abs(want), np.minimum(1.0, np.sqrt(2.0 / (np.pi * np.maximum(np.abs(x), 1e-300)))))
    finite = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), finite) and np.array_equal(np.isnan(got), np.isnan(want))
    assert np.all(np.abs(got[finite] - want[finite]) <= rtol * envelope[finite]), \
        np.max(np.abs(got[finite] - want[finite]) / envelope[finite])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_on_both_backends(name):
    reference, (low, high) = UNARY[name]
    x = np.concatenate([rng.uniform(low, high, 400), [low, 1e-3, 2.404825557695773, 25.0, 26.0, 1e3, 1e5]])
    fn = getattr(sps, name)
    # j0 and j1 are jv(0, x) and jv(1, x) on the NumPy backend (SciPy's j0 rounds x - pi/4: 1e-11 at x = 1e5)
    _close_to_envelope(fn(x), reference(x), x, 1e-14 if name[0] == "y" else 1e-11)
    _close_to_envelope(_jax(fn, x), reference(x), x, 1e-11)


def test_integer_orders_on_both_backends():
    n = rng.integers(-6, 60, 3000)
    x = np.concatenate([rng.uniform(-40, 40, 1500), 10 ** rng.uniform(-4, 3, 1500)])
    np.testing.assert_allclose(sps.jn(n, x), sc.jv(n, x), rtol=1e-15, atol=0)
    _close_to_envelope(_jax(sps.jn, n, x), sc.jv(n, x), x, 1e-11)   # SciPy's own jn: ~1e-12 at x ~ 1e3
    xp = np.abs(x)
    np.testing.assert_allclose(sps.yn(n, xp), sc.yn(n, xp), rtol=1e-15, atol=0)
    _close_to_envelope(_jax(sps.yn, n, xp), sc.yn(n, xp), xp, 1e-12)


@pytest.mark.parametrize("fn, reference", [(sps.iv, sc.iv), (sps.ive, sc.ive)], ids=["iv", "ive"])
def test_real_orders_on_both_backends(fn, reference):
    for orders in (rng.uniform(0, 50, 2000), rng.uniform(-8, 0, 2000), rng.integers(-40, 40, 2000)):
        x = np.concatenate([rng.uniform(-5, 60, 1000), 10 ** rng.uniform(-3, 3.5, 1000)])
        want = reference(orders, x)
        np.testing.assert_allclose(fn(orders, x), want, rtol=1e-15)
        got = _jax(fn, orders, x)
        usable = np.isfinite(want) & (np.abs(want) > 1e-290) & (np.abs(x) < 700)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got[usable], want[usable], rtol=5e-11)


def test_special_values_match_scipy():
    x = np.array([0.0, -0.0, -1.5, 2.0, np.inf, np.nan])
    orders = np.array([0.0, 1.0, 2.0, -3.0, 2.5, -2.5, -0.5])
    grid_orders, grid_x = (a.ravel() for a in np.meshgrid(orders, x, indexing="ij"))
    whole = grid_orders == np.round(grid_orders)
    for fn, reference in ((sps.jn, sc.jv), (sps.yn, sc.yn), (sps.iv, sc.iv), (sps.ive, sc.ive)):
        pick = whole if fn in (sps.jn, sps.yn) else np.ones_like(whole)   # jn, yn: integer orders
        want = reference(grid_orders[pick], grid_x[pick])
        if fn in (sps.iv, sps.ive):
            np.testing.assert_array_equal(fn(grid_orders[pick], grid_x[pick]), want)
        np.testing.assert_allclose(_jax(fn, grid_orders[pick], grid_x[pick]), want, rtol=1e-13, equal_nan=True)


def test_order_conventions():
    np.testing.assert_array_equal(sps.yn(2.7, np.array([1.0, 3.0])), sc.yn(2, np.array([1.0, 3.0])))  # truncated
    with pytest.raises(ad.ArgumentError, match="integer"):
        sps.jn(2.5, 1.0)
    assert np.isnan(ad.jit(lambda n, x: sps.jn(n, x))(2.5, 1.0))   # a traced non-integer order
    assert sps.j0(np.float32(1.0)).dtype == np.float32 and sps.iv(2, 3).dtype == np.float64
    np.testing.assert_allclose(sps.iv(np.array([[0.5], [2.0]]), np.array([1.0, 2.0, 3.0])),
                               sc.iv(np.array([[0.5], [2.0]]), np.array([1.0, 2.0, 3.0])), rtol=1e-15)


# --- derivatives ------------------------------------------------------------------------------------------

DERIVATIVE_CASES = [   # SciPy's k-th derivatives in x: jvp, yvp, ivp
    ("jn", sc.jvp, [0, 1, 2, -3], np.array([0.0, 0.5, 2.404825557695773, 3.8317059702075125, 7.0, -4.0, 30.0])),
    ("yn", sc.yvp, [0, 1, 3], np.array([0.3, 0.8935769662791675, 2.0, 7.0, 30.0])),   # 0.8936 a zero of Y_0
    ("iv", sc.ivp, [0, 1, 2, 2.5, 0.5, -1.5], np.array([0.3, 1.0, 4.0, 12.0])),
    ("iv", sc.ivp, [0, 1, 2, 3], np.array([0.0, -1.0])),     # at 0 and below for integer orders
]


@pytest.mark.parametrize("name, reference, orders, x", DERIVATIVE_CASES)
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_derivatives_match_scipy_to_third_order(name, reference, orders, x, backend):
    if backend == "jax":
        pytest.importorskip("jax")
    fn = getattr(sps, name)
    grid_orders, grid_x = (a.ravel() for a in np.meshgrid(np.asarray(orders, float), x, indexing="ij"))
    first = ad.grad(lambda v, t: fn(v, t), argnums=1)
    second = ad.grad(first, argnums=1)
    third = ad.grad(second, argnums=1)
    derivatives = ad.vmap(lambda v, t: (first(v, t), second(v, t), third(v, t)))
    got = ad.jit(derivatives, backend=backend)(grid_orders, grid_x)
    for k, values in enumerate(got, start=1):
        np.testing.assert_allclose(np.asarray(values), reference(grid_orders, grid_x, k), rtol=1e-9, atol=1e-12,
                                   err_msg=f"{name}, derivative {k}")


def test_ive_derivative():
    for order in (0, 1, 2.5, -0.5, 7):
        x = np.array([0.4, 2.0, 9.0, -3.0]) if float(order).is_integer() else np.array([0.4, 2.0, 9.0])
        expected = sc.ivp(order, x) * np.exp(-np.abs(x)) - np.sign(x) * sc.ive(order, x)
        np.testing.assert_allclose(ad.vmap(ad.grad(lambda t, o=order: sps.ive(o, t)))(x), expected, rtol=1e-12)
    assert ad.grad(lambda t: sps.ive(0, t))(0.0) == 0.0   # exp(-|x|)'s kink: sign(0) = 0, as i0e


@pytest.mark.parametrize("fn, domain", [(sps.j0, (0.2, 20.0)), (sps.j1, (0.2, 20.0)), (sps.y0, (0.2, 20.0)),
                                        (sps.y1, (0.2, 20.0))], ids=["j0", "j1", "y0", "y1"])
def test_autograd_unary_checks(fn, domain):
    # autograd: unary_ufunc_check(special.j0, lims=[0.2, 20.0]) and the same for j1, y0, y1
    check_grads(fn, (rng.uniform(*domain, 6),), order=2, rng=np.random.default_rng(0))


def test_autograd_order_checks():
    x = rng.normal(size=4) ** 2 + 1.3
    check_grads(lambda t: sps.jn(2, t), (x,), order=2, rng=np.random.default_rng(1))
    check_grads(lambda t: sps.yn(2, t), (x,), order=2, rng=np.random.default_rng(2))
    orders = rng.uniform(1.0, 50.0, 4)   # autograd: combo_check(special.iv, [1])(U(1.0, 50.0, 4), R(4) ** 2 + 1.3)
    check_grads(lambda t: sps.iv(orders, t), (x,), order=2, rng=np.random.default_rng(3))
    check_grads(lambda t: sps.ive(orders, t), (x,), order=2, rng=np.random.default_rng(4))


def test_the_order_is_not_differentiable():
    with pytest.raises(ad.UnsupportedError, match="order"):
        ad.grad(lambda v: sps.iv(v, 2.0))(2.5)
    with pytest.raises(ad.UnsupportedError, match="order"):
        ad.jvp(lambda v: sps.jn(anp.round(v) + v * 0.0, 2.0), (2.0,), (1.0,))
    # a constant, an integer, or an argument left out of argnums is fine (forward mode also takes stop_gradient)
    assert np.isfinite(ad.grad(lambda x: sps.iv(2.5, x))(2.0))
    assert np.isfinite(ad.grad(lambda v, x: sps.iv(v, x), argnums=1)(2.5, 2.0))
    assert np.isfinite(ad.jvp(lambda v: sps.iv(ad.stop_gradient(v), 2.0 * v), (2.5,), (1.0,))[1])


def test_vmap_and_jit_over_orders():
    orders = np.array([0, 1, 2, 3])
    x = np.linspace(0.5, 4.0, 5)
    np.testing.assert_allclose(ad.vmap(lambda n: sps.jn(n, x))(orders), sc.jv(orders[:, None], x), rtol=1e-15)
    np.testing.assert_allclose(ad.jit(lambda v, t: sps.ive(v, t))(orders * 0.5, x[:4]),
                               sc.ive(orders * 0.5, x[:4]), rtol=1e-15)
