"""`taylor_bounds` and its result `TaylorBounds`.

    tb = ab.taylor_bounds(f, max_degree=2)(x0, (lo, hi))
    tb.coefficients     # exact coefficients below max_degree (thin (lo, hi) intervals when verified),
                        # the interval (lo, hi) at max_degree
    tb(x), tb.lower(x), tb.upper(x), tb.final_interval()

For every x in the box, f(x) - sum_{i<k} c_i (x - x0)^i lies in I (x - x0)^k (tensor contractions for a
vector x; elementwise for an array-valued f). x0 may lie outside the box: the polynomial is still valid
on it. f is traced once per signature (ad.make_ir) and its program walked with Taylor enclosures.
"""
from __future__ import annotations

import functools

import numpy as np

from ..api.grad import make_ir
from ..api.staging import name_of
from ..core.errors import ArgumentError, UnsupportedError
from ..core.pytree import flatten
from .enclosure import Arithmetic, Enclosure
from .interpreter import Context, enclose_program

MAX_DEGREE = 24


def check_degree(degree, what="taylor_bounds") -> int:
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)):
        raise ArgumentError(f"{what}: max_degree must be an int, got {degree!r}")
    if not 0 <= degree <= MAX_DEGREE:
        raise ArgumentError(f"{what}: max_degree {degree} is outside the supported range 0..{MAX_DEGREE} (the "
                            f"degree-k coefficient has n^k entries per output)")
    return int(degree)


def check_box(name, x0, trust_region, contain_x0: bool = True):
    """x0 (scalar or 1-d float array) and its box, validated: (x0, lo, hi) as float64 arrays."""
    x0 = np.asarray(x0)
    if x0.dtype.kind not in "fiu" or x0.ndim > 1:
        raise ArgumentError(f"{name}: x0 must be a scalar or a 1-d float array, got shape {x0.shape} dtype {x0.dtype}")
    x0 = x0.astype(np.float64)
    if not isinstance(trust_region, (tuple, list)) or len(trust_region) != 2:
        raise ArgumentError(f"{name}: the trust region must be a pair (lo, hi), got {type(trust_region).__name__}")
    try:
        lo, hi = (np.broadcast_to(np.asarray(b, np.float64), x0.shape) for b in trust_region)
    except ValueError:
        raise ArgumentError(f"{name}: the box bounds of shapes {np.shape(trust_region[0])}, "
                            f"{np.shape(trust_region[1])} do not fit x0 of shape {x0.shape}") from None
    if np.isnan(x0).any() or np.isnan(lo).any() or np.isnan(hi).any():
        raise ArgumentError(f"{name}: NaN in x0 or in the box ({lo}, {hi})")
    if np.any(lo > hi):
        raise ArgumentError(f"{name}: the box has lo > hi: lo = {lo}, hi = {hi}")
    if contain_x0 and (np.any(x0 < lo) or np.any(x0 > hi)):
        raise ArgumentError(f"{name}: the box [{lo}, {hi}] does not contain x0 = {x0}")
    if np.any(np.isinf(x0)):
        raise ArgumentError(f"{name}: x0 must be finite, got {x0}")
    return x0, lo, hi


class TaylorBounds:
    """A Taylor enclosure of f on a box: exact coefficients at x0, an interval at the top degree.

    Coefficient i has the shape of f's output followed by i axes of x's length (none for a scalar x)."""

    def __init__(self, f, x0, trust_region, enclosure: Enclosure, arithmetic: Arithmetic):
        self.f, self.x0, self.x_trust_region = f, x0, trust_region
        self.degree = enclosure.degree
        self.shape = enclosure.shape  # the output's
        self._enclosure, self._arith = enclosure, arithmetic
        self._scalar = np.ndim(x0) == 0

    def _interval(self, i):
        c = self._enclosure.coefficients[i]
        if c is None:
            z = np.zeros(self.shape + (self._arith.n,) * i)
            c = (z, z)
        if self._scalar:  # drop the dx axes, of length 1
            return c[0].reshape(self.shape), c[1].reshape(self.shape)
        return c

    @property
    def coefficients(self) -> tuple:
        """Degrees 0..k-1: an array where the coefficient is exact (lo == hi), else the pair (lo, hi) that
        encloses it (thin, with verified=True); degree k: the interval (lo, hi)."""
        out = []
        for i in range(self.degree + 1):
            lo, hi = self._interval(i)
            out.append(lo if i < self.degree and np.array_equal(lo, hi) else (lo, hi))
        return tuple(out)

    def _evaluate(self, x):
        x = np.asarray(x, np.float64)
        n = self._arith.n
        batch = x.shape if self._scalar else x.shape[:-1]
        if not self._scalar and x.shape[-1:] != (n,):
            raise ArgumentError(f"TaylorBounds: x must have shape (..., {n}), got {x.shape}")
        lo, hi = self.x_trust_region
        if np.isnan(x).any() or np.any(x < lo) or np.any(x > hi):
            outside = x[(x < lo) | (x > hi) | np.isnan(x)] if self._scalar else x[np.any((x < lo) | (x > hi)
                                                                                          | np.isnan(x), axis=-1)]
            raise ArgumentError(f"TaylorBounds of '{name_of(self.f)}': x = {outside[:3]} lies outside the box "
                                f"[{lo}, {hi}] the enclosure holds on")
        iv = self._arith.iv
        x0 = np.asarray(self.x0, np.float64).reshape(n)
        delta = iv.sub((x.reshape(batch + (n,)),) * 2, (x0, x0))
        out = len(self.shape)
        total = (np.zeros(batch + self.shape), np.zeros(batch + self.shape))
        for i, c in enumerate(self._enclosure.coefficients):
            if c is None:
                continue
            term = (c[0].reshape((1,) * len(batch) + c[0].shape), c[1].reshape((1,) * len(batch) + c[1].shape))
            for r in range(i, 0, -1):
                shape = batch + (1,) * (out + r - 1) + (n,)
                term = iv.sum(iv.mul(term, (delta[0].reshape(shape), delta[1].reshape(shape))), axis=-1)
            total = iv.add(total, (np.broadcast_to(term[0], total[0].shape), np.broadcast_to(term[1], total[0].shape)))
        return total

    def lower(self, x):
        """A lower bound of f(x) (x in the box; an array of points evaluates each)."""
        return self(x)[0]

    def upper(self, x):
        """An upper bound of f(x)."""
        return self(x)[1]

    def __call__(self, x):
        """(lower, upper) bounds of f(x): the enclosure's polynomials at x, within the final interval. x must
        lie in the box (ad.ArgumentError otherwise): outside it the enclosure says nothing."""
        with np.errstate(all="ignore"):
            lo, hi = self._evaluate(x)
            low, high = self.final_interval()
            return np.maximum(lo, low), np.minimum(hi, high)

    def final_interval(self):
        """An interval containing f(x) for every x in the box (per output element)."""
        with np.errstate(all="ignore"):
            lo, hi = self._arith.range(self._enclosure)
        return lo.reshape(self.shape), hi.reshape(self.shape)

    def __repr__(self) -> str:
        return f"TaylorBounds(degree={self.degree}, x0={self.x0}, coefficients={self.coefficients})"


def _region(lo, x0, hi, verified):
    """The box minus x0, rounded outward (it must contain every x - x0 exactly; exact differences stay
    exact)."""
    iv = Arithmetic(0, (np.zeros(1), np.zeros(1)), verified).iv
    low = iv.sub((np.atleast_1d(lo),) * 2, (np.atleast_1d(x0),) * 2)[0]
    high = iv.sub((np.atleast_1d(hi),) * 2, (np.atleast_1d(x0),) * 2)[1]
    return low, high


def _variable(arith, x0, lo, hi):
    """x, which lies in the box [lo, hi] exactly: its enclosure carries the box as its bound (degree 0:
    the box itself), so a function whose domain ends at the box's edge (sqrt on [0, 1]) stays in it."""
    box = (np.atleast_1d(lo).astype(np.float64), np.atleast_1d(hi).astype(np.float64))
    variable = arith.interval_constant(box) if arith.degree == 0 else arith.variable(np.atleast_1d(x0))
    variable.bound = box
    if np.ndim(x0) == 0:
        variable = arith.map_bounds(variable, lambda arr, i: arr.reshape(arr.shape[1:]), ())
        variable.bound = (box[0].reshape(()), box[1].reshape(()))
    return variable


def taylor_bounds(f, max_degree: int, verified: bool = True, propagate_ranges: bool = True):
    """Return a function (x0, (lo, hi), *args) -> TaylorBounds of f around x0 on the box [lo, hi].

    f maps a scalar or 1-d array x (and constant extra `args`, not bounded over) to a scalar or an array
    (bounded element by element). x0 may lie outside the box. Degree 0 is interval arithmetic. With
    verified=True every interval operation rounds outward, so the enclosure holds for the exact
    values, not just up to round-off; verified=False is faster. With
    propagate_ranges (AutoBound's propagate_trust_regions), a first pass of interval arithmetic gives
    every intermediate value a range, intersected with the one its enclosure implies (tighter ranges
    for the elementwise enclosures, and a finite result where a kink sits on the centre).

    >>> tb = taylor_bounds(lambda x: 1.5 * anp.exp(3 * x) - 25 * x ** 2, 2)(0.5, (0.0, 1.0))  # doctest: +SKIP
    >>> tb.coefficients  # doctest: +SKIP
    (0.47253, -4.83240, (-5.55494, 28.28789))
    """
    degree = check_degree(max_degree)
    name = name_of(f)
    trace = make_ir(f)

    @functools.wraps(f)
    def bounds(x0, trust_region, *args):
        x0, lo, hi = check_box(f"taylor_bounds of '{name}'", x0, trust_region, contain_x0=False)
        program = trace(x0, *args)
        if len(program.outputs) != 1 or not program.out_avals[0].differentiable:
            raise ArgumentError(f"taylor_bounds: '{name}' must return one float array (or scalar), got "
                                f"{', '.join(map(str, program.out_avals))}")
        with np.errstate(all="ignore"):
            return _enclose(f, program, degree, x0, lo, hi, args, verified, propagate_ranges, name)

    return bounds


def _enclose(f, program, degree, x0, lo, hi, args, verified, propagate_ranges, name) -> TaylorBounds:
    arith = Arithmetic(degree, _region(lo, x0, hi, verified), verified)
    constants = [np.asarray(leaf) for leaf in flatten(list(args))[0]]
    ranges = None
    if propagate_ranges and degree > 0:  # a degree-0 pass: interval ranges of every value, to intersect
        ranges = {}
        interval = Arithmetic(0, arith.region, verified)
        try:
            enclose_program(Context(interval, name), program, [_variable(interval, x0, lo, hi)] + constants,
                            record=ranges)
        except UnsupportedError:  # e.g. a loop condition interval arithmetic cannot decide: no ranges
            ranges = None
    context = Context(arith, name)
    (out,) = enclose_program(context, program, [_variable(arith, x0, lo, hi)] + constants, ranges=ranges)
    out = context.enclose(out)
    shape = tuple(program.out_avals[0].shape)
    if out.shape != shape:  # a constant output of another shape cannot happen; keep the program's
        out = arith.map_bounds(out, lambda arr, i: np.broadcast_to(arr, shape + arr.shape[len(out.shape):]), shape)
    return TaylorBounds(f, x0 if x0.ndim else x0.reshape(()), (lo, hi), out, arith)
