"""The beta distribution, as scipy.stats.beta: pdf y^(a-1) (1-y)^(b-1) / (B(a, b) scale), 0 <= y <= 1.

Differentiable in x, a, b, loc and scale (the shape derivatives of cdf/sf come from the
`betainc_dab` primitive). sf uses I_(1-y)(b, a), accurate where the cdf is close to 1.

    >>> float(cdf(0.5, 2.0, 3.0))
    0.6875
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from .. import special
from ._common import floats, inside, log_probability, positive, valid


def _standard(name, x, a, b, loc, scale):
    x, a, b, loc, scale = floats(name, x, a, b, loc, scale)
    y = (x - loc) / scale
    support = anp.logical_and(anp.greater_equal(y, 0.0), anp.less_equal(y, 1.0))
    return y, inside(support, y, 0.5), support, a, b, scale


def logpdf(x, a, b, loc=0.0, scale=1.0):
    y, safe, support, a, b, scale = _standard("beta.logpdf", x, a, b, loc, scale)
    value = special.xlogy(a - 1.0, safe) + special.xlog1py(b - 1.0, -safe) - special.betaln(a, b) - anp.log(scale)
    return valid(anp.where(support, value, -np.inf), positive(a, b, scale))


def pdf(x, a, b, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0.0, scale=1.0):
    y, safe, support, a, b, scale = _standard("beta.cdf", x, a, b, loc, scale)
    outside = anp.where(anp.less(y, 0.0), 0.0, 1.0)
    return valid(anp.where(support, special.betainc(a, b, safe), outside), positive(a, b, scale))


def logcdf(x, a, b, loc=0.0, scale=1.0):
    return log_probability(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


def sf(x, a, b, loc=0.0, scale=1.0):
    y, safe, support, a, b, scale = _standard("beta.sf", x, a, b, loc, scale)
    outside = anp.where(anp.less(y, 0.0), 1.0, 0.0)
    return valid(anp.where(support, special.betainc(b, a, 1.0 - safe), outside), positive(a, b, scale))


def logsf(x, a, b, loc=0.0, scale=1.0):
    return log_probability(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))
