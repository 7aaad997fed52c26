"""Batch sizes as arguments on the Numba backend (backends/numba/symbolic.py): a program traced at another
batch size (the last, shorter minibatch) writes the same code and reuses the compiled function."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402
from adarray.backends.numba import runtime, symbolic  # noqa: E402
from adarray.backends.numba.symbolic import Size  # noqa: E402


def test_a_size_is_its_value_for_the_generator_and_a_name_in_the_code():
    n = Size(256, "_n0")
    assert n == 256 and n > 1 and list(range(n))[-1] == 255 and hash(n) == hash(256)
    assert f"range({n})" == "range(_n0)" and repr((n, 3)) == "(_n0, 3)"
    assert f"{n * 64}" == "(_n0 * 64)" and n * 64 == 16384 and f"{64 * n - 1}" == "((64 * _n0) - 1)"
    assert f"{n * 1}" == "_n0" and f"{0 + n}" == "_n0" and f"{n // 2}" == "(_n0 // 2)"
    assert symbolic.product([n, 2, 3]) == 1536 and str(symbolic.product([n, 2, 3])) == "((_n0 * 2) * 3)"
    assert symbolic.planned(Size(5, "_n0", 256) * 2) == 512 and symbolic.planned(7) == 7


def _mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    hidden = anp.tanh(x @ w1 + b1)
    logits = hidden @ w2 + b2
    return -anp.mean(anp.sum((logits - anp.logsumexp(logits, axis=1, keepdims=True)) * y, axis=1))


def _mlp_data(rows):
    rng = np.random.default_rng(rows)
    params = [rng.normal(size=(16, 32)) * 0.3, rng.normal(size=32), rng.normal(size=(32, 4)) * 0.3, rng.normal(size=4)]
    return params, rng.normal(size=(rows, 16)), np.eye(4)[rng.integers(0, 4, rows)]


def test_the_last_shorter_minibatch_reuses_the_compiled_gradient():
    step = ad.jit(ad.grad(_mlp_loss), backend="numba")
    compiled = []
    for rows in (64, 64, 7, 1 + 1):  # full batches, the last short one, and another
        params, x, y = _mlp_data(rows)
        before = len(runtime.COMPILE_LOG)
        got = step(params, x, y)
        compiled.append([entry for entry in runtime.COMPILE_LOG[before:] if entry[2] > 0.05 and not entry[3]])
        for g, w in zip(got, ad.grad(_mlp_loss)(params, x, y)):
            np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-13)
    assert compiled[1] == compiled[2] == compiled[3] == [], compiled
    texts = {runtime.generate(ad.make_ir(ad.grad(_mlp_loss))(*_mlp_data(rows)), "jit(_mlp_loss)").text
             for rows in (64, 7)}
    assert len(texts) == 1  # the same module, so the same machine code (also on disk)
    text = texts.pop()
    assert "_n0" in text and "_c0" in text  # the batch size and the mean's 1/n are arguments


def test_batch_sizes_are_leading_sizes_shared_by_inputs_and_no_other_axis():
    params, x, y = _mlp_data(40)
    program = ad.make_ir(ad.grad(_mlp_loss))(params, x, y)
    assert symbolic.batch_sizes(program) == {40: (4, 0)}  # the rows of x and y, not the weights' sides
    square = ad.make_ir(lambda a, b: a @ b)(np.ones((8, 8)), np.ones((8, 8)))
    assert symbolic.batch_sizes(square) == {}  # 8 is also a column count
    alone = ad.make_ir(lambda a, w: a @ w)(np.ones((30, 3)), np.ones((3, 2)))
    assert symbolic.batch_sizes(alone) == {}  # one input with 30 rows: nothing says it is a batch


def test_the_first_program_of_a_family_decides_as_with_constant_sizes(monkeypatch):
    params, x, y = _mlp_data(48)
    program = ad.make_ir(ad.grad(_mlp_loss))(params, x, y)
    symbolic_groups = runtime.generate(program, "f", True).groups
    monkeypatch.setattr(symbolic, "batch_sizes", lambda program: {})
    assert runtime.generate(program, "f", True).groups == symbolic_groups


def test_a_family_plans_with_the_largest_batch_it_has_seen(monkeypatch):
    monkeypatch.setattr(runtime, "FAMILIES", {})
    small = ad.make_ir(ad.grad(_mlp_loss))(*_mlp_data(6))
    large = ad.make_ir(ad.grad(_mlp_loss))(*_mlp_data(300))
    first = runtime.generate(small, "f").text
    second = runtime.generate(large, "f").text
    assert runtime.generate(small, "f").text == second != first  # later small batches plan like the large one
    assert list(runtime.FAMILIES.values()) == [{"_n0": 300}]
