"""The chi-squared distribution with df degrees of freedom, as scipy.stats.chi2 (a gamma with a = df/2,
scale 2).

    >>> round(float(cdf(3.0, 2.0)), 12)
    0.776869839852
"""
from __future__ import annotations

from ... import numpy as anp
from . import gamma


def _gamma_parameters(df, scale):
    return anp.multiply(df, 0.5), anp.multiply(scale, 2.0)


def logpdf(x, df, loc=0.0, scale=1.0):
    a, gamma_scale = _gamma_parameters(df, scale)
    return gamma.logpdf(x, a, loc, gamma_scale)


def pdf(x, df, loc=0.0, scale=1.0):
    a, gamma_scale = _gamma_parameters(df, scale)
    return gamma.pdf(x, a, loc, gamma_scale)


def cdf(x, df, loc=0.0, scale=1.0):
    a, gamma_scale = _gamma_parameters(df, scale)
    return gamma.cdf(x, a, loc, gamma_scale)


def logcdf(x, df, loc=0.0, scale=1.0):
    a, gamma_scale = _gamma_parameters(df, scale)
    return gamma.logcdf(x, a, loc, gamma_scale)


def sf(x, df, loc=0.0, scale=1.0):
    a, gamma_scale = _gamma_parameters(df, scale)
    return gamma.sf(x, a, loc, gamma_scale)


def logsf(x, df, loc=0.0, scale=1.0):
    a, gamma_scale = _gamma_parameters(df, scale)
    return gamma.logsf(x, a, loc, gamma_scale)
