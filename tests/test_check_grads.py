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


def test_complex_values_are_refused_not_skipped():
    with pytest.raises(ad.UnsupportedError, match="complex"):
        check_grads(lambda z: z * 2.0, (np.array([1.0 + 2.0j]),), order=1)


def test_bad_arguments():
    with pytest.raises(ValueError, match="modes"):
        check_grads(anp.sin, (1.0,), modes=["sideways"])
    with pytest.raises(ValueError, match="order"):
        check_grads(anp.sin, (1.0,), order=0)
