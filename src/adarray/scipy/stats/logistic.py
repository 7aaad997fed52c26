"""The logistic distribution, as scipy.stats.logistic: cdf expit(y), y = (x - loc) / scale.

    >>> float(cdf(0.0))
    0.5
"""
from __future__ import annotations

from ... import numpy as anp
from .. import special
from ._common import floats, positive, valid


def _standard(name, x, loc, scale):
    x, loc, scale = floats(name, x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0.0, scale=1.0):
    """-y - 2 softplus(-y) - log(scale): smooth at 0 and free of overflow in both tails."""
    y, scale = _standard("logistic.logpdf", x, loc, scale)
    return valid(-y - 2.0 * anp.softplus(-y) - anp.log(scale), positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    y, scale = _standard("logistic.cdf", x, loc, scale)
    return valid(special.expit(y), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    y, scale = _standard("logistic.logcdf", x, loc, scale)
    return valid(-anp.softplus(-y), positive(scale))


def sf(x, loc=0.0, scale=1.0):
    y, scale = _standard("logistic.sf", x, loc, scale)
    return valid(special.expit(-y), positive(scale))


def logsf(x, loc=0.0, scale=1.0):
    y, scale = _standard("logistic.logsf", x, loc, scale)
    return valid(-anp.softplus(y), positive(scale))


def ppf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("logistic.ppf", q, loc, scale)
    return valid(loc + scale * special.logit(q), positive(scale))


def isf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("logistic.isf", q, loc, scale)
    return valid(loc - scale * special.logit(q), positive(scale))
