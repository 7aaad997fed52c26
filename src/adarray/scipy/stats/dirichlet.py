"""The Dirichlet distribution, as scipy.stats.dirichlet.

`x` holds the components along its first axis, shape (K, ...) or (K - 1, ...) (the last component
is then 1 - sum); `alpha` has shape (K,). Points off the simplex (a negative component, or
components summing to other than 1 within 1e-9) get logpdf -inf (SciPy raises instead, JAX returns
-inf); alpha <= 0 gives NaN.

    >>> round(float(pdf(np.array([0.2, 0.3, 0.5]), np.array([1.0, 1.0, 1.0]))), 12)
    2.0
"""
from __future__ import annotations

import numpy as np

from ... import numpy as anp
from ...core.errors import ShapeError
from .. import special
from ._common import floats, inside, positive, valid

SIMPLEX_TOLERANCE = 1e-9


def logpdf(x, alpha):
    x, alpha = anp.asarray(x), anp.asarray(alpha)
    if alpha.ndim != 1:
        raise ShapeError(f"dirichlet.logpdf: alpha must be one-dimensional, got shape {tuple(alpha.shape)}")
    components = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (components, components - 1):
        raise ShapeError(f"dirichlet.logpdf: x of shape {tuple(x.shape)} needs {components} or {components - 1} "
                         f"components along its first axis for alpha of shape {tuple(alpha.shape)}")
    if x.shape[0] == components - 1:
        x = anp.concatenate([x, 1.0 - anp.sum(x, axis=0, keepdims=True)], axis=0)
    alpha = anp.reshape(alpha, (components,) + (1,) * (x.ndim - 1))
    x, alpha = floats("dirichlet.logpdf", x, alpha)
    on_simplex = anp.logical_and(anp.all(anp.greater_equal(x, 0.0), axis=0),
                                 anp.less_equal(anp.abs(anp.sum(x, axis=0) - 1.0), SIMPLEX_TOLERANCE))
    safe = inside(on_simplex, x, 1.0 / components)
    log_normalizer = anp.sum(special.gammaln(alpha), axis=0) - special.gammaln(anp.sum(alpha, axis=0))
    value = anp.sum(special.xlogy(alpha - 1.0, safe), axis=0) - log_normalizer
    return valid(anp.where(on_simplex, value, -np.inf), anp.all(positive(alpha), axis=0))


def pdf(x, alpha):
    return anp.exp(logpdf(x, alpha))
