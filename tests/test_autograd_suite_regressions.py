"""Bugs that autograd's own tests (tests/autograd_suite) found in adarray, each pinned by a direct test.

* The NumPy linear_recurrence wrote into its inputs when the sequence was one block long (n = 2, 3:
  a swap of axes that is already contiguous is a view): the vjp of prod's jvp changed the tangent
  the check had drawn. Inputs are read-only here, so any write fails.
* The partial of remainder in its divisor floored a quotient that is an integer only up to rounding.
"""
import numpy as np
import pytest

import adarray  # noqa: F401  (attaches the NumPy implementations)
from adarray.core.primitive import IMPLS


@pytest.mark.parametrize("shape, axis", [((2,), 0), ((3,), 0), ((2, 3), 0), ((3, 2), 1), ((5, 2), 0), ((1,), 0)])
@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence_leaves_its_inputs_alone(shape, axis, reverse):
    rng = np.random.default_rng(0)
    a, b = rng.random(shape), rng.random(shape)
    for array in (a, b):
        array.setflags(write=False)
    result = IMPLS["linear_recurrence"](a, b, axis=axis, reverse=reverse)
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
