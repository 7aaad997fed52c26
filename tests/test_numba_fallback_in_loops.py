"""An equation without a native Numba lowering inside a loop body: the loop stays one native loop and the
equation is a single call back into the NumPy backend's implementation per execution (callbacks.py), instead of
the whole loop running interpreted. At the top level the program is cut there, as before."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402
import adarray.scipy.special as special  # noqa: E402
from adarray.backends.numba import runtime  # noqa: E402
from adarray.backends.numba.table import LOWERINGS, lowerable, native  # noqa: E402
from adarray.core.primitive import REGISTRY  # noqa: E402


@pytest.fixture
def gammaln_without_lowering(monkeypatch):
    """gammaln as if it had no Numba lowering (every special function has one now)."""
    monkeypatch.delitem(LOWERINGS, REGISTRY["gammaln"])


def _loop(x):
    def step(carry, row):
        carry = anp.tanh(carry * row) + special.gammaln(carry * carry + 1.0)
        return carry, anp.sum(carry)

    final, ys = ad.fold(step, x[0], x)
    return anp.sum(final) + anp.sum(ys ** 2)


def test_a_fallback_in_a_fold_body_does_not_split_the_loop(gammaln_without_lowering):
    x = np.random.default_rng(0).normal(size=(20, 5))
    for function in (_loop, ad.grad(_loop)):  # the forward fold, and the reverse one over the tape
        program = ad.make_ir(function)(x)
        assert [kind for kind, _ in runtime.segments(program)] == ["numba"]
        fold = [eqn for eqn in program.eqns if eqn.prim.name == "fold"]
        assert fold and all(lowerable(eqn) for eqn in fold)
        text = runtime.CompiledSegment(program, "fallback").text
        assert "numba.objmode" in text and "_cb.call(" in text
        assert "pipeline_class" not in text  # the short pipeline has no with-lifting for objmode
        got = ad.jit(function, backend="numba")(x)
        want = ad.jit(function, backend="numpy")(x)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_callback_handles_scalars_and_several_outputs(gammaln_without_lowering):
    def f(x):
        def step(carry, _):
            value = special.gammaln(carry + 2.0)  # a 0-d operand and result
            return carry * 0.5 + value, value

        final, ys = ad.fold(step, x, anp.zeros(4))
        return final + anp.sum(ys)

    x = np.array(0.75)
    program = ad.make_ir(f)(x)
    assert [kind for kind, _ in runtime.segments(program)] == ["numba"]
    np.testing.assert_allclose(ad.jit(f, backend="numba")(x), ad.jit(f, backend="numpy")(x), rtol=1e-13)


def test_at_the_top_level_the_program_is_still_cut(gammaln_without_lowering):
    def f(x):
        return anp.sum(anp.sin(special.gammaln(anp.exp(x))))

    program = ad.make_ir(f)(np.linspace(0.1, 1.0, 5))
    eqn = next(e for e in program.eqns if e.prim.name == "gammaln")
    assert not lowerable(eqn) and lowerable(eqn, nested=True) and not native(eqn)
    assert [kind for kind, _ in runtime.segments(program)] == ["numba", "numpy", "numba"]


def test_a_primitive_that_has_no_lowering_runs_in_a_loop_by_callback():
    """adjugate_derivative (the adjugate's derivatives: exact at every rank, no native lowering) in a fold."""
    adjugate_derivative = REGISTRY["adjugate_derivative"]
    rng = np.random.default_rng(3)
    directions = rng.normal(size=(6, 3, 3))

    def f(a):
        def step(carry, direction):
            carry = carry + 0.1 * adjugate_derivative.bind(carry, direction)
            return carry, anp.sum(carry)

        final, ys = ad.fold(step, a, directions)
        return final, ys

    a = rng.normal(size=(3, 3))
    program = ad.make_ir(f)(a)
    assert [kind for kind, _ in runtime.segments(program)] == ["numba"]
    for got, want in zip(ad.jit(f, backend="numba")(a), ad.jit(f, backend="numpy")(a)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
