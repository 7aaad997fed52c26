"""adarray.optim.safe_rate: gradient descent whose step minimises a verified quadratic upper bound of the loss
along the gradient, so the loss never increases (checked at every step)."""
from __future__ import annotations

import numpy as np
import pytest

import adarray as ad
import adarray.nn as nn
import adarray.numpy as anp
from adarray.optim import safe_rate


def _never_increases(result, steps):
    """The loss never goes up, and (what makes that so, not the safety net for float ties) each step's
    loss is below the verified upper bound the step minimised; that net is almost never used."""
    losses = np.asarray(result.losses)
    assert len(losses) == steps + 1 and len(result.step_sizes) == len(result.bounds) == steps
    assert np.all(np.diff(losses) <= 0.0), f"the loss went up: {losses}"
    assert all(eta >= 0.0 for eta in result.step_sizes)
    bounds = np.asarray(result.bounds)
    # q(eta) is evaluated in floats here and the loss too: a few ulps of the loss's scale
    slack = 1e-13 * np.maximum(np.abs(losses[:-1]), np.abs(bounds))
    assert np.all(losses[1:] <= bounds + slack), f"a loss above its bound: {losses[1:]} > {bounds}"
    assert np.all(bounds <= losses[:-1] + slack), "a step whose bound is above the current loss"
    assert len(result.rejected) <= max(1, steps // 10), f"float ties rejected at steps {result.rejected}"


def test_quartic_from_zero_matches_the_notebook():
    """AutoBound's notebook: (x - 3)^4 from 0 goes 81 -> 0.50 after 8 steps -> 2e-15 after 32."""
    result = safe_rate(lambda x: (x - 3.0) ** 4, 0.0, steps=32)
    _never_increases(result, 32)
    assert result.losses[0] == 81.0 and result.losses[8] <= 0.50 and result.losses[32] <= 2e-15
    np.testing.assert_allclose(result.params, 3.0, atol=1e-3)


def test_a_quadratic_is_minimised_in_one_step():
    target = np.array([1.0, -2.0, 0.5])
    result = safe_rate(lambda x: anp.sum((x - target) ** 2), np.zeros(3), steps=1)
    np.testing.assert_allclose(result.params, target, atol=1e-12)
    np.testing.assert_allclose(result.step_sizes, [0.5], rtol=1e-13)  # (verified: a hair below 0.5)


def test_logistic_regression():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(200, 3))
    labels = (features @ np.array([1.5, -2.0, 0.5]) + 0.3 * rng.normal(size=200) > 0).astype(float)

    def loss(w):
        logits = features @ w["w"] + w["b"]
        return anp.mean(nn.softplus(logits) - labels * logits)

    start = {"w": np.zeros(3), "b": np.zeros(())}
    result = safe_rate(loss, start, steps=60)
    _never_increases(result, 60)
    assert result.losses[-1] < 0.5 * result.losses[0]
    gradient = ad.grad(loss)(result.params)
    assert np.linalg.norm(gradient["w"]) < 0.05 * np.linalg.norm(ad.grad(loss)(start)["w"])


def test_small_mlp():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 2))
    y = np.sin(x[:, :1] * 2.0) * x[:, 1:]
    params = {"w1": 0.5 * rng.normal(size=(2, 8)), "b1": np.zeros(8), "w2": 0.5 * rng.normal(size=(8, 1))}

    def loss(p):
        hidden = anp.tanh(x @ p["w1"] + p["b1"])
        return anp.mean((hidden @ p["w2"] - y) ** 2)

    result = safe_rate(loss, params, steps=25)
    _never_increases(result, 25)
    assert result.losses[-1] < 0.8 * result.losses[0]


@pytest.mark.parametrize("call, message", [
    (lambda: safe_rate(lambda x: x ** 2, 1.0, steps=-1), "steps"),
    (lambda: safe_rate(lambda x: x ** 2, 1.0, steps=2, eta_max=0.0), "eta_max"),
    (lambda: safe_rate(lambda x: x ** 2, np.ones(2), steps=2), "scalar"),
])
def test_bad_input_is_an_adarray_error(call, message):
    with pytest.raises(ad.Error, match=message):
        call()
