"""Taylor mode (ad.jet, ad.taylor, transforms/jet.py).

The generated test compares every primitive's Taylor rule with nested forward mode: for an input
path x(t) = x_0 + x_1 t + ... + x_K t^K (random coefficients), the k-th coefficient of the output
must equal (d/dt)^k f(x(t)) / k! at t = 0, computed by k nested jvp programs. Every registry case
runs to order 3, the first case of each primitive to order 5, and a stationary path (x_1 = 0, x_2 a
symbolic zero) to order 4. The JAX tests compare ad.jet with jax.experimental.jet where both work.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.backends.numpy import compile_program
from adarray.core.primitive import unsupported
from adarray.core.types import Aval, is_complex, is_float
from adarray.passes import simplify
from adarray.primitives import elementwise as ew
from adarray.primitives.structural import broadcast_in_dim
from adarray.testing.registry import primitive_program, registry_cases, seed
from adarray.tracing import eval_program, trace_program
from adarray.transforms.jet import jet_program
from adarray.transforms.jvp import jvp_program


def _cases():
    cases, seen = [], set()
    for case_id, name, args, params in registry_cases():
        first = name not in seen
        seen.add(name)
        cases.append(pytest.param(name, args, params, 5 if first else 3, id=case_id))
    return cases


CASES = _cases()
FIRST_CASES = [c for c in CASES if c.values[3] == 5]


def nested_jvp_coefficients(program, args, series, order):
    """[f(x_0), then for k = 1..order: (d/dt)^k f(x(t)) / k! at t = 0] by nested jvp programs,
    where x(t) = x_0 + sum_k series[i][k - 1] t^k (series[i] None: the input is constant)."""
    def path(t):
        inputs = []
        for arg, coefficients, aval in zip(args, series, program.in_avals):
            value = arg
            for k, c in enumerate(coefficients or [], start=1):
                if c is None:
                    continue
                power = ew.convert(broadcast_in_dim(ew.integer_pow(t, k), aval.shape, ()), aval.dtype)
                value = ew.add(value, ew.mul(c, power))
            inputs.append(value)
        return eval_program(program, inputs)

    scalar = [Aval((), np.float64)]
    current = simplify(trace_program(path, scalar, "path")[0])
    n = len(program.outputs)
    # coefficient 0 is f(x_0) itself (x_0 + 0 t would turn -0.0 into +0.0, which signbit tells apart)
    results = [compile_program(program)(*args)]
    for k in range(1, order + 1):
        derived = jvp_program(current, [True])
        current = simplify(trace_program(lambda t, d=derived: eval_program(d, [t, np.float64(1.0)])[n:],
                                         scalar, "derivative")[0])
        values = compile_program(current)(np.float64(0.0))
        results.append([_widened(o) / math.factorial(k) for o in values])
    return results


def jet_coefficients(program, args, series, order, terms=None):
    wrt = [s is not None for s in series]
    jetted, flags = jet_program(program, order, wrt, terms=terms)
    jetted = simplify(jetted)
    terms = list(range(1, order + 1)) if terms is None else list(terms)
    inputs = list(args) + [s[k - 1] for s in series if s is not None for k in terms]
    outs = compile_program(jetted)(*inputs)
    n = len(program.outputs)
    rest = iter(outs[n:])
    per_output = [[outs[i]] + ([next(rest) for _ in range(order)] if flags[i] else
                               [np.zeros(a.shape, a.dtype)] * order) for i, a in enumerate(program.out_avals)]
    return [[per_output[i][k] for i in range(n)] for k in range(order + 1)]


def _widened(value):
    """float64, or complex128 for a complex value (its imaginary part is compared too)."""
    value = np.asarray(value)
    return value.astype(np.complex128 if np.iscomplexobj(value) else np.float64)


def _compare(name, expected, got, dtype_of_outputs):
    for k, (want_k, got_k) in enumerate(zip(expected, got)):
        for i, (want, have) in enumerate(zip(want_k, got_k)):
            want, have = _widened(want), _widened(have)
            single = any(np.dtype(d) in (np.float32, np.complex64) for d in dtype_of_outputs)
            scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
            tolerance = (2e-3 if single else 1e-7) * scale
            assert have.shape == want.shape, f"{name}: coefficient {k} of output {i} has shape {have.shape}"
            assert np.allclose(have, want, rtol=tolerance, atol=tolerance, equal_nan=True), (
                f"{name}: Taylor coefficient {k} of output {i}\n  jet:        {have}\n  nested jvp: {want}")


def _random_series(program, args, order, rng):
    """Random coefficients x_1..x_K for every float input; complex inputs get complex coefficients
    (a real series of a complex input would leave the imaginary directions untested)."""
    def coefficient(a, dtype):
        value = rng.standard_normal(np.shape(a))
        if is_complex(dtype):
            value = value + 1j * rng.standard_normal(np.shape(a))
        return value.astype(dtype)

    return [[coefficient(a, aval.dtype) for _ in range(order)] if is_float(aval.dtype) else None
            for a, aval in zip(args, program.in_avals)]


@pytest.mark.parametrize("name, args, params, order", CASES)
def test_taylor_rule_matches_nested_jvp(name, args, params, order):
    program = primitive_program(name, args, params)
    rng = np.random.default_rng(seed(name, "taylor", repr(params), *[np.shape(a) for a in args]))
    series = _random_series(program, args, order, rng)
    expected = nested_jvp_coefficients(program, args, series, order)
    _compare(name, expected, jet_coefficients(program, args, series, order), [a.dtype for a in program.out_avals])


@pytest.mark.parametrize("name, args, params, order", FIRST_CASES)
def test_taylor_rule_on_a_stationary_path(name, args, params, order):
    """x_1 = 0 (a numerical zero) and x_2 a symbolic zero: the rules' zero paths, to order 4."""
    program = primitive_program(name, args, params)
    rng = np.random.default_rng(seed(name, "stationary", repr(params)))
    order = 4
    series = _random_series(program, args, order, rng)
    for s in series:
        if s is not None:
            s[0] = np.zeros_like(s[0])
    expected = nested_jvp_coefficients(program, args, [None if s is None else [s[0], None, *s[2:]] for s in series],
                                       order)
    got = jet_coefficients(program, args, series, order, terms=(1, 3, 4))
    _compare(name, expected, got, [a.dtype for a in program.out_avals])


def test_a_primitive_without_a_rule_raises_naming_it(monkeypatch):
    monkeypatch.setattr(ew.sinh_p, "taylor", None)
    with pytest.raises(ad.UnsupportedError, match="'sinh' has no Taylor rule"):
        ad.taylor(anp.sinh, 2)(0.5, 1.0)
    monkeypatch.setattr(ew.sinh_p, "taylor", unsupported("no series for this one"))
    with pytest.raises(ad.UnsupportedError, match="'sinh' does not support Taylor mode: no series for this one"):
        ad.jet(anp.sinh, (0.5,), ([1.0],))


# --- the public API ------------------------------------------------------------------------------------

def test_taylor_gives_plain_coefficients():
    coefficients = ad.taylor(anp.exp, 4)(0.5, 2.0)
    expected = [np.exp(0.5) * 2.0 ** k / math.factorial(k) for k in range(5)]
    np.testing.assert_allclose(coefficients, expected, rtol=1e-14)
    assert ad.taylor(anp.sin, 0)(0.3, 1.0) == [pytest.approx(np.sin(0.3))]


def test_taylor_of_a_pytree_function():
    def f(p):
        return {"y": anp.sum(anp.sin(p["w"]) * p["b"])}

    x0 = {"w": np.array([0.1, 0.2]), "b": np.array([1.0, 2.0])}
    v = {"w": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0])}
    c = ad.taylor(f, 3)(x0, v)
    # t -> sin(0.1 + t) * 1 + sin(0.2) * (2 + t)
    np.testing.assert_allclose(c[1]["y"], np.cos(0.1) + np.sin(0.2))
    np.testing.assert_allclose(c[2]["y"], -np.sin(0.1) / 2)
    np.testing.assert_allclose(c[3]["y"], -np.cos(0.1) / 6)


def test_jet_uses_derivative_terms():
    primal, terms = ad.jet(lambda x: x ** 3, (2.0,), ([1.0, 0.0, 0.0],))
    assert primal == 8.0
    np.testing.assert_allclose(terms, [12.0, 12.0, 6.0])


def test_jet_bad_input_is_an_adarray_error():
    with pytest.raises(ad.ArgumentError, match="inconsistent lengths"):
        ad.jet(lambda x, y: x * y, (1.0, 2.0), ([1.0], [1.0, 2.0]))
    with pytest.raises(ad.ArgumentError, match="shape"):
        ad.jet(anp.sin, (np.ones(3),), ([np.ones(2)],))
    with pytest.raises(ad.ArgumentError, match="order"):
        ad.taylor(anp.sin, -1)
    with pytest.raises(ad.ArgumentError, match="tuples"):
        ad.jet(anp.sin, 1.0, [1.0])


def test_taylor_composes_with_grad_and_vmap():
    # d/dx of the second coefficient of t -> exp(x + t) is exp(x) / 2
    grad = ad.grad(lambda x: ad.taylor(anp.exp, 2)(x, 1.0)[2])(0.3)
    np.testing.assert_allclose(grad, np.exp(0.3) / 2)
    batched = ad.vmap(lambda x: ad.taylor(anp.sin, 3)(x, 1.0)[3])(np.array([0.1, 0.2]))
    np.testing.assert_allclose(batched, -np.cos([0.1, 0.2]) / 6)


def test_taylor_through_control_flow():
    def loop(x):
        return ad.fold(lambda c, _: (anp.sin(c) * 0.9 + 0.1 * x, None), x, length=20)[0]

    def unrolled(x):
        c = x
        for _ in range(20):
            c = anp.sin(c) * 0.9 + 0.1 * x
        return c

    np.testing.assert_allclose(ad.taylor(loop, 4)(0.7, 1.0), ad.taylor(unrolled, 4)(0.7, 1.0), rtol=1e-12)

    def counted(x):  # a while loop with a data-dependent trip count: locally constant in t
        return ad.while_loop(lambda s: s[1] < 5.0, lambda s: (s[0] * anp.cos(s[0]), s[1] + s[0]), (x, 0.0))[0]

    x = 1.1
    steps = 0
    c, s = x, 0.0
    while s < 5.0:
        c, s, steps = c * np.cos(c), s + c, steps + 1
    reference = ad.taylor(lambda y: _repeat(lambda z: z * anp.cos(z), y, steps), 3)(x, 1.0)
    np.testing.assert_allclose(ad.taylor(counted, 3)(x, 1.0), reference, rtol=1e-12)


def _repeat(f, x, n):
    for _ in range(n):
        x = f(x)
    return x


def test_cost_grows_quadratically_not_exponentially():
    """Equations of the Taylor program of a chain of 8 products and exps: O(K^2), not 2^K."""
    def chain(x):
        for _ in range(8):
            x = anp.exp(anp.sin(x) * x)
        return x

    program = ad.make_ir(chain)(0.3)
    sizes = {k: len(simplify(jet_program(program, k)[0]).eqns) for k in (2, 4, 8)}
    assert sizes[8] < 4.5 * sizes[4] < 4.5 ** 2 * sizes[2], sizes


# --- against jax.experimental.jet ----------------------------------------------------------------------

def _jax_pairs():
    import jax.numpy as jnp
    import jax.scipy.special as jax_special
    from jax import lax, nn

    import adarray.scipy.special as special

    x = np.array([0.3, -0.7, 1.2])
    y = np.array([1.4, 0.5, 2.0])
    m = np.arange(6.0).reshape(2, 3) / 7.0
    return [
        ("sin", jnp.sin, anp.sin, (x,)), ("cos", jnp.cos, anp.cos, (x,)), ("exp", jnp.exp, anp.exp, (x,)),
        ("log", jnp.log, anp.log, (y,)), ("sqrt", jnp.sqrt, anp.sqrt, (y,)), ("tanh", jnp.tanh, anp.tanh, (x,)),
        ("logistic", nn.sigmoid, ad.nn.sigmoid, (x,)), ("expm1", jnp.expm1, anp.expm1, (x,)),
        ("log1p", jnp.log1p, anp.log1p, (y,)), ("div", jnp.divide, anp.divide, (x, y)),
        ("mul", jnp.multiply, anp.multiply, (x, y)), ("pow", jnp.power, anp.power, (y, x)),
        ("integer_pow", lambda a: a ** 3, lambda a: a ** 3, (x,)), ("square", jnp.square, anp.square, (x,)),
        ("erf", lax.erf, special.erf, (x,)),
        ("abs", jnp.abs, anp.abs, (x,)), ("maximum", jnp.maximum, anp.maximum, (x, y)),
        ("sum", jnp.sum, anp.sum, (x,)), ("max", jnp.max, anp.max, (x,)), ("cumsum", jnp.cumsum, anp.cumsum, (x,)),
        ("matmul", lambda a: a @ a.T, lambda a: a @ a.T, (m,)), ("where", lambda a: jnp.where(a > 0, a, -2 * a),
                                                                   lambda a: anp.where(a > 0, a, -2 * a), (x,)),
        ("slice and concatenate", lambda a: jnp.concatenate([a[1:], a[:1] ** 2]),
         lambda a: anp.concatenate([a[1:], a[:1] ** 2]), (x,)),
        ("composite", lambda a, b: jnp.sum(jnp.tanh(a * b) / (1 + b ** 2)) * jnp.exp(-a[0]),
         lambda a, b: anp.sum(anp.tanh(a * b) / (1 + b ** 2)) * anp.exp(-a[0]), (x, y)),
        ("sinh", jnp.sinh, anp.sinh, (x,)), ("cosh", jnp.cosh, anp.cosh, (x,)),
        ("arcsinh", jnp.arcsinh, anp.arcsinh, (x,)),
        ("arctanh", lambda a: jnp.arctanh(a / 2), lambda a: anp.arctanh(a / 2), (x,)),
        ("log2", jnp.log2, anp.log2, (y,)), ("rsqrt", lambda a: 1 / jnp.sqrt(a), lambda a: 1 / anp.sqrt(a), (y,)),
        ("arctan2", jnp.arctan2, anp.arctan2, (x, y)), ("erfc", jax_special.erfc, special.erfc, (x,)),
        ("erfinv", lambda a: jax_special.erfinv(a / 2), lambda a: special.erfinv(a / 2), (x,)),
        ("sign and floor (zero)", lambda a: jnp.sign(a) * a + jnp.floor(a), lambda a: anp.sign(a) * a + anp.floor(a),
         (x,)),
        ("min", jnp.min, anp.min, (x,)), ("max over an axis", lambda a: jnp.max(jnp.outer(a, a), axis=0),
                                          lambda a: anp.max(anp.outer(a, a), axis=0), (x,)),
        ("cumprod", jnp.cumprod, anp.cumprod, (x,)), ("logsumexp", jax_special.logsumexp, special.logsumexp, (x,)),
        ("gather", lambda a: a[jnp.array([2, 0, 0, 1])], lambda a: a[np.array([2, 0, 0, 1])], (x,)),
        ("scatter add", lambda a: jnp.zeros(4).at[jnp.array([0, 2, 0])].add(a),
         lambda a: anp.zeros(4).at[np.array([0, 2, 0])].add(a), (x,)),
        ("einsum", lambda a, b: jnp.einsum("i,j->ij", a, b), lambda a, b: anp.einsum("i,j->ij", a, b), (x, y)),
        ("transpose and reshape", lambda a: jnp.outer(a, a).T.reshape(-1),
         lambda a: anp.outer(a, a).T.reshape(-1), (x,)),
        ("pad", lambda a: jnp.pad(a, 1) ** 2, lambda a: anp.pad(a, 1) ** 2, (x,)),
    ]


PAIRS = 43


def test_every_jax_pair_is_run():
    pytest.importorskip("jax")
    assert len(_jax_pairs()) == PAIRS


@pytest.mark.parametrize("index", range(PAIRS))
def test_jet_matches_jax(index):
    pytest.importorskip("jax")
    import jax
    from jax.experimental.jet import jet as jax_jet

    jax.config.update("jax_enable_x64", True)
    name, jax_fn, our_fn, primals = _jax_pairs()[index]
    rng = np.random.default_rng(index)
    series = tuple([rng.standard_normal(np.shape(p)) for _ in range(4)] for p in primals)
    want_primal, want_terms = jax_jet(jax_fn, primals, series)
    got_primal, got_terms = ad.jet(our_fn, primals, series)
    np.testing.assert_allclose(got_primal, want_primal, rtol=1e-12, err_msg=name)
    assert len(got_terms) == len(want_terms) == 4
    for k, (got, want) in enumerate(zip(got_terms, want_terms)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=f"{name}: term {k + 1}")


def test_jet_pytree_structure_matches_jax():
    pytest.importorskip("jax")
    import jax
    import jax.numpy as jnp
    from jax.experimental.jet import jet as jax_jet
    from jax.tree_util import tree_structure

    jax.config.update("jax_enable_x64", True)
    x, y = np.array([0.3, 0.7]), np.array([1.5, -0.2])
    series = ([np.ones(2), np.full(2, 0.5)], [np.full(2, 0.1), np.ones(2)])
    want = jax_jet(lambda a, b: (jnp.sin(a) * b, {"e": jnp.exp(a)}), (x, y), series)
    got = ad.jet(lambda a, b: (anp.sin(a) * b, {"e": anp.exp(a)}), (x, y), series)
    assert tree_structure(got) == tree_structure(want)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
