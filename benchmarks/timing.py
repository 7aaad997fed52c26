"""Timing and memory helpers shared by the benchmarks.

    >>> seconds = best_time(sum, range(10))
"""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                    "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")
REPO_ROOT = Path(__file__).resolve().parents[1]


def best_time(fn, *args, min_total=0.2, max_repeats=20):
    """Minimum seconds per call of fn(*args), repeated until `min_total` seconds have passed, at least 3 and at
    most `max_repeats` times (the first call excluded: it stages and compiles)."""
    fn(*args)
    times, start = [], time.perf_counter()
    while len(times) < max_repeats and (time.perf_counter() - start < min_total or len(times) < 3):
        begin = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - begin)
    return min(times)


def traced_peak(fn) -> int:
    """Peak bytes that tracemalloc sees during one call of fn (NumPy's arrays; not XLA's or PyTorch's)."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def threads_fixed(threads: int) -> bool:
    """Does this process's environment already carry `threads` for every numerical library?"""
    return all(os.environ.get(name) == str(threads) for name in THREAD_VARIABLES)


def relaunch(module: str, argv, threads: int) -> int:
    """Run `python -m module argv` in a child process whose environment fixes the thread counts from the start
    (NumPy, BLAS and Numba read them when they are imported)."""
    env = dict(os.environ)
    env.update({name: str(threads) for name in THREAD_VARIABLES})
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                              if p])
    sys.stdout.flush()
    sys.stderr.flush()
    return subprocess.call([sys.executable, "-m", module, *argv], env=env)
