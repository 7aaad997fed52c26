"""Forward mode as cheap as reverse mode: ad.jacfwd against ad.grad on scalar functions of n inputs.

jacfwd keeps its identity seeds symbolic (src/adarray/passes/one_hot.py); before, it pushed the n x n
identity through every operation. For sum(x * x), a dot product, ADBench's GMM objective, one
step of ADBench's LSTM and its whole objective (a fold over the characters), at n = 10^2 .. 10^5
inputs: the time per call (best of --repeat) and the peak memory of one call (tracemalloc: NumPy's
allocations) of grad, jacfwd, and jacfwd with materialised seeds (only where its n x n arrays fit in
--dense-limit elements). Every jacfwd is checked against grad first.

    adarray bench jacfwd [--sizes 100,1000,10000,100000] [--problems sum,dot,gmm,lstm,lstm-fold] [--repeat 5] [--quick]
"""
from __future__ import annotations

import argparse
import functools
import time

import numpy as np

import adarray as ad
import adarray.api.jacobians as jacobians
import adarray.numpy as anp

from .adbench.tool_adarray import gmm_objective, lstm_objective
from .timing import traced_peak

GMM_DIMENSION, GMM_POINTS = 4, 50           # d and the number of points; K grows with n
LSTM_LAYERS = 2                              # b (the characters' bits) grows with n
LSTM_CHARACTERS = 5                          # the whole objective's sequence length
NAMES = {"sum": "sum of squares", "dot": "dot", "gmm": "gmm", "lstm": "lstm step", "lstm-fold": "lstm objective"}


def lstm_step(main, extra, state, current, gold):
    """One character of ADBench's D-LSTM: the layers' update, the prediction and its log-loss."""
    layers, bits = main.shape[0] // 2, current.shape[0]
    x = current * extra[0]
    for i in range(layers):
        hidden, cell = state[2 * i], state[2 * i + 1]
        gates = anp.concatenate([x, hidden, x, hidden]) * main[2 * i] + main[2 * i + 1]
        forget, ingate, outgate = (anp.sigmoid(gates[j * bits:(j + 1) * bits]) for j in range(3))
        cell = cell * forget + ingate * anp.tanh(gates[3 * bits:])
        x = outgate * anp.tanh(cell)
    prediction = x * extra[1] + extra[2]
    return -anp.sum(gold * (prediction - anp.log(2.0 + anp.sum(anp.exp(prediction)))))


def problems(name: str, n: int, seed: int = 0):
    """(fn, args, argnums) of a scalar function with about n differentiated inputs."""
    rng = np.random.default_rng(seed)
    if name == "sum of squares":
        return (lambda x: anp.sum(x * x)), (rng.normal(size=n),), 0
    if name == "dot":
        y = rng.normal(size=n)
        return (lambda x: anp.dot(x, y)), (rng.normal(size=n),), 0
    if name == "gmm":
        d = GMM_DIMENSION
        k = max(1, n // (1 + d + d * (d + 1) // 2))
        objective = functools.partial(gmm_objective, x=rng.normal(size=(GMM_POINTS, d)), gamma=1.0, m=0)
        args = (rng.normal(size=k), rng.normal(size=(k, d)), 0.3 * rng.normal(size=(k, d * (d + 1) // 2)))
        return objective, args, (0, 1, 2)
    if name == "lstm step":
        bits = max(1, n // (8 * LSTM_LAYERS + 3))
        args = (0.5 * rng.normal(size=(2 * LSTM_LAYERS, 4 * bits)), 0.5 * rng.normal(size=(3, bits)),
                rng.normal(size=(2 * LSTM_LAYERS, bits)), rng.normal(size=bits), rng.uniform(size=bits))
        return lstm_step, args, (0, 1)
    if name == "lstm objective":  # ADBench's whole D-LSTM loss: a fold over the characters
        bits = max(1, n // (8 * LSTM_LAYERS + 3))
        args = (0.5 * rng.normal(size=(2 * LSTM_LAYERS, 4 * bits)), 0.5 * rng.normal(size=(3, bits)),
                rng.normal(size=(2 * LSTM_LAYERS, bits)), rng.uniform(size=(LSTM_CHARACTERS, bits)))
        return lstm_objective, args, (0, 1)
    raise ValueError(f"unknown problem {name!r}; known: {', '.join(NAMES.values())}")


def _seconds(fn, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _peak_bytes(fn) -> int:
    fn()  # staged and cached first: the peak of a call, not of tracing
    return traced_peak(fn)


def _materialised(fn, argnums):
    jacobians.SYMBOLIC_SEEDS = False
    try:
        jac = ad.jacfwd(fn, argnums=argnums)
        return lambda *args: _with_flag(jac, args)
    finally:
        jacobians.SYMBOLIC_SEEDS = True


def _with_flag(jac, args):
    jacobians.SYMBOLIC_SEEDS = False
    try:
        return jac(*args)
    finally:
        jacobians.SYMBOLIC_SEEDS = True


def measure(name: str, n: int, repeat: int, dense_limit: int) -> dict:
    fn, args, argnums = problems(name, n)
    inputs = sum(np.size(args[k]) for k in (argnums if isinstance(argnums, tuple) else (argnums,)))
    grad, jacfwd = ad.grad(fn, argnums=argnums), ad.jacfwd(fn, argnums=argnums)
    expected = ad.tree_util.tree_leaves(grad(*args))
    for mine, theirs in zip(ad.tree_util.tree_leaves(jacfwd(*args)), expected):
        if not np.allclose(mine, theirs, rtol=1e-8, atol=1e-10):
            raise AssertionError(f"{name}, n = {inputs}: jacfwd and grad disagree")
    row = {"problem": name, "n": inputs,
           "grad": _seconds(lambda: grad(*args), repeat), "jacfwd": _seconds(lambda: jacfwd(*args), repeat),
           "grad_bytes": _peak_bytes(lambda: grad(*args)), "jacfwd_bytes": _peak_bytes(lambda: jacfwd(*args)),
           "materialised": None, "materialised_bytes": None,
           "equations": len(ad.make_ir(jacfwd)(*args).eqns)}
    if inputs * inputs <= dense_limit:
        dense = _materialised(fn, argnums)
        row["materialised"] = _seconds(lambda: dense(*args), max(1, repeat // 2))
        row["materialised_bytes"] = _peak_bytes(lambda: dense(*args))
    return row


def _ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def _mb(count):
    return "-" if count is None else f"{count / 2 ** 20:.2f}"


def table(rows) -> str:
    lines = ["| problem | n | grad ms | jacfwd ms | jacfwd / grad | materialised jacfwd ms | grad MB | jacfwd MB | "
             "jacfwd / grad memory | materialised MB |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['problem']} | {r['n']} | {_ms(r['grad'])} | {_ms(r['jacfwd'])} | "
                     f"{r['jacfwd'] / r['grad']:.1f} | {_ms(r['materialised'])} | {_mb(r['grad_bytes'])} | "
                     f"{_mb(r['jacfwd_bytes'])} | {r['jacfwd_bytes'] / max(r['grad_bytes'], 1):.1f} | "
                     f"{_mb(r['materialised_bytes'])} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="adarray bench jacfwd", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000,100000", help="numbers of inputs (comma-separated)")
    parser.add_argument("--problems", default="sum,dot,gmm,lstm,lstm-fold", help="of " + ", ".join(NAMES))
    parser.add_argument("--repeat", type=int, default=5, help="timings per case, the best is reported (default 5)")
    parser.add_argument("--dense-limit", type=int, default=10 ** 7,
                        help="run jacfwd with materialised seeds while n^2 stays below this (default 1e7)")
    parser.add_argument("--quick", action="store_true", help="n = 100 and 1000, one timing each")
    args = parser.parse_args(argv)
    sizes = [100, 1000] if args.quick else [int(float(s)) for s in args.sizes.split(",")]
    repeat = 1 if args.quick else args.repeat
    chosen = [NAMES[p.strip()] for p in args.problems.split(",")]
    rows = [measure(name, n, repeat, args.dense_limit) for name in chosen for n in sizes]
    print(table(rows))
    worst = max(r["jacfwd"] / r["grad"] for r in rows)
    print(f"\nworst jacfwd / grad time ratio: {worst:.1f} (every jacfwd checked against grad)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
