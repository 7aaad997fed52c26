"""The autograd acceptance suite: puts tests/ on the path (for autograd_compat), collects autograd's own test
files from the pinned sdist (autograd_source.py; skipped with the reason when it cannot be fetched), seeds
NumPy's global generator before each of them as autograd's own conftest does, and marks the tests listed in
expected_failures.py as strict xfails, each with its reason."""
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
TESTS = HERE.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from . import autograd_source  # noqa: E402
from .expected_failures import EXPECTED_FAILURES  # noqa: E402

UPSTREAM_SEED = 42  # autograd's tests draw their data from np.random seeded so before each test


class UpstreamTests(pytest.File):
    """autograd's test files, as children of autograd_source.py: `pytest tests/autograd_suite` runs them, and
    `pytest tests/autograd_suite/autograd_source.py::test_numpy.py::test_dot` picks one."""

    def collect(self):
        try:
            package = autograd_source.prepare()
        except autograd_source.Unavailable as error:
            pytest.skip(f"autograd {autograd_source.VERSION}'s tests not run: {error}. They come from its sdist on "
                        f"the package index; see tests/autograd_suite/README.md to run them offline")
        for name in autograd_source.TEST_FILES:
            yield pytest.Module.from_parent(self, path=package / name)


def pytest_collect_file(file_path, parent):
    if file_path == HERE / "autograd_source.py":
        return UpstreamTests.from_parent(parent, path=file_path)
    return None


@pytest.fixture(autouse=True)
def _upstream_seed(request):
    if request.node.module.__name__.startswith(autograd_source.RENAMED_PACKAGE + "."):
        np.random.seed(UPSTREAM_SEED)


@pytest.fixture(autouse=True)
def _complex_only_triage():
    """With AUTOGRAD_COMPAT_REAL_ONLY=1 (triage), a test whose every check had complex arguments fails
    instead of passing without checking anything."""
    from autograd_compat import test_util

    test_util.CHECKS.update(run=0, skipped=0)
    yield
    if test_util.REAL_ONLY and test_util.CHECKS["skipped"] and not test_util.CHECKS["run"]:
        pytest.fail("complex only: every check of this test has complex arguments")


def _key(item):
    """'test_numpy.py::test_dot' or 'test_wrappers.py::test_custom_where_dtypes[int-True-1-2]'."""
    return f"{pathlib.Path(str(item.fspath)).name}::{item.name}"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "autograd_suite/" not in item.nodeid:
            continue
        entry = EXPECTED_FAILURES.get(_key(item)) or EXPECTED_FAILURES.get(_key(item).split("[")[0])
        if entry is not None:
            area, reason = entry
            item.add_marker(pytest.mark.xfail(reason=f"[{area}] {reason}", strict=True))
