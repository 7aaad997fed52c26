"""The Sylvester equation.

solve_sylvester a b q -> x
    A X + X B = Q for (..., m, m) a, (..., n, n) b and (..., m, n) q with the same batch axes and dtype
    (scipy.linalg.solve_sylvester: Bartels and Stewart, 1972). The solution is unique when A and -B have
    no eigenvalue in common. Writing S(X) = A X + X B, the equation is linear in Q and
        dX = S^-1(dQ - dA X - X dB),
    and the transpose of S under the pairing sum(u * v) is S^T(Y) = A^T Y + Y B^T, so with
    L = S^-T(G) = solve_sylvester(A^T, B^T, G) for a cotangent G:
        Q_bar = L,   A_bar = -L X^T,   B_bar = -X^T L.
    Both rules call the primitive again, so every order works. The same formulas hold for complex
    matrices under JAX's convention (the plain transpose, no conjugate), as for solve.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from . import elementwise as ew
from .matrices import batch_matrices, complex_normal, matmul, mT, square_matrix
from .rules import add_tangents, aval_of_value
from .taylor import FROM_JVP


def _abstract_eval(a, b, q):
    square_matrix("solve_sylvester", a)
    square_matrix("solve_sylvester", b)
    batch = a.shape[:-2]
    if b.shape[:-2] != batch or q.shape != batch + (a.shape[-1], b.shape[-1]):
        raise ShapeError(f"solve_sylvester: q must have shape {batch + (a.shape[-1], b.shape[-1])} to match "
                         f"a {a} and b {b}, got {q}")
    if not a.dtype == b.dtype == q.dtype:
        raise ShapeError(f"solve_sylvester: a {a}, b {b} and q {q} differ in dtype")
    return q


solve_sylvester_p = Primitive("solve_sylvester", _abstract_eval)


def solve_sylvester(a, b, q):
    """x with a @ x + x @ b == q (stacks of matrices with the same batch axes)."""
    return solve_sylvester_p.bind(a, b, q)


def _jvp(tangents, primals, output):
    ta, tb, tq = tangents
    a, b, _ = primals
    rhs = Zero(aval_of_value(output)) if is_zero(tq) else tq
    if not is_zero(ta):
        rhs = add_tangents(rhs, ew.neg(matmul(ta, output)))
    if not is_zero(tb):
        rhs = add_tangents(rhs, ew.neg(matmul(output, tb)))
    return solve_sylvester(a, b, rhs)


def _vjp(cotangent, primals, output, needs):
    a, b, _ = primals
    adjoint = solve_sylvester(mT(a), mT(b), cotangent)
    return [ew.neg(matmul(adjoint, mT(output))) if needs[0] else None,
            ew.neg(matmul(mT(output), adjoint)) if needs[1] else None,
            adjoint if needs[2] else None]


solve_sylvester_p.jvp, solve_sylvester_p.vjp = _jvp, _vjp
batch_matrices(solve_sylvester_p)
solve_sylvester_p.taylor = FROM_JVP


def _sample(rng):
    """Spectra of A near +2 and of B near +1: A and -B stay far apart (a well-conditioned equation)."""
    def case(m, n, batch=(), dtype=np.float64):
        a = 2.0 * np.eye(m) + 0.4 * rng.normal(size=batch + (m, m))
        b = np.eye(n) + 0.4 * rng.normal(size=batch + (n, n))
        return [a.astype(dtype), b.astype(dtype), rng.normal(size=batch + (m, n)).astype(dtype)]

    complex_case = [2.0 * np.eye(3) + 0.4 * complex_normal(rng, (3, 3)), np.eye(2) + 0.4 * complex_normal(rng, (2, 2)),
                    complex_normal(rng, (3, 2))]
    return [(case(3, 3), {}), (case(2, 4), {}), (case(3, 2, (2,)), {}), (case(1, 1), {}),
            (case(2, 2, (0,)), {}), (case(3, 3, (), np.float32), {}), (complex_case, {})]


solve_sylvester_p.sample = _sample
