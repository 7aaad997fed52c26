"""adarray.scipy.signal.convolve against scipy.signal.convolve (every mode, 1-D and n-D, direct and FFT, integer and
complex operands), autograd's axes/dot_axes generalisation against its own test's identities, and derivatives of
both operands to second order against central differences (adarray.testing.check_grads)."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.signal as ss

import adarray as ad
import adarray.numpy as anp
import adarray.scipy.signal as signal
from adarray.testing import check_grads

rng = np.random.default_rng(5)
R = rng.normal
SHAPES = [((4,), (2,)), ((5,), (3,)), ((6,), (4,)), ((2,), (6,)), ((1,), (1,)), ((4, 3), (2, 2)), ((5, 4), (3, 2)),
          ((6, 7), (4, 1)), ((2, 3), (4, 5)), ((3, 4, 2), (2, 2, 3))]
MODES = ["full", "same", "valid"]


def _valid_allowed(s1, s2):
    return all(a >= b for a, b in zip(s1, s2)) or all(b >= a for a, b in zip(s1, s2))


@pytest.mark.parametrize("method", ["direct", "fft", "auto"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("s1, s2", SHAPES)
def test_values_match_scipy(s1, s2, mode, method):
    a, b = R(size=s1), R(size=s2)
    if mode == "valid" and not _valid_allowed(s1, s2):
        with pytest.raises(ad.ShapeError, match="valid"):
            signal.convolve(a, b, mode, method)
        return
    expected = ss.convolve(a, b, mode, method="direct")
    got = signal.convolve(a, b, mode, method)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(ad.jit(lambda x, y: signal.convolve(x, y, mode, method))(a, b), expected,
                               rtol=1e-12, atol=1e-13)


def test_integer_and_complex_operands():
    a, b = np.array([1, 2, 3, 4]), np.array([2, -1])
    for mode in MODES:
        expected = ss.convolve(a, b, mode)
        got = signal.convolve(a, b, mode)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    za, zb = R(size=(5, 3)) + 1j * R(size=(5, 3)), R(size=(2, 2)) + 1j * R(size=(2, 2))
    for mode in MODES:
        for method in ("direct", "fft"):
            np.testing.assert_allclose(signal.convolve(za, zb, mode, method), ss.convolve(za, zb, mode), atol=1e-13)
    assert signal.convolve(R(size=4).astype(np.float32), np.ones(2, np.float32)).dtype == np.float32


def test_large_inputs_go_through_the_fft():
    a, b = R(size=3000), R(size=2000)
    program = ad.make_ir(lambda x, y: signal.convolve(x, y))(a, b)
    assert "fft" in str(program)
    np.testing.assert_allclose(signal.convolve(a, b), ss.convolve(a, b), atol=1e-11)
    small = ad.make_ir(lambda x, y: signal.convolve(x, y))(a[:30], b[:20])
    assert "fft" not in str(small) and "einsum" in str(small)


@pytest.mark.parametrize("method", ["direct", "fft"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("s1, s2", [((4,), (2,)), ((6,), (4,)), ((3,), (5,)), ((4, 3), (2, 2)), ((5, 4), (3, 2)),
                                    ((6, 7), (4, 1))])
def test_derivatives_of_both_operands(s1, s2, mode, method):
    if mode == "valid" and not _valid_allowed(s1, s2):
        pytest.skip("no valid overlap")
    check_grads(lambda x, y: signal.convolve(x, y, mode, method), (R(size=s1), R(size=s2)), order=2,
                rng=np.random.default_rng(0))


def test_autograd_generalisation():
    # The identities of autograd's test_convolve_generalization.
    a35, a34, a342, a2543, a24232 = R(size=(3, 5)), R(size=(3, 4)), R(size=(3, 4, 2)), R(size=(2, 5, 4, 3)), R(
        size=(2, 4, 2, 3, 2))
    for mode in ("valid", "full"):
        for method in ("direct", "fft"):
            conv = functools.partial(signal.convolve, mode=mode, method=method)
            np.testing.assert_allclose(conv(a35, a34, axes=([1], [0]))[1, 2], ss.convolve(a35[1, :], a34[:, 2], mode))
            np.testing.assert_allclose(conv(a35, a34, axes=([], []), dot_axes=([0], [0])),
                                       np.tensordot(a35, a34, axes=([0], [0])))
            np.testing.assert_allclose(conv(a35, a342, axes=([1], [2]), dot_axes=([0], [0]))[2],
                                       sum(ss.convolve(a35[i, :], a342[i, 2, :], mode) for i in range(3)))
            np.testing.assert_allclose(
                conv(a2543, a24232, axes=([1, 2], [2, 4]), dot_axes=([0, 3], [0, 3]))[2],
                sum(ss.convolve(a2543[i, :, :, j], a24232[i, 2, :, j, :], mode) for i in range(2) for j in range(3)))


@pytest.mark.parametrize("axes, dot_axes", [(([0], [0]), ((), ())), (([1], [1]), ((), ())), (([0], [1]), ((), ())),
                                            (([1, 0], [1, 0]), ((), ())), (([1], [1]), ([0], [2])),
                                            (([1], [1]), ([0], [0]))])
@pytest.mark.parametrize("mode", MODES)
def test_generalisation_derivatives(axes, dot_axes, mode):
    # autograd's test_convolve_ignore and test_convolve_ignore_dot
    a, b = (R(size=(4, 3)), R(size=(3, 2))) if not dot_axes[0] else (R(size=(3, 3, 2)), R(size=(3, 2, 3)))
    if mode == "valid":
        sizes = [(a.shape[i], b.shape[j]) for i, j in zip(*axes)]
        if not _valid_allowed(*zip(*sizes)):
            pytest.skip("no valid overlap")
    check_grads(lambda x, y: signal.convolve(x, y, mode, axes=axes, dot_axes=dot_axes), (a, b), order=1,
                rng=np.random.default_rng(1))


def test_convolution_is_linear_in_each_operand_and_commutes_in_full_mode():
    a, b = R(size=(5, 3)), R(size=(2, 4))
    np.testing.assert_allclose(signal.convolve(a, b), signal.convolve(b, a), atol=1e-14)
    jac = ad.jacfwd(lambda x: signal.convolve(x, b, "same"))(a)
    np.testing.assert_allclose(np.einsum("ijkl,kl->ij", jac, a), signal.convolve(a, b, "same"), atol=1e-13)
    g = ad.grad(lambda x: anp.sum(signal.convolve(x, b, "valid") ** 2))(R(size=(6, 6)))
    assert g.shape == (6, 6)


def test_errors():
    with pytest.raises(ad.ArgumentError, match="mode"):
        signal.convolve(np.ones(3), np.ones(2), "circular")
    with pytest.raises(ad.ArgumentError, match="method"):
        signal.convolve(np.ones(3), np.ones(2), method="overlap-add")
    with pytest.raises(ad.ShapeError, match="dimensionality"):
        signal.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ad.ShapeError, match="empty"):
        signal.convolve(np.ones(3), np.ones(0))
    with pytest.raises(ad.ArgumentError, match="fft"):
        signal.convolve(np.arange(3), np.arange(2), method="fft")
    with pytest.raises(ad.ShapeError, match="dot axes"):
        signal.convolve(np.ones((2, 3)), np.ones((3, 3)), axes=([1], [1]), dot_axes=([0], [0]))
