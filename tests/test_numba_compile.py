"""What the Numba backend does to compile less: single-use temporaries written into their reader (only where
nothing in between changes what they read), loops of one iteration written as an assignment, and the short
compiler pipeline of generated functions (they still load from the disk cache)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402
from adarray.backends.numba import runtime  # noqa: E402
from adarray.backends.numba.inlining import inline_temporaries  # noqa: E402


def test_a_temporary_read_once_in_its_block_moves_into_its_reader():
    lines = ["    for i in range(3):",
             "        t1 = (x[i] * 2.0)",
             "        t2 = _m.exp(t1)",
             "        y[i] = (t2 + 1.0)"]
    assert inline_temporaries(lines) == ["    for i in range(3):", "        y[i] = (_m.exp((x[i] * 2.0)) + 1.0)"]


@pytest.mark.parametrize("between", ["        x[i] = 0.0", "        x, z = z, x", "        _la.dot_into(a, b, x)",
                                     "        _ix.scatter(x, k)", "        x += 1"])
def test_a_temporary_is_not_moved_past_a_statement_that_may_change_what_it_reads(between):
    lines = ["    for i in range(3):", "        t1 = (x[i] * 2.0)", between, "        y[i] = t1"]
    assert inline_temporaries(lines) == lines


def test_a_temporary_stays_when_read_twice_or_in_another_block_or_a_while_test():
    twice = ["    t1 = (x[0] * 2.0)", "    y[0] = (t1 * t1)"]
    into_a_loop = ["    t1 = (x[0] * 2.0)", "    for i in range(3):", "        y[i] = t1"]
    after_its_block = ["    for i in range(3):", "        t1 = x[i]", "    y[0] = t1"]
    while_test = ["    t1 = (x[0] * 2.0)", "    while t1 > 0.0:", "        break"]
    for lines in (twice, into_a_loop, after_its_block, while_test):
        assert inline_temporaries(lines) == lines


def test_a_loop_of_one_iteration_is_an_assignment():
    x = np.arange(6.0).reshape(3, 2)
    program = ad.make_ir(lambda v: anp.max(v, axis=1, keepdims=True) * 2.0)(x)
    text = runtime.generate(program, "f", False)[0]
    assert "range(1)" not in text
    np.testing.assert_allclose(ad.jit(lambda v: anp.max(v, axis=1, keepdims=True) * 2.0, backend="numba")(x),
                               [[2.0], [6.0], [10.0]])


def test_generated_functions_use_the_short_pipeline_and_the_disk_cache(tmp_path, monkeypatch):
    import numba

    monkeypatch.setattr(numba.config, "CACHE_DIR", "")  # $NUMBA_CACHE_DIR would move the index there
    x = np.linspace(0.0, 1.0, 7)
    f = lambda v: anp.sum(anp.tanh(v) * anp.cumsum(v))  # noqa: E731
    with ad.config.override(cache_dir=str(tmp_path)):
        segment = runtime.CompiledSegment(ad.make_ir(ad.grad(f))(x), "short pipeline")
    assert "pipeline_class=_GeneratedCompiler" in segment.text
    np.testing.assert_allclose(segment(x)[0], ad.grad(f)(x), rtol=1e-12)
    assert list(tmp_path.rglob("*.nbi")), "Numba wrote its cache index beside the generated module"
