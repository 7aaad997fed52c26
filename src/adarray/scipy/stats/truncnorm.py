"""The truncated normal distribution, as scipy.stats.truncnorm: N(0, 1) restricted to [a, b] in the
standardized variable z = (x - loc) / scale (a < b; infinite bounds allowed).

The normalizing mass log(Phi(b) - Phi(a)) is computed from whichever tail keeps its precision: the
lower tail where b <= 0, the upper tail (by symmetry) where a > 0, and 1 - Phi(a) - Phi(-b) in
between, so logpdf, logcdf and logsf stay accurate far out in either tail.

    >>> round(float(cdf(0.0, -1.0, 1.0)), 12)
    0.5
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from .. import special
from ._common import HALF_LOG_2PI, floats, inside, positive, valid


def _log_difference(larger, smaller):
    """log(exp(larger) - exp(smaller)) for larger >= smaller."""
    return larger + anp.log1p(-anp.exp(smaller - larger))


def _log_mass(a, b):
    """log(Phi(b) - Phi(a)) for a <= b; an infinite bound has its exact mass and a zero derivative."""
    a_infinite, b_infinite = anp.equal(a, -np.inf), anp.equal(b, np.inf)
    a_finite = anp.where(a_infinite, anp.minimum(b, 0.0) - 2.0, a)      # finite stand-ins
    b_finite = anp.where(b_infinite, anp.maximum(a_finite, 0.0) + 2.0, b)
    bounded = _log_mass_finite(a_finite, b_finite)
    one_sided = anp.where(b_infinite, special.log_ndtr(-a_finite), special.log_ndtr(b_finite))
    either = anp.logical_or(a_infinite, b_infinite)
    return anp.where(anp.logical_and(a_infinite, b_infinite), 0.0, anp.where(either, one_sided, bounded))


def _log_mass_finite(a, b):
    """log(Phi(b) - Phi(a)) for finite a <= b, from whichever tail keeps its digits."""
    lower_tail = anp.less_equal(b, 0.0)
    upper_tail = anp.logical_and(anp.greater(a, 0.0), anp.logical_not(lower_tail))
    central = anp.logical_not(anp.logical_or(lower_tail, upper_tail))
    # Each formula gets harmless operands (-1, 1) outside its region: no NaN or warning from the others.
    a_lower, b_lower = inside(lower_tail, a, -1.0), inside(lower_tail, b, 1.0)
    a_upper, b_upper = inside(upper_tail, a, -1.0), inside(upper_tail, b, 1.0)
    a_central, b_central = inside(central, a, -1.0), inside(central, b, 1.0)
    lower = _log_difference(special.log_ndtr(b_lower), special.log_ndtr(a_lower))
    upper = _log_difference(special.log_ndtr(-a_upper), special.log_ndtr(-b_upper))
    middle = anp.log1p(-special.ndtr(a_central) - special.ndtr(-b_central))
    return anp.where(lower_tail, lower, anp.where(upper_tail, upper, middle))


def _standard(name, x, a, b, loc, scale):
    x, a, b, loc, scale = floats(name, x, a, b, loc, scale)
    return (x - loc) / scale, a, b, scale, anp.logical_and(anp.less(a, b), positive(scale))


def logpdf(x, a, b, loc=0.0, scale=1.0):
    z, a, b, scale, ok = _standard("truncnorm.logpdf", x, a, b, loc, scale)
    support = anp.logical_and(anp.greater_equal(z, a), anp.less_equal(z, b))
    value = -0.5 * (z * z) - HALF_LOG_2PI - _log_mass(a, b) - anp.log(scale)
    return valid(anp.where(support, value, -np.inf), ok)


def pdf(x, a, b, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, a, b, loc, scale))


def _log_tails(name, x, a, b, loc, scale):
    """(log cdf, log sf) inside (a, b), each a difference of log masses; the one close to 0 is taken
    from the other as log1p(-exp(.)) (a difference of nearly equal masses would lose its digits)."""
    z, a, b, scale, ok = _standard(name, x, a, b, loc, scale)
    between = anp.logical_and(anp.greater(z, a), anp.less(z, b))
    low = anp.where(anp.isfinite(a), a, anp.minimum(b, 0.0) - 2.0)   # finite stand-ins for infinite bounds
    high = anp.where(anp.isfinite(b), b, anp.maximum(low, 0.0) + 2.0)
    inner = anp.where(between, z, (low + high) / 2.0)   # a point inside (a, b): no NaN in the unused branch
    total = _log_mass(a, b)
    lower, upper = _log_mass(a, inner) - total, _log_mass(inner, b) - total
    half = -np.log(2.0)
    # (the complement is used where it is at most 1/2; clipped there, the unused one stays finite)
    lower_accurate = anp.where(anp.less(lower, half), lower, anp.log1p(-anp.exp(anp.minimum(upper, half))))
    upper_accurate = anp.where(anp.less(upper, half), upper, anp.log1p(-anp.exp(anp.minimum(lower, half))))
    return z, a, b, ok, lower_accurate, upper_accurate


def logcdf(x, a, b, loc=0.0, scale=1.0):
    z, a, b, ok, lower, _ = _log_tails("truncnorm.logcdf", x, a, b, loc, scale)
    return valid(anp.where(anp.less_equal(z, a), -np.inf, anp.where(anp.greater_equal(z, b), 0.0, lower)), ok)


def cdf(x, a, b, loc=0.0, scale=1.0):
    return anp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0.0, scale=1.0):
    z, a, b, ok, _, upper = _log_tails("truncnorm.logsf", x, a, b, loc, scale)
    return valid(anp.where(anp.less_equal(z, a), 0.0, anp.where(anp.greater_equal(z, b), -np.inf, upper)), ok)


def sf(x, a, b, loc=0.0, scale=1.0):
    return anp.exp(logsf(x, a, b, loc, scale))
