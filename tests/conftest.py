"""Suite-wide fixtures."""
from __future__ import annotations

import gc
import importlib.util
import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def interpreter_unless_a_backend_is_named():
    """The suite runs staged programs on the NumPy interpreter (or on $ADARRAY_BACKEND): the default tier would
    compile hot programs on a background thread, which makes the suite's time depend on its order. The tiers
    have their own tests (test_tiering.py)."""
    import adarray as ad

    previous = ad.set_backend(os.environ.get("ADARRAY_BACKEND") or "numpy")
    yield
    ad.set_backend(previous)


@pytest.fixture(autouse=True, scope="module")
def long_lived_objects_out_of_the_collectors_sight():
    """Numba's compiled programs keep about 10^6 objects alive (dispatchers, type caches), after which a full
    garbage collection takes 0.6 s; the benchmarks' quick runs collect before every memory measurement (`bench
    jacfwd --quick`: 18 s instead of 0.3 s). What is alive when a module starts is frozen (gc.freeze): later
    collections only look at what is newer."""
    gc.collect()
    gc.freeze()
    yield


@pytest.fixture
def builds(monkeypatch):
    """Counts the transformed programs built (un-jitted transformations trace at every call and build a
    program only when the traced one is new): `builds.count`."""
    from collections import OrderedDict

    from adarray.api import staging

    monkeypatch.setattr(staging, "_PROGRAMS", OrderedDict())  # programs of earlier tests are not reused
    original = staging._build

    def counted(*args, **kwargs):
        counted.count += 1
        return original(*args, **kwargs)

    counted.count = 0
    monkeypatch.setattr(staging, "_build", counted)
    return counted


@pytest.fixture(params=["numpy"] + (["numba"] if importlib.util.find_spec("numba") else []))
def reversible_backend(request):
    """Each installed reversible backend in turn (a test asks for it by this name)."""
    from adarray import reversible as rv

    previous = rv.set_reversible_backend(request.param)
    yield request.param
    rv.set_reversible_backend(previous)
