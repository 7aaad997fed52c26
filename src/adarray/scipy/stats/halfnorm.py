"""The half-normal distribution, as scipy.stats.halfnorm: |N(0, 1)|, pdf sqrt(2 / pi) exp(-y^2 / 2) / scale
for y = (x - loc) / scale >= 0.

    >>> round(float(cdf(1.0)), 12)
    0.682689492137
"""
from __future__ import annotations

import math

import numpy as np

from ... import numpy as anp
from .. import special
from ._common import floats, inside, log_probability, positive, valid

HALF_LOG_2_OVER_PI = 0.5 * math.log(2.0 / math.pi)
LOG_2 = math.log(2.0)


def _standard(name, x, loc, scale):
    x, loc, scale = floats(name, x, loc, scale)
    y = (x - loc) / scale
    support = anp.greater_equal(y, 0.0)
    return inside(support, y, 0.0), support, scale


def logpdf(x, loc=0.0, scale=1.0):
    y, support, scale = _standard("halfnorm.logpdf", x, loc, scale)
    return valid(anp.where(support, HALF_LOG_2_OVER_PI - 0.5 * (y * y) - anp.log(scale), -np.inf), positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    y, support, scale = _standard("halfnorm.cdf", x, loc, scale)
    return valid(anp.where(support, special.erf(y / math.sqrt(2.0)), 0.0), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    """log erf(y / sqrt 2), from log1p(-erfc) where the cdf is close to 1 (the upper tail keeps its digits)."""
    return log_probability(cdf(x, loc, scale), sf(x, loc, scale))


def sf(x, loc=0.0, scale=1.0):
    y, support, scale = _standard("halfnorm.sf", x, loc, scale)
    return valid(anp.where(support, special.erfc(y / math.sqrt(2.0)), 1.0), positive(scale))


def logsf(x, loc=0.0, scale=1.0):
    """log(2 Phi(-y)), accurate far into the upper tail."""
    y, support, scale = _standard("halfnorm.logsf", x, loc, scale)
    return valid(anp.where(support, LOG_2 + special.log_ndtr(-y), 0.0), positive(scale))


def ppf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("halfnorm.ppf", q, loc, scale)
    return valid(loc + scale * special.ndtri((1.0 + q) / 2.0), positive(scale))


def isf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("halfnorm.isf", q, loc, scale)
    return valid(loc - scale * special.ndtri(q / 2.0), positive(scale))
