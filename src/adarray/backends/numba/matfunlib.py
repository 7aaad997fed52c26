"""Native matrix functions for the generated code: expm, sqrtm, logm per matrix of a stack, in float64 or
complex128 arithmetic (the NumPy backend computes them in double too, with scipy.linalg).

* expm: scaling and squaring with Pade approximants (Higham 2005, "The scaling and squaring method for the
  matrix exponential revisited"): the degree m in (3, 5, 7, 9, 13) whose bound theta_m the 1-norm meets, else
  A / 2^s with degree 13, then s squarings; the Pade coefficients (2m - j)! m! / ((2m)! j! (m - j)!) are
  computed here, the linear system solved by LAPACK's gesv.
* sqrtm: the complex Schur form A = Z T Z^H (LAPACK's zgees), the principal root of the triangle by the
  recurrence R_ii = sqrt(T_ii), R_ij = (T_ij - sum_(i<k<j) R_ik R_kj) / (R_ii + R_jj) (Bjorck and Hammarling;
  0 where both are 0, as SciPy), Z R Z^H.
* logm: the Schur form, then inverse scaling and squaring (Higham 2001): square roots of the triangle until
  ||T - I||_1 <= 1/4, log(I + X) by its [8/8] Pade approximant as the Gauss-Legendre quadrature
  sum_j w_j X (I + t_j X)^-1 (triangular solves), times 2^k, the diagonal set to log(T_ii) exactly.

The kernels return 0, or a failure code the generated code raises as the NumPy backend's LinAlgError: 1 + the
matrix's index where the result is not finite, -(1 + index) where it is not real (an eigenvalue on the negative
real axis: adarray computes in real arithmetic), and for logm 2 * 10^9 + index where an eigenvalue is exactly 0.

This module imports numba and scipy: only generated code imports it.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .lapack import call, character, integer, to_fortran
from .linalglib import solve

_JIT = dict(cache=True, error_model="numpy", fastmath=False)
SINGULAR = 2_000_000_000


def _pade(m):
    """The coefficients b_0..b_m of the [m/m] Pade approximant of exp: (2m - j)! m! / ((2m)! j! (m - j)!)."""
    f = math.factorial
    return tuple(f(2 * m - j) * f(m) / (f(2 * m) * f(j) * f(m - j)) for j in range(m + 1))


# the largest 1-norms for which the [m/m] approximant is accurate to double precision (Higham 2005, table 2.3)
THETA = (1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1, 2.097847961257068e0,
         5.371920351148152e0)
PADE3, PADE5, PADE7, PADE9, PADE13 = _pade(3), _pade(5), _pade(7), _pade(9), _pade(13)


def _gauss_legendre(count):
    """Nodes and weights of the `count`-point Gauss-Legendre rule on [0, 1] (Newton on the Legendre polynomial)."""
    nodes, weights = [], []
    for i in range(1, count + 1):
        x = math.cos(math.pi * (i - 0.25) / (count + 0.5))
        for _ in range(100):
            p0, p1 = 1.0, x
            for k in range(2, count + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            derivative = count * (x * p1 - p0) / (x * x - 1.0)
            step = p1 / derivative
            x -= step
            if abs(step) < 1e-17:
                break
        nodes.append(0.5 * (1.0 - x))
        weights.append(1.0 / ((1.0 - x * x) * derivative * derivative))
    return tuple(nodes), tuple(weights)


LOG_NODES, LOG_WEIGHTS = _gauss_legendre(8)


@numba.njit(**_JIT)
def _matmul(a, b):
    n, k = a.shape
    m = b.shape[1]
    out = np.zeros((n, m), a.dtype)
    for i in range(n):
        for t in range(k):
            value = a[i, t]
            for j in range(m):
                out[i, j] += value * b[t, j]
    return out


@numba.njit(**_JIT)
def _norm1(a):
    n = a.shape[1]
    best = 0.0
    for j in range(n):
        total = 0.0
        for i in range(a.shape[0]):
            total += abs(a[i, j])
        best = max(best, total)
    return best


@numba.njit(**_JIT)
def _pade_parts(a, powers, coefficients):
    """U = A sum_odd b_j A^(j-1), V = sum_even b_j A^j for a degree below 13 (powers: I, A^2, A^4, ...)."""
    n = a.shape[0]
    odd = np.zeros((n, n), a.dtype)
    even = np.zeros((n, n), a.dtype)
    for j in range(len(coefficients)):
        power = powers[j // 2]
        if j % 2 == 1:
            odd += coefficients[j] * power
        else:
            even += coefficients[j] * power
    return _matmul(a, odd), even


@numba.njit(**_JIT)
def _expm_one(a):
    n = a.shape[0]
    identity = np.eye(n).astype(a.dtype)
    norm = _norm1(a)
    if not np.isfinite(norm):
        return np.full((n, n), np.nan).astype(a.dtype)
    a2 = _matmul(a, a)
    squarings = 0
    if norm <= THETA[0]:
        u, v = _pade_parts(a, (identity, a2), PADE3)
    elif norm <= THETA[1]:
        u, v = _pade_parts(a, (identity, a2, _matmul(a2, a2)), PADE5)
    elif norm <= THETA[2]:
        a4 = _matmul(a2, a2)
        u, v = _pade_parts(a, (identity, a2, a4, _matmul(a4, a2)), PADE7)
    elif norm <= THETA[3]:
        a4 = _matmul(a2, a2)
        a6 = _matmul(a4, a2)
        u, v = _pade_parts(a, (identity, a2, a4, a6, _matmul(a6, a2)), PADE9)
    else:
        squarings = max(0, int(math.ceil(math.log2(norm / THETA[4]))))
        scale = 0.5 ** squarings
        a = a * scale
        a2 = a2 * (scale * scale)
        a4 = _matmul(a2, a2)
        a6 = _matmul(a4, a2)
        b = PADE13
        inner_odd = b[13] * a6 + b[11] * a4 + b[9] * a2
        u = _matmul(a, _matmul(a6, inner_odd) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity)
        inner_even = b[12] * a6 + b[10] * a4 + b[8] * a2
        v = _matmul(a6, inner_even) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * identity
    result = np.empty((1, n, n), a.dtype)
    solve(np.ascontiguousarray((v - u).reshape((1, n, n))), np.ascontiguousarray((v + u).reshape((1, n, n))), result)
    out = result[0]
    for _ in range(squarings):
        out = _matmul(out, out)
    return out


@numba.njit(**_JIT)
def expm_real(a, out):
    for b in range(a.shape[0]):
        out[b] = _expm_one(a[b].astype(np.float64))
    return 0


@numba.njit(**_JIT)
def expm_complex(a, out):
    for b in range(a.shape[0]):
        out[b] = _expm_one(a[b].astype(np.complex128))
    return 0


# --- the Schur form, sqrtm, logm -------------------------------------------------------------------------------


@numba.njit(**_JIT)
def _schur(a):
    """(T, Z) with a = Z T Z^H, T upper triangular (complex Schur form, zgees); T, Z row-major."""
    n = a.shape[0]
    f = np.empty((n, n), np.complex128)
    to_fortran(a.astype(np.complex128), f)
    values = np.empty(max(1, n), np.complex128)
    z = np.empty((n, n), np.complex128)
    rwork = np.empty(max(1, n), np.float64)
    bwork = np.empty(max(1, n), np.int32)
    info = integer(0)
    dimension = integer(0)
    work = np.empty(1, np.complex128)
    for query in (True, False):
        call("gees_complex", f, character(ord("V")), character(ord("N")), bwork, integer(n), f, integer(max(1, n)),
             dimension, values, z, integer(max(1, n)), work, integer(-1 if query else work.size), rwork, bwork, info)
        if query:
            work = np.empty(max(1, int(work[0].real)), np.complex128)
    return f.T.copy(), z.T.copy(), info[0]


@numba.njit(**_JIT)
def _sqrt_triangle(t):
    n = t.shape[0]
    r = np.zeros((n, n), np.complex128)
    for i in range(n):
        r[i, i] = np.sqrt(t[i, i])
    for j in range(1, n):
        for i in range(j - 1, -1, -1):
            total = t[i, j]
            for k in range(i + 1, j):
                total -= r[i, k] * r[k, j]
            denominator = r[i, i] + r[j, j]
            if denominator == 0.0 and total == 0.0:
                r[i, j] = 0.0
            else:
                r[i, j] = total / denominator
    return r


@numba.njit(**_JIT)
def _back(z, r):
    """Z R Z^H."""
    return _matmul(_matmul(z, r), np.conj(z.T).copy())


@numba.njit(**_JIT)
def _real_result(value, out, index):
    """Write the real part of `value` into `out`; the failure code if it is not finite or not real."""
    largest = 1.0
    imaginary = 0.0
    for x in value.ravel():
        if not (np.isfinite(x.real) and np.isfinite(x.imag)):
            return index + 1
        largest = max(largest, abs(x))
        imaginary = max(imaginary, abs(x.imag))
    if imaginary > 1e-10 * largest:
        return -(index + 1)
    for i in range(value.shape[0]):
        for j in range(value.shape[1]):
            out[i, j] = value[i, j].real
    return 0


@numba.njit(**_JIT)
def sqrtm(a, out):
    for b in range(a.shape[0]):
        t, z, info = _schur(a[b])
        if info != 0:
            return b + 1
        failed = _real_result(_back(z, _sqrt_triangle(t)), out[b], b)
        if failed:
            return failed
    return 0


@numba.njit(**_JIT)
def _upper_solve(t, rhs):
    """t^-1 rhs for an upper triangular t."""
    n, m = rhs.shape
    out = np.empty((n, m), np.complex128)
    for c in range(m):
        for i in range(n - 1, -1, -1):
            total = rhs[i, c]
            for k in range(i + 1, n):
                total -= t[i, k] * out[k, c]
            out[i, c] = total / t[i, i]
    return out


@numba.njit(**_JIT)
def _log_triangle(t):
    n = t.shape[0]
    identity = np.eye(n).astype(np.complex128)
    root = t.copy()
    roots = 0
    while _norm1(root - identity) > 0.25 and roots < 100:
        root = _sqrt_triangle(root)
        roots += 1
    x = root - identity
    total = np.zeros((n, n), np.complex128)
    for j in range(len(LOG_NODES)):
        total += LOG_WEIGHTS[j] * _upper_solve(identity + LOG_NODES[j] * x, x)
    total *= 2.0 ** roots
    for i in range(n):
        total[i, i] = np.log(t[i, i])
    return total


@numba.njit(**_JIT)
def logm(a, out):
    for b in range(a.shape[0]):
        t, z, info = _schur(a[b])
        if info != 0:
            return b + 1
        for i in range(t.shape[0]):
            if t[i, i] == 0.0:
                return SINGULAR + b
        failed = _real_result(_back(z, _log_triangle(t)), out[b], b)
        if failed:
            return failed
    return 0
