"""The Weibull minimum distribution, as scipy.stats.weibull_min: pdf c y^(c-1) exp(-y^c) / scale
for y = (x - loc) / scale >= 0, shape c > 0.

    >>> round(float(cdf(1.0, 2.0)), 12)
    0.632120558829
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from .. import special
from ._common import floats, inside, log_probability, positive, valid


def _standard(name, x, c, loc, scale):
    x, c, loc, scale = floats(name, x, c, loc, scale)
    y = (x - loc) / scale
    support = anp.greater_equal(y, 0.0)
    safe = inside(support, y, 1.0)
    return safe, anp.power(safe, c), support, c, scale


def logpdf(x, c, loc=0.0, scale=1.0):
    """log c + (c - 1) log y - y^c - log scale; at y = 0 it is -inf, 0 - log scale or +inf for c >, =, < 1."""
    y, power, support, c, scale = _standard("weibull_min.logpdf", x, c, loc, scale)
    value = anp.log(c) + special.xlogy(c - 1.0, y) - power - anp.log(scale)
    return valid(anp.where(support, value, -np.inf), positive(c, scale))


def pdf(x, c, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, c, loc, scale))


def cdf(x, c, loc=0.0, scale=1.0):
    y, power, support, c, scale = _standard("weibull_min.cdf", x, c, loc, scale)
    return valid(anp.where(support, -anp.expm1(-power), 0.0), positive(c, scale))


def logcdf(x, c, loc=0.0, scale=1.0):
    """log(1 - exp(-y^c)), from log1p(-sf) where the cdf is close to 1."""
    return log_probability(cdf(x, c, loc, scale), sf(x, c, loc, scale))


def sf(x, c, loc=0.0, scale=1.0):
    return anp.exp(logsf(x, c, loc, scale))


def logsf(x, c, loc=0.0, scale=1.0):
    y, power, support, c, scale = _standard("weibull_min.logsf", x, c, loc, scale)
    return valid(anp.where(support, -power, 0.0), positive(c, scale))


def ppf(q, c, loc=0.0, scale=1.0):
    q, c, loc, scale = floats("weibull_min.ppf", q, c, loc, scale)
    return valid(loc + scale * anp.power(-anp.log1p(-q), 1.0 / c), positive(c, scale))


def isf(q, c, loc=0.0, scale=1.0):
    q, c, loc, scale = floats("weibull_min.isf", q, c, loc, scale)
    return valid(loc + scale * anp.power(-anp.log(q), 1.0 / c), positive(c, scale))
