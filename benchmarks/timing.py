"""Timing and memory helpers shared by the benchmarks.

    >>> seconds = best_time(sum, range(10))
"""
from __future__ import annotations

import gc
import time
import tracemalloc


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
