"""adarray.numpy against NumPy: same values on plain arrays and when traced (jit), and
gradients (through the public API) against central finite differences."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import numerical_gradient

rng = np.random.default_rng(0)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(4, 5))
V = rng.normal(size=(4,))
P = rng.uniform(0.5, 2.0, size=(3, 4))
IDX = np.array([2, 0, 0, 1])

# name -> (adarray function, numpy function, arguments); the first argument is differentiated.
CASES = {
    "add_broadcast": (lambda x, v: anp.add(x, v), lambda x, v: np.add(x, v), (A, V)),
    "subtract": (lambda x: anp.subtract(x, 1.5), lambda x: x - 1.5, (A,)),
    "multiply_scalar": (lambda x: x * 3.0, lambda x: x * 3.0, (A,)),
    "divide": (lambda x, p: x / p, lambda x, p: x / p, (A, P)),
    "power_int": (lambda x: x ** 3, lambda x: x ** 3, (A,)),
    "power_float": (lambda p: p ** 1.7, lambda p: p ** 1.7, (P,)),
    "power_array": (lambda p, q: anp.power(p, q), np.power, (P, P + 0.3)),
    "negative": (anp.negative, np.negative, (A,)),
    "reciprocal": (anp.reciprocal, np.reciprocal, (P,)),
    "square": (anp.square, np.square, (A,)),
    "exp": (anp.exp, np.exp, (A,)),
    "log": (anp.log, np.log, (P,)),
    "log1p": (anp.log1p, np.log1p, (P,)),
    "expm1": (anp.expm1, np.expm1, (A,)),
    "sqrt": (anp.sqrt, np.sqrt, (P,)),
    "sin": (anp.sin, np.sin, (A,)),
    "cos": (anp.cos, np.cos, (A,)),
    "tan": (anp.tan, np.tan, (A * 0.3,)),
    "arcsin": (anp.arcsin, np.arcsin, (A * 0.2,)),
    "arccos": (anp.arccos, np.arccos, (A * 0.2,)),
    "arctan": (anp.arctan, np.arctan, (A,)),
    "arctan2": (anp.arctan2, np.arctan2, (A, P)),
    "sinh": (anp.sinh, np.sinh, (A,)),
    "cosh": (anp.cosh, np.cosh, (A,)),
    "tanh": (anp.tanh, np.tanh, (A,)),
    "sigmoid": (anp.sigmoid, lambda x: 1 / (1 + np.exp(-x)), (A,)),
    "softplus": (anp.softplus, lambda x: np.log1p(np.exp(x)), (A,)),
    "abs": (anp.abs, np.abs, (A,)),
    "erf": (anp.erf, __import__("scipy.special").special.erf, (A,)),
    "maximum": (anp.maximum, np.maximum, (A, P - 1)),
    "minimum": (anp.minimum, np.minimum, (A, P - 1)),
    "clip": (lambda x: anp.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), (A,)),
    "where": (lambda x: anp.where(x > 0, x * 2, anp.sin(x)), lambda x: np.where(x > 0, x * 2, np.sin(x)), (A,)),
    "logaddexp": (anp.logaddexp, np.logaddexp, (A, P)),
    "remainder": (lambda x: anp.remainder(x, 0.7), lambda x: np.remainder(x, 0.7), (A,)),
    "sum_axis": (lambda x: anp.sum(x, axis=1), lambda x: np.sum(x, axis=1), (A,)),
    "sum_keepdims": (lambda x: anp.sum(x, axis=(0,), keepdims=True), lambda x: np.sum(x, 0, keepdims=True), (A,)),
    "prod": (lambda x: anp.prod(x, axis=0), lambda x: np.prod(x, axis=0), (A,)),
    "max": (lambda x: anp.max(x, axis=1), lambda x: np.max(x, axis=1), (A,)),
    "min_keepdims": (lambda x: anp.min(x, axis=-1, keepdims=True), lambda x: np.min(x, -1, keepdims=True), (A,)),
    "mean": (lambda x: anp.mean(x, axis=0), lambda x: np.mean(x, axis=0), (A,)),
    "var": (lambda x: anp.var(x, axis=1, ddof=1), lambda x: np.var(x, axis=1, ddof=1), (A,)),
    "std": (lambda x: anp.std(x), np.std, (A,)),
    "logsumexp": (lambda x: anp.logsumexp(x, axis=1), lambda x: np.log(np.sum(np.exp(x), axis=1)), (A,)),
    "cumsum": (lambda x: anp.cumsum(x, axis=1), lambda x: np.cumsum(x, axis=1), (A,)),
    "cumprod": (lambda x: anp.cumprod(x, axis=0), lambda x: np.cumprod(x, axis=0), (A,)),
    "reshape": (lambda x: anp.reshape(x, (2, -1)), lambda x: np.reshape(x, (2, -1)), (A,)),
    "transpose": (lambda x: x.T, lambda x: x.T, (A,)),
    "swapaxes": (lambda x: anp.swapaxes(x[None], 0, 2), lambda x: np.swapaxes(x[None], 0, 2), (A,)),
    "moveaxis": (lambda x: anp.moveaxis(x[None], 0, -1), lambda x: np.moveaxis(x[None], 0, -1), (A,)),
    "expand_squeeze": (lambda x: anp.squeeze(anp.expand_dims(x, 1)), lambda x: x, (A,)),
    "broadcast_to": (lambda v: anp.broadcast_to(v, (3, 4)), lambda v: np.broadcast_to(v, (3, 4)), (V,)),
    "concatenate": (lambda x: anp.concatenate([x, x * 2], axis=1), lambda x: np.concatenate([x, x * 2], 1), (A,)),
    "stack": (lambda x: anp.stack([x, -x], axis=1), lambda x: np.stack([x, -x], axis=1), (A,)),
    "split": (lambda x: anp.split(x, 2, axis=1)[1], lambda x: np.split(x, 2, axis=1)[1], (A,)),
    "flip": (lambda x: anp.flip(x, 1), lambda x: np.flip(x, 1), (A,)),
    "tile": (lambda x: anp.tile(x, (2, 1)), lambda x: np.tile(x, (2, 1)), (A,)),
    "repeat": (lambda x: anp.repeat(x, 2, axis=0), lambda x: np.repeat(x, 2, axis=0), (A,)),
    "basic_index": (lambda x: x[1:, ::-2], lambda x: x[1:, ::-2], (A,)),
    "int_index": (lambda x: x[-1, 2], lambda x: x[-1, 2], (A,)),
    "newaxis_ellipsis": (lambda x: x[..., None, 1], lambda x: x[..., None, 1], (A,)),
    "array_index": (lambda x: x[IDX], lambda x: x[IDX % 3], (A[[0, 1, 2, 0]],)),
    "mixed_index": (lambda x: x[1:, IDX], lambda x: x[1:, IDX], (A,)),
    "two_arrays": (lambda x: x[IDX[:2], IDX[2:]], lambda x: x[IDX[:2], IDX[2:]], (A,)),
    "bool_mask_const": (lambda x: x[np.array([True, False, True])], lambda x: x[[0, 2]], (A,)),
    "take": (lambda x: anp.take(x, IDX, axis=1), lambda x: np.take(x, IDX, axis=1), (A,)),
    "take_along_axis": (lambda x: anp.take_along_axis(x, np.argsort(A, 1), 1),
                        lambda x: np.take_along_axis(x, np.argsort(A, 1), 1), (A,)),
    "at_set": (lambda x: anp.at(x)[IDX[:2]].set(7.0), lambda x: _numpy_at(x, IDX[:2], "set", 7.0), (A,)),
    "at_add": (lambda x, v: anp.at(x)[:, IDX].add(v), lambda x, v: _numpy_at(x, (slice(None), IDX), "add", v), (A, V)),
    "at_multiply": (lambda x: anp.at(x)[IDX].multiply(2.0), lambda x: _numpy_at(x, IDX, "mul", 2.0), (A,)),
    "at_max": (lambda x, v: anp.at(x)[IDX].max(v), lambda x, v: _numpy_at(x, IDX, "max", v), (V, V[::-1])),
    "at_min": (lambda x, v: anp.at(x)[IDX].min(v), lambda x, v: _numpy_at(x, IDX, "min", v), (V, V[::-1])),
    "matmul": (lambda x, b: x @ b, np.matmul, (A, B)),
    "matmul_vec": (lambda x, v: x @ v, np.matmul, (A, V)),
    "matmul_batch": (lambda x, b: anp.matmul(x[None], b), lambda x, b: np.matmul(x[None], b), (A, B)),
    "dot": (anp.dot, np.dot, (A, B)),
    "einsum": (lambda x, b: anp.einsum("ij,jk,kl->il", x, b, b.T), lambda x, b: x @ b @ b.T, (A, B)),
    "einsum_implicit": (lambda x: anp.einsum("ij,ij", x, x), lambda x: np.sum(x * x), (A,)),
    "outer": (anp.outer, np.outer, (V, V)),
    "inner": (anp.inner, np.inner, (A, A)),
    "tensordot": (lambda x, b: anp.tensordot(x, b, axes=1), lambda x, b: np.tensordot(x, b, axes=1), (A, B)),
    "norm": (anp.linalg.norm, np.linalg.norm, (A,)),
    "astype32": (lambda x: x.astype(anp.float32).astype(anp.float64), lambda x: x.astype(np.float32).astype(float),
                 (A,)),
}


def _numpy_at(x, index, op, values):
    out = np.array(x, copy=True)
    if op == "set":
        out[index] = values
    else:
        {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[op].at(out, index, values)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_numpy(name):
    fn, reference, args = CASES[name]
    expected = reference(*args)
    np.testing.assert_allclose(fn(*args), expected, rtol=1e-6, atol=1e-6)  # plain arrays
    np.testing.assert_allclose(ad.jit(fn)(*args), expected, rtol=1e-6, atol=1e-6)  # traced


@pytest.mark.parametrize("name", sorted(set(CASES) - {"astype32"}))  # float32 rounding defeats differences
def test_gradient_matches_finite_differences(name):
    fn, _, args = CASES[name]
    weights = np.random.default_rng(1).normal(size=np.shape(fn(*args)))

    def scalar(*xs):
        return anp.sum(fn(*xs) * weights)

    expected = numerical_gradient(lambda x: float(scalar(x, *args[1:])), args[0])
    np.testing.assert_allclose(ad.grad(scalar)(*args), expected, rtol=1e-5, atol=1e-6)


def test_integer_and_boolean_functions_match_numpy():
    ints = np.array([[3, -1, 4], [1, -5, 9]])
    np.testing.assert_array_equal(anp.argmax(ints, axis=1), np.argmax(ints, axis=1))
    np.testing.assert_array_equal(ad.jit(lambda x: anp.argmin(x))(ints), np.argmin(ints))
    np.testing.assert_array_equal(ad.jit(lambda x: anp.all(x > -6, axis=0))(ints), np.all(ints > -6, axis=0))
    np.testing.assert_array_equal(ad.jit(lambda x: anp.any(x > 8))(ints), True)
    np.testing.assert_array_equal(ad.jit(lambda x: x // 2 + x % 3)(ints), ints // 2 + ints % 3)
    np.testing.assert_array_equal(ad.jit(lambda x: anp.logical_and(x > 0, x < 4))(ints), (ints > 0) & (ints < 4))
    assert ad.jit(lambda x: anp.sum(x > 0))(ints).dtype == np.int64
    assert ad.jit(lambda x: x / 2)(ints).dtype == np.float64


def test_creation_functions_are_numpy_arrays():
    np.testing.assert_array_equal(anp.zeros((2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(anp.eye(3), np.eye(3))
    np.testing.assert_array_equal(anp.linspace(0, 1, 5), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(anp.arange(4), np.arange(4))
    out = ad.jit(lambda x: x + anp.ones_like(x) + anp.full_like(x, 2.0) + anp.zeros_like(x))(np.ones(3, np.float32))
    assert out.dtype == np.float32 and np.all(out == 4.0)


def test_gradient_through_a_float32_round_trip_is_the_identity():
    g = ad.grad(lambda x: anp.sum(x.astype(anp.float32).astype(anp.float64) * 3.0))(A)
    np.testing.assert_array_equal(g, np.full(A.shape, 3.0))


def test_float32_stays_float32_with_python_scalars():
    x = np.ones(3, np.float32)
    assert ad.jit(lambda x: x * 2.0 + 1)(x).dtype == np.float32
    assert ad.grad(lambda x: anp.sum(anp.sin(x) * 2.0))(x).dtype == np.float32


@pytest.mark.parametrize("shape", [(0,), (2, 0), (1, 3), ()])
def test_size_zero_and_size_one_axes(shape):
    x = np.ones(shape)
    g = ad.grad(lambda x: anp.sum(anp.exp(x) * anp.broadcast_to(x, shape)))(x)
    np.testing.assert_allclose(g, 2 * np.e * np.ones(shape))
    y = ad.jit(lambda x, v: x + v)(np.ones((1, 3)), np.ones((2, 1)))
    assert y.shape == (2, 3)


def test_numpy_ufuncs_on_traced_values_dispatch_to_adarray():
    g = ad.grad(lambda x: np.sum(np.sin(x) + np.ones(3) * x))(np.zeros(3))
    np.testing.assert_allclose(g, [2.0, 2.0, 2.0])


def test_at_method_syntax_on_traced_values():
    g = ad.grad(lambda x: anp.sum(x.at[IDX].add(x[0] * 2.0)))(np.ones(3))
    np.testing.assert_allclose(g, [9.0, 1.0, 1.0])


def test_iterating_a_traced_array_yields_rows():
    g = ad.grad(lambda x: sum(row[0] * row[1] for row in x))(np.arange(6.0).reshape(3, 2))
    np.testing.assert_allclose(g, [[1, 0], [3, 2], [5, 4]])
