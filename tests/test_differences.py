"""adarray.testing.differences: the one finite-difference oracle, against closed forms."""
import numpy as np

from adarray.testing import numerical_derivative, numerical_gradient, numerical_hessian, numerical_jacobian

X = np.array([-1.3, 0.0, 0.4, 2.0])


def test_derivative_elementwise_and_richardson_accuracy():
    np.testing.assert_allclose(numerical_derivative(np.sin, X), np.cos(X), rtol=1e-9, atol=1e-10)
    plain = numerical_derivative(np.exp, X, 1e-3)
    extrapolated = numerical_derivative(np.exp, X, 1e-3, richardson=True)
    assert np.max(np.abs(plain / np.exp(X) - 1)) > 1e-8          # O(h^2) = 1.7e-7 relative
    assert np.max(np.abs(extrapolated / np.exp(X) - 1)) < 1e-11  # O(h^4)
    scalar = numerical_derivative(lambda t: t ** 3, 2.0)
    assert np.ndim(scalar) == 0 and abs(scalar - 12.0) < 1e-8


def test_gradient_of_arrays_and_of_pytrees():
    np.testing.assert_allclose(numerical_gradient(lambda x: np.sum(x ** 2), X), 2 * X, atol=1e-8)
    params = {"w": np.array([[1.0, 2.0], [3.0, 4.0]]), "b": (0.5, np.arange(3))}
    gradient = numerical_gradient(lambda p: np.sum(p["w"] ** 2) * p["b"][0] + np.sum(p["b"][1]), params)
    assert set(gradient) == {"w", "b"} and gradient["b"][1] is None  # integers are not moved
    np.testing.assert_allclose(gradient["w"], 2 * params["w"] * 0.5, rtol=1e-8)
    np.testing.assert_allclose(gradient["b"][0], 30.0, rtol=1e-8)
    rows = numerical_gradient(lambda x: np.array([x[0] * x[1], x[1]]), np.array([2.0, 3.0]))
    np.testing.assert_allclose(rows, [[3.0, 0.0], [2.0, 1.0]], atol=1e-8)  # one row per input coordinate


def test_jacobian_has_the_output_axes_first():
    a = np.arange(6.0).reshape(2, 3)
    jacobian = numerical_jacobian(lambda m: m.sum(axis=0) ** 2, a)
    assert jacobian.shape == (3, 2, 3)
    expected = np.zeros((3, 2, 3))
    for j in range(3):
        expected[j, :, j] = 2 * a.sum(axis=0)[j]
    np.testing.assert_allclose(jacobian, expected, atol=1e-7)
    assert numerical_jacobian(lambda v: np.ones(2) * np.sum(v), np.zeros(0)).shape == (2, 0)


def test_hessian_of_a_cubic_and_a_matrix_argument():
    def f(x):
        return x[0] ** 2 * x[1] + np.sin(x[2])

    x = np.array([1.5, -0.5, 0.3])
    exact = np.array([[2 * x[1], 2 * x[0], 0.0], [2 * x[0], 0.0, 0.0], [0.0, 0.0, -np.sin(x[2])]])
    np.testing.assert_allclose(numerical_hessian(f, x, richardson=True), exact, atol=1e-9)
    m = np.array([[1.0, 2.0], [0.5, -1.0]])
    hessian = numerical_hessian(lambda a: a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0], m)  # det: constant Hessian
    assert hessian.shape == (2, 2, 2, 2)
    assert np.isclose(hessian[0, 0, 1, 1], 1.0) and np.isclose(hessian[0, 1, 1, 0], -1.0)
    assert np.isclose(hessian[0, 0, 0, 0], 0.0, atol=1e-9)
