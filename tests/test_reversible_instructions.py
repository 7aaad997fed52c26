"""User instructions with their own inverse and adjoint (rv.instruction), structured arguments (dataclasses,
dicts, tuples, lists of arrays) and second order by reverse computing (rv.grad of rv.grad), against plain array
programs under ad.grad / ad.hessian and finite differences, on the NumPy interpreter and on Numba."""
import dataclasses
import tracemalloc
from typing import NamedTuple

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
import adarray.reversible as rv
import adarray.tree_util as tu
from adarray.reversible import ReversibilityError
from adarray.testing import numerical_gradient


def _close(got, want, rtol=1e-12, atol=0.0):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


# --- instructions ---------------------------------------------------------------------------------------------

@rv.instruction
def scale(y, s):
    """y <- y exp(s): a multiplication in place, exact to undo by its own inverse (up to rounding)."""
    return y * anp.exp(s), s


@scale.definverse
def _unscale(y, s):
    return y * anp.exp(-s), s


@scale.defadjoint
def _scale_adjoint(y, s, y_bar, s_bar):
    return y_bar * anp.exp(s), s_bar + y_bar * y * anp.exp(s)


@rv.instruction
def scale_derived(y, s):
    """The same without a hand-written adjoint: derived from the forward expressions."""
    return y * anp.exp(s), s


@scale_derived.definverse
def _unscale_derived(y, s):
    return y * anp.exp(-s), s


@rv.reversible
def scaled_sines(out, y, s):
    for i in range(len(y)):
        scale(y[i], s[i])
    for i in range(len(y)):
        out += anp.sin(y[i]) * s[i]


@rv.reversible
def scaled_sines_derived(out, y, s):
    for i in range(len(y)):
        scale_derived(y[i], s[i])
    for i in range(len(y)):
        out += anp.sin(y[i]) * s[i]


def scaled_plain(y, s):
    return anp.sum(anp.sin(y * anp.exp(s)) * s)


def test_an_instruction_with_a_hand_written_inverse_and_adjoint(reversible_backend):
    y, s = np.array([0.4, -1.1, 2.0]), np.array([0.3, -0.2, 0.5])
    assert scale(2.0, 0.5) == pytest.approx((2 * np.exp(0.5), 0.5), rel=1e-15)  # runs outside a function too
    assert rv.invert(scale)(*scale(2.0, 0.5))[0] == pytest.approx(2.0, rel=1e-15)
    for fn in (scaled_sines, scaled_sines_derived):
        out = fn(0.0, y, s)
        _close(out[0], scaled_plain(y, s), rtol=1e-14)
        back = rv.invert(fn)(*out)
        _close(back[1], y, rtol=1e-15)
        assert abs(back[0]) < 1e-15
        grads = rv.grad(fn)(0.0, y, s)
        for got, want in zip(grads[1:], ad.grad(scaled_plain, argnums=(0, 1))(y, s)):
            _close(got, want, rtol=1e-13)
        _close(grads[2], numerical_gradient(lambda s, fn=fn: fn(0.0, y, s)[0], s), rtol=1e-7)
    if reversible_backend == "numpy":
        for fn in (scaled_sines, scaled_sines_derived):
            _close(ad.hessian(lambda s, fn=fn: fn(0.0, y, s)[0])(s), ad.hessian(lambda s: scaled_plain(y, s))(s),
                   rtol=1e-12, atol=1e-14)
    assert rv.grad(scale)(2.0, 0.5) == pytest.approx((np.exp(0.5), 2 * np.exp(0.5)), rel=1e-15)


@rv.instruction
def rotate_with(a, b, k, theta):
    """A rotation by k theta (k an integer parameter, whose cotangent is passed as 0 and ignored)."""
    return a * anp.cos(k * theta) - b * anp.sin(k * theta), b * anp.cos(k * theta) + a * anp.sin(k * theta), k, theta


@rotate_with.definverse
def _rotate_back(a, b, k, theta):
    return a * anp.cos(k * theta) + b * anp.sin(k * theta), b * anp.cos(k * theta) - a * anp.sin(k * theta), k, theta


@rotate_with.defadjoint
def _rotate_adjoint(a, b, k, theta, a_bar, b_bar, k_bar, theta_bar):
    c, s = anp.cos(k * theta), anp.sin(k * theta)
    return (a_bar * c + b_bar * s, b_bar * c - a_bar * s, k_bar,
            theta_bar + k * (b_bar * (a * c - b * s) - a_bar * (a * s + b * c)))


@rv.reversible
def spin(x, theta, n):
    for k in range(1, n):
        rotate_with(x[0], x[1], k, theta)
    rv.invert(rotate_with)(x[1], x[2], 2, theta)


def spin_plain(x, theta, n):
    a, b = x[0], x[1]
    for k in range(1, n):
        a, b = a * anp.cos(k * theta) - b * anp.sin(k * theta), b * anp.cos(k * theta) + a * anp.sin(k * theta)
    c = x[2]
    b, c = b * anp.cos(2 * theta) + c * anp.sin(2 * theta), c * anp.cos(2 * theta) - b * anp.sin(2 * theta)
    return anp.stack([a, b, c])


def test_instructions_with_integer_parameters_and_inverted_inside(reversible_backend):
    x, theta = np.array([1.0, 0.5, -0.3]), 0.7
    w = np.array([0.2, -1.0, 0.6])
    _close(spin(x, theta, 4)[0], spin_plain(x, theta, 4), rtol=1e-14)
    _close(rv.invert(spin)(*spin(x, theta, 4))[0], x, rtol=1e-14)
    loss = lambda x, t: anp.dot(w, spin(x, t, 4)[0])  # noqa: E731
    want = ad.grad(lambda x, t: anp.dot(w, spin_plain(x, t, 4)), argnums=(0, 1))(x, theta)
    for got, w_ in zip(ad.grad(loss, argnums=(0, 1))(x, theta), want):
        _close(got, w_, rtol=1e-13, atol=1e-15)
    if reversible_backend == "numpy":
        assert ad.hessian(lambda t: loss(x, t))(theta) == pytest.approx(
            ad.hessian(lambda t: anp.dot(w, spin_plain(x, t, 4)))(theta), rel=1e-12)


def test_instruction_errors():
    @rv.instruction
    def no_inverse(a):
        return a * 2.0

    @rv.reversible
    def uses(a):
        no_inverse(a)
    with pytest.raises(ad.ArgumentError, match="no inverse: define it with @no_inverse.definverse"):
        uses(1.0)
    with pytest.raises(ReversibilityError, match="returns 1 values; the instruction has 2 parameters"):
        @rv.instruction
        def short(a, b):
            return a
    with pytest.raises(ad.ArgumentError, match="the adjoint takes 4 parameters"):
        @scale.defadjoint
        def wrong(y, s, y_bar):
            return y_bar, y_bar

    @rv.instruction
    def to_int(a, k):
        return a, k * 0.5

    @to_int.definverse
    def _back(a, k):
        return a, k

    @rv.reversible
    def calls(a, k):
        to_int(a, k)
    with pytest.raises(ReversibilityError, match=r"the forward rule of the instruction 'to_int' gives `\(k \* 0.5\)` "
                                                 r"\(f, 0 axes\) for 'k', which is \(i, 0 axes\)"):
        calls(1.0, 2)


# --- structured arguments ------------------------------------------------------------------------------------

@tu.register_dataclass
@dataclasses.dataclass
class Layer:
    W: object
    b: object
    activation: str = dataclasses.field(default="tanh", metadata=dict(static=True))
    gain: float = dataclasses.field(default=1.0, metadata=dict(static=True))


class Pair(NamedTuple):
    left: object
    right: object


@rv.reversible
def affine(h, layer, x):
    for i in range(len(h)):
        for j in range(len(x)):
            h[i] += layer.W[i, j] * x[j]
        h[i] += layer.b[i] * layer.gain  # a static field reads as a constant


@rv.reversible
def network(loss, h, params, x):
    """params = {"first": Layer, "pair": Pair(array, (array, array)), "bias": [array]}."""
    affine(h, params["first"], x)
    for i in range(len(h)):
        loss += anp.tanh(h[i]) * params["pair"].left[i] + params["pair"][1][0] * params["pair"].right[1] ** 2
    loss += params["bias"][0] * 2.0


def network_plain(params, x):
    first, pair = params["first"], params["pair"]
    h = first.W @ x + first.b * first.gain
    return (anp.sum(anp.tanh(h) * pair.left) + len(h) * pair.right[0] * pair.right[1] ** 2
            + params["bias"][0] * 2.0)


def _params(rng):
    return {"first": Layer(rng.standard_normal((2, 3)), rng.standard_normal(2), gain=0.5),
            "pair": Pair(rng.standard_normal(2), (np.array(0.3), np.array(-0.7))), "bias": [np.array(1.5)]}


def test_structured_arguments(reversible_backend):
    rng = np.random.default_rng(4)
    params, x = _params(rng), rng.standard_normal(3)
    out = network(0.0, np.zeros(2), params, x)
    _close(out[0], network_plain(params, x), rtol=1e-14)
    assert isinstance(out[2]["first"], Layer) and out[2]["first"].gain == 0.5 and isinstance(out[2]["pair"], Pair)
    _close(out[1], params["first"].W @ x + 0.5 * params["first"].b, rtol=1e-15)
    back = rv.invert(network)(*out)
    _close(back[1], np.zeros(2), atol=1e-15)
    grads = rv.grad(network)(0.0, np.zeros(2), params, x)
    want = ad.grad(network_plain)(params, x)
    for got, w in zip(tu.tree_leaves(grads[2]), tu.tree_leaves(want)):
        _close(got, w, rtol=1e-13)
    assert isinstance(grads[2]["first"], Layer)
    inside = ad.grad(lambda p: network(0.0, np.zeros(2), p, x)[0])(params)
    for got, w in zip(tu.tree_leaves(inside), tu.tree_leaves(want)):
        _close(got, w, rtol=1e-13)
    if reversible_backend == "numpy":
        hessian = ad.hessian(lambda b: network(0.0, np.zeros(2), {**params, "first": Layer(
            params["first"].W, b, gain=0.5)}, x)[0])(params["first"].b)
        _close(hessian, ad.hessian(lambda b: network_plain({**params, "first": Layer(params["first"].W, b, gain=0.5)},
                                                           x))(params["first"].b), rtol=1e-12, atol=1e-15)


def test_structured_argument_errors():
    params = _params(np.random.default_rng(5))

    @rv.reversible
    def whole(y, params):
        y += params["bias"]
    with pytest.raises(ReversibilityError, match=r"'params\['bias'\]' is a structure \(\[\*\]\), not a value"):
        whole(0.0, params)

    @rv.reversible
    def dynamic(y, pair, k):
        y += pair[1][k]
    with pytest.raises(ReversibilityError, match="a tuple or list argument is indexed by constants"):
        dynamic(0.0, params["pair"], 1)

    @rv.reversible
    def write_static(layer):
        layer.gain += 1.0
    with pytest.raises(ReversibilityError, match="static field"):
        write_static(params["first"])


# --- second order by reverse computing ---------------------------------------------------------------------

@rv.reversible
def oscillator(q, p, k, steps):
    """An anharmonic oscillator, symplectic Euler; loss = q at the end."""
    for _ in range(steps):
        p -= 1e-3 * (k * q + q ** 3)
        q += 1e-3 * p


def oscillator_plain(q, p, k, steps):
    for _ in range(steps):
        p = p - 1e-3 * (k * q + q ** 3)
        q = q + 1e-3 * p
    return q


def test_grad_of_grad_by_reverse_computing(reversible_backend):
    q, p, k = 0.5, 0.1, 1.3
    first = rv.grad(oscillator, loss=0)
    _close(first(q, p, k, 60)[:3], ad.grad(oscillator_plain, argnums=(0, 1, 2))(q, p, k, 60), rtol=1e-12)
    hessian = ad.hessian(oscillator_plain, argnums=(0, 1, 2))(q, p, k, 60)
    for row in range(3):
        second = rv.grad(first, loss=row)(q, p, k, 60)
        assert second[3] is None
        _close(second[:3], [hessian[row][c] for c in range(3)], rtol=1e-10)
    third = rv.grad(rv.grad(first, loss=0), loss=0)(q, p, k, 30)[0]  # d3 q_T / d q_0^3
    h = 1e-4
    want = (rv.grad(first, loss=0)(q + h, p, k, 30)[0] - rv.grad(first, loss=0)(q - h, p, k, 30)[0]) / (2 * h)
    assert third == pytest.approx(want, rel=1e-6)


def test_grad_of_grad_of_arrays_and_its_memory():
    x = np.array([0.3, -0.2, 0.5])
    for index in range(3):
        row = rv.grad(rv.grad(scaled_sines, loss=0), loss=(2, index))(0.0, x, x * 0.5)
        full = ad.hessian(lambda y, s: scaled_plain(y, s), argnums=(0, 1))(x, x * 0.5)
        _close(row[1], full[1][0][index], rtol=1e-12, atol=1e-15)
        _close(row[2], full[1][1][index], rtol=1e-12, atol=1e-15)
    previous = rv.set_reversible_backend("numpy")  # tracemalloc sees the interpreter's allocations
    try:
        hessian_row = rv.grad(rv.grad(oscillator, loss=0), loss=0)
        hessian_row(0.5, 0.1, 1.3, 10)
        peaks = []
        for steps in (100, 20_000):
            tracemalloc.start()
            try:
                hessian_row(0.5, 0.1, 1.3, steps)
                peaks.append(tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
    finally:
        rv.set_reversible_backend(previous)
    assert peaks[1] < 40_000 and peaks[1] < peaks[0] + 8_000, peaks  # a tape of 20,000 steps: >= 640 kB
    with pytest.raises(ad.ArgumentError, match=r"\(5,\) is not an element of the gradient of 'y'"):
        rv.grad(rv.grad(scaled_sines), loss=(1, 5))(0.0, x, x)
