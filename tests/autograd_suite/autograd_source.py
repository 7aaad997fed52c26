"""autograd's tests and examples, fetched at test time from the pinned source distribution and renamed.

The repository holds none of autograd's code. `prepare()` downloads autograd 1.9.1's sdist with pip (once:
the file is kept in a cache folder outside the tree and checked against its sha256 at every use), takes the
test files and examples that the suite runs, rewrites their imports from `autograd` to the compatibility
layer `autograd_compat` (see `rename`), and writes them as the package `autograd_upstream` in that cache
folder, which it puts on sys.path:

    folder = prepare()                  # raises Unavailable when the index cannot be reached
    import autograd_upstream.test_numpy

The cache folder is $ADARRAY_DOWNLOAD_DIR, else $XDG_CACHE_HOME/adarray, else ~/.cache/adarray. Without
network access, copying autograd-1.9.1.tar.gz into <cache folder>/autograd-1.9.1/ is enough.
"""
from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "autograd"
VERSION = "1.9.1"
SDIST = f"{PACKAGE}-{VERSION}.tar.gz"
SHA256 = "7818c5c69ddf9efb7da74097bd741a4c7920133f41966f68537223a15ef798bc"
RENAMED_PACKAGE = "autograd_upstream"

# Where each file of the package autograd_upstream comes from, inside the sdist's top folder.
TEST_FILES = ("test_numpy.py", "test_systematic.py", "test_linalg.py", "test_scalar_ops.py", "test_wrappers.py")
SOURCES = {name: f"tests/{name}" for name in (*TEST_FILES, "numpy_utils.py")}
EXAMPLES = ("gaussian_process.py", "black_box_svi.py", "ica.py", "ode_net.py", "fixed_points.py", "rnn.py", "lstm.py")
SOURCES.update({f"examples/{name}": f"examples/{name}" for name in EXAMPLES})
SOURCES["examples/fluidsim.py"] = "examples/fluidsim/fluidsim.py"

PIP_TIMEOUT_SECONDS = 300
_failures: list = []  # the Unavailable of a first attempt in this process: later callers get it without retrying


class Unavailable(RuntimeError):
    """The sdist is neither cached nor downloadable (no network, no pip): the suite is skipped."""


def cache_folder() -> Path:
    """<cache>/autograd-1.9.1, where the sdist and the renamed files are kept."""
    root = os.environ.get("ADARRAY_DOWNLOAD_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "adarray")
    return Path(root) / f"{PACKAGE}-{VERSION}"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def download(folder: Path) -> Path:
    """The verified sdist in `folder`, downloaded with `pip download` unless a verified copy is there."""
    target = folder / SDIST
    if target.is_file():
        if sha256_of(target) == SHA256:
            return target
        target.unlink()  # a partial or foreign file: fetch it again
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        command = [sys.executable, "-m", "pip", "download", f"{PACKAGE}=={VERSION}", "--no-binary", ":all:",
                   "--no-deps", "--quiet", "--retries", "1", "--timeout", "20", "--dest", scratch]
        try:
            finished = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_SECONDS)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise Unavailable(f"`pip download {PACKAGE}=={VERSION}` did not finish: {error}") from None
        fetched = Path(scratch) / SDIST
        if finished.returncode != 0 or not fetched.is_file():
            last = (finished.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable(f"`pip download {PACKAGE}=={VERSION} --no-binary :all:` failed: {last}")
        digest = sha256_of(fetched)
        if digest != SHA256:  # not a network problem: the index served another file
            raise RuntimeError(f"{SDIST} from the package index has sha256 {digest}, expected {SHA256}")
        os.replace(fetched, target)
    return target


def _move_plotting_imports(text: str, name: str) -> str:
    """matplotlib is imported at the top of some examples but used only by their `__main__` block (and the
    functions it calls): the imports move to the first lines of that block, so the examples import without it."""
    lines = text.split("\n")
    plotting = [line for line in lines if re.match(r"(import|from) matplotlib\b", line)]
    if not plotting:
        return text
    lines = [line for line in lines if line not in plotting]
    main = [i for i, line in enumerate(lines) if line.startswith("if __name__ == ")]
    if len(main) != 1:
        raise RuntimeError(f"{name}: matplotlib is imported but there is no single __main__ block to move it to")
    lines[main[0] + 1:main[0] + 1] = ["    " + line for line in plotting]
    return "\n".join(lines)


def rename(text: str, name: str) -> str:
    """One upstream file for autograd_upstream: `autograd` imports become `autograd_compat` ones; the imports
    of sibling files (numpy_utils, rnn) become relative, since autograd_upstream is a package; matplotlib
    imports move into the `__main__` block. Nothing else changes."""
    text = re.sub(r"^(\s*)(import|from) autograd\b", r"\1\2 autograd_compat", text, flags=re.M)
    text = re.sub(r"^(\s*)from (numpy_utils|rnn) import", r"\1from .\2 import", text, flags=re.M)
    text = _move_plotting_imports(text, name)
    left = re.findall(r"^\s*(?:import|from) autograd(?:\.\S+)?\s.*$", text, flags=re.M)
    if left:
        raise RuntimeError(f"{name}: imports of autograd left after renaming: {left}")
    return text


def _renaming_version() -> str:
    """A hash of this file: the renamed files are written again whenever the renaming changes."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def extract(sdist: Path, destination: Path) -> None:
    """Write autograd_upstream (the renamed files and empty __init__.py files) under `destination`."""
    package = destination / RENAMED_PACKAGE
    (package / "examples").mkdir(parents=True)
    header = f'"""Renamed from {SDIST} by tests/autograd_suite/autograd_source.py."""\n'
    (package / "__init__.py").write_text(header)
    (package / "examples" / "__init__.py").write_text(header)
    top = f"{PACKAGE}-{VERSION}"
    with tarfile.open(sdist) as archive:
        for name, source in SOURCES.items():
            member = archive.extractfile(f"{top}/{source}")
            if member is None:
                raise RuntimeError(f"{SDIST} has no file {source}")
            text = io.TextIOWrapper(member, encoding="utf-8").read()
            (package / name).write_text(rename(text, source), encoding="utf-8")


def prepare() -> Path:
    """The folder holding the package autograd_upstream, on sys.path; downloads and renames once."""
    if _failures:
        raise _failures[0]
    folder = cache_folder()
    try:
        sdist = download(folder)
    except Unavailable as error:
        _failures.append(error)
        raise
    renamed = folder / f"renamed-{_renaming_version()}"
    if not (renamed / RENAMED_PACKAGE / "__init__.py").is_file():
        scratch = Path(tempfile.mkdtemp(dir=folder, prefix="renaming-"))
        try:
            extract(sdist, scratch)
            try:
                os.rename(scratch, renamed)
            except OSError:  # another run renamed them at the same time
                if not (renamed / RENAMED_PACKAGE / "__init__.py").is_file():
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if str(renamed) not in sys.path:
        sys.path.insert(0, str(renamed))
    return renamed / RENAMED_PACKAGE
