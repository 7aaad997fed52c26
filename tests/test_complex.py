"""Complex numbers through adarray: values against NumPy, derivatives against finite differences in
the real and imaginary directions and against JAX (its conventions: grad of a real f(z) is
df/dx - i df/dy, holomorphic=True gives f'(z), vjp is the linear transpose), and a clear ShapeError
wherever an operation has no complex meaning (never a silent cast to real)."""
import numpy as np
import pytest
import scipy.special

import adarray as ad
import adarray.numpy as anp
from adarray.core.parser import parse_program
from adarray.core.printer import format_program
from adarray.testing import check_grads

RNG = np.random.default_rng(7)
Z = np.array([0.7 + 0.4j, -0.3 + 1.1j, 1.5 - 0.2j])
W = np.array([[0.2 - 0.5j, 1.0 + 0.3j, -0.4 + 0.1j], [0.6 + 0.6j, -1.2 - 0.1j, 0.3 + 0.9j]])

HOLOMORPHIC = ["exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
               "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "log2", "log10", "exp2", "square", "reciprocal",
               "sinc"]


def test_the_reported_case_stays_complex():
    out = anp.sin(np.array([1 + 2j]))
    assert np.iscomplexobj(out)
    np.testing.assert_allclose(out, np.sin(np.array([1 + 2j])), rtol=1e-15)


@pytest.mark.parametrize("name", HOLOMORPHIC)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_holomorphic_functions_match_numpy(name, dtype):
    z = Z.astype(dtype)
    out = getattr(anp, name)(z)
    expected = getattr(np, name)(z)
    assert np.asarray(out).dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-6 if dtype == np.complex64 else 1e-14)


@pytest.mark.parametrize("name", HOLOMORPHIC)
def test_holomorphic_derivatives(name):
    fn = getattr(anp, name)
    check_grads(fn, (Z,), order=2)
    # grad(holomorphic=True) is f'(z): the complex difference quotient along any direction
    h = 1e-7
    slope = (getattr(np, name)(Z + h) - getattr(np, name)(Z - h)) / (2 * h)
    derivative = ad.grad(lambda z: anp.sum(fn(z)), holomorphic=True)(Z)
    np.testing.assert_allclose(derivative, slope, rtol=1e-6)
    along_i = (getattr(np, name)(Z + 1j * h) - getattr(np, name)(Z - 1j * h)) / (2j * h)
    np.testing.assert_allclose(derivative, along_i, rtol=1e-6)


def test_arithmetic_mixes_real_and_complex():
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.75])
    z = x + 1j * y
    np.testing.assert_array_equal(anp.asarray(x) + 1j * anp.asarray(y), z)
    np.testing.assert_array_equal(anp.asarray(x, complex), x.astype(complex))
    check_grads(lambda x, y: anp.exp(x + 1j * y) * x / (y + 2j), (x, y), order=2)
    check_grads(lambda z, x: (z * x - z ** 2 + z ** -1 + x ** (1 + 0.5j), z ** z), (Z, np.abs(x) + 0.5), order=2)
    f32 = anp.asarray(x.astype(np.float32)) * (1 + 1j)
    assert f32.dtype == np.complex64


def test_real_imag_conj_angle_abs():
    np.testing.assert_array_equal(anp.real(W), W.real)
    np.testing.assert_array_equal(anp.imag(W), W.imag)
    np.testing.assert_array_equal(anp.conj(W), W.conj())
    np.testing.assert_array_equal(anp.conjugate(W), W.conj())
    np.testing.assert_allclose(anp.angle(W), np.angle(W), rtol=1e-15)
    np.testing.assert_allclose(anp.angle(W, deg=True), np.angle(W, deg=True), rtol=1e-15)
    np.testing.assert_allclose(anp.abs(W), np.abs(W), rtol=1e-15)
    assert anp.abs(W).dtype == np.float64 and anp.abs(W.astype(np.complex64)).dtype == np.float32
    np.testing.assert_allclose(anp.sign(W), np.sign(W), rtol=1e-15)
    for fn in (anp.real, anp.imag, anp.conj, anp.angle, anp.abs, lambda w: anp.abs(w) ** 2, anp.sign):
        check_grads(fn, (W,), order=2)
    # on real arrays they are NumPy's too (imag: zeros; angle: 0 or pi)
    x = np.array([1.5, -2.0, 0.5])
    for name in ("real", "imag", "conj", "angle"):
        np.testing.assert_array_equal(getattr(anp, name)(x), getattr(np, name)(x))
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sum(anp.angle(x) + anp.real(x)))(x), np.ones(3))


def test_methods_and_attributes_of_traced_values():
    def f(z):
        return anp.sum(z.real * z.imag + anp.abs(z.conj() - z.conjugate()))

    np.testing.assert_allclose(ad.grad(f)(Z), Z.imag - 1j * Z.real)  # d(xy)/dx - i d(xy)/dy


def test_abs_at_zero_has_gradient_zero():
    z = np.array([0j, 1 + 1j])
    np.testing.assert_allclose(ad.grad(lambda z: anp.sum(anp.abs(z)))(z), [0, (1 - 1j) / np.sqrt(2)])
    np.testing.assert_allclose(ad.grad(lambda z: anp.linalg.norm(z))(np.zeros(3, complex)), np.zeros(3))


def test_dtype_queries():
    assert anp.iscomplexobj(W) and not anp.iscomplexobj(W.real) and anp.isrealobj(W.real)
    np.testing.assert_array_equal(anp.iscomplex(np.array([1 + 0j, 1j])), [False, True])
    np.testing.assert_array_equal(anp.isreal(np.array([1 + 0j, 1j])), [True, False])
    np.testing.assert_array_equal(anp.real_if_close(np.array([1 + 1e-17j, 2.0])), np.array([1.0, 2.0]))
    assert np.iscomplexobj(anp.real_if_close(np.array([1 + 1e-3j])))
    # under grad the choice is a guard on the values; the derivative follows the branch taken
    grad = ad.grad(lambda z: anp.sum(anp.real_if_close(z * z)).real)
    np.testing.assert_allclose(grad(np.array([2.0 + 0j])), [4.0])
    with pytest.raises(ad.TracingError, match="real_if_close"):
        ad.jit(anp.real_if_close)(Z)


def test_reductions_and_scans():
    for name in ("sum", "prod", "mean", "cumsum", "cumprod", "var", "std", "max", "min"):
        for axis in (None, 0, 1):
            np.testing.assert_allclose(getattr(anp, name)(W, axis=axis), getattr(np, name)(W, axis=axis),
                                       rtol=1e-13, err_msg=f"{name} axis={axis}")
            check_grads(lambda w, name=name, axis=axis: getattr(anp, name)(w, axis=axis), (W,), order=2)
    ties = np.array([1 + 1j, 1 + 2j, 1 + 2j, -3 + 5j])
    assert anp.max(ties) == np.max(ties) and anp.min(ties) == np.min(ties)
    np.testing.assert_array_equal(ad.grad(lambda z: anp.real(anp.max(z)))(ties), [0, 1, 0, 0])


def test_contractions_indexing_and_structure():
    a, b = W, W.T.conj() + 0.5
    np.testing.assert_allclose(anp.matmul(a, b), a @ b, rtol=1e-14)
    np.testing.assert_allclose(anp.einsum("ij,jk->ik", a, b), a @ b, rtol=1e-14)
    np.testing.assert_allclose(anp.vdot(W[0], W[1]), np.vdot(W[0], W[1]), rtol=1e-14)
    check_grads(lambda a, b: (a @ b, anp.einsum("ij,kj->ik", a, a), anp.dot(a[0], b[:, 1])), (a, b), order=2)
    check_grads(lambda a: (a[::-1, 1:], a.T, anp.reshape(a, (3, 2)), anp.concatenate([a, a * 1j]),
                           anp.where(anp.real(a) > 0, a, 2 * a), a[np.array([1, 0, 1])],
                           a.at[0, 1].add(1j), anp.roll(a, 1), anp.flip(a, 1)), (W,), order=2)
    check_grads(lambda a, x: anp.take_along_axis(a, np.array([[0, 2], [1, 1]]), 1) * x, (W, np.ones((2, 2))), order=2)


def test_vmap_and_the_jacobians():
    f = lambda z: anp.sin(z) * anp.conj(z)  # noqa: E731
    batched = ad.vmap(f)(W)
    np.testing.assert_allclose(batched, np.stack([np.sin(w) * np.conj(w) for w in W]), rtol=1e-14)
    hol = ad.jacfwd(anp.sin, holomorphic=True)(Z)
    np.testing.assert_allclose(hol, np.diag(np.cos(Z)), rtol=1e-14)
    np.testing.assert_allclose(ad.jacrev(anp.sin, holomorphic=True)(Z), hol, rtol=1e-14)
    np.testing.assert_allclose(ad.hessian(lambda z: anp.sum(z ** 3), holomorphic=True)(Z), np.diag(6 * Z))
    # real arguments, complex outputs: jacfwd; complex arguments, real outputs: jacrev (gradient rows)
    x = np.array([0.3, -0.4])
    np.testing.assert_allclose(ad.jacfwd(lambda x: anp.exp(1j * x))(x), np.diag(1j * np.exp(1j * x)))
    np.testing.assert_allclose(ad.jacrev(lambda z: anp.abs(z) ** 2)(Z), np.diag(2 * np.conj(Z)))


def test_control_flow_and_parallel_building_blocks():
    def branches(z):
        return ad.cond(anp.real(z[0]) > 0, lambda z: anp.sin(z) * z, lambda z: anp.exp(z), z)

    def folded(z):
        return ad.fold(lambda c, x: (c * x + 1j, c), z[0], z)

    def looped(z):
        return ad.while_loop(lambda s: s[1] < 3, lambda s: (s[0] * (1 + 0.1j) + s[0] ** 2, s[1] + 1), (z, 0))[0]

    @ad.custom_vjp
    def custom_sin(z):
        return anp.sin(z)

    custom_sin.defvjp(lambda z: (anp.sin(z), z), lambda z, ct: (ct * anp.cos(z),))
    for fn in (branches, folded, ad.checkpoint(lambda z: anp.sin(anp.exp(z))),
               lambda z: ad.fori_loop(0, 3, lambda i, c: c * c * 0.5 + z, z),
               lambda z: (ad.reduce(lambda a, b: a * b, z, identity=1 + 0j), ad.scan("mul", z),
                          ad.segment_sum(z, np.array([0, 1, 0]), 2),
                          ad.reduce_by_index(np.zeros(2, complex), "mul", np.array([0, 1, 0]), z))):
        check_grads(fn, (Z,), order=2)
    check_grads(looped, (Z,), order=2, modes=["rev"])
    check_grads(custom_sin, (Z,), order=1)


def test_wrong_uses_give_clear_errors():
    with pytest.raises(ad.NonDifferentiableError, match="complex.*holomorphic=True"):
        ad.grad(lambda z: anp.sum(anp.sin(z)))(Z)
    with pytest.raises(ad.NonDifferentiableError, match="needs complex arguments"):
        ad.grad(lambda x: anp.sum(anp.exp(1j * x)), holomorphic=True)(np.ones(2))
    with pytest.raises(ad.NonDifferentiableError, match="needs a complex output"):
        ad.grad(lambda z: anp.sum(anp.abs(z)), holomorphic=True)(Z)
    with pytest.raises(ad.NonDifferentiableError, match="jacfwd.*complex arguments"):
        ad.jacfwd(anp.sin)(Z)
    with pytest.raises(ad.NonDifferentiableError, match="jacrev.*complex outputs"):
        ad.jacrev(anp.sin)(Z)


@pytest.mark.parametrize("call", [
    lambda z: anp.maximum(z, z), lambda z: anp.minimum(z, 1.0), lambda z: anp.floor(z), lambda z: anp.ceil(z),
    lambda z: anp.less(z, z), lambda z: anp.greater_equal(z, 0), lambda z: anp.sort(z),
    lambda z: anp.argsort(z), lambda z: anp.argmax(z), lambda z: anp.cummax(z), lambda z: anp.arctan2(z, z),
    lambda z: anp.hypot(z, z), lambda z: anp.logaddexp(z, z), lambda z: anp.remainder(z, 2.0),
    lambda z: anp.clip(z, 0, 1), lambda z: anp.fabs(z), lambda z: anp.sigmoid(z),
    lambda z: anp.fmax(z, z), lambda z: anp.searchsorted(z, z),
], ids=["maximum", "minimum", "floor", "ceil", "less", "greater_equal", "sort", "argsort", "argmax",
        "cummax", "arctan2", "hypot", "logaddexp", "remainder", "clip", "fabs", "sigmoid", "fmax",
        "searchsorted"])
def test_operations_without_a_complex_meaning_raise(call):
    with pytest.raises(ad.ShapeError, match="complex"):
        call(Z)
    with pytest.raises(ad.ShapeError, match="complex"):
        ad.jit(call)(Z)


def test_special_functions_refuse_complex():
    import adarray.scipy.special as sps

    with pytest.raises(ad.ShapeError, match="gammaln"):
        sps.gammaln(Z)
    with pytest.raises(ad.ShapeError, match="jn"):
        sps.jn(1, Z)
    np.testing.assert_allclose(sps.erf(Z), scipy.special.erf(Z), rtol=1e-15)   # erf and erfc take complex values


def test_complex_literals_print_and_parse():
    program = ad.make_ir(lambda z: z * (1.5 - 2j) + np.array([1j, -0.5 + 0j, np.inf - 1j]))(Z)
    text = format_program(program, full=True)
    assert "1.5-2.0j" in text
    assert format_program(parse_program(text), full=True) == text


def test_round_rounds_both_parts():
    z = np.array([1.25 + 2.5j, -0.5 - 1.5j, 3.14159 + 2.71828j])
    np.testing.assert_array_equal(anp.round(z), np.round(z))
    np.testing.assert_allclose(anp.round(z, 2), np.round(z, 2))
    np.testing.assert_array_equal(ad.grad(lambda z: anp.real(anp.sum(anp.round(z) * z)))(z), np.round(z))


def test_nan_to_num_and_isfinite():
    z = np.array([complex(np.nan, 1.0), complex(np.inf, -np.inf), 1 + 1j])
    np.testing.assert_array_equal(anp.nan_to_num(z), np.nan_to_num(z))
    np.testing.assert_array_equal(anp.isfinite(z), np.isfinite(z))
    np.testing.assert_array_equal(anp.isnan(z), np.isnan(z))


def test_grad_of_a_real_loss_steps_downhill():
    target = np.array([1.0 - 1.0j, 2.0j])

    def loss(z):
        return anp.sum(anp.abs(z - target) ** 2)

    z = np.zeros(2, complex)
    for _ in range(50):
        z = z - 0.25 * np.conj(ad.grad(loss)(z))  # step along the conjugate of JAX's gradient
    np.testing.assert_allclose(z, target, atol=1e-10)


# --- against JAX -----------------------------------------------------------------------------------

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

PAIRS = [
    ("sin*conj", lambda z: anp.real(anp.sum(anp.sin(z) * anp.conj(z))),
     lambda z: jnp.real(jnp.sum(jnp.sin(z) * jnp.conj(z)))),
    ("abs", lambda z: anp.sum(anp.abs(z) ** 3), lambda z: jnp.sum(jnp.abs(z) ** 3)),
    ("angle", lambda z: anp.sum(anp.angle(z) * anp.imag(z)), lambda z: jnp.sum(jnp.angle(z) * jnp.imag(z))),
    ("log|exp|", lambda z: anp.imag(anp.sum(anp.log(z) * anp.exp(z))),
     lambda z: jnp.imag(jnp.sum(jnp.log(z) * jnp.exp(z)))),
    ("matmul", lambda z: anp.real(anp.sum(anp.outer(z, z) @ anp.conj(z))),
     lambda z: jnp.real(jnp.sum(jnp.outer(z, z) @ jnp.conj(z)))),
    ("prod/mean", lambda z: anp.abs(anp.prod(z)) + anp.real(anp.mean(z * z)),
     lambda z: jnp.abs(jnp.prod(z)) + jnp.real(jnp.mean(z * z))),
]


@pytest.mark.parametrize("label, ours, theirs", PAIRS, ids=[p[0] for p in PAIRS])
def test_gradients_match_jax(label, ours, theirs):
    with jax.enable_x64(True):
        expected = np.asarray(jax.grad(theirs)(jnp.asarray(Z)))
        hessian_vector = np.asarray(jax.jvp(jax.grad(theirs), (jnp.asarray(Z),), (jnp.asarray(W[0]),))[1])
    np.testing.assert_allclose(ad.grad(ours)(Z), expected, rtol=1e-12)
    np.testing.assert_allclose(ad.jvp(ad.grad(ours), (Z,), (W[0],))[1], hessian_vector, rtol=1e-10)


def test_vjp_jvp_and_holomorphic_jacobians_match_jax():
    def ours(z, x):
        return anp.exp(z) * x + anp.conj(z) * z ** 2, anp.abs(z) * x

    def theirs(z, x):
        return jnp.exp(z) * x + jnp.conj(z) * z ** 2, jnp.abs(z) * x

    x = np.array([0.5, -1.5, 2.0])
    cotangents = (W[1], np.array([1.0, -2.0, 0.5]))
    with jax.enable_x64(True):
        _, pullback = jax.vjp(theirs, jnp.asarray(Z), jnp.asarray(x))
        expected_vjp = [np.asarray(c) for c in pullback(tuple(jnp.asarray(c) for c in cotangents))]
        expected_jvp = [np.asarray(t) for t in jax.jvp(theirs, (jnp.asarray(Z), jnp.asarray(x)),
                                                       (jnp.asarray(W[0]), jnp.asarray(x[::-1])))[1]]
        holomorphic = np.asarray(jax.jacrev(lambda z: jnp.tan(z) * z, holomorphic=True)(jnp.asarray(Z)))
    _, pullback = ad.vjp(ours, Z, x)
    for got, want in zip(pullback(cotangents), expected_vjp):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for got, want in zip(ad.jvp(ours, (Z, x), (W[0], x[::-1]))[1], expected_jvp):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for jac in (ad.jacrev, ad.jacfwd):
        np.testing.assert_allclose(jac(lambda z: anp.tan(z) * z, holomorphic=True)(Z), holomorphic, rtol=1e-12)
