"""The native JAX lowerings of the shape-parameter series (gammainc_da, betainc_dab, zeta_ds) against the
NumPy backend's implementations, beyond the registry's samplers: random inputs in every branch of each
expansion, near the boundaries between them and of the domain, orders 1-3, NaN and the constant edges; and
the lowered computation has no host callback (custom call) for them."""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import adarray as ad  # noqa: E402
from adarray.backends import jax as jax_backend  # noqa: E402
from adarray.backends.numpy.registry import implementation  # noqa: E402
from adarray.core.primitive import REGISTRY  # noqa: E402
from adarray.primitives import special  # noqa: E402
from adarray.testing.registry import seed  # noqa: E402

RTOL = 1e-10


def _lowered(name, *args, **params):
    """The primitive's JAX lowering, jitted, at float64 arrays."""
    fn = jax_backend.lowering_of(REGISTRY[name])
    assert fn is not None, f"{name} is still a host callback"
    with jax_backend.x64():
        return np.asarray(jax.jit(lambda *xs: fn(*xs, **params))(*args))


def _check(name, args, params, rtol=RTOL):
    want = implementation(REGISTRY[name])(*args, **params)
    got = _lowered(name, *args, **params)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name} {params}: NaN pattern")
    finite = np.isfinite(want)
    # relative to each value, with an absolute floor at the scale of the largest value of the batch (a derivative
    # crossing zero inside the domain has no relative accuracy in either implementation)
    floor = 1e-12 * max(1.0, float(np.max(np.abs(want[finite]), initial=0.0)))
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=floor, err_msg=f"{name} {params}")
    return got


def _gammainc_points(rng):
    a = rng.uniform(0.05, 30.0, 120)
    a_small = rng.uniform(1e-3, 0.5, 40)
    series = rng.uniform(0.0, 1.0, 120) * (a + 1.0)               # x < a + 1: the power series
    fraction = (a + 1.0) + rng.exponential(5.0, 120)              # x >= a + 1: the continued fraction
    near = (a + 1.0) * (1.0 + rng.choice([-1e-9, 0.0, 1e-9], 120))  # on both sides of the switch
    points_a = np.concatenate([a, a, a, a_small, a_small, [2.0, 0.5, 1.0, 0.0, -1.0, np.nan, 3.0, 3.0, 3.0, 1e-300]])
    points_x = np.concatenate([series, fraction, near, rng.uniform(1e-8, 5.0, 40), rng.uniform(1.0, 40.0, 40),
                               [0.0, np.inf, 1e-300, 1.0, 1.0, 1.0, np.nan, -1.0, 3.0, 0.5]])
    return points_a, points_x


@pytest.mark.parametrize("order", [1, 2, 3])
def test_gammainc_da_agrees_with_numpy_backend(order):
    rng = np.random.default_rng(seed("jax-series", "gammainc_da", order))
    a, x = _gammainc_points(rng)
    got = _check("gammainc_da", (a, x), {"order": order})
    assert np.all(got[(a > 0) & ((x == 0) | (x == np.inf))] == 0.0)  # P is constant in a there
    # a batched shape and float32 inputs (computed in float64, the NumPy backend's dtype)
    _check("gammainc_da", (a[:120].reshape(4, 30), x[:30]), {"order": order})
    _check("gammainc_da", (a.astype(np.float32), x.astype(np.float32)), {"order": order})
    _check("gammainc_da", (np.zeros((0, 3)), np.ones(3)), {"order": order})


def _betainc_points(rng):
    a, b = rng.uniform(0.05, 25.0, 300), rng.uniform(0.05, 25.0, 300)
    switch = (a + 1.0) / (a + b + 2.0)                              # the fraction in x below, in 1 - x above
    x = np.concatenate([rng.uniform(0.0, 1.0, 100) * switch[:100], switch[100:200] + (1 - switch[100:200])
                        * rng.uniform(0.0, 1.0, 100), switch[200:] * (1.0 + rng.choice([-1e-9, 0.0, 1e-9], 100))])
    a = np.concatenate([a, rng.uniform(1e-3, 0.05, 20), [2.0, 2.0, 0.0, -1.0, np.nan, np.inf, 3.0, 3.0, 3.0]])
    b = np.concatenate([b, rng.uniform(20.0, 60.0, 20), [2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 0.0, 3.0, 3.0]])
    x = np.concatenate([x, rng.uniform(1e-6, 0.2, 20), [0.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, np.nan, 1.5]])
    return a, b, x


@pytest.mark.parametrize("da, db", [(1, 0), (0, 1), (1, 1), (2, 0), (0, 2), (2, 1), (1, 2), (3, 0), (0, 3)])
def test_betainc_dab_agrees_with_numpy_backend(da, db):
    rng = np.random.default_rng(seed("jax-series", "betainc_dab", da, db))
    a, b, x = _betainc_points(rng)
    # 1e-9: at the smallest a, b the higher derivatives are differences of polygammas ~ 1 / a^3, which both
    # implementations round at 1e-16 of those terms
    got = _check("betainc_dab", (a, b, x), {"da": da, "db": db}, rtol=1e-9)
    assert np.all(got[(a > 0) & (b > 0) & np.isfinite(a) & ((x == 0) | (x == 1))] == 0.0)  # I is 0 or 1 there
    if (da, db) != (2, 1):  # the other shapes and dtypes at one mixed order: each is a compilation of seconds
        return
    _check("betainc_dab", (a[:300].reshape(10, 30), b[:30], x[:300].reshape(10, 30)), {"da": da, "db": db})
    _check("betainc_dab", tuple(v.astype(np.float32) for v in (a, b, x)), {"da": da, "db": db}, rtol=1e-9)
    _check("betainc_dab", (np.zeros((0,)), np.ones(0), np.ones(0)), {"da": da, "db": db})


def _custom_calls(fn, *args):
    text = ad.lower(fn, backend="jax")(*args).as_text()
    return [line for line in text.splitlines() if "custom_call" in line or "callback" in line]


def test_gammainc_da_lowers_without_host_callback():
    a, x = np.array([0.5, 2.0, 7.0]), np.array([0.3, 9.0, 7.5])
    assert not _custom_calls(lambda a, x: special.gammainc_da(a, x, 2), a, x)
    # and the derivatives of gammainc in a, which bind it
    assert not _custom_calls(ad.grad(lambda a, x: ad.numpy.sum(special.gammainc(a, x)), argnums=0), a, x)


def test_betainc_dab_lowers_without_host_callback():
    a, b, x = np.array([0.5, 2.0, 7.0]), np.array([1.5, 3.0, 0.5]), np.array([0.3, 0.9, 0.5])
    assert not _custom_calls(lambda a, b, x: special.betainc_dab(a, b, x, 1, 2), a, b, x)
    assert not _custom_calls(ad.grad(lambda a, b, x: ad.numpy.sum(special.betainc(a, b, x)), argnums=(0, 1)), a, b, x)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_zeta_ds_agrees_with_numpy_backend(order):
    rng = np.random.default_rng(seed("jax-series", "zeta_ds", order))
    # s > 1 for any q > 0; s < 1 only for q == 1 (the Riemann function); NaN for q <= 0 and s < 1 with q != 1
    s = np.concatenate([rng.uniform(1.0, 8.0, 100), rng.uniform(-8.0, 1.0, 40), rng.uniform(-3.0, 1.0, 20),
                        [1.0, 1.0, 0.5, np.nan, 2.0, 2.0, 1.0 + 1e-9]])
    q = np.concatenate([rng.uniform(0.01, 10.0, 100), np.ones(40), rng.uniform(0.1, 3.0, 20),
                        [1.0, 2.0, 2.0, 1.0, 0.0, -1.0, 0.5]])
    _check("zeta_ds", (s, q), {"order": order})
    _check("zeta_ds", (s[:100].reshape(4, 25), q[:25]), {"order": order})
    _check("zeta_ds", (np.zeros((0, 2)), np.ones(2)), {"order": order})


def test_zeta_ds_lowers_without_host_callback():
    from adarray.primitives import gamma_functions

    s, q = np.array([1.5, 2.0, 3.5]), np.array([0.5, 1.0, 2.0])
    assert not _custom_calls(lambda s, q: gamma_functions.zeta_ds(s, q, 2), s, q)
    assert not _custom_calls(ad.grad(lambda s, q: ad.numpy.sum(gamma_functions.zeta(s, q))), s, q)
