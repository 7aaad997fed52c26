"""The Cauchy distribution, as scipy.stats.cauchy: pdf 1 / (pi scale (1 + y^2)).

    >>> float(cdf(1.0))
    0.75
"""
from __future__ import annotations

import math

from ... import numpy as anp
from ._common import LOG_PI, floats, log_probability, positive, valid


def _standard(name, x, loc, scale):
    x, loc, scale = floats(name, x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0.0, scale=1.0):
    y, scale = _standard("cauchy.logpdf", x, loc, scale)
    return valid(-LOG_PI - anp.log(scale) - anp.log1p(y * y), positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, loc, scale))


def _cdf(y):
    # arctan2(1, -y) / pi == 1/2 + arctan(y) / pi, without cancellation in the lower tail
    return anp.arctan2(1.0, -y) / math.pi


def cdf(x, loc=0.0, scale=1.0):
    y, scale = _standard("cauchy.cdf", x, loc, scale)
    return valid(_cdf(y), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    y, scale = _standard("cauchy.logcdf", x, loc, scale)
    return valid(log_probability(_cdf(y), _cdf(-y)), positive(scale))


def sf(x, loc=0.0, scale=1.0):
    y, scale = _standard("cauchy.sf", x, loc, scale)
    return valid(_cdf(-y), positive(scale))


def logsf(x, loc=0.0, scale=1.0):
    y, scale = _standard("cauchy.logsf", x, loc, scale)
    return valid(log_probability(_cdf(-y), _cdf(y)), positive(scale))


def _quantile(q):
    """tan(pi (q - 1/2)) as -1 / tan(pi q) or 1 / tan(pi (1 - q)): the argument near the pole stays exact."""
    lower = anp.less(q, 0.5)
    small = anp.where(lower, q, 1.0 - q)
    return anp.where(lower, -1.0, 1.0) / anp.tan(math.pi * small)


def ppf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("cauchy.ppf", q, loc, scale)
    return valid(loc + scale * _quantile(q), positive(scale))


def isf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("cauchy.isf", q, loc, scale)
    return valid(loc - scale * _quantile(q), positive(scale))
