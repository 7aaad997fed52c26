"""adarray.scipy.stats: scipy.stats look-alikes whose functions are differentiable in every argument.

    from adarray.scipy import stats
    stats.norm.logpdf(x, loc=0.0, scale=1.0)
    ad.grad(lambda a: stats.gamma.cdf(2.0, a))(3.0)      # also in the shape parameters

Each distribution is a module with SciPy's functions and argument names (`loc`, `scale`, shape
parameters): logpdf/pdf (logpmf/pmf), cdf/logcdf, sf/logsf, and ppf where cheap. Arguments
broadcast as in NumPy; invalid parameters give NaN and points outside the support logpdf = -inf,
as in SciPy.
"""
from . import (
    bernoulli,
    beta,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    geom,
    halfnorm,
    laplace,
    logistic,
    lognorm,
    multivariate_normal,
    norm,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    weibull_min,
)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "geom", "laplace",
           "logistic", "multivariate_normal", "norm", "poisson", "t", "uniform"]
__all__ += ["halfnorm", "lognorm", "truncnorm", "vonmises", "weibull_min"]
