"""The linear-algebra primitives on the Numba backend: calls of the native kernels in linalglib.py (LAPACK per
matrix, as the NumPy backend's numpy.linalg and scipy.linalg) and matfunlib.py (expm, sqrtm, logm).

Each lowering passes its operands as C-contiguous stacks (batch, m, n) (a reshape, no copy for arrays of
ours) and writes into arrays allocated once (inside a loop body: before the loop). A kernel that reports a
failure raises the NumPy backend's LinAlgError with its message (the shapes are static, so it is a constant of
the generated code). float32, float64, complex64 and complex128 matrices are compiled.

    >>> _MESSAGES[triangular.cholesky_p]
    'the matrix is not positive definite'
"""
from __future__ import annotations

import numpy as np

from ...core.types import is_complex
from ...primitives import eig, factorizations, matrix_functions, spectral, triangular
from ...primitives.sqrtm_logm import logm_p, sqrtm_p
from .table import PLAIN, opaque
from .writer import Buffer

MATRIX_DTYPES = PLAIN | {np.dtype(np.complex64), np.dtype(np.complex128)}

# what the NumPy backend's LinAlgError says of each routine's failure (backends/numpy/linalg.py)
_MESSAGES = {
    triangular.cholesky_p: "the matrix is not positive definite",
    factorizations.solve_p: "the matrix is singular",
    spectral.eigh_p: "the eigenvalue iteration did not converge",
    spectral.svd_p: "the SVD did not converge",
    matrix_functions.pinv_p: "the SVD did not converge",
    matrix_functions.adjugate_p: "the SVD did not converge",
    eig.eig_p: "the eigenvalue iteration did not converge",
}


def matrix_dtypes(eqn) -> bool:
    return all(np.dtype(atom.aval.dtype) in MATRIX_DTYPES for atom in (*eqn.inputs, *eqn.outputs))


def _every_input(eqn):
    return range(len(eqn.inputs))


def linalg_opaque(*primitives):
    return opaque(*primitives, materialized=_every_input, supports=matrix_dtypes)


def stacked(name: str, shape) -> str:
    """`name` (an array of `shape`) as a C-contiguous (batch, m, n) stack."""
    batch = int(np.prod(shape[:-2], dtype=np.int64))
    return f"np.ascontiguousarray({name}).reshape(({batch}, {shape[-2]}, {shape[-1]}))"


def stacked_vector(name: str, shape) -> str:
    batch = int(np.prod(shape[:-1], dtype=np.int64))
    return f"{name}.reshape(({batch}, {shape[-1]}))"


def check(em, eqn, call: str, detail: str = "") -> None:
    """Emit `call` (a kernel returning 0 or a failure code) and raise the NumPy backend's LinAlgError on failure."""
    shapes = " and ".join(str(tuple(atom.aval.shape)) for atom in eqn.inputs)
    text = f"{eqn.prim.name}: {_MESSAGES[eqn.prim]} ({detail}operands {shapes})"
    em.emit(f"if {call} != 0:")
    em.emit(f"    raise _LinAlgError({text!r})")
    em.raises = True


def _outputs(em, eqn):
    names = [em.allocate(var.aval, "o") for var in eqn.outputs]
    return names, [Buffer(name) for name in names]


@linalg_opaque(triangular.cholesky_p)
def _cholesky(em, eqn):
    (a,) = eqn.inputs
    (out,), sources = _outputs(em, eqn)
    shape = a.aval.shape
    check(em, eqn, f"_la.cholesky({stacked(em.array(a), shape)}, {stacked(out, shape)})")
    return sources


@linalg_opaque(factorizations.solve_p)
def _solve(em, eqn):
    a, b = eqn.inputs
    (out,), sources = _outputs(em, eqn)
    check(em, eqn, f"_la.solve({stacked(em.array(a), a.aval.shape)}, {stacked(em.array(b), b.aval.shape)}, "
                   f"{stacked(out, b.aval.shape)})")
    return sources


@linalg_opaque(matrix_functions.det_p)
def _det(em, eqn):
    (a,) = eqn.inputs
    (out,), sources = _outputs(em, eqn)
    batch = int(np.prod(a.aval.shape[:-2], dtype=np.int64))
    em.emit(f"_la.det({stacked(em.array(a), a.aval.shape)}, {out}.reshape(({batch},)))")
    return sources


@linalg_opaque(factorizations.lu_p)
def _lu(em, eqn):
    (a,) = eqn.inputs
    (packed, pivots, permutation), sources = _outputs(em, eqn)
    shape = a.aval.shape
    em.emit(f"_la.lu({stacked(em.array(a), shape)}, {stacked(packed, shape)}, {stacked_vector(pivots, shape[:-1])}, "
            f"{stacked_vector(permutation, shape[:-1])})")
    return sources


@linalg_opaque(factorizations.lu_pivots_to_permutation_p)
def _pivots_to_permutation(em, eqn):
    (pivots,) = eqn.inputs
    (out,), sources = _outputs(em, eqn)
    operand = stacked_vector(f"np.ascontiguousarray({em.array(pivots)})", pivots.aval.shape)
    em.emit(f"if not _la.pivots_to_permutation({operand}, {stacked_vector(out, eqn.outputs[0].aval.shape)}):")
    em.emit(f"    raise IndexError({f'index out of range in lu_pivots_to_permutation of {pivots.aval}'!r})")
    em.raises = True
    return sources


@linalg_opaque(factorizations.qr_p)
def _qr(em, eqn):
    (a,) = eqn.inputs
    (q, r), sources = _outputs(em, eqn)
    shape = a.aval.shape
    em.emit(f"_la.qr({stacked(em.array(a), shape)}, {stacked(q, eqn.outputs[0].aval.shape)}, "
            f"{stacked(r, eqn.outputs[1].aval.shape)}, {is_complex(a.aval.dtype)})")
    return sources


@linalg_opaque(spectral.eigh_p)
def _eigh(em, eqn):
    (a,) = eqn.inputs
    names, sources = _outputs(em, eqn)
    shape = a.aval.shape
    vectors = stacked(names[1], shape) if eqn.params["compute_v"] else "np.empty((1, 1, 1), {})".format(
        "np." + np.dtype(a.aval.dtype).name)
    kernel = "_la.eigh_complex" if is_complex(a.aval.dtype) else "_la.eigh_real"
    check(em, eqn, f"{kernel}({stacked(em.array(a), shape)}, {stacked_vector(names[0], shape[:-1])}, {vectors}, "
                   f"{eqn.params['compute_v']})")
    return sources


@linalg_opaque(spectral.svd_p)
def _svd(em, eqn):
    (a,) = eqn.inputs
    names, sources = _outputs(em, eqn)
    shape = a.aval.shape
    dtype = "np." + np.dtype(a.aval.dtype).name
    if eqn.params["compute_uv"]:
        u, s, vh = names
        job = "_la.ALL" if eqn.params["full_matrices"] else "_la.SOME"
        u_text, vh_text = stacked(u, eqn.outputs[0].aval.shape), stacked(vh, eqn.outputs[2].aval.shape)
    else:
        (s,) = names
        job, u_text, vh_text = "_la.NONE", f"np.empty((1, 1, 1), {dtype})", f"np.empty((1, 1, 1), {dtype})"
    k = min(shape[-2:])
    batch = int(np.prod(shape[:-2], dtype=np.int64))
    check(em, eqn, f"_la.svd({stacked(em.array(a), shape)}, {s}.reshape(({batch}, {k})), {u_text}, {vh_text}, "
                   f"{job}, {is_complex(a.aval.dtype)})")
    return sources


@linalg_opaque(matrix_functions.pinv_p)
def _pinv(em, eqn):
    (a,) = eqn.inputs
    (out,), sources = _outputs(em, eqn)
    check(em, eqn, f"_la.pinv({stacked(em.array(a), a.aval.shape)}, {float(eqn.params['rcond'])!r}, "
                   f"{stacked(out, eqn.outputs[0].aval.shape)}, {is_complex(a.aval.dtype)})")
    return sources


@linalg_opaque(eig.eig_p)
def _eig(em, eqn):
    (a,) = eqn.inputs
    names, sources = _outputs(em, eqn)
    shape = a.aval.shape
    out_dtype = "np." + np.dtype(eqn.outputs[0].aval.dtype).name
    vectors = stacked(names[1], shape) if eqn.params["compute_v"] else f"np.empty((1, 1, 1), {out_dtype})"
    kernel = "_la.eig_complex" if is_complex(a.aval.dtype) else "_la.eig_real"
    result = em.fresh("failed")
    em.emit(f"{result} = {kernel}({stacked(em.array(a), shape)}, {stacked_vector(names[0], shape[:-1])}, "
            f"{vectors}, {eqn.params['compute_v']})")
    check(em, eqn, f"min({result}, 0)", "Array must not contain infs or NaNs; ")
    check(em, eqn, f"max({result}, 0)")
    return sources


@linalg_opaque(matrix_functions.adjugate_p)
def _adjugate(em, eqn):
    (a,) = eqn.inputs
    (out,), sources = _outputs(em, eqn)
    shape = a.aval.shape
    check(em, eqn, f"_la.adjugate({stacked(em.array(a), shape)}, {stacked(out, shape)}, {is_complex(a.aval.dtype)})")
    return sources


@linalg_opaque(triangular.triangular_solve_p)
def _triangular_solve(em, eqn):
    a, b = eqn.inputs
    (out,), sources = _outputs(em, eqn)
    p = eqn.params
    em.emit(f"_la.triangular_solve({stacked(em.array(a), a.aval.shape)}, {stacked(em.array(b), b.aval.shape)}, "
            f"{stacked(out, b.aval.shape)}, {bool(p['lower'])}, {bool(p['transpose_a'])}, {bool(p['unit_diagonal'])})")
    return sources


@linalg_opaque(matrix_functions.expm_p)
def _expm(em, eqn):
    (a,) = eqn.inputs
    (out,), sources = _outputs(em, eqn)
    shape = a.aval.shape
    kernel = "_mf.expm_complex" if is_complex(a.aval.dtype) else "_mf.expm_real"
    em.emit(f"{kernel}({stacked(em.array(a), shape)}, {stacked(out, shape)})")
    return sources


def _root_failures(em, eqn, what: str) -> None:
    """Raise the NumPy backend's LinAlgError for the failure code `status` of sqrtm or logm (matfunlib.py)."""
    (a,) = eqn.inputs
    name, shape = eqn.prim.name, tuple(a.aval.shape[-2:])
    status = em.fresh("status")
    (out,), sources = _outputs(em, eqn)
    em.emit(f"{status} = _mf.{name}({stacked(em.array(a), a.aval.shape)}, {stacked(out, a.aval.shape)})")
    singular = f"{name}: the matrix of shape {shape} is singular: it has no logarithm"
    infinite = f"{name}: the matrix of shape {shape} has no finite principal {what} (it has a zero eigenvalue)"
    complex_ = (f"{name}: the matrix of shape {shape} has a negative real eigenvalue, so its principal {what} is "
                "not real (under jit and vmap the result's dtype follows the input's: pass a complex matrix, "
                "a.astype(complex))")
    em.emit(f"if {status} >= _mf.SINGULAR:")
    em.emit(f"    raise _LinAlgError({singular!r})")
    em.emit(f"if {status} > 0:")
    em.emit(f"    raise _LinAlgError({infinite!r})")
    em.emit(f"if {status} < 0:")
    em.emit(f"    raise _LinAlgError({complex_!r})")
    em.raises = True
    return sources


def _real_root(eqn) -> bool:
    """Real matrices with real results: complex ones, and complex_result=True, take the NumPy backend's branch-cut
    rotation (backends/numpy/sqrtm_logm.py), which the native kernels do not."""
    return matrix_dtypes(eqn) and not is_complex(eqn.inputs[0].aval.dtype) and not eqn.params.get("complex_result")


@opaque(sqrtm_p, materialized=_every_input, supports=_real_root)
def _sqrtm(em, eqn):
    return _root_failures(em, eqn, "square root")


@opaque(logm_p, materialized=_every_input, supports=_real_root)
def _logm(em, eqn):
    return _root_failures(em, eqn, "logarithm")
