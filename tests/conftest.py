"""Suite-wide fixtures."""
from __future__ import annotations

import gc

import pytest


@pytest.fixture(autouse=True, scope="module")
def long_lived_objects_out_of_the_collectors_sight():
    """Numba's compiled programs keep about 10^6 objects alive (dispatchers, type caches), after which a full
    garbage collection takes 0.6 s; the benchmarks' quick runs collect before every memory measurement (`bench
    jacfwd --quick`: 18 s instead of 0.3 s). What is alive when a module starts is frozen (gc.freeze): later
    collections only look at what is newer."""
    gc.collect()
    gc.freeze()
    yield
