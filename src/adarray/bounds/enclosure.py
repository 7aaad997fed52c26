"""Taylor enclosures and their arithmetic (AutoBound's interval Taylor mode, Streeter & Dillon 2022).

A value of shape S that depends on x (shape (n,); a scalar x is n = 1) is enclosed by D + 1 interval
coefficients C_i of shape S + (n,) * i: for every x in the box, with dx = x - x0,

    value(x)  in  sum_i C_i[dx, ..., dx]            (C_i contracted with i copies of dx)

meaning: there are c_i in C_i (which may depend on x) with value(x) = sum_i c_i[dx^i]. Exact
coefficients are thin intervals (one rounding apart, or equal with verified=False); a zero
coefficient is None. The trust region R (the box minus x0) turns excess degree into intervals:
a term of degree p > D is contracted with p - D copies of R and added to the degree-D coefficient.

    Arithmetic(degree, region, verified)   constant, variable, add, sub, neg, mul, compose, range, hull
"""
from __future__ import annotations

import itertools

import numpy as np

from .interval import Intervals


class Enclosure:
    """D + 1 interval coefficients (or None for zero) of a value of `shape`."""

    __slots__ = ("coefficients", "shape", "bound")

    def __init__(self, coefficients, shape, bound=None):
        self.coefficients = list(coefficients)
        self.shape = tuple(shape)
        self.bound = bound  # optional: an interval known to contain the value (from interval arithmetic)

    @property
    def degree(self) -> int:
        return len(self.coefficients) - 1

    def __repr__(self) -> str:
        return f"Enclosure(shape={self.shape}, degree={self.degree})"


def _zero(shape):
    z = np.zeros(shape)
    return z, z


class Arithmetic:
    """Enclosure arithmetic for one degree, trust region and rounding mode."""

    def __init__(self, degree: int, region, verified: bool = True):
        self.degree = int(degree)
        self.region = (np.asarray(region[0], np.float64), np.asarray(region[1], np.float64))
        self.n = self.region[0].shape[0]
        self.iv = Intervals(verified)

    # --- making enclosures --------------------------------------------------------------------------

    def constant(self, value) -> Enclosure:
        value = np.asarray(value, np.float64)
        return Enclosure([(value, value)] + [None] * self.degree, value.shape)

    def interval_constant(self, interval) -> Enclosure:
        lo, hi = np.asarray(interval[0], np.float64), np.asarray(interval[1], np.float64)
        return Enclosure([(lo, hi)] + [None] * self.degree, lo.shape)

    def variable(self, x0) -> Enclosure:
        """x itself: x0 + I dx (degree 0 encloses it by the box: x0 + R)."""
        x0 = np.asarray(x0, np.float64).reshape(self.n)
        if self.degree == 0:
            return Enclosure([self.iv.add((x0, x0), self.region)], (self.n,))
        eye = np.eye(self.n)
        return Enclosure([(x0, x0), (eye, eye)] + [None] * (self.degree - 1), (self.n,))

    # --- linear operations ----------------------------------------------------------------------------

    def add(self, a: Enclosure, b: Enclosure) -> Enclosure:
        return Enclosure([self._add(x, y) for x, y in zip(a.coefficients, b.coefficients)], a.shape)

    def _add(self, x, y):
        if x is None:
            return y
        if y is None:
            return x
        return self.iv.add(x, y)

    def neg(self, a: Enclosure) -> Enclosure:
        return Enclosure([None if c is None else self.iv.neg(c) for c in a.coefficients], a.shape)

    def sub(self, a: Enclosure, b: Enclosure) -> Enclosure:
        return self.add(a, self.neg(b))

    def map_bounds(self, a: Enclosure, function, shape) -> Enclosure:
        """A monotone selection (reshape, transpose, slice, gather, broadcast, ...) applied to both bounds of
        every coefficient: `function(array, trailing)` maps an array of a.shape + `trailing` axes."""
        out = []
        for i, c in enumerate(a.coefficients):
            out.append(None if c is None else (function(c[0], i), function(c[1], i)))
        return Enclosure(out, shape)

    def hull(self, a: Enclosure, b: Enclosure) -> Enclosure:
        """Encloses whichever of a and b the value is (coefficient by coefficient: sound, since each
        coefficient of either lies in the hull)."""
        out = []
        for i, (x, y) in enumerate(zip(a.coefficients, b.coefficients)):
            if x is None and y is None:
                out.append(None)
                continue
            shape = a.shape + (self.n,) * i
            x = _zero(shape) if x is None else x
            y = _zero(shape) if y is None else y
            out.append(self.iv.hull(x, y))
        return Enclosure(out, a.shape)

    # --- the trust region ---------------------------------------------------------------------------

    def contract(self, tensor, count: int):
        """Contract the last `count` axes of an interval tensor with the region (interval vectors)."""
        for _ in range(count):
            tensor = self.iv.sum(self.iv.mul(tensor, self.region), axis=-1)
        return tensor

    def range(self, a: Enclosure):
        """An interval enclosing the value over the whole box: sum_i C_i[R^i] (monomial by monomial, so
        dx_k^2 >= 0 is known), intersected with the value's interval bound if it carries one."""
        total = _zero(a.shape)
        for i, c in enumerate(a.coefficients):
            if c is not None:
                total = self.iv.add(total, self.monomials(c, i))
        if a.bound is not None:
            lo, hi = self.iv.intersect(total, a.bound)
            total = np.minimum(lo, hi), np.maximum(lo, hi)
        return total

    def monomials(self, tensor, degree: int):
        """tensor[R, ..., R] with the entries of each monomial dx^alpha summed first and multiplied by the
        interval power R^alpha (tighter than contracting one axis at a time: no dependency on repeated dx)."""
        if degree == 0:
            return tensor
        n = self.n
        if n == 1:
            power = self.iv.integer_power((self.region[0][0], self.region[1][0]), degree)
            shape = tensor[0].shape[:tensor[0].ndim - degree]
            return self.iv.mul((tensor[0].reshape(shape), tensor[1].reshape(shape)), power)
        if n ** degree > 4096:
            return self.contract(tensor, degree)

        shape = tensor[0].shape[:tensor[0].ndim - degree]
        flat = (tensor[0].reshape(shape + (-1,)), tensor[1].reshape(shape + (-1,)))
        groups: dict = {}
        for position, index in enumerate(itertools.product(range(n), repeat=degree)):
            groups.setdefault(tuple(sorted(index)), []).append(position)
        total = _zero(shape)
        for key, positions in groups.items():
            summed = self.iv.sum((flat[0][..., positions], flat[1][..., positions]), axis=-1)
            monomial = None
            for k in set(key):
                factor = self.iv.integer_power((self.region[0][k], self.region[1][k]), key.count(k))
                monomial = factor if monomial is None else self.iv.mul(monomial, factor)
            total = self.iv.add(total, self.iv.mul(summed, monomial))
        return total

    # --- products -----------------------------------------------------------------------------------

    def mul(self, a: Enclosure, b: Enclosure, product=None, shape=None) -> Enclosure:
        """The product (elementwise, or any bilinear `product(x, i, y, j)` of coefficient intervals of
        degrees i and j returning shape + (n,) * (i + j)), truncated at degree D with the excess
        folded into the top coefficient."""
        product = product or self._outer
        shape = a.shape if shape is None else shape
        out = [None] * (self.degree + 1)
        for i, x in enumerate(a.coefficients):
            if x is None:
                continue
            for j, y in enumerate(b.coefficients):
                if y is None:
                    continue
                term = product(x, i, y, j)
                excess = i + j - self.degree
                if excess > 0:  # by monomials: R^2 >= 0 is known (AutoBound folds the same way)
                    term = self.monomials(term, excess)
                k = min(i + j, self.degree)
                out[k] = self._add(out[k], term)
        return Enclosure(out, shape)

    def _outer(self, x, i, y, j):
        """Elementwise over the value's axes, outer over the dx axes."""
        x = (x[0].reshape(x[0].shape + (1,) * j), x[1].reshape(x[1].shape + (1,) * j))
        y = (y[0].reshape(y[0].shape[:y[0].ndim - j] + (1,) * i + y[0].shape[y[0].ndim - j:]),
             y[1].reshape(y[1].shape[:y[1].ndim - j] + (1,) * i + y[1].shape[y[1].ndim - j:]))
        return self.iv.mul(x, y)

    def scale(self, a: Enclosure, interval) -> Enclosure:
        """a times an interval array of a's shape (or broadcastable to it)."""
        out = []
        for i, c in enumerate(a.coefficients):
            if c is None:
                out.append(None)
                continue
            factor = (np.reshape(interval[0], np.shape(interval[0]) + (1,) * i),
                      np.reshape(interval[1], np.shape(interval[1]) + (1,) * i))
            out.append(self.iv.mul(factor, c))
        return Enclosure(out, a.shape)

    # --- composition with a one-dimensional enclosure -------------------------------------------------

    def compose(self, g: Enclosure, rule) -> Enclosure:
        """f(g) for an elementwise f with a 1-D enclosure rule (elementwise.py): with y0 the centre of
        g's constant coefficient and Y g's range, f(y) in sum_{k<D} c_k (y - y0)^k + I (y - y0)^D on Y,
        so f(g) in sum_k c_k u^k + I u^D with u = g - y0 (enclosure powers)."""
        y = self.range(g)
        c0 = g.coefficients[0] if g.coefficients[0] is not None else _zero(g.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            y0 = np.where(np.isfinite(c0[0]) & np.isfinite(c0[1]), 0.5 * c0[0] + 0.5 * c0[1],
                          np.where(np.isfinite(c0[0]), c0[0], np.where(np.isfinite(c0[1]), c0[1], 0.0)))
        # y0 may lie outside g's range (x0 outside the box): the rules that allow it (`outside`) get the
        # range itself, the others its hull with y0
        if not getattr(rule, "outside", False):
            y = (np.minimum(y[0], y0), np.maximum(y[1], y0))
        coefficients = rule(self.iv, y0, y, self.degree)
        u = Enclosure([self.iv.sub(c0, (y0, y0))] + g.coefficients[1:], g.shape)
        result = self.interval_constant(coefficients[0])
        power = None
        for k in range(1, self.degree + 1):
            power = u if power is None else self.mul(power, u)
            result = self.add(result, self.scale(power, coefficients[k]))
        return result
