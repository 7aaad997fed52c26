"""Gradients of the adarray.numpy functions against jax.numpy's, for every function both have
(one table of (name, adarray function, jax function, input sampler)); values too. Runs only where
JAX is installed, in float64 (x64 enabled inside each test)."""
import zlib

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def _normal(*shape):
    return lambda rng: (rng.normal(size=shape),)


def _positive(*shape):
    return lambda rng: (rng.uniform(0.5, 2.0, size=shape),)


def _pair(*shape):
    return lambda rng: (rng.normal(size=shape), rng.normal(size=shape))


def _knots(rng):
    return np.sort(rng.uniform(-2.0, 2.0, size=5))


def _both(name, *args, **kwargs):
    """The adarray and jax functions of one name with the same fixed extra arguments."""
    return (lambda x: getattr(anp, name)(x, *args, **kwargs), lambda x: getattr(jnp, name)(x, *args, **kwargs))


# name -> (adarray fn, jax fn, sampler); the first sampled argument is differentiated, the rest fixed.
TABLE = {
    "sort": (*_both("sort", axis=0), _normal(4, 3)),
    "diag": (*_both("diag", 1), _normal(4)),
    "diagonal": (*_both("diagonal", 1, 0, 2), _normal(3, 2, 4)),
    "trace": (*_both("trace", -1), _normal(4, 5)),
    "triu": (*_both("triu", 1), _normal(2, 3, 4)),
    "tril": (*_both("tril", -1), _normal(3, 4)),
    "roll": (*_both("roll", 2, 1), _normal(3, 5)),
    "pad_constant": (*_both("pad", ((1, 2), (0, 1)), constant_values=0.5), _normal(3, 4)),
    "pad_edge": (*_both("pad", 2, mode="edge"), _normal(3, 4)),
    "pad_reflect": (*_both("pad", ((2, 3), (1, 1)), mode="reflect"), _normal(3, 4)),
    "pad_symmetric": (*_both("pad", 3, mode="symmetric"), _normal(4)),
    "pad_wrap": (*_both("pad", (1, 4), mode="wrap"), _normal(3)),
    "diff": (*_both("diff", 2, axis=0), _normal(5, 3)),
    "diff_prepend": (*_both("diff", prepend=0.3), _normal(5)),
    "cross": (lambda a, b: anp.cross(a, b), lambda a, b: jnp.cross(a, b), _pair(4, 3)),
    "kron": (lambda a, b: anp.kron(a, b), lambda a, b: jnp.kron(a, b), lambda rng: (rng.normal(size=(2, 3)),
                                                                                   rng.normal(size=(3, 2)))),
    "log2": (anp.log2, jnp.log2, _positive(5)),
    "log10": (anp.log10, jnp.log10, _positive(5)),
    "exp2": (anp.exp2, jnp.exp2, _normal(5)),
    "hypot": (lambda a, b: anp.hypot(a, b), lambda a, b: jnp.hypot(a, b), _pair(5)),
    "sinc": (anp.sinc, jnp.sinc, _normal(6)),
    "deg2rad": (anp.deg2rad, jnp.deg2rad, _normal(5)),
    "rad2deg": (anp.rad2deg, jnp.rad2deg, _normal(5)),
    "radians": (anp.radians, jnp.radians, _normal(5)),
    "degrees": (anp.degrees, jnp.degrees, _normal(5)),
    "arcsinh": (anp.arcsinh, jnp.arcsinh, _normal(5)),
    "arccosh": (anp.arccosh, jnp.arccosh, lambda rng: (rng.uniform(1.2, 3.0, size=5),)),
    "arctanh": (anp.arctanh, jnp.arctanh, lambda rng: (rng.uniform(-0.8, 0.8, size=5),)),
    "nan_to_num": (*_both("nan_to_num", nan=0.5, posinf=2.0), _normal(5)),
    "nansum": (*_both("nansum", axis=0), _normal(3, 4)),
    "nanmean": (*_both("nanmean", axis=1), _normal(3, 4)),
    "nanvar": (*_both("nanvar", ddof=1), _normal(3, 4)),
    "nanstd": (*_both("nanstd", axis=0), _normal(3, 4)),
    "nanmax": (*_both("nanmax", axis=1), _normal(3, 4)),
    "nanmin": (*_both("nanmin"), _normal(3, 4)),
    "median": (*_both("median", axis=0), _normal(4, 3)),
    "median_odd": (*_both("median"), _normal(5)),
    "quantile": (*_both("quantile", np.array([0.2, 0.75]), axis=1), _normal(3, 5)),
    "quantile_in_q": (lambda q: anp.quantile(np.arange(6.0) ** 2, q), lambda q: jnp.quantile(np.arange(6.0) ** 2, q),
                      lambda rng: (rng.uniform(0.05, 0.95, size=3),)),
    "percentile": (*_both("percentile", 35.0), _normal(3, 4)),
    "nanmedian": (*_both("nanmedian", axis=1), _normal(3, 4)),
    "nanquantile": (*_both("nanquantile", 0.3), _normal(3, 4)),
    "average": (lambda x, w: anp.average(x, axis=1, weights=w), lambda x, w: jnp.average(x, axis=1, weights=w),
                lambda rng: (rng.normal(size=(3, 4)), rng.uniform(0.5, 1.5, size=4))),
    "average_weights": (lambda w, x: anp.average(x, axis=1, weights=w), lambda w, x: jnp.average(x, axis=1, weights=w),
                        lambda rng: (rng.uniform(0.5, 1.5, size=4), rng.normal(size=(3, 4)))),
    "cov": (anp.cov, jnp.cov, _normal(3, 6)),
    "cov_aweights": (lambda x, w: anp.cov(x, aweights=w), lambda x, w: jnp.cov(x, aweights=w),
                     lambda rng: (rng.normal(size=(2, 5)), rng.uniform(0.5, 1.5, size=5))),
    "corrcoef": (anp.corrcoef, jnp.corrcoef, _normal(3, 6)),
    "meshgrid": (lambda x, y: anp.meshgrid(x, y), lambda x, y: jnp.meshgrid(x, y),
                 lambda rng: (rng.normal(size=3), rng.normal(size=4))),
    "interp_x": (lambda x, xp, fp: anp.interp(x, xp, fp), lambda x, xp, fp: jnp.interp(x, xp, fp),
                 lambda rng: (rng.uniform(-2.5, 2.5, size=7), _knots(rng), rng.normal(size=5))),
    "interp_fp": (lambda fp, x, xp: anp.interp(x, xp, fp), lambda fp, x, xp: jnp.interp(x, xp, fp),
                  lambda rng: (rng.normal(size=5), rng.uniform(-2.5, 2.5, size=7), _knots(rng))),
    "interp_xp": (lambda xp, x, fp: anp.interp(x, xp, fp), lambda xp, x, fp: jnp.interp(x, xp, fp),
                  lambda rng: (_knots(rng), rng.uniform(-1.5, 1.5, size=7), rng.normal(size=5))),
    **{f"convolve_{mode}": (lambda a, v, mode=mode: anp.convolve(a, v, mode),
                            lambda a, v, mode=mode: jnp.convolve(a, v, mode),
                            lambda rng: (rng.normal(size=6), rng.normal(size=3)))
       for mode in ("full", "same", "valid")},
    "correlate": (lambda a, v: anp.correlate(a, v, "full"), lambda a, v: jnp.correlate(a, v, "full"),
                  lambda rng: (rng.normal(size=6), rng.normal(size=4))),
    "select": (lambda x: anp.select([x < -0.3, x > 0.4], [x ** 2, anp.sin(x)], 0.5),
               lambda x: jnp.select([x < -0.3, x > 0.4], [x ** 2, jnp.sin(x)], 0.5), _normal(6)),
    "piecewise": (lambda x: anp.piecewise(x, [x < 0, x > 0.5], [lambda v: v ** 3, lambda v: anp.cos(v), 1.0]),
                  lambda x: jnp.piecewise(x, [x < 0, x > 0.5], [lambda v: v ** 3, lambda v: jnp.cos(v), 1.0]),
                  _normal(6)),
    "clip": (lambda x, lo, hi: anp.clip(x, lo, hi), lambda x, lo, hi: jnp.clip(x, lo, hi),
             lambda rng: (rng.normal(size=(3, 4)), -rng.uniform(0.2, 1.0, size=4), rng.uniform(0.2, 1.0, size=(3, 1)))),
    "outer": (lambda a, b: anp.outer(a, b), lambda a, b: jnp.outer(a, b),
              lambda rng: (rng.normal(size=(2, 3)), rng.normal(size=4))),
    "inner": (lambda a, b: anp.inner(a, b), lambda a, b: jnp.inner(a, b),
              lambda rng: (rng.normal(size=(2, 3)), rng.normal(size=(4, 3)))),
    "append": (*_both("append", np.ones((1, 3)), axis=0), _normal(2, 3)),
    "insert": (*_both("insert", 1, 5.0, axis=1), _normal(2, 3)),
    "delete": (*_both("delete", np.array([0, 2]), axis=1), _normal(2, 4)),
    "column_stack": (lambda x, y: anp.column_stack([x, y]), lambda x, y: jnp.column_stack([x, y]), _pair(4)),
    "array_split": (*_both("array_split", 3), _normal(7)),
    "gradient": (anp.gradient, jnp.gradient, _normal(4, 5)),
    "vstack": (lambda x, y: anp.vstack([x, y]), lambda x, y: jnp.vstack([x, y]), _pair(4)),
    "hstack": (lambda x, y: anp.hstack([x, y]), lambda x, y: jnp.hstack([x, y]), _pair(4)),
    "dstack": (lambda x, y: anp.dstack([x, y]), lambda x, y: jnp.dstack([x, y]), _pair(2, 3)),
    "flipud": (anp.flipud, jnp.flipud, _normal(3, 2)),
    "fliplr": (anp.fliplr, jnp.fliplr, _normal(3, 2)),
    "rot90": (*_both("rot90", 3), _normal(3, 2, 2)),
    "atleast_2d": (anp.atleast_2d, jnp.atleast_2d, _normal(4)),
    "linspace": (lambda a, b: anp.linspace(a, b, 6), lambda a, b: jnp.linspace(a, b, 6),
                 lambda rng: (np.array(rng.normal()), np.array(3.0))),
    "trapezoid": (lambda y, x: anp.trapezoid(y, x), lambda y, x: jnp.trapezoid(y, x),
                  lambda rng: (rng.normal(size=5), np.cumsum(rng.uniform(0.5, 1.5, size=5)))),
    "ptp": (*_both("ptp", axis=0), _normal(3, 4)),
    "einsum_trace": (lambda x: anp.einsum("ii->", x), lambda x: jnp.einsum("ii->", x), _normal(3, 3)),
    "einsum_diagonal": (lambda x: anp.einsum("iij->j", x), lambda x: jnp.einsum("iij->j", x), _normal(3, 3, 2)),
    "einsum_ellipsis": (lambda x, y: anp.einsum("...ij,...jk", x, y), lambda x, y: jnp.einsum("...ij,...jk", x, y),
                        lambda rng: (rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 2)))),
    "einsum_chain": (lambda x, y: anp.einsum("ij,jk,kl->il", x, y, y.T),
                     lambda x, y: jnp.einsum("ij,jk,kl->il", x, y, y.T),
                     lambda rng: (rng.normal(size=(2, 3)), rng.normal(size=(3, 4)))),
}

# issue 10, the remaining common names: elementwise, creation, shapes, selection
_SIGNED = lambda rng: rng.uniform(0.5, 2.0, size=5) * rng.choice([-1.0, 1.0], size=5)  # noqa: E731
TABLE.update({
    "float_power": (lambda x, y: anp.float_power(x, y), lambda x, y: jnp.float_power(x, y),
                    lambda rng: (rng.uniform(0.5, 2.0, size=5), rng.normal(size=5))),
    "float_power_exponent": (lambda y, x: anp.float_power(x, y), lambda y, x: jnp.float_power(x, y),
                             lambda rng: (rng.normal(size=5), rng.uniform(0.5, 2.0, size=5))),
    "fmod": (lambda x, y: anp.fmod(x, y), lambda x, y: jnp.fmod(x, y),
             lambda rng: (3.0 * rng.normal(size=5), _SIGNED(rng))),
    "fmod_divisor": (lambda y, x: anp.fmod(x, y), lambda y, x: jnp.fmod(x, y),
                     lambda rng: (_SIGNED(rng), 3.0 * rng.normal(size=5))),
    "divmod": (lambda x, y: anp.divmod(x, y), lambda x, y: jnp.divmod(x, y),
               lambda rng: (3.0 * rng.normal(size=5), _SIGNED(rng))),
    "cbrt": (anp.cbrt, jnp.cbrt, lambda rng: (_SIGNED(rng),)),
    "copysign": (lambda x, y: anp.copysign(x, y), lambda x, y: jnp.copysign(x, y), _pair(6)),
    "heaviside": (lambda h, x: anp.heaviside(x, h), lambda h, x: jnp.heaviside(x, h),
                  lambda rng: (rng.normal(size=5), np.array([-1.0, 0.0, 2.0, 0.0, 0.5]))),
    "ldexp": (lambda x, n: anp.ldexp(x, n), lambda x, n: jnp.ldexp(x, n),
              lambda rng: (rng.normal(size=5), rng.integers(-3, 4, size=5))),
    "frexp": (anp.frexp, jnp.frexp, lambda rng: (4.0 * rng.normal(size=5),)),
    "modf": (anp.modf, jnp.modf, lambda rng: (4.0 * rng.normal(size=5),)),
    "rint": (anp.rint, jnp.rint, lambda rng: (4.0 * rng.normal(size=5),)),
    "trunc": (anp.trunc, jnp.trunc, lambda rng: (4.0 * rng.normal(size=5),)),
    "around": (*_both("around", 2), _normal(5)),
    "logspace": (lambda a, b: anp.logspace(a, b, 5, base=3.0), lambda a, b: jnp.logspace(a, b, 5, base=3.0),
                 lambda rng: (np.array(rng.normal()), np.array(1.5))),
    "logspace_base": (lambda base: anp.logspace(0.5, 2.0, 4, base=base),
                      lambda base: jnp.logspace(0.5, 2.0, 4, base=base), lambda rng: (np.array(2.5),)),
    "geomspace": (lambda a, b: anp.geomspace(a, b, 5), lambda a, b: jnp.geomspace(a, b, 5),
                  lambda rng: (np.array(rng.uniform(0.5, 2.0)), np.array(40.0))),
    "geomspace_negative": (lambda b, a: anp.geomspace(a, b, 4, endpoint=False),
                           lambda b, a: jnp.geomspace(a, b, 4, endpoint=False),
                           lambda rng: (np.array(-rng.uniform(5.0, 9.0)), np.array(-0.5))),
    "block": (lambda x, y: anp.block([[x, y], [y, x]]), lambda x, y: jnp.block([[x, y], [y, x]]), _pair(2, 2)),
    "resize": (*_both("resize", (3, 5)), _normal(2, 3)),
    "put_along_axis": (lambda v, a: anp.put_along_axis(a, np.array([[2, 0], [1, 1]]), v, 1, inplace=False),
                       lambda v, a: jnp.put_along_axis(a, np.array([[2, 0], [1, 1]]), v, 1, inplace=False),
                       lambda rng: (rng.normal(size=(2, 2)), rng.normal(size=(2, 3)))),
    "put_along_axis_array": (lambda a, v: anp.put_along_axis(a, np.array([[0], [2]]), v, 1, inplace=False),
                             lambda a, v: jnp.put_along_axis(a, np.array([[0], [2]]), v, 1, inplace=False),
                             lambda rng: (rng.normal(size=(2, 3)), rng.normal(size=(2, 1)))),
    "choose": (lambda c: anp.choose(np.array([[0, 2, 1], [1, 0, 2]]), c),
               lambda c: jnp.choose(np.array([[0, 2, 1], [1, 0, 2]]), c), _normal(3, 2, 3)),
    "choose_clip": (lambda c: anp.choose(np.array([0, 5, -1, 1]), c, mode="clip"),
                    lambda c: jnp.choose(np.array([0, 5, -1, 1]), c, mode="clip"), _normal(3, 4)),
    "compress": (lambda x: anp.compress(np.array([True, False, True]), x, axis=1),
                 lambda x: jnp.compress(np.array([True, False, True]), x, axis=1), _normal(2, 3)),
    "extract": (lambda x: anp.extract(np.array([1, 0, 2, 0, 3]), x),
                lambda x: jnp.extract(np.array([1, 0, 2, 0, 3]), x), _normal(5)),
    "trim_zeros": (lambda x: anp.trim_zeros(x * np.array([0.0, 1, 0, 1, 0]), size=3),
                   lambda x: jnp.trim_zeros(x * np.array([0.0, 1, 0, 1, 0])), _normal(5)),
})


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


@pytest.mark.parametrize("name", sorted(TABLE))
def test_values_and_gradients_match_jax(name):
    ours, theirs, sampler = TABLE[name]
    args = sampler(np.random.default_rng(zlib.crc32(name.encode())))
    with jax.enable_x64(True):
        expected = [np.asarray(v) for v in _leaves(theirs(*[jnp.asarray(a) for a in args]))]
        actual = _leaves(ours(*args))
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)
        weights = [np.random.default_rng(7).normal(size=np.shape(e)) for e in expected]

        def jax_objective(x):
            outs = _leaves(theirs(x, *[jnp.asarray(a) for a in args[1:]]))
            return sum(jnp.sum(o * w) for o, w in zip(outs, weights))

        def our_objective(x):
            return sum(anp.sum(o * w) for o, w in zip(_leaves(ours(x, *args[1:])), weights))

        expected_grad = np.asarray(jax.grad(jax_objective)(jnp.asarray(args[0])))
    np.testing.assert_allclose(ad.grad(our_objective)(args[0]), expected_grad, rtol=1e-9, atol=1e-11)
