"""Settings of the Numba backend: compiler flags and the cost model's thresholds.

The thresholds were measured on the development machine (an AVX-512 Xeon, 2 cores; see
docs/choosing_a_backend.md): below them the work of a group is too small to gain from threads or
from a BLAS call. The user's settings are read from `adarray.core.config` when a program is generated:
`config.numba_parallel` (False: `parallel=True` is never used) and `config.numba_keep_memory`.
"""
from __future__ import annotations

import contextlib
import threading

from ...core.config import config

# LLVM fast-math flags: reassociation only (reassoc: lets sums and products vectorise). Not contract
# (fused multiply-add) or arcp (division by a reciprocal): each rounds differently from NumPy, and a
# program must compute the same bits on every tier where nothing is reassociated (1,105 of 4,096
# elements of a*b + c/d - a*c differed with them). Not nnan/ninf (NaN and inf are values), not nsz
# (-0.0 is a value), not afn.
FASTMATH = frozenset({"reassoc"})
# The math library (*lib.py, lapack.py) names its flags (fastmath=False, mathlib its own): a function whose
# flags are not set takes its first caller's (numba issue 7168), and Numba caches that variant for every
# later caller: beta(1e-300, 1e-300) became inf once a generated program with `reassoc` had compiled it.

# A loop nest at the top level runs its outer loop with numba.prange (threads) from this much
# work on: elements x (1 + work per element, an add counting 1).
PARALLEL_MIN_WORK = 1 << 18

# A contraction runs on BLAS (np.dot per batch) from this many multiply-adds per batch element and
# this long a contracted axis on; smaller ones are loops (fused with their operands' producers).
BLAS_MIN_WORK = 1 << 13
BLAS_MIN_CONTRACTION = 8

# Consecutive loop nests sharing leading axes run as one loop over them (planning.py: chains) when the values
# passing between them would otherwise be whole arrays of this many bytes or more: they are then kept per
# iteration, and neither leave the cache nor take memory (BA's Jacobian blocks: 5 MB, 3.1 ms instead of 8).
# Smaller ones stay in the cache anyway, and separate loops vectorise better (GMM d=2, K=5: 1.26x slower chained).
CHAIN_MIN_BYTES = 1 << 20

# A run of compiled equations longer than this is cut into several generated functions: LLVM's and
# Numba's time grows faster than the function's length (ADBench's hand Jacobian, 549 equations: 51 s
# as one function, 19 s in runs of 200, run time 0.82 -> 0.87 ms; in runs of 50, 39 s and 2 ms). Every
# value crossing a cut is stored whole: BA's Jacobian blocks (337 equations) peaked at 32 MB in runs of
# 200 and at 13 MB as one function (JAX: 12 MB), compiled in 8 s instead of 6 s (hand: 19 s instead of 25).
MAX_SEGMENT_EQUATIONS = 350

# A program cut into segments compiles them at once, in child processes, from this many compiled equations on
# (runtime._Mixed.compile_ahead): a child's start costs about a second of processor time, a program this long
# compiles for 10 s or more.
COMPILE_AHEAD_MIN_EQUATIONS = 500

# Opt-in (`config.numba_keep_memory`, $ADARRAY_NUMBA_KEEP_MEMORY=1): keep freed memory in the process (glibc:
# mallopt) instead of giving every large array back to the OS on free and faulting its pages in again on the next
# call. Taken at the first program compiled while it is on, and kept for the rest of the process.
# It changes the allocator of the whole host process, so it is off by default: a program's scratch
# arrays come from its workspace instead (workspace.py), allocated once per program and thread, which
# saves the same page faults inside our own programs (scan add's gradient on 10^6 elements spent more
# time in page faults than in arithmetic: 5.7x its primal with them, 1.8x without). With the option,
# memory above KEEP_FREED_BYTES at the top of the heap is still returned; malloc_trim returns all.
KEEP_FREED_BYTES = 512 << 20
MMAP_THRESHOLD_BYTES = 32 << 20  # glibc's largest: bigger arrays are still mapped and unmapped

# Scratch arrays from this size on come from the workspace (workspace.py); smaller ones are allocated in the
# function, from the heap's free lists (glibc maps fresh pages only from 128 KiB on), and stay local arrays
# that LLVM knows alias nothing (GMM d=2 K=5's jitted gradient: 125 us with its nine small arrays local,
# 170 us with them as parameters).
WORKSPACE_MIN_BYTES = 128 << 10


def keep_memory() -> bool:
    return config.numba_keep_memory


# A first call that compiles for longer than this many seconds says so on stderr.
REPORT_COMPILE_SECONDS = 1.0


# Programs compiled while this is on count the processor cycles of every top-level group (a loop
# nest, a fold, a BLAS call) into runtime.PROFILED: `adarray bench --profile ... --backend numba`.
PROFILE = False


# A function with threads (`parallel=True`) compiles in about twice the time of the same loops without (Numba's
# parfor passes: GMM d10 K5's gradient 9.1 s against 3.5 s). When its machine code is not in the disk cache, its
# first call compiles and runs a copy without threads, and the function with threads is compiled in the
# background (in a child process) and takes over once loaded (runtime.CompiledSegment). False: the first call
# compiles the function with threads.
THREADS_AFTER_FIRST_CALL = True

class ThreadFlag:
    """A switch of the calling thread, off unless a `with flag.set(value):` block set it (then restored).

    >>> with SERIAL.set(True):   # doctest: +SKIP
    ...     bool(SERIAL)          # True on this thread only
    """

    def __init__(self):
        self._local = threading.local()

    def __bool__(self) -> bool:
        return getattr(self._local, "value", False)

    @contextlib.contextmanager
    def set(self, value: bool = True):
        outer = bool(self)
        self._local.value = value
        try:
            yield
        finally:
            self._local.value = outer


# On: this thread generates no loop on threads (the stand-in of THREADS_AFTER_FIRST_CALL, runtime.CompiledSegment)
SERIAL = ThreadFlag()


def parallel() -> bool:
    """Threads for large groups? Not with `config.numba_parallel` False ($ADARRAY_NUMBA_PARALLEL=0), nor with
    one Numba thread (NUMBA_NUM_THREADS=1, e.g. `adarray bench --threads 1`): there `parallel=True` would only
    add compile time (Numba's parfor passes); nor while `SERIAL` is on."""
    if not config.numba_parallel or SERIAL:
        return False
    import numba

    return numba.config.NUMBA_NUM_THREADS > 1
