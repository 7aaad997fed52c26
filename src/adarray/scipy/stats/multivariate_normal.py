"""The multivariate normal distribution, as scipy.stats.multivariate_normal (logpdf and pdf).

`x` has the components along its last axis (for a one-dimensional distribution a 1-D `x` holds
points, as in SciPy); `mean` has shape (d,) and `cov` is a scalar (cov * I), a vector (a diagonal) or
a (d, d) matrix; leading axes of `mean` and `cov` broadcast against those of `x` (as in JAX). The
result has shape x.shape[:-1] (SciPy also squeezes axes of length 1 away).

    >>> round(float(logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 12)
    -1.837877066409
"""
from __future__ import annotations

from ... import numpy as anp
from ...core.errors import ArgumentError, ShapeError
from ...numpy._core import float_dtype
from ._common import HALF_LOG_2PI


def _cholesky_solve_logdet(cov, diff):
    """(|L^-1 diff|^2, log det cov) for cov = L L^T (Cholesky), by columns, with existing operations.

    O(d) traced steps of O(d^2) work each. An internal interface: once adarray.numpy.linalg has a
    Cholesky primitive and a triangular solve, this becomes two calls to them.
    """
    d = cov.shape[-1]
    columns = []  # the columns of L, each of shape (..., d), zero above the diagonal
    for j in range(d):
        residual = cov[..., :, j]
        if columns:
            lower = anp.stack(columns, axis=-1)                      # (..., d, j)
            residual = residual - anp.sum(lower * lower[..., j:j + 1, :], axis=-1)
        pivot = anp.sqrt(residual[..., j:j + 1])
        below = anp.asarray([0.0] * j + [1.0] * (d - j))  # rows above j are zero in exact arithmetic
        columns.append(residual / pivot * below)
    factor = anp.stack(columns, axis=-1)
    solution = []  # forward substitution L z = diff
    for i in range(d):
        value = diff[..., i]
        if solution:
            value = value - anp.sum(factor[..., i, :i] * anp.stack(solution, axis=-1), axis=-1)
        solution.append(value / factor[..., i, i])
    z = anp.stack(solution, axis=-1)
    diagonal = anp.stack([factor[..., i, i] for i in range(d)], axis=-1)
    return anp.sum(z * z, axis=-1), 2.0 * anp.sum(anp.log(diagonal), axis=-1)


def _dimension(mean, cov):
    if mean is not None and mean.ndim >= 1:
        return mean.shape[-1]
    if cov.ndim >= 2:
        return cov.shape[-1]
    return cov.shape[-1] if cov.ndim == 1 else 1


def logpdf(x, mean=None, cov=1, allow_singular=False):
    """log N(x; mean, cov), by a Cholesky factorization of cov."""
    if allow_singular:
        raise ArgumentError("multivariate_normal.logpdf: allow_singular=True is not supported")
    x, cov = anp.asarray(x), anp.asarray(cov)
    mean = None if mean is None else anp.asarray(mean)
    dtype = float_dtype(*(v for v in (x, mean, cov) if v is not None))
    x, cov = anp.asarray(x, dtype), anp.asarray(cov, dtype)
    mean = anp.zeros((), dtype) if mean is None else anp.asarray(mean, dtype)
    d = _dimension(mean, cov)
    if x.ndim == 0 or (d == 1 and x.ndim == 1):  # a 1-D x holds points of a 1-D distribution
        x = anp.expand_dims(x, -1)
    if x.shape[-1] != d or (mean.ndim and mean.shape[-1] != d) or (cov.ndim == 1 and cov.shape[-1] != d) or (
            cov.ndim >= 2 and cov.shape[-2:] != (d, d)):
        raise ShapeError(f"multivariate_normal.logpdf: x {tuple(x.shape)}, mean {tuple(mean.shape)} and cov "
                         f"{tuple(cov.shape)} do not describe points of one dimension d = {d}")
    diff = x - mean
    if cov.ndim == 0:
        quadratic, log_det = anp.sum(diff * diff, axis=-1) / cov, d * anp.log(cov)
    elif cov.ndim == 1:
        quadratic, log_det = anp.sum(diff * diff / cov, axis=-1), anp.sum(anp.log(cov), axis=-1)
    else:
        quadratic, log_det = _cholesky_solve_logdet(cov, diff)
    return -0.5 * (quadratic + log_det) - d * HALF_LOG_2PI


def pdf(x, mean=None, cov=1, allow_singular=False):
    return anp.exp(logpdf(x, mean, cov, allow_singular))
