"""passes/inline_calls.py: call-like equations replaced by their `fun`, at every depth."""
import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.core.ir import Program
from adarray.passes.inline_calls import CALLS, inline_calls
from adarray.tracing import eval_program


@ad.custom_jvp
def softclip(x):
    return anp.tanh(x)


softclip.defjvp(lambda primals, tangents: (softclip(primals[0]), tangents[0] * (1 - anp.tanh(primals[0]) ** 2)))


def _programs(program):
    """`program` and every program nested in its equations' params."""
    yield program
    for eqn in program.eqns:
        for value in eqn.params.values():
            nested = [value] if isinstance(value, Program) else list(value) if isinstance(value, (tuple, list)) else []
            for inner in nested:
                if isinstance(inner, Program):
                    yield from _programs(inner)


def _calls(program):
    return [eqn.prim.name for p in _programs(program) for eqn in p.eqns if eqn.prim in CALLS]


def test_calls_in_loop_bodies_and_branches_are_inlined_and_values_kept():
    def f(x):
        y = ad.fold(lambda c, _: (softclip(c) * 1.5, None), x, length=3)[0]
        z = ad.cond(anp.sum(x) > 0, lambda v: ad.checkpoint(anp.sin)(v), lambda v: softclip(v), y)
        return softclip(z) + 1.0

    x = np.array([0.3, -1.2, 2.0])
    program = ad.make_ir(f)(x)
    assert sorted(set(_calls(program))) == ["checkpoint_call", "custom_jvp_call"]
    inlined = inline_calls(program)
    assert _calls(inlined) == []
    np.testing.assert_array_equal(eval_program(inlined, [x])[0], eval_program(program, [x])[0])
    np.testing.assert_array_equal(eval_program(inlined, [x])[0], f(x))


def test_a_program_without_calls_is_returned_as_it_is():
    program = ad.make_ir(lambda x: ad.fold(lambda c, _: (anp.sin(c), None), x, length=2)[0])(np.ones(2))
    assert inline_calls(program) is program


def test_the_numba_backend_compiles_a_custom_rule_inside_a_loop():
    pytest.importorskip("numba")
    f = lambda x: anp.sum(ad.fold(lambda c, _: (softclip(c) * 1.5, None), x, length=3)[0])  # noqa: E731
    x = np.array([0.3, -1.2, 2.0])
    compiled = ad.jit(ad.grad(f), backend="numba")
    np.testing.assert_allclose(compiled(x), ad.jit(ad.grad(f), backend="numpy")(x), rtol=1e-14)
