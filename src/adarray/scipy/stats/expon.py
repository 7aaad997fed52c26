"""The exponential distribution, as scipy.stats.expon: pdf exp(-y) / scale for y = (x - loc) / scale >= 0.

    >>> float(cdf(1.0))
    0.6321205588285577
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from ._common import floats, inside, positive, valid


def _standard(name, x, loc, scale):
    x, loc, scale = floats(name, x, loc, scale)
    y = (x - loc) / scale
    support = anp.greater_equal(y, 0.0)
    return y, inside(support, y, 0.0), support, scale


def logpdf(x, loc=0.0, scale=1.0):
    y, safe, support, scale = _standard("expon.logpdf", x, loc, scale)
    return valid(anp.where(support, -safe - anp.log(scale), -np.inf), positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    y, safe, support, scale = _standard("expon.cdf", x, loc, scale)
    return valid(anp.where(support, -anp.expm1(-safe), 0.0), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    y, safe, support, scale = _standard("expon.logcdf", x, loc, scale)
    above = anp.greater(y, 0.0)
    return valid(anp.where(above, anp.log(-anp.expm1(-inside(above, y, 1.0))), -np.inf), positive(scale))


def sf(x, loc=0.0, scale=1.0):
    return anp.exp(logsf(x, loc, scale))


def logsf(x, loc=0.0, scale=1.0):
    y, safe, support, scale = _standard("expon.logsf", x, loc, scale)
    return valid(anp.where(support, -safe, 0.0), positive(scale))


def ppf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("expon.ppf", q, loc, scale)
    return valid(loc - scale * anp.log1p(-q), positive(scale))
