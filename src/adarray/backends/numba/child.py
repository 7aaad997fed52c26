"""Compiling a generated function in a child process, which fills the disk cache that the caller then loads.

Numba's typing and lowering are Python and hold the GIL: compiled on a background thread (the default tier,
api/tiering.py), a program makes the caller's calls wait in turns (up to 0.2 s each on GMM's gradient). Compiled in
a child instead, it costs the caller only the load of its machine code from the disk cache (tens of milliseconds).

    >>> compile_in_child(segment.path, segment.function.__module__, signature)   # doctest: +SKIP
    True

A child serves one request at a time and then waits for the next; several requests at once (the segments of a
long program, `compile_in_children`) start several. They end with `stop()` (the default tier stops them once no
compilation waits, and so does a program that compiled its segments in them) or with the process (their stdin
closes).
A request that fails (the child could not start or died, the function did not compile, Numba would not cache it)
answers False, and the caller compiles in process as before; Numba's cache is what passes the result, so nothing
else can go wrong.
"""
from __future__ import annotations

import concurrent.futures
import ntpath
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
import warnings

from . import cache

_LENGTH = struct.Struct("<Q")
_lock = threading.Lock()
_idle: list = []  # [(Popen, pid of the process that started it)]: children waiting for a request
_tasks: queue.Queue = queue.Queue()  # what the background thread runs (in_background)
_worker: list[threading.Thread] = []
# Numba's refusals to cache what a child compiled (at -O0 the math library's tables are "dynamic globals"): after the
# first, this process compiles in process, since the child's work would be done twice
_refused: list[str] = []
# The folder holding the adarray package, for the child's imports (the caller may have found it on sys.path)
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def compile_in_child(path: str, module_name: str, signature: tuple) -> bool:
    """Compile the function `program` of the generated module at `path` for `signature` (Numba types) in a
    child, which leaves its machine code in Numba's disk cache. True when it did."""
    process = None if _refused else _take()
    if process is None:
        return False
    try:
        _send(process.stdin, (path, module_name, signature))
        reply = _receive(process.stdout)
    except (OSError, EOFError, pickle.PickleError, struct.error):
        process.kill()
        process.wait()
        return False
    with _lock:
        _idle.append((process, os.getpid()))
    if isinstance(reply, tuple) and reply[0] == "uncached":
        _refused.append(reply[1])
    return reply is True


def compile_in_children(requests) -> list[bool]:
    """`compile_in_child` of each (path, module_name, signature) at once, in as many children as the machine has
    cores."""
    workers = min(len(requests), os.cpu_count() or 1)
    if workers < 2:
        return [compile_in_child(*request) for request in requests]
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda request: compile_in_child(*request), requests))


def in_background(task) -> None:
    """Run `task()` on the one daemon thread that compiles in the background (a process that ends does not wait
    for it), after the tasks submitted before; once none waits, the idle children are stopped."""
    with _lock:
        if not _worker:
            thread = threading.Thread(target=_work, name="adarray-compile", daemon=True)
            thread.start()
            _worker.append(thread)
    _tasks.put(task)


def drain() -> None:
    """Wait until the background thread has run every task submitted so far, and stopped its children (tests)."""
    _tasks.join()


def _work() -> None:
    while True:
        task = _tasks.get()
        try:
            task()
        finally:
            if _tasks.empty():
                stop()  # idle, it would keep the memory of what it compiled; the next request starts another
            _tasks.task_done()


def stop() -> None:
    """End the idle children (a later request starts another): they would keep the memory of what they compiled."""
    with _lock:
        children, _idle[:] = list(_idle), []
    for process, pid in children:
        if pid == os.getpid():
            process.kill()
            process.wait()


def _take():
    """An idle child of this process, or a new one (None if it cannot start)."""
    with _lock:
        while _idle:
            process, pid = _idle.pop()
            if pid == os.getpid() and process.poll() is None:
                return process
    if not _is_python(sys.executable):
        return None
    env = dict(os.environ, ADARRAY_CACHE_DIR=cache.directory())
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, env.get("PYTHONPATH")]))
    try:
        return subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return None


def _is_python(executable: str) -> bool:
    """Is `executable` a Python interpreter that `-m` runs a module with? Not in a frozen application or a host
    program embedding Python (sys.executable is then the application, which would start again)."""
    return (not getattr(sys, "frozen", False) and bool(executable)
            and ntpath.basename(executable).lower().startswith(("python", "pypy")))  # ntpath: / and \\ both split


def _send(stream, value) -> None:
    data = pickle.dumps(value)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        raise EOFError
    (length,) = _LENGTH.unpack(header)
    return pickle.loads(stream.read(length))


def main() -> None:
    """The child: compile each requested function and answer True, ("uncached", Numba's warning) or ("error",
    its text), until stdin closes."""
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # whatever prints must not mix with the replies
    while True:
        try:
            path, module_name, signature = _receive(requests)
        except EOFError:
            return
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                cache.import_file(path, module_name).program.compile(signature)
            refusals = [str(w.message) for w in caught if "Cannot cache" in str(w.message)]
            reply = ("uncached", refusals[0]) if refusals else True
        except Exception as error:  # noqa: BLE001 - the caller compiles in process and reports it
            reply = ("error", f"{type(error).__name__}: {error}")
        _send(replies, reply)


if __name__ == "__main__":
    main()
