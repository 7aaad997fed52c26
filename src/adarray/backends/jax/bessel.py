"""JAX lowerings of the Bessel functions (primitives/bessel.py), natively in jnp and lax loops (jax.scipy.special
has only i0, i1 and their scaled forms), computed in float64 and returned in the argument's dtype.

J_n, Y_n (integer n; J_(-n) = (-1)^n J_n, J_n(-x) = (-1)^n J_n(x), Y of x < 0 is NaN):
  * x < 1e-30: the first term of the power series (J_n) and of Y_0, Y_1 (Miller's 2k/x would overflow);
  * x <= 25, or n >= x: Miller's backward recurrence J_(k-1) = (2k/x) J_k - J_(k+1) from k = N, N ~ max(n, x)
    + 25 + 4 sqrt(max(n, x)) (rescaled by 1e-250 whenever a value passes 1e250), normalised by
    J_0 + 2 sum J_2k = 1 (DLMF 10.23.15); Y_0 and Y_1 from the same J's by Neumann's series (DLMF 10.23.16 and
    its derivative): Y_0 = 2/pi ((log(x/2) + gamma) J_0 - 2 sum (-1)^k J_2k / k),
    Y_1 = 2/pi ((log(x/2) + gamma) J_1 - J_0 / x + sum (-1)^k (J_(2k-1) - J_(2k+1)) / k).
  * x > 25: Hankel's expansions of J_0, J_1, Y_0, Y_1 (DLMF 10.17.3, 24 terms: below 1e-22 there), the phase
    from cos x and sin x (no rounding of x - pi/4); then J_n for n < x by the forward recurrence.
  * Y_n, n >= 2: the forward recurrence from Y_0, Y_1 (stable: Y grows with n).
  Measured against SciPy: 1e-13 relative to max(|J|, sqrt(2 / (pi x))) for n < 60, x < 1000 (SciPy's own jn
  is off by up to 1e-12 relative at x ~ 1000, where Miller's recurrence agrees with our forward one to 1e-16).

ive (real v; I_(-n) = I_n for integer n, I_v(-x) = (-1)^v I_v(x) for integer v, NaN otherwise):
  * v >= 0, |x| > 2: Debye's uniform expansion (DLMF 10.41.3, U_0..U_10, the polynomials built exactly at
    import by the recurrence 10.41.9) at the order mu = v + M >= 20 and mu + 1, then the backward recurrence
    I_(mu-1) = I_(mu+1) + (2 mu / x) I_mu (stable: I grows as the order falls) down to v, in the scaled form
    exp(v^2 / (s + x) + v log(x / (v + s))) / sqrt(2 pi s) sum_k U_k(v / s) / v^k, s = sqrt(v^2 + x^2).
  * |x| <= 2, and negative non-integer v (whose I_v has a K_v part: I_(-v) = I_v + (2/pi) sin(v pi) K_v, which
    is below 1e-30 of I_v only for x > 40 and |v| < x / 2, where the expansion at |v| is used): the power series
    sum (x/2)^(2k+v) / (k! Gamma(k+v+1)), summed as a running log-sum-exp (no underflow of its first terms)
    until its terms decrease and fall below 1e-17 of the sum.
  Measured against SciPy: 2e-13 relative for v in [0, 50], x in [1e-3, 1e4]; the series for negative
  non-integer orders 1e-11 relative near the zeros of I_v, 1e-13 elsewhere.
"""
from __future__ import annotations

import math
from fractions import Fraction

import jax.numpy as jnp
import jax.scipy.special as jss
from jax import lax

from ...primitives import bessel
from .registry import lowering

EULER_GAMMA = 0.57721566490153286
HANKEL_MIN = 25.0          # x above which J_0, J_1, Y_0, Y_1 come from Hankel's expansions
HANKEL_TERMS = 24
TINY_X = 1e-30             # below it J_n = (x/2)^n / n!, Y_0 = 2/pi (log(x/2) + gamma), Y_1 = -2/(pi x) to rounding
                           # (Miller's first steps, 2k/x each, would overflow)
MILLER_SLACK, MILLER_SPREAD = 25.0, 4.0   # Miller's start: max(n, x) + SLACK + SPREAD sqrt(max(n, x))
RESCALE = 1e250
DEBYE_MIN_ORDER = 20.0     # the order from which Debye's expansion is used directly
DEBYE_TERMS = 10
SERIES_MAX_X = 2.0         # |x| up to which I_v (v >= 0) is its power series
NEGATIVE_ORDER_EXPANSION_X = 40.0   # a negative non-integer order uses I_|v| beyond this x (if |v| < x / 2)
SERIES_MAX_TERMS = 20_000
SERIES_TOLERANCE = 1e-17


def _debye_polynomials(count):
    """U_0..U_count as coefficient lists in p (DLMF 10.41.9: U_(k+1) = p^2 (1 - p^2) U_k' / 2
    + int_0^p (1 - 5 t^2) U_k(t) dt / 8), exactly, as floats."""
    polynomials = [[Fraction(1)]]
    for _ in range(count):
        u = polynomials[-1]
        new = [Fraction(0)] * (len(u) + 3)
        for i, c in enumerate(u):
            if i:
                new[i + 1] += i * c / 2      # p^2 / 2 * i c p^(i-1)
                new[i + 3] -= i * c / 2      # -p^4 / 2 * i c p^(i-1)
            new[i + 1] += c / (8 * (i + 1))
            new[i + 3] -= 5 * c / (8 * (i + 3))
        polynomials.append(new)
    return [[float(c) for c in polynomial] for polynomial in polynomials]


DEBYE_POLYNOMIALS = _debye_polynomials(DEBYE_TERMS)


def _is_integer(v):
    return jnp.isfinite(v) & (v == jnp.floor(v))


def _odd(n):
    return jnp.remainder(n, 2.0) == 1.0


# --- J_n and Y_n ---------------------------------------------------------------------------------------------

def _hankel(x):
    """(J_0, J_1, Y_0, Y_1) by Hankel's expansions (x >= HANKEL_MIN)."""
    c, s = jnp.cos(x), jnp.sin(x)
    amplitude = jnp.sqrt(2.0 / (jnp.pi * x))
    out = []
    for n in (0, 1):
        mu = 4.0 * n * n
        p, q, coefficient = jnp.zeros_like(x), jnp.zeros_like(x), 1.0
        for k in range(HANKEL_TERMS):
            if k:
                coefficient *= (mu - (2 * k - 1) ** 2) / (8.0 * k)
            term = coefficient / x ** k
            if k % 2 == 0:
                p = p + (-1) ** (k // 2) * term
            else:
                q = q + (-1) ** ((k - 1) // 2) * term
        # cos and sin of the phase x - (n/2 + 1/4) pi, from cos x and sin x
        if n == 0:
            cos_phase, sin_phase = (c + s) / math.sqrt(2.0), (s - c) / math.sqrt(2.0)
        else:
            cos_phase, sin_phase = (s - c) / math.sqrt(2.0), -(c + s) / math.sqrt(2.0)
        out.append((amplitude * (p * cos_phase - q * sin_phase), amplitude * (p * sin_phase + q * cos_phase)))
    (j0, y0), (j1, y1) = out
    return j0, j1, y0, y1


def _miller(n, x, start):
    """Miller's backward recurrence from order `start` (per element): (J_n, J_0, J_1, Y_0, Y_1), normalised."""
    zero = jnp.zeros_like(x)

    def body(step, state):
        k = (top - step).astype(x.dtype)                         # computes J_(k-1) from J_k, J_(k+1)
        upper, current, total, neumann0, neumann1, captured, first = state
        current = jnp.where(k == start, 1e-300, current)        # each element starts at its own order
        lower = 2.0 * k / x * current - upper
        i = k - 1.0
        m_even, m_up, m_down = i / 2.0, (i + 1.0) / 2.0, (i - 1.0) / 2.0
        even, odd = jnp.remainder(i, 2.0) == 0.0, jnp.remainder(i, 2.0) == 1.0
        sign = lambda m: 1.0 - 2.0 * jnp.remainder(m, 2.0)     # noqa: E731  (-1)^m
        total = total + jnp.where(even, jnp.where(i > 0, 2.0, 1.0) * lower, 0.0)
        neumann0 = neumann0 + jnp.where(even & (i > 0), sign(m_even) * lower / jnp.maximum(m_even, 1.0), 0.0)
        neumann1 = neumann1 + jnp.where(odd, sign(m_up) * lower / m_up, 0.0) \
            - jnp.where(odd & (m_down >= 1.0), sign(m_down) * lower / jnp.maximum(m_down, 1.0), 0.0)
        captured = jnp.where(i == n, lower, captured)
        first = jnp.where(i == 1.0, lower, first)
        big = jnp.abs(lower) > RESCALE
        state = (current, lower, total, neumann0, neumann1, captured, first)
        return tuple(jnp.where(big, value / RESCALE, value) for value in state)

    top = jnp.max(start).astype(jnp.int32) if start.size else jnp.int32(0)
    init = (zero, zero, zero, zero, zero, zero, zero)
    _, j0, total, neumann0, neumann1, captured, j1 = lax.fori_loop(0, top, body, init)
    j0, j1, captured = j0 / total, j1 / total, captured / total
    neumann0, neumann1 = neumann0 / total, neumann1 / total
    log_term = jnp.log(x / 2.0) + EULER_GAMMA
    y0 = 2.0 / jnp.pi * (log_term * j0 - 2.0 * neumann0)
    y1 = 2.0 / jnp.pi * (log_term * j1 - j0 / x + neumann1)
    return captured, j0, j1, y0, y1


def _forward(first, second, x, n):
    """The forward recurrence f_(k+1) = (2k/x) f_k - f_(k-1) from f_0, f_1 to f_n (per element)."""
    steps = (jnp.max(n).astype(jnp.int32) - 1) if n.size else jnp.int32(0)

    def body(k, state):
        previous, current = state
        active = k + 1 <= n - 1
        following = 2.0 * (k + 1) / x * current - previous
        following = jnp.where(jnp.isinf(current), current, following)   # an overflowed Y_n stays -inf, not NaN
        return jnp.where(active, current, previous), jnp.where(active, following, current)

    previous, current = lax.fori_loop(0, jnp.maximum(steps, 0), body, (first, second))
    return jnp.where(n == 0, first, current)


def _bessel_jy(order, x):
    """(J_|n|(|x|), Y_|n|(|x|)) for integer-valued orders, at elements with 0 < |x| < inf (others: safe values)."""
    n, ax = jnp.abs(order), jnp.abs(x)
    tiny = (ax > 0) & (ax < TINY_X)
    inner = (ax >= TINY_X) & jnp.isfinite(ax)
    tiny_x = jnp.where(tiny, ax, TINY_X)
    tiny_j = jnp.exp(n * jnp.log(tiny_x / 2.0) - jss.gammaln(n + 1.0))   # the first term of the series
    tiny_y0 = 2.0 / jnp.pi * (jnp.log(tiny_x / 2.0) + EULER_GAMMA)
    tiny_y1 = -2.0 / (jnp.pi * tiny_x)
    ax = jnp.where(inner, ax, 1.0)
    large = ax > HANKEL_MIN
    forward_j = large & (n < ax)
    miller = ~forward_j | ~large                      # J_n by Miller, or J_0 .. Y_1 for x <= HANKEL_MIN
    reach = jnp.maximum(jnp.where(forward_j, 0.0, n), jnp.where(large, 0.0, ax))
    start = 2.0 * jnp.ceil((reach + MILLER_SLACK + MILLER_SPREAD * jnp.sqrt(reach)) / 2.0)
    start = jnp.where(miller, start, 2.0)
    miller_x = jnp.where(miller, ax, 1.0)
    captured, mj0, mj1, my0, my1 = _miller(jnp.where(miller, n, 0.0), miller_x, start)
    hankel_x = jnp.where(large, ax, HANKEL_MIN)
    hj0, hj1, hy0, hy1 = _hankel(hankel_x)
    j0, j1 = jnp.where(large, hj0, mj0), jnp.where(large, hj1, mj1)
    y0, y1 = jnp.where(large, hy0, my0), jnp.where(large, hy1, my1)
    j_forward = _forward(j0, j1, ax, jnp.where(forward_j, n, 0.0))
    j_value = jnp.where(forward_j, j_forward, jnp.where(n == 0, j0, jnp.where(n == 1, j1, captured)))
    y_value = _forward(jnp.where(tiny, tiny_y0, y0), jnp.where(tiny, tiny_y1, y1), jnp.where(tiny, tiny_x, ax), n)
    return jnp.where(tiny, tiny_j, j_value), y_value


@lowering(bessel.jn_p)
def _jn(order, x):
    dtype = x.dtype
    order, x = jnp.asarray(order, jnp.float64), jnp.asarray(x, jnp.float64)
    whole = _is_integer(order)
    n = jnp.where(whole, order, 0.0)
    j, _ = _bessel_jy(n, x)
    flip = _odd(jnp.abs(n)) & ((n < 0) != (x < 0))
    j = jnp.where(flip, -j, j)
    j = jnp.where(x == 0, jnp.where(n == 0, 1.0, 0.0), j)
    j = jnp.where(jnp.isinf(x), jnp.nan, j)                  # SciPy's value at +-inf
    return jnp.where(whole & ~jnp.isnan(x), j, jnp.nan).astype(dtype)


@lowering(bessel.yn_p)
def _yn(order, x):
    dtype = x.dtype
    order, x = jnp.asarray(order, jnp.float64), jnp.asarray(x, jnp.float64)
    whole = _is_integer(order)
    n = jnp.where(whole, order, 0.0)
    _, y = _bessel_jy(n, x)
    y = jnp.where(x == 0, -jnp.inf, y)
    y = jnp.where((n < 0) & _odd(jnp.abs(n)), -y, y)
    y = jnp.where(jnp.isinf(x) | (x < 0), jnp.nan, y)
    return jnp.where(whole & ~jnp.isnan(x), y, jnp.nan).astype(dtype)


# --- I_v -------------------------------------------------------------------------------------------------------

def _debye(order, x):
    """I_order(x) exp(-x) by Debye's expansion (order >= DEBYE_MIN_ORDER, x > 0)."""
    s = jnp.hypot(order, x)
    p = order / s
    exponent = order * order / (s + x) + order * jnp.log(x / (order + s))
    total = jnp.zeros_like(x)
    for k in range(DEBYE_TERMS, -1, -1):       # Horner in 1 / order
        value = jnp.zeros_like(x)
        for c in reversed(DEBYE_POLYNOMIALS[k]):
            value = value * p + c
        total = total / order + value
    return jnp.exp(exponent) / jnp.sqrt(2.0 * jnp.pi * s) * total


def _ive_by_recurrence(order, x):
    """I_order(x) exp(-x) for order >= 0, x > 0: Debye at order + M >= DEBYE_MIN_ORDER, then M steps down."""
    steps = jnp.ceil(jnp.maximum(DEBYE_MIN_ORDER - order, 0.0))
    top = order + steps
    upper, current = _debye(top + 1.0, x), _debye(top, x)
    for step in range(int(DEBYE_MIN_ORDER)):
        active = step < steps
        mu = top - step
        lower = upper + 2.0 * mu / x * current
        upper, current = jnp.where(active, current, upper), jnp.where(active, lower, current)
    return current


def _ive_by_series(order, x):
    """sum_k (x/2)^(2k+v) exp(-x) / (k! Gamma(k+v+1)) as a running log-sum-exp (x > 0; v + 1 not a pole)."""
    log_half = jnp.log(x / 2.0)
    log_term = order * log_half - jss.gammaln(order + 1.0) - x
    sign = jss.gammasgn(order + 1.0)

    def cond(state):
        k, _, _, _, _, done = state
        return (k < SERIES_MAX_TERMS) & ~jnp.all(done)

    def body(state):
        k, log_term, sign, peak, total, done = state
        kf = k.astype(x.dtype)
        denominator = (kf + 1.0) * (kf + order + 1.0)
        log_term = log_term + 2.0 * log_half - jnp.log(jnp.abs(denominator))
        sign = jnp.where(denominator < 0, -sign, sign)
        higher = log_term > peak
        total = jnp.where(higher, total * jnp.exp(peak - log_term) + sign, total + sign * jnp.exp(log_term - peak))
        peak = jnp.maximum(peak, log_term)
        shrinking = (denominator > 0) & (2.0 * log_half < jnp.log(denominator))
        small = log_term - peak < jnp.log(SERIES_TOLERANCE * jnp.maximum(jnp.abs(total), 1e-300))
        new_done = done | (shrinking & small)
        keep = lambda old, new: jnp.where(done, old, new)      # noqa: E731
        return k + 1, keep(state[1], log_term), keep(state[2], sign), keep(state[3], peak), \
            keep(state[4], total), new_done

    init = (jnp.int32(0), log_term, sign, log_term, sign, jnp.zeros(x.shape, bool))
    _, _, _, peak, total, _ = lax.while_loop(cond, body, init)
    return jnp.exp(peak) * total


def _ive(order, x, scaled=True):
    """I_v(x) exp(-|x|) in float64, with SciPy's values at x = 0, x < 0 and the special orders (those of iv
    unless `scaled`)."""
    whole = _is_integer(order)
    v = jnp.where(whole & (order < 0), -order, order)         # I_(-n) = I_n
    ax = jnp.abs(x)
    inner = (ax > 0) & jnp.isfinite(ax)
    negative_fraction = (v < 0) & ~whole
    by_expansion = inner & (((v >= 0) & (ax > SERIES_MAX_X)) | (
        negative_fraction & (ax > NEGATIVE_ORDER_EXPANSION_X) & (-v < ax / 2.0)))
    by_series = inner & ~by_expansion & jnp.isfinite(v)
    expansion = _ive_by_recurrence(jnp.where(by_expansion, jnp.abs(v), 1.0), jnp.where(by_expansion, ax, 5.0))
    series = _ive_by_series(jnp.where(by_series, v, 0.0), jnp.where(by_series, ax, 1.0))
    value = jnp.where(by_expansion, expansion, jnp.where(by_series, series, jnp.nan))
    # x = 0: 1 for v = 0, 0 for v > 0 (and integers), +-inf for negative non-integer v (the sign of 1/Gamma(v+1))
    at_zero = jnp.where(v == 0, 1.0, jnp.where(v > 0, 0.0, jss.gammasgn(v + 1.0) * jnp.inf))
    at_zero = jnp.where(negative_fraction & scaled, jnp.nan, at_zero)     # SciPy's ive there
    value = jnp.where(ax == 0, at_zero, value)
    value = jnp.where(x < 0, jnp.where(whole, jnp.where(_odd(jnp.abs(v)), -value, value), jnp.nan), value)
    return jnp.where(jnp.isnan(x) | jnp.isnan(order) | jnp.isinf(x), jnp.nan, value)


@lowering(bessel.ive_p)
def _ive_lowering(order, x):
    return _ive(jnp.asarray(order, jnp.float64), jnp.asarray(x, jnp.float64)).astype(x.dtype)


@lowering(bessel.iv_p)
def _iv_lowering(order, x):
    wide = jnp.asarray(x, jnp.float64)
    scaled = _ive(jnp.asarray(order, jnp.float64), wide, scaled=False)
    ax = jnp.abs(wide)
    # past x = 700 exp(x) alone overflows before the (small) scaled value brings the product back into range
    large = ax > 700.0
    product = scaled * jnp.exp(jnp.where(large, 0.0, ax))
    logarithmic = jnp.sign(scaled) * jnp.exp(ax + jnp.log(jnp.abs(jnp.where(large, scaled, 1.0))))
    return jnp.where(scaled == 0, scaled, jnp.where(large, logarithmic, product)).astype(x.dtype)
