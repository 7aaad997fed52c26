"""adarray.scipy.special: scipy.special look-alikes, differentiable to any order.

    import adarray.scipy.special as sps
    sps.logsumexp(x, axis=1)              # traced inside ad.grad / ad.jit, computed directly otherwise
    ad.grad(lambda a: sps.gammainc(a, 2.0))(3.0)   # derivatives in the shape parameter too

Arguments broadcast and promote as in NumPy (integers compute in float64). The transcendental
functions are primitives (primitives/special.py) whose partial derivatives are written once, beside
them; the others are compositions of them. Conventions:

* xlogy(x, y) and xlog1py(x, y) are 0 where x == 0; their derivatives follow JAX
  (d/dx = log(y), d/dy = x / y, also where x == 0); a zero tangent contributes 0, whatever the
  value of the partial derivative.
* logsumexp of only -inf entries is -inf with zero gradient; softmax and log_softmax subtract the
  maximum first, so softmax([1000, 0]) is [1, 0].
* gammainc, gammaincc and betainc are differentiable in their shape parameters (a, b) by
  series and continued fractions (accurate to about 1e-10 relative).
"""
from __future__ import annotations

import math
import operator

import numpy as np
import scipy.special as _scipy_special

from .. import numpy as anp
from ..core.errors import ArgumentError, TracingError
from ..numpy._core import asvalue, broadcast_shapes, cast, float_dtype, is_python_scalar, normalize_axes, prepare, shape
from ..numpy._shape import broadcast_to
from ..primitives import bessel as bessel_prims
from ..primitives import gamma_functions as gamma_prims
from ..primitives import special as prims
from ..primitives.structural import reshape as reshape_exact
from ..tracing import Tracer

__all__ = [
    "betainc", "betaln", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammainc", "gammaincc", "gammaln",
    "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr",
    "ndtri", "polygamma", "psi", "rel_entr", "softmax", "xlog1py", "xlogy",
]
__all__ += ["beta", "comb", "erfcinv", "expn", "factorial", "gamma", "gammasgn", "loggamma", "zeta"]
__all__ += ["iv", "ive", "j0", "j1", "jn", "rgamma", "y0", "y1", "yn"]


def _floats(name, *values):
    """Broadcast to one shape and promote to one floating dtype."""
    return prepare(name, *values, dtype=float_dtype(*values))


def _unary(primitive_binder, name, doc):
    def fn(x):
        (x,) = _floats(name, x)
        return primitive_binder(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


erfc = _unary(prims.erfc, "erfc", "1 - erf(x), accurate where erf(x) is close to 1 (a primitive).")
erfinv = _unary(prims.erfinv, "erfinv", "The inverse of erf on (-1, 1).")
ndtri = _unary(prims.ndtri, "ndtri", "The inverse of the standard normal CDF on (0, 1).")
log_ndtr = _unary(prims.log_ndtr, "log_ndtr", "log of the standard normal CDF, accurate far into the lower tail.")
gammaln = _unary(prims.gammaln, "gammaln", "log |Gamma(x)|; its derivative is digamma.")
digamma = psi = _unary(prims.digamma, "digamma", "d/dx log Gamma(x); its derivative is polygamma(1, x).")
i0e = _unary(prims.i0e, "i0e", "exp(-|x|) I_0(x): the exponentially scaled modified Bessel function of order 0.")
i1e = _unary(prims.i1e, "i1e", "exp(-|x|) I_1(x): the exponentially scaled modified Bessel function of order 1.")
erf = anp.erf
expit = anp.sigmoid


def _binary(primitive_binder, name, doc):
    def fn(x, y):
        return primitive_binder(*_floats(name, x, y))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


xlogy = _binary(prims.xlogy, "xlogy", "x * log(y), 0 where x == 0 (derivatives as in JAX).")
xlog1py = _binary(prims.xlog1py, "xlog1py", "x * log1p(y), 0 where x == 0 (derivatives as in JAX).")
betaln = _binary(prims.betaln, "betaln", "log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b), accurately.")
gammainc = _binary(prims.gammainc, "gammainc",
                   "The regularized lower incomplete gamma P(a, x), differentiable in a and x.")
gammaincc = _binary(prims.gammaincc, "gammaincc",
                    "The regularized upper incomplete gamma Q(a, x) = 1 - P(a, x), accurate where P is near 1.")


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), differentiable in a, b and x.

    >>> float(betainc(2.0, 3.0, 0.5))
    0.6875
    """
    return prims.betainc(*_floats("betainc", a, b, x))


def _static_int(value, name, what):
    try:
        integer = operator.index(np.asarray(value).item()) if np.ndim(value) == 0 else None
    except (TypeError, ValueError):
        integer = None
    if integer is None:
        raise ArgumentError(f"{name}: {what} must be a concrete integer (static), got {value!r}")
    return integer


def polygamma(n, x):
    """The n-th derivative of digamma, psi^(n)(x), for a static integer n >= 0.

    >>> round(float(polygamma(1, 1.0)), 12)     # pi^2 / 6
    1.644934066848
    """
    order = _static_int(n, "polygamma", "the order n")
    if order < 0:
        raise ArgumentError(f"polygamma: the order n must be >= 0, got {order}")
    (x,) = _floats("polygamma", x)
    return prims.digamma(x) if order == 0 else prims.polygamma(x, order)


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension d (static):
    d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2), j = 0 .. d - 1."""
    dimension = _static_int(d, "multigammaln", "the dimension d")
    (a,) = _floats("multigammaln", a)
    total = dimension * (dimension - 1) * 0.25 * math.log(math.pi)
    for j in range(dimension):
        total = anp.add(total, prims.gammaln(anp.subtract(a, 0.5 * j)))
    return anp.add(anp.zeros_like(a), total) if dimension == 0 else total


def ndtr(x):
    """The standard normal CDF, 0.5 erfc(-x / sqrt 2) (accurate in the lower tail)."""
    (x,) = _floats("ndtr", x)
    return anp.multiply(0.5, prims.erfc(anp.multiply(x, -1.0 / math.sqrt(2.0))))


def logit(p):
    """log(p / (1 - p)), the inverse of expit."""
    (p,) = _floats("logit", p)
    return anp.subtract(anp.log(p), anp.log1p(anp.negative(p)))


def i0(x):
    """The modified Bessel function of the first kind of order 0."""
    (x,) = _floats("i0", x)
    return anp.multiply(prims.i0e(x), anp.exp(anp.abs(x)))


def i1(x):
    """The modified Bessel function of the first kind of order 1."""
    (x,) = _floats("i1", x)
    return anp.multiply(prims.i1e(x), anp.exp(anp.abs(x)))


def entr(x):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0 (elementwise entropy)."""
    (x,) = _floats("entr", x)
    return anp.where(anp.less(x, 0.0), -np.inf, anp.negative(prims.xlogy(x, x)))


def _relative_entropy(name, x, y, extra):
    x, y = _floats(name, x, y)
    inside = anp.logical_and(anp.greater(x, 0.0), anp.greater(y, 0.0))
    # Operands replaced outside the domain, so that no NaN of the untaken branch reaches a gradient.
    safe_x, safe_y = anp.where(inside, x, 1.0), anp.where(inside, y, 1.0)
    value = anp.multiply(safe_x, anp.log(anp.divide(safe_x, safe_y)))
    at_zero = anp.logical_and(anp.equal(x, 0.0), anp.greater_equal(y, 0.0))
    if extra:
        return anp.where(inside, value - x + y, anp.where(at_zero, y, np.inf))
    return anp.where(inside, value, anp.where(at_zero, 0.0, np.inf))


def rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 for x == 0 <= y; inf otherwise."""
    return _relative_entropy("rel_entr", x, y, extra=False)


def kl_div(x, y):
    """x log(x / y) - x + y for x, y > 0; y for x == 0 <= y; inf otherwise."""
    return _relative_entropy("kl_div", x, y, extra=True)


# --- reductions along an axis ---------------------------------------------------------------------

def _drop(value, in_shape, axes, keepdims):
    if keepdims:
        return value
    return reshape_exact(value, tuple(n for i, n in enumerate(in_shape) if i not in axes))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over `axis` without overflow, as scipy.special.logsumexp.

    With `b`, entries where b == 0 are ignored and a negative sum gives NaN, unless `return_sign`,
    which returns (log |sum|, sign(sum)). Where every entry is -inf (or every b is 0) the result is
    -inf with zero gradient.

    >>> float(logsumexp(np.array([1000.0, 1000.0])))
    1000.6931471805599
    """
    if b is None and not return_sign:
        return anp.logsumexp(a, axis, keepdims)
    if b is None:
        (a,) = _floats("logsumexp", a)
        b = anp.ones_like(a)
    else:
        a, b = _floats("logsumexp", a, b)
    axes = normalize_axes(axis, len(shape(a)), "logsumexp")
    masked = anp.where(anp.not_equal(b, 0.0), a, -np.inf)
    peak = anp.stop_gradient(anp.max(masked, axis=axes, keepdims=True)) if axes else anp.stop_gradient(masked)
    finite = anp.isfinite(peak)
    base = anp.where(finite, peak, 0.0)
    total = anp.sum(anp.multiply(b, anp.exp(anp.where(finite, masked - base, -np.inf))), axis=axes, keepdims=True)
    magnitude = anp.abs(total)
    log_magnitude = anp.where(finite, anp.log(anp.where(finite, magnitude, 1.0)) + base, peak)
    sign = anp.where(finite, anp.sign(total), anp.where(anp.greater(peak, 0.0), 1.0, 0.0))
    if return_sign:
        return _drop(log_magnitude, shape(a), axes, keepdims), _drop(sign, shape(a), axes, keepdims)
    out = anp.where(anp.less(sign, 0.0), np.nan, log_magnitude)
    return _drop(out, shape(a), axes, keepdims)


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (all axes by default, as SciPy), shifted by the maximum first."""
    x = asvalue(x)
    x = cast(x, float_dtype(x))
    axes = normalize_axes(axis, len(shape(x)), "softmax")
    if not axes:
        return anp.ones_like(x)
    unnormalized = anp.exp(x - anp.stop_gradient(anp.max(x, axis=axes, keepdims=True)))
    return unnormalized / anp.sum(unnormalized, axis=axes, keepdims=True)


def log_softmax(x, axis=None):
    """x - logsumexp(x) over `axis` (all axes by default, as SciPy), without overflow."""
    x = asvalue(x)
    x = cast(x, float_dtype(x))
    axes = normalize_axes(axis, len(shape(x)), "log_softmax")
    if not axes:
        return anp.zeros_like(x)
    shifted = x - anp.stop_gradient(anp.max(x, axis=axes, keepdims=True))
    return shifted - anp.log(anp.sum(anp.exp(shifted), axis=axes, keepdims=True))


# --- the gamma family and friends: gamma, gammasgn, loggamma, beta, factorial, comb, zeta, expn, erfcinv ---

def gamma(x):
    """The gamma function (a primitive; its derivative is gamma(x) digamma(x)).

    >>> float(gamma(5.0))
    24.0
    """
    (x,) = _floats("gamma", x)
    return gamma_prims.gamma(x)


# 1 / gamma(x) up to here, exp(-gammaln(x)) beyond: there 1 / Gamma^2 in the derivative of 1 / Gamma(x) would
# underflow, and the exponential's relative error, |gammaln(x)| eps, stays below 1e-13 (x <= 171).
RGAMMA_DIRECT_MAX = 50.0


def _sin_pi(x):
    """sin(pi x) with x reduced exactly first (x - round(x) has no rounding error), so that it is accurate near
    the integers, where sin(pi * x) loses the relative accuracy of pi * x; its derivative is pi cos(pi x)."""
    whole = anp.round(x)
    parity = 1.0 - 2.0 * anp.remainder(whole, 2.0)
    return parity * anp.sin(np.pi * (x - whole))


def rgamma(x):
    """1 / Gamma(x), an entire function: 0 at the poles of Gamma (0, -1, -2, ...), where its derivatives are
    finite too. 1 / gamma(x) for 0.5 <= x <= 50, exp(-gammaln(x)) beyond (1e-13 relative at worst), the
    reflection formula Gamma(1 - x) sin(pi x) / pi below 1/2, so that every derivative is right at the poles,
    to any order (a composition of gamma, gammaln and sin: every backend has it).

    >>> [float(v) for v in rgamma(np.array([-2.0, 0.5, 4.0]))]
    [0.0, 0.5641895835477563, 0.16666666666666666]
    """
    (x,) = _floats("rgamma", x)
    left = anp.less(x, 0.5)
    middle = anp.logical_and(anp.logical_not(left), anp.less_equal(x, RGAMMA_DIRECT_MAX))
    # Operands made safe outside their branch, so that no untaken branch reaches a derivative with inf or NaN.
    x_left = anp.where(anp.logical_and(left, anp.isfinite(x)), x, 0.0)
    x_middle = anp.where(middle, x, 1.0)
    x_large = anp.where(anp.logical_or(left, middle), RGAMMA_DIRECT_MAX + 1.0, x)
    shifted_gamma = gamma_prims.gamma(1.0 - x_left)
    sine = _sin_pi(x_left)
    # Below -171 Gamma(1 - x) overflows: the value is 0 at the poles (as SciPy's), +-inf between them.
    overflow = anp.isinf(shifted_gamma)
    at_pole = anp.equal(sine, 0.0)
    infinite = np.inf * anp.sign(anp.where(anp.logical_and(overflow, anp.logical_not(at_pole)), sine, 1.0))
    reflected = anp.where(overflow, anp.where(at_pole, 0.0, infinite),
                          anp.where(overflow, 1.0, shifted_gamma) * sine / np.pi)
    value = anp.where(left, reflected, anp.where(middle, 1.0 / gamma_prims.gamma(x_middle),
                                                 anp.exp(-prims.gammaln(x_large))))
    return anp.where(anp.isnan(x), x, anp.where(anp.isneginf(x), 0.0, value))


def gammasgn(x):
    """The sign of gamma(x): 1 for x > 0, (-1)^ceil(-x) for negative non-integers, +-1 at +-0, NaN at the
    poles (negative integers, -inf) and NaN. Piecewise constant: derivative 0."""
    (x,) = _floats("gammasgn", x)
    finite = anp.isfinite(x)
    whole = anp.floor(anp.where(finite, x, 0.0))
    odd = anp.equal(anp.remainder(whole, 2.0), 1.0)
    pole = anp.logical_or(anp.logical_not(finite), anp.equal(x, whole))   # negative integers and -inf
    negative_side = anp.where(pole, np.nan, anp.where(odd, -1.0, 1.0))
    at_zero = anp.where(anp.signbit(x), -1.0, 1.0)
    sign = anp.where(anp.greater(x, 0.0), 1.0, anp.where(anp.equal(x, 0.0), at_zero, negative_side))
    return anp.where(anp.isnan(x), np.nan, sign)


def loggamma(x):
    """The principal branch of log Gamma(x) for real x: gammaln(x) for x >= 0, NaN for x < 0 (its
    real-valued SciPy counterpart; complex arguments are not supported)."""
    (x,) = _floats("loggamma", x)
    return anp.where(anp.less(x, 0.0), np.nan, prims.gammaln(anp.where(anp.less(x, 0.0), 1.0, x)))


def beta(a, b):
    """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b) (a primitive; derivatives by digamma)."""
    return gamma_prims.beta(*_floats("beta", a, b))


def _exact_integers(name, *values):
    if any(isinstance(v, Tracer) for v in values):
        raise TracingError(f"{name}: exact=True computes Python integers from concrete values; traced values "
                           "need exact=False (a differentiable float result)")


def factorial(n, exact=False):
    """n! = gamma(n + 1) for n >= 0 and 0 for n < 0 (scipy.special.factorial); with exact=False it is
    differentiable (also at non-integer n). exact=True gives SciPy's exact integers (concrete only)."""
    if exact:
        _exact_integers("factorial", n)
        return _scipy_special.factorial(np.asarray(n) if np.ndim(n) else n, exact=True)
    (n,) = _floats("factorial", n)
    negative = anp.less(n, 0.0)
    return anp.where(negative, 0.0, gamma_prims.gamma(anp.where(negative, 1.0, n) + 1.0))


def comb(N, k, *, exact=False, repetition=False):  # noqa: N803 - SciPy's name
    """The number of combinations of N things taken k at a time (scipy.special.comb): 0 unless
    0 <= k <= N; with repetition, binom(N + k - 1, k) (1 for k == 0 <= N). exact=False is
    differentiable in N and k (binom's rule, exact where the gamma functions in it are finite);
    exact=True gives SciPy's exact integers (concrete only)."""
    if exact:
        _exact_integers("comb", N, k)
        return _scipy_special.comb(N, k, exact=True, repetition=repetition)
    n, k = _floats("comb", N, k)
    if repetition:   # SciPy's formula: binom(N + k - 1, k) everywhere, 1 for k == 0 <= N
        first = anp.logical_and(anp.equal(k, 0.0), anp.greater_equal(n, 0.0))
        return anp.where(first, 1.0, gamma_prims.binom(n + k - 1.0, k))
    inside = anp.logical_and(anp.logical_and(anp.less_equal(k, n), anp.greater_equal(n, 0.0)),
                             anp.greater_equal(k, 0.0))
    safe_n, safe_k = anp.where(inside, n, 1.0), anp.where(inside, k, 0.0)
    return anp.where(inside, gamma_prims.binom(safe_n, safe_k), 0.0)


def zeta(x, q=None):
    """The Hurwitz zeta function sum_n (n + q)^-x, or the Riemann zeta function if q is None
    (also for x < 1, as SciPy). Differentiable in x (by the Euler-Maclaurin formula) and in q.

    >>> round(float(zeta(2.0)), 12)   # pi^2 / 6
    1.644934066848
    """
    if q is None:
        (x,) = _floats("zeta", x)
        return gamma_prims.zeta(x, anp.ones_like(x))
    return gamma_prims.zeta(*_floats("zeta", x, q))


def expn(n, x):
    """The generalized exponential integral E_n(x) for a concrete integer n >= 0 (SciPy takes arrays of
    n; here n is static); differentiable in x: d/dx E_n = -E_(n-1)."""
    order = _static_int(n, "expn", "n")
    if order < 0:
        raise ArgumentError(f"expn: n must be >= 0, got {order}")
    (x,) = _floats("expn", x)
    return gamma_prims.expn(x, order)


def erfcinv(y):
    """The inverse of erfc on (0, 2): -ndtri(y / 2) / sqrt(2) (within an ulp or two of SciPy's)."""
    (y,) = _floats("erfcinv", y)
    return anp.multiply(prims.ndtri(anp.multiply(y, 0.5)), -1.0 / math.sqrt(2.0))


# --- Bessel functions (primitives/bessel.py): differentiable in x, to any order; not in the order -----------

def _bessel_operands(name, order, x, integer_order):
    """(order, x) broadcast to one shape; x in its floating dtype, the order integer (int64) when it is one."""
    order = order if is_python_scalar(order) else asvalue(order)
    x = asvalue(x)
    x = cast(x, float_dtype(x))
    order_dtype = np.dtype(np.int64) if (isinstance(order, (bool, int, np.integer)) or np.dtype(
        getattr(order, "dtype", np.float64)).kind in "biu") else float_dtype(order)
    if isinstance(order, Tracer):
        order = cast(order, order_dtype)
    else:
        value = np.asarray(order)
        if integer_order and order_dtype.kind == "f" and np.any(np.isfinite(value) & (value != np.trunc(value))):
            if name == "jn":
                raise ArgumentError(f"jn: the order must be an integer, got {order!r} (SciPy's jn computes jv for a "
                                    "non-integer order, which adarray does not have)")
            value = np.trunc(value)  # scipy.special.yn truncates too (with a warning)
        order = np.asarray(value, order_dtype)
    target = broadcast_shapes(name, shape(order), shape(x))
    return broadcast_to(order, target), broadcast_to(x, target)


def jn(n, x):
    """The Bessel function of the first kind J_n(x) of integer order n (a primitive: d/dx J_n = (J_(n-1) -
    J_(n+1)) / 2, every order). A concrete non-integer n is an error (SciPy computes jv then); a traced one
    gives NaN. The order is not differentiable (UnsupportedError if a derivative reaches it).

    >>> round(float(jn(2, 3.0)), 12)
    0.486091260586
    """
    return bessel_prims.jn(*_bessel_operands("jn", n, x, True))


def yn(n, x):
    """The Bessel function of the second kind Y_n(x) of integer order n (a non-integer n is truncated, as SciPy
    does): -inf at x = 0, NaN for x < 0; d/dx Y_n = (Y_(n-1) - Y_(n+1)) / 2."""
    return bessel_prims.yn(*_bessel_operands("yn", n, x, True))


def j0(x):
    """J_0(x); its derivative is -J_1(x)."""
    return jn(0, x)


def j1(x):
    """J_1(x); its derivative is (J_0(x) - J_2(x)) / 2."""
    return jn(1, x)


def y0(x):
    """Y_0(x); its derivative is -Y_1(x)."""
    return yn(0, x)


def y1(x):
    """Y_1(x); its derivative is (Y_0(x) - Y_2(x)) / 2."""
    return yn(1, x)


def iv(v, x):
    """The modified Bessel function of the first kind I_v(x) of real order v (NaN for x < 0 unless v is an
    integer); d/dx I_v = (I_(v-1) + I_(v+1)) / 2. The order is not differentiable."""
    return bessel_prims.iv(*_bessel_operands("iv", v, x, False))


def ive(v, x):
    """I_v(x) exp(-|x|), without overflow; d/dx = (ive(v-1, x) + ive(v+1, x)) / 2 - sign(x) ive(v, x)."""
    return bessel_prims.ive(*_bessel_operands("ive", v, x, False))
