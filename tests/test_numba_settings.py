"""The Numba backend obeys `ad.config`: the cache directory, threads and the allocator opt-in are read when a
program is generated, so `ad.config.override` changes them for the programs compiled inside the block."""
from __future__ import annotations

import importlib
import pathlib

import numpy as np
import pytest

pytest.importorskip("numba")

import numba  # noqa: E402

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402
from adarray.backends.numba import cache, options, runtime  # noqa: E402


def test_programs_land_in_the_cache_dir_of_the_setting(tmp_path):
    x = np.linspace(-1.0, 1.0, 13 * 7).reshape(13, 7)
    f = ad.jit(lambda v: anp.cosh(v) - anp.arctan(v) * anp.sum(v, axis=0), backend="numba")
    with ad.config.override(cache_dir=str(tmp_path / "elsewhere")):
        assert cache.directory() == str(tmp_path / "elsewhere")
        got = f(x)
    np.testing.assert_allclose(got, np.cosh(x) - np.arctan(x) * np.sum(x, axis=0), rtol=1e-13)
    written = list((tmp_path / "elsewhere").glob("adarray_program_*.py"))
    assert written and "np.cosh" in " ".join(path.read_text() for path in written)
    assert ad.config.cache_dir != str(tmp_path / "elsewhere")  # the block's value is gone after it


def test_threads_follow_the_numba_parallel_setting():
    x = np.linspace(0.0, 1.0, options.PARALLEL_MIN_WORK * 2)
    program = ad.make_ir(lambda v: anp.sin(v) * v)(x)
    with ad.config.override(numba_parallel=False):
        assert options.parallel() is False
        assert "parallel=True" not in runtime.CompiledSegment(program, "threads off").text
    with ad.config.override(numba_parallel=True):
        threads = numba.config.NUMBA_NUM_THREADS > 1  # one Numba thread: never parallel (options.parallel)
        assert options.parallel() is threads
        assert ("parallel=True" in runtime.CompiledSegment(program, "threads on").text) is threads


def test_the_allocator_opt_in_is_taken_at_the_next_compile(monkeypatch):
    import platform

    monkeypatch.setattr(runtime, "_MALLOC_TUNED", [])
    x = np.arange(5.0)
    ad.jit(lambda v: anp.tanh(v) + 3.0, backend="numba")(x)
    assert runtime._MALLOC_TUNED == []  # off by default: the host's allocator is left alone
    with ad.config.override(numba_keep_memory=True):
        np.testing.assert_allclose(ad.jit(lambda v: anp.tanh(v) + 4.0, backend="numba")(x), np.tanh(x) + 4.0)
    glibc = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"
    assert runtime._MALLOC_TUNED == [glibc]


def test_numbas_cached_math_library_is_forgotten_when_a_source_changes(tmp_path, monkeypatch):
    """Numba's cache of a math-library function is checked against its own file only: a changed helper in
    another file must delete it (cache.forget_stale_library_code), and an unchanged version must keep it."""
    folder = tmp_path / "__pycache__"
    folder.mkdir()
    (folder / "gammalib.beta-399.py311.nbi").write_text("index")
    (folder / "gammalib.beta-399.py311.1.nbc").write_text("code")
    (folder / "other.pyc").write_text("bytecode")
    monkeypatch.setattr(cache, "_FOLDER", str(tmp_path))
    cache.forget_stale_library_code()  # no stamp yet: forgotten
    assert sorted(p.name for p in folder.iterdir()) == ["adarray-version", "other.pyc"]
    (folder / "gammalib.beta-399.py311.nbi").write_text("index")
    cache.forget_stale_library_code()  # the same sources: kept
    assert (folder / "gammalib.beta-399.py311.nbi").exists()
    (folder / "adarray-version").write_text("older")
    cache.forget_stale_library_code()  # other sources: forgotten
    assert not (folder / "gammalib.beta-399.py311.nbi").exists()
    assert (folder / "adarray-version").read_text() == cache.version()


def test_every_math_library_function_names_its_fast_math_flags():
    """A compiled function without its own fastmath flags takes its first caller's (a generated program's
    `reassoc`) and Numba caches that variant for every caller (beta(1e-300, 1e-300) was inf): options.py."""
    folder = pathlib.Path(cache.__file__).parent
    names = sorted(p.stem for p in folder.glob("*lib.py")) + ["lapack"]
    unset = []
    for name in names:
        module = importlib.import_module(f"adarray.backends.numba.{name}")
        for attribute, value in vars(module).items():
            if isinstance(value, numba.core.registry.CPUDispatcher) and value.__module__ == module.__name__:
                if "fastmath" not in value.targetoptions:
                    unset.append(f"{name}.{attribute}")
    assert len(names) >= 9 and not unset, unset
