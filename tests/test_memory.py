"""Peak memory of execution: the interpreter drops each value after its last use.

Measured with tracemalloc in units of one array of the working size, so the assertions are ratios."""
import tracemalloc

import numpy as np

import adarray as ad
import adarray.numpy as anp

N = 100_000  # elements; one array is 800 kB


def peak_arrays(fn, *args) -> float:
    fn(*args)  # trace, compile and warm up outside the measurement
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1] / (N * 8)
    finally:
        tracemalloc.stop()


def chain(x):
    for _ in range(30):
        x = anp.sin(x) * 1.1 + 0.1
    return x


def test_a_long_chain_runs_in_a_few_arrays_of_memory():
    x = np.linspace(-1.0, 1.0, N)
    assert peak_arrays(ad.jit(chain), x) < 4  # 90 intermediates if none were dropped
