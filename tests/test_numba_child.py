"""Compiling in child processes (backends/numba/child.py): a child fills Numba's disk cache and the caller only
loads the machine code; a long program's segments compile at once, one child each; when a child cannot help, the
caller compiles as before."""
import numpy as np
import pytest

pytest.importorskip("numba")

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402
from adarray.backends.numba import child, options, runtime  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_children(monkeypatch, tmp_path):
    """No idle child, background task or refusal from other tests; a disk cache of this test's own."""
    child.drain()
    child.stop()
    monkeypatch.setattr(child, "_refused", [])
    with ad.config.override(cache_dir=str(tmp_path)):
        yield
    child.drain()
    child.stop()


def loss(v):
    return anp.sum(anp.tanh(v) * anp.cumsum(v) + anp.log1p(v * v))


def segment_of(x, name):
    return runtime.CompiledSegment(ad.make_ir(ad.grad(loss))(x), name)


def test_the_caller_loads_what_the_child_compiled():
    x = np.linspace(-1.0, 2.0, 9)
    segment = segment_of(x, "compiled in a child")
    with runtime.compiling_in_child():
        segment.compile([x])
    name, _, _, loaded = runtime.COMPILE_LOG[-1]
    assert name == "compiled in a child" and loaded, "the caller compiled instead of loading the child's code"
    np.testing.assert_allclose(segment(x)[0], ad.grad(loss)(x), rtol=1e-13)
    assert len(child._idle) == 1, "the child waits for the next request"


def test_without_a_child_the_caller_compiles(monkeypatch):
    x = np.linspace(-1.0, 2.0, 10)
    monkeypatch.setattr(child, "_take", lambda: None)
    segment = segment_of(x, "no child")
    with runtime.compiling_in_child():
        segment.compile([x])
    assert runtime.COMPILE_LOG[-1][0] == "no child" and not runtime.COMPILE_LOG[-1][3]
    np.testing.assert_allclose(segment(x)[0], ad.grad(loss)(x), rtol=1e-13)


@pytest.mark.parametrize("executable", ["", "/opt/blender/blender", "C:\\Maya\\bin\\mayapy.exe"])
def test_no_child_is_started_from_an_application_embedding_python(executable, monkeypatch):
    monkeypatch.setattr(child.sys, "executable", executable)
    assert child.compile_in_child("unused.py", "adarray_program_unused", ()) is False
    assert not child._idle


def test_python_interpreters_are_recognised():
    assert child._is_python(child.sys.executable)
    assert all(child._is_python(path) for path in ["/usr/bin/python3.11", "C:\\Python311\\python.exe",
                                                     "/opt/pypy/bin/pypy3"])


def test_a_child_that_failed_or_died_is_replaced(tmp_path):
    broken = tmp_path / "adarray_program_broken.py"
    broken.write_text("def program(:\n")
    assert child.compile_in_child(str(broken), "adarray_program_broken", ()) is False
    ((process, _),) = child._idle
    assert process.poll() is None, "a failed compile must not end the child"
    process.kill()
    process.wait()
    x = np.linspace(0.5, 1.5, 11)
    segment = segment_of(x, "after the child died")
    with runtime.compiling_in_child():
        segment.compile([x])                 # a new child compiles it
    assert runtime.COMPILE_LOG[-1][3]
    ((replacement, _),) = child._idle
    assert replacement is not process


def test_after_numba_refuses_to_cache_a_childs_work_the_caller_compiles_itself(tmp_path):
    """A function reading a large global array cannot be cached (so at -O0 is the math library): a child's work
    would be done twice, so the process stops asking children."""
    module = tmp_path / "adarray_program_global_table.py"
    module.write_text("import numba\nimport numpy as np\nTABLE = np.arange(10 ** 7, dtype=np.float64)\n\n\n"
                      "@numba.njit(cache=True)\ndef program(i):\n    return TABLE[i]\n")
    import numba

    assert child.compile_in_child(str(module), "adarray_program_global_table", (numba.int64,)) is False
    assert child._refused and "dynamic globals" in child._refused[0]
    child.stop()
    x = np.linspace(0.5, 1.5, 12)
    segment = segment_of(x, "refused before")
    with runtime.compiling_in_child():
        segment.compile([x])
    assert not runtime.COMPILE_LOG[-1][3] and not child._idle, "no child was asked"


def long_loss(x):
    for k in range(6):
        x = anp.sin(x) * (k + 1.5) + anp.cumprod(x)
    return anp.sum(x * anp.fft.fft(x).real)   # fft: a NumPy step between compiled segments


def test_the_segments_of_a_long_program_compile_at_once_in_children(monkeypatch):
    monkeypatch.setattr(options, "MAX_SEGMENT_EQUATIONS", 12)
    monkeypatch.setattr(options, "COMPILE_AHEAD_MIN_EQUATIONS", 24)
    x = np.linspace(-0.9, 0.9, 8)
    program = ad.make_ir(ad.grad(long_loss))(x)
    kinds = [kind for kind, _ in runtime.segments(program)]
    before_numpy = kinds.index("numpy") if "numpy" in kinds else len(kinds)
    assert kinds[:before_numpy].count("numba") >= 2, kinds
    start = len(runtime.COMPILE_LOG)
    gradient = ad.jit(ad.grad(long_loss), backend="numba")
    np.testing.assert_allclose(gradient(x), ad.grad(long_loss)(x), rtol=1e-12)
    loaded = [entry[3] for entry in runtime.COMPILE_LOG[start:]]
    assert all(loaded[:kinds[:before_numpy].count("numba")]), "the segments before NumPy's step are loaded"
    assert not child._idle, "the children end with the compile"


def test_segments_the_children_could_not_compile_are_compiled_by_the_caller(monkeypatch):
    monkeypatch.setattr(options, "MAX_SEGMENT_EQUATIONS", 12)
    monkeypatch.setattr(options, "COMPILE_AHEAD_MIN_EQUATIONS", 24)
    monkeypatch.setattr(child, "compile_in_children", lambda requests: [False] * len(requests))
    x = np.linspace(-0.9, 0.9, 8)
    start = len(runtime.COMPILE_LOG)
    np.testing.assert_allclose(ad.jit(ad.grad(long_loss), backend="numba")(x), ad.grad(long_loss)(x), rtol=1e-12)
    assert runtime.COMPILE_LOG[start:] and not any(entry[3] for entry in runtime.COMPILE_LOG[start:])


def test_a_short_program_in_segments_is_compiled_by_the_caller(monkeypatch):
    monkeypatch.setattr(options, "MAX_SEGMENT_EQUATIONS", 12)
    monkeypatch.setattr(child, "compile_in_children", lambda requests: pytest.fail("not worth a child's start"))
    x = np.linspace(-0.9, 0.9, 8)
    np.testing.assert_allclose(ad.jit(ad.grad(long_loss), backend="numba")(x), ad.grad(long_loss)(x), rtol=1e-12)


@pytest.fixture
def threads_for_every_loop(monkeypatch):
    """Every top-level loop runs on threads, whatever the machine (options.parallel asks for two Numba threads)."""
    import numba

    monkeypatch.setattr(options, "PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", max(2, numba.config.NUMBA_NUM_THREADS))
    monkeypatch.setattr(runtime, "THREADS_FAILED", [])


def threaded_loss(v):
    return anp.sum(anp.exp(-v * v) * anp.cos(3.0 * v))


def test_a_function_with_threads_runs_a_stand_in_until_it_is_compiled(threads_for_every_loop):
    x = np.linspace(-2.0, 2.0, 64)
    compiled = runtime.compile_program(ad.make_ir(ad.grad(threaded_loss))(x), "threads later")
    segment = compiled.segment
    assert segment.threaded and "parallel=True" in segment.text
    start = len(runtime.COMPILE_LOG)
    first = compiled(x)[0]
    assert segment.stand_in is not None and "parallel=True" not in segment.stand_in.text
    assert [entry[0] for entry in runtime.COMPILE_LOG[start:]] == ["threads later"], "only the stand-in compiled"
    assert segment.threads_loaded.wait(300)
    assert segment.stand_in is None and not runtime.THREADS_FAILED
    assert runtime.COMPILE_LOG[-1][3], "the function with threads was compiled by a child, then loaded"
    want = ad.grad(threaded_loss)(x)
    np.testing.assert_allclose(first, want, rtol=1e-13)
    np.testing.assert_allclose(compiled(x)[0], want, rtol=1e-13)

    again = runtime.compile_program(ad.make_ir(ad.grad(threaded_loss))(x), "threads later")
    np.testing.assert_allclose(again(x)[0], want, rtol=1e-13)
    assert again.segment.stand_in is None, "machine code in the disk cache needs no stand-in"


def test_a_function_with_threads_that_fails_keeps_its_stand_in(threads_for_every_loop, monkeypatch):
    x = np.linspace(-2.0, 1.0, 48)
    compiled = runtime.compile_program(ad.make_ir(ad.grad(threaded_loss))(x), "threads fail")
    segment = compiled.segment

    def broken(signature, start, report=True):
        raise runtime.ExecutionError("the Numba backend failed to compile 'threads fail'")

    monkeypatch.setattr(segment, "_compile", broken)
    want = ad.grad(threaded_loss)(x)
    np.testing.assert_allclose(compiled(x)[0], want, rtol=1e-13)
    assert segment.threads_loaded.wait(60)
    assert segment.stand_in is not None and runtime.THREADS_FAILED[0][0] == "threads fail"
    np.testing.assert_allclose(compiled(x)[0], want, rtol=1e-13)


def test_threads_at_the_first_call_when_asked(threads_for_every_loop, monkeypatch):
    monkeypatch.setattr(options, "THREADS_AFTER_FIRST_CALL", False)
    x = np.linspace(-1.0, 3.0, 40)
    compiled = runtime.compile_program(ad.make_ir(ad.grad(threaded_loss))(x), "threads at once")
    np.testing.assert_allclose(compiled(x)[0], ad.grad(threaded_loss)(x), rtol=1e-13)
    assert compiled.segment.threaded and compiled.segment.stand_in is None
    assert not compiled.segment.threads_loaded.is_set()
