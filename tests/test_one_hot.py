"""jacfwd with symbolic identity seeds (passes/one_hot.py) against the materialised seeds it replaces.

Values: on every registry case (every primitive's jvp program) and on whole programs, the optimised
Jacobian equals the one from vmap over the materialised identity. Complexity, structurally: for the
issue's targets (sum(x * x), a dot product, the GMM objective, an LSTM step) no value of the optimised
program has n x n elements, and its largest value is within a small factor of the primal program's.
"""
from __future__ import annotations

import functools
import re

import numpy as np
import pytest
from benchmarks.adbench.tool_adarray import gmm_objective
from benchmarks.jacfwd_cost import problems

import adarray as ad
import adarray.api.jacobians as jacobians
import adarray.numpy as anp
from adarray.core.types import is_float
from adarray.testing.registry import primitive_program, registry_cases
from adarray.tracing import eval_program

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


# --- duplicate entries, padding, broadcasting, gathers, empty inputs (issue 14: GMM-like programs) -------------


def _lower(params, d):
    """A (d, d) strictly lower triangle from d(d-1)/2 parameters, padded with a zero as ADBench's GMM does."""
    padded = anp.concatenate([anp.zeros(1), params])
    rows = np.zeros((d, d), np.int64)
    rows[np.tril_indices(d, -1)] = np.arange(1, d * (d - 1) // 2 + 1)
    return padded[rows]


def _gmm_like(x):
    """Each parameter reached along several paths: x[:3] through exp and the sum of logs, the means through
    the diagonal and the lower triangle's contraction; the padding of the triangle has no seed."""
    points = np.linspace(-1.0, 1.0, 15).reshape(5, 3)
    centred = points - x[3:6]
    scaled = anp.exp(x[:3]) * centred + anp.einsum("ij,nj->ni", _lower(x[6:9], 3), centred)
    return anp.sum(x[:3]) - 0.5 * anp.sum(scaled * scaled) + anp.sum(x[3:6] * x[:3])


COST = np.linspace(0.5, 2.0, 7)
EDGE_PROGRAMS = {
    "gmm-like with duplicates and padding": _gmm_like,
    "one seed along three paths": lambda x: anp.sum(x * x + anp.sin(x) * x + anp.exp(x)) * anp.sum(x),
    "broadcast against points": lambda x: anp.sum(anp.log(anp.sum(anp.exp(x[None, :7] * COST[:, None]), axis=1))),
    "gathers with repeated indices": lambda x: anp.sum(x[np.array([0, 0, 3, 3, 3, 8])] ** 2 * x[np.array([1, 0, 1, 2, 3,
                                                                                                         4])]),
    "gather by traced indices with ties": lambda x: anp.sum(anp.cumsum(anp.sort(anp.round(x))) * x[:1]),
    "vector output with shared seeds": lambda x: anp.stack([anp.sum(x * x), x[0] * x[1], anp.sum(x[:3]) * x[0]]),
    "padding only": lambda x: anp.sum(anp.pad(x[:2], 3) * 0.5) + anp.sum(anp.concatenate([anp.zeros(4), x]) ** 2),
    "a lazy broadcast of size-1 axes summed with a factor": lambda x: anp.sum(
        anp.broadcast_to(anp.sum(x)[None, None] * x[:, None], (9, 4)) * np.arange(36.0).reshape(9, 4), axis=1),
    "a lazy broadcast through a transpose and an einsum": lambda x: anp.sum(anp.einsum(
        "ik,kj->ij", np.ones((2, 9)), anp.transpose(anp.broadcast_to(x, (5, 9)) - 1.0)) ** 2),
    "empty slice of the input": lambda x: anp.sum(x[:0] * 2.0) + anp.sum(anp.reshape(x[:0], (0, 3)), axis=0),
}


@pytest.mark.parametrize("name", sorted(EDGE_PROGRAMS))
def test_edge_programs_match_jacrev_and_the_materialised_seeds(name):
    x = np.random.default_rng(6).normal(size=9)
    fn = EDGE_PROGRAMS[name]
    mine = ad.jacfwd(fn)(x)
    _close(mine, _unoptimised(fn, x))
    _close(mine, ad.jacrev(fn)(x))


def test_empty_input():
    fn = lambda x: anp.sum(x * x) * anp.ones(2)  # noqa: E731
    jac = ad.jacfwd(fn)(np.zeros(0))
    assert np.shape(jac) == (2, 0)
    _close(jac, _unoptimised(fn, np.zeros(0)))


def _fold_rows(value):
    """A fold over the rows, the first row a constant of the loop."""
    first = value[0]
    carry, rows = ad.fold(lambda c, row: (anp.tanh(anp.sin(c) * row + c * first), c * row), first, value)
    return rows + carry


def _random_program(rng):
    """A random composition of elementwise maps, products of two paths, broadcasts, gathers with duplicates,
    sums over axes, concatenations and folds on a (3, 4) view of 12 inputs."""
    steps = [int(s) for s in rng.integers(0, 9, size=6)]
    picks = rng.integers(0, 12, size=12)

    def fn(x):
        value = anp.reshape(x, (3, 4))
        for step in steps:
            if step == 0:
                value = anp.sin(value) * value
            elif step == 1:
                value = value + anp.exp(0.1 * value) * value[:1]
            elif step == 2:
                value = value * anp.sum(value, axis=1, keepdims=True)
            elif step == 3:
                value = anp.reshape(anp.reshape(value, (12,))[picks], (3, 4)) + value
            elif step == 4:
                value = anp.concatenate([value[:, :2], value[:, :2] * value[:, 2:]], axis=1)
            elif step == 5:
                value = anp.einsum("ij,kj->ik", value, np.ones((3, 4))) @ value * 0.1
            elif step == 7:
                value = value - anp.logsumexp(value, axis=0)
            elif step == 8:
                value = _fold_rows(value)
            elif step == 6:
                value = anp.tanh(value) + anp.transpose(value[::-1, ::-1]).reshape(3, 4)
        return anp.sum(value * value)

    return fn, steps


@pytest.mark.parametrize("seed", range(16))
def test_random_programs_match_jacrev_and_grad(seed):
    rng = np.random.default_rng(seed)
    fn, steps = _random_program(rng)
    x = 0.5 * rng.normal(size=12)
    mine = ad.jacfwd(fn)(x)
    np.testing.assert_allclose(mine, ad.jacrev(fn)(x), rtol=1e-9, atol=1e-10, err_msg=f"steps {steps}")
    np.testing.assert_allclose(mine, ad.grad(fn)(x), rtol=1e-9, atol=1e-10, err_msg=f"steps {steps}")
    np.testing.assert_allclose(mine, _unoptimised(fn, x), rtol=1e-9, atol=1e-10, err_msg=f"steps {steps}")


def test_gmm_ir_has_no_identity_and_no_duplicate_entries():
    """The optimised GMM program (its text form): no n x n value, no scatter-add (the seeds of every entry
    row are distinct after merging, so the gradient row is assembled by assignment), and no value with more
    entries per point-component element than the 1 + d + d(d+1)/2 = 15 parameters of its component."""
    fn, args, argnums = problems("gmm", 1200)
    n = sum(np.size(a) for a in args)
    text = str(ad.make_ir(ad.jacfwd(fn, argnums=argnums))(*args))
    assert f"[{n},{n}" not in text and f",{n},{n}]" not in text
    assert "scatter[op=add" not in text
    k = args[0].shape[0]
    entries = [int(m) for m in re.findall(rf"\w+:f64\[(\d+),50,{k}\] =", text)]
    assert entries and max(entries) <= 15, entries


def test_rows_with_repeated_seeds_are_assembled_by_assignments():
    """Six entries per element, some with the same seed (a gather with repeated indices): the rows are
    assembled by plain assignments in layers (no scatter-add), equal to jacrev's."""
    picks = np.array([0, 1, 0, 2, 0, 3, 1, 1, 4, 5, 5, 5, 2, 2, 2, 2, 0, 1, 2, 3, 4, 5, 0, 0])

    def fn(x):
        return anp.sum(anp.reshape(x[picks], (6, 4)) ** 2, axis=0)

    x = np.random.default_rng(7).normal(size=6)
    text = str(ad.make_ir(ad.jacfwd(fn))(x))
    assert "scatter[op=add" not in text and "scatter[op=set" in text
    _close(ad.jacfwd(fn)(x), ad.jacrev(fn)(x))
    _close(ad.jacfwd(fn)(x), _unoptimised(fn, x))


# --- folds: the carry's tangents in a fixed layout, the constants' seeds hoisted ------------------------------


DATA = np.linspace(-1.0, 1.0, 20).reshape(5, 4)
FOLDS = {
    "parameters as constants": lambda w: ad.fold(lambda c, x: (anp.tanh(c * w[:4] + x * w[4:]), anp.sum(c * c)),
                                                 np.zeros(4), DATA)[1],
    "the carry starts with the seeds": lambda w: ad.fold(lambda c, x: (c * anp.sin(c) + x, anp.sum(c) * c[0]),
                                                         w[:4], DATA)[0],
    "a carry that mixes every seed": lambda w: ad.fold(lambda c, x: (c + anp.sum(c * w[:4]) * x, c[0]),
                                                       w[4:], DATA)[1],
    "a primal accumulator next to the tangents": lambda w: ad.fold(
        lambda c, x: ((c[0] + x, c[1] * anp.cos(w[:4] * c[0][0])), anp.sum(c[1])), (np.zeros(4), w[4:]), DATA)[1],
    "reversed, with an unused tangent": lambda w: ad.fold(lambda c, x: (c * 0.5 + x[:1] * w[:1], anp.exp(c)),
                                                          w[4:5], DATA, reverse=True)[1],
    "the scanned input is differentiated (materialised)": lambda w: ad.fold(
        lambda c, x: (c * x + 1.0, c), 1.0, w)[1],
    "nested folds": lambda w: ad.fold(lambda c, x: (ad.fold(lambda d, y: (d * w[:4] + y, d[0]), c, DATA)[0], c[1]),
                                      w[4:], DATA[:2])[1],
}


@pytest.mark.parametrize("name", sorted(FOLDS))
def test_folds_match_jacrev_and_the_materialised_seeds(name):
    w = np.random.default_rng(8).normal(size=8) * 0.5
    fn = FOLDS[name]
    mine = ad.jacfwd(fn)(w)
    _close(mine, ad.jacrev(fn)(w))
    _close(mine, _unoptimised(fn, w))


def test_adbench_lstm_objective_stays_linear_and_matches_grad():
    """The whole D-LSTM loss (a fold over the characters): no value of the optimised program grows faster
    than n (before, the fold carried (n, bits) tangents of the n x n identity's products)."""
    from benchmarks.adbench.tool_adarray import lstm_objective

    largest, inputs = [], []
    for bits in (10, 40):
        rng = np.random.default_rng(9)
        main, extra = 0.5 * rng.normal(size=(4, 4 * bits)), 0.5 * rng.normal(size=(3, bits))
        state, sequence = rng.normal(size=(4, bits)), rng.uniform(size=(5, bits))
        jac = ad.jacfwd(lstm_objective, argnums=(0, 1))
        _close(jac(main, extra, state, sequence), ad.grad(lstm_objective, argnums=(0, 1))(main, extra, state,
                                                                                           sequence))
        program = ad.make_ir(jac)(main, extra, state, sequence)
        assert "fold" in str(program)
        largest.append(max(v.aval.size for eqn in program.eqns for v in eqn.outputs))
        inputs.append(main.size + extra.size)
    assert largest[1] / largest[0] <= 1.25 * inputs[1] / inputs[0], (largest, inputs)
    _close(ad.jacfwd(lstm_objective, argnums=(0, 1))(main, extra, state, sequence),
           _unoptimised(lstm_objective, main, extra, state, sequence, argnums=(0, 1)))
