"""Complex linear algebra: anp.linalg and adarray.scipy.linalg on complex matrices against NumPy and
SciPy (values), derivatives against finite differences (through functions that do not depend on
the phases of eigenvectors and singular vectors, which LAPACK chooses freely), the adjoint test of
the eigh and svd rules themselves, and JAX."""
import numpy as np
import pytest
import scipy.linalg as sl

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.linalg as asl
from adarray.testing import check_grads, check_second_order, check_vjp
from adarray.testing.registry import primitive_program

RNG = np.random.default_rng(11)


def cn(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


A = cn(3, 3) + 3 * np.eye(3)
B = cn(3, 2)
HERMITIAN = A @ A.conj().T + np.eye(3)
TALL, WIDE = cn(4, 3), cn(2, 4)


def hermitian_part(x):  # what eigh and cholesky read: the lower triangle, a real diagonal
    return np.tril(x, -1) + np.tril(x, -1).conj().T + np.diag(np.diag(x).real)


VALUES = [  # (label, ours, NumPy's or SciPy's, arguments)
    ("solve", anp.linalg.solve, np.linalg.solve, (A, B)),
    ("solve-vector", anp.linalg.solve, np.linalg.solve, (A, B[:, 0])),
    ("inv", anp.linalg.inv, np.linalg.inv, (A,)),
    ("det", anp.linalg.det, np.linalg.det, (A,)),
    ("slogdet", anp.linalg.slogdet, np.linalg.slogdet, (A,)),
    ("matrix_power", lambda a: anp.linalg.matrix_power(a, 3), lambda a: np.linalg.matrix_power(a, 3), (A,)),
    ("cholesky", anp.linalg.cholesky, np.linalg.cholesky, (HERMITIAN,)),
    ("cholesky-upper", lambda a: anp.linalg.cholesky(a, upper=True), lambda a: np.linalg.cholesky(a, upper=True),
     (HERMITIAN,)),
    ("eigvalsh", anp.linalg.eigvalsh, np.linalg.eigvalsh, (HERMITIAN,)),
    ("eigvalsh-U", lambda a: anp.linalg.eigvalsh(a, "U", symmetrize_input=False), lambda a: np.linalg.eigvalsh(a, "U"),
     (np.triu(A),)),
    ("eigvalsh-symmetrized", anp.linalg.eigvalsh, lambda a: np.linalg.eigvalsh((a + a.conj().T) / 2), (A,)),
    ("eigvals", anp.linalg.eigvals, np.linalg.eigvals, (A,)),
    ("svdvals", lambda a: anp.linalg.svd(a, compute_uv=False), lambda a: np.linalg.svd(a, compute_uv=False), (TALL,)),
    ("qr", anp.linalg.qr, np.linalg.qr, (TALL,)),
    ("qr-wide", anp.linalg.qr, np.linalg.qr, (WIDE,)),
    ("pinv", anp.linalg.pinv, np.linalg.pinv, (TALL,)),
    ("lstsq", lambda a, b: anp.linalg.lstsq(a, b)[:2], lambda a, b: np.linalg.lstsq(a, b)[:2], (TALL, cn(4, 2))),
    ("norm", anp.linalg.norm, np.linalg.norm, (TALL,)),
    ("norm-2", lambda a: anp.linalg.norm(a, 2), lambda a: np.linalg.norm(a, 2), (TALL,)),
    ("norm-nuc", lambda a: anp.linalg.norm(a, "nuc"), lambda a: np.linalg.norm(a, "nuc"), (TALL,)),
    ("norm-1", lambda a: anp.linalg.norm(a, 1), lambda a: np.linalg.norm(a, 1), (TALL,)),
    ("norm-vector-3", lambda a: anp.linalg.norm(a, 3), lambda a: np.linalg.norm(a, 3), (TALL[0],)),
    ("norm-vector-0", lambda a: anp.linalg.norm(a, 0), lambda a: np.linalg.norm(a, 0), (TALL[0],)),
    ("solve_triangular-C", lambda a, b: asl.solve_triangular(a, b, trans="C", lower=True),
     lambda a, b: sl.solve_triangular(a, b, trans="C", lower=True), (A, B)),
    ("cho_solve", lambda a, b: asl.cho_solve(asl.cho_factor(a), b), lambda a, b: sl.cho_solve(sl.cho_factor(a), b),
     (HERMITIAN, B)),
    ("lu_solve-C", lambda a, b: asl.lu_solve(asl.lu_factor(a), b, trans=2),
     lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=2), (A, B)),
    ("expm", asl.expm, sl.expm, (0.5 * A,)),
]


@pytest.mark.parametrize("label, ours, theirs, args", VALUES, ids=[v[0] for v in VALUES])
def test_values_match_numpy_and_scipy(label, ours, theirs, args):
    got, want = ours(*args), theirs(*args)
    for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
        assert np.asarray(g).dtype == np.asarray(w).dtype, label
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=label)


def test_decompositions_reconstruct_their_matrix():
    w, v = anp.linalg.eigh(np.tril(HERMITIAN), symmetrize_input=False)
    np.testing.assert_allclose(v @ np.diag(w) @ v.conj().T, HERMITIAN, atol=1e-12)
    u, s, vh = anp.linalg.svd(TALL, full_matrices=False)
    np.testing.assert_allclose((u * s) @ vh, TALL, atol=1e-12)
    w, v = anp.linalg.eig(A)
    np.testing.assert_allclose(A @ v, v * w, atol=1e-12)
    w, v = anp.linalg.eig(np.array([[0.0, -1.0], [1.0, 0.0]]))  # real matrix, complex eigenvalues
    assert w.dtype == np.complex128 and np.allclose(sorted(w.imag), [-1, 1])


DERIVATIVES = [  # functions of complex matrices whose values do not depend on LAPACK's phases
    ("solve", lambda a, b: anp.linalg.solve(a, b), (A, B)),
    ("inv-det", lambda a: (anp.linalg.inv(a), anp.linalg.det(a)), (A,)),
    ("slogdet", lambda a: anp.linalg.slogdet(a), (A,)),
    ("cholesky", anp.linalg.cholesky, (HERMITIAN,)),
    ("eigh", lambda a: (anp.linalg.eigvalsh(a), anp.abs(anp.linalg.eigh(a)[1]),
                        (lambda w, v: v @ (anp.exp(w)[:, None] * anp.conj(v.T)))(*anp.linalg.eigh(a))),
     (HERMITIAN,)),
    ("svd", lambda a: (lambda u, s, vh: (u @ vh, s, anp.abs(u), anp.abs(vh)))(*anp.linalg.svd(a, False)), (TALL,)),
    ("svd-wide-full", lambda a: (lambda u, s, vh: (anp.abs(u), s, anp.conj(vh.T) @ vh))(*anp.linalg.svd(a)), (WIDE,)),
    ("eig", lambda a: (lambda w, v: (w, v, anp.abs(v)))(*anp.linalg.eig(a)), (A,)),
    ("eig-real", lambda a: (lambda w, v: (w, v))(*anp.linalg.eig(a)), (A.real,)),
    ("qr", lambda a: anp.linalg.qr(a), (TALL,)),
    ("qr-wide", lambda a: anp.linalg.qr(a), (WIDE,)),
    ("pinv-lstsq", lambda a, b: (anp.linalg.pinv(a), anp.linalg.lstsq(a, b)[0]), (TALL, cn(4, 2))),
    ("norms", lambda a: (anp.linalg.norm(a), anp.linalg.norm(a, 2), anp.linalg.norm(a, "nuc"),
                         anp.linalg.norm(a[0], 3)), (TALL,)),
    ("scipy", lambda a, b: (asl.cho_solve(asl.cho_factor(a, lower=True), b), asl.solve_triangular(a, b, trans=2),
                            asl.lu_solve(asl.lu_factor(a), b, trans=2), asl.expm(0.3 * a)), (HERMITIAN, B)),
]


@pytest.mark.parametrize("label, fn, args", DERIVATIVES, ids=[d[0] for d in DERIVATIVES])
def test_derivatives_to_second_order(label, fn, args):
    check_grads(fn, args, order=2)


@pytest.mark.parametrize("name, a, params", [
    ("eigh", np.tril(HERMITIAN), {"compute_v": True}),
    ("svd", TALL, {"full_matrices": False, "compute_uv": True}),
    ("svd", TALL, {"full_matrices": True, "compute_uv": True}),
    ("svd", WIDE, {"full_matrices": True, "compute_uv": True}),
    ("svd", A, {"full_matrices": False, "compute_uv": True}),
])
def test_eigenvector_and_singular_vector_rules_are_adjoint(name, a, params):
    """Phases aside, the jvp and vjp rules of the vectors are each other's transpose, to second order."""
    program = primitive_program(name, [a], params)
    check_vjp(program, [a], RNG)
    check_second_order(program, [a], RNG, finite_differences=False)


def test_eig_vectors_have_lapacks_normalisation_and_its_derivative():
    def largest_real(v):
        rows = np.argmax(np.abs(v), axis=0)
        return v[rows, np.arange(v.shape[1])]

    _, v = anp.linalg.eig(A)
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0)
    assert np.all(np.abs(largest_real(v).imag) < 1e-14)
    tangent = cn(3, 3)
    _, dv = ad.jvp(lambda a: anp.linalg.eig(a)[1], (A,), (tangent,))
    h = 1e-6
    numeric = (np.linalg.eig(A + h * tangent)[1] - np.linalg.eig(A - h * tangent)[1]) / (2 * h)
    np.testing.assert_allclose(dv, numeric, atol=1e-7)


def test_degenerate_complex_matrices_keep_finite_derivatives():
    g = ad.grad(lambda a: anp.sum(anp.linalg.eigvalsh(a) ** 2))(np.eye(3, dtype=complex))
    np.testing.assert_allclose(g, 2 * np.eye(3), atol=1e-12)
    g = ad.grad(lambda a: anp.linalg.norm(a, "nuc"))(np.diag([2.0, 1.0, 0.0]).astype(complex))
    assert np.all(np.isfinite(g))


# --- against JAX -----------------------------------------------------------------------------------

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

PAIRS = [
    ("solve", lambda m, a: m.real(m.sum(m.linalg.solve(a, a.T @ a) ** 2))),
    ("det", lambda m, a: m.abs(m.linalg.det(a)) + m.imag(m.linalg.det(a @ a))),
    ("slogdet", lambda m, a: m.linalg.slogdet(a)[1] + m.real(m.linalg.slogdet(a)[0])),
    ("eigh", lambda m, a: m.sum(m.linalg.eigh(a @ m.conj(a.T))[0] ** 3)
     + m.sum(m.abs(m.linalg.eigh(a @ m.conj(a.T))[1][0]) ** 2 * m.arange(3))),
    ("svd", lambda m, a: m.sum(m.linalg.svd(a, compute_uv=False) ** 3)
     + m.real(m.sum((lambda u, s, vh: u @ vh)(*m.linalg.svd(a, full_matrices=False)) * m.arange(9.0).reshape(3, 3)))),
    ("eigvals", lambda m, a: m.real(m.sum(m.linalg.eigvals(a) ** 2 * (1 + 2j)))),
    ("cholesky", lambda m, a: m.real(m.sum(m.linalg.cholesky(a @ m.conj(a.T)) * m.arange(9.0).reshape(3, 3)))),
    ("qr", lambda m, a: m.real(m.sum(m.linalg.qr(a)[1] * m.arange(9.0).reshape(3, 3)))),
    ("pinv", lambda m, a: m.imag(m.sum(m.linalg.pinv(a) * m.arange(9.0).reshape(3, 3)))),
    ("norm", lambda m, a: m.linalg.norm(a) + m.linalg.norm(a, 2) + m.linalg.norm(a, "nuc")),
    ("expm", lambda m, a: m.real(m.sum(jax.scipy.linalg.expm(0.3 * a) if m is jnp else asl.expm(0.3 * a)))),
]


@pytest.mark.parametrize("label, fn", PAIRS, ids=[p[0] for p in PAIRS])
def test_gradients_match_jax(label, fn):
    with jax.enable_x64(True):
        expected = np.asarray(jax.grad(lambda a: fn(jnp, a))(jnp.asarray(A)))
    np.testing.assert_allclose(ad.grad(lambda a: fn(anp, a))(A), expected, rtol=1e-9, atol=1e-11)
