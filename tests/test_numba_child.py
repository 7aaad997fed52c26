"""Compiling in a child process (backends/numba/child.py): the child fills Numba's disk cache and the caller only
loads the machine code; when the child cannot help, the caller compiles as before."""
import numpy as np
import pytest

pytest.importorskip("numba")

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402
from adarray.backends.numba import child, runtime  # noqa: E402


def loss(v):
    return anp.sum(anp.tanh(v) * anp.cumsum(v) + anp.log1p(v * v))


def segment_of(x, name):
    return runtime.CompiledSegment(ad.make_ir(ad.grad(loss))(x), name)


def test_the_caller_loads_what_the_child_compiled(tmp_path):
    x = np.linspace(-1.0, 2.0, 9)
    with ad.config.override(cache_dir=str(tmp_path)):
        segment = segment_of(x, "compiled in a child")
        with runtime.compiling_in_child():
            segment.compile([x])
    name, _, _, loaded = runtime.COMPILE_LOG[-1]
    assert name == "compiled in a child" and loaded, "the caller compiled instead of loading the child's code"
    np.testing.assert_allclose(segment(x)[0], ad.grad(loss)(x), rtol=1e-13)


def test_without_a_child_the_caller_compiles(tmp_path, monkeypatch):
    x = np.linspace(-1.0, 2.0, 10)
    monkeypatch.setattr(child, "_running_child", lambda: None)
    with ad.config.override(cache_dir=str(tmp_path)):
        segment = segment_of(x, "no child")
        with runtime.compiling_in_child():
            segment.compile([x])
    assert runtime.COMPILE_LOG[-1][0] == "no child" and not runtime.COMPILE_LOG[-1][3]
    np.testing.assert_allclose(segment(x)[0], ad.grad(loss)(x), rtol=1e-13)


def test_a_child_that_died_or_failed_answers_false_and_is_replaced(tmp_path):
    broken = tmp_path / "adarray_program_broken.py"
    broken.write_text("def program(:\n")
    assert child.compile_in_child(str(broken), "adarray_program_broken", ()) is False
    process = child._running_child()
    assert process is not None and process.poll() is None, "a failed compile must not end the child"
    process.kill()
    process.wait()
    x = np.linspace(0.5, 1.5, 11)
    with ad.config.override(cache_dir=str(tmp_path)):
        segment = segment_of(x, "after the child died")
        with runtime.compiling_in_child():
            segment.compile([x])                 # a new child compiles it
    assert runtime.COMPILE_LOG[-1][3]
    assert child._running_child() is not process
