"""Writing a traced value into a NumPy array (`buf[i] = x`) is an adarray TracingError that says
what to write instead, not NumPy's "setting an array element with a sequence"; integer and boolean
values whose value is known (under grad) may still be stored, as int(x) may."""
from __future__ import annotations

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp

X = np.array([0.5, -1.0, 2.0])


def fill_one(x):
    buf = np.zeros(3)
    buf[0] = anp.sum(x) * 2.0
    return anp.sum(anp.asarray(buf))


def fill_in_a_loop(x):
    buf = np.zeros(3)
    for i in range(3):
        buf[i] += x[i] ** 2
    return anp.sum(anp.asarray(buf))


def fill_complex(x):
    buf = np.zeros(3, complex)
    buf[1] = anp.sum(x)
    return anp.sum(x)


def fill_slice(x):
    buf = np.zeros(4)
    buf[:3] = x
    return anp.sum(anp.asarray(buf))


@pytest.mark.parametrize("fn", [fill_one, fill_in_a_loop, fill_complex, fill_slice])
@pytest.mark.parametrize("transform", [ad.grad, ad.jit, lambda f: ad.vmap(lambda v: f(v) * 1.0)])
def test_storing_a_traced_float_into_a_numpy_array_says_what_to_do(fn, transform):
    arg = np.stack([X, X]) if transform not in (ad.grad, ad.jit) else X
    with pytest.raises(ad.TracingError, match=r"at\[i\]\.set|\.at\[i\]\.set\(v\)") as info:
        transform(fn)(arg)
    message = str(info.value)
    assert "anp.stack" in message or "anp.array" in message
    assert "setting an array element" not in message
    if transform in (ad.grad, ad.jit):
        assert f"in '{fn.__name__}'" in message           # the function being traced is named


def test_the_suggested_rewrites_work():
    def with_stack(x):
        return anp.sum(anp.stack([x[i] ** 2 for i in range(3)]))

    def with_at(x):
        buf = anp.zeros(3)
        for i in range(3):
            buf = buf.at[i].add(x[i] ** 2)
        return anp.sum(buf)

    for fn in (with_stack, with_at):
        np.testing.assert_allclose(ad.grad(fn)(X), 2 * X)
        np.testing.assert_allclose(ad.jit(ad.grad(fn))(X), 2 * X)


def test_a_known_integer_value_may_still_be_stored_under_grad():
    def count_positive_then_scale(x):
        counts = np.zeros(2)
        counts[0] = anp.sum(x > 0)           # an integer value, known under grad (a guarded constant)
        return anp.sum(x) * float(counts[0])

    assert ad.grad(count_positive_then_scale)(X).tolist() == [2.0, 2.0, 2.0]
    assert ad.grad(count_positive_then_scale)(-X).tolist() == [1.0, 1.0, 1.0]     # traced again: the guard
    with pytest.raises(ad.TracingError, match=r"Storing it into a NumPy array \(buf\[i\] = x\).*not known"):
        ad.jit(count_positive_then_scale)(X)


def test_other_conversions_keep_their_messages():
    with pytest.raises(ad.TracingError, match="float\\(\\) of a traced value"):
        ad.grad(lambda x: float(x) * x)(1.0)
    with pytest.raises(ad.TracingError, match="not known while tracing here"):
        ad.jit(lambda x: x * int(x))(1.0)
