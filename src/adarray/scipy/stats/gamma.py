"""The gamma distribution, as scipy.stats.gamma: pdf y^(a-1) e^(-y) / (Gamma(a) scale), y >= 0.

Differentiable in x, a, loc and scale; the derivative of cdf/sf in the shape `a` comes from the
`gammainc_da` primitive (series and continued fractions).

    >>> round(float(cdf(2.0, 3.0)), 12)
    0.323323583817
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from .. import special
from ._common import floats, inside, log_probability, positive, valid


def _standard(name, x, a, loc, scale):
    x, a, loc, scale = floats(name, x, a, loc, scale)
    y = (x - loc) / scale
    support = anp.greater_equal(y, 0.0)
    return inside(support, y, 1.0), support, a, scale


def _logpdf(y, a):
    return special.xlogy(a - 1.0, y) - y - special.gammaln(a)


def logpdf(x, a, loc=0.0, scale=1.0):
    y, support, a, scale = _standard("gamma.logpdf", x, a, loc, scale)
    return valid(anp.where(support, _logpdf(y, a) - anp.log(scale), -np.inf), positive(a, scale))


def pdf(x, a, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0.0, scale=1.0):
    y, support, a, scale = _standard("gamma.cdf", x, a, loc, scale)
    return valid(anp.where(support, special.gammainc(a, y), 0.0), positive(a, scale))


def logcdf(x, a, loc=0.0, scale=1.0):
    return log_probability(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def sf(x, a, loc=0.0, scale=1.0):
    y, support, a, scale = _standard("gamma.sf", x, a, loc, scale)
    return valid(anp.where(support, special.gammaincc(a, y), 1.0), positive(a, scale))


def logsf(x, a, loc=0.0, scale=1.0):
    return log_probability(sf(x, a, loc, scale), cdf(x, a, loc, scale))
