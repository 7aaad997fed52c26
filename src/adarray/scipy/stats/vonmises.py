"""The von Mises distribution, as scipy.stats.vonmises: pdf exp(kappa cos y) / (2 pi I0(kappa) scale) for
y = (x - loc) / scale (any real y: the density is periodic), kappa > 0. logpdf and pdf only (as JAX).

    >>> round(float(pdf(0.0, 1.0)), 12)
    0.342667457997
"""
from __future__ import annotations

import math

from ... import numpy as anp
from .. import special
from ._common import floats, positive, valid

LOG_2PI = math.log(2.0 * math.pi)


def logpdf(x, kappa, loc=0.0, scale=1.0):
    """kappa (cos y - 1) - log(2 pi i0e(kappa)) - log(scale): no overflow of I0 at large kappa."""
    x, kappa, loc, scale = floats("vonmises.logpdf", x, kappa, loc, scale)
    y = (x - loc) / scale
    value = kappa * (anp.cos(y) - 1.0) - LOG_2PI - anp.log(special.i0e(kappa)) - anp.log(scale)
    return valid(value, positive(kappa, scale))


def pdf(x, kappa, loc=0.0, scale=1.0):
    return anp.exp(logpdf(x, kappa, loc, scale))
