"""adarray.sparse: CSR and COO with differentiable values, against SciPy and dense adarray programs, with both
implementations (gathers and segment_sum; reversible kernels)."""
import numpy as np
import pytest
import scipy.sparse

import adarray as ad
import adarray.numpy as anp
import adarray.sparse as sp

RNG = np.random.default_rng(3)


@pytest.fixture(params=sp.matrices.METHODS)
def method(request):
    previous = sp.set_method(request.param)
    yield request.param
    sp.set_method(previous)


def random_matrix(rows, cols, density, seed):
    return scipy.sparse.random(rows, cols, density=density, format="csr", random_state=seed,
                               data_rvs=lambda n: RNG.standard_normal(n))


def dense_of(kind, data, pattern_matrix):
    """The dense matrix holding `data` at the pattern's coordinates, as an adarray program."""
    coo = pattern_matrix.tocoo() if kind == "coo" else None
    if kind == "coo":
        rows, cols = coo.row, coo.col
    else:
        rows = np.repeat(np.arange(pattern_matrix.shape[0]), np.diff(pattern_matrix.indptr))
        cols = pattern_matrix.indices
    return anp.zeros(pattern_matrix.shape).at[rows, cols].add(data)


def build(kind, data, like):
    if kind == "csr":
        return sp.CSR(data, like.indices, like.indptr, like.shape)
    return sp.COO(data, like.row, like.col, like.shape)


@pytest.mark.parametrize("kind", ["csr", "coo"])
def test_operations_match_scipy(kind, method):
    S = random_matrix(7, 5, 0.4, 1)
    A = (sp.CSR if kind == "csr" else sp.COO).from_scipy(S)
    v, B, u = RNG.standard_normal(5), RNG.standard_normal((5, 3)), RNG.standard_normal(7)
    np.testing.assert_allclose(A @ v, S @ v, rtol=1e-14)
    np.testing.assert_allclose(A @ B, S @ B, rtol=1e-14)
    np.testing.assert_allclose(A.T @ u, S.T @ u, rtol=1e-14)
    assert A.T.shape == (5, 7) and type(A.T) is type(A)
    np.testing.assert_allclose((A.T.T @ v), S @ v, rtol=1e-14)
    assert sp.sum(A) == pytest.approx(S.sum(), rel=1e-14)
    np.testing.assert_allclose(sp.sum(A, axis=0), np.ravel(S.sum(0)), rtol=1e-14)
    np.testing.assert_allclose(A.sum(axis=1), np.ravel(S.sum(1)), rtol=1e-14)
    np.testing.assert_allclose((2.0 * A + A).to_scipy().toarray(), 3 * S.toarray(), rtol=1e-14)
    np.testing.assert_allclose((A * A - 1.0).to_scipy().toarray()[S.toarray() != 0],
                               (S.multiply(S).toarray() - 1.0)[S.toarray() != 0], rtol=1e-14)
    np.testing.assert_allclose((A * S.toarray()).to_scipy().toarray(), S.multiply(S).toarray(), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(A.todense()), S.toarray())
    other = random_matrix(7, 5, 0.5, 2)
    assert sp.dot(A, (sp.CSR if kind == "csr" else sp.COO).from_scipy(other)) == pytest.approx(
        S.multiply(other).sum(), rel=1e-13)
    assert sp.dot(A, other.toarray()) == pytest.approx(S.multiply(other).sum(), rel=1e-13)
    assert (type(A.to_scipy()) is scipy.sparse.csr_matrix) == (kind == "csr")


@pytest.mark.parametrize("kind", ["csr", "coo"])
def test_gradients_keep_the_pattern_and_match_dense_programs(kind, method):
    S = random_matrix(6, 6, 0.35, 4)
    like = S if kind == "csr" else S.tocoo()
    data = like.data.copy()
    v = RNG.standard_normal(6)
    other = random_matrix(6, 6, 0.5, 5)
    losses = {
        "matvec": (lambda d, v: anp.sum(anp.sin(build(kind, d, like) @ v)),
                   lambda d, v: anp.sum(anp.sin(dense_of(kind, d, like) @ v))),
        "transpose": (lambda d, v: anp.sum((build(kind, d, like).T @ v) ** 2),
                      lambda d, v: anp.sum((dense_of(kind, d, like).T @ v) ** 2)),
        "dot": (lambda d, v: sp.dot(build(kind, d, like), sp.CSR.from_scipy(other)) * anp.sum(v),
                lambda d, v: anp.sum(dense_of(kind, d, like) * other.toarray()) * anp.sum(v)),
        "elementwise": (lambda d, v: sp.sum(build(kind, d, like) * build(kind, d, like) + 2.0) * v[0],
                        lambda d, v: anp.sum(d * d + 2.0) * v[0]),
    }
    for name, (sparse_loss, dense_loss) in losses.items():
        got = ad.grad(sparse_loss, argnums=(0, 1))(data, v)
        want = ad.grad(dense_loss, argnums=(0, 1))(data, v)
        assert got[0].shape == (like.nnz,), name  # one value per stored entry
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13, err_msg=name)
    h = 1e-6
    step = np.zeros_like(data)
    step[0] = h
    f = losses["matvec"][0]
    assert ad.grad(f)(data, v)[0] == pytest.approx((f(data + step, v) - f(data - step, v)) / (2 * h), rel=1e-6)


def test_the_example_of_the_issue(method):
    S = random_matrix(8, 8, 0.3, 6)
    A = sp.CSR.from_scipy(S)
    B = sp.CSR.from_scipy(random_matrix(8, 8, 0.3, 7))
    gradient = ad.grad(lambda d: sp.dot(sp.CSR(d, A.indices, A.indptr, A.shape), B))(A.data)
    rows = np.repeat(np.arange(8), np.diff(S.indptr))
    np.testing.assert_allclose(gradient, np.asarray(B.to_scipy()[rows, S.indices]).ravel())


def test_matrices_are_pytrees(method):
    S = random_matrix(5, 4, 0.5, 8)
    A, v = sp.CSR.from_scipy(S), RNG.standard_normal(4)
    gradient = ad.grad(lambda A: anp.sum((A @ v) ** 2))(A)
    assert isinstance(gradient, sp.CSR) and gradient.pattern == A.pattern
    rows = np.repeat(np.arange(5), np.diff(S.indptr))
    np.testing.assert_allclose(gradient.data, 2 * (S @ v)[rows] * v[S.indices], rtol=1e-13)
    jitted = ad.jit(lambda A, v: A @ v)
    np.testing.assert_allclose(jitted(A, v), S @ v, rtol=1e-14)
    stacked = np.stack([A.data, -A.data, 3 * A.data])
    batched = ad.vmap(lambda d: sp.CSR(d, A.indices, A.indptr, A.shape) @ v)(stacked)
    np.testing.assert_allclose(batched, [S @ v, -(S @ v), 3 * (S @ v)], rtol=1e-13)
    hessian = ad.hessian(lambda d: anp.sum((sp.CSR(d, A.indices, A.indptr, A.shape) @ v) ** 2))(A.data)
    jacobian = np.zeros((5, A.nnz))
    jacobian[rows, np.arange(A.nnz)] = v[S.indices]
    np.testing.assert_allclose(hessian, 2 * jacobian.T @ jacobian, rtol=1e-12, atol=1e-13)


def test_repeated_coordinates_and_empty_matrices(method):
    coo = sp.COO(np.array([1.0, 2.0, 4.0]), np.array([0, 0, 1]), np.array([1, 1, 0]), (2, 2))  # (0,1) twice
    np.testing.assert_allclose(coo @ np.array([1.0, 10.0]), [30.0, 4.0])
    other = sp.COO(np.array([5.0, 7.0]), np.array([0, 0]), np.array([1, 1]), (2, 2))
    assert sp.dot(coo, other) == (1.0 + 2.0) * (5.0 + 7.0)
    empty = sp.CSR(np.zeros(0), np.zeros(0, int), np.zeros(4, int), (3, 2))
    np.testing.assert_array_equal(empty @ np.ones(2), np.zeros(3))
    assert sp.sum(empty) == 0.0 and sp.dot(empty, empty) == 0.0
    np.testing.assert_array_equal(ad.grad(lambda d: anp.sum(sp.CSR(d, empty.indices, empty.indptr, (3, 2))
                                                            @ np.ones(2)))(np.zeros(0)), np.zeros(0))


def test_bad_input():
    S = random_matrix(4, 3, 0.5, 9)
    A = sp.CSR.from_scipy(S)
    with pytest.raises(ad.ShapeError, match=r"sparse @: a 4 x 3 matrix times an operand of shape \(4,\)"):
        A @ np.ones(4)
    with pytest.raises(ad.ShapeError, match="different patterns"):
        A + sp.CSR.from_scipy(random_matrix(4, 3, 0.5, 10))
    with pytest.raises(ad.ShapeError, match="data has shape"):
        sp.CSR(np.ones(A.nnz + 1), A.indices, A.indptr, A.shape)
    with pytest.raises(ad.ShapeError, match="indptr must rise from 0"):
        sp.CSR(A.data, A.indices, A.indptr[::-1], A.shape)
    with pytest.raises(ad.ShapeError, match=r"column indices must lie in \[0, 2\)"):
        sp.CSR(A.data, A.indices, A.indptr, (4, 2))
    with pytest.raises(ad.ShapeError, match="row and col have different lengths"):
        sp.COO(np.ones(2), np.array([0, 1]), np.array([0]), (2, 2))
    with pytest.raises(ad.ShapeError, match=r"sparse.dot: shapes \(4, 3\) and \(3, 4\) differ"):
        sp.dot(A, A.T)
    with pytest.raises(ad.ArgumentError, match="the pattern is static"):
        ad.grad(lambda i: anp.sum(sp.CSR(A.data, i, A.indptr, A.shape) @ np.ones(3)))(A.indices.astype(float))
    with pytest.raises(ad.ArgumentError, match="the sparse method must be one of"):
        sp.set_method("dense")
