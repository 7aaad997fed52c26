"""longdouble and clongdouble values (NumPy's 80-bit x87 format on x86) are accepted and computed in float64 /
complex128, with an ExtendedPrecisionWarning that names the user's line (adarray.core.precision): as transformation
arguments (autograd's test_dtypes), as constants of traced functions, and as operands of eager adarray.numpy calls."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.core.precision import ExtendedPrecisionWarning

pytestmark = pytest.mark.skipif(np.dtype(np.longdouble) == np.dtype(np.float64),
                                reason="longdouble is float64 on this platform: nothing is converted")
rng = np.random.default_rng(8)


def _f(x):
    return anp.real(anp.sum(x ** 2))


def test_gradients_of_longdouble_arguments_as_autograd():
    y = rng.normal(size=(4, 4)).astype(np.longdouble)
    with pytest.warns(ExtendedPrecisionWarning, match="float128 array of shape \\(4, 4\\) was converted to float64"):
        gradient = ad.grad(_f)(y)
    assert gradient.dtype == np.float64
    np.testing.assert_array_equal(gradient, ad.grad(_f)(y.astype(np.float64)))
    z = (rng.normal(size=(3,)) + 1j * rng.normal(size=(3,))).astype(np.clongdouble)
    with pytest.warns(ExtendedPrecisionWarning, match="complex128"):
        assert ad.grad(_f)(z).dtype == np.complex128


def test_jit_constants_and_eager_calls():
    y = rng.normal(size=3).astype(np.longdouble)
    with pytest.warns(ExtendedPrecisionWarning):
        out = ad.jit(lambda x: anp.sin(x) * y)(np.ones(3))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.sin(1.0) * y.astype(np.float64))
    with pytest.warns(ExtendedPrecisionWarning):
        eager = anp.exp(y)
    assert eager.dtype == np.float64
    np.testing.assert_array_equal(eager, np.exp(y.astype(np.float64)))
    with pytest.warns(ExtendedPrecisionWarning, match="replaced by float64"):
        assert anp.asarray(np.ones(2), anp.longdouble).dtype == np.float64


def test_the_warning_names_the_callers_line():
    y = np.ones(2, np.longdouble)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ad.grad(_f)(y)
    assert caught and all(w.filename == __file__ for w in caught if w.category is ExtendedPrecisionWarning)


def test_float64_and_float32_arguments_warn_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtendedPrecisionWarning)
        ad.grad(_f)(np.ones(3))
        ad.grad(_f)(np.ones(3, np.float32))
        anp.sin(np.ones(2))
