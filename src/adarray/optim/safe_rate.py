"""SafeRate: gradient descent with no learning rate (Streeter & Dillon, "Universal Majorization-Minimization
Algorithms", arXiv:2308.00190; the AutoBound paper, section 5).

At the parameters x with gradient g, the line h(eta) = loss(x - eta g) on [0, eta_max] has a verified
degree-2 Taylor enclosure (adarray.bounds) around eta = 0, whose upper quadratic

    q(eta) = c_0 + c_1 eta + I_hi eta^2  >=  h(eta)        (eta >= 0, so the upper ends bound every term)

majorizes the loss along the line. The step is q's minimiser on [0, eta_max], so the loss never
increases (q(eta*) <= q(0) = h(0)). eta_max doubles when the step uses at least half of it and halves
otherwise (or when the bound is not finite). A quadratic loss along the line is its own bound, so
its line minimum is found in one step.

    >>> result = safe_rate(lambda x: (x - 3.0) ** 4, 0.0, steps=32)  # doctest: +SKIP
    >>> result.params, result.losses[-1], result.step_sizes[:3]  # doctest: +SKIP
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..api.grad import value_and_grad
from ..api.staging import name_of
from ..bounds import taylor_bounds
from ..core.errors import ArgumentError
from ..progress import Progress
from ..tree_util import tree_leaves, tree_map


@dataclass
class SafeRateResult:
    """`params` after the last step; `losses`: steps + 1 values (the start, then after each step);
    `step_sizes`: the step taken each time (along -gradient); `eta_max`: the bound's trust region each time;
    `bounds`: the verified upper bound q(eta) of the loss after each step (the loss is below it); `rejected`:
    the steps whose loss came out above the previous one in floating point (within rounding of a tie),
    which were not taken."""

    params: object
    losses: list = field(default_factory=list)
    step_sizes: list = field(default_factory=list)
    eta_max: list = field(default_factory=list)
    bounds: list = field(default_factory=list)
    rejected: list = field(default_factory=list)


def _line(loss):
    def line(eta, params, direction):
        return loss(tree_map(lambda p, d: p + eta * d, params, direction))

    line.__name__ = f"line of {name_of(loss)}"
    return line


def _upper_quadratic(coefficients):
    """(c_0, c_1, c_2) of the upper bound on eta >= 0: the upper end of every (interval) coefficient."""
    return [float(np.max(c[1] if isinstance(c, tuple) else c)) for c in coefficients]


def _minimise_on(c1: float, c2: float, eta_max: float) -> float:
    """argmin over [0, eta_max] of c1 eta + c2 eta^2."""
    if not (math.isfinite(c1) and math.isfinite(c2)) or c1 >= 0:
        return 0.0
    if c2 <= 0:
        return eta_max
    return min(max(-c1 / (2.0 * c2), 0.0), eta_max)


def safe_rate(loss, params, steps: int, eta_max: float = 1.0, verified: bool = True, progress=None) -> SafeRateResult:
    """Minimise `loss(params)` (params a pytree of float arrays) by `steps` SafeRate steps; see the module.

    `progress`: report the steps on stderr (adarray.progress; default: on runs of 100 steps or more, a bar in a
    terminal when tqdm is installed).
    """
    name = name_of(loss)
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ArgumentError(f"safe_rate of '{name}': steps must be a non-negative int, got {steps!r}")
    if not (isinstance(eta_max, (int, float)) and math.isfinite(eta_max) and eta_max > 0):
        raise ArgumentError(f"safe_rate of '{name}': eta_max must be a positive number, got {eta_max!r}")
    params = tree_map(lambda p: np.asarray(p, np.float64), params)
    if not tree_leaves(params):
        raise ArgumentError(f"safe_rate of '{name}': params has no arrays")
    evaluate = value_and_grad(loss)
    bound = taylor_bounds(_line(loss), 2, verified)
    progress = Progress(steps, f"safe_rate '{name}'", show=(None if steps >= 100 else False) if progress is None
                        else bool(progress))
    eta_max = float(eta_max)
    value, gradient = evaluate(params)
    result = SafeRateResult(params=params, losses=[float(value)])
    for step in range(steps):
        direction = tree_map(lambda g: -np.asarray(g, np.float64), gradient)
        eta, promised = 0.0, float(value)
        if any(np.any(d) for d in tree_leaves(direction)):
            coefficients = bound(0.0, (0.0, eta_max), params, direction).coefficients
            c0, c1, c2 = _upper_quadratic(coefficients)
            eta = _minimise_on(c1, c2, eta_max)
            promised = c0 + c1 * eta + c2 * eta * eta if eta > 0 else promised
        candidate = tree_map(lambda p, d, e=eta: p + e * d, params, direction) if eta > 0 else params
        new_value, new_gradient = evaluate(candidate) if eta > 0 else (value, gradient)
        if not float(new_value) <= float(value):  # guaranteed in exact arithmetic; floats can tie or miss by an ulp
            result.rejected.append(step)
            eta, candidate, new_value, new_gradient, promised = 0.0, params, value, gradient, float(value)
        result.bounds.append(promised)
        result.eta_max.append(eta_max)
        eta_max = eta_max * 2.0 if eta >= 0.5 * eta_max else eta_max * 0.5
        params, value, gradient = candidate, new_value, new_gradient
        result.losses.append(float(value))
        result.step_sizes.append(eta)
        progress.update(f"loss={float(value):.6g} eta={eta:.3g}")
    progress.close()
    result.params = params
    return result
