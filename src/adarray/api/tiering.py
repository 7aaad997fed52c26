"""Tiered execution, the default when no backend is named: interpret first, compile what is hot.

A staged program first runs on the NumPy interpreter, which answers at once. Once it has shown it is
hot (its interpreted time so far exceeds a fraction of what compiling it is expected to cost), it is
compiled by the Numba backend while the caller goes on with the interpreter: in a child process, whose
machine code a background thread then loads from the disk cache (COMPILE_IN_CHILD). The calls after
the compilation has finished run the compiled code. A program compiled once is marked
in the disk cache, so a later process compiles it at its first call, which then only loads machine
code. Without Numba installed every program stays on the interpreter, and nothing is said.

    >>> f = ad.jit(lambda x: anp.sin(x) * x)      # doctest: +SKIP
    >>> for _ in range(1000): f(x)                 # interpreted, then compiled once hot

A compiled program that would fail (a Numba typing error, which is a bug of ours) is recorded in
`FAILURES` and its program stays on the interpreter: the caller never sees a tier's failure.

The same choice, made per call, for the two sub-languages whose calls the NumPy backend runs: it asks
`ACCELERATORS` (backends/numpy/registry.py), which this module fills, so that the reference backend
imports no other engine.
  * a kernel call compiles with Numba from NUMBA_MIN_SIZE elements on (kernel backend 'auto'), or always
    ('numba': an error without Numba); 'numpy' interprets every call (`kernel_engine`);
  * a reversible program compiles once one of its interpreted calls took NUMBA_AFTER_SECONDS ('auto'), or
    at once ('numba'); 'numpy' interprets it (`reversible_engine`).
"""
from __future__ import annotations

import hashlib
import os
import threading
import time

from ..backends import compiler
from ..backends.numba import cache
from ..backends.numba import child as numba_child
from ..backends.numba import kernels as numba_kernels
from ..backends.numba import reversible as numba_reversible
from ..backends.numba import runtime as numba_runtime
from ..backends.numpy.registry import ACCELERATORS
from ..core.config import config
from ..core.engines import numba_available
from ..core.fingerprint import fingerprint
from ..kernels.execution import NUMBA_MIN_SIZE
from ..kernels.primitive import kernel_p
from ..reversible.execution import NUMBA_AFTER_SECONDS
from ..reversible.primitive import reversible_p

# Hot: interpreted seconds so far >= HOT_FRACTION x the expected compile time, after MIN_CALLS calls.
HOT_FRACTION = 0.1
MIN_CALLS = 2
# A rough model of a Numba compile (seconds): a fixed cost, then per equation (measured: 0.3-1 s for
# tens of equations, 10-20 s for ADBench's gradients of hundreds).
COMPILE_SECONDS_FIXED = 0.5
COMPILE_SECONDS_PER_EQUATION = 0.02

# Compile in a child process (backends/numba/child.py), which leaves the machine code in the disk cache for the
# background thread to load: Numba's typing and lowering hold the GIL, and would make the caller wait in turns.
# False: compile on the background thread itself (`adarray bench tiers` compares the two).
COMPILE_IN_CHILD = True

# (program name, repr of the error) of every background compilation that failed.
FAILURES: list[tuple[str, str]] = []

def compile_tiered(program, name: str = "program"):
    """The callable of `program` for the default tier: see the module docstring."""
    interpreted = compiler("numpy")(program, name)
    if not numba_available() or not program.eqns:
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
            numba_child.in_background(self.job.run)
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
            with numba_runtime.compiling_in_child(COMPILE_IN_CHILD):
                self.result = _compile(self.program, self.name, self.args, self.marker)
        finally:
            self.args = None
            self.finished.set()


def _marker_path(program) -> str:
    """The disk-cache file that says `program` was compiled before (named by a digest of its fingerprint,
    whose text is the same in every process; a program whose params print an address just never matches)."""
    digest = hashlib.sha1(repr(fingerprint(program)).encode()).hexdigest()[:24]
    return os.path.join(cache.directory(), f"compiled_{cache.version()}_{digest}")


# --- kernel calls and reversible programs on the NumPy backend ------------------------------------------------

def kernel_engine(kernel, name: str, size: int):
    """A compiled runner (args, shape) -> outputs for a kernel call of `size` elements, or None to interpret it."""
    mode = config.kernel_backend
    if mode == "numba" or (mode == "auto" and size >= NUMBA_MIN_SIZE):
        return numba_kernels.compiled(kernel, name, required=mode == "numba")
    return None


def reversible_engine(compiled_program):
    """The native runner of a reversible program table (backends/numpy/reversible.Compiled), or None to
    interpret it; compiled once, then kept on the program."""
    mode = config.reversible_backend
    if mode == "numpy":
        return None
    if compiled_program.native is None and (
            mode == "numba" or (mode == "auto" and compiled_program.seconds > NUMBA_AFTER_SECONDS)):
        compiled_program.native = numba_reversible.compiled(compiled_program, required=mode == "numba")
    return compiled_program.native


ACCELERATORS[kernel_p] = kernel_engine
ACCELERATORS[reversible_p] = reversible_engine
