"""jacfwd with symbolic identity seeds (passes/one_hot.py) against the materialised seeds it replaces.

Values: on every registry case (every primitive's jvp program) and on whole programs, the optimised
Jacobian equals the one from vmap over the materialised identity. Complexity, structurally: for the
issue's targets (sum(x * x), a dot product, the GMM objective, an LSTM step) no value of the optimised
program has n x n elements, and its largest value is within a small factor of the primal program's.
"""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np
import pytest

import adarray as ad
import adarray.jacobians as jacobians
import adarray.numpy as anp
from adarray.core.types import is_float
from adarray.testing.registry import primitive_program, registry_cases
from adarray.tracing import eval_program

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: benchmarks/ is not installed

from benchmarks.adbench.tool_adarray import gmm_objective  # noqa: E402
from benchmarks.jacfwd_cost import problems  # noqa: E402

CASES = [pytest.param(name, args, params, id=case_id) for case_id, name, args, params in registry_cases()]


def _both(program, args):
    wrt = [is_float(v.aval.dtype) for v in program.inputs]
    results = []
    for symbolic in (True, False):
        jac = jacobians._jacobian_program(program, wrt, "fwd", symbolic)
        results.append(eval_program(jac, list(args)))
    return results


@pytest.mark.parametrize("name, args, params", CASES)
def test_registry_case_matches_the_materialised_seeds(name, args, params):
    program = primitive_program(name, args, params)
    if not any(is_float(v.aval.dtype) for v in program.inputs):
        pytest.skip("no differentiable input")
    with np.errstate(all="ignore"):
        optimised, reference = _both(program, args)
    assert len(optimised) == len(reference)
    for mine, theirs in zip(optimised, reference):
        mine, theirs = np.asarray(mine), np.asarray(theirs)
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-9, equal_nan=True)


def _unoptimised(fn, *args, argnums=0):
    jacobians.SYMBOLIC_SEEDS = False
    try:
        return ad.jacfwd(fn, argnums=argnums)(*args)
    finally:
        jacobians.SYMBOLIC_SEEDS = True


def _close(a, b):
    for x, y in zip(ad.tree_util.tree_leaves(a), ad.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-9, atol=1e-12)


PROGRAMS = {
    "gather by traced indices": lambda x: anp.sum(x[anp.argsort(x)][:3] * anp.arange(3.0)),
    "concatenate and pad": lambda x: anp.pad(anp.concatenate([x, 2 * x[::-1], anp.zeros(2)]), 1) ** 2,
    "outer product": lambda x: anp.outer(x, anp.sin(x)),
    "matrix rows": lambda x: anp.reshape(x, (2, 3)) @ anp.reshape(anp.cos(x), (3, 2)),
    "softmax": lambda x: anp.exp(x) / anp.sum(anp.exp(x)),
    "select and maximum": lambda x: anp.where(x > 0, x * x, -x) + anp.maximum(x, 0.5),
    "fold": lambda x: ad.fold(lambda c, y: (c * y + 1.0, c), 1.0, x)[0],
    "cumsum of a broadcast": lambda x: anp.cumsum(x[:, None] * anp.ones((6, 3)), axis=0),
    "einsum over a constant axis": lambda x: anp.einsum("ij,jk->ik", anp.reshape(x, (2, 3)), np.ones((3, 4))),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_match_the_materialised_seeds(name):
    x = np.random.default_rng(3).normal(size=6)
    fn = PROGRAMS[name]
    _close(ad.jacfwd(fn)(x), _unoptimised(fn, x))


def test_several_arguments_and_pytrees():
    def fn(params, data):
        return {"a": anp.sum(params["w"] * data) + params["b"], "b": anp.tanh(params["w"] @ params["m"])}

    rng = np.random.default_rng(4)
    params = {"w": rng.normal(size=3), "b": np.array(0.5), "m": rng.normal(size=(3, 2))}
    data = rng.normal(size=3)
    _close(ad.jacfwd(fn)(params, data), _unoptimised(fn, params, data))
    _close(ad.jacfwd(fn, argnums=(0, 1))(params, np.ones(3)), _unoptimised(fn, params, np.ones(3), argnums=(0, 1)))


# --- complexity, structurally ----------------------------------------------------------------------------------


def _largest(program) -> int:
    sizes = [v.aval.size for v in program.inputs]
    sizes += [v.aval.size for eqn in program.eqns for v in eqn.outputs]
    return max(sizes)


@pytest.mark.parametrize("problem", ["sum of squares", "dot", "gmm", "lstm step"])
def test_targets_grow_linearly_and_agree_with_grad(problem):
    """The largest value of the optimised program grows like n (four times the inputs: at most about four
    times the largest value), never holds n x n elements, and stays within a constant of the primal's."""
    largest, inputs = [], []
    for size in (300, 1200):
        fn, args, argnums = problems(problem, size)
        n = sum(np.size(args[k]) for k in (argnums if isinstance(argnums, tuple) else (argnums,)))
        optimised = ad.make_ir(ad.jacfwd(fn, argnums=argnums))(*args)
        largest.append(_largest(optimised))
        inputs.append(n)
        # (GMM's fixed 50 points make an n x 50 value: a quarter of n x n at the small size)
        assert size < 1200 or largest[-1] < n * n // 4, f"an n x n value in the optimised program (n = {n})"
        assert largest[-1] <= 16 * max(_largest(ad.make_ir(fn)(*args)), n)
        _close(ad.jacfwd(fn, argnums=argnums)(*args), ad.grad(fn, argnums=argnums)(*args))
    growth = (largest[1] / largest[0]) / (inputs[1] / inputs[0])
    assert growth <= 1.25, f"the largest value grows faster than n: {largest} for n = {inputs}"


def test_gmm_objective_matches_grad_and_the_materialised_seeds():
    rng = np.random.default_rng(5)
    n, d, k = 9, 3, 4
    x = rng.normal(size=(n, d))
    objective = functools.partial(gmm_objective, x=x, gamma=1.0, m=0)
    args = (rng.normal(size=k), rng.normal(size=(k, d)), rng.normal(size=(k, d * (d + 1) // 2)))
    jac = ad.jacfwd(objective, argnums=(0, 1, 2))(*args)
    _close(jac, ad.grad(objective, argnums=(0, 1, 2))(*args))
    _close(jac, _unoptimised(objective, *args, argnums=(0, 1, 2)))


def test_lstm_step_matches_the_materialised_seeds():
    fn, args, argnums = problems("lstm step", 40)
    _close(ad.jacfwd(fn, argnums=argnums)(*args), _unoptimised(fn, *args, argnums=argnums))


def test_adarray_bench_jacfwd_quick_run(capsys):
    from adarray.cli import main as cli_main

    assert cli_main(["bench", "jacfwd", "--quick", "--problems", "sum,lstm"]) == 0
    out = capsys.readouterr().out
    assert "| sum of squares | 1000 |" in out and "| lstm step |" in out and "checked against grad" in out
