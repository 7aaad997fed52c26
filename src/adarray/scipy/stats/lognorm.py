"""The log-normal distribution, as scipy.stats.lognorm: log(y) ~ N(0, s^2) for y = (x - loc) / scale > 0.

    >>> round(float(cdf(1.0, 0.5)), 12)
    0.5
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from .. import special
from ._common import HALF_LOG_2PI, floats, inside, positive, valid


def _standard(name, x, s, loc, scale):
    x, s, loc, scale = floats(name, x, s, loc, scale)
    y = (x - loc) / scale
    support = anp.greater(y, 0.0)
    return anp.log(inside(support, y, 1.0)) / s, support, s, scale


def logpdf(x, s, loc=0.0, scale=1.0):
    z, support, s, scale = _standard("lognorm.logpdf", x, s, loc, scale)
    log_y = z * s
    value = -0.5 * (z * z) - log_y - anp.log(s) - HALF_LOG_2PI - anp.log(scale)
    return valid(anp.where(support, value, -np.inf), positive(s, scale))


def pdf(x, s, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, s, loc, scale))


def cdf(x, s, loc=0.0, scale=1.0):
    z, support, s, scale = _standard("lognorm.cdf", x, s, loc, scale)
    return valid(anp.where(support, special.ndtr(z), 0.0), positive(s, scale))


def logcdf(x, s, loc=0.0, scale=1.0):
    z, support, s, scale = _standard("lognorm.logcdf", x, s, loc, scale)
    return valid(anp.where(support, special.log_ndtr(z), -np.inf), positive(s, scale))


def sf(x, s, loc=0.0, scale=1.0):
    z, support, s, scale = _standard("lognorm.sf", x, s, loc, scale)
    return valid(anp.where(support, special.ndtr(-z), 1.0), positive(s, scale))


def logsf(x, s, loc=0.0, scale=1.0):
    z, support, s, scale = _standard("lognorm.logsf", x, s, loc, scale)
    return valid(anp.where(support, special.log_ndtr(-z), 0.0), positive(s, scale))


def ppf(q, s, loc=0.0, scale=1.0):
    q, s, loc, scale = floats("lognorm.ppf", q, s, loc, scale)
    return valid(loc + scale * anp.exp(s * special.ndtri(q)), positive(s, scale))


def isf(q, s, loc=0.0, scale=1.0):
    q, s, loc, scale = floats("lognorm.isf", q, s, loc, scale)
    return valid(loc + scale * anp.exp(-s * special.ndtri(q)), positive(s, scale))
