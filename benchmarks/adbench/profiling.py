"""A per-primitive time breakdown of adarray's NumPy interpreter, without touching the backend.

`PrimitiveProfiler` replaces every implementation in `adarray.backends.numpy.IMPLS` (primitive -> NumPy
function) by a timing wrapper while it is active, and puts the originals back on exit. Compiled programs capture
the implementation functions when they are compiled, so only programs compiled while a profiler is active are
measured: entering a profiler forgets every staged program (`ad.clear_caches`), so whatever runs in the `with`
block is staged, and measured, there. Such programs keep their wrappers: later calls are measured by whichever
profiler is active then, and run through a cheap pass-through otherwise.

Times are *self* times: a primitive that runs nested programs (fold, while, cond, the general scan and reduce)
is charged its own time minus that of the primitives it ran, so the sum over primitives is the time spent in
implementations. A control-flow primitive's self time is therefore the interpreter's overhead of running its
body (the Python loop over iterations and over the body's equations), not arithmetic.

    with PrimitiveProfiler() as profile:
        ad.grad(loss)(x)

    print(profile.table())
"""
from __future__ import annotations

import time
from collections import defaultdict

import adarray as ad
from adarray.backends.numpy import IMPLS

_active: list = []  # the profilers recording now, innermost last


def _wrap(name, fn):
    """A timing wrapper of one implementation; it records into the innermost active profiler, if any, so that
    programs compiled under one profiler can be measured again under another (and run untimed otherwise)."""
    clock = time.perf_counter

    def timed(*args, **params):
        if not _active:
            return fn(*args, **params)
        profiler = _active[-1]
        stack = profiler._stack
        stack.append(0.0)
        start = clock()
        try:
            return fn(*args, **params)
        finally:
            elapsed = clock() - start
            nested = stack.pop()
            profiler.self_time[name] += elapsed - nested
            profiler.calls[name] += 1
            if stack:
                stack[-1] += elapsed

    timed.__wrapped__ = fn
    return timed


class PrimitiveProfiler:
    """Context manager: wall time and call count per primitive (self time, nested calls subtracted)."""

    def __init__(self):
        self.self_time: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.wall = 0.0
        self._originals: dict | None = None
        self._stack: list[float] = []   # time spent in nested primitives, per active frame
        self._started = 0.0

    def __enter__(self):
        if self._originals is not None:
            raise RuntimeError("this PrimitiveProfiler is already active")
        self._originals = dict(IMPLS)
        for primitive, fn in self._originals.items():
            if not hasattr(fn, "__wrapped__"):
                IMPLS[primitive] = _wrap(primitive.name, fn)
        _active.append(self)
        ad.clear_caches()
        self._started = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.wall += time.perf_counter() - self._started
        _active.remove(self)
        IMPLS.clear()
        IMPLS.update(self._originals)
        self._originals = None
        return False
    @property
    def total(self) -> float:
        """Seconds spent inside primitive implementations."""
        return sum(self.self_time.values())

    def rows(self, top: int | None = None):
        """(name, seconds, calls, share of the primitives' total) sorted by time."""
        total = self.total or 1.0
        ordered = sorted(self.self_time.items(), key=lambda item: -item[1])
        return [(name, seconds, self.calls[name], seconds / total) for name, seconds in ordered[:top]]

    def table(self, top: int = 15, title: str = "") -> str:
        """A Markdown table of the `top` primitives by self time."""
        lines = [f"**{title}**" if title else "", "",
                 "| primitive | self time (ms) | calls | µs/call | share |", "|---|---:|---:|---:|---:|"]
        for name, seconds, calls, share in self.rows(top):
            lines.append(f"| {name} | {1e3 * seconds:.2f} | {calls} | {1e6 * seconds / max(calls, 1):.1f} | "
                         f"{100 * share:.1f}% |")
        outside = self.wall - self.total
        lines.append(f"\nprimitives {1e3 * self.total:.1f} ms of {1e3 * self.wall:.1f} ms wall "
                     f"({1e3 * outside:.1f} ms outside primitives: interpreter loop, tracing, compiling, glue)")
        return "\n".join(line for line in lines if line is not None).lstrip("\n")


class CompiledProfiler:
    """Where the Numba backend's time goes: processor cycles per top-level group of every compiled program (a
    loop nest with the primitives written into it, a fold, a BLAS call), and seconds per primitive that ran on
    the NumPy backend inside a compiled program (no Numba lowering). Programs compiled while it is active
    count their groups (the counters cost a few cycles per group, not per element)."""

    def __init__(self):
        from adarray.backends.numba import options, runtime

        self._options, self._runtime = options, runtime
        self._saved = None

    def __enter__(self):
        self._saved = self._options.PROFILE
        self._options.PROFILE = True
        return self

    def __exit__(self, *exc):
        self._options.PROFILE = self._saved
        return False

    def reset(self) -> None:
        for segment in self._runtime.PROFILED:
            segment.counters[:] = 0
            segment.calls = 0
        self._runtime.NUMPY_SECONDS.clear()

    def table(self, wall: float, calls: int, top: int = 12, title: str = "") -> str:
        """A Markdown table of the `top` groups by time (per call), then the NumPy primitives."""
        rate = self._runtime.cycles_per_second()
        rows = []
        for segment in self._runtime.PROFILED:
            if not segment.calls:
                continue
            for description, count in zip(segment.groups, segment.counters):
                if count:
                    rows.append((count / rate / calls, f"{segment.name}: {description}"))
        for name, seconds in self._runtime.NUMPY_SECONDS.items():
            rows.append((seconds / calls, f"NumPy backend: {name}"))
        rows.sort(key=lambda row: -row[0])
        total = sum(seconds for seconds, _ in rows)
        per_call = wall / calls
        lines = [f"**{title}**" if title else "", "", "| group | µs per call | share |", "|---|---:|---:|"]
        for seconds, what in rows[:top]:
            lines.append(f"| {what} | {1e6 * seconds:.1f} | {100 * seconds / max(total, 1e-12):.1f}% |")
        lines.append(f"\ngroups {1e6 * total:.1f} µs of {1e6 * per_call:.1f} µs per call ({len(rows)} groups; "
                     f"{1e6 * (per_call - total):.1f} µs outside them: the call, argument checks, allocation)")
        return "\n".join(lines).lstrip("\n")
