"""The default tier: the NumPy interpreter first, the Numba backend once a program is hot (api/tiering.py)."""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.api import staging, tiering
from adarray.backends.numba import child, runtime

pytest.importorskip("numba")


@pytest.fixture
def auto(monkeypatch, tmp_path):
    """The default tier, hot at the second call, with a fresh disk cache."""
    monkeypatch.setattr(tiering, "HOT_FRACTION", 0.0)
    monkeypatch.setattr(tiering, "MIN_CALLS", 2)
    with ad.config.override(cache_dir=str(tmp_path), backend="auto"):
        yield
    child.drain()  # a background compile must not outlive its test (its children would meet the next one's)


def tiered(fn):
    """The TieredProgram behind the one staged program of a jitted fn."""
    (entries,) = staging._CACHES[fn].values()
    return entries[0]._compiled["auto"]


def model(x, w):
    return anp.tanh(x @ w) * anp.exp(-x[:, :1] ** 2) / (1.0 + anp.abs(x[:, 1:2]))


def test_the_first_calls_are_interpreted_then_the_compiled_code_runs(auto):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((6, 3)), rng.standard_normal((3, 4))
    x[0, 0], x[1, 1] = np.nan, np.inf
    f = ad.jit(model)
    first = f(x, w)
    program = tiered(model)
    assert program.tier == "numpy" and program.job is None
    compiles = len(runtime.COMPILE_LOG)
    second = f(x, w)                        # hot now: compiling in the background
    assert program.job is not None
    program.wait(120)
    third = f(x, w)
    assert program.tier == "numba" and not tiering.FAILURES
    background = runtime.COMPILE_LOG[compiles:]
    assert background and all(loaded for *_, loaded in background), "compiled in a child, loaded by the caller"
    for _ in range(200):  # the worker stops the idle child just after the job has finished
        if not child._idle:
            break
        time.sleep(0.05)
    assert not child._idle, "an idle child keeps the memory of what it compiled"
    expected = np.tanh(x @ w) * np.exp(-x[:, :1] ** 2) / (1.0 + np.abs(x[:, 1:2]))
    for result in (first, second, third):
        np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))
        np.testing.assert_allclose(result, expected, rtol=1e-14)
    np.testing.assert_array_max_ulp(np.nan_to_num(third), np.nan_to_num(first), maxulp=4)


def test_un_jitted_gradients_tier_up_too(auto):
    loss = lambda w, x: anp.sum(model(x, w) ** 2)
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    results = []
    for _ in range(3):
        results.append(ad.grad(loss)(w, x))
    staged = next(s for s in staging._PROGRAMS.values() if "auto" in s._compiled)
    staged._compiled["auto"].wait(120)
    results.append(ad.grad(loss)(w, x))
    assert staged._compiled["auto"].tier == "numba"
    for result in results[1:]:
        np.testing.assert_allclose(result, results[0], rtol=1e-13)


def test_a_cold_program_stays_interpreted(tmp_path):
    with ad.config.override(cache_dir=str(tmp_path), backend="auto"):
        f = ad.jit(lambda x: anp.sin(x) + 1.0)
        for _ in range(5):
            f(np.ones(3))
        program = next(iter(staging._CACHES[f.__wrapped__].values()))[0]._compiled["auto"]
        assert program.tier == "numpy" and program.job is None  # microseconds of work: never worth a compile


def test_a_named_backend_is_not_tiered():
    f = ad.jit(lambda x: x * 2.0, backend="numpy")
    f(np.ones(2))
    (entries,) = staging._CACHES[f.__wrapped__].values()
    assert set(entries[0]._compiled) == {"numpy"}
    assert not isinstance(entries[0]._compiled["numpy"], tiering.TieredProgram)


def test_without_numba_the_default_interprets_and_says_nothing(auto, monkeypatch, capsys):
    monkeypatch.setattr(tiering, "numba_available", lambda: False)
    f = ad.jit(lambda x: anp.cos(x) * x)
    for _ in range(4):
        np.testing.assert_allclose(f(np.arange(3.0)), np.cos(np.arange(3.0)) * np.arange(3.0))
    assert not isinstance(next(iter(staging._CACHES[f.__wrapped__].values()))[0]._compiled["auto"],
                          tiering.TieredProgram)
    assert capsys.readouterr() == ("", "")


def test_a_compile_that_fails_leaves_the_program_on_the_interpreter(auto, monkeypatch):
    def broken(name):
        if name == "numba":
            raise RuntimeError("typing failed")
        return staging.compiler(name)

    monkeypatch.setattr(tiering, "compiler", broken)
    monkeypatch.setattr(tiering, "FAILURES", [])
    f = ad.jit(lambda x: anp.exp(x) - 1.0)
    f(np.ones(2))
    f(np.ones(2))
    program = tiered(f.__wrapped__)
    program.wait(60)
    np.testing.assert_allclose(f(np.ones(2)), np.expm1(np.ones(2)))
    assert program.tier == "numpy" and tiering.FAILURES == [("jit(<lambda>)", "RuntimeError('typing failed')")]


def test_a_second_process_starts_compiled(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, adarray as ad, adarray.numpy as anp
        from adarray.api import staging, tiering
        tiering.HOT_FRACTION, tiering.MIN_CALLS = 0.0, 1
        def f(x):
            return anp.sum(anp.sin(x) * anp.cos(x))
        g = ad.jit(f)
        g(np.ones(4))
        program = next(iter(staging._CACHES[f].values()))[0]._compiled["auto"]
        print(program.tier)
        program.wait(120)
    """)
    env = dict(os.environ, ADARRAY_CACHE_DIR=str(tmp_path))
    env.pop("ADARRAY_BACKEND", None)
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    assert [run.stdout.split()[-1] for run in runs] == ["numpy", "numba"]


def test_compiled_arithmetic_gives_the_interpreters_bits():
    """No fused multiply-add or reciprocal division in compiled code: a program computes the same bits on every
    tier where nothing is reassociated (1,105 of these 4,096 elements differed with them)."""
    rng = np.random.default_rng(0)
    a, b, c, d = (rng.standard_normal(4096) for _ in range(4))
    f = lambda a, b, c, d: a * b + c / d - a * c  # noqa: E731
    np.testing.assert_array_equal(ad.jit(f, backend="numba")(a, b, c, d), a * b + c / d - a * c)
