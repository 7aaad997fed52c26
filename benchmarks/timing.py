"""Timing and memory helpers shared by the benchmarks.

    >>> seconds = best_time(sum, range(10))
"""
from __future__ import annotations

import csv
import gc
import importlib.util
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                    "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")
REPO_ROOT = Path(__file__).resolve().parents[1]
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}  # --clock: cpu is steadier on a busy machine
ENGINES = {"numba": "numba", "jax": "jax", "jax.jit": "jax", "torch": "torch"}  # tool -> the package it needs


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


def chosen_tools(parser, text: str, known) -> list[str]:
    """The comma-separated tools of `text`, each one of `known`; else a usage error through `parser`."""
    tools = [tool for tool in text.split(",") if tool]
    unknown = [tool for tool in tools if tool not in known]
    if unknown or not tools:
        parser.error(f"unknown tool {', '.join(unknown) or '(none)'}; choose from {', '.join(known)}")
    return tools


def available(tool: str) -> bool:
    """Is the engine that `tool` needs installed (adarray's own tools need none)?"""
    engine = ENGINES.get(tool)
    return engine is None or importlib.util.find_spec(engine) is not None


def write_results(folder, name: str, header: str, lines, columns, rows) -> None:
    """`name`.md (the printed table: its header and lines) and `name`.csv (columns and rows) in `folder`."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{name}.md"), "w") as md:
        md.write(header + "\n" + "".join(line + "\n" for line in lines))
    with open(os.path.join(folder, f"{name}.csv"), "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(columns)
        writer.writerows(rows)


def pyplot():
    """matplotlib.pyplot drawing to files (Agg), or None with a message when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no plot: matplotlib is in the bench extra)")
        return None
    return plt
