"""The `adarray` command line: demo, ir, check, bench.

    adarray demo                                   fit a small MLP, print the gradient IR, check it
    adarray ir model.py:loss --shapes "f64[3,4],f64[4]"   print a function's IR and its gradient's
    adarray check                                  gradients of built-in functions vs finite differences
    adarray bench NAME [...]                       a benchmark of the package `benchmarks`: adbench,
                                                   parallel, mixed, overhead, reversible, taylor, solvers, jacfwd,
                                                   train, ode, tiers

`main(argv)` returns the exit code: 0 on success, 1 when a check fails or the
traced function raises, 2 for a bad command line (unknown file or function,
malformed shape spec).
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import re
import sys
import time

import numpy as np

import adarray as ad
import adarray.numpy as anp
from adarray.core.pytree import flatten, unflatten
from adarray.core.types import Aval, is_float
from adarray.testing import tolerances

DTYPES = {"f64": np.float64, "f32": np.float32, "i64": np.int64, "i32": np.int32, "bool": np.bool_}
_AVAL_RE = re.compile(r"\s*(\w+)\s*\[([^\]]*)\]\s*")


class UsageError(Exception):
    """A problem with the command line itself (exit code 2)."""


# --- finite differences -------------------------------------------------------------------------


def _relative_error(exact: float, numerical: float, floor: float) -> float:
    """|exact - numerical| / max(|numerical|, floor): relative, but absolute for tiny derivatives."""
    return abs(exact - numerical) / max(abs(numerical), floor)


def gradient_check(fn, args, argnums, coordinates=None, rng=None):
    """Max relative error of ad.grad(fn, argnums) against central differences.

    Checks every coordinate of the differentiated arguments, or `coordinates`
    randomly chosen ones. Returns (max relative error, passed) under the
    float64 tolerance policy of adarray.testing (|g - fd| <= atol + rtol |fd|).
    """
    tol = tolerances(np.float64)
    floor = tol.atol / tol.rtol
    args = [np.asarray(a, np.float64) if is_float(np.asarray(a).dtype) else a for a in args]
    grads = ad.grad(fn, argnums=tuple(argnums))(*args)
    value = ad.jit(fn)
    positions = [(n, i) for n in argnums for i in range(np.size(args[n]))]
    if coordinates is not None and coordinates < len(positions):
        rng = rng or np.random.default_rng(0)
        chosen = rng.choice(len(positions), size=coordinates, replace=False)
        positions = [positions[k] for k in sorted(chosen)]
    worst = 0.0
    for n, i in positions:
        plus, minus = list(args), list(args)
        plus[n], minus[n] = args[n].copy(), args[n].copy()
        plus[n].flat[i] += tol.eps
        minus[n].flat[i] -= tol.eps
        numerical = (float(value(*plus)) - float(value(*minus))) / (2 * tol.eps)
        exact = float(np.asarray(grads[argnums.index(n)]).flat[i])
        worst = max(worst, _relative_error(exact, numerical, floor))
    return worst, worst <= tol.rtol


def _verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


# --- adarray demo -------------------------------------------------------------------------------


def _mlp(params, x):
    hidden = anp.tanh(x @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def _mlp_loss(params, x, y):
    """Mean squared error of a 2-layer tanh MLP."""
    return anp.mean((_mlp(params, x) - y) ** 2)


def _demo_problem(seed: int):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=(64, 2))
    y = np.sin(x[:, 0]) * np.cos(x[:, 1])  # the function to learn
    hidden = 16
    params = {
        "w1": rng.standard_normal((2, hidden)) / np.sqrt(2.0),
        "b1": np.zeros(hidden),
        "w2": rng.standard_normal(hidden) / np.sqrt(hidden),
        "b2": np.zeros(()),
    }
    return params, x, y


def _flat_loss(tree):
    """The demo loss as a function of one flat parameter vector (for finite differences)."""
    leaves, treedef = flatten(tree)
    shapes = [np.shape(leaf) for leaf in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]

    def loss(theta, x, y):
        parts, start = [], 0
        for shape, size in zip(shapes, sizes):
            parts.append(anp.reshape(theta[start:start + size], shape))
            start += size
        return _mlp_loss(unflatten(treedef, parts), x, y)

    theta = np.concatenate([np.ravel(leaf) for leaf in leaves])
    return loss, theta


def cmd_demo(args) -> int:
    start = time.perf_counter()
    params, x, y = _demo_problem(args.seed)
    step = ad.value_and_grad(_mlp_loss)
    print(f"Fitting a 2-layer tanh MLP (2 -> 16 -> 1) to sin(x0) cos(x1) on {len(x)} points "
          f"by gradient descent (learning rate {args.lr}, {args.steps} steps)")
    every = max(1, args.steps // 10)
    for i in range(args.steps + 1):
        loss, grads = step(params, x, y)
        if i % every == 0 or i == args.steps:
            print(f"  step {i:4d}  loss {float(loss):.6f}")
        if i < args.steps:
            params = {k: params[k] - args.lr * grads[k] for k in params}

    print("\nThe gradient program, ad.make_ir(ad.grad(loss))(params, x, y):")
    program = ad.make_ir(ad.grad(_mlp_loss))(params, x, y)
    print(program)
    names = [f"params[{k!r}]" for k in sorted(params)] + ["x", "y"]  # dicts flatten in key order
    print("inputs: " + ", ".join(f"{n}: {a}" for n, a in zip(names, program.in_avals)))
    print("outputs: the gradients of " + ", ".join(names[:len(params)]))

    loss, theta = _flat_loss(params)
    rng = np.random.default_rng(args.seed + 1)
    error, passed = gradient_check(loss, [theta, x, y], [0], coordinates=6, rng=rng)
    print(f"\nGradient vs central finite differences on 6 random coordinates: "
          f"max relative error {error:.2e}  {_verdict(passed)}")
    print(f"(finished in {time.perf_counter() - start:.2f} s)")
    return 0 if passed else 1


# --- adarray ir ---------------------------------------------------------------------------------


def parse_avals(spec: str) -> list[Aval]:
    """'f64[3,4],f64[4],f64[]' -> [Aval((3, 4), f64), Aval((4,), f64), Aval((), f64)]."""
    avals, position = [], 0
    spec = spec.strip()
    while position < len(spec):
        match = _AVAL_RE.match(spec, position)
        if match is None:
            raise UsageError(f"cannot read a type at {spec[position:]!r} in --shapes {spec!r}; "
                             "expected e.g. \"f64[3,4],i64[4],f64[]\"")
        name, dims = match.group(1), match.group(2).strip()
        if name not in DTYPES:
            raise UsageError(f"unknown dtype {name!r} in --shapes {spec!r}; use one of {', '.join(DTYPES)}")
        try:
            shape = tuple(int(d) for d in dims.split(",")) if dims else ()
        except ValueError:
            raise UsageError(f"bad dimensions [{dims}] in --shapes {spec!r}; use integers, e.g. f64[3,4]") from None
        if any(d < 0 for d in shape):
            raise UsageError(f"negative dimension in {match.group(0).strip()!r}")
        avals.append(Aval(shape, DTYPES[name]))
        position = match.end()
        if position < len(spec):
            if spec[position] != ",":
                raise UsageError(f"expected ',' at {spec[position:]!r} in --shapes {spec!r}")
            position += 1
            if position == len(spec):
                raise UsageError(f"--shapes {spec!r} ends with a comma")
    return avals


def load_function(target: str):
    """'path/to/file.py:name' -> the function `name` defined in that file."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:FUNCTION, got {target!r}")
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    module_name = "_adarray_cli_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path} (is it a .py file?)")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's file failed to run: report it as a usage problem
        raise UsageError(f"importing {path} failed: {type(error).__name__}: {error}") from None
    finally:
        sys.path.pop(0)
    fn = getattr(module, name, None)
    if fn is None:
        raise UsageError(f"{path} has no function {name!r}")
    if not callable(fn):
        raise UsageError(f"{path}:{name} is not a function (it is of type {type(fn).__name__})")
    return fn


def example_inputs(avals, seed=None):
    """Zero-filled arrays of the given avals, or seeded random ones."""
    if seed is None:
        return [np.zeros(a.shape, a.dtype) for a in avals]
    rng = np.random.default_rng(seed)
    values = []
    for a in avals:
        if is_float(a.dtype):
            values.append(rng.standard_normal(a.shape).astype(a.dtype))
        elif a.dtype == np.bool_:
            values.append(rng.random(a.shape) < 0.5)
        else:
            values.append(rng.integers(0, 4, a.shape).astype(a.dtype))
    return values


def cmd_ir(args) -> int:
    fn = load_function(args.target)
    avals = parse_avals(args.shapes)
    try:
        inspect.signature(fn).bind(*avals)
    except TypeError as error:
        count = f"{len(avals)} argument" + ("" if len(avals) == 1 else "s")
        raise UsageError(f"{args.target} cannot be called with {count} ({error}); "
                         "give one type per argument in --shapes") from None
    except ValueError:  # no signature available (builtins): let tracing report problems
        pass
    inputs = example_inputs(avals, args.seed)
    name = getattr(fn, "__name__", args.target)
    signature = ", ".join(str(a) for a in avals)
    try:
        program = ad.make_ir(fn)(*inputs)
    except ad.Error as error:
        print(f"adarray: tracing {name}({signature}) failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(f"# {name}({signature})")
    print(program)
    outs = program.out_avals
    float_args = tuple(i for i, a in enumerate(avals) if is_float(a.dtype))
    if len(outs) != 1:
        reason = f"it returns {len(outs)} arrays ({', '.join(map(str, outs))}), not one scalar"
    elif outs[0].shape != () or not is_float(outs[0].dtype):
        reason = f"its output is {outs[0]}, not a float scalar (f64[] or f32[])"
    elif not float_args:
        reason = "none of its arguments is a float array"
    else:
        reason = None
    if reason is not None:
        print(f"\n# no gradient: {reason}")
        return 0
    try:
        gradient = ad.make_ir(ad.grad(fn, argnums=float_args))(*inputs)
    except ad.Error as error:
        print(f"\n# no gradient: {type(error).__name__}: {error}")
        return 0
    print(f"\n# grad({name}, argnums={float_args})")
    print(gradient)
    return 0


# --- adarray check ------------------------------------------------------------------------------


def _check_cases():
    """(name, function, arguments, argnums): built-in functions with known-good gradients."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(5)
    matrix = rng.standard_normal((4, 3))
    return [
        ("sum(sin(x) * x)", lambda x: anp.sum(anp.sin(x) * x), [x], [0]),
        ("logsumexp(x)", lambda x: anp.logsumexp(x), [x], [0]),
        ("sum(tanh(A @ v)) wrt A, v", lambda a, v: anp.sum(anp.tanh(a @ v)), [matrix, x[:3]], [0, 1]),
        ("prod(x) with a zero", lambda x: anp.prod(x), [np.array([2.0, 0.0, 3.0, -1.5])], [0]),
        ("sum(cumprod(x)) with zeros", lambda x: anp.sum(anp.cumprod(x)),
         [np.array([2.0, 0.0, 0.5, 3.0])], [0]),
        ("sum(x.at[i].multiply(u)) wrt x, u", lambda x, u: anp.sum(x.at[np.array([0, 2, 0])].multiply(u)),
         [np.array([1.5, -2.0, 0.5]), np.array([2.0, 0.7, -1.2])], [0, 1]),
        ("sum(where(x > 0, sqrt(x), x))", lambda x: anp.sum(anp.where(x > 0, anp.sqrt(x), x)),
         [np.array([0.5, -1.0, 2.0, -4.0])], [0]),
        ("mean(softplus(x) / (1 + x**2))", lambda x: anp.mean(anp.softplus(x) / (1.0 + x ** 2)), [x], [0]),
        ("d/dx of grad(sin(x) * x)", lambda x: ad.grad(lambda t: anp.sin(t) * t)(x), [np.array(0.7)], [0]),
    ]


def cmd_check(args) -> int:
    failures = 0
    print("Gradients (ad.grad) vs central finite differences, float64:")
    for name, fn, fn_args, argnums in _check_cases():
        try:
            error, passed = gradient_check(fn, fn_args, argnums)
        except Exception as exc:  # a broken rule must show up as a FAIL line, not a traceback
            print(f"  FAIL  {name:38s} {type(exc).__name__}: {exc}")
            failures += 1
            continue
        failures += not passed
        print(f"  {_verdict(passed)}  {name:38s} max relative error {error:.1e}")
    total = len(_check_cases())
    print(f"{total - failures}/{total} checks passed")
    return 0 if failures == 0 else 1


# --- adarray bench ------------------------------------------------------------------------------

# benchmark name -> (module of the benchmarks package, its file, what it measures); each has main(argv) -> exit status
BENCHMARKS = {
    "adbench": ("benchmarks.adbench.run", "adbench/run.py",
                "ADBench GMM, BA, hand and LSTM against the installed peers (JAX, PyTorch, autograd)"),
    "parallel": ("benchmarks.parallel_primitives", "parallel_primitives.py",
                 "reduce, scan and reduce_by_index: gradient / primal, specialised vs general rules"),
    "mixed": ("benchmarks.mixed_mode", "mixed_mode.py",
              "HM-LSTM cell: mixed mode (NumPy, Numba) vs reverse mode over where"),
    "overhead": ("benchmarks.overhead", "overhead.py",
                 "per-call cost of cached ad.jit / ad.grad against NumPy written by hand"),
    "solvers": ("benchmarks.solvers", "solvers.py",
                "least squares: adarray LM/GN against SciPy, sparse BA Jacobians against JAX, colouring orders"),
    "jacfwd": ("benchmarks.jacfwd_cost", "jacfwd_cost.py",
               "forward mode made cheap: jacfwd / grad time and memory for n = 1e2..1e5 (sum, dot, GMM, LSTM step)"),
    "reversible": ("benchmarks.reversible", "reversible.py",
                   "reverse computing (adarray.reversible) vs fold checkpoints and lax.scan; Bessel, sparse, GMM"),
    "taylor": ("benchmarks.taylor", "taylor.py",
               "Taylor mode cost k = 1..8 (MLP, 1,000-step fold) vs nested jvp and JAX's jet; SafeRate vs Adam, GD"),
    "train": ("benchmarks.train", "train.py",
              "a 2-layer MLP trained on digits: first and steady epoch, adarray's backends vs jax.jit and PyTorch"),
    "ode": ("benchmarks.ode", "ode.py",
            "a Lotka-Volterra fit with odeint: gradient and whole-fit time, adarray's backends vs JAX's odeint"),
    "tiers": ("benchmarks.tiers", "tiers.py",
              "the caller's call times while the default tier compiles: in a child process vs on a thread"),
}


def _bench_list(indent: str = "  ") -> str:
    width = max(map(len, BENCHMARKS))
    return "\n".join(f"{indent}{name:<{width}}  {entry[2]}" for name, entry in BENCHMARKS.items())


def _import_benchmark(name: str):
    """The benchmark's module from the `benchmarks` package (installed with adarray, not part of the
    library: it is imported by name here, at run time, and by nothing else)."""
    module_name, _, _ = BENCHMARKS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("benchmarks"):
            raise
        raise UsageError(f"the {name!r} benchmark is not available: {module_name} is not installed (install "
                         "adarray from a source checkout: pip install -e '.[bench]')") from None
    if not callable(getattr(module, "main", None)):
        raise UsageError(f"{module_name} has no main(argv) function")
    return module


def cmd_bench(args) -> int:
    if args.benchmark is None:
        print("usage: adarray bench [--profile] {" + ",".join(BENCHMARKS) + "} [options]\n" + _bench_list() +
              "\n  --profile  per-primitive time breakdown of adarray's interpreter\n"
              "  (adarray bench NAME --help shows a benchmark's options)", file=sys.stderr)
        return 2
    module = _import_benchmark(args.benchmark)
    rest = list(args.rest)
    if args.benchmark == "adbench":
        return module.main((["--profile"] if args.profile else []) + rest)
    if not args.profile:
        return module.main(rest)
    profiling = importlib.import_module("benchmarks.adbench.profiling")  # by name, like the benchmarks

    with profiling.PrimitiveProfiler() as profile:  # programs compiled during the run are measured
        code = module.main(rest)
    print("\n" + profile.table(top=20, title=f"adarray bench {args.benchmark}: time per primitive"))
    return code


# --- entry point --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="adarray",
        description="adarray: automatic differentiation of array programs (traced IR, NumPy backend).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="benchmarks (adarray bench NAME [options]; they live in the repository's benchmarks/ folder):\n"
               + _bench_list(),
    )
    parser.add_argument("--version", action="version", version=f"adarray {ad.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser("demo", help="fit a small MLP by gradient descent, print the gradient IR, "
                                            "check the gradient against finite differences")
    demo.add_argument("--steps", type=int, default=200, help="gradient-descent steps (default 200)")
    demo.add_argument("--lr", type=float, default=0.2, help="learning rate (default 0.2)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the synthetic data (default 0)")
    demo.set_defaults(run=cmd_demo)

    ir = commands.add_parser("ir", help="print the IR of FILE.py:FUNC and of its gradient",
                             description="Trace FUNC from FILE at the given argument types and print its "
                                         "IR; if it returns a float scalar, also print the IR of its "
                                         "gradient with respect to every float argument.")
    ir.add_argument("target", metavar="FILE.py:FUNC", help="the file and the function in it")
    ir.add_argument("--shapes", default="", metavar="TYPES",
                    help='argument types, e.g. "f64[3,4],i64[4],f64[]" (dtypes: f64 f32 i64 i32 bool; '
                         "f64[] is a scalar)")
    ir.add_argument("--seed", type=int, default=None,
                    help="trace at seeded random inputs instead of zeros (the IR does not depend on values)")
    ir.set_defaults(run=cmd_ir)

    check = commands.add_parser("check", help="self-check: gradients of built-in functions vs finite "
                                              "differences")
    check.set_defaults(run=cmd_check)

    bench = commands.add_parser(
        "bench", help="run a benchmark: " + ", ".join(BENCHMARKS) + " (listed below)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a benchmark from the repository's benchmarks/ folder:\n" + _bench_list() +
                    "\nOptions after the name go to the benchmark (adarray bench NAME --help).")
    bench.add_argument("--profile", action="store_true",
                       help="per-primitive time breakdown of adarray's NumPy interpreter during the run")
    bench.add_argument("benchmark", nargs="?", choices=tuple(BENCHMARKS), help="which benchmark")
    bench.add_argument("rest", nargs=argparse.REMAINDER, help="options of the benchmark")
    bench.set_defaults(run=cmd_bench)
    return parser


def main(argv=None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exit_:  # --help, --version, or an argparse usage error
        return exit_.code if isinstance(exit_.code, int) else 0
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.run(args)
    except UsageError as error:
        print(f"adarray {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `adarray ir ... | head` stopped reading: no traceback, and none at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
