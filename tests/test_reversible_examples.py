"""The examples of the reversible-programs issue, run as tests: each against an independent reference (the same
computation as an array program under ad.grad, SciPy, recurrences, finite differences)."""
import math

import numpy as np
import pytest
import scipy.special

import adarray as ad
import adarray.numpy as anp
import adarray.reversible as rv
from adarray.testing import numerical_gradient

RNG = np.random.default_rng(12)


# --- the norm of the issue -------------------------------------------------------------------------------

@rv.reversible
def norm(res, y, x):
    for i in range(len(x)):
        y += x[i] ** 2
    res += anp.sqrt(y)


def test_norm():
    x = RNG.standard_normal(6)
    out = norm(0.0, 0.0, x)
    assert out[0] == pytest.approx(np.linalg.norm(x), rel=1e-14)
    back = rv.invert(norm)(*out)
    np.testing.assert_allclose(back[0], 0.0, atol=1e-15)
    np.testing.assert_allclose(back[1], 0.0, atol=1e-14)
    np.testing.assert_array_equal(back[2], x)
    g = rv.grad(norm, loss=0)(0.0, 0.0, x)
    np.testing.assert_allclose(g[2], x / np.linalg.norm(x), rtol=1e-13)
    assert g[0] == 1.0 and g[1] == pytest.approx(0.5 / np.linalg.norm(x))
    inside = ad.grad(lambda x: norm(0.0, 0.0, x)[0])(x)
    np.testing.assert_allclose(inside, ad.grad(lambda x: anp.sqrt(anp.sum(x ** 2)))(x), rtol=1e-13)


# --- axpy then dot, with in-place element updates --------------------------------------------------------

@rv.reversible
def axpy(y, a, x):
    for i in range(len(x)):
        y[i] += a * x[i]


@rv.reversible
def dot(out, x, y):
    for i in range(len(x)):
        out += x[i] * y[i]


@rv.reversible
def axpy_dot(out, y, a, x):
    axpy(y, a, x)
    dot(out, x, y)


def test_axpy_then_dot():
    x, y, a = RNG.standard_normal(5), RNG.standard_normal(5), 0.7
    out = axpy_dot(0.0, y, a, x)
    assert out[0] == pytest.approx(np.dot(x, y + a * x), rel=1e-14)
    np.testing.assert_allclose(out[1], y + a * x, rtol=1e-15)
    grads = rv.grad(axpy_dot, loss=0)(0.0, y, a, x)
    reference = ad.grad(lambda y, a, x: anp.dot(x, y + a * x), argnums=(0, 1, 2))(y, a, x)
    for got, want in zip(grads[1:], reference):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    back = rv.invert(axpy_dot)(*out)
    np.testing.assert_allclose(back[1], y, rtol=1e-14)


# --- compute-copy-uncompute -----------------------------------------------------------------------------

@rv.reversible
def hypot_ccu(out, x, y):
    s = rv.alloc(0.0)
    r = rv.alloc(0.0)
    with rv.compute():
        s += x ** 2
        s += y ** 2
        r += anp.sqrt(s)
    out += r
    rv.uncompute()
    rv.free(r, 0.0)
    rv.free(s, 0.0)


@rv.reversible
def hypot_allocated_inside(out, x, y):
    with rv.compute():
        s = rv.alloc(0.0)
        s += x ** 2
        s += y ** 2
    out += anp.sqrt(s)
    rv.uncompute()
    rv.free(s, 0.0)  # the block's ancilla is back at 0 after uncompute(), then released


@pytest.mark.parametrize("fn", [hypot_ccu, hypot_allocated_inside])
def test_compute_copy_uncompute(fn):
    out = fn(1.0, 3.0, 4.0)
    assert out == (6.0, 3.0, 4.0)
    grads = rv.grad(fn, loss=0)(1.0, 3.0, 4.0)
    assert grads == pytest.approx((1.0, 0.6, 0.8), rel=1e-15)
    assert rv.invert(fn)(*out) == pytest.approx((1.0, 3.0, 4.0))


# --- Bessel J_nu(z) by its series, with a reversible while ----------------------------------------------

LOG_ATOL = math.log(1e-17)


@rv.reversible
def besselj(out, nu, z):
    """J_nu(z) = sum_k (-1)^k (z/2)^(2k+nu) / (k! (k+nu)!) for z > 0, each term from its logarithm, the loop
    running while the last term is above 1e-17 (a while whose post-condition is k > 0)."""
    k = rv.alloc(0)
    sign = rv.alloc(1.0)
    log_half_z = rv.alloc(0.0)
    exponent = rv.alloc(0.0)
    term = rv.alloc(0.0)
    total = rv.alloc(0.0)
    with rv.compute():
        log_half_z += anp.log(z / 2)
        exponent += nu * log_half_z
        for i in range(1, nu + 1):
            exponent -= anp.log(i)
        total += anp.exp(exponent)
        while rv.while_(exponent > LOG_ATOL, k > 0):
            k += 1
            rv.neg(sign)
            exponent += 2 * log_half_z - anp.log(k) - anp.log(k + nu)
            with rv.compute():
                term += sign * anp.exp(exponent)
            total += term
            rv.uncompute()
    out += total
    rv.uncompute()
    rv.free(total, 0.0)
    rv.free(term, 0.0)
    rv.free(exponent, 0.0)
    rv.free(log_half_z, 0.0)
    rv.free(sign, 1.0)
    rv.free(k, 0)


def J(nu, z):
    return float(besselj(0.0, nu, z)[0])


def test_bessel_value_and_derivatives():
    z = 1.0
    assert J(2, z) == pytest.approx(scipy.special.jv(2, z), rel=1e-14)
    first = lambda z: besselj(0.0, 2, z)[0]  # noqa: E731
    d1 = ad.grad(first)(z)
    assert d1 == pytest.approx((J(1, z) - J(3, z)) / 2, rel=1e-12)  # J_2' = (J_1 - J_3) / 2
    assert d1 == pytest.approx(scipy.special.jvp(2, z), rel=1e-12)
    assert rv.grad(besselj, loss=0)(0.0, 2, z)[2] == pytest.approx(d1, rel=1e-14)
    second = (J(0, z) - 2 * J(2, z) + J(4, z)) / 4  # J_2'' from the recurrence, twice
    for label, d2 in (("grad(grad)", ad.grad(ad.grad(first))(z)), ("hessian", ad.hessian(first)(z)),
                      ("jacfwd(jacfwd)", ad.jacfwd(ad.jacfwd(first))(z)), ("jvp", ad.jacfwd(ad.grad(first))(z))):
        assert float(d2) == pytest.approx(second, rel=1e-10), label
    assert second == pytest.approx(scipy.special.jvp(2, z, 2), rel=1e-12)
    assert second == pytest.approx(0.13446683844358093, rel=1e-8)  # NiLang's paper (its series stops at 1e-8)
    back = rv.invert(besselj)(*besselj(0.0, 2, z))
    assert back[0] == pytest.approx(0.0, abs=1e-16) and back[1] == 2 and back[2] == z


# --- a unitary matrix from Givens rotations --------------------------------------------------------------

@rv.reversible
def unitary(x, thetas):
    k = rv.alloc(0)
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            rv.rot(x[i], x[j], thetas[k])
            k += 1
    rv.free(k, len(x) * (len(x) - 1) // 2)


def unitary_matrix(thetas, n):
    """The same product of rotations as an array program."""
    u = anp.eye(n)
    k = 0
    for i in range(n):
        for j in range(i + 1, n):
            c, s = anp.cos(thetas[k]), anp.sin(thetas[k])
            rotation = anp.eye(n) + (c - 1) * (anp.eye(n)[i][:, None] * anp.eye(n)[i] + anp.eye(n)[j][:, None]
                                               * anp.eye(n)[j]) - s * anp.eye(n)[i][:, None] * anp.eye(n)[j] \
                + s * anp.eye(n)[j][:, None] * anp.eye(n)[i]
            u = rotation @ u
            k += 1
    return u


def test_givens_unitary():
    n = 5
    x, thetas = RNG.standard_normal(n), RNG.uniform(-3, 3, n * (n - 1) // 2)
    y, _ = unitary(x, thetas)
    assert np.linalg.norm(y) == pytest.approx(np.linalg.norm(x), rel=1e-14)  # norm preserved
    np.testing.assert_allclose(y, np.asarray(unitary_matrix(thetas, n)) @ x, rtol=1e-12, atol=1e-14)
    w = RNG.standard_normal(n)
    grads = ad.grad(lambda x, t: anp.dot(w, unitary(x, t)[0]), argnums=(0, 1))(x, thetas)
    reference = ad.grad(lambda x, t: anp.dot(w, unitary_matrix(t, n) @ x), argnums=(0, 1))(x, thetas)
    for got, want in zip(grads, reference):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(rv.invert(unitary)(y, thetas)[0], x, rtol=1e-13)


# --- integer Fibonacci: recursion, rv.invert inside, and a while with a post-condition -------------------

@rv.reversible
def fib(out, n):
    """out += fib(n), recursively."""
    if n <= 1:
        out += n
    else:
        n1 = rv.alloc(0)
        n2 = rv.alloc(0)
        n1 += n - 1
        n2 += n - 2
        fib(out, n1)
        fib(out, n2)
        rv.free(n2, n - 2)
        rv.free(n1, n - 1)


@rv.reversible
def first_fibonacci_above(n, limit):
    """n += the first index whose Fibonacci number exceeds limit (n = 0 on entry)."""
    f = rv.alloc(0)
    while rv.while_(f <= limit, n > 0):
        rv.invert(fib)(f, n)
        n += 1
        fib(f, n)
    rv.invert(fib)(f, n)
    rv.free(f, 0)


@rv.reversible
def fibonacci_pair(a, b, n):
    k = rv.alloc(0)
    while rv.while_(k < n, k > 0):
        a += b
        rv.swap(a, b)
        k += 1
    rv.free(k, n)


def test_fibonacci():
    numbers = [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144]
    assert [int(fib(0, n)[0]) for n in range(13)] == numbers
    assert fib(10, 12)[0] == 154 and fib(10, 12)[0].dtype == np.int64
    assert rv.invert(fib)(154, 12) == (10, 12)
    n, limit = first_fibonacci_above(0, 100)
    assert n == 12 and limit == 100  # fib(12) = 144 is the first above 100
    assert rv.invert(first_fibonacci_above)(12, 100) == (0, 100)
    assert fibonacci_pair(0, 1, 30)[:2] == (832040, 1346269)
    assert rv.invert(fibonacci_pair)(832040, 1346269, 30) == (0, 1, 30)


# --- the ADBench GMM objective, written reversibly (in the benchmark, which times it) ------------------------

from benchmarks.reversible import gmm_array, gmm_objective  # noqa: E402


def test_gmm_objective():
    n, d, k = 12, 3, 4
    alphas, means = RNG.standard_normal(k), RNG.standard_normal((k, d))
    icf, x = 0.3 * RNG.standard_normal((k, d * (d + 1) // 2)), RNG.standard_normal((n, d))
    gamma, m = 1.3, 2
    value = gmm_objective(0.0, alphas, means, icf, x, gamma, m)[0]
    assert value == pytest.approx(float(gmm_array(alphas, means, icf, x, gamma, m)), rel=1e-13)
    grads = rv.grad(gmm_objective, loss=0)(0.0, alphas, means, icf, x, gamma, m)
    reference = ad.grad(gmm_array, argnums=(0, 1, 2, 3, 4))(alphas, means, icf, x, gamma, m)
    for got, want in zip(grads[1:6], reference):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)
    inside = ad.grad(lambda a, mu, c: gmm_objective(0.0, a, mu, c, x, gamma, m)[0], argnums=(0, 1, 2))(
        alphas, means, icf)
    for got, want in zip(inside, reference):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)
    difference = numerical_gradient(lambda a: float(gmm_objective(0.0, a, means, icf, x, gamma, m)[0]), alphas)
    np.testing.assert_allclose(grads[1], difference, rtol=1e-6)


# --- sparse dot and mat-vec (the reversible kernels of adarray.sparse) ------------------------------------

def test_sparse_dot_and_matvec():
    import scipy.sparse

    import adarray.sparse as sp
    from adarray.sparse import reversible_loops as kernels

    S = scipy.sparse.random(9, 7, density=0.3, format="csr", random_state=3)
    T = scipy.sparse.random(9, 7, density=0.4, format="csr", random_state=4)
    v = RNG.standard_normal(7)
    y = kernels.csr_matvec(np.zeros(9), S.data, S.indices, S.indptr, v)[0]
    np.testing.assert_allclose(y, S @ v, rtol=1e-14)
    back = rv.invert(kernels.csr_matvec)(y, S.data, S.indices, S.indptr, v)
    np.testing.assert_allclose(back[0], 0.0, atol=1e-15)
    rows = np.repeat(np.arange(9), np.diff(S.indptr))
    grads = ad.grad(lambda d, v: anp.sum(kernels.csr_matvec(np.zeros(9), d, S.indices, S.indptr, v)[0] ** 2),
                    argnums=(0, 1))(S.data, v)
    dense = lambda d, v: anp.sum((anp.zeros((9, 7)).at[rows, S.indices].add(d) @ v) ** 2)  # noqa: E731
    for got, want in zip(grads, ad.grad(dense, argnums=(0, 1))(S.data, v)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    previous = sp.set_method("reversible")
    try:
        A, B = sp.CSR.from_scipy(S), sp.CSR.from_scipy(T)
        assert sp.dot(A, B) == pytest.approx(S.multiply(T).sum(), rel=1e-13)
        gradient = ad.grad(lambda d: sp.dot(sp.CSR(d, A.indices, A.indptr, A.shape), B))(A.data)
        np.testing.assert_allclose(gradient, np.asarray(T[rows, S.indices]).ravel())
    finally:
        sp.set_method(previous)


# --- the language page runs as written ---------------------------------------------------------------------

def test_the_language_page_runs_as_written():
    import linecache
    import pathlib
    import re

    page = pathlib.Path(__file__).resolve().parents[1] / "docs" / "reversible.md"
    blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(), re.S | re.M)
    assert len(blocks) >= 4
    namespace = {"__name__": "reversible_md"}
    for index, block in enumerate(blocks):
        filename = f"docs/reversible.md python block {index + 1}"
        linecache.cache[filename] = (len(block), None, block.splitlines(True), filename)  # sources for the parser
        exec(compile(block, filename, "exec"), namespace)
    np.testing.assert_allclose(namespace["out"][:2], (3.0, 9.0))
    np.testing.assert_allclose(namespace["g"][2], np.array([1.0, 2.0, 2.0]) / 3.0)
    assert namespace["stats"] == (27, 5)
    assert namespace["fibonacci_pair"](0, 1, 10)[:2] == (55, 89)
    assert namespace["hypot"](0.0, 3.0, 4.0)[0] == 5.0
    y, derivative = 0.5, 1.0
    for _ in range(20):
        y, derivative = 1.3 * math.sin(y), derivative * 1.3 * math.cos(y)  # the chain rule, step by step
    assert namespace["y_n"] == pytest.approx(y, rel=1e-14)  # the stack section's forgetful map
    assert namespace["dy"] == pytest.approx(derivative, rel=1e-12)
