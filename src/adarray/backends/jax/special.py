"""JAX lowerings of the special-function primitives (primitives/special.py): jax.scipy.special.

The derivatives of the regularized incomplete gamma and beta functions in their shape parameters
(`gammainc_da`, `betainc_dab`) are the algorithms of backends/numpy/special.py in jnp: the series of
P(a, x), Legendre's continued fraction of Q(a, x) and Numerical Recipes' `betacf`, each evaluated in
truncated Taylor arithmetic in (da, db), vectorised over the elements. The NumPy version stops when
every element has converged; here each expansion is a `lax.while_loop` that runs until every element
has converged (or MAX_ITERATIONS), and an element that has converged keeps its value (its update is
masked), so each element stops at the term its own convergence test picks. Both expansions run on
every element, with inputs made safe outside their region, and selects pick the result.
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import jax.scipy.special as jss
from jax import lax

from ...primitives import special
from .registry import LOWERINGS, lowering

# The constants of backends/numpy/special.py (the reference these lowerings must agree with).
EPS = 2.0 ** -52
FPMIN = 1e-300
MAX_ITERATIONS = 100_000

ERF_SERIES_RADIUS = 1.0  # |z| below which erf(z) of a complex z is its Taylor series (no cancellation in 1 - erfc)
ERF_SERIES_TERMS = 24  # |z|^(2n+1) / (n! (2n+1)) < 1e-25 for n >= 24, |z| <= 1


def _erfc_right_half(z):
    """erfc(z) = exp(-z^2) w(iz) for Re z >= 0 (w, the Faddeeva function, is bounded there: no overflow of w)."""
    return jnp.exp(-z * z) * jss.wofz(1j * z)


def erfc(x):
    """erfc of real x (jax.scipy.special.erfc) or complex x (the Faddeeva function jax.scipy.special.wofz on the
    right half plane, erfc(z) = 2 - erfc(-z) on the left; about 1e-13 relative, wofz's accuracy)."""
    if not jnp.iscomplexobj(x):
        return jss.erfc(x)
    flip = jnp.real(x) < 0
    value = _erfc_right_half(jnp.where(flip, -x, x))
    return jnp.where(flip, 2.0 - value, value).astype(x.dtype)


def erf(x):
    """erf of real x (jax.scipy.special.erf) or complex x: its Taylor series 2/sqrt(pi) sum (-1)^n z^(2n+1) /
    (n! (2n+1)) for |z| <= 1, where 1 - erfc(z) would cancel, else 1 - erfc(z) (odd: erf(-z) = -erf(z))."""
    if not jnp.iscomplexobj(x):
        return jss.erf(x)
    small = jnp.abs(x) <= ERF_SERIES_RADIUS
    z = jnp.where(small, x, 0.0)
    square, term, total = z * z, z, z
    for n in range(1, ERF_SERIES_TERMS):
        term = -term * square / n
        total = total + term / (2 * n + 1)
    series = total * (2.0 / math.sqrt(math.pi))
    flip = jnp.real(x) < 0
    right = jnp.where(small, 1.0, jnp.where(flip, -x, x))
    tail = 1.0 - _erfc_right_half(right)
    return jnp.where(small, series, jnp.where(flip, -tail, tail)).astype(x.dtype)


for _primitive, _function in {
    special.erfc_p: erfc, special.erfinv_p: jss.erfinv, special.ndtri_p: jss.ndtri,
    special.log_ndtr_p: jss.log_ndtr, special.gammaln_p: jss.gammaln, special.digamma_p: jss.digamma,
    special.i0e_p: jss.i0e, special.i1e_p: jss.i1e, special.xlogy_p: jss.xlogy, special.xlog1py_p: jss.xlog1py,
    special.betaln_p: jss.betaln, special.gammainc_p: jss.gammainc, special.gammaincc_p: jss.gammaincc,
    special.betainc_p: jss.betainc,
}.items():
    LOWERINGS[_primitive] = (lambda function: lambda *args: function(*args))(_function)


@lowering(special.polygamma_p)
def _polygamma(x, *, order):
    return jss.polygamma(order, x)


# --- truncated Taylor series in two variables --------------------------------------------------------
# A series is an array c of shape (I + 1, J + 1, n): c[i, j] is the coefficient of da^i db^j of n elements.

def _constant(value, shape):
    return jnp.zeros(shape + jnp.shape(value)).at[0, 0].set(value)


def _mul(s, t):
    rows, cols = s.shape[:2]
    out = jnp.zeros(jnp.broadcast_shapes(s.shape, t.shape))
    for i in range(rows):
        for j in range(cols):
            out = out.at[i:, j:].add(s[i, j] * t[: rows - i, : cols - j])
    return out


def _reciprocal(s):
    c0, rest = s[0, 0], s.at[0, 0].set(0.0)
    u = -rest / c0
    out = _constant(jnp.ones_like(c0), s.shape[:2])
    for _ in range(s.shape[0] + s.shape[1] - 2):  # 1 + u (1 + u (1 + ...)): Horner
        out = _mul(u, out).at[0, 0].add(1.0)
    return out / c0


def _exp(s):
    c0, rest = s[0, 0], s.at[0, 0].set(0.0)
    out = _constant(jnp.ones_like(c0), s.shape[:2])
    for k in range(s.shape[0] + s.shape[1] - 2, 0, -1):  # 1 + r (1 + r/2 (1 + ...))
        out = (_mul(rest, out) / k).at[0, 0].add(1.0)
    return out * jnp.exp(c0)


def _guard(s):
    """Lentz's guard: a constant term that underflows to 0 becomes tiny instead."""
    return s.at[0, 0].set(jnp.where(jnp.abs(s[0, 0]) < FPMIN, FPMIN, s[0, 0]))


def _converged(new, old):
    """Per element: every coefficient has stopped changing (the NumPy backend's test, element by element)."""
    close = jnp.abs(new - old) <= EPS * (jnp.abs(new) + 1e-10 * jnp.abs(new[0, 0]))
    return jnp.all(close, axis=(0, 1))


def _iterate(step, state, done, first=1):
    """Run `step(i, state) -> (state, converged)` for i = first, first + 1, ... until every element has
    converged or MAX_ITERATIONS; the state of an element that has converged is kept (every leaf has the
    elements last)."""

    def cond(carry):
        i, _, done = carry
        return (i < MAX_ITERATIONS) & ~jnp.all(done)

    def body(carry):
        i, state, done = carry
        new, converged = step(i, state)
        kept = tuple(jnp.where(done, old, value) for old, value in zip(state, new))
        return i + 1, kept, done | converged

    return lax.while_loop(cond, body, (jnp.asarray(first), state, done))[1]


def _gammaln_series(a, order):
    """log Gamma(a + da) as a series in da: psi^(k-1)(a) / k! (univariate, J = 0)."""
    coefficients = [jss.gammaln(a), jss.digamma(a)]
    coefficients += [jss.polygamma(k - 1, a) / math.factorial(k) for k in range(2, order + 1)]
    return jnp.stack(coefficients[: order + 1])[:, None]


# --- P(a, x) and its a-derivatives -------------------------------------------------------------------

def _gamma_lower_series(a, x, order):
    """P(a + da, x) by its power series (x < a + 1)."""
    log_x = jnp.log(x)
    exponent = -_gammaln_series(a + 1.0, order)
    exponent = exponent.at[0, 0].add(a * log_x - x).at[1, 0].add(log_x)
    one = _constant(jnp.ones_like(a), (order + 1, 1))

    def step(n, state):
        term, total = state
        # term *= x / (a + n + da), where 1 / (c + da) = sum_k (-da)^k / c^(k+1)
        c = a + n
        factor = jnp.stack([((-1.0) ** k * x / c ** (k + 1))[None] for k in range(order + 1)])
        term = _mul(term, factor)
        new = total + term
        return (term, new), _converged(new, total)

    total = _iterate(step, (one, one), jnp.zeros(a.shape, bool))[1]
    return _mul(_exp(exponent), total)


def _gamma_upper_fraction(a, x, order):
    """Q(a + da, x) by Legendre's continued fraction (x >= a + 1), modified Lentz."""
    shape = (order + 1, 1)
    log_x = jnp.log(x)
    exponent = -_gammaln_series(a, order)
    exponent = exponent.at[0, 0].add(a * log_x - x).at[1, 0].add(log_x)
    b = _constant(x + 1.0 - a, shape).at[1, 0].set(-1.0)
    c = _constant(jnp.full_like(a, 1.0 / FPMIN), shape)
    d = _reciprocal(b)

    def step(i, state):
        b, c, d, fraction = state
        an = _constant(-i * (i - a), shape).at[1, 0].set(i.astype(a.dtype))
        b = b.at[0, 0].add(2.0)
        d = _reciprocal(_guard(_mul(an, d) + b))
        c = _guard(b + _mul(an, _reciprocal(c)))
        new = _mul(fraction, _mul(c, d))
        return (b, c, d, new), _converged(new, fraction)

    fraction = _iterate(step, (b, c, d, d), jnp.zeros(a.shape, bool))[3]
    return _mul(_exp(exponent), fraction)


@lowering(special.gammainc_da_p)
def _gammainc_da(a, x, *, order):
    """d^order P(a, x) / da^order (order >= 1), as backends/numpy/special.py computes it."""
    dtype = jnp.result_type(a, x)
    a, x = jnp.broadcast_arrays(jnp.asarray(a, jnp.float64), jnp.asarray(x, jnp.float64))
    shape = a.shape
    a, x = a.ravel(), x.ravel()
    out = jnp.where((a > 0) & (x >= 0), 0.0, jnp.nan)  # x = 0 and x = inf: P is constant in a
    inner = (a > 0) & (x > 0) & jnp.isfinite(x) & jnp.isfinite(a)
    series = inner & (x < a + 1.0)
    fraction = inner & ~series
    scale = float(math.factorial(order))
    # each expansion on the elements of its region, and on a point where it converges at once elsewhere
    lower = _gamma_lower_series(jnp.where(series, a, 1.0), jnp.where(series, x, 0.5), order)[order, 0]
    upper = _gamma_upper_fraction(jnp.where(fraction, a, 1.0), jnp.where(fraction, x, 2.5), order)[order, 0]
    out = jnp.where(series, scale * lower, jnp.where(fraction, -scale * upper, out))
    return out.reshape(shape).astype(dtype)


# --- I_x(a, b) and its (a, b)-derivatives --------------------------------------------------------------

def _betaln(a, b):
    """log B(a, b) for a, b > 0 as Cephes' lbeta (SciPy) computes it: gammaln(a) + gammaln(b) - gammaln(a + b),
    and its asymptotic series where one argument exceeds 1e6 times the other. (jax.scipy.special.betaln of JAX
    0.10 is off by 1e-6 absolute at e.g. (3.01, 8.46), which the derivatives would inherit as relative error.)"""
    big, small = jnp.maximum(a, b), jnp.minimum(a, b)
    asymptotic = (jss.gammaln(small) - small * jnp.log(big) - small * (small - 1) / (2 * big)
                  + small * (small - 1) * (2 * small - 1) / (12 * big ** 2)
                  - small ** 2 * (small - 1) ** 2 / (12 * big ** 3))
    direct = jss.gammaln(a) + jss.gammaln(b) - jss.gammaln(a + b)
    return jnp.where(big > 1e6 * small, asymptotic, direct)


def _beta_exponent(a, b, x, shape):
    """(a + da) log x + (b + db) log(1 - x) - log B(a + da, b + db) as a series."""
    rows, cols = shape
    out = jnp.zeros(shape + jnp.shape(a))
    out = out.at[0, 0].set(jss.xlogy(a, x) + jss.xlog1py(b, -x) - _betaln(a, b))

    def psi(k, v):  # polygamma(k, v), with digamma for k = 0
        return jss.digamma(v) if k == 0 else jss.polygamma(k, v)

    for i in range(rows):
        for j in range(cols):
            if i + j == 0:
                continue
            coefficient = psi(i + j - 1, a + b)
            if j == 0:
                coefficient = coefficient - psi(i - 1, a)
            if i == 0:
                coefficient = coefficient - psi(j - 1, b)
            out = out.at[i, j].set(coefficient / (math.factorial(i) * math.factorial(j)))
    if rows > 1:
        out = out.at[1, 0].add(jnp.log(x))
    if cols > 1:
        out = out.at[0, 1].add(jnp.log1p(-x))
    return out


def _beta_fraction(p, q, x):
    """Numerical Recipes' betacf(p, q, x) in series arithmetic (p, q are series)."""
    one = _constant(jnp.ones_like(x), p.shape[:2])
    total, p_plus, p_minus = p + q, p + one, p - one
    d = _reciprocal(_guard(one - _mul(total, _reciprocal(p_plus)) * x))

    def step(m, state):
        c, d, fraction = state
        m = m.astype(x.dtype)
        even = _mul(q - m * one, _reciprocal(_mul(p_minus + 2 * m * one, p + 2 * m * one))) * (m * x)
        odd = -_mul(_mul(p + m * one, total + m * one),
                    _reciprocal(_mul(p + 2 * m * one, p_plus + 2 * m * one))) * x
        for coefficient in (even, odd):
            d = _reciprocal(_guard(one + _mul(coefficient, d)))
            c = _guard(one + _mul(coefficient, _reciprocal(c)))
            old, fraction = fraction, _mul(fraction, _mul(c, d))
        return (c, d, fraction), _converged(fraction, old)

    return _iterate(step, (one, d, d), jnp.zeros(x.shape, bool))[2]


@lowering(special.betainc_dab_p)
def _betainc_dab(a, b, x, *, da, db):
    """d^(da+db) I_x(a, b) / da^da db^db (da + db >= 1), as backends/numpy/special.py computes it."""
    dtype = jnp.result_type(a, b, x)
    a, b, x = jnp.broadcast_arrays(*(jnp.asarray(v, jnp.float64) for v in (a, b, x)))
    out_shape = a.shape
    a, b, x = a.ravel(), b.ravel(), x.ravel()
    out = jnp.where((a > 0) & (b > 0) & (x >= 0) & (x <= 1), 0.0, jnp.nan)  # x = 0, 1: I is 0 or 1
    inner = (a > 0) & (b > 0) & (x > 0) & (x < 1) & jnp.isfinite(a) & jnp.isfinite(b)
    a, b, x = jnp.where(inner, a, 1.0), jnp.where(inner, b, 1.0), jnp.where(inner, x, 0.25)  # safe elsewhere
    shape = (da + 1, db + 1)
    swap = x >= (a + 1.0) / (a + b + 2.0)  # there I = 1 - I_(1-x)(b, a)
    # The parameter in the first place of the fraction: a + da, or b + db where swapped.
    p = _constant(jnp.where(swap, b, a), shape)
    q = _constant(jnp.where(swap, a, b), shape)
    if da:
        p, q = p.at[1, 0].set(jnp.where(swap, 0.0, 1.0)), q.at[1, 0].set(jnp.where(swap, 1.0, 0.0))
    if db:
        p, q = p.at[0, 1].set(jnp.where(swap, 1.0, 0.0)), q.at[0, 1].set(jnp.where(swap, 0.0, 1.0))
    fraction = _beta_fraction(p, q, jnp.where(swap, 1.0 - x, x))
    value = _mul(_exp(_beta_exponent(a, b, x, shape)), _mul(fraction, _reciprocal(p)))[da, db]
    scale = float(math.factorial(da) * math.factorial(db))
    out = jnp.where(inner, scale * jnp.where(swap, -value, value), out)
    return out.reshape(out_shape).astype(dtype)
