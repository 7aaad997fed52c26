"""Where the derivatives of the logistic family are monotone: the zeros of sigmoid^(j) and swish^(j).

The sharp enclosure of degree k (elementwise.py) needs to know whether f^(k) is monotone on a range,
that is whether f^(k+1) has a zero there. Interval enclosures of f^(k+1) over a range overestimate
badly at high orders (the recurrences repeat y), so for sigmoid, softplus, tanh and swish the zeros
are located once per order, as AutoBound keeps a table of them (Streeter & Dillon, arXiv:2308.00679):

- sigmoid: sigma^(j)(y) = P_j(s) with s = sigma(y), P_0 = s, P_(j+1) = P_j'(s) s (1 - s): integer
  polynomials of degree j + 1 with roots 0 and 1 and j - 1 simple roots in (0, 1). The roots are
  bracketed by a sign change of P_j, checked in exact rational arithmetic, and all j - 1 are found
  (the count proves that none is missing). softplus^(j) = sigma^(j-1), tanh^(j)(y) = 2^(j+1) sigma^(j)(2y).
- swish y sigma(y): swish^(j) = y sigma^(j) + j sigma^(j-1), located on a fine grid (step 1/256 over
  the range that holds its zeros, |y| < j + 40, beyond which the sign is that of -y (y + j) e^-|y|), the
  sign change at both ends of each bracket evaluated in exact rational arithmetic at sigma's rounded
  value, as AutoBound's table is numerical.

A table is (zeros_lo, zeros_hi, signs): every zero of f^(j) lies in one bracket [zeros_lo[i], zeros_hi[i]]
(widened by 1e-9 (1 + |y|) for the rounding of sigma), and signs[i] is the sign of f^(j) between
bracket i - 1 and bracket i (signs has one more entry).

    >>> zeros("sigmoid", 2)   # sigma'' vanishes at 0 only, positive before and negative after
    (array([-1e-09]), array([1e-09]), array([ 1., -1.]))
"""
from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
from scipy import special

_MARGIN = 1e-9


@functools.lru_cache(maxsize=None)
def _sigmoid_polynomial(j: int) -> tuple:
    """Integer coefficients (lowest degree first) of P_j with sigma^(j) = P_j(sigma)."""
    p = [0, 1]
    for _ in range(j):
        derivative = [k * p[k] for k in range(1, len(p))] or [0]
        # times s (1 - s) = s - s^2
        p = [0] + derivative + [0]
        p = [a - b for a, b in zip(p, [0] + [0] + derivative)]
    return tuple(p)


def _exact(coefficients, s: Fraction) -> Fraction:
    total = Fraction(0)
    for c in reversed(coefficients):
        total = total * s + c
    return total


def _float(coefficients, s):
    return np.polyval(np.array([float(c) for c in reversed(coefficients)]), s)


def _sigmoid_derivative(j: int, y):
    """sigma^(j)(y) in floating point, evaluated at y <= 0 (s <= 1/2, no cancellation in 1 - s)."""
    return _float(_sigmoid_polynomial(j), special.expit(y))


def _swish_derivative(j: int, y):
    return y * _sigmoid_derivative(j, y) + j * _sigmoid_derivative(j - 1, y)


def _exact_sigmoid(j: int, y: float) -> Fraction:
    return _exact(_sigmoid_polynomial(j), Fraction(float(special.expit(y))))


def _exact_swish(j: int, y: float) -> Fraction:
    s = Fraction(float(special.expit(y)))
    return Fraction(y) * _exact(_sigmoid_polynomial(j), s) + j * _exact(_sigmoid_polynomial(j - 1), s)


def _zeros_between(function, exact, j: int, start: float, stop: float):
    """Brackets of the sign changes of function(j, .) on [start, stop), each confirmed exactly."""
    grid = np.linspace(start, stop, int((stop - start) * 256) + 1)[:-1]
    values = function(j, grid)
    changes = np.nonzero(np.sign(values[:-1]) * np.sign(values[1:]) < 0)[0]
    brackets = []
    for i in changes:
        a, b = float(grid[i]), float(grid[i + 1])
        sign_a = exact(j, a) > 0
        if sign_a == (exact(j, b) > 0) or exact(j, a) == 0:
            return None
        for _ in range(40):  # bisection with exact signs, down to about 1e-14
            mid = 0.5 * (a + b)
            if mid in (a, b):
                break
            value = exact(j, mid)
            if value == 0:
                a = b = mid
                break
            if (value > 0) == sign_a:
                a = mid
            else:
                b = mid
        brackets.append((a, b))
    return brackets


@functools.lru_cache(maxsize=None)
def _table(name: str, j: int):
    if name == "sigmoid":
        function, exact, reach, odd_at_zero = _sigmoid_derivative, _exact_sigmoid, j + 40.0, j % 2 == 0
    else:
        function, exact, reach, odd_at_zero = _swish_derivative, _exact_swish, j + 40.0, j % 2 == 1
    with np.errstate(all="ignore"):
        if name == "swish" and j == 1:  # swish' is not symmetric: its one zero, near -1.28
            brackets = _zeros_between(function, exact, j, -reach, reach)
            if brackets is None:
                return None
        else:
            negative = _zeros_between(function, exact, j, -reach, 0.0)
            if negative is None:
                return None
            # symmetry: sigma^(j)(-y) = (-1)^(j+1) sigma^(j)(y) (j >= 1), swish^(j)(-y) = (-1)^j swish^(j)(y)
            at_zero = odd_at_zero and exact(j, 0.0) == 0
            brackets = negative + ([(0.0, 0.0)] if at_zero else []) + [(-b, -a) for a, b in reversed(negative)]
    if name == "sigmoid" and len(brackets) != j - 1:  # P_j has exactly j - 1 roots in (0, 1)
        return None
    lo = np.array([a - _MARGIN * (1 + abs(a)) for a, _ in brackets])
    hi = np.array([b + _MARGIN * (1 + abs(b)) for _, b in brackets])
    cuts = np.concatenate([[-reach - 1.0], 0.5 * (hi[:-1] + lo[1:]), [reach + 1.0]]) if brackets else \
        np.array([-1.0])
    if name == "swish" and j == 1:
        signs = np.sign([float(exact(j, float(c))) for c in cuts])
    else:
        signs = np.sign([float(exact(j, float(-abs(c)))) * (1 if c <= 0 else _mirror(name, j)) for c in cuts])
    return lo, hi, signs.astype(np.float64)


def _mirror(name: str, j: int) -> int:
    """f^(j)(y) = _mirror * f^(j)(-y)."""
    return (-1) ** (j + 1) if name == "sigmoid" else (-1) ** j


def zeros(name: str, j: int):
    """The table of f^(j)'s zeros for f = sigmoid, softplus, tanh or swish (None if it could not be
    confirmed: the caller falls back to interval enclosures)."""
    if name == "softplus":
        if j <= 1:  # softplus' = sigmoid > 0
            return np.zeros(0), np.zeros(0), np.ones(1)
        return _table("sigmoid", j - 1)
    if name == "tanh":
        table = _table("sigmoid", j)
        return None if table is None else (0.5 * table[0], 0.5 * table[1], table[2])
    if name == "sigmoid":
        return _table("sigmoid", j) if j >= 1 else None
    if name == "swish":
        return _table("swish", j) if j >= 1 else None
    raise KeyError(name)


def monotone_on(name: str, j: int, lo, hi):
    """(increasing, decreasing) masks: where f^(j-1) is monotone on [lo, hi] (f^(j) keeps its sign), or
    None without a table."""
    table = zeros(name, j)
    if table is None:
        return None
    zeros_lo, zeros_hi, signs = table
    lo, hi = np.asarray(lo), np.asarray(hi)
    region = np.searchsorted(zeros_hi, lo)  # the first bracket ending at or after lo
    clear = region >= len(zeros_lo)
    clear = clear | (hi < zeros_lo[np.minimum(region, max(len(zeros_lo) - 1, 0))] if len(zeros_lo) else True)
    sign = signs[np.minimum(region, len(signs) - 1)]
    return clear & (sign > 0), clear & (sign < 0)


def extrema_inside(name: str, j: int, lo, hi):
    """The brackets of f^(j)'s zeros (f^(j-1)'s extrema) and a mask of those that meet [lo, hi]:
    (zeros_lo, zeros_hi, mask of shape lo.shape + (count,)), or None without a table."""
    table = zeros(name, j)
    if table is None:
        return None
    zeros_lo, zeros_hi, _ = table
    lo, hi = np.asarray(lo)[..., None], np.asarray(hi)[..., None]
    return zeros_lo, zeros_hi, (zeros_hi >= lo) & (zeros_lo <= hi)
