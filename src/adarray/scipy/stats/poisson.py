"""The Poisson distribution with mean mu, as scipy.stats.poisson (k = x - loc).

pmf mu^k e^(-mu) / k! for integers k >= 0 (logpmf -inf at other k); cdf(k) = Q(floor(k) + 1, mu),
differentiable in mu.

    >>> round(float(pmf(2, 3.0)), 12)
    0.224041807655
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from .. import special
from ._common import floats, inside, is_integer, log_probability, valid


def logpmf(k, mu, loc=0.0):
    k, mu, loc = floats("poisson.logpmf", k, mu, loc)
    k = k - loc
    support = anp.logical_and(anp.greater_equal(k, 0.0), is_integer(k))
    safe = inside(support, k, 0.0)
    value = special.xlogy(safe, mu) - special.gammaln(safe + 1.0) - mu
    return valid(anp.where(support, value, -np.inf), anp.greater_equal(mu, 0.0))


def pmf(k, mu, loc=0.0):
    return anp.exp(logpmf(k, mu, loc))


def _counts(name, k, mu, loc):
    k, mu, loc = floats(name, k, mu, loc)
    k = anp.floor(k - loc)
    support = anp.greater_equal(k, 0.0)
    return inside(support, k, 0.0), support, mu


def cdf(k, mu, loc=0.0):
    k, support, mu = _counts("poisson.cdf", k, mu, loc)
    return valid(anp.where(support, special.gammaincc(k + 1.0, mu), 0.0), anp.greater_equal(mu, 0.0))


def logcdf(k, mu, loc=0.0):
    return log_probability(cdf(k, mu, loc), sf(k, mu, loc))


def sf(k, mu, loc=0.0):
    k, support, mu = _counts("poisson.sf", k, mu, loc)
    return valid(anp.where(support, special.gammainc(k + 1.0, mu), 1.0), anp.greater_equal(mu, 0.0))


def logsf(k, mu, loc=0.0):
    return log_probability(sf(k, mu, loc), cdf(k, mu, loc))
