"""Stacks, lognumbers and complex values in reversible functions (issue 22): inverse round trips (bit for bit
where the arithmetic is exact), gradients against ad.grad of plain array programs and finite differences, second
order against ad.hessian, on the NumPy interpreter and on Numba (tests/test_jax_reversible.py lowers the same
programs to XLA)."""
import math

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
import adarray.reversible as rv
from adarray.reversible import ReversibilityError
from adarray.testing import numerical_gradient


def _close(got, want, rtol=1e-12, atol=0.0):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


# --- stacks: rv.push / rv.pop -------------------------------------------------------------------------------

@rv.reversible
def damped_map(out, x, r, n):
    """y <- r sin(y), n times from y = x: each step forgets its input, which goes on the stack (NiLang's PUSH!)."""
    s = rv.alloc(rv.stack(64))
    y = rv.alloc(0.0)
    with rv.compute():
        y += x
        for _ in range(n):
            t = rv.alloc(0.0)
            t += r * anp.sin(y)
            rv.push(s, y)  # y moves onto the stack and is 0 again
            rv.swap(y, t)
            rv.free(t, 0.0)
    out += y ** 2
    rv.uncompute()
    rv.free(y, 0.0)
    rv.free(s, rv.stack())


def damped_plain(x, r, n):
    for _ in range(n):
        x = r * anp.sin(x)
    return x ** 2


@rv.reversible
def array_steps(out, x, n):
    """The same with an array state and a stack without a capacity (it grows)."""
    s = rv.alloc(rv.stack())
    y = rv.alloc(anp.zeros_like(x))
    with rv.compute():
        y += x
        for _ in range(n):
            t = rv.alloc(anp.zeros_like(x))
            t += anp.tanh(y) * 1.5 + 0.1
            rv.push(s, y)
            rv.swap(y, t)
            rv.free(t, 0.0)
    out += anp.sum(y * anp.cos(y))
    rv.uncompute()
    rv.free(y, 0.0)
    rv.free(s, rv.stack())


def array_plain(x, n):
    for _ in range(n):
        x = anp.tanh(x) * 1.5 + 0.1
    return anp.sum(x * anp.cos(x))


def test_a_stack_keeps_what_each_step_forgets(reversible_backend):
    x, r = 0.4, 2.1
    out = damped_map(0.0, x, r, 30)
    _close(out[0], damped_plain(x, r, 30), rtol=1e-13)
    assert rv.invert(damped_map)(*out) == (0.0, x, r, 30)  # bit for bit: y += x and t += ... on zeros are exact
    grads = rv.grad(damped_map)(0.0, x, r, 30)
    want = ad.grad(damped_plain, argnums=(0, 1))(x, r, 30)
    _close(grads[1:3], want, rtol=1e-11)
    _close(grads[1], numerical_gradient(lambda x: damped_map(0.0, float(x), r, 30)[0], x), rtol=1e-6)
    v = np.array([0.3, -1.2, 0.8, 2.0])
    out = array_steps(0.0, v, 12)
    _close(out[0], array_plain(v, 12), rtol=1e-13)
    back = rv.invert(array_steps)(*out)
    assert back[0] == 0.0 and np.array_equal(back[1], v)
    _close(rv.grad(array_steps)(0.0, v, 12)[1], ad.grad(lambda v: array_plain(v, 12))(v), rtol=1e-11)
    if reversible_backend == "numpy":  # second order on Numba: test_backend_numba.py
        _close(ad.hessian(lambda x: damped_map(0.0, x, r, 30)[0])(x),
               ad.hessian(lambda x: damped_plain(x, r, 30))(x), rtol=1e-9)
        _close(ad.hessian(lambda v: array_steps(0.0, v, 12)[0])(v), ad.hessian(lambda v: array_plain(v, 12))(v),
               rtol=1e-9, atol=1e-12)


@rv.reversible
def _save(s, x):
    rv.push(s, x)


@rv.reversible
def save_and_restore(y, x, k):
    """A stack passed to other functions (typed by the pushes in them); integers and booleans on stacks."""
    s = rv.alloc(rv.stack(4))
    bits = rv.alloc(rv.stack(4))
    t = rv.alloc(0.0)
    t += x * 3.0
    _save(s, t)            # t is 0 again
    t += x ** 2
    b = rv.alloc(False)
    b ^= k > 2
    rv.push(bits, b)
    y += t
    rv.pop(bits, b)
    rv.free(b, k > 2)
    t -= x ** 2
    rv.invert(_save)(s, t)  # a pop: t holds 3 x again
    y += t * k
    t -= x * 3.0
    rv.free(t, 0.0)
    rv.free(bits, rv.stack())
    rv.free(s, rv.stack())


def test_stacks_through_calls_and_of_every_kind(reversible_backend):
    assert save_and_restore(1.0, 0.5, 3)[0] == pytest.approx(1.0 + 0.25 + 4.5, rel=1e-15)
    assert rv.grad(save_and_restore)(1.0, 0.5, 3)[1] == pytest.approx(2 * 0.5 + 9.0, rel=1e-15)
    assert rv.invert(save_and_restore)(*save_and_restore(1.0, 0.5, 3)) == (1.0, 0.5, 3)
    text = str(rv.invert(save_and_restore))
    assert "push(bits, b)" in text and "pop(bits, b)" in text and "_save(s, t)" in text


@rv.reversible
def overfull_example(y, n):
    s = rv.alloc(rv.stack(2))
    for _ in range(n):
        t = rv.alloc(0.0)
        t += y
        rv.push(s, t)
        rv.free(t, 0.0)
    for _ in range(n):
        t = rv.alloc(0.0)
        rv.pop(s, t)
        t -= y
        rv.free(t, 0.0)
    rv.free(s, rv.stack())


def test_stack_checks(reversible_backend):
    assert overfull_example(1.5, 2) == (1.5, 2)
    with pytest.raises(ReversibilityError, match=r"rv.push\(s, t\): the stack 's' is full \(its capacity is 2\)"):
        overfull_example(1.5, 3)

    @rv.reversible
    def pop_into_nonzero(y):
        s = rv.alloc(rv.stack())
        t = rv.alloc(0.0)
        t += 2.0
        rv.push(s, t)
        t += y
        rv.pop(s, t)
        rv.free(t, 2.0)
        rv.free(s, rv.stack())
    with pytest.raises(ReversibilityError, match=r"rv.pop\(s, t\): 't' must be zero before the pop \(it holds 0.5\)"):
        pop_into_nonzero(0.5)

    @rv.reversible
    def pop_empty(y):
        s = rv.alloc(rv.stack())
        rv.pop(s, y)
        rv.push(s, y)
        rv.free(s, rv.stack())
    with pytest.raises(ReversibilityError, match="the stack 's' is empty"):
        pop_empty(0.0)

    @rv.reversible
    def left_on_stack(y):
        s = rv.alloc(rv.stack())
        rv.push(s, y)
        rv.free(s, rv.stack())
    with pytest.raises(ReversibilityError, match="the stack 's' is not empty at rv.free: it holds 1 values"):
        left_on_stack(1.0)

    @rv.reversible
    def two_shapes(a, b):
        s = rv.alloc(rv.stack())
        rv.push(s, a)
        rv.push(s, b)
        rv.pop(s, b)
        rv.pop(s, a)
        rv.free(s, rv.stack())
    with pytest.raises(ad.ShapeError, match=r"'b' has shape \(3,\), the stack holds values of shape \(2,\)"):
        two_shapes(np.ones(2), np.ones(3))


def test_stacks_rejected_uses():
    @rv.reversible
    def mixed(x, k):
        s = rv.alloc(rv.stack())
        rv.push(s, x)
        rv.push(s, k)
        rv.pop(s, k)
        rv.pop(s, x)
        rv.free(s, rv.stack())
    with pytest.raises(ReversibilityError, match="the stack 's' holds values like a float scalar, 'k' is an integer"):
        mixed(1.0, 2)

    @rv.reversible
    def read(y, x):
        s = rv.alloc(rv.stack())
        y += s
        rv.free(s, rv.stack())
    with pytest.raises(ReversibilityError, match="the stack 's' is not a value"):
        read(0.0, 1.0)
    with pytest.raises(ReversibilityError, match=r"rv.stack\(...\) is the initial value of an ancilla"):
        @rv.reversible
        def misplaced(y):
            y += rv.stack()
    with pytest.raises(ReversibilityError, match="a stack is released empty"):
        @rv.reversible
        def freed_wrong(y):
            s = rv.alloc(rv.stack())
            rv.free(s, 0.0)


# --- lognumbers ---------------------------------------------------------------------------------------------

@rv.reversible
def power(y, x, n):
    """y += x ** n by n exact multiplications of a lognumber (NiLang's examples/lognumber.jl, i_power)."""
    p = rv.alloc(rv.lognumber(1.0))
    lx = rv.alloc(rv.lognumber(1.0))
    with rv.compute():
        lx *= x
        for _ in range(n):
            p *= lx
    y += p
    rv.uncompute()
    rv.free(lx, 1.0)
    rv.free(p, 1.0)


@rv.reversible
def exp_series(y, x):
    """y += exp(x) = sum_k x^k / k!, each term a lognumber updated in place by *= x and /= k; a second loop
    uncomputes the term exactly (NiLang's i_exp)."""
    term = rv.alloc(rv.lognumber(1.0))
    k = rv.alloc(0)
    y += term
    while rv.while_(anp.log(term) > -40.0, k > 0):
        k += 1
        term *= x
        term /= k
        y += term
    while rv.while_(k > 0, anp.log(term) > -40.0):
        term *= k
        term /= x
        k -= 1
    rv.free(k, 0)
    rv.free(term, 1.0)


def test_lognumbers_multiply_exactly(reversible_backend):
    x = 1.3
    out = power(0.0, x, 7)
    _close(out[0], x ** 7, rtol=1e-12)  # 2**-42 units of the log: 2.3e-13 relative per factor
    assert rv.invert(power)(*out) == (0.0, x, 7)
    assert rv.grad(power)(0.0, x, 7)[1] == pytest.approx(7 * x ** 6, rel=1e-12)
    assert ad.hessian(lambda x: power(0.0, x, 7)[0])(x) == pytest.approx(42 * x ** 5, rel=1e-11)
    assert exp_series(0.0, 3.5)[0] == pytest.approx(math.exp(3.5), rel=1e-12)
    assert rv.grad(exp_series)(0.0, 3.5)[1] == pytest.approx(math.exp(3.5), rel=1e-12)
    _close(rv.grad(exp_series)(0.0, 3.5)[1], numerical_gradient(lambda x: exp_series(0.0, float(x))[0], 3.5),
           rtol=1e-6)
    assert rv.invert(exp_series)(*exp_series(0.0, 3.5))[1] == 3.5
    assert cube(0.0, 1.7)[0] == pytest.approx(1.7 ** 3, rel=1e-12)
    assert rv.grad(cube)(0.0, 1.7)[1] == pytest.approx(3 * 1.7 ** 2, rel=1e-12)


@rv.reversible
def _times(p, x):
    p *= x


@rv.reversible
def cube(y, x):
    """A lognumber passed to another function, which multiplies it."""
    p = rv.alloc(rv.lognumber(1.0))
    with rv.compute():
        for _ in range(3):
            _times(p, x)
    y += p
    rv.uncompute()
    rv.free(p, 1.0)


@rv.reversible
def drift(p_log, x, n):
    """Multiply a lognumber by x and by 1/x n times each, the second loop in the other order: it comes back to
    the same integer, which a float product cannot promise."""
    p = rv.alloc(rv.lognumber(1.0))
    for i in range(n):
        p *= x + i
    for i in range(n):
        p /= x + i
    p_log += anp.log(p)
    rv.free(p, 1.0)


def test_lognumbers_come_back_exactly_and_read_their_log_exactly(reversible_backend):
    assert drift(0.0, 0.37, 500) == (0.0, 0.37, 500)  # rv.free(p, 1.0) checks the integer exactly

    @rv.reversible
    def log_of(y, x):
        p = rv.alloc(rv.lognumber(1.0))
        p *= x
        y += anp.log(p)  # no exp and log again: the log it holds, times 2**-42
        p /= x
        rv.free(p, 1.0)
    y = log_of(0.0, 10.0)[0]
    assert y * 2.0 ** 42 == round(math.log(10.0) * 2.0 ** 42)


def test_lognumber_checks(reversible_backend):
    with pytest.raises(ReversibilityError, match=r"`lx \*= x`: a lognumber is multiplied by positive finite "
                                                 r"numbers \(the factor's log is nan\)"):
        power(0.0, -1.0, 2)

    @rv.reversible
    def overflow(y, x, n):
        p = rv.alloc(rv.lognumber(1.0))
        for _ in range(n):
            p *= x
        for _ in range(n):
            p /= x
        rv.free(p, 1.0)
    with pytest.raises(ReversibilityError, match="the lognumber 'p' overflows"):
        overflow(0.0, 1e300, 3000)

    @rv.reversible
    def not_restored(y, x):
        p = rv.alloc(rv.lognumber(2.0))
        p *= x
        rv.free(p, 2.0)
    with pytest.raises(ReversibilityError, match=r"the lognumber 'p' is not restored: rv.free expects 2.0, it holds "
                                                 r"5.99999999999"):
        not_restored(0.0, 3.0)
    with pytest.raises(ReversibilityError, match="a lognumber is updated by \\*= and /="):
        @rv.reversible
        def added(y, x):
            p = rv.alloc(rv.lognumber(1.0))
            p += x
            rv.free(p, 1.0)
        added(0.0, 1.0)
    with pytest.raises(ReversibilityError, match="a lognumber holds a positive finite constant"):
        @rv.reversible
        def zero(y):
            p = rv.alloc(rv.lognumber(0.0))
            rv.free(p, 1.0)


# --- complex values ----------------------------------------------------------------------------------------

@rv.reversible
def complex_matvec(y, a, x):
    for i in range(len(y)):
        for j in range(len(x)):
            y[i] += a[i, j] * x[j]


@rv.reversible
def complex_loss(out, y, a, x, theta):
    """A complex mat-vec (NiLang's complex sparse mul!), then real functions of the result, a rotation of two
    complex values by a real angle, and holomorphic functions."""
    complex_matvec(y, a, x)
    rv.rot(y[0], y[1], theta)
    z = rv.alloc(0j)
    with rv.compute():
        for i in range(len(y)):
            z += anp.exp(0.3 * y[i]) - anp.sin(y[i]) * (1 - 2j) + anp.sqrt(y[i] + 4.0) / (y[i] + 3j)
    for i in range(len(y)):
        out += anp.abs(y[i]) ** 2 + anp.real(y[i]) * anp.imag(y[i]) + anp.angle(y[i])
    out += anp.real(z * anp.conj(z)) + anp.imag(z ** 2)
    rv.uncompute()
    rv.free(z, 0j)


def complex_plain(a, x, theta):
    y = a @ x
    c, s = anp.cos(theta), anp.sin(theta)
    y = anp.concatenate([anp.stack([y[0] * c - y[1] * s, y[1] * c + y[0] * s]), y[2:]])
    z = anp.sum(anp.exp(0.3 * y) - anp.sin(y) * (1 - 2j) + anp.sqrt(y + 4.0) / (y + 3j))
    return (anp.sum(anp.abs(y) ** 2 + anp.real(y) * anp.imag(y) + anp.angle(y)) + anp.real(z * anp.conj(z))
            + anp.imag(z ** 2))


def test_complex_values_and_their_gradients(reversible_backend):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    x = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    theta, y = 0.4, np.zeros(3, complex)
    out = complex_loss(0.0, y, a, x, theta)
    _close(out[0], complex_plain(a, x, theta), rtol=1e-13)
    back = rv.invert(complex_loss)(*out)
    _close(back[1], y, atol=1e-14)
    assert back[0] == pytest.approx(0.0, abs=1e-13 * abs(out[0]))  # y -= e up to the rounding of y += e
    grads = rv.grad(complex_loss)(0.0, y, a, x, theta)
    want = ad.grad(complex_plain, argnums=(0, 1, 2))(a, x, theta)  # JAX's convention: df/dx - i df/dy
    for got, w in zip(grads[2:], want):
        _close(got, w, rtol=1e-11, atol=1e-13)
    real_part = numerical_gradient(lambda r: complex_loss(0.0, y, a, r + 1j * x.imag, theta)[0], x.real)
    imag_part = numerical_gradient(lambda i: complex_loss(0.0, y, a, x.real + 1j * i, theta)[0], x.imag)
    _close(grads[3], real_part - 1j * imag_part, rtol=1e-6)
    if reversible_backend == "numpy":  # second order on Numba: see above
        hessian = ad.hessian(lambda t: complex_loss(0.0, y, a, x, t)[0])(theta)
        assert hessian == pytest.approx(ad.hessian(lambda t: complex_plain(a, x, t))(theta), rel=1e-10)


def test_complex_rules():
    @rv.reversible
    def to_float(y, z):
        y += z
    with pytest.raises(ReversibilityError, match="the float 'y' cannot accumulate a complex value"):
        to_float(0.0, 1j)

    @rv.reversible
    def ordered(y, z):
        if anp.real(z) > 0.0:
            y += anp.maximum(z, 1.0)
    with pytest.raises(ReversibilityError, match="maximum of a complex value"):
        ordered(0j, 1j)

    @rv.reversible
    def scaled(z, w):
        z *= 2 - 1j
        w *= 0.5
        w += z * 1j
    z, w = scaled(1 + 1j, 2j)
    assert z == (1 + 1j) * (2 - 1j) and w == 1j + z * 1j
    assert rv.invert(scaled)(z, w) == (1 + 1j, 2j)
