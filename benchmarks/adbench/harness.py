"""ADBench's timing protocol, peak memory, and the correctness checks of one (tool, instance) run.

Protocol (ADBench docs/Methodology.md): for the objective F and the derivative J separately, double the number of
repeats from 1 until one timed batch lasts at least `min_time`; then keep timing batches until `runs` samples or
`time_limit` seconds; report the minimum time per call. The first call of each (tracing, compilation, caches) is
timed separately and never counted in the samples.

Peak memory of one J call: the growth of the resident set size over its value before the call (Linux: the peak
is reset through /proc/self/clear_refs and read from VmHWM, after malloc_trim returns freed memory to the OS), so
it counts every allocator (NumPy, XLA, PyTorch, Numba) alike. It is measured after all timing, with glibc told to
return freed memory at once (`return_freed_memory`): otherwise a call reuses what earlier calls left in the heap
and shows little growth, more so for whichever library keeps more. Where /proc is not available, tracemalloc's
peak (NumPy allocations only) is used instead.
"""
from __future__ import annotations

import ctypes
import math
import time
import tracemalloc
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .reference import (
    ADBENCH_TOLERANCE,
    OBJECTIVES,
    central_difference,
    directional_derivative,
    random_direction,
    relative_error,
)

FINITE_DIFFERENCE_TOLERANCE = 1e-5  # relative error of J v against central differences (step 1e-6)


@dataclass
class Task:
    """One tool's functions for one instance. `objective` and `derivative` are what is timed (native results);
    `objective_output` / `derivative_output` turn those into ADBench's layout for the checks (untimed)."""
    objective: Callable[[], Any]
    derivative: Callable[[], Any]
    objective_output: Callable[[Any], Any]
    derivative_output: Callable[[Any], Any]
    note: str = ""


@dataclass
class Protocol:
    min_time: float = 0.5     # seconds a timed batch must last
    runs: int = 10            # samples to take at most
    time_limit: float = 10.0  # seconds of sampling at most per measurement


@dataclass
class Measurement:
    best: float          # minimum seconds per call
    samples: int
    repeats: int


@dataclass
class Result:
    tool: str
    problem: str
    instance: str
    size: int
    first_objective: float = math.nan   # seconds of the first call (tracing, compiling, one run)
    first_derivative: float = math.nan
    objective: float = math.nan         # minimum seconds per call
    derivative: float = math.nan
    peak_mb: float = math.nan           # memory growth during one derivative call
    error_objective: float = math.nan   # ADBench relative error of F vs the NumPy reference
    error_derivative: float = math.nan  # J v vs central differences of the reference, or J vs adarray's J
    checked_against: str = ""
    status: str = "ok"
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.derivative / self.objective if self.objective > 0 else math.nan


def block(value):
    """Wait for asynchronous results (JAX); identity otherwise."""
    ready = getattr(value, "block_until_ready", None)
    if ready is not None:
        return ready()
    if isinstance(value, (tuple, list)):
        for item in value:
            block(item)
    return value


def measure(fn: Callable[[], Any], protocol: Protocol) -> Measurement:
    """Minimum seconds per call of fn() by ADBench's protocol."""
    repeats = 1
    while True:
        start = time.perf_counter()
        for _ in range(repeats):
            block(fn())
        elapsed = time.perf_counter() - start
        if elapsed >= protocol.min_time or repeats >= 2 ** 20:
            break
        repeats *= 2
    samples, spent = [elapsed / repeats], elapsed
    while len(samples) < protocol.runs and spent < protocol.time_limit:
        start = time.perf_counter()
        for _ in range(repeats):
            block(fn())
        elapsed = time.perf_counter() - start
        samples.append(elapsed / repeats)
        spent += elapsed
    return Measurement(min(samples), len(samples), repeats)


def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def return_freed_memory() -> None:
    """From now on glibc maps every allocation above 128 KiB on its own and unmaps it when freed, and trims the
    heap above 128 KiB free, for every library in the process (fixed thresholds: no more adapting to the sizes
    seen, nor the Numba backend's keeping). Calls after this fault their pages in again: call it after timing."""
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's malloc.h
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return
    mallopt(m_mmap_threshold, 128 << 10)
    mallopt(m_trim_threshold, 128 << 10)


def peak_memory_mb(fn: Callable[[], Any], repeats: int = 5) -> float:
    """Growth of the resident set (MB) during a call of fn, the largest of `repeats` calls (a call may reuse pages
    a previous call's result still held when the peak was reset); tracemalloc's peak where /proc is missing."""
    growth = []
    for _ in range(repeats):
        if not _reset_peak():
            break
        before = _status_kb("VmRSS")
        block(fn())
        peak = _status_kb("VmHWM")
        if before is not None and peak is not None:
            growth.append(max(peak - before, 0) / 1024)
    if growth:
        return max(growth)
    tracemalloc.start()
    try:
        block(fn())
        return tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()


def check_objective(problem: str, data, value) -> float:
    """ADBench relative error of a tool's F against the NumPy reference."""
    return relative_error(value, OBJECTIVES[problem](data))


def check_derivative_by_differences(problem: str, data, derivative, seed: int = 0) -> float:
    """ADBench relative error of J v against central differences of the NumPy reference along a random v."""
    direction = random_direction(data, seed)
    return relative_error(directional_derivative(problem, data, derivative, direction),
                          central_difference(problem, data, direction))


def as_dense(matrix) -> np.ndarray:
    return matrix.toarray() if hasattr(matrix, "toarray") else np.asarray(matrix)


def compare_derivatives(a, b) -> float:
    """ADBench relative error between two derivatives in the same layout (CSR compared on its structure too)."""
    if hasattr(a, "indptr") and hasattr(b, "indptr"):
        if a.shape != b.shape or not (np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)):
            return math.inf
        return relative_error(a.data, b.data)
    return relative_error(as_dense(a), as_dense(b))


def run_task(tool: str, problem: str, instance: str, data, task: Task, protocol: Protocol,
             expected_derivative=None) -> tuple[Result, Any]:
    """Time and check one task. Returns the result and the derivative in ADBench layout (to check peers against).

    The derivative is checked against `expected_derivative` (adarray's) when given, else by central differences.
    """
    result = Result(tool, problem, instance, data.size, note=task.note)
    start = time.perf_counter()
    value = block(task.objective())
    result.first_objective = time.perf_counter() - start
    start = time.perf_counter()
    derivative = block(task.derivative())
    result.first_derivative = time.perf_counter() - start
    value, derivative = task.objective_output(value), task.derivative_output(derivative)
    result.error_objective = check_objective(problem, data, value)
    if expected_derivative is None:
        result.error_derivative = check_derivative_by_differences(problem, data, derivative)
        result.checked_against, tolerance = "finite differences", FINITE_DIFFERENCE_TOLERANCE
    else:
        result.error_derivative = compare_derivatives(derivative, expected_derivative)
        result.checked_against, tolerance = "adarray", ADBENCH_TOLERANCE
    if not result.error_objective < ADBENCH_TOLERANCE or not result.error_derivative < tolerance:
        result.status = "WRONG"
    result.objective = measure(task.objective, protocol).best
    result.derivative = measure(task.derivative, protocol).best
    return result, derivative
