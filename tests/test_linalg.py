"""anp.linalg: values against NumPy, derivatives against finite differences, vmap against loops,
shape errors at trace time, and the norms (every ord, axis, keepdims, traced lists, zero vectors)."""
from __future__ import annotations

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
import adarray.numpy.linalg as la
from adarray.core.types import Aval
from adarray.testing import check_jvp, check_second_order, check_vjp, check_vmap, numerical_gradient
from adarray.tracing import trace_program

RNG = np.random.default_rng(20240611)


def spd(shape, dtype=np.float64, rng=RNG):
    n = shape[-1]
    b = rng.normal(size=shape)
    return (b @ np.swapaxes(b, -1, -2) + n * np.eye(n)).astype(dtype)


def general(shape, dtype=np.float64, rng=RNG):
    """Well-conditioned square matrices (a shifted random matrix) or plain random rectangles."""
    a = rng.normal(size=shape)
    if shape[-1] == shape[-2]:
        a = a + 2.5 * np.eye(shape[-1])
    return a.astype(dtype)


def program_of(fn, *args):
    avals = [Aval(np.shape(a), np.asarray(a).dtype) for a in args]
    program, _, _ = trace_program(fn, avals, getattr(fn, "__name__", "f"))
    return program


def check_derivatives(fn, *args, second_order=True, vmap=True, seed=0):
    """jvp vs central differences, the adjoint test, the same on the derivative programs, vmap vs a loop."""
    args = [np.asarray(a) for a in args]
    program = program_of(fn, *args)
    rng = np.random.default_rng(seed)
    check_jvp(program, args, rng)
    check_vjp(program, args, rng)
    if second_order:
        check_second_order(program, args, rng)
    if vmap:
        check_vmap(program, args, rng)


# --- values equal NumPy's ---------------------------------------------------------------------------

SQUARE_SHAPES = [(3, 3), (1, 1), (2, 4, 4), (0, 3, 3), (2, 0, 0)]


@pytest.mark.parametrize("shape", SQUARE_SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_square_functions_equal_numpy(shape, dtype):
    a = general(shape, dtype)
    s = spd(shape, dtype)
    b = RNG.normal(size=shape[:-1] + (2,)).astype(dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    pairs = [
        (la.solve(a, b), np.linalg.solve(a, b)),
        (la.inv(a), np.linalg.inv(a)),
        (la.det(a), np.linalg.det(a)),
        (la.slogdet(a)[0], np.linalg.slogdet(a)[0]),
        (la.slogdet(a)[1], np.linalg.slogdet(a)[1]),
        (la.cholesky(s), np.linalg.cholesky(s)),
        (la.cholesky(s, upper=True), np.linalg.cholesky(s, upper=True)),
        (la.eigvalsh(s), np.linalg.eigvalsh(s)),
        (la.eigh(s)[0], np.linalg.eigh(s)[0]),
        (la.matrix_power(a, 3), np.linalg.matrix_power(a, 3)),
        (la.matrix_power(a, -2), np.linalg.matrix_power(a, -2)),
        (la.matrix_power(a, 0), np.linalg.matrix_power(a, 0)),
        (la.pinv(a), np.linalg.pinv(a)),
        (la.svd(a, compute_uv=False), np.linalg.svd(a, compute_uv=False)),
    ]
    for ours, theirs in pairs:
        assert np.shape(ours) == np.shape(theirs)
        assert np.asarray(ours).dtype == np.asarray(theirs).dtype
        np.testing.assert_allclose(ours, theirs, **tol)


def test_vector_right_hand_side_and_broadcast_batches_follow_numpy2():
    a = general((2, 3, 3))
    for b in [RNG.normal(size=3), RNG.normal(size=(3, 2)), RNG.normal(size=(4, 1, 3, 2))]:
        np.testing.assert_allclose(la.solve(a, b), np.linalg.solve(a, b), rtol=1e-10)
    b = RNG.normal(size=(5, 3, 1))
    np.testing.assert_allclose(la.solve(a[0], b), np.linalg.solve(a[0], b), rtol=1e-10)
    assert la.solve(a, RNG.normal(size=3)).shape == (2, 3)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 2), (0, 3, 2), (1, 1)])
def test_factorisations_reconstruct_and_match_numpy(shape):
    a = RNG.normal(size=shape)
    for mode in ("reduced", "complete"):
        q, r = la.qr(a, mode=mode)
        q_np, r_np = np.linalg.qr(a, mode=mode)
        np.testing.assert_allclose(q, q_np, atol=1e-12)
        np.testing.assert_allclose(r, r_np, atol=1e-12)
    np.testing.assert_allclose(la.qr(a, mode="r"), np.linalg.qr(a, mode="r"), atol=1e-12)
    for full in (True, False):
        u, s, vh = la.svd(a, full_matrices=full)
        u_np, s_np, vh_np = np.linalg.svd(a, full_matrices=full)
        assert u.shape == u_np.shape and vh.shape == vh_np.shape
        np.testing.assert_allclose(s, s_np, atol=1e-12)
        k = min(shape[-2:])
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-12)
    result = la.eigh(spd(shape[:-1] + (shape[-2],)))
    assert result.eigenvalues is result[0] and result.eigenvectors is result[1]


def test_eigh_and_cholesky_without_symmetrize_input_read_only_their_triangle():
    s = spd((4, 4))
    noisy_upper = np.tril(s) + np.triu(RNG.normal(size=(4, 4)), 1)
    noisy_lower = np.triu(s) + np.tril(RNG.normal(size=(4, 4)), -1)
    np.testing.assert_allclose(la.cholesky(noisy_upper, symmetrize_input=False), np.linalg.cholesky(s), rtol=1e-12)
    np.testing.assert_allclose(la.cholesky(noisy_lower, upper=True, symmetrize_input=False), np.linalg.cholesky(s).T,
                               rtol=1e-12)
    np.testing.assert_allclose(la.eigvalsh(noisy_lower, UPLO="U", symmetrize_input=False), np.linalg.eigvalsh(s),
                               rtol=1e-12)
    # and the derivative is taken with respect to that triangle: the other gets a zero gradient
    grad = ad.grad(lambda a: anp.sum(la.cholesky(a, symmetrize_input=False) ** 2))(noisy_upper)
    assert not np.any(np.triu(grad, 1))
    grad = ad.grad(lambda a: anp.sum(la.eigvalsh(a, UPLO="U", symmetrize_input=False) ** 3))(noisy_lower)
    assert not np.any(np.tril(grad, -1))
    # by default (JAX's convention) they see the symmetric part (a + a^T) / 2, whatever UPLO says
    for a in (noisy_upper, noisy_lower):
        half = (a + a.T) / 2
        np.testing.assert_allclose(la.eigvalsh(a, UPLO="U"), np.linalg.eigvalsh(half), rtol=1e-12)
        np.testing.assert_allclose(la.eigvalsh(a), np.linalg.eigvalsh(half), rtol=1e-12)


def test_lstsq_matrix_rank_multi_dot_equal_numpy():
    a, b = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 2))
    for rhs in (b, b[:, 0]):
        ours, theirs = la.lstsq(a, rhs), np.linalg.lstsq(a, rhs)
        for x, y in zip(ours, theirs):
            assert np.shape(x) == np.shape(y)
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)
    deficient = RNG.normal(size=(6, 2)) @ RNG.normal(size=(2, 3))
    for x, y in zip(la.lstsq(deficient, b), np.linalg.lstsq(deficient, b)):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_allclose(x, y, rtol=1e-8, atol=1e-10)
    wide = RNG.normal(size=(2, 4))
    for x, y in zip(la.lstsq(wide, b[:2]), np.linalg.lstsq(wide, b[:2])):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)
    assert la.matrix_rank(deficient) == np.linalg.matrix_rank(deficient) == 2
    stack = np.stack([deficient, a])
    np.testing.assert_array_equal(la.matrix_rank(stack), np.linalg.matrix_rank(stack))
    assert la.matrix_rank(np.zeros(3)) == 0 and la.matrix_rank(np.ones(3)) == 1
    chain = [RNG.normal(size=3), RNG.normal(size=(3, 10)), RNG.normal(size=(10, 2)), RNG.normal(size=(2, 4))]
    np.testing.assert_allclose(la.multi_dot(chain), np.linalg.multi_dot(chain), rtol=1e-12)
    for chain in ([RNG.normal(size=(2, 3)), RNG.normal(size=3)],
                  [RNG.normal(size=4), RNG.normal(size=(4, 3)), RNG.normal(size=3)],
                  [RNG.normal(size=(5, 2)), RNG.normal(size=(2, 6)), RNG.normal(size=(6, 1))]):
        ours = la.multi_dot(chain)
        assert np.shape(ours) == np.shape(np.linalg.multi_dot(chain))
        np.testing.assert_allclose(ours, np.linalg.multi_dot(chain), rtol=1e-12)


def test_inputs_are_never_written():
    a, s, b = general((3, 3)), spd((3, 3)), RNG.normal(size=(3, 2))
    for x in (a, s, b):
        x.flags.writeable = False
    copies = [a.copy(), s.copy(), b.copy()]
    la.solve(a, b), la.inv(a), la.det(a), la.slogdet(a), la.cholesky(s), la.qr(a), la.eigh(s), la.svd(a)
    la.pinv(a), la.lstsq(a, b), la.norm(a, "nuc")
    ad.grad(lambda a: anp.sum(la.solve(a, b)) + la.det(a) + anp.sum(la.eigh(a)[0] ** 2))(s)
    for x, y in zip((a, s, b), copies):
        np.testing.assert_array_equal(x, y)


# --- derivatives ------------------------------------------------------------------------------------

DERIVED = {
    "solve": (lambda a, b: la.solve(a, b), lambda: [general((3, 3)), RNG.normal(size=(3, 2))]),
    "solve_vector": (lambda a, b: la.solve(a, b), lambda: [general((2, 3, 3)), RNG.normal(size=3)]),
    "inv": (la.inv, lambda: [general((2, 3, 3))]),
    "det": (la.det, lambda: [general((3, 3))]),
    "slogdet": (lambda a: la.slogdet(a)[1], lambda: [general((2, 3, 3))]),
    "slogdet_negative": (lambda a: la.slogdet(a)[1], lambda: [-general((3, 3))]),
    "cholesky": (la.cholesky, lambda: [spd((2, 3, 3))]),
    "cholesky_upper": (lambda a: la.cholesky(a, upper=True), lambda: [spd((3, 3))]),
    "eigvalsh": (la.eigvalsh, lambda: [spd((3, 3))]),
    "matrix_power": (lambda a: la.matrix_power(a, 3), lambda: [0.5 * general((3, 3))]),
    "matrix_power_negative": (lambda a: la.matrix_power(a, -2), lambda: [general((3, 3))]),
    "pinv_tall": (la.pinv, lambda: [RNG.normal(size=(4, 2))]),
    "lstsq": (lambda a, b: la.lstsq(a, b)[0], lambda: [RNG.normal(size=(5, 3)), RNG.normal(size=5)]),
    "lstsq_residuals": (lambda a, b: la.lstsq(a, b)[1], lambda: [RNG.normal(size=(5, 2)), RNG.normal(size=(5, 2))]),
    "multi_dot": (lambda a, b, c: la.multi_dot([a, b, c]),
                  lambda: [RNG.normal(size=3), RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))]),
    "svdvals": (la.svdvals, lambda: [RNG.normal(size=(4, 3))]),
}


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_derivatives_of_compositions(name):
    fn, make_args = DERIVED[name]
    check_derivatives(fn, *make_args())


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "cholesky", "eigvalsh", "matrix_power_negative"])
def test_hessian_equals_forward_over_forward(name):
    fn, make_args = DERIVED[name]
    (x,) = make_args()
    x = x[0] if x.ndim == 3 else x

    def loss(a):
        return anp.sum(anp.sin(fn(a)))

    hessian = ad.hessian(loss)(x)
    np.testing.assert_allclose(hessian, ad.jacfwd(ad.jacfwd(loss))(x), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(hessian, ad.jacrev(ad.jacrev(loss))(x), rtol=1e-8, atol=1e-10)
    by_differences = numerical_gradient(ad.grad(loss), x, eps=1e-5).reshape(hessian.shape)
    np.testing.assert_allclose(hessian, by_differences, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [la.inv, la.det, lambda a: la.slogdet(a)[1], la.cholesky, la.eigvalsh,
                                lambda a: la.qr(a)[1], la.svdvals, la.pinv, lambda a: la.norm(a, 2)],
                         ids=["inv", "det", "slogdet", "cholesky", "eigvalsh", "qr", "svdvals", "pinv", "norm2"])
def test_vmap_equals_a_loop(fn):
    stack = spd((4, 3, 3))
    batched = ad.vmap(fn)(stack)
    np.testing.assert_allclose(batched, np.stack([fn(x) for x in stack]), rtol=1e-10, atol=1e-12)
    grads = ad.vmap(ad.grad(lambda a: anp.sum(fn(a))))(stack)
    np.testing.assert_allclose(grads, np.stack([ad.grad(lambda a: anp.sum(fn(a)))(x) for x in stack]),
                               rtol=1e-9, atol=1e-11)


def test_vmap_with_an_unbatched_operand():
    a, bs = general((3, 3)), RNG.normal(size=(5, 3))
    np.testing.assert_allclose(ad.vmap(la.solve, in_axes=(None, 0))(a, bs), np.linalg.solve(a, bs.T).T, rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float32_stays_float32_through_gradients(dtype):
    a = general((3, 3), dtype)
    grad = ad.grad(lambda a: anp.sum(la.inv(a)) + la.slogdet(a)[1] + anp.sum(la.svdvals(a)))(a)
    assert grad.dtype == dtype
    expected = ad.grad(lambda a: anp.sum(la.inv(a)) + la.slogdet(a)[1] + anp.sum(la.svdvals(a)))(a.astype(np.float64))
    np.testing.assert_allclose(grad, expected, rtol=1e-3 if dtype == np.float32 else 1e-12, atol=1e-4)


# --- errors ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, words", [
    (lambda: la.solve(np.ones((3, 4)), np.ones(3)), ["linalg.solve", "(3, 4)"]),
    (lambda: la.solve(np.eye(3), np.ones(4)), ["linalg.solve", "(3, 3)", "(4,)"]),
    (lambda: la.solve(np.eye(3), np.ones((2, 3))), ["linalg.solve", "(2, 3)"]),
    (lambda: la.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1))), ["linalg.solve", "(2,)", "(4,)"]),
    (lambda: la.inv(np.ones(3)), ["linalg.inv", "(3,)"]),
    (lambda: la.det(np.ones((2, 3))), ["linalg.det", "(2, 3)"]),
    (lambda: la.cholesky(np.ones((2, 3))), ["linalg.cholesky", "(2, 3)"]),
    (lambda: la.eigh(np.ones((3, 2))), ["linalg.eigh", "(3, 2)"]),
    (lambda: la.svd(np.ones(3)), ["linalg.svd", "(3,)"]),
    (lambda: la.qr(np.ones(3)), ["linalg.qr", "(3,)"]),
    (lambda: la.multi_dot([np.ones((2, 3)), np.ones((4, 2))]), ["multi_dot"]),
    (lambda: la.norm(np.ones((2, 2, 2)), ord=1), ["linalg.norm", "(2, 2, 2)"]),
    (lambda: la.lstsq(np.ones((3, 2)), np.ones(4)), ["linalg.lstsq", "(3, 2)", "(4,)"]),
])
def test_bad_shapes_raise_shape_errors_at_trace_time(call, words):
    with pytest.raises(ad.ShapeError) as plain:
        call()
    for word in words:
        assert word in str(plain.value)


def test_shape_errors_happen_while_tracing():
    with pytest.raises(ad.ShapeError, match=r"linalg.solve.*\(3, 3\).*\(4,\)"):
        ad.grad(lambda a: anp.sum(la.solve(a, np.ones(4))))(np.eye(3))
    with pytest.raises(ad.ShapeError, match=r"linalg.cholesky"):
        ad.make_ir(la.cholesky)(np.ones((2, 3)))


def test_failures_of_the_routine_are_linalg_errors():
    not_pd = np.array([[1.0, 2.0], [2.0, 1.0]])
    for call in (lambda: la.cholesky(not_pd), lambda: la.solve(np.zeros((2, 2)), np.ones(2)),
                 lambda: ad.jit(la.inv)(np.ones((2, 2)))):
        with pytest.raises(la.LinAlgError) as caught:
            call()
        assert isinstance(caught.value, np.linalg.LinAlgError) and isinstance(caught.value, ad.Error)
    assert "positive definite" in str(pytest.raises(la.LinAlgError, la.cholesky, not_pd).value)


def test_bad_arguments():
    with pytest.raises(ad.ArgumentError, match="vectors"):
        la.norm(np.ones(3), "fro")
    with pytest.raises(ad.ArgumentError, match="matrices"):
        la.norm(np.ones((2, 2)), 3)
    with pytest.raises(ad.ArgumentError, match="UPLO"):
        la.eigh(np.eye(2), UPLO="X")
    with pytest.raises(ad.ArgumentError, match="integer"):
        la.matrix_power(np.eye(2), 1.5)
    with pytest.raises(ad.UnsupportedError, match="raw"):
        la.qr(np.eye(2), mode="raw")


# --- norms --------------------------------------------------------------------------------------------

VECTOR_ORDS = [None, 0, 1, 2, 3, 4, 0.5, 1.5, -1, -2, np.inf, -np.inf]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norms_equal_numpy_and_differentiate(ord):
    x = RNG.normal(size=(3, 4))
    for axis in (0, 1, -1):
        for keepdims in (False, True):
            np.testing.assert_allclose(la.norm(x, ord, axis, keepdims), np.linalg.norm(x, ord, axis, keepdims),
                                       rtol=1e-12)
    v = x[0]
    np.testing.assert_allclose(la.norm(v, ord), np.linalg.norm(v, ord), rtol=1e-12)
    if ord != 0:
        np.testing.assert_allclose(ad.grad(lambda v: la.norm(v, ord))(v),
                                   numerical_gradient(lambda v: np.linalg.norm(v, ord), v), rtol=1e-6, atol=1e-8)
        check_derivatives(lambda x: la.norm(x, ord, axis=1), x, vmap=False)
    else:
        assert not np.any(ad.grad(lambda v: la.norm(v, 0))(v))


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norms_equal_numpy_and_differentiate(ord):
    x = RNG.normal(size=(3, 4, 5))
    for axis in ((1, 2), (2, 1), (0, 2), (-1, 0)):
        for keepdims in (False, True):
            np.testing.assert_allclose(la.norm(x, ord, axis, keepdims), np.linalg.norm(x, ord, axis, keepdims),
                                       rtol=1e-11)
    m = x[0]
    np.testing.assert_allclose(la.norm(m, ord), np.linalg.norm(m, ord), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(lambda m: la.norm(m, ord))(m),
                               numerical_gradient(lambda m: np.linalg.norm(m, ord), m), rtol=1e-6, atol=1e-8)
    check_derivatives(lambda x: la.norm(x, ord, axis=(2, 0)), x[:, :3, :2], vmap=False)


def test_norm_defaults_scalars_integers_and_array_api_names():
    for x in (np.array(3.0), RNG.normal(size=(2, 3, 4)), np.arange(6).reshape(2, 3)):
        np.testing.assert_allclose(la.norm(x), np.linalg.norm(x), rtol=1e-12)
        np.testing.assert_allclose(la.norm(x, keepdims=True), np.linalg.norm(x, keepdims=True), rtol=1e-12)
    x = RNG.normal(size=(2, 3, 4))
    for ord in (2, 1, np.inf, 3):
        np.testing.assert_allclose(la.vector_norm(x, ord=ord, axis=(0, 2), keepdims=True),
                                   np.linalg.vector_norm(x, ord=ord, axis=(0, 2), keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(la.matrix_norm(x, ord="nuc"), np.linalg.matrix_norm(x, ord="nuc"), rtol=1e-12)
    assert la.norm(np.ones(3, np.float32)).dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ad.jit(lambda v: v)(x)), la.norm(x))


def test_norm_of_a_list_of_traced_values():
    def distance(a, b):
        return la.norm([a[0] - b[0], a[1] - b[1], 2.0])

    a, b = np.array([1.0, 2.0]), np.array([4.0, 6.0])
    assert np.isclose(distance(a, b), np.sqrt(29.0))
    grad_a = ad.grad(distance)(a, b)
    np.testing.assert_allclose(grad_a, (a - b) / np.sqrt(29.0), rtol=1e-12)
    assert np.isclose(ad.grad(lambda t: la.norm([t, 2 * t]))(1.0), np.sqrt(5.0))


def test_norm_through_numpy_dispatch_on_traced_values():
    x = RNG.normal(size=(3, 3))
    np.testing.assert_allclose(ad.grad(lambda a: np.linalg.norm(a, "fro"))(x), x / np.linalg.norm(x), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(lambda a: np.linalg.det(a))(x), np.linalg.det(x) * np.linalg.inv(x).T,
                               rtol=1e-10)


@pytest.mark.parametrize("ord", [None, 2, 1, 3, 0.5, np.inf])
def test_norm_gradient_at_zero_is_zero(ord):
    """The README's promise for ord None / 2 / 'fro', and the same subgradient for every p > 0."""
    assert ad.grad(lambda v: la.norm(v, ord))(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    assert ad.grad(lambda v: anp.sum(la.norm(v, ord, axis=1)))(np.zeros((2, 3))).tolist() == [[0.0] * 3] * 2
    assert ad.grad(lambda m: la.norm(m, "fro"))(np.zeros((2, 2))).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert ad.grad(anp.linalg.norm)(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("ord", [None, 3, 1.5, "nuc"])
def test_norm_hessian(ord):
    x = RNG.normal(size=(3, 2) if ord == "nuc" else 4)

    def loss(v):
        return la.norm(v, ord)

    hessian = ad.hessian(loss)(x)
    np.testing.assert_allclose(hessian, ad.jacfwd(ad.jacfwd(loss))(x), rtol=1e-10)
    np.testing.assert_allclose(hessian, numerical_gradient(ad.grad(loss), x, 1e-5).reshape(hessian.shape),
                               rtol=1e-5, atol=1e-7)
