"""Bugs that autograd's own tests (tests/autograd_suite) found in adarray, each pinned by a direct test.

* The NumPy linear_recurrence wrote into its inputs when the sequence was one block long (n = 2, 3:
  a swap of axes that is already contiguous is a view): the vjp of prod's jvp changed the tangent
  the check had drawn. Inputs are read-only here, so any write fails.
* The partial of remainder in its divisor floored a quotient that is an integer only up to rounding.
* adarray.numpy: lists holding traced values (np.array([x, x + 2])) went to NumPy and raised; linspace
  on traced endpoints recursed without end; hstack of 0-d values failed; where took no keywords and
  had no one-argument form.
"""
import numpy as np
import pytest

from adarray.backends.numpy import IMPLS
from adarray.primitives.scan import linear_recurrence_p


@pytest.mark.parametrize("shape, axis", [((2,), 0), ((3,), 0), ((2, 3), 0), ((3, 2), 1), ((5, 2), 0), ((1,), 0)])
@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence_leaves_its_inputs_alone(shape, axis, reverse):
    rng = np.random.default_rng(0)
    a, b = rng.random(shape), rng.random(shape)
    for array in (a, b):
        array.setflags(write=False)
    result = IMPLS[linear_recurrence_p](a, b, axis=axis, reverse=reverse)
    moved_a, moved_b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0)
    if reverse:
        moved_a, moved_b = moved_a[::-1], moved_b[::-1]
    state, expected = np.zeros(moved_b.shape[1:]), []
    for gain, offset in zip(moved_a, moved_b):
        state = gain * state + offset
        expected.append(state)
    expected = np.stack(expected)
    np.testing.assert_allclose(result, np.moveaxis(expected[::-1] if reverse else expected, 0, axis), rtol=1e-14)


def test_remainder_partial_is_the_rounded_quotient():
    """Regression (found by autograd's test_mod): d rem(a, b) / db = -quotient, which was floor((a - rem) / b);
    that quotient is an integer up to rounding, and floor turned -3 - 1 ulp into -4."""
    import adarray as ad
    import adarray.numpy as anp

    a, b = -1.8379571552462615, 0.8679173025789482  # (a - rem(a, b)) / b rounds to just below -3
    assert ad.grad(anp.remainder, argnums=1)(a, b) == -np.floor(a / b) == 3.0


def test_lists_of_traced_values_become_arrays():
    """autograd's habit np.array([x, x + 2]) / np.mean((x, y)): the list was handed to NumPy, which raised."""
    import adarray as ad
    import adarray.numpy as anp

    assert ad.grad(lambda x: anp.mean([x, x + 2]))(0.0) == 1.0
    assert ad.grad(lambda x: anp.std((x, x + 2)))(0.0) == 0.0
    jacobian = ad.jacfwd(lambda x: anp.array([[x, x * 1.0, x + 2.5], [x ** 2, x, x / 2.0]]))(3.0)
    np.testing.assert_allclose(jacobian, [[1.0, 1.0, 1.0], [6.0, 1.0, 0.5]])
    np.testing.assert_allclose(ad.grad(lambda x: anp.linalg.norm([x, 2 * x]))(1.0), np.sqrt(5.0))
    assert ad.grad(lambda x: anp.sum(anp.array([x, x])))(np.ones((3, 2))).shape == (3, 2)


@pytest.mark.parametrize("num", [0, 1, 2, 5])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_with_traced_endpoints(num, endpoint):
    """np.linspace on traced endpoints recursed without end."""
    import adarray as ad
    import adarray.numpy as anp
    from adarray.testing import check_grads

    for start, stop in [(1.2, 3.4), (1.2, -3.4), (np.array([0.0, 1.0]), 2.0)]:
        values = ad.jit(lambda a, b: anp.linspace(a, b, num, endpoint=endpoint))(start, stop)
        np.testing.assert_allclose(values, np.linspace(start, stop, num, endpoint=endpoint), rtol=1e-15)
        if num and np.ndim(start) == 0:
            check_grads(lambda a, b: anp.linspace(a, b, num, endpoint=endpoint), (start, stop), order=2)
    if num:  # d/dstart = 1 - k / div and d/dstop = k / div
        div = num - 1 if endpoint else num
        fractions = np.arange(num) / div if div else np.zeros(num)
        np.testing.assert_allclose(ad.jacfwd(lambda a: anp.linspace(a, 3.0, num, endpoint=endpoint))(1.0),
                                   1 - fractions, atol=1e-15)


def test_hstack_of_scalars_and_where_with_keywords():
    import adarray as ad
    import adarray.numpy as anp

    np.testing.assert_allclose(ad.jit(lambda x: anp.hstack([x, 2 * x]))(1.5), [1.5, 3.0])
    np.testing.assert_allclose(ad.jacfwd(lambda x: anp.hstack([x, 2 * x]))(1.5), [1.0, 2.0])
    x, y, condition = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]), [True, False, True]
    for result in (anp.where(condition=condition, x=x, y=y), anp.where(condition, x, y=y)):
        np.testing.assert_array_equal(result, [1.0, 5.0, 3.0])
    np.testing.assert_array_equal(anp.where(condition)[0], [0, 2])
    with pytest.raises(ad.TracingError, match="size="):
        ad.jit(lambda c: anp.where(c))(np.array(condition))
    with pytest.raises(ad.Error, match="both x and y"):
        anp.where(condition, x)
