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
    """A hash of the sources of this package (the generator, its lowerings, the math library)."""
    global _version
    if _version is None:
        folder = os.path.dirname(os.path.abspath(__file__))
        digest = hashlib.sha1()
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as handle:
                    digest.update(handle.read())
        _version = digest.hexdigest()[:12]
    return _version


def load(text: str, prefix: str):
    """Import the module whose source is `text` (written to the cache directory first if new)."""
    digest = hashlib.sha1(text.encode()).hexdigest()[:20]
    module_name = f"{prefix}_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = os.path.join(directory(), f"{module_name}.py")
    if not os.path.exists(path):
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w") as handle:
            handle.write(text)
        os.replace(temporary, path)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[module_name] = module
    return module
