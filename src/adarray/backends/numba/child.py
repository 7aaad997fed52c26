"""Compiling a generated function in a child process, which fills the disk cache that the caller then loads.

Numba's typing and lowering are Python and hold the GIL: compiled on a background thread (the default tier,
api/tiering.py), a program makes the caller's calls wait in turns (up to 0.2 s each on GMM's gradient). Compiled in
a child instead, it costs the caller only the load of its machine code from the disk cache (tens of milliseconds).

    >>> compile_in_child(segment.path, segment.function.__module__, signature)   # doctest: +SKIP
    True

One child serves the process: started at the first request, it ends with `stop()` (the default tier stops it once
no compilation waits) or with the process (its stdin closes).
A request that fails (the child could not start or died, the function did not compile) answers False, and the
caller compiles in process as before; Numba's cache is what passes the result, so nothing else can go wrong.
"""
from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading

from . import cache

_LENGTH = struct.Struct("<Q")
_lock = threading.Lock()
_child: list = []  # [(Popen, pid of the process that started it)]
# The folder holding the adarray package, for the child's imports (the caller may have found it on sys.path)
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def compile_in_child(path: str, module_name: str, signature: tuple) -> bool:
    """Compile the function `program` of the generated module at `path` for `signature` (Numba types) in the
    child, which leaves its machine code in Numba's disk cache. True when it did."""
    with _lock:
        child = _running_child()
        if child is None:
            return False
        try:
            _send(child.stdin, (path, module_name, signature))
            reply = _receive(child.stdout)
        except (OSError, EOFError, pickle.PickleError, struct.error):
            _end()
            return False
    return reply is True


def stop() -> None:
    """End the child (the next request starts another): an idle child would keep the memory of what it compiled."""
    with _lock:
        _end()


def _running_child():
    if _child and _child[0][1] == os.getpid() and _child[0][0].poll() is None:
        return _child[0][0]
    _child.clear()
    env = dict(os.environ, ADARRAY_CACHE_DIR=cache.directory())
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, env.get("PYTHONPATH")]))
    try:
        process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return None
    _child.append((process, os.getpid()))
    return process


def _end() -> None:
    if _child:
        process, pid = _child.pop()
        if pid == os.getpid():
            process.kill()
            process.wait()


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
    """The child: compile each requested function, answer True or the error's text, until stdin closes."""
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # whatever prints must not mix with the replies
    while True:
        try:
            path, module_name, signature = _receive(requests)
        except EOFError:
            return
        try:
            cache.import_file(path, module_name).program.compile(signature)
            reply = True
        except Exception as error:  # noqa: BLE001 - the caller compiles in process and reports it
            reply = f"{type(error).__name__}: {error}"
        _send(replies, reply)


if __name__ == "__main__":
    main()
