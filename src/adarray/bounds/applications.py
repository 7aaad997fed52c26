"""Applications of verified enclosures: certified global minimisation and certified integrals.

    minimize_global(f, (lo, hi), tol)        branch and bound on the lower enclosure
    integrate(f, lo, hi, degree, cells)      (lower, upper) bounds of the integral of a scalar function
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from ..api.staging import name_of
from ..core.errors import ArgumentError
from .api import check_box, check_degree, taylor_bounds
from .interval import Intervals


@dataclass
class GlobalMinimum:
    """The result of `minimize_global`: a minimiser `x` and a certified interval [lower, upper] that
    contains the global minimum of f on the box (upper - lower <= tol when `converged`)."""

    x: np.ndarray
    lower: float
    upper: float
    boxes: int
    converged: bool


def minimize_global(f, bounds, tol: float = 1e-6, degree: int = 2, max_boxes: int = 20_000, verified: bool = True):
    """The global minimum of f on the box [lo, hi] by branch and bound: each box's lower enclosure gives a
    certified lower bound of f on it; the upper enclosure at its centre an attained value. Boxes whose
    lower bound exceeds the best upper bound are dropped; the one with the lowest bound is split along
    its widest side, until upper - lower <= tol.

    >>> result = minimize_global(lambda x: anp.sin(3 * x) + x ** 2, (-2.0, 2.0), 1e-8)  # doctest: +SKIP
    >>> result.x, result.lower, result.upper  # doctest: +SKIP
    """
    name = f"minimize_global of '{name_of(f)}'"
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ArgumentError(f"{name}: bounds must be a pair (lo, hi)")
    lo, hi = (np.asarray(b, np.float64) for b in bounds)
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise ArgumentError(f"{name}: the box must be finite (no NaN or inf), got ({lo}, {hi})")
    if not (isinstance(tol, (int, float)) and tol > 0):
        raise ArgumentError(f"{name}: tol must be a positive number, got {tol!r}")
    check_box(name, 0.5 * (lo + hi), (lo, hi))
    bound = taylor_bounds(f, check_degree(degree, "minimize_global"), verified)

    def evaluate(box_lo, box_hi):
        centre = np.clip(0.5 * (box_lo + box_hi), box_lo, box_hi)
        tb = bound(centre, (box_lo, box_hi))
        return float(tb.final_interval()[0]), float(tb.upper(centre)), centre

    lower, best_upper, best_x = evaluate(lo, hi)
    heap, counter, boxes = [(lower, 0, lo, hi)], 1, 1
    while heap and best_upper - heap[0][0] > tol and boxes < max_boxes:
        parent_lower, _, box_lo, box_hi = heapq.heappop(heap)
        widths = np.atleast_1d(box_hi - box_lo)
        axis = int(np.argmax(widths))
        cut = np.array(box_lo, copy=True).reshape(widths.shape)
        cut[axis] = 0.5 * (np.atleast_1d(box_lo)[axis] + np.atleast_1d(box_hi)[axis])
        cut = cut.reshape(np.shape(box_lo))
        left_hi = np.where(np.arange(widths.size).reshape(np.shape(widths)) == axis, cut.reshape(widths.shape),
                           np.atleast_1d(box_hi)).reshape(np.shape(box_hi))
        right_lo = np.where(np.arange(widths.size).reshape(np.shape(widths)) == axis, cut.reshape(widths.shape),
                            np.atleast_1d(box_lo)).reshape(np.shape(box_lo))
        for child_lo, child_hi in ((box_lo, left_hi), (right_lo, box_hi)):
            child_lower, upper, centre = evaluate(child_lo, child_hi)
            boxes += 1
            if upper < best_upper:
                best_upper, best_x = upper, centre
            child_lower = max(child_lower, parent_lower)
            if child_lower <= best_upper:
                heapq.heappush(heap, (child_lower, counter, child_lo, child_hi))
                counter += 1
    lower = heap[0][0] if heap else best_upper
    return GlobalMinimum(x=best_x, lower=min(lower, best_upper), upper=best_upper, boxes=boxes,
                         converged=best_upper - lower <= tol)


def integrate(f, lo: float, hi: float, degree: int = 2, cells: int = 1, verified: bool = True):
    """(lower, upper) bounds of the integral of a scalar function f over [lo, hi]: on each of `cells`
    equal cells, the lower and upper polynomials of its degree-`degree` enclosure at the cell's centre,
    integrated exactly (in interval arithmetic).

    >>> integrate(lambda x: 1.5 * anp.exp(3 * x) - 25 * x ** 2, 0.0, 1.0, degree=2, cells=8)  # doctest: +SKIP
    (1.20602..., 1.21298...)
    """
    name = f"integrate of '{name_of(f)}'"
    if isinstance(cells, bool) or not isinstance(cells, (int, np.integer)) or cells < 1:
        raise ArgumentError(f"{name}: cells must be a positive int, got {cells!r}")
    lo, hi = float(np.asarray(lo)), float(np.asarray(hi))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ArgumentError(f"{name}: the interval [{lo}, {hi}] must be finite")
    if lo > hi:
        raise ArgumentError(f"{name}: lo > hi ({lo} > {hi})")
    bound = taylor_bounds(f, check_degree(degree, "integrate"), verified)
    with np.errstate(all="ignore"):
        return _integrate(bound, lo, hi, cells, Intervals(verified))


def _integrate(bound, lo, hi, cells, iv):
    edges = [lo] + [lo + (hi - lo) * (k / cells) for k in range(1, cells)] + [hi]
    total = (np.float64(0.0), np.float64(0.0))
    for a, b in zip(edges[:-1], edges[1:]):
        centre = min(max(0.5 * (a + b), a), b)
        tb = bound(np.float64(centre), (a, b))
        left = iv.sub((np.float64(a),) * 2, (np.float64(centre),) * 2)    # a - m <= 0
        right = iv.sub((np.float64(b),) * 2, (np.float64(centre),) * 2)   # b - m >= 0
        for i in range(tb.degree + 1):
            c = tb._interval(i)
            power = i + 1
            # integral of (x - m)^i over [a, m] and [m, b]
            over_left = iv.neg(_divide(iv, iv.integer_power(left, power), power))
            over_right = _divide(iv, iv.integer_power(right, power), power)
            # (x - m)^i keeps its sign on each half, so an interval coefficient (which may vary with x)
            # contributes its worst case on each half separately
            term = iv.add(iv.mul(c, over_left), iv.mul(c, over_right))
            total = iv.add(total, term)
    return float(total[0]), float(total[1])


def _divide(iv, a, n: int):
    return iv.outward(a[0] / n, a[1] / n)
