"""Tiered execution, the default when no backend is named: interpret first, compile what is hot.

A staged program first runs on the NumPy interpreter, which answers at once. Once it has shown it is
hot (its interpreted time so far exceeds a fraction of what compiling it is expected to cost), it is
compiled by the Numba backend on a background thread while the caller goes on with the interpreter;
the calls after the compilation has finished run the compiled code. A program compiled once is marked
in the disk cache, so a later process compiles it at its first call, which then only loads machine
code. Without Numba installed every program stays on the interpreter, and nothing is said.

    >>> f = ad.jit(lambda x: anp.sin(x) * x)      # doctest: +SKIP
    >>> for _ in range(1000): f(x)                 # interpreted, then compiled once hot

A compiled program that would fail (a Numba typing error, which is a bug of ours) is recorded in
`FAILURES` and its program stays on the interpreter: the caller never sees a tier's failure.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import queue
import threading
import time

from .backends import compiler
from .core.fingerprint import fingerprint

# Hot: interpreted seconds so far >= HOT_FRACTION x the expected compile time, after MIN_CALLS calls.
HOT_FRACTION = 0.1
MIN_CALLS = 2
# A rough model of a Numba compile (seconds): a fixed cost, then per equation (measured: 0.3-1 s for
# tens of equations, 10-20 s for ADBench's gradients of hundreds).
COMPILE_SECONDS_FIXED = 0.5
COMPILE_SECONDS_PER_EQUATION = 0.02

# (program name, repr of the error) of every background compilation that failed.
FAILURES: list[tuple[str, str]] = []

_available = None


def numba_installed() -> bool:
    global _available
    if _available is None:
        try:
            _available = importlib.util.find_spec("numba") is not None
        except (ImportError, ValueError):
            _available = False
    return _available


def compile_tiered(program, name: str = "program"):
    """The callable of `program` for the default tier: see the module docstring."""
    interpreted = compiler("numpy")(program, name)
    if not numba_installed() or not program.eqns:
        return interpreted
    return TieredProgram(program, name, interpreted)


class TieredProgram:
    """One program on the interpreter until it is hot, then compiled (see the module docstring)."""

    def __init__(self, program, name: str, interpreted):
        self.program, self.name = program, name
        self.interpreted = interpreted
        self.compiled = None
        self.calls = 0
        self.seconds = 0.0
        self.expected = COMPILE_SECONDS_FIXED + COMPILE_SECONDS_PER_EQUATION * len(program.eqns)
        self.job: _Job | None = None
        self.marker = _marker_path(program)
        self.warm = os.path.exists(self.marker)  # compiled by an earlier process: its machine code is cached

    def __call__(self, *args):
        if self.compiled is not None:
            return self.compiled(*args)
        if self.job is not None and self.job.finished.is_set():
            self.compiled, self.job = self.job.result, None
            if self.compiled is not None:
                return self.compiled(*args)
        if self.warm and self.job is None:
            self.warm = False
            compiled = _compile(self.program, self.name, args, self.marker)
            if compiled is not None:
                self.compiled = compiled
                return compiled(*args)
        begin = time.perf_counter()
        outputs = self.interpreted(*args)
        self.seconds += time.perf_counter() - begin
        self.calls += 1
        if self.job is None and self.compiled is None and self.is_hot():
            self.job = _Job(self.program, self.name, args, self.marker)
            _submit(self.job)
        return outputs

    def is_hot(self) -> bool:
        return self.calls >= MIN_CALLS and self.seconds >= HOT_FRACTION * self.expected

    @property
    def tier(self) -> str:
        """'numba' once the compiled code runs, else 'numpy'."""
        return "numba" if self.compiled is not None else "numpy"

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background compilation to finish (tests, benchmarks). Returns whether one ran."""
        job = self.job
        if job is None:
            return False
        job.finished.wait(timeout)
        return True


def _compile(program, name: str, args, marker: str):
    """The Numba callable of `program`, compiled (or loaded) by one call on `args`; None on failure."""
    try:
        compiled = compiler("numba")(program, name)
        compiled(*args)
    except Exception as error:  # noqa: BLE001 - a tier's failure must not reach the caller
        FAILURES.append((name, repr(error)))
        return None
    try:
        with open(marker, "w"):
            pass
    except OSError:
        pass
    return compiled


class _Job:
    def __init__(self, program, name, args, marker):
        self.program, self.name, self.marker = program, name, marker
        # The arguments of the hot call: the compiled program runs once on them (Numba compiles per argument
        # type); the caller's arrays are never written, so sharing them is safe.
        self.args = list(args)
        self.result = None
        self.finished = threading.Event()

    def run(self):
        try:
            self.result = _compile(self.program, self.name, self.args, self.marker)
        finally:
            self.args = None
            self.finished.set()


_jobs: queue.Queue = queue.Queue()
_worker: list[threading.Thread] = []
_lock = threading.Lock()


def _submit(job: _Job) -> None:
    """One daemon thread compiles, one program after another: a process that ends does not wait for it."""
    with _lock:
        if not _worker:
            thread = threading.Thread(target=_work, name="adarray-compile", daemon=True)
            thread.start()
            _worker.append(thread)
    _jobs.put(job)


def _work() -> None:
    while True:
        _jobs.get().run()


def _marker_path(program) -> str:
    """The disk-cache file that says `program` was compiled before (named by a digest of its fingerprint,
    whose text is the same in every process; a program whose params print an address just never matches)."""
    from .backends.numba import cache

    digest = hashlib.sha1(repr(fingerprint(program)).encode()).hexdigest()[:24]
    return os.path.join(cache.directory(), f"compiled_{cache.version()}_{digest}")
