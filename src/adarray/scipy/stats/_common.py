"""Shared pieces of the distributions: promotion, parameter checks and support masks.

SciPy's conventions: invalid parameters (scale <= 0, a shape parameter out of range) give NaN; a
point outside the support gives logpdf -inf, pdf 0, and cdf 0 or 1. Formulas are evaluated at a
safe point outside the support (`inside`), so that the untaken branch of a `where` never produces
a NaN that would reach a gradient.
"""
from __future__ import annotations

import math

import numpy as np

from ... import numpy as anp
from ...numpy._core import float_dtype, prepare

HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)


def floats(name, *values):
    """Broadcast to one shape and promote to one floating dtype (integers compute in float64)."""
    return prepare(name, *values, dtype=float_dtype(*values))


def valid(value, condition):
    """`value` where the parameters are valid, NaN elsewhere."""
    return anp.where(condition, value, np.nan)


def inside(condition, value, fill):
    """`value` where `condition` holds, a harmless `fill` elsewhere (a safe operand for formulas)."""
    return anp.where(condition, value, fill)


def positive(*values):
    condition = anp.greater(values[0], 0.0)
    for value in values[1:]:
        condition = anp.logical_and(condition, anp.greater(value, 0.0))
    return condition


def is_integer(k):
    return anp.equal(k, anp.floor(k))


def log_probability(probability, complement):
    """log(probability), from the complement (log1p(-complement)) where the probability is close to 1,
    so that logcdf keeps its relative precision in the upper tail (and logsf in the lower one)."""
    small = anp.less(probability, 0.5)
    return anp.where(small, log_or_minus_inf(anp.where(small, probability, 0.5)),
                     anp.log1p(-anp.where(small, 0.5, complement)))


def log_or_minus_inf(probability):
    """log(probability), -inf at 0 without a division-by-zero warning in eager evaluation."""
    zero = anp.equal(probability, 0.0)
    return anp.where(zero, -np.inf, anp.log(anp.where(zero, 1.0, probability)))
