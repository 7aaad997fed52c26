"""The Bernoulli distribution, as scipy.stats.bernoulli: pmf p at k = 1, 1 - p at k = 0.

    >>> float(pmf(1, 0.3))
    0.3
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from .. import special
from ._common import floats, log_or_minus_inf, valid


def _valid_p(p):
    return anp.logical_and(anp.greater_equal(p, 0.0), anp.less_equal(p, 1.0))


def logpmf(k, p, loc=0.0):
    k, p, loc = floats("bernoulli.logpmf", k, p, loc)
    k = k - loc
    support = anp.logical_or(anp.equal(k, 0.0), anp.equal(k, 1.0))
    safe = anp.where(support, k, 0.0)
    value = special.xlogy(safe, p) + special.xlog1py(1.0 - safe, -p)
    return valid(anp.where(support, value, -np.inf), _valid_p(p))


def pmf(k, p, loc=0.0):
    return anp.exp(logpmf(k, p, loc))


def cdf(k, p, loc=0.0):
    k, p, loc = floats("bernoulli.cdf", k, p, loc)
    k = k - loc
    value = anp.where(anp.less(k, 0.0), 0.0, anp.where(anp.less(k, 1.0), 1.0 - p, 1.0))
    return valid(value, _valid_p(p))


def logcdf(k, p, loc=0.0):
    return log_or_minus_inf(cdf(k, p, loc))


def sf(k, p, loc=0.0):
    k, p, loc = floats("bernoulli.sf", k, p, loc)
    k = k - loc
    value = anp.where(anp.less(k, 0.0), 1.0, anp.where(anp.less(k, 1.0), p, 0.0))
    return valid(value, _valid_p(p))


def logsf(k, p, loc=0.0):
    return log_or_minus_inf(sf(k, p, loc))


def ppf(q, p, loc=0.0):
    q, p, loc = floats("bernoulli.ppf", q, p, loc)
    ok = anp.logical_and(_valid_p(p), anp.logical_and(anp.greater_equal(q, 0.0), anp.less_equal(q, 1.0)))
    value = anp.where(anp.greater(q, 1.0 - p), 1.0, 0.0)
    return valid(anp.where(anp.equal(q, 0.0), -1.0, value) + loc, ok)
