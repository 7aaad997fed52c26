"""NumPy implementations of the special-function primitives (primitives/special.py).

Values come from scipy.special. The derivatives of the regularized incomplete gamma P(a, x) and
beta I_x(a, b) in their shape parameters (`gammainc_da`, `betainc_dab`) have no closed form: they
are the Taylor coefficients of the classical expansions evaluated in truncated Taylor arithmetic
in (da, db), i.e. the expansions differentiated exactly, term by term, to any order:

* P(a, x) for x < a + 1: the series x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n));
* Q(a, x) = 1 - P for x >= a + 1: the continued fraction of Legendre (modified Lentz);
* I_x(a, b): the continued fraction of Numerical Recipes' `betacf` for x < (a + 1) / (a + b + 2),
  else 1 - I_(1-x)(b, a).

Each expansion is used where it converges fast and its value is not a difference of nearly equal
numbers, so the derivatives keep the relative accuracy of the expansion (about 1e-13), also in the
tails where P or I is close to 1 (their derivatives are then minus those of Q or 1 - I).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ...primitives import bessel, special
from .registry import IMPLS

EPS = 2.0 ** -52  # relative change that stops an expansion: one unit in the last place (1e-16, below it, let
# an element whose last bit alternates run all MAX_ITERATIONS: 16 s for 100 betainc_dab elements)
FPMIN = 1e-300
MAX_ITERATIONS = 100_000

for _primitive, _fn in {
    special.erfc_p: sc.erfc, special.erfinv_p: sc.erfinv, special.ndtri_p: sc.ndtri,
    special.log_ndtr_p: sc.log_ndtr, special.gammaln_p: sc.gammaln, special.digamma_p: sc.digamma,
    special.i0e_p: sc.i0e, special.i1e_p: sc.i1e, special.xlogy_p: sc.xlogy, special.xlog1py_p: sc.xlog1py,
    special.betaln_p: sc.betaln, special.gammainc_p: sc.gammainc, special.gammaincc_p: sc.gammaincc,
    special.betainc_p: sc.betainc,
}.items():
    IMPLS[_primitive] = (lambda fn: lambda *args, **params: fn(*args))(_fn)


def _polygamma(x, *, order):
    return sc.polygamma(order, x)


IMPLS[special.polygamma_p] = _polygamma


# --- truncated Taylor series in two variables --------------------------------------------------------
# A series is an array c of shape (I + 1, J + 1, *elements): c[i, j] is the coefficient of da^i db^j.

def _constant(value, shape):
    out = np.zeros(shape + np.shape(value))
    out[0, 0] = value
    return out


def _mul(s, t):
    out = np.zeros(np.broadcast_shapes(s.shape, t.shape))
    rows, cols = out.shape[:2]
    for i in range(rows):
        for j in range(cols):
            out[i:, j:] += s[i, j] * t[: rows - i, : cols - j]
    return out


def _nilpotent(s):
    """(c0, s - c0): the constant term and the rest, whose (I + J + 1)-th power vanishes."""
    rest = s.copy()
    rest[0, 0] = 0.0
    return s[0, 0], rest


def _reciprocal(s):
    c0, rest = _nilpotent(s)
    u = -rest / c0
    out = _constant(np.ones_like(c0), s.shape[:2])
    for _ in range(s.shape[0] + s.shape[1] - 2):  # 1 + u (1 + u (1 + ...)): Horner
        out = _mul(u, out)
        out[0, 0] += 1.0
    return out / c0


def _exp(s):
    c0, rest = _nilpotent(s)
    out = _constant(np.ones_like(c0), s.shape[:2])
    for k in range(s.shape[0] + s.shape[1] - 2, 0, -1):  # 1 + r (1 + r/2 (1 + ...))
        out = _mul(rest, out) / k
        out[0, 0] += 1.0
    return out * np.exp(c0)


def _guard(s):
    """Lentz's guard: a constant term that underflows to 0 becomes tiny instead."""
    small = np.abs(s[0, 0]) < FPMIN
    s[0, 0] = np.where(small, FPMIN, s[0, 0])
    return s


def _converged(new, old):
    return bool(np.all(np.abs(new - old) <= EPS * (np.abs(new) + 1e-10 * np.abs(new[0, 0]))))


def _gammaln_series(a, order):
    """log Gamma(a + da) as a series in da: psi^(k-1)(a) / k! (univariate, J = 0)."""
    out = np.zeros((order + 1, 1) + np.shape(a))
    out[0, 0] = sc.gammaln(a)
    for k in range(1, order + 1):
        out[k, 0] = sc.polygamma(k - 1, a) / math.factorial(k)
    return out


# --- P(a, x) and its a-derivatives -------------------------------------------------------------------

def _gamma_lower_series(a, x, order):
    """P(a + da, x) by its power series (x < a + 1)."""
    log_x = np.log(x)
    exponent = -_gammaln_series(a + 1.0, order)
    exponent[0, 0] += a * log_x - x
    exponent[1, 0] += log_x
    term = _constant(np.ones_like(a), (order + 1, 1))
    total = term.copy()
    for n in range(1, MAX_ITERATIONS):
        # term *= x / (a + n + da), where 1 / (c + da) = sum_k (-da)^k / c^(k+1)
        c = a + n
        step = np.stack([((-1.0) ** k * x / c ** (k + 1))[None] for k in range(order + 1)])
        term = _mul(term, step)
        old, total = total, total + term
        if _converged(total, old):
            break
    return _mul(_exp(exponent), total)


def _gamma_upper_fraction(a, x, order):
    """Q(a + da, x) by Legendre's continued fraction (x >= a + 1), modified Lentz."""
    shape = (order + 1, 1)
    log_x = np.log(x)
    exponent = -_gammaln_series(a, order)
    exponent[0, 0] += a * log_x - x
    exponent[1, 0] += log_x
    b = _constant(x + 1.0 - a, shape)
    b[1, 0] = -1.0
    c = _constant(np.full_like(a, 1.0 / FPMIN), shape)
    d = _reciprocal(b)
    fraction = d
    for i in range(1, MAX_ITERATIONS):
        an = _constant(-i * (i - a), shape)
        an[1, 0] = float(i)
        b[0, 0] += 2.0
        d = _reciprocal(_guard(_mul(an, d) + b))
        c = _guard(b + _mul(an, _reciprocal(c)))
        old, fraction = fraction, _mul(fraction, _mul(c, d))
        if _converged(fraction, old):
            break
    return _mul(_exp(exponent), fraction)


def _gammainc_da(a, x, *, order):
    """d^order P(a, x) / da^order (order >= 1)."""
    dtype = np.result_type(a, x)
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.where((a > 0) & (x >= 0), 0.0, np.nan)  # x = 0 and x = inf: P is constant in a
    inner = (a > 0) & (x > 0) & np.isfinite(x) & np.isfinite(a)
    series = inner & (x < a + 1.0)
    fraction = inner & ~series
    scale = float(math.factorial(order))
    if np.any(series):
        out[series] = scale * _gamma_lower_series(a[series], x[series], order)[order, 0]
    if np.any(fraction):
        out[fraction] = -scale * _gamma_upper_fraction(a[fraction], x[fraction], order)[order, 0]
    return out.astype(dtype, copy=False)


# --- I_x(a, b) and its (a, b)-derivatives --------------------------------------------------------------

def _beta_exponent(a, b, x, shape):
    """(a + da) log x + (b + db) log(1 - x) - log B(a + da, b + db) as a series."""
    rows, cols = shape
    out = np.zeros(shape + np.shape(a))
    out[0, 0] = sc.xlogy(a, x) + sc.xlog1py(b, -x) - sc.betaln(a, b)
    for i in range(rows):
        for j in range(cols):
            if i + j == 0:
                continue
            coefficient = sc.polygamma(i + j - 1, a + b)
            if j == 0:
                coefficient = coefficient - sc.polygamma(i - 1, a)
            if i == 0:
                coefficient = coefficient - sc.polygamma(j - 1, b)
            out[i, j] = coefficient / (math.factorial(i) * math.factorial(j))
    if rows > 1:
        out[1, 0] += np.log(x)
    if cols > 1:
        out[0, 1] += np.log1p(-x)
    return out


def _beta_fraction(p, q, x):
    """Numerical Recipes' betacf(p, q, x) in series arithmetic (p, q are series)."""
    one = _constant(np.ones_like(x), p.shape[:2])
    total, p_plus, p_minus = p + q, p + one, p - one
    c = one.copy()
    d = _reciprocal(_guard(one - _mul(total, _reciprocal(p_plus)) * x))
    fraction = d
    for m in range(1, MAX_ITERATIONS):
        even = _mul(q - m * one, _reciprocal(_mul(p_minus + 2 * m * one, p + 2 * m * one))) * (m * x)
        odd = -_mul(_mul(p + m * one, total + m * one), _reciprocal(_mul(p + 2 * m * one, p_plus + 2 * m * one))) * x
        for coefficient in (even, odd):
            d = _reciprocal(_guard(one + _mul(coefficient, d)))
            c = _guard(one + _mul(coefficient, _reciprocal(c)))
            old, fraction = fraction, _mul(fraction, _mul(c, d))
        if _converged(fraction, old):
            break
    return fraction


def _betainc_dab(a, b, x, *, da, db):
    """d^(da+db) I_x(a, b) / da^da db^db (da + db >= 1)."""
    dtype = np.result_type(a, b, x)
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    out = np.where((a > 0) & (b > 0) & (x >= 0) & (x <= 1), 0.0, np.nan)  # x = 0, 1: I is 0 or 1
    inner = (a > 0) & (b > 0) & (x > 0) & (x < 1) & np.isfinite(a) & np.isfinite(b)
    if np.any(inner):
        a, b, x = a[inner], b[inner], x[inner]
        shape = (da + 1, db + 1)
        swap = x >= (a + 1.0) / (a + b + 2.0)  # there I = 1 - I_(1-x)(b, a)
        # The parameter in the first place of the fraction: a + da, or b + db where swapped.
        p = _constant(np.where(swap, b, a), shape)
        q = _constant(np.where(swap, a, b), shape)
        if da:
            p[1, 0], q[1, 0] = np.where(swap, 0.0, 1.0), np.where(swap, 1.0, 0.0)
        if db:
            p[0, 1], q[0, 1] = np.where(swap, 1.0, 0.0), np.where(swap, 0.0, 1.0)
        fraction = _beta_fraction(p, q, np.where(swap, 1.0 - x, x))
        value = _mul(_exp(_beta_exponent(a, b, x, shape)), _mul(fraction, _reciprocal(p)))[da, db]
        scale = float(math.factorial(da) * math.factorial(db))
        out[inner] = scale * np.where(swap, -value, value)
    return out.astype(dtype, copy=False)


IMPLS[special.gammainc_da_p] = _gammainc_da
IMPLS[special.betainc_dab_p] = _betainc_dab


# --- Bessel functions (primitives/bessel.py): scipy.special's, in float64, returned in the argument's dtype ---

def _integer_orders(n):
    """(the orders as int64 where they are integers, the mask of those)."""
    n = np.asarray(n)
    if n.dtype.kind in "iu":
        return n.astype(np.int64), np.ones(n.shape, bool)
    whole = np.isfinite(n) & (n == np.floor(n)) & (np.abs(n) < 2.0 ** 62)
    return np.where(whole, n, 0).astype(np.int64), whole


def _jn(n, x):
    orders, whole = _integer_orders(n)
    return np.where(whole, sc.jv(orders, np.asarray(x, np.float64)), np.nan).astype(x.dtype)


def _yn(n, x):
    orders, whole = _integer_orders(n)
    return np.where(whole, sc.yn(orders, np.asarray(x, np.float64)), np.nan).astype(x.dtype)


IMPLS[bessel.jn_p] = _jn
IMPLS[bessel.yn_p] = _yn
IMPLS[bessel.iv_p] = lambda v, x: sc.iv(np.asarray(v, np.float64), np.asarray(x, np.float64)).astype(x.dtype)
IMPLS[bessel.ive_p] = lambda v, x: sc.ive(np.asarray(v, np.float64), np.asarray(x, np.float64)).astype(x.dtype)
