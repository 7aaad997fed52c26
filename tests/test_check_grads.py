"""adarray.testing.check_grads: passes on correct derivatives (pytrees, integer leaves, several outputs)
and catches wrong ones, at first order and, through the derivative programs, at second order."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import check_grads


def test_correct_derivatives_pass_to_third_order():
    check_grads(lambda x, y: anp.sin(x) * y, (np.array([0.3, -1.2, 2.0]), 1.5), order=3)
    check_grads(lambda p, n: {"a": anp.tanh(p["w"] @ p["x"]) * n, "b": anp.exp(p["x"])},
                ({"w": np.eye(2) * 0.5, "x": np.array([0.1, 0.2])}, np.int64(3)), order=2)
    check_grads(lambda x: (anp.sum(x ** 2), anp.argmax(x)), (np.array([1.0, 3.0]),), order=2, modes=["rev"])
    check_grads(lambda x: 1e6 * anp.exp(x), (np.array([10.0]),), order=2)  # large values: the rounding floor


def _custom_sin(derivative):
    @ad.custom_jvp
    def f(x):
        return anp.sin(x)

    @f.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return anp.sin(x), derivative(x) * t

    return f


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_a_wrong_first_derivative_is_caught(mode):
    wrong = _custom_sin(lambda x: anp.cos(x) * 1.001)
    with pytest.raises(AssertionError, match="check_grads of"):
        check_grads(wrong, (np.array([0.3, 1.0]),), order=1, modes=[mode])


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_a_wrong_second_derivative_is_caught(mode):
    # The rule's value is right, but its own derivative is zero (stop_gradient): order 1 passes, 2 fails.
    frozen = _custom_sin(lambda x: anp.stop_gradient(anp.cos(x)))
    check_grads(frozen, (np.array([0.3, 1.0]),), order=1, modes=[mode])
    with pytest.raises(AssertionError, match="jvp_of|vjp_of"):
        check_grads(frozen, (np.array([0.3, 1.0]),), order=2, modes=[mode])


def test_complex_values_are_checked_in_both_directions():
    z = np.array([1.0 + 2.0j, -0.5j, 0.3 - 0.1j])
    check_grads(lambda z: anp.exp(z) * anp.conj(z), (z,), order=2)
    check_grads(lambda z, x: (anp.abs(z) ** 2 * x, anp.angle(z), anp.real(z) + 1j * x), (z, np.ones(3)), order=2)

    @ad.custom_jvp
    def conjugated_exp(z):  # a wrong rule: exp is holomorphic, its derivative is not conj(exp(z))
        return anp.exp(z)

    @conjugated_exp.defjvp
    def _(primals, tangents):
        (z,), (t,) = primals, tangents
        return anp.exp(z), anp.conj(anp.exp(z)) * t

    for mode in ("fwd", "rev"):
        with pytest.raises(AssertionError, match="check_grads of"):
            check_grads(conjugated_exp, (z,), order=1, modes=[mode])


def test_python_control_flow_on_the_values_is_checked_on_its_path():
    def piecewise(x):
        return anp.sin(x) if x > 0 else x ** 3

    check_grads(piecewise, (0.7,), order=2)
    check_grads(piecewise, (-0.7,), order=2)


def test_bad_arguments():
    with pytest.raises(ValueError, match="modes"):
        check_grads(anp.sin, (1.0,), modes=["sideways"])
    with pytest.raises(ValueError, match="order"):
        check_grads(anp.sin, (1.0,), order=0)
