"""The uniform distribution on [loc, loc + scale], as scipy.stats.uniform.

    >>> float(cdf(0.25))
    0.25
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from ._common import floats, log_or_minus_inf, positive, valid


def _standard(name, x, loc, scale):
    x, loc, scale = floats(name, x, loc, scale)
    y = (x - loc) / scale
    return y, anp.logical_and(anp.greater_equal(y, 0.0), anp.less_equal(y, 1.0)), scale


def logpdf(x, loc=0.0, scale=1.0):
    y, support, scale = _standard("uniform.logpdf", x, loc, scale)
    return valid(anp.where(support, -anp.log(scale), -np.inf), positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    y, support, scale = _standard("uniform.cdf", x, loc, scale)
    return valid(anp.where(support, y, anp.where(anp.less(y, 0.0), 0.0, 1.0)), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    return log_or_minus_inf(cdf(x, loc, scale))


def sf(x, loc=0.0, scale=1.0):
    y, support, scale = _standard("uniform.sf", x, loc, scale)
    return valid(anp.where(support, 1.0 - y, anp.where(anp.less(y, 0.0), 1.0, 0.0)), positive(scale))


def logsf(x, loc=0.0, scale=1.0):
    return log_or_minus_inf(sf(x, loc, scale))


def ppf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("uniform.ppf", q, loc, scale)
    ok = anp.logical_and(anp.greater_equal(q, 0.0), anp.less_equal(q, 1.0))
    return valid(loc + scale * q, anp.logical_and(positive(scale), ok))
