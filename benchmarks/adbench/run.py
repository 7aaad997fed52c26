"""`adarray bench adbench`: the ADBench problems for adarray and its peers, side by side in one process.

    python -m benchmarks.adbench [--problems gmm,ba,hand,lstm] [--sizes tiny|small|medium]
                                 [--tools adarray,jax,torch,autograd] [--backend numpy|numba|jax|numpy,numba,jax]
                                 [--out results/] [--quick] [--profile]

Thread counts are set before any numerical library is imported: when the process does not already carry the
requested OMP/MKL/OPENBLAS thread counts in its environment (numpy reads them at import), `main` runs the
benchmark in a child process that does. Peers that are not installed are skipped with a note. Exit status: 0
when every run's values and derivatives pass their checks, 1 when one does not, 2 for a bad command line.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from ..timing import THREAD_VARIABLES, relaunch, threads_fixed

TOOLS = ("adarray", "jax", "torch", "autograd")


class UsageError(Exception):
    """A bad command line (exit status 2)."""


def _csv_choice(text: str, allowed, what: str) -> list[str]:
    chosen = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [item for item in chosen if item not in allowed]
    if unknown or not chosen:
        raise UsageError(f"unknown {what} {', '.join(unknown) or repr(text)}; choose from {', '.join(allowed)}")
    return list(dict.fromkeys(chosen))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="adarray bench adbench",
        description="ADBench's GMM, BA, hand and LSTM problems: objective F and derivative J times (minimum per "
                    "call), J/F, first-call times and peak memory for adarray and the installed peers, with "
                    "correctness checks. Writes a Markdown table, a CSV and PNG plots.")
    parser.add_argument("--problems", default="gmm,ba,hand,lstm", help="comma-separated: gmm,ba,hand,lstm")
    parser.add_argument("--sizes", default=None, choices=("tiny", "small", "medium"),
                        help="instance set (default small; tiny with --quick)")
    parser.add_argument("--tools", default=",".join(TOOLS), help="comma-separated: " + ",".join(TOOLS))
    parser.add_argument("--backend", default="numpy",
                        help="adarray's backends, comma-separated: numpy (listed as 'adarray'), numba "
                             "('adarray-numba'), jax (our programs lowered to XLA, 'adarray-jax', beside "
                             "jax.jit(jax.grad); the NumPy backend runs too, as the reference of the checks); "
                             "default numpy")
    parser.add_argument("--out", default="results", help="output folder (default results/)")
    parser.add_argument("--data", default=None, help="ADBench data folder, laid out as ADBench's data/ (default "
                                                     "$ADBENCH_DATA, else the tiny and small instances shipped in "
                                                     "benchmarks/adbench/instances)")
    parser.add_argument("--threads", type=int, default=1, help="threads for every library (default 1, as ADBench)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: tiny instances, short timing (min-time 0.01 s, 3 runs)")
    parser.add_argument("--min-time", type=float, default=None, help="seconds a timed batch must last (0.5)")
    parser.add_argument("--runs", type=int, default=None, help="timed batches at most (10)")
    parser.add_argument("--time-limit", type=float, default=None, help="seconds of sampling per measurement (5)")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="budget per tool and problem: once spent, that tool skips the problem's larger "
                             "instances (ADBench skips sizes after a timeout)")
    parser.add_argument("--profile", action="store_true",
                        help="adarray only: per-primitive time breakdown of F and J from the interpreter")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    return parser


def chosen_backends(args) -> list[str]:
    """adarray's backends from --backend; with jax the NumPy backend runs too, as the checks' reference."""
    backends = _csv_choice(args.backend, ("numpy", "numba", "jax"), "backend")
    if "numpy" not in backends and "jax" in backends:
        backends.insert(0, "numpy")
    return backends


def tool_label(backend: str) -> str:
    """adarray's row name for a backend: 'adarray' (numpy, the reference) or 'adarray-<backend>'."""
    return "adarray" if backend == "numpy" else f"adarray-{backend}"


def available(tool: str) -> bool:
    module = {"adarray": "adarray", "adarray-jax": "jax", "jax": "jax", "torch": "torch", "autograd": "autograd"}[tool]
    return importlib.util.find_spec(module) is not None


def _tool_module(tool: str):
    return importlib.import_module(f"benchmarks.adbench.tool_{tool.replace('-', '_')}")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def header(tools, modules, args, protocol, size) -> str:
    import numpy

    versions = [f"Python {platform.python_version()}", f"NumPy {numpy.__version__}"]
    versions += [f"{tool} {modules[tool].version()}" for tool in tools if tool in modules]
    return "\n".join([
        "# ADBench: adarray and peers side by side",
        "",
        f"- date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {_cpu_model()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        f"- threads: {args.threads} for every library ({', '.join(THREAD_VARIABLES[:3])}, torch.set_num_threads, "
        "XLA intra-op); float64 everywhere",
        f"- versions: {', '.join(versions)}",
        f"- instances: {size}; protocol: min-time {protocol.min_time} s, at most {protocol.runs} runs, "
        f"time limit {protocol.time_limit} s per measurement",
    ])


def _protocol(args):
    from .harness import Protocol

    quick = Protocol(min_time=0.01, runs=3, time_limit=0.5)
    full = Protocol(min_time=0.5, runs=10, time_limit=5.0)
    base = quick if args.quick else full
    return Protocol(args.min_time if args.min_time is not None else base.min_time,
                    args.runs if args.runs is not None else base.runs,
                    args.time_limit if args.time_limit is not None else base.time_limit)


def run(args, problems, tools, size) -> int:
    from adarray.progress import Progress

    from .data import catalogue, data_root
    from .harness import Result, peak_memory_mb, return_freed_memory, run_task
    from .report import markdown, plot, write_csv

    protocol = _protocol(args)
    root = data_root(args.data, catalogue(problems, size))
    modules, notes, backends = {}, [], {}
    for tool in tools:
        if not available(tool):
            notes.append(f"- {tool}: not installed, skipped (pip install -e \".[bench]\")")
            continue
        module = _tool_module(tool)
        if hasattr(module, "configure"):
            module.configure(args.threads)
        if tool == "adarray":
            for backend in chosen_backends(args):
                label = tool_label(backend)
                if backend == "jax":   # lowered to XLA by its own tool module, not by use_backend
                    if not available("adarray-jax"):
                        notes.append("- adarray-jax: JAX is not installed, skipped (pip install -e \".[jax]\")")
                        continue
                    modules[label] = _tool_module(label)
                else:
                    modules[label], backends[label] = module, backend
        else:
            modules[tool] = module
    instances = catalogue(problems, size)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    measured = []  # (tool, result, derivative call) for the memory pass after all timing
    spent: dict = {}
    progress = Progress(len(instances) * len(modules), "adarray bench adbench")
    try:
        for instance in instances:
            data = instance.load(root)
            expected = None
            for tool, module in modules.items():
                progress.start(f"{instance.problem} {instance.name} {tool}")
                key = (tool, instance.problem)
                if args.max_seconds is not None and spent.get(key, 0.0) > args.max_seconds:
                    results.append(Result(tool, instance.problem, instance.name, data.size,
                                          status="skipped: over --max-seconds"))
                    continue
                start = time.perf_counter()
                try:
                    if tool in backends:
                        module.use_backend(backends[tool])
                    task = module.prepare(instance.problem, data)
                    result, derivative = run_task(tool, instance.problem, instance.name, data, task, protocol,
                                                  expected)
                    measured.append((tool, result, task.derivative))
                    if tool in backends and result.status == "ok" and expected is None:
                        expected = derivative
                except Exception as error:  # one tool failing on one instance must not stop the others
                    result = Result(tool, instance.problem, instance.name, data.size,
                                    status=f"error: {type(error).__name__}: {str(error)[:200]}")
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - start
                results.append(result)
        return_freed_memory()
    finally:
        progress.close()
    progress = Progress(len(measured), "adarray bench adbench: peak memory")
    try:
        for tool, result, derivative in measured:
            progress.start(f"{result.problem} {result.instance} {tool}")
            if tool in backends:
                modules[tool].use_backend(backends[tool])
            result.peak_mb = peak_memory_mb(derivative)
    finally:
        progress.close()
    text = markdown(results, list(modules), header(list(modules), modules, args, protocol, size))
    if notes:
        text += "\n" + "\n".join(notes) + "\n"
    print(text)
    (out / "adbench_results.md").write_text(text)
    write_csv(results, out / "adbench_results.csv")
    written = [] if args.no_plots else plot(results, list(modules), out)
    saved = ["adbench_results.md", "adbench_results.csv"] + [p.name for p in written]
    if not written and not args.no_plots:
        saved.append("(no plots: matplotlib is not installed)")
    print(f"wrote {', '.join(saved)} to {out}/")
    return 0 if all(r.status in ("ok",) or r.status.startswith("skipped") for r in results) else 1


def profile(args, problems, size) -> int:
    """Per-primitive self time of adarray's F and J on each instance (first call excluded); with the Numba
    backend, time per compiled group."""
    if "numba" in chosen_backends(args):
        return profile_compiled(args, problems, size)
    from .data import catalogue, data_root
    from .harness import block
    from .profiling import PrimitiveProfiler
    from .tool_adarray import prepare

    protocol = _protocol(args)
    root = data_root(args.data, catalogue(problems, size))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sections = [f"# adarray: per-primitive time of the NumPy interpreter ({size} instances)"]
    for instance in catalogue(problems, size):
        data = instance.load(root)
        compile_profile = PrimitiveProfiler()
        with compile_profile:  # fresh functions: traced and compiled here, so their programs carry the wrappers
            task = prepare(instance.problem, data)
            block(task.objective())
            block(task.derivative())
        for label, fn in (("F", task.objective), ("J", task.derivative)):
            recorder, calls = PrimitiveProfiler(), 0
            with recorder:
                start = time.perf_counter()
                while calls == 0 or time.perf_counter() - start < protocol.min_time:
                    block(fn())
                    calls += 1
            title = f"{instance.problem} {instance.name}: {label}, {calls} calls, " \
                    f"{1e3 * recorder.wall / calls:.2f} ms per call"
            sections.append(recorder.table(top=12, title=title))
    text = "\n\n".join(sections) + "\n"
    print(text)
    (out / "adbench_profile.md").write_text(text)
    print(f"wrote adbench_profile.md to {out}/")
    return 0


def profile_compiled(args, problems, size) -> int:
    """Time per group of the Numba backend's compiled programs for adarray's F and J, with compile times."""
    from adarray.backends.numba import runtime

    from .data import catalogue, data_root
    from .harness import block
    from .profiling import CompiledProfiler
    from .tool_adarray import prepare, use_backend

    protocol = _protocol(args)
    root = data_root(args.data, catalogue(problems, size))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sections = [f"# adarray, Numba backend: time per compiled group ({size} instances)"]
    use_backend("numba")
    with CompiledProfiler() as profiler:
        for instance in catalogue(problems, size):
            data = instance.load(root)
            task = prepare(instance.problem, data)
            compiled_before = len(runtime.COMPILE_LOG)
            block(task.objective())
            block(task.derivative())
            compiles = runtime.COMPILE_LOG[compiled_before:]
            notes = ", ".join(f"{name} {equations} equations {seconds:.2f} s{' (disk cache)' if cached else ''}"
                              for name, equations, seconds, cached in compiles)
            sections.append(f"**{instance.problem} {instance.name}**: compiled {notes or 'nothing new'}")
            for label, fn in (("F", task.objective), ("J", task.derivative)):
                profiler.reset()
                calls, start = 0, time.perf_counter()
                while calls == 0 or time.perf_counter() - start < protocol.min_time:
                    block(fn())
                    calls += 1
                wall = time.perf_counter() - start
                title = (f"{instance.problem} {instance.name}: {label}, {calls} calls, "
                         f"{1e3 * wall / calls:.3f} ms per call")
                sections.append(profiler.table(wall, calls, title=title))
    use_backend("numpy")
    text = "\n\n".join(sections) + "\n"
    print(text)
    (out / "adbench_profile_numba.md").write_text(text)
    print(f"wrote adbench_profile_numba.md to {out}/")
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0
    try:
        problems = _csv_choice(args.problems, ("gmm", "ba", "hand", "lstm"), "problem")
        tools = _csv_choice(args.tools, TOOLS, "tool")
        if args.threads < 1:
            raise UsageError("--threads must be at least 1")
        for name in ("min_time", "time_limit", "max_seconds"):
            if getattr(args, name) is not None and getattr(args, name) < 0:
                raise UsageError(f"--{name.replace('_', '-')} must not be negative")
        if args.runs is not None and args.runs < 1:
            raise UsageError("--runs must be at least 1")
        chosen_backends(args)
    except UsageError as error:
        print(f"adarray bench adbench: error: {error}", file=sys.stderr)
        return 2
    if not threads_fixed(args.threads):
        return relaunch("benchmarks.adbench", argv, args.threads)
    size = args.sizes or ("tiny" if args.quick else "small")
    try:
        if args.profile:
            return profile(args, problems, size)
        if "adarray" in tools:  # adarray first: the peers' derivatives are checked against its own
            tools = ["adarray"] + [t for t in tools if t != "adarray"]
        return run(args, problems, tools, size)
    except FileNotFoundError as error:
        print(f"adarray bench adbench: error: {error}", file=sys.stderr)
        return 2
