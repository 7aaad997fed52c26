"""Reverse-mode cost of reduce, scan and reduce_by_index (Futhark's parallel building blocks).

For each primitive and operator (add, mul, min, a general 2x2 matrix product and linear-function
composition) it times the primal and the gradient (both staged with ad.jit, first call excluded)
and reports gradient / primal, with the specialised rule and, where one applies, the general rule
forced on the same monoid. reduce_by_index's general rule (a sort by index and segmented scans)
runs on --general-size elements (10^5 by default, shown in its rows) to keep the default run within
a few minutes. JAX and PyTorch run the same computations side by side when installed.

    python benchmarks/parallel_primitives.py [--size 1000000] [--bins 1000,100000] [--general-size 100000]
                                             [--backend numpy|numba|jax] [--threads 1] [--quick] [--no-peers]
    adarray bench parallel ...

With --backend numba our programs run as compiled loops; with --backend jax they are lowered to XLA
(`ad.jit(..., backend="jax")`, inputs placed on the device once) and timed beside JAX's own
`jax.jit(jax.grad)` on the same XLA. The first call (trace, transform, compile) is shown too.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import adarray as ad
import adarray.numpy as anp
from adarray.core.pytree import flatten
from adarray.core.types import Aval
from adarray.parallel.api import _trace_operator
from adarray.parallel.general import general_reduce, general_scan
from adarray.progress import Progress

from .timing import best_time, relaunch, threads_fixed


def _matmul(a, b):
    return a @ b


def _compose(f, g):
    return f[0] * g[0], f[1] * g[0] + g[1]


def _forced_general(kind, op, identity, element_shape=()):
    """The general rule on an operator the API would otherwise specialise."""
    program = _trace_operator(op, [Aval(element_shape, np.float64)], flatten(0.0)[1])
    run = general_reduce if kind == "reduce" else general_scan
    return lambda x: run(program, [x], [np.asarray(identity)])[0]


def cases(size, bins_list, rng, general_size):
    """(primitive, operator, rule, adarray function of x, argument)."""
    # Values whose products stay normal numbers: products of 10^6 draws from [0.5, 1.5] (the mean log is
    # -0.045) sink through the subnormals to 0, where each multiplication costs about 100 cycles on a CPU
    # (GPUs flush them to zero), which timed the data, not the rules. Likewise the matrices stay near the
    # identity, so that products of 250,000 of them neither overflow nor vanish.
    x = np.exp(rng.normal(0.0, 0.01, size))
    matrices = rng.normal(size=(size // 4, 2, 2)) * 0.01 + np.eye(2)
    pairs = (np.exp(rng.normal(0.0, 0.01, size // 2)), rng.normal(size=size // 2))
    out = []
    for kind, api in (("reduce", ad.reduce), ("scan", ad.scan)):
        # Squared, so that the gradient depends on the input (a linear loss has a constant gradient,
        # which the simplifier would fold away).
        total = (lambda f: lambda v: anp.sum(f(v) ** 2)) if kind == "scan" else (lambda f: lambda v: f(v) ** 2)
        for name, op, identity in (("add", "add", 0.0), ("mul", "mul", 1.0), ("min", "min", np.inf)):
            out.append((kind, name, "specialised", total(lambda v, op=op, api=api: api(op, v)), x))
            general_op = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "min": anp.minimum}[name]
            out.append((kind, name, "general", total(_forced_general(kind, general_op, identity)), x))
        out.append((kind, "matmul2x2", "general",
                    lambda m, api=api: anp.sum(api(_matmul, m, identity=np.eye(2)) ** 2), matrices))
        out.append((kind, "linear-composition", "general",
                    lambda b, api=api, a=pairs[0]: anp.sum(api(_compose, (a, b), identity=(1.0, 0.0))[1] ** 2),
                    pairs[1]))
    # The general reduce_by_index rule sorts by index and scans with (k+1) x (k+1) Jacobians: it runs on
    # `general_size` elements (printed in the table) so that the default run stays within minutes.
    small = x[:general_size]
    small_matrices, small_pairs = matrices[:general_size // 4], (pairs[0][:general_size // 2],
                                                                 pairs[1][:general_size // 2])
    for bins in bins_list:
        kind = f"reduce_by_index[{bins}]"
        indices = rng.integers(0, bins, size)
        for name, identity in (("add", 0.0), ("mul", 1.0), ("min", np.inf)):
            dest = np.full(bins, identity)
            out.append((kind, name, "specialised",
                        lambda v, name=name, dest=dest, idx=indices:
                        anp.sum(ad.reduce_by_index(dest, name, idx, v) ** 2), x))
        general_kind = f"{kind} n={general_size:,}"
        for name, identity, op in (("add", 0.0, lambda a, b: a + b * 1.0), ("mul", 1.0, lambda a, b: a * (b * 1.0)),
                                   ("min", np.inf, lambda a, b: anp.minimum(a, b * 1.0))):
            out.append((general_kind, name, "general",
                        lambda v, dest=np.full(bins, identity), idx=indices[:general_size], op=op, e=identity:
                        anp.sum(ad.reduce_by_index(dest, op, idx, v, identity=e) ** 2), small))
        eye = np.broadcast_to(np.eye(2), (bins, 2, 2))
        out.append((general_kind, "matmul2x2", "general",
                    lambda m, dest=eye, idx=indices[:general_size // 4]:
                    anp.sum(ad.reduce_by_index(dest, _matmul, idx, m, identity=np.eye(2)) ** 2), small_matrices))
        out.append((general_kind, "linear-composition", "general",
                    lambda b, dest=(np.ones(bins), np.zeros(bins)), idx=indices[:general_size // 2], a=small_pairs[0]:
                    anp.sum(ad.reduce_by_index(dest, _compose, idx, (a, b), identity=(1.0, 0.0))[1] ** 2),
                    small_pairs[1]))
    return out


def _jax_pair(jax, fn, x):
    """(primal, gradient) seconds of a jitted JAX function and its jitted gradient."""
    primal, gradient = jax.jit(fn), jax.jit(jax.grad(fn))
    return (best_time(lambda: primal(x).block_until_ready()), best_time(lambda: gradient(x).block_until_ready()))


def peers(size, bins_list, rng):
    """(primitive, operator, tool, primal seconds, gradient seconds) for JAX and PyTorch, when installed."""
    rows = []
    x = rng.uniform(0.5, 1.5, size)
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        xj = jnp.asarray(x)
        for kind, name, fn in (("reduce", "mul", lambda v: jnp.prod(v) ** 2),
                               ("scan", "add", lambda v: jnp.sum(jnp.cumsum(v) ** 2)),
                               ("scan", "mul", lambda v: jnp.sum(jnp.cumprod(v) ** 2)),
                               ("scan", "min", lambda v: jnp.sum(jax.lax.associative_scan(jnp.minimum, v) ** 2))):
            rows.append((kind, name, "jax", *_jax_pair(jax, fn, xj)))
        for bins in bins_list:
            ids = jnp.asarray(rng.integers(0, bins, size))
            for name, segment in (("add", jax.ops.segment_sum), ("min", jax.ops.segment_min)):
                def histogram(v, segment=segment, ids=ids, bins=bins):
                    return jnp.sum(segment(v, ids, num_segments=bins) ** 2)

                rows.append((f"reduce_by_index[{bins}]", name, "jax", *_jax_pair(jax, histogram, xj)))
    except ImportError:
        pass
    try:
        import torch

        xt = torch.tensor(x, requires_grad=True)

        def torch_pair(fn):
            def primal():
                with torch.no_grad():
                    fn(xt)

            def gradient():
                xt.grad = None
                fn(xt).backward()

            return best_time(primal), best_time(gradient)

        rows.append(("reduce", "mul", "torch", *torch_pair(lambda v: torch.prod(v) ** 2)))
        rows.append(("scan", "mul", "torch", *torch_pair(lambda v: (torch.cumprod(v, 0) ** 2).sum())))
        for bins in bins_list:
            ids = torch.tensor(rng.integers(0, bins, size))
            for name, reduce in (("add", "sum"), ("min", "amin")):
                def hist(v, reduce=reduce, ids=ids, bins=bins):
                    base = torch.zeros(bins, dtype=v.dtype)
                    return (base.scatter_reduce(0, ids, v, reduce=reduce, include_self=False) ** 2).sum()

                rows.append((f"reduce_by_index[{bins}]", name, "torch", *torch_pair(hist)))
    except ImportError:
        pass
    return rows


def _staged(fn, arg, backend):
    """(primal, gradient, argument) for the backend; on JAX the calls wait for their results."""
    if backend != "jax":
        return ad.jit(fn, backend=backend), ad.jit(ad.grad(fn), backend=backend), arg
    import jax

    from adarray.backends.jax import x64

    primal, gradient = ad.jit(fn, backend="jax"), ad.jit(ad.grad(fn), backend="jax")
    with x64():
        placed = jax.device_put(np.asarray(arg))
    return (lambda v: primal(v).block_until_ready()), (lambda v: gradient(v).block_until_ready()), placed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="adarray bench parallel", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="elements per input (default 10^6)")
    parser.add_argument("--bins", default="1000,100000", help="reduce_by_index bin counts")
    parser.add_argument("--general-size", type=int, default=100_000,
                        help="elements for the general reduce_by_index rule (default 10^5; it sorts and scans)")
    parser.add_argument("--quick", action="store_true", help="10^4 elements, 100 bins: a smoke run")
    parser.add_argument("--no-peers", action="store_true", help="skip JAX and PyTorch")
    parser.add_argument("--backend", default="numpy", choices=("numpy", "numba", "jax"),
                        help="adarray's backend (default numpy; numba: compiled loops; jax: lowered to XLA)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for every library (default 1, as ADBench: threads of a parallel loop wait "
                             "for each other, so a core busy with another process slows them by up to 10x)")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if not threads_fixed(args.threads):
        return relaunch("benchmarks.parallel_primitives", argv, args.threads)
    size, bins_list = (10_000, [100]) if args.quick else (args.size, [int(b) for b in args.bins.split(",")])
    general_size = min(size, 2_000 if args.quick else args.general_size)
    rng = np.random.default_rng(0)
    print(f"# parallel building blocks: {size:,} elements (the general reduce_by_index rows: {general_size:,}, "
          f"marked n=...), {args.backend} backend, {args.threads} thread(s) on {os.cpu_count()} cores")
    print("| primitive | operator | rule | primal ms | gradient ms | gradient / primal | gradient first call s |")
    print("|---|---|---|---|---|---|---|", flush=True)
    all_cases = cases(size, bins_list, rng, general_size)
    progress = Progress(len(all_cases) + (0 if args.no_peers else 1), "adarray bench parallel")
    for kind, name, rule, fn, arg in all_cases:
        progress.start(f"{kind} {name} ({rule})")
        primal, gradient, arg = _staged(fn, arg, args.backend)
        begin = time.perf_counter()
        gradient(arg)
        t_first = time.perf_counter() - begin
        t_primal, t_gradient = best_time(primal, arg), best_time(gradient, arg)
        rule = rule if args.backend != "jax" else f"{rule}, xla"
        progress.write(f"| {kind} | {name} | {rule} | {t_primal * 1e3:.2f} | {t_gradient * 1e3:.2f} | "
                       f"{t_gradient / t_primal:.1f}x | {t_first:.2f} |")
    if not args.no_peers:
        progress.start("JAX and PyTorch, when installed")
        for kind, name, tool, t_primal, t_gradient in peers(size, bins_list, rng):
            progress.write(f"| {kind} | {name} | {tool} | {t_primal * 1e3:.2f} | {t_gradient * 1e3:.2f} | "
                           f"{t_gradient / t_primal:.1f}x | |")
    progress.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
