"""The multivariate normal distribution, as scipy.stats.multivariate_normal (logpdf, pdf and entropy).

`x` has the components along its last axis (for a one-dimensional distribution a 1-D `x` holds
points, as in SciPy); `mean` has shape (d,) and `cov` is a scalar (cov * I), a vector (a diagonal) or
a (d, d) matrix; leading axes of `mean` and `cov` broadcast against those of `x` (as in JAX). The
result has shape x.shape[:-1] (SciPy also squeezes axes of length 1 away).

A covariance matrix is factored by Cholesky (one `cholesky` and one `solve_triangular`, whatever d) of
its symmetric part (cov + cov^T) / 2, as anp.linalg.cholesky and JAX read it (SciPy reads the lower
triangle: the same matrix for a symmetric cov), so its gradient is symmetric; a matrix that is not
positive definite raises LinAlgError.
With allow_singular=True the covariance may be positive semidefinite, as in SciPy: eigenvalues at or
below SciPy's cutoff (1e6 eps times the largest, 1e3 eps in float32) count as zero, the density is
taken on the subspace the others span (the pseudo-inverse and pseudo-determinant, `rank` instead of d
in the constant), points off that subspace have logpdf -inf, and a matrix with an eigenvalue below
minus the cutoff gives NaN (SciPy raises ValueError). Its derivatives are exact while the rank does
not change (the pseudo-inverse's rule; the pseudo-determinant's gradient is the pseudo-inverse).
`entropy(mean, cov)` reads the covariance the same way (it allows a singular one, as SciPy's).

    >>> round(float(logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 12)
    -1.837877066409
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from ...core.errors import ShapeError
from ...numpy._core import float_dtype
from ..linalg import solve_triangular
from ._common import HALF_LOG_2PI

LOG_2PI = 2.0 * HALF_LOG_2PI


def _dimension(mean, cov):
    if mean is not None and mean.ndim >= 1:
        return mean.shape[-1]
    if cov.ndim >= 2:
        return cov.shape[-1]
    return cov.shape[-1] if cov.ndim == 1 else 1


def _parameters(name, mean, cov, *others):
    """(mean, cov, others..., d): one floating dtype, the mean 0 when None."""
    cov = anp.asarray(cov)
    mean = None if mean is None else anp.asarray(mean)
    others = [anp.asarray(v) for v in others]
    dtype = float_dtype(*(v for v in (mean, cov, *others) if v is not None))
    cov = anp.asarray(cov, dtype)
    others = [anp.asarray(v, dtype) for v in others]
    mean = anp.zeros((), dtype) if mean is None else anp.asarray(mean, dtype)
    d = _dimension(mean, cov)
    if (mean.ndim and mean.shape[-1] != d) or (cov.ndim == 1 and cov.shape[-1] != d) or (
            cov.ndim >= 2 and cov.shape[-2:] != (d, d)):
        raise ShapeError(f"multivariate_normal.{name}: mean {tuple(mean.shape)} and cov {tuple(cov.shape)} do not "
                         f"describe a distribution of one dimension d = {d}")
    return (mean, cov, *others, d)


def _cutoff(spectrum):
    """SciPy's threshold below which an eigenvalue counts as zero (scipy.stats._multivariate._eigvalsh_to_eps)."""
    factor = 1e3 if spectrum.dtype == np.float32 else 1e6
    largest = anp.max(anp.abs(spectrum), axis=-1, keepdims=True) if spectrum.ndim else anp.abs(spectrum)
    return anp.stop_gradient(factor * np.finfo(spectrum.dtype).eps * largest)


def _spectrum(cov, d):
    """The eigenvalues of the covariance as an array (..., d) (scalar and diagonal covariances too)."""
    if cov.ndim == 0:
        return anp.broadcast_to(cov, (d,))
    if cov.ndim == 1:
        return cov
    return anp.linalg.eigvalsh(cov)


def _pseudo_log_det(spectrum):
    """(sum of the logs of the kept eigenvalues, their number, whether any is negative beyond the cutoff)."""
    cutoff = _cutoff(spectrum)
    kept = anp.greater(spectrum, cutoff)
    log_pdet = anp.sum(anp.where(kept, anp.log(anp.where(kept, spectrum, 1.0)), 0.0), axis=-1)
    rank = anp.sum(kept, axis=-1).astype(spectrum.dtype)
    indefinite = anp.any(anp.less(spectrum, -cutoff), axis=-1)
    return log_pdet, rank, indefinite


def _cholesky_quadratic(cov, diff):
    """(|L^-1 diff|^2, log det cov) with cov = L L^T (Cholesky of the lower triangle)."""
    factor = anp.linalg.cholesky(cov)
    d = cov.shape[-1]
    if cov.ndim == 2:  # one factor: every point is a column of one triangular solve
        columns = anp.reshape(diff, (-1, d)).T
        whitened = solve_triangular(factor, columns, lower=True)
        quadratic = anp.reshape(anp.sum(whitened * whitened, axis=0), diff.shape[:-1])
    else:  # a stack of factors, whose leading axes broadcast against the points'
        batch = np.broadcast_shapes(diff.shape[:-1], cov.shape[:-2])
        columns = anp.broadcast_to(diff, batch + (d,))[..., None]
        whitened = solve_triangular(anp.broadcast_to(factor, batch + (d, d)), columns, lower=True)
        quadratic = anp.sum(whitened[..., 0] ** 2, axis=-1)
    log_det = 2.0 * anp.sum(anp.log(anp.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)
    return quadratic, log_det


def _singular_logpdf(cov, diff, d):
    """logpdf with a positive semidefinite covariance, SciPy's allow_singular=True."""
    if cov.ndim < 2:
        spectrum = _spectrum(cov, d)
        log_pdet, rank, indefinite = _pseudo_log_det(spectrum)
        kept = anp.greater(spectrum, _cutoff(spectrum))
        inverse = anp.where(kept, 1.0 / anp.where(kept, spectrum, 1.0), 0.0)
        quadratic = anp.sum(diff * diff * inverse, axis=-1)
        off_support = anp.sum(anp.where(kept, 0.0, diff * diff), axis=-1)
        tolerance = 1e3 * anp.max(_cutoff(spectrum), axis=-1)
    else:
        values, vectors = anp.linalg.eigh(cov)
        log_pdet, rank, indefinite = _pseudo_log_det(values)
        cutoff = _cutoff(values)
        rcond = (1e3 if values.dtype == np.float32 else 1e6) * np.finfo(values.dtype).eps  # _cutoff's, relative
        # The pseudo-inverse's own rule: exact while the rank holds, also with repeated (zero) eigenvalues,
        # where the eigenvectors have no derivative.
        inverse = anp.linalg.pinv(_symmetric_part(cov), rcond=rcond)
        quadratic = anp.sum(diff * anp.squeeze(anp.matmul(inverse, diff[..., None]), -1), axis=-1)
        components = anp.squeeze(anp.matmul(anp.swapaxes(anp.stop_gradient(vectors), -1, -2), diff[..., None]), -1)
        off_support = anp.sum(anp.where(anp.greater(values, cutoff), 0.0, components * components), axis=-1)
        tolerance = 1e3 * cutoff[..., 0]
    value = -0.5 * (rank * LOG_2PI + log_pdet + quadratic)
    value = anp.where(anp.less(off_support, tolerance * tolerance), value, -np.inf)
    return anp.where(indefinite, np.nan, value)


def _symmetric_part(cov):
    """(cov + cov^T) / 2, the matrix anp.linalg.cholesky and eigh read."""
    return (cov + anp.swapaxes(cov, -1, -2)) * 0.5


def logpdf(x, mean=None, cov=1, allow_singular=False):
    """log N(x; mean, cov): by a Cholesky factorization of cov, or its eigenvalues and pseudo-inverse with
    allow_singular=True (see the module docstring)."""
    mean, cov, x, d = _parameters("logpdf", mean, cov, x)
    if x.ndim == 0 or (d == 1 and x.ndim == 1):  # a 1-D x holds points of a 1-D distribution
        x = anp.expand_dims(x, -1)
    if x.shape[-1] != d:
        raise ShapeError(f"multivariate_normal.logpdf: x {tuple(x.shape)}, mean {tuple(mean.shape)} and cov "
                         f"{tuple(cov.shape)} do not describe points of one dimension d = {d}")
    diff = x - mean
    if allow_singular:
        return _singular_logpdf(cov, diff, d)
    if cov.ndim == 0:
        quadratic, log_det = anp.sum(diff * diff, axis=-1) / cov, d * anp.log(cov)
    elif cov.ndim == 1:
        quadratic, log_det = anp.sum(diff * diff / cov, axis=-1), anp.sum(anp.log(cov), axis=-1)
    else:
        quadratic, log_det = _cholesky_quadratic(cov, diff)
    return -0.5 * (quadratic + log_det) - d * HALF_LOG_2PI


def pdf(x, mean=None, cov=1, allow_singular=False):
    return anp.exp(logpdf(x, mean, cov, allow_singular))


def entropy(mean=None, cov=1):
    """The differential entropy (rank (log 2 pi + 1) + log pdet(cov)) / 2, as SciPy (a singular covariance
    counts its rank; one with an eigenvalue below minus the cutoff gives NaN). Shape cov.shape[:-2] for a
    stack of matrices, () otherwise.

    >>> round(float(entropy(cov=np.eye(2))), 12)
    2.837877066409
    """
    _, cov, d = _parameters("entropy", mean, cov)
    log_pdet, rank, indefinite = _pseudo_log_det(_spectrum(cov, d))
    return anp.where(indefinite, np.nan, 0.5 * (rank * (LOG_2PI + 1.0) + log_pdet))


__all__ = ["entropy", "logpdf", "pdf"]
