"""The normal distribution N(loc, scale^2), as scipy.stats.norm.

    >>> float(logpdf(0.0))
    -0.9189385332046727
"""
from __future__ import annotations

from ... import numpy as anp
from .. import special
from ._common import HALF_LOG_2PI, floats, positive, valid


def _standard(name, x, loc, scale):
    x, loc, scale = floats(name, x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0.0, scale=1.0):
    y, scale = _standard("norm.logpdf", x, loc, scale)
    return valid(-0.5 * (y * y) - anp.log(scale) - HALF_LOG_2PI, positive(scale))


def pdf(x, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    y, scale = _standard("norm.cdf", x, loc, scale)
    return valid(special.ndtr(y), positive(scale))


def logcdf(x, loc=0.0, scale=1.0):
    """log Phi((x - loc) / scale), accurate far into the lower tail."""
    y, scale = _standard("norm.logcdf", x, loc, scale)
    return valid(special.log_ndtr(y), positive(scale))


def sf(x, loc=0.0, scale=1.0):
    y, scale = _standard("norm.sf", x, loc, scale)
    return valid(special.ndtr(-y), positive(scale))


def logsf(x, loc=0.0, scale=1.0):
    y, scale = _standard("norm.logsf", x, loc, scale)
    return valid(special.log_ndtr(-y), positive(scale))


def ppf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("norm.ppf", q, loc, scale)
    return valid(loc + scale * special.ndtri(q), positive(scale))


def isf(q, loc=0.0, scale=1.0):
    q, loc, scale = floats("norm.isf", q, loc, scale)
    return valid(loc - scale * special.ndtri(q), positive(scale))
