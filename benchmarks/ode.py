"""Fitting an ODE's parameters: Lotka-Volterra with `adarray.scipy.integrate.odeint` against JAX's odeint.

The problem: prey and predators, dy/dt = (a y0 - b y0 y1, c y0 y1 - d y1), y(0) = (10, 5), observed at --points times
in [0, --horizon] (data from scipy's solve_ivp at (a, b, c, d) = (1.1, 0.4, 0.1, 0.4), DOP853 at 1e-12, so that no
tool fits its own solver's output). The loss is the mean squared error of odeint's solution (rtol = atol = 1.4e-8,
both tools' default); the fit starts 20% off and takes --steps Adam steps (learning rate 0.01), the same work for
every tool.

Tools, side by side in one process: adarray's `ad.jit(ad.value_and_grad(loss))` with no backend named (the
default), and on the numpy, numba and jax backends (whichever are installed); JAX's `jax.jit(jax.value_and_grad)`
over `jax.experimental.ode.odeint` (the continuous adjoint: a different derivative of the same loss, equal up to
the tolerances). Reported: the steady time of one value-and-gradient call (minimum of --repeat), the first call
(tracing, compiling), the whole fit (first call included) and its final loss.

Checks (a failure prints WRONG and exits 1): every tool's gradient at the start against central differences of
adarray's loss (relative 1e-5), and the final parameters of every tool against the first tool's (relative 1e-4).

    adarray bench ode [--tools default,numpy,numba,jax,jax.jit] [--steps 30] [--horizon 10] [--points 21]
                      [--repeat 5] [--threads 1] [--clock wall|cpu] [--out DIR] [--plot PATH] [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import adarray as ad
import adarray.numpy as anp
from adarray.scipy.integrate import odeint

from .timing import CLOCKS, available, chosen_tools, pyplot, relaunch, threads_fixed, write_results

TOOLS = ("default", "numpy", "numba", "jax", "jax.jit")
TRUTH = np.array([1.1, 0.4, 0.1, 0.4])
START = TRUTH * np.array([1.2, 0.8, 1.2, 0.8])
Y0 = np.array([10.0, 5.0])
LEARNING_RATE = 0.01
LABELS = {"default": "adarray, no backend named", "numpy": "adarray, numpy", "numba": "adarray, numba",
          "jax": "adarray, jax", "jax.jit": "jax.jit, JAX's odeint"}


def lotka_volterra(y, t, theta):
    prey, predators = y[0], y[1]
    return anp.stack([theta[0] * prey - theta[1] * prey * predators,
                      theta[2] * prey * predators - theta[3] * predators])


def observations(times):
    """The populations at `times` for TRUTH, from scipy (an independent solver)."""
    from scipy.integrate import solve_ivp

    def rate(t, y):
        return [TRUTH[0] * y[0] - TRUTH[1] * y[0] * y[1], TRUTH[2] * y[0] * y[1] - TRUTH[3] * y[1]]

    return solve_ivp(rate, (times[0], times[-1]), Y0, t_eval=times, method="DOP853", rtol=1e-12, atol=1e-12).y.T


def adarray_loss(times, data):
    def loss(theta):
        return anp.mean((odeint(lotka_volterra, Y0, times, theta) - data) ** 2)

    return loss


def value_and_gradient(tool, times, data):
    """(value_and_grad function of theta returning NumPy values, version string) for `tool`."""
    if tool == "jax.jit":
        import jax
        import jax.numpy as jnp
        from jax.experimental.ode import odeint as jax_odeint

        jax.config.update("jax_enable_x64", True)

        def rate(y, t, theta):
            return jnp.stack([theta[0] * y[0] - theta[1] * y[0] * y[1], theta[2] * y[0] * y[1] - theta[3] * y[1]])

        def loss(theta):
            return jnp.mean((jax_odeint(rate, jnp.asarray(Y0), jnp.asarray(times), theta) - jnp.asarray(data)) ** 2)

        compiled = jax.jit(jax.value_and_grad(loss))

        def call(theta):
            value, gradient = compiled(jnp.asarray(theta))
            return float(value), np.asarray(gradient)

        return call, f"JAX {jax.__version__}"
    backend = None if tool == "default" else tool
    compiled = ad.jit(ad.value_and_grad(adarray_loss(times, data)), backend=backend)

    def call(theta):
        value, gradient = compiled(theta)
        return float(value), np.asarray(gradient)

    return call, f"adarray {ad.__version__}, {backend or 'no backend named'}"



def fit(call, steps: int, clock):
    """Adam from START for `steps` steps: (seconds, seconds of the first call, final loss, final theta), the first
    call (tracing, compiling) included."""
    theta, first, second = START.copy(), np.zeros(4), np.zeros(4)
    beta1, beta2, epsilon = 0.9, 0.999, 1e-8
    begin = clock()
    for step in range(1, steps + 1):
        _, gradient = call(theta)
        if step == 1:
            first_call = clock() - begin
        first = beta1 * first + (1 - beta1) * gradient
        second = beta2 * second + (1 - beta2) * gradient ** 2
        theta = theta - LEARNING_RATE * (first / (1 - beta1 ** step)) / (np.sqrt(second / (1 - beta2 ** step)) +
                                                                          epsilon)
    seconds = clock() - begin
    return seconds, first_call, call(theta)[0], theta


def finite_differences(loss, theta, h=1e-6):
    """Central differences of `loss` at theta (relative steps h)."""
    loss, grads = ad.jit(loss), []
    for i in range(theta.size):
        step = np.zeros_like(theta)
        step[i] = h * max(1.0, abs(theta[i]))
        grads.append((float(loss(theta + step)) - float(loss(theta - step))) / (2 * step[i]))
    return np.array(grads)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adarray bench ode", description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, from {', '.join(TOOLS)}")
    parser.add_argument("--steps", type=int, default=30, help="Adam steps of the fit (default 30)")
    parser.add_argument("--horizon", type=float, default=10.0, help="last observation time (default 10)")
    parser.add_argument("--points", type=int, default=21, help="observation times, from 0 (default 21)")
    parser.add_argument("--repeat", type=int, default=5, help="timed gradient calls, the minimum is reported")
    parser.add_argument("--threads", type=int, default=1, help="threads for every library (default 1)")
    parser.add_argument("--clock", default="wall", choices=tuple(CLOCKS),
                        help="wall time, or this process's processor time (steadier on a busy machine)")
    parser.add_argument("--out", help="also write ode.md and ode.csv to this folder")
    parser.add_argument("--plot", help="write a bar chart of the gradient and fit times to this PNG")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: horizon 1, 3 points, 2 steps, 1 repeat")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:  # a usage error is exit status 2, returned rather than raised (adarray bench calls main)
        args = parser.parse_args(argv)
        tools = chosen_tools(parser, args.tools, TOOLS)
        if args.threads < 1 or args.steps < 1 or args.points < 2 or args.repeat < 1:
            parser.error("--threads, --steps and --repeat must be at least 1, --points at least 2")
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0
    if not threads_fixed(args.threads):
        return relaunch("benchmarks.ode", argv, args.threads)
    if args.quick:
        args.horizon, args.points, args.steps, args.repeat = 1.0, 3, 2, 1
    return run(args, tools)


def run(args, tools) -> int:
    clock = CLOCKS[args.clock]
    times = np.linspace(0.0, args.horizon, args.points)
    data = observations(times)
    reference = finite_differences(adarray_loss(times, data), START)
    print(f"# Lotka-Volterra fit: {args.points} observations in [0, {args.horizon:g}], {args.steps} Adam steps, "
          f"float64, {args.threads} thread(s) on {os.cpu_count()} cores, {args.clock} clock")
    rows, lines, failures, first_theta = [], [], [], None
    header = ("| tool | gradient ms | first call s | fit s | final loss | gradient vs differences |\n"
              "|---|---:|---:|---:|---:|---:|")
    print(header, flush=True)
    for tool in tools:
        if not available(tool):
            print(f"| {tool} | not installed, skipped | | | | |", flush=True)
            continue
        call, version = value_and_gradient(tool, times, data)
        seconds, first, loss, theta = fit(call, args.steps, clock)  # from scratch: the first call is in the fit
        gradient = call(START)[1]
        steady = min(_timed(call, clock) for _ in range(args.repeat))
        error = float(np.max(np.abs(gradient - reference) / np.maximum(np.abs(reference), 1e-8)))
        if error > 1e-5:
            failures.append(f"{tool}: gradient differs from central differences by {error:.1e}")
        if first_theta is None:
            first_theta = theta
        elif np.max(np.abs(theta - first_theta) / np.abs(first_theta)) > 1e-4:
            failures.append(f"{tool}: the fit ends at {theta}, not at {first_theta}")
        row = (tool, version, steady * 1e3, first, seconds, loss, error)
        rows.append(row)
        lines.append(f"| {tool} ({version}) | {row[2]:.2f} | {first:.2f} | {seconds:.2f} | {loss:.4g} | {error:.1e} |")
        print(lines[-1], flush=True)
    for failure in failures:
        print(f"WRONG: {failure}")
    if args.out:
        write_results(args.out, "ode", header, lines,
                      ["tool", "version", "gradient_ms", "first_call_s", "fit_s", "final_loss", "gradient_error"], rows)
    if args.plot and rows:
        _plot(rows, args.plot, args.steps)
    return 1 if failures else 0


def _timed(call, clock) -> float:
    begin = clock()
    call(START)
    return clock() - begin


def _plot(rows, path, steps) -> None:
    plt = pyplot()
    if plt is None:
        return
    labels = [LABELS.get(row[0], row[0]) for row in rows]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
    left.barh(labels, [row[2] for row in rows], color="tab:blue")
    left.set_xscale("log")
    left.set_xlabel("one value and gradient (ms, log)")
    right.barh(labels, [row[3] for row in rows], color="tab:gray", label="first call")
    right.barh(labels, [row[4] - row[3] for row in rows], left=[row[3] for row in rows], color="tab:orange",
               label=f"the other {steps - 1} steps")
    right.set_xlabel(f"whole fit, {steps} Adam steps (s)")
    right.legend(fontsize=8)
    right.set_yticks([])
    figure.suptitle("Lotka-Volterra parameter fit: adarray's odeint (backends) and JAX's", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"plot: {path}")


if __name__ == "__main__":
    sys.exit(main())
