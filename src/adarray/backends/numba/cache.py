"""The on-disk cache of generated modules: each is written under the hash of its text and imported
from there, and Numba's own cache (`cache=True`) keeps its machine code beside it, per signature.

The directory is `config.cache_dir` ($ADARRAY_CACHE_DIR, else ~/.cache/adarray/kernels), read at every write
(a temporary folder if it is not writable). Every generated text names `version()`, a hash of this package's
sources: Numba checks only the generated file's date, so a changed generator or math library must change the
text, or stale machine code would be loaded.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile

from ...core.config import config

_version = None
_checked = False  # forget_stale_library_code has run in this process
_FOLDER = os.path.dirname(os.path.abspath(__file__))


def directory() -> str:
    path = config.cache_dir
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    path = os.path.join(tempfile.gettempdir(), "adarray-kernels")
    os.makedirs(path, exist_ok=True)
    return path


def version() -> str:
    """A hash of the sources of this package (the generator, its lowerings, the math library) and of the
    shared modules beside it that the math library reads (backends/hurwitz_zeta.py)."""
    global _version
    if _version is None:
        digest = hashlib.sha1()
        for folder in (_FOLDER, os.path.dirname(_FOLDER)):
            for name in sorted(os.listdir(folder)):
                if name.endswith(".py"):
                    with open(os.path.join(folder, name), "rb") as handle:
                        digest.update(handle.read())
        _version = digest.hexdigest()[:12]
    return _version


def forget_stale_library_code() -> None:
    """Delete Numba's cached machine code of this package's math library when any of these sources changed.
    Numba checks only the date of a function's own file, but machine code has the functions of other files
    (and their constants) inlined: after an update, an unchanged gammalib.py kept the code of an older
    helper (beta(1e-300, 1e-300) was inf). Called once, before anything compiles."""
    folder = os.path.join(_FOLDER, "__pycache__")
    stamp = os.path.join(folder, "adarray-version")
    try:
        with open(stamp) as handle:
            if handle.read() == version():
                return
    except OSError:
        pass
    try:
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if name.endswith((".nbi", ".nbc")):
                os.remove(os.path.join(folder, name))
        with open(stamp, "w") as handle:
            handle.write(version())
    except OSError:  # a read-only installation: Numba keeps its cache elsewhere
        pass


def load(text: str, prefix: str):
    """Import the module whose source is `text` (written to the cache directory first if new)."""
    digest = hashlib.sha1(text.encode()).hexdigest()[:20]
    module_name = f"{prefix}_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    global _checked
    if not _checked:
        forget_stale_library_code()
        _checked = True
    path = os.path.join(directory(), f"{module_name}.py")
    if not os.path.exists(path):
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w") as handle:
            handle.write(text)
        os.replace(temporary, path)
    return import_file(path, module_name)


def import_file(path: str, module_name: str):
    """Import the generated module at `path` as `module_name` (a child process that compiles it for the caller
    imports it by the same name, so that both find the same machine code in Numba's cache)."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[module_name] = module
    return module
