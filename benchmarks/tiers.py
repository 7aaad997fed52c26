"""The default tier's background compile against the caller: how long the caller's calls take while a hot program
compiles, with the compile in a child process (the default) or on the background thread itself.

ADBench's GMM gradient (d 10, K 5, 1,000 points; `--quick`: d 2, K 3, 50 points) is called in a loop on the default
tier (`ad.jit(ad.grad(f))`, no backend named) from a cold disk cache, until it runs compiled and 20 calls more. Each
variant runs in a fresh Python process, so that neither finds the other's machine code in memory. Reported: the
interpreted calls before the program was hot, the calls while it compiled (median, 90th percentile, longest), how
long the compile took from the caller's side, and the compiled calls.

    adarray bench tiers [--quick] [--variants child,thread]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

VARIANTS = {"child": "in a child process (the default)", "thread": "on the background thread"}
AFTER = 20  # compiled calls timed


def measure(variant: str, quick: bool) -> dict:
    """One variant, in this process (a fresh one: see main)."""
    import time

    import adarray as ad
    from adarray.api import staging, tiering
    from benchmarks.adbench.tool_adarray import gmm_objective

    tiering.COMPILE_IN_CHILD = variant == "child"
    d, k, n = (2, 3, 50) if quick else (10, 5, 1000)
    rng = np.random.default_rng(0)
    alphas, means, icf = rng.normal(size=k), rng.normal(size=(k, d)), rng.normal(size=(k, d * (d + 1) // 2))
    x = rng.normal(size=(n, d))

    def objective(a, m, i):
        return gmm_objective(a, m, i, x, 1.0, 0)

    unjitted = ad.grad(objective, argnums=(0, 1, 2))
    gradient = ad.jit(unjitted)
    phases: dict[str, list[float]] = {"interpreted": [], "compiling": [], "compiled": []}
    program, compile_start, compile_seconds, first = None, None, None, None
    while len(phases["compiled"]) < AFTER:
        begin = time.perf_counter()
        result = gradient(alphas, means, icf)
        seconds = time.perf_counter() - begin
        first = result if first is None else first
        if program is None:
            program = next(iter(staging._CACHES[unjitted].values()))[0]._compiled["auto"]
        if program.tier == "numba":  # the call that finds the finished job already runs compiled
            if compile_seconds is None:
                compile_seconds = begin - compile_start if compile_start is not None else 0.0
            phases["compiled"].append(seconds)
        elif program.job is not None:
            if compile_start is None:
                compile_start = time.perf_counter()
            else:
                phases["compiling"].append(seconds)
        else:
            phases["interpreted"].append(seconds)
    agree = all(np.allclose(a, b, rtol=1e-12, atol=0) for a, b in zip(first, result))
    return {"phases": phases, "compile_seconds": compile_seconds, "failures": tiering.FAILURES,
            "agree": bool(agree)}


def _row(name: str, result: dict) -> str:
    phases = result["phases"]
    during = np.array(phases["compiling"] or [np.nan]) * 1e3
    return (f"| {name} | {np.median(phases['interpreted']) * 1e3:.2f} | {len(phases['compiling'])} | "
            f"{np.median(during):.2f} | {np.percentile(during, 90):.2f} | {during.max():.1f} | "
            f"{result['compile_seconds']:.1f} | {np.median(phases['compiled']) * 1e3:.3f} |")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adarray bench tiers", description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, from {', '.join(VARIANTS)}")
    parser.add_argument("--quick", action="store_true", help="a smoke run: GMM d 2, K 3, 50 points")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a variant in this process, printed as JSON
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
        variants = args.variants.split(",")
        unknown = [v for v in variants if v not in VARIANTS]
        if unknown:
            parser.error(f"unknown variant {unknown[0]} (choose from {', '.join(VARIANTS)})")
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0
    if args.one:
        print(json.dumps(measure(args.one, args.quick)))
        return 0
    print(f"# GMM gradient on the default tier, cold cache, {os.cpu_count()} cores"
          f"{' (quick)' if args.quick else ''}: call times in ms")
    print("| compiled | interpreted | calls while compiling | median | p90 | longest | compile s | compiled |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    failed = False
    for variant in variants:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, ADARRAY_CACHE_DIR=cache)
            env.pop("ADARRAY_BACKEND", None)
            run = subprocess.run([sys.executable, "-m", "benchmarks.tiers", "--one", variant]
                                 + ["--quick"] * args.quick, env=env, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"| {VARIANTS[variant]} | failed: {run.stderr.strip().splitlines()[-1:]} |")
            failed = True
            continue
        result = json.loads(run.stdout.strip().splitlines()[-1])
        print(_row(VARIANTS[variant], result), flush=True)
        for name, error in result["failures"]:
            print(f"WRONG: {variant}: the background compile of {name} failed: {error}")
        if not result["agree"]:
            print(f"WRONG: {variant}: the compiled gradient differs from the interpreted one")
        failed |= bool(result["failures"]) or not result["agree"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
