"""The Laplace distribution, as scipy.stats.laplace: pdf exp(-|y|) / (2 scale).

    >>> float(cdf(0.0))
    0.5
"""
from __future__ import annotations

import math

from ... import numpy as anp
from ._common import floats, positive, valid

LOG_2 = math.log(2.0)


def _standard(name, x, loc, scale):
    x, loc, scale = floats(name, x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0.0, scale=1.0):
    y, scale = _standard("laplace.logpdf", x, loc, scale)
    return valid(-anp.abs(y) - anp.log(scale) - LOG_2, positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, loc, scale))


def _cdf(y):
    # exp of the clipped argument only: the untaken side must not overflow (0 * inf in a gradient)
    below = anp.less(y, 0.0)
    return anp.where(below, 0.5 * anp.exp(anp.minimum(y, 0.0)), 1.0 - 0.5 * anp.exp(-anp.maximum(y, 0.0)))


def _logcdf(y):
    below = anp.less(y, 0.0)
    return anp.where(below, anp.minimum(y, 0.0) - LOG_2, anp.log1p(-0.5 * anp.exp(-anp.maximum(y, 0.0))))


def cdf(x, loc=0.0, scale=1.0):
    y, scale = _standard("laplace.cdf", x, loc, scale)
    return valid(_cdf(y), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    y, scale = _standard("laplace.logcdf", x, loc, scale)
    return valid(_logcdf(y), positive(scale))


def sf(x, loc=0.0, scale=1.0):
    y, scale = _standard("laplace.sf", x, loc, scale)
    return valid(_cdf(-y), positive(scale))


def logsf(x, loc=0.0, scale=1.0):
    y, scale = _standard("laplace.logsf", x, loc, scale)
    return valid(_logcdf(-y), positive(scale))


def ppf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("laplace.ppf", q, loc, scale)
    lower = anp.less_equal(q, 0.5)
    standard = anp.where(lower, anp.log(2.0 * anp.where(lower, q, 0.5)),
                         -anp.log(2.0 - 2.0 * anp.where(lower, 0.5, q)))
    return valid(loc + scale * standard, positive(scale))
