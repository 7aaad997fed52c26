"""Kernel execution: the NumPy interpreter and the Numba-compiled loops agree to rounding, large
calls pick Numba automatically, and everything works without numba installed.

Compiled kernels are few on purpose (compiling costs about a second each the first time; Numba's
on-disk cache makes later runs fast)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.backends.numba import kernels as numba_kernels
from adarray.kernels import execution, set_kernel_backend
from adarray.kernels.samples import sample_cell, sample_root, sample_series

numba = pytest.importorskip("numba")


@pytest.fixture
def backend():
    previous = execution.kernel_backend()
    yield set_kernel_backend
    set_kernel_backend(previous)


def _both(backend, fn, *args):
    backend("numpy")
    interpreted = fn(*args)
    backend("numba")
    compiled = fn(*args)
    return interpreted, compiled


def _close(a, b):
    for x, y in zip(a if isinstance(a, (tuple, list)) else [a], b if isinstance(b, (tuple, list)) else [b]):
        assert np.asarray(x).dtype == np.asarray(y).dtype
        assert np.allclose(x, y, rtol=1e-13, atol=1e-14, equal_nan=True)


def test_numpy_and_numba_agree_on_values_and_mixed_mode_gradients(backend):
    rng = np.random.default_rng(0)
    z = rng.random((7, 1)) < 0.3
    zb = rng.random((7, 1)) < 0.5
    c, f, i, g = [rng.standard_normal((7, 5)) for _ in range(4)]
    interpreted, compiled = _both(backend, sample_cell, z, zb, c, f, i, g)
    _close(interpreted, compiled)
    loss = lambda c, f, i, g: anp.sum(sample_cell(z, zb, c, f, i, g) ** 2)  # noqa: E731
    _close(*_both(backend, ad.grad(loss, argnums=(0, 1, 2, 3)), c, f, i, g))


def test_numpy_and_numba_agree_on_loops_early_returns_and_nan(backend):
    x = np.array([[-0.9, 0.0, 0.4, 2.0, np.nan]])
    y = np.array([[0.5], [0.8]])
    n = np.array([0, 1, 3, 6, 2])
    _close(*_both(backend, sample_series, x, y, n))
    a = np.array([0.25, 2.0, 9.0, 1e6, 0.0, np.nan])  # NaN ends the loop at once; a < 0 would never end
    _close(*_both(backend, sample_root, a, np.array(1.5)))


def test_large_calls_run_compiled_automatically(backend):
    backend("auto")
    x = np.linspace(0.1, 5.0, execution.NUMBA_MIN_SIZE)
    program, _ = sample_root.scalar_program((np.dtype(np.float64), np.dtype(np.float64)))
    assert np.allclose(sample_root(x, np.array(1.5)), np.sqrt(x))
    assert numba_kernels._compiled.get(program) is not None
    assert execution.numba_enabled()


def test_a_program_numba_cannot_compile_raises_when_forced_and_is_interpreted_otherwise(monkeypatch):
    from adarray.backends.numba.table import LOWERINGS
    from adarray.core.primitive import REGISTRY
    from adarray.core.types import Aval
    from adarray.tracing import trace_program

    gammaln_p = REGISTRY["gammaln"]
    monkeypatch.delitem(LOWERINGS, gammaln_p)  # as if it had no Numba lowering
    program, _, _ = trace_program(lambda x: [gammaln_p.bind(x)], [Aval((), np.float64)], "odd")
    with pytest.raises(ad.ExecutionError, match="kernel 'odd' cannot be compiled by Numba: gammaln"):
        numba_kernels.compiled(program, "odd", required=True)
    assert numba_kernels.compiled(program, "odd") is None


NO_NUMBA = textwrap.dedent('''
    import sys
    sys.modules["numba"] = None  # numba is not installed
    import numpy as np
    import adarray as ad
    import adarray.numpy as anp
    from adarray.kernels import execution
    from adarray.kernels.samples import sample_cell

    assert not execution.numba_enabled()
    n = 200  # 40,000 elements: above the size at which Numba would be used
    rng = np.random.default_rng(0)
    z, zb = rng.random((n, 1)) < 0.3, rng.random((n, 1)) < 0.5
    c, f, i, g = [rng.standard_normal((n, n)) for _ in range(4)]
    sig = lambda v: 1 / (1 + np.exp(-v))
    expected = np.where(z, sig(i) * np.tanh(g), np.where(zb, c, sig(f) * c + sig(i) * np.tanh(g)))
    assert np.allclose(sample_cell(z, zb, c, f, i, g), expected)
    grads = ad.grad(lambda c: anp.sum(sample_cell(z, zb, c, f, i, g)))(c)
    assert np.allclose(grads, np.where(z, 0.0, np.where(zb, 1.0, sig(f))))
    execution.set_kernel_backend("numba")
    try:
        sample_cell(z, zb, c, f, i, g)
    except ad.ExecutionError as error:
        assert "numba is not installed" in str(error)
    else:
        raise AssertionError("forcing numba without numba must fail")
    print("ok")
''')


def test_the_core_works_without_numba():
    result = subprocess.run([sys.executable, "-c", NO_NUMBA], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "ADARRAY_KERNEL_BACKEND": "auto"})
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]
