"""The NumPy interpreter's two tiers: the loop over steps (first calls) and the generated Python function (a
program called HOT_CALLS times). Both give the same values, the same errors, drop values after their last use, and
keep NumPy's floating-point warnings off inside a program (nested programs included) and on outside it."""
import tracemalloc
import warnings

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.backends.numpy import compile_program, interpreter


def mixed(x, i, w):
    """Literals, params, sorting, a matrix product, a gather, a nested loop with several results, an output that
    is an input (twice)."""
    y = anp.sin(x) * 2.0 + 1.0
    keys, values = anp.sort(x), anp.argsort(x)
    z = anp.sum(y.reshape(2, 3) @ w, axis=0)
    gathered = y[i]
    carried = ad.fold(lambda c, t: (c * 0.5 + anp.tanh(t), c), z[0], x)[0]
    return z, gathered, keys, values, carried, x, x


ARGS = (np.linspace(-1.0, 1.0, 6)[::-1].copy(), np.array([0, 5, 2]), np.arange(12.0).reshape(3, 4) / 10)


def both_tiers(program):
    run = compile_program(program)
    cold = run.plan.interpret(ARGS)
    hot = run.plan.generate()(ARGS)
    return run, cold, hot


@pytest.mark.parametrize("transform", [lambda f: f, lambda f: ad.grad(lambda x, i, w: anp.sum(mixed(x, i, w)[0]) +
                                                                        mixed(x, i, w)[4], argnums=(0, 2))],
                         ids=["primal", "gradient"])
def test_the_generated_function_gives_the_loops_values_bit_for_bit(transform):
    program = ad.make_ir(transform(mixed))(*ARGS)
    run, cold, hot = both_tiers(program)
    assert len(cold) == len(hot) == len(program.outputs)
    for a, b in zip(cold, hot):
        np.testing.assert_array_equal(a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
    assert "def program(args):" in run.plan.source


def test_a_program_turns_hot_after_hot_calls(monkeypatch):
    program = ad.make_ir(mixed)(*ARGS)
    run = compile_program(program)
    first = run(*ARGS)
    for _ in range(interpreter.HOT_CALLS - 2):
        run(*ARGS)
    assert not hasattr(run.plan, "source")
    for a, b in zip(first, run(*ARGS)):  # the HOT_CALLS-th call runs the generated function
        np.testing.assert_array_equal(a, b)
    assert hasattr(run.plan, "source")


def test_programs_without_inputs_or_equations():
    for fn, args in [(lambda: anp.ones(3) * 2.0, ()), (lambda x: x, (np.ones(2),)), (lambda x, y: (y, x, y),
                                                                                    (np.ones(2), np.zeros(3)))]:
        program = ad.make_ir(fn)(*args)
        run = compile_program(program)
        for a, b in zip(run.plan.interpret(args), run.plan.generate()(args)):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("tier", ["loop", "generated"])
def test_an_index_out_of_range_names_the_equation(tier):
    program = ad.make_ir(lambda x, i: anp.sin(x)[i] * 2.0)(np.ones(3), np.array([1]))
    run = compile_program(program)
    execute = run.plan.interpret if tier == "loop" else run.plan.generate()
    with pytest.raises(ad.ExecutionError, match=r"index out of range in `.*gather"):
        execute((np.ones(3), np.array([7])))


@pytest.mark.parametrize("hot", [False, True])
def test_values_are_dropped_after_their_last_use(hot, monkeypatch):
    monkeypatch.setattr(interpreter, "HOT_CALLS", 1 if hot else 10**9)
    n = 100_000

    def chain(x):
        for _ in range(30):
            x = anp.sin(x) * 1.1 + 0.1
        return x

    run = compile_program(ad.make_ir(chain)(np.ones(n)))
    x = np.linspace(-1.0, 1.0, n)
    run(x)
    assert hasattr(run.plan, "source") == hot
    tracemalloc.start()
    try:
        run(x)
        peak = tracemalloc.get_traced_memory()[1] / (8 * n)
    finally:
        tracemalloc.stop()
    assert peak < 4  # 90 intermediates if none were dropped


def test_floating_point_warnings_are_off_inside_programs_and_on_outside(monkeypatch):
    monkeypatch.setattr(interpreter, "HOT_CALLS", 3)

    def body(carry, t):
        return carry * 1e300 + anp.log(t - t), None  # overflow, then log(0) and inf - inf

    fn = ad.jit(lambda c, xs: ad.fold(body, c, xs)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(5):  # the outer program and the loop body, in both tiers
            assert np.isnan(fn(np.array(1e300), np.ones(4)))
    with pytest.warns(RuntimeWarning):  # outside a program NumPy warns as usual
        np.log(np.zeros(1))


def test_the_warnings_setting_is_restored_when_a_program_raises():
    run = compile_program(ad.make_ir(lambda x, i: x[i])(np.ones(3), np.array([1])))
    with pytest.raises(ad.ExecutionError):
        run(np.ones(3), np.array([9]))
    assert not getattr(interpreter._state, "quiet", False)
    with pytest.warns(RuntimeWarning):
        np.log(np.zeros(1))
