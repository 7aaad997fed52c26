"""The geometric distribution on k = 1, 2, ..., as scipy.stats.geom: pmf (1 - p)^(k-1) p.

    >>> float(pmf(2, 0.5))
    0.25
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from .. import special
from ._common import floats, inside, is_integer, log_probability, valid


def _valid(p):
    return anp.logical_and(anp.greater(p, 0.0), anp.less_equal(p, 1.0))


def logpmf(k, p, loc=0.0):
    k, p, loc = floats("geom.logpmf", k, p, loc)
    k = k - loc
    support = anp.logical_and(anp.greater_equal(k, 1.0), is_integer(k))
    safe = inside(support, k, 1.0)
    value = special.xlog1py(safe - 1.0, -p) + anp.log(p)
    return valid(anp.where(support, value, -np.inf), _valid(p))


def pmf(k, p, loc=0.0):
    return anp.exp(logpmf(k, p, loc))


def _log_survival(name, k, p, loc):
    """log P(K > k) = floor(k) log(1 - p) for k >= 1, 0 below."""
    k, p, loc = floats(name, k, p, loc)
    k = anp.floor(k - loc)
    support = anp.greater_equal(k, 1.0)
    return anp.where(support, special.xlog1py(inside(support, k, 1.0), -p), 0.0), p


def cdf(k, p, loc=0.0):
    log_survival, p = _log_survival("geom.cdf", k, p, loc)
    return valid(-anp.expm1(log_survival), _valid(p))


def logcdf(k, p, loc=0.0):
    return log_probability(cdf(k, p, loc), sf(k, p, loc))


def sf(k, p, loc=0.0):
    log_survival, p = _log_survival("geom.sf", k, p, loc)
    return valid(anp.exp(log_survival), _valid(p))


def logsf(k, p, loc=0.0):
    log_survival, p = _log_survival("geom.logsf", k, p, loc)
    return valid(log_survival, _valid(p))
