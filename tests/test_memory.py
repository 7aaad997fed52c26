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


def block(v):
    for _ in range(10):
        v = anp.sin(v) * 1.01 + anp.tanh(v)
    return v


def test_checkpoint_keeps_block_inputs_and_recomputes_one_block_at_a_time():
    x = np.linspace(-1.0, 1.0, N)

    def plain(v):
        for _ in range(5):
            v = block(v)
        return anp.sum(v)

    def rematerialised(v):
        for _ in range(5):
            v = ad.checkpoint(block)(v)
        return anp.sum(v)

    np.testing.assert_allclose(ad.grad(rematerialised)(x), ad.grad(plain)(x), rtol=1e-12)
    kept, remat = peak_arrays(ad.grad(plain), x), peak_arrays(ad.grad(rematerialised), x)
    assert kept > 90  # two residuals for each of 50 layers
    assert remat < 35  # five block inputs and one block's residuals at a time


def test_fold_checkpoint_policies_trade_memory_for_recomputation():
    steps, state = 400, np.linspace(-1.0, 1.0, N // 40)  # 2,500-element state: one state is 20 kB
    w = 0.9

    def loss(x, policy):
        final, _ = ad.fold(lambda h, _: (anp.sin(h) * w, None), x, None, length=steps, checkpoint=policy)
        return anp.sum(final)

    grads, peaks = {}, {}
    for policy in ("all", 20, "binomial"):
        fn = ad.grad(lambda x, policy=policy: loss(x, policy))
        grads[policy] = fn(state)
        fn(state)
        tracemalloc.start()
        fn(state)
        peaks[policy] = tracemalloc.get_traced_memory()[1] / state.nbytes
        tracemalloc.stop()
    for policy in (20, "binomial"):
        np.testing.assert_allclose(grads[policy], grads["all"], rtol=1e-12)
    assert peaks["all"] > steps  # every state kept
    assert peaks[20] < steps / 4 and peaks["binomial"] < steps / 8
