"""The binomial distribution, as scipy.stats.binom: pmf C(n, k) p^k (1-p)^(n-k), k = 0 .. n.

logpmf = -log(n + 1) - betaln(n - k + 1, k + 1) + k log p + (n - k) log(1 - p); cdf(k) =
I_(1-p)(n - k, k + 1) and sf(k) = I_p(k + 1, n - k), differentiable in p (and, as their continuous
extension, in n).

    >>> round(float(pmf(1, 4, 0.5)), 12)
    0.25
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from .. import special
from ._common import floats, inside, is_integer, log_probability, valid


def _valid(n, p):
    ok_p = anp.logical_and(anp.greater_equal(p, 0.0), anp.less_equal(p, 1.0))
    return anp.logical_and(ok_p, anp.logical_and(anp.greater_equal(n, 0.0), is_integer(n)))


def logpmf(k, n, p, loc=0.0):
    k, n, p, loc = floats("binom.logpmf", k, n, p, loc)
    k = k - loc
    support = anp.logical_and(anp.logical_and(anp.greater_equal(k, 0.0), anp.less_equal(k, n)), is_integer(k))
    safe = inside(support, k, 0.0)
    rest = inside(support, n - k, 0.0)
    value = (-anp.log1p(n) - special.betaln(rest + 1.0, safe + 1.0)
             + special.xlogy(safe, p) + special.xlog1py(rest, -p))
    return valid(anp.where(support, value, -np.inf), _valid(n, p))


def pmf(k, n, p, loc=0.0):
    return anp.exp(logpmf(k, n, p, loc))


def _counts(name, k, n, p, loc):
    k, n, p, loc = floats(name, k, n, p, loc)
    k = anp.floor(k - loc)
    between = anp.logical_and(anp.greater_equal(k, 0.0), anp.less(k, n))
    return inside(between, k, 0.0), inside(between, n, 1.0), between, k, n, p


def cdf(k, n, p, loc=0.0):
    safe_k, safe_n, between, k, n, p = _counts("binom.cdf", k, n, p, loc)
    value = special.betainc(safe_n - safe_k, safe_k + 1.0, 1.0 - p)
    return valid(anp.where(between, value, anp.where(anp.less(k, 0.0), 0.0, 1.0)), _valid(n, p))


def logcdf(k, n, p, loc=0.0):
    return log_probability(cdf(k, n, p, loc), sf(k, n, p, loc))


def sf(k, n, p, loc=0.0):
    safe_k, safe_n, between, k, n, p = _counts("binom.sf", k, n, p, loc)
    value = special.betainc(safe_k + 1.0, safe_n - safe_k, p)
    return valid(anp.where(between, value, anp.where(anp.less(k, 0.0), 1.0, 0.0)), _valid(n, p))


def logsf(k, n, p, loc=0.0):
    return log_probability(sf(k, n, p, loc), cdf(k, n, p, loc))
