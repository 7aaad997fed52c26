"""sqrtm and logm on the JAX backend, natively (`lax.while_loop`, LU inverses and determinants: what XLA
has on every device), batched over the leading axes, computed in float64 (complex128 for complex matrices,
with the same iterations: for them too an eigenvalue on the closed negative real axis makes the iteration
fail, as the branch cut lies there; the NumPy backend's Schur method handles it).

sqrtm   the product form of the Denman-Beavers iteration with determinant scaling (Higham, Functions of
        Matrices, (6.17) and (6.28)): M <- (I + (mu^2 M + mu^-2 M^-1) / 2) / 2, Y <- mu Y (I + mu^-2 M^-1) / 2,
        mu = |det M|^(-1/2n), from M = Y = A: Y -> A^(1/2), M -> I. It stops one step after ||M - I||_F fell
        below 1e-10 (quadratic convergence takes that to rounding level), at most 100 steps.
logm    inverse scaling and squaring: k square roots (the iteration above) until ||A^(1/2^k) - I||_1 <= 1/2,
        then the [10/10] Pade approximant of log(I + X) as its partial fractions, the 10-point Gauss-Legendre
        rule of log(I + X) = int_0^1 X (I + t X)^-1 dt (error below 1e-16 for ||X|| <= 1/2), times 2^k.

A matrix with an eigenvalue on the closed negative real axis (0 included) has no real principal root or
logarithm: the iteration meets a singular M or does not converge. Then one `jax.debug.callback` (under a
`lax.cond`: the host is only contacted on failure) raises LinAlgError, which `adarray.jit(..., backend="jax")`
re-raises as itself (registry.fail_on_host; the lowerings are registered as checked). Unlike SciPy
(the NumPy backend), sqrtm of a singular matrix that has a real square root (diag(0, 1)) raises too: the
iteration inverts it (the root is not differentiable there anyway). Agreement with SciPy on well-conditioned
matrices (I + 0.3 N(0, 1)/sqrt(n), SPD, n <= 8): about 1e-14 relative (tests/test_jax_matfun.py). Less near
the negative real axis: for eigenvalues at angle pi - delta the first M has eigenvalues ~ delta^2/4, and the
relative error grows to ~ eps/delta^2 (1e-12 at delta = 1e-3, 3e-9 at 1e-4, 4e-8 at 1e-5; SciPy's Schur
method stays near eps/delta, the problem's condition).
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from ...primitives.matrices import LinAlgError
from ...primitives.sqrtm_logm import logm_p, sqrtm_p
from .registry import fail_on_host, lowering

SQRTM_STEPS = 100  # the iteration converges in ~10 steps from a well-scaled start; more means no real root
SQRTM_TOLERANCE = 1e-10  # ||M - I||_F at which one more (quadratically convergent) step reaches rounding level
SCALING_STOP = 1e-2  # no determinant scaling once M is this close to I (it would only slow convergence)
LOGM_ROOTS = 64  # square roots at most: log(||A||) / 2^k <= 1/2 for any finite float64 matrix well before
LOGM_RADIUS = 0.5  # ||X||_1 below which the [10/10] Pade approximant of log(I + X) is exact to rounding
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(10)
_NODES, _WEIGHTS = (_NODES + 1.0) / 2.0, _WEIGHTS / 2.0  # on [0, 1]


def _eye(a):
    return jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)


def _frobenius(a):
    return jnp.sqrt(jnp.sum(jnp.abs(a) ** 2, axis=(-2, -1)))


def _sqrtm_iteration(a):
    """(A^(1/2), ok) per matrix of the stack `a` (float64, at least one matrix); ok: converged, finite."""
    n = a.shape[-1]
    eye = _eye(a)

    def step(state):
        y, m, distance, done, count = state
        inverse = jnp.linalg.inv(m)
        _, logdet = jnp.linalg.slogdet(m)
        mu = jnp.where(distance > SCALING_STOP, jnp.exp(-logdet / (2 * n)), 1.0)[..., None, None]
        new_m = 0.5 * (eye + 0.5 * (mu * mu * m + inverse / (mu * mu)))
        new_y = 0.5 * mu * (y @ (eye + inverse / (mu * mu)))
        new_distance = _frobenius(new_m - eye)
        finite = jnp.isfinite(new_distance)
        keep = done[..., None, None]
        return (jnp.where(keep, y, new_y), jnp.where(keep, m, new_m), jnp.where(done, distance, new_distance),
                done | (distance <= SQRTM_TOLERANCE) | ~finite, count + 1)

    def running(state):
        return (state[4] < SQRTM_STEPS) & ~jnp.all(state[3])

    start = (a, a, _frobenius(a - eye), jnp.zeros(a.shape[:-2], bool), 0)
    y, _, distance, done, _ = lax.while_loop(running, step, start)
    ok = done & (distance <= SQRTM_TOLERANCE) & jnp.all(jnp.isfinite(y), axis=(-2, -1))
    return y, ok


def _log_near_identity(x):
    """log(I + X) for ||X|| <= 1/2: sum_j w_j X (I + t_j X)^-1, the [10/10] Pade approximant."""
    eye = _eye(x)
    total = jnp.zeros_like(x)
    for node, weight in zip(_NODES, _WEIGHTS):
        total = total + weight * jnp.linalg.solve(eye + node * x, x)  # (I + t X)^-1 X = X (I + t X)^-1
    return total


def _logm_scaled(a):
    """(log A, ok) per matrix: square roots until A^(1/2^k) is near I, the Pade approximant, times 2^k."""
    eye = _eye(a)

    def near(r):
        return jnp.max(jnp.sum(jnp.abs(r - eye), axis=-2), axis=-1) <= LOGM_RADIUS  # the 1-norm

    def step(state):
        r, roots, ok, count = state
        root, converged = _sqrtm_iteration(r)
        todo = ~near(r) & ok
        return (jnp.where(todo[..., None, None], root, r), roots + todo, ok & (converged | ~todo), count + 1)

    def running(state):
        r, _, ok, count = state
        return (count < LOGM_ROOTS) & jnp.any(~near(r) & ok)

    start = (a, jnp.zeros(a.shape[:-2], jnp.float64), jnp.all(jnp.isfinite(a), axis=(-2, -1)), 0)
    r, roots, ok, _ = lax.while_loop(running, step, start)
    ok = ok & near(r)
    safe = jnp.where(ok[..., None, None], r, eye)  # no Pade of a failed matrix (it would warn of nothing)
    log = _log_near_identity(safe - eye) * jnp.exp2(roots)[..., None, None]
    return log, ok & jnp.all(jnp.isfinite(log), axis=(-2, -1))


def _what(name):
    return "square root" if name == "sqrtm" else "logarithm"


def _report(name, ok, batch_shape, shape, complex_values):
    """Raise LinAlgError on the host if some matrix of the stack failed."""
    flat = ok.reshape(-1)

    def describe(index):
        where = tuple(int(i) for i in np.unravel_index(int(index), batch_shape)) if batch_shape else ""
        if complex_values:
            return LinAlgError, (f"{name}: the complex matrix {where} of shape {shape} has an eigenvalue on the "
                                 "closed negative real axis (0 included), where the Denman-Beavers iteration of the "
                                 "JAX backend cannot pick the principal branch (it met a singular matrix or did not "
                                 "converge); the NumPy backend (SciPy's Schur method) computes it")
        return LinAlgError, (f"{name}: the matrix {where} of shape {shape} has no real principal {_what(name)} (an "
                             "eigenvalue on the closed negative real axis, 0 included: the Denman-Beavers iteration "
                             "met a singular matrix or did not converge; a real matrix gives a real result)")

    fail_on_host(~jnp.all(flat), describe, jnp.argmin(flat))


def _lowered(name, function):
    def lower(a, complex_result=False):
        out_dtype = jnp.result_type(a.dtype, jnp.complex64) if complex_result else a.dtype
        if a.size == 0:
            return jnp.zeros(a.shape, out_dtype)
        complex_values = jnp.iscomplexobj(a)
        value, ok = function(a.astype(jnp.complex128 if complex_values else jnp.float64))
        _report(name, ok, a.shape[:-2], a.shape[-2:], complex_values or complex_result)
        return value.astype(out_dtype)

    return lower


lowering(sqrtm_p, checked=True)(_lowered("sqrtm", _sqrtm_iteration))
lowering(logm_p, checked=True)(_lowered("logm", _logm_scaled))
