"""Training a small network: a 2-layer MLP on the digits data, epoch times of adarray's backends against JAX and
PyTorch.

The model: 64 inputs -> 128 tanh units -> 10 logits, softmax cross-entropy, float64, plain SGD (learning rate 0.1)
on minibatches of 256 in an order drawn once per epoch (the same for every tool). The data: scikit-learn's bundled
digits (1,797 8x8 images, pixel values / 16) when scikit-learn is installed, otherwise a generated set of the same
shape (ten noisy prototypes, deterministic), so an epoch is 7 batches of 256 and a last one of 5: a second input
shape, which a compiling tool compiles again.

Each tool runs one jitted training step per batch, `step(params, x, y) -> (loss, new params)`: adarray's
`ad.jit(step)` with no backend named (the default) and on the numpy, numba and jax backends (whichever are
installed), `jax.jit(step)`, and PyTorch's eager autograd (when installed). Reported: the time to the end of the
first epoch (from scratch: tracing and compiling included), the steady epoch time (the minimum over the later
epochs), and the loss of the last epoch. Check (WRONG and exit 1 otherwise): every tool ends with the first tool's
parameters (relative 1e-6: the same arithmetic, rounded differently).

    adarray bench train [--tools default,numpy,numba,jax,jax.jit,torch] [--epochs 10] [--threads 1]
                        [--clock wall|cpu] [--out DIR] [--plot PATH] [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import adarray as ad
import adarray.numpy as anp

from .timing import CLOCKS, available, chosen_tools, pyplot, relaunch, threads_fixed, write_results

TOOLS = ("default", "numpy", "numba", "jax", "jax.jit", "torch")
BATCH, HIDDEN, CLASSES, LEARNING_RATE = 256, 128, 10, 0.1
LABELS = {"default": "adarray, no backend named", "numpy": "adarray, numpy", "numba": "adarray, numba",
          "jax": "adarray, jax", "jax.jit": "jax.jit",
          "torch": "PyTorch"}
QUICK_SAMPLES = 2 * BATCH + 5


def digits():
    """(images (1797, 64) in [0, 1], labels (1797,), source): scikit-learn's digits, or a generated set like it."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        rng = np.random.default_rng(0)
        prototypes = rng.integers(0, 17, (CLASSES, 64))
        labels = rng.permutation(np.arange(1797) % CLASSES)
        images = np.clip(np.round(prototypes[labels] + rng.normal(0.0, 4.0, (1797, 64))), 0, 16)
        return images / 16.0, labels, "generated (scikit-learn not installed): 10 noisy prototypes"
    data = load_digits()
    return data.data / 16.0, data.target, "scikit-learn's digits"


def initial_parameters():
    rng = np.random.default_rng(1)
    return {"w1": rng.normal(size=(64, HIDDEN)) / 8.0, "b1": np.zeros(HIDDEN),
            "w2": rng.normal(size=(HIDDEN, CLASSES)) / np.sqrt(HIDDEN), "b2": np.zeros(CLASSES)}


def batches(count: int, epochs: int):
    """Per epoch, the index arrays of its minibatches (one shuffled order per epoch, shared by all tools)."""
    rng = np.random.default_rng(2)
    return [[order[i:i + BATCH] for i in range(0, count, BATCH)] for order in
            (rng.permutation(count) for _ in range(epochs))]


def loss(params, x, y):
    """Mean softmax cross-entropy; y is one-hot."""
    hidden = anp.tanh(x @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"] + params["b2"]
    return -anp.mean(anp.sum(y * (logits - anp.logsumexp(logits, axis=1, keepdims=True)), axis=1))


def step(params, x, y):
    value, grads = ad.value_and_grad(loss)(params, x, y)
    return value, {name: params[name] - LEARNING_RATE * grads[name] for name in params}


def trainer(tool):
    """(step function of NumPy parameters and data -> (loss, parameters of the tool's own arrays), a function
    making NumPy arrays of them, version)."""
    if tool == "jax.jit":
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)

        def jax_loss(params, x, y):
            hidden = jnp.tanh(x @ params["w1"] + params["b1"])
            logits = hidden @ params["w2"] + params["b2"]
            return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits, axis=1), axis=1))

        @jax.jit
        def jax_step(params, x, y):
            value, grads = jax.value_and_grad(jax_loss)(params, x, y)
            return value, {name: params[name] - LEARNING_RATE * grads[name] for name in params}

        def run(params, x, y):
            value, params = jax_step(params, x, y)
            return value.block_until_ready(), params

        return run, lambda params: {k: np.asarray(v) for k, v in params.items()}, f"JAX {jax.__version__}"
    if tool == "torch":
        import torch

        def torch_step(params, x, y):
            params = {k: (v if isinstance(v, torch.Tensor) else torch.tensor(v)).requires_grad_(True)
                      for k, v in params.items()}
            x, y = torch.as_tensor(x), torch.as_tensor(y)
            hidden = torch.tanh(x @ params["w1"] + params["b1"])
            logits = hidden @ params["w2"] + params["b2"]
            value = -(y * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            grads = torch.autograd.grad(value, list(params.values()))
            with torch.no_grad():
                new = {k: (v - LEARNING_RATE * g).detach() for (k, v), g in zip(params.items(), grads)}
            return value.item(), new

        return torch_step, lambda params: {k: v.detach().numpy() for k, v in params.items()}, \
            f"PyTorch {torch.__version__}"
    backend = None if tool == "default" else tool
    compiled = ad.jit(lambda params, x, y: step(params, x, y), backend=backend)  # a new function: nothing cached

    def run(params, x, y):
        value, params = compiled(params, x, y)
        return float(value), params

    label = backend or "no backend named"
    return run, lambda params: {k: np.asarray(v) for k, v in params.items()}, f"adarray {ad.__version__}, {label}"



def train(tool, images, onehot, schedule, clock):
    """(seconds per epoch, loss of the last epoch, final NumPy parameters, version) of `tool`."""
    run, to_numpy, version = trainer(tool)
    params, seconds, losses = initial_parameters(), [], []
    for epoch in schedule:
        begin, losses = clock(), []
        for index in epoch:
            value, params = run(params, images[index], onehot[index])
            losses.append(value * len(index))
        seconds.append(clock() - begin)
    return seconds, sum(losses) / images.shape[0], to_numpy(params), version


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adarray bench train", description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, from {', '.join(TOOLS)}")
    parser.add_argument("--epochs", type=int, default=10, help="epochs (default 10; the first is timed apart)")
    parser.add_argument("--threads", type=int, default=1, help="threads for every library (default 1)")
    parser.add_argument("--clock", default="wall", choices=tuple(CLOCKS),
                        help="wall time, or this process's processor time (steadier on a busy machine)")
    parser.add_argument("--out", help="also write train.md and train.csv to this folder")
    parser.add_argument("--plot", help="write a bar chart of the first and steady epoch times to this PNG")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 2 epochs on the first 517 samples (2 batches of 256 and one of 5)")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:  # a usage error is exit status 2, returned rather than raised (adarray bench calls main)
        args = parser.parse_args(argv)
        tools = chosen_tools(parser, args.tools, TOOLS)
        if args.threads < 1 or args.epochs < 2:
            parser.error("--threads must be at least 1 and --epochs at least 2")
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0
    if not threads_fixed(args.threads):
        return relaunch("benchmarks.train", argv, args.threads)
    if args.quick:
        args.epochs = 2
    return run(args, tools)


def run(args, tools) -> int:
    clock = CLOCKS[args.clock]
    images, labels, source = digits()
    if args.quick:
        images, labels = images[:QUICK_SAMPLES], labels[:QUICK_SAMPLES]
    onehot = np.eye(CLASSES)[labels]
    schedule = batches(images.shape[0], args.epochs)
    print(f"# 2-layer MLP (64 -> {HIDDEN} -> {CLASSES}, tanh, float64), SGD on minibatches of {BATCH}: {source}, "
          f"{images.shape[0]} samples ({len(schedule[0])} batches an epoch), {args.epochs} epochs, {args.threads} "
          f"thread(s) on {os.cpu_count()} cores, {args.clock} clock")
    header = ("| tool | first epoch s | steady epoch ms | steady step µs | last epoch's loss |\n"
              "|---|---:|---:|---:|---:|")
    print(header, flush=True)
    rows, lines, failures, reference = [], [], [], None
    for tool in tools:
        if not available(tool):
            print(f"| {tool} | not installed, skipped | | | |", flush=True)
            continue
        seconds, final_loss, params, version = train(tool, images, onehot, schedule, clock)
        if reference is None:
            reference = params
        else:
            worst = max(float(np.max(np.abs(params[k] - reference[k]) / (np.abs(reference[k]) + 1e-3)))
                        for k in reference)
            if worst > 1e-6:
                failures.append(f"{tool} ends with other parameters than {rows[0][0]} (relative {worst:.1e})")
        steady = min(seconds[1:])
        row = (tool, version, seconds[0], steady * 1e3, steady / len(schedule[0]) * 1e6, final_loss)
        rows.append(row)
        lines.append(f"| {tool} ({version}) | {row[2]:.2f} | {row[3]:.1f} | {row[4]:.0f} | {final_loss:.4f} |")
        print(lines[-1], flush=True)
    for failure in failures:
        print(f"WRONG: {failure}")
    if args.out:
        write_results(args.out, "train", header, lines,
                      ["tool", "version", "first_epoch_s", "steady_epoch_ms", "steady_step_us", "final_loss"], rows)
    if args.plot and rows:
        _plot(rows, args.plot)
    return 1 if failures else 0


def _plot(rows, path) -> None:
    plt = pyplot()
    if plt is None:
        return
    labels = [LABELS.get(row[0], row[0]) for row in rows]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
    left.barh(labels, [row[2] for row in rows], color="tab:gray")
    left.set_xscale("log")
    left.set_xlabel("first epoch, from scratch (s, log)")
    right.barh(labels, [row[3] for row in rows], color="tab:blue")
    right.set_xlabel("steady epoch (ms)")
    right.set_yticks([])
    figure.suptitle("2-layer MLP on digits (64-128-10, float64, batches of 256)", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"plot: {path}")


if __name__ == "__main__":
    sys.exit(main())
