"""Student's t distribution with df degrees of freedom, as scipy.stats.t.

cdf(y) = 1/2 + sign(y)/2 I_w(1/2, df/2), w = y^2 / (df + y^2), for y^2 < df, and
I_z(df/2, 1/2) / 2 (or 1 minus it), z = df / (df + y^2), in the tails: each form where its argument
is computed without cancellation. At y == 0 the cdf is 1/2 + pdf(0) y to first order (the
incomplete beta in w has an infinite derivative there, times a zero one).

    >>> float(cdf(0.0, 3.0))
    0.5
"""
from __future__ import annotations

from ... import numpy as anp
from .. import special
from ._common import LOG_PI, floats, inside, log_probability, positive, valid

TINY = 1e-50  # below this |y|, cdf = 1/2 + pdf(0) y exactly in float64


def _standard(name, x, df, loc, scale):
    x, df, loc, scale = floats(name, x, df, loc, scale)
    return (x - loc) / scale, df, scale


def _logpdf(y, df):
    return (special.gammaln(0.5 * (df + 1.0)) - special.gammaln(0.5 * df) - 0.5 * (anp.log(df) + LOG_PI)
            - 0.5 * (df + 1.0) * anp.log1p(y * y / df))


def logpdf(x, df, loc=0.0, scale=1.0):
    y, df, scale = _standard("t.logpdf", x, df, loc, scale)
    return valid(_logpdf(y, df) - anp.log(scale), positive(df, scale))


def pdf(x, df, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, df, loc, scale))


def _cdf(y, df):
    at_zero = anp.less(anp.abs(y), TINY)
    safe = inside(at_zero, 1.0, y)
    square = safe * safe
    central = 0.5 + 0.5 * anp.sign(safe) * special.betainc(0.5, 0.5 * df, square / (df + square))
    tail = 0.5 * special.betainc(0.5 * df, 0.5, df / (df + square))
    tails = anp.where(anp.less(safe, 0.0), tail, 1.0 - tail)
    first_order = 0.5 + anp.exp(_logpdf(y, df)) * (y - anp.stop_gradient(y))
    return anp.where(at_zero, first_order, anp.where(anp.less(square, df), central, tails))


def cdf(x, df, loc=0.0, scale=1.0):
    y, df, scale = _standard("t.cdf", x, df, loc, scale)
    return valid(_cdf(y, df), positive(df, scale))


def logcdf(x, df, loc=0.0, scale=1.0):
    return log_probability(cdf(x, df, loc, scale), sf(x, df, loc, scale))


def sf(x, df, loc=0.0, scale=1.0):
    y, df, scale = _standard("t.sf", x, df, loc, scale)
    return valid(_cdf(-y, df), positive(df, scale))


def logsf(x, df, loc=0.0, scale=1.0):
    return log_probability(sf(x, df, loc, scale), cdf(x, df, loc, scale))
