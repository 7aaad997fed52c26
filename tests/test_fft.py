"""adarray.numpy.fft against numpy.fft (values, every n / s / axes / norm), derivatives against finite
differences in every direction (to second order) and against JAX's, batching, and errors."""
import warnings

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.testing import check_grads

RNG = np.random.default_rng(3)
REAL = RNG.normal(size=(4, 6))
COMPLEX = RNG.normal(size=(4, 6)) + 1j * RNG.normal(size=(4, 6))
NORMS = [None, "backward", "ortho", "forward"]

ONE_AXIS = [  # (name, operand, keyword variations)
    ("fft", COMPLEX, [{}, {"n": 4}, {"n": 9}, {"axis": 0}, {"axis": 0, "n": 3}]),
    ("ifft", COMPLEX, [{}, {"n": 5}, {"axis": 0, "n": 7}]),
    ("rfft", REAL, [{}, {"n": 5}, {"n": 10}, {"axis": 0}, {"axis": 0, "n": 7}]),
    ("irfft", COMPLEX, [{}, {"n": 5}, {"n": 11}, {"axis": 0}, {"axis": 0, "n": 2}]),
    ("hfft", COMPLEX, [{}, {"n": 7}, {"axis": 0}]),
    ("ihfft", REAL, [{}, {"n": 5}, {"axis": 0}]),
]
SEVERAL_AXES = [
    ("fftn", COMPLEX, [{}, {"s": (3, 8)}, {"axes": (0,)}, {"axes": (1, 0), "s": (5, 2)}]),
    ("ifftn", COMPLEX, [{}, {"s": (5, 5)}]),
    ("rfftn", REAL, [{}, {"s": (3, 7)}, {"axes": (1, 0)}, {"axes": (0,)}]),
    ("irfftn", COMPLEX, [{}, {"s": (3, 7)}, {"axes": (1, 0)}, {"s": (4, 10)}]),
    ("fft2", COMPLEX, [{}, {"s": (2, 3)}]),
    ("ifft2", COMPLEX, [{}]),
    ("rfft2", REAL, [{}, {"s": (5, 4)}]),
    ("irfft2", COMPLEX, [{}, {"s": (4, 9)}]),
]
CASES = [pytest.param(name, x, kw, id=f"{name}-{i}") for name, x, kws in ONE_AXIS + SEVERAL_AXES
         for i, kw in enumerate(kws)]


@pytest.mark.parametrize("name, x, kwargs", CASES)
@pytest.mark.parametrize("norm", NORMS)
def test_values_match_numpy(name, x, kwargs, norm):
    got = getattr(anp.fft, name)(x, norm=norm, **kwargs)
    with warnings.catch_warnings():  # NumPy 2 deprecates s without axes (the cases here have len(s) == ndim)
        warnings.simplefilter("ignore", DeprecationWarning)
        want = getattr(np.fft, name)(x, norm=norm, **kwargs)
    assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, x, kwargs", CASES)
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_derivatives_to_second_order(name, x, kwargs, norm):
    fn = getattr(anp.fft, name)
    # times a nonlinear function, so that second derivatives are not all zero
    check_grads(lambda x: fn(x, norm=norm, **kwargs) ** 2, (x,), order=2)


def test_single_precision_and_integers():
    for name, x in (("fft", COMPLEX), ("rfft", REAL), ("irfft", COMPLEX), ("fft2", REAL)):
        x32 = x.astype(np.complex64 if np.iscomplexobj(x) else np.float32)
        got, want = getattr(anp.fft, name)(x32), getattr(np.fft, name)(x32)
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ints = np.arange(6)
    np.testing.assert_allclose(anp.fft.fft(ints), np.fft.fft(ints))
    np.testing.assert_allclose(anp.fft.rfft(ints), np.fft.rfft(ints))


def test_shifts_and_frequencies():
    for axes in (None, 0, (1,), (0, 1)):
        np.testing.assert_array_equal(anp.fft.fftshift(COMPLEX, axes), np.fft.fftshift(COMPLEX, axes))
        np.testing.assert_array_equal(anp.fft.ifftshift(REAL, axes), np.fft.ifftshift(REAL, axes))
    check_grads(lambda x: anp.fft.fftshift(anp.fft.fft(x)) * anp.fft.ifftshift(x), (COMPLEX[:, :5],), order=1)
    for n in (1, 6, 7):
        np.testing.assert_allclose(anp.fft.fftfreq(n, 0.1), np.fft.fftfreq(n, 0.1))
        np.testing.assert_allclose(anp.fft.rfftfreq(n, 0.1), np.fft.rfftfreq(n, 0.1))
    # a traced spacing: d (frequencies / d) / dd = -frequencies / d^2
    gradient = ad.grad(lambda d: anp.sum(anp.fft.fftfreq(4, d)))(0.5)
    np.testing.assert_allclose(gradient, -np.sum(np.fft.fftfreq(4)) / 0.25)


def test_round_trips_and_parseval():
    np.testing.assert_allclose(anp.fft.irfft(anp.fft.rfft(REAL), n=6), REAL, atol=1e-14)
    np.testing.assert_allclose(anp.fft.ifftn(anp.fft.fftn(COMPLEX)), COMPLEX, atol=1e-14)

    def energy(x):  # Parseval with the orthonormal transform: its gradient is 2 x
        return anp.sum(anp.abs(anp.fft.fft(x, norm="ortho")) ** 2)

    np.testing.assert_allclose(ad.grad(energy)(REAL), 2 * REAL, rtol=1e-12)
    np.testing.assert_allclose(ad.grad(energy)(COMPLEX), 2 * np.conj(COMPLEX), rtol=1e-12)


def test_vmap_and_numpy_dispatch():
    batched = ad.vmap(lambda x: anp.fft.rfft(x, n=8))(REAL)
    np.testing.assert_allclose(batched, np.fft.rfft(REAL, n=8), rtol=1e-12)
    batched = ad.vmap(lambda z: anp.fft.irfft2(z), in_axes=1)(COMPLEX.reshape(2, 2, 6))
    np.testing.assert_allclose(batched, np.stack([np.fft.irfft2(COMPLEX.reshape(2, 2, 6)[:, k])
                                                  for k in range(2)]), rtol=1e-12)
    # numpy.fft's own functions on a traced value run adarray's
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(np.fft.rfft(x).real))(REAL[0]),
                               ad.grad(lambda x: anp.sum(anp.real(anp.fft.rfft(x))))(REAL[0]))


def test_one_primitive_per_transform():
    program = ad.make_ir(ad.grad(lambda x: anp.sum(anp.abs(anp.fft.rfft(x)) ** 2)))(REAL[0])
    text = str(program)
    assert text.count("= fft[") == 2, text  # the transform and its transpose, no dense matrices


def test_errors():
    with pytest.raises(ad.ShapeError, match="rfft: needs a real array"):
        anp.fft.rfft(COMPLEX)
    with pytest.raises(ad.ArgumentError, match="norm"):
        anp.fft.fft(COMPLEX, norm="both")
    with pytest.raises(ad.ShapeError, match="invalid number of FFT data points"):
        anp.fft.irfft(COMPLEX, n=0)
    with pytest.raises(ad.ShapeError, match="empty axes"):
        anp.fft.fft(np.zeros((2, 0)))
    with pytest.raises(ad.ShapeError, match="s .* and axes"):
        anp.fft.fftn(COMPLEX, s=(2, 3), axes=(0,))
    with pytest.raises(ad.IndexOutOfRangeError):
        anp.fft.fft(COMPLEX, axis=2)


# --- against JAX -----------------------------------------------------------------------------------

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

PAIRS = [
    ("fft", lambda f, x: f.fft(x * (1 + 0.5j), norm="ortho"), REAL),
    ("ifft", lambda f, x: f.ifft(x, n=8), COMPLEX),
    ("rfft", lambda f, x: f.rfft(x, n=7, axis=0), REAL),
    ("irfft", lambda f, x: f.irfft(x, n=9), COMPLEX),
    ("irfft-even", lambda f, x: f.irfft(x, norm="forward"), COMPLEX),
    ("rfftn", lambda f, x: f.rfftn(x, s=(5, 4)), REAL),
    ("irfftn", lambda f, x: f.irfftn(x, norm="ortho"), COMPLEX),
    ("fft2", lambda f, x: f.fft2(x), COMPLEX),
]


@pytest.mark.parametrize("label, build, x", PAIRS, ids=[p[0] for p in PAIRS])
def test_gradients_match_jax(label, build, x):
    def loss(lib, f):
        def value(x):
            y = build(f, x)
            k = np.arange(np.prod(y.shape)).reshape(y.shape)
            w = np.cos(k) + 1j * np.sin(2.0 * k)
            return lib.sum(lib.real(y * w) ** 2)
        return value

    with jax.enable_x64(True):
        expected = np.asarray(jax.grad(loss(jnp, jnp.fft))(jnp.asarray(x)))
    np.testing.assert_allclose(ad.grad(loss(anp, anp.fft))(x), expected, rtol=1e-10, atol=1e-12)
