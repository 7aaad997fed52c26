"""NumPy implementation of solve_sylvester (primitives/sylvester.py): Bartels and Stewart's method as SciPy's
solve_sylvester runs it (the real Schur forms A = U R U^H and B^H = V S V^H, then LAPACK's trsyl for
R Y + Y S^H = U^H Q V, and X = U Y V^H), per matrix of a stack, in float64 (complex128 for complex operands),
returned in the operands' dtype; it never writes into them. Where trsyl reports that A and -B have common or
nearly common eigenvalues (a singular equation, which SciPy answers with the solution of a perturbed one) it
raises LinAlgError, as solve does for a singular matrix."""
from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.linalg import lapack

from ...primitives.matrices import LinAlgError
from ...primitives.sylvester import solve_sylvester_p
from .registry import impl


def _one(a, b, q):
    r, u = scipy.linalg.schur(a, output="real")
    s, v = scipy.linalg.schur(b.conj().T, output="real")
    (trsyl,) = lapack.get_lapack_funcs(("trsyl",), (r, s, q))
    y, scale, info = trsyl(r, s, u.conj().T @ q @ v, tranb="C")
    if info != 0:
        raise LinAlgError(f"solve_sylvester: a {a.shape} and -b {b.shape} have common or nearly common eigenvalues, "
                          "so the equation a x + x b = q is singular")
    return u @ (scale * y) @ v.conj().T


@impl(solve_sylvester_p)
def _solve_sylvester(a, b, q):
    out = np.zeros(q.shape, q.dtype)
    if q.size == 0:
        return out
    wide = np.complex128 if np.iscomplexobj(q) else np.float64
    for index in np.ndindex(q.shape[:-2]):
        out[index] = _one(*(np.asarray(v[index], wide) for v in (a, b, q)))
    return out
