"""A generated table: adarray.scipy.special, adarray.scipy.stats and adarray.nn against jax.scipy.special,
jax.scipy.stats and jax.nn (float64), values and gradients in every float argument, for every function
both libraries have. Derivatives JAX refuses (betainc in a and b) are skipped: adarray has them."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.special as sps
from adarray import nn
from adarray.scipy import stats

jax = pytest.importorskip("jax")
import jax.nn as jnn  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as jsp  # noqa: E402
import jax.scipy.stats as jst  # noqa: E402

N = 5


def _u(low, high):
    return lambda rng: rng.uniform(low, high, N)


def _ints(low, high):
    return lambda rng: rng.integers(low, high, N).astype(np.float64)


def _simplex(rng):
    return rng.dirichlet([1.5, 2.0, 3.0], size=N).T


# (label, ours, JAX's, argument samplers, indices of the differentiated arguments)
SPECIAL = [
    ("erf", sps.erf, jsp.erf, [_u(-3, 3)], [0]),
    ("erfc", sps.erfc, jsp.erfc, [_u(-3, 6)], [0]),
    ("erfinv", sps.erfinv, jsp.erfinv, [_u(-0.95, 0.95)], [0]),
    ("ndtr", sps.ndtr, jsp.ndtr, [_u(-8, 6)], [0]),
    ("ndtri", sps.ndtri, jsp.ndtri, [_u(0.02, 0.98)], [0]),
    ("log_ndtr", sps.log_ndtr, jsp.log_ndtr, [_u(-30, 8)], [0]),
    ("expit", sps.expit, jsp.expit, [_u(-20, 20)], [0]),
    ("logit", sps.logit, jsp.logit, [_u(0.02, 0.98)], [0]),
    ("gammaln", sps.gammaln, jsp.gammaln, [_u(0.1, 20)], [0]),
    ("digamma", sps.digamma, jsp.digamma, [_u(0.1, 20)], [0]),
    ("polygamma", lambda x: sps.polygamma(2, x), lambda x: jsp.polygamma(2, x), [_u(0.3, 10)], [0]),
    ("multigammaln", lambda a: sps.multigammaln(a, 3), lambda a: jsp.multigammaln(a, 3), [_u(1.5, 10)], [0]),
    ("betaln", sps.betaln, jsp.betaln, [_u(0.2, 4), _u(0.2, 4)], [0, 1]),  # JAX loses digits at large a + b
    ("xlogy", sps.xlogy, jsp.xlogy, [_u(-2, 2), _u(0.1, 4)], [0, 1]),
    ("xlog1py", sps.xlog1py, jsp.xlog1py, [_u(-2, 2), _u(-0.9, 4)], [0, 1]),
    ("gammainc", sps.gammainc, jsp.gammainc, [_u(0.3, 15), _u(0.05, 25)], [0, 1]),
    ("gammaincc", sps.gammaincc, jsp.gammaincc, [_u(0.3, 15), _u(0.05, 25)], [0, 1]),
    ("betainc", sps.betainc, jsp.betainc, [_u(0.3, 10), _u(0.3, 10), _u(0.05, 0.95)], [0, 1, 2]),
    ("i0e", sps.i0e, jsp.i0e, [_u(-10, 10)], [0]),
    ("i1e", sps.i1e, jsp.i1e, [_u(-10, 10)], [0]),
    ("i0", sps.i0, jsp.i0, [_u(-5, 5)], [0]),
    ("i1", sps.i1, jsp.i1, [_u(-5, 5)], [0]),
    ("entr", sps.entr, jsp.entr, [_u(0.05, 4)], [0]),
    ("rel_entr", sps.rel_entr, jsp.rel_entr, [_u(0.05, 4), _u(0.05, 4)], [0, 1]),
    ("kl_div", sps.kl_div, jsp.kl_div, [_u(0.05, 4), _u(0.05, 4)], [0, 1]),
    ("logsumexp", sps.logsumexp, jsp.logsumexp, [_u(-5, 5)], [0]),
    ("logsumexp_b", lambda a, b: sps.logsumexp(a, b=b), lambda a, b: jsp.logsumexp(a, b=b),
     [_u(-5, 5), _u(0.1, 2)], [0, 1]),
    ("softmax", sps.softmax, lambda x: jsp.softmax(x, axis=None), [_u(-5, 5)], [0]),
    ("log_softmax", sps.log_softmax, lambda x: jsp.log_softmax(x, axis=None), [_u(-5, 5)], [0]),
    ("gamma", sps.gamma, jsp.gamma, [_u(0.2, 6)], [0]),
    ("gamma_negative", sps.gamma, jsp.gamma, [_u(-2.9, -2.1)], [0]),
    ("gammasgn", sps.gammasgn, jsp.gammasgn, [_u(-3.9, 3.9)], [0]),
    ("loggamma", sps.loggamma, jsp.loggamma, [_u(0.1, 12)], [0]),
    ("beta", sps.beta, jsp.beta, [_u(0.3, 4), _u(0.3, 4)], [0, 1]),
    ("factorial", sps.factorial, jsp.factorial, [_u(0.1, 6)], [0]),
    ("comb", sps.comb, jsp.comb, [_u(4, 10), _u(0.5, 3.5)], [0, 1]),
    ("zeta", sps.zeta, jsp.zeta, [_u(1.5, 5), _u(0.3, 3)], [0, 1]),
    ("expn", lambda x: sps.expn(2, x), lambda x: jsp.expn(2, x), [_u(0.1, 5)], [0]),
]

# distribution -> (JAX's methods, argument samplers (x first), indices of the differentiated arguments)
LOC_SCALE = [_u(-1, 1), _u(0.5, 2)]
DISTRIBUTIONS = {
    "norm": ([_u(-3, 3)] + LOC_SCALE, [0, 1, 2]),
    "expon": ([_u(1.2, 5)] + LOC_SCALE, [0, 1, 2]),
    "laplace": ([_u(1.2, 5)] + LOC_SCALE, [0, 1, 2]),
    "uniform": ([_u(-0.4, -0.1)] + [_u(-1, -0.5), _u(1.0, 2.0)], [0, 1, 2]),
    "cauchy": ([_u(-3, 3)] + LOC_SCALE, [0, 1, 2]),
    "logistic": ([_u(-3, 3)] + LOC_SCALE, [0, 1, 2]),
    "gamma": ([_u(1.2, 6), _u(0.5, 4)] + LOC_SCALE, [0, 1, 2, 3]),
    "chi2": ([_u(1.2, 6), _u(1, 6)] + LOC_SCALE, [0, 1, 2, 3]),
    "beta": ([_u(0.1, 0.9), _u(0.5, 4), _u(0.5, 4)], [0, 1, 2]),
    "t": ([_u(-3, 3), _u(1, 8)] + LOC_SCALE, [0, 1, 2, 3]),
    "poisson": ([_ints(0, 8), _u(0.5, 6)], [1]),
    "bernoulli": ([_ints(0, 2), _u(0.1, 0.9)], [1]),
    "binom": ([_ints(0, 7), lambda rng: np.full(N, 7.0), _u(0.1, 0.9)], [2]),
    "geom": ([_ints(1, 8), _u(0.1, 0.9)], [1]),
    "dirichlet": ([_simplex, lambda rng: np.array([1.5, 2.0, 3.0])], [1]),
    "truncnorm": ([_u(-0.2, 0.2), _u(-3, -2), _u(2, 3), _u(-0.3, 0.3), _u(0.5, 2)], [0, 1, 2, 3, 4]),
    "vonmises": ([_u(-3, 3), _u(0.5, 4)], [0, 1]),
}
QUANTILES = [_u(0.02, 0.98)]  # the first argument of ppf and isf
STATS = [
    (f"{name}.{method}", getattr(getattr(stats, name), method), getattr(getattr(jst, name), method),
     QUANTILES + samplers[1:] if method in ("ppf", "isf") else samplers, wrt)
    for name, (samplers, wrt) in DISTRIBUTIONS.items()
    for method in sorted(m for m in dir(getattr(jst, name)) if not m.startswith("_"))
    if hasattr(getattr(stats, name), method)
]
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]])
STATS += [
    ("multivariate_normal.logpdf", stats.multivariate_normal.logpdf, jst.multivariate_normal.logpdf,
     [lambda rng: rng.normal(size=(N, 3)), lambda rng: rng.normal(size=3), lambda rng: COV], [0, 1]),
]

NN = [
    (name, getattr(nn, name), getattr(jnn, name), [_u(-5, 5)], [0])
    for name in ("relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "elu", "celu", "selu",
                 "leaky_relu", "hard_tanh", "soft_sign", "gelu", "softmax", "log_softmax", "logsumexp", "standardize")
] + [
    ("gelu_exact", lambda x: nn.gelu(x, approximate=False), lambda x: jnn.gelu(x, approximate=False), [_u(-5, 5)], [0]),
    ("glu", nn.glu, jnn.glu, [lambda rng: rng.uniform(-3, 3, (3, 4))], [0]),
]

TABLE = SPECIAL + STATS + NN


def test_the_table_covers_every_shared_function():
    """Every public function both libraries have appears in the table (so it cannot drift)."""
    labels = {label.split("_b")[0] if label == "logsumexp_b" else label for label, *_ in TABLE}
    shared_special = {name for name in sps.__all__ if hasattr(jsp, name) and name != "psi"}
    assert shared_special <= labels, shared_special - labels
    shared_nn = {name for name in nn.__all__ if hasattr(jnn, name) and name != "one_hot"}
    assert shared_nn <= labels, shared_nn - labels
    for name in (name for name in stats.__all__ if hasattr(jst, name)):   # jax has no lognorm, weibull_min, halfnorm
        for method in dir(getattr(jst, name)):
            if not method.startswith("_") and hasattr(getattr(stats, name), method) and name != "multivariate_normal":
                assert f"{name}.{method}" in labels


@pytest.mark.parametrize("label, ours, theirs, samplers, wrt", TABLE, ids=[row[0] for row in TABLE])
def test_values_and_gradients_match_jax(label, ours, theirs, samplers, wrt):
    rng = np.random.default_rng(abs(hash(label)) % 2 ** 32)
    args = [sample(rng) for sample in samplers]
    with jax.enable_x64(True):
        jax_args = [jnp.asarray(a) for a in args]
        np.testing.assert_allclose(ours(*args), np.asarray(theirs(*jax_args)), rtol=1e-9, atol=1e-12,
                                   err_msg=f"{label}: values")
        for index, expected in _jax_gradients(theirs, jax_args, wrt).items():
            if expected is None:  # JAX: "Betainc gradient with respect to a and b not supported"
                continue
            grad = ad.grad(lambda *xs: anp.sum(ours(*xs)), argnums=index)(*args)
            np.testing.assert_allclose(grad, expected, rtol=1e-8, atol=1e-11,
                                       err_msg=f"{label}: gradient in argument {index}")


def _jax_gradients(theirs, jax_args, wrt) -> dict:
    """{index: JAX's gradient of sum(theirs) in that argument, or None where JAX does not support it}: one
    backward pass for all (JAX runs op by op here, compiling each operation: one pass per argument took 2 s on
    truncnorm's functions)."""
    def total(*xs):
        return jnp.sum(theirs(*xs))

    try:
        return dict(zip(wrt, map(np.asarray, jax.grad(total, argnums=tuple(wrt))(*jax_args))))
    except ValueError:
        pass
    gradients = {}
    for index in wrt:
        try:
            gradients[index] = np.asarray(jax.grad(total, argnums=index)(*jax_args))
        except ValueError as error:
            assert "not supported" in str(error)
            gradients[index] = None
    return gradients


def test_one_hot_matches_jax():
    labels = np.array([[0, 3], [1, -1]])
    with jax.enable_x64(True):
        for axis in (-1, 0, 1):
            np.testing.assert_array_equal(nn.one_hot(labels, 3, axis=axis),
                                          np.asarray(jnn.one_hot(labels, 3, axis=axis)))
