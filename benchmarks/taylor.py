"""Taylor mode and SafeRate (issue 13).

Two sections, printed as Markdown tables:

cost      Time per call of the order-k Taylor coefficients of t -> f(x0 + t v), k = 1..8, for
            mlp          a 2-layer tanh MLP, 64 inputs, 128 hidden units, 64 outputs, summed;
            mlp-weights  the squared loss of a 64-256-16 tanh MLP on 256 samples along a direction
                         in the first layer's weights (compute-bound: 2 matmuls of 256 x 64 x 256);
            fold         a 1,000-step `fold` of c -> tanh(0.9 c + 0.1 x) on a 64-vector carry;
          by `ad.taylor(f, k)` (one Taylor program: O(k^2) work), by k nested `ad.jvp` (the k-th
          derivative only: 2^k growth) and by `jax.experimental.jet` under `jax.jit` (JAX's jet has
          no rule for `scan`: the fold row says so). Each program is staged once (not timed), then the
          minimum over `--repeat` timings of `--number` calls is reported, and its ratio to the primal.
          Checks: adarray's k-th coefficient against nested jvp's derivative / k! and JAX's (rtol 1e-8).
saferate  SafeRate (adarray.optim.safe_rate, no learning rate) next to Adam and plain gradient descent
          with their learning rates tuned on a grid (the best final loss), on (x - 3)^4 from 0, a
          logistic regression and a small MLP; the loss after 10/30/100 steps, and a plot of the
          losses (matplotlib, from the `bench` extra) written to `--plot`.

    adarray bench taylor [--section cost,saferate] [--orders 1-8] [--quick] [--plot docs/safe_rate.png]
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

import adarray as ad
import adarray.nn as nn
import adarray.numpy as anp
from adarray.optim import safe_rate

SECTIONS = ("cost", "saferate")


# --- cost --------------------------------------------------------------------------------------------------

def _problems(rng):
    w1, b1 = rng.normal(size=(128, 64)) / 8.0, rng.normal(size=128) * 0.1
    w2, b2 = rng.normal(size=(64, 128)) / 11.0, rng.normal(size=64) * 0.1
    a = rng.normal(size=64) * 0.5

    def mlp(x):
        return anp.sum(anp.tanh(w2 @ anp.tanh(w1 @ x + b1) + b2))

    def fold(x):
        return anp.sum(ad.fold(lambda c, _: (anp.tanh(0.9 * c + 0.1 * x), None), x, length=1000)[0])

    def mlp_jax(x):
        import jax.numpy as jnp

        return jnp.sum(jnp.tanh(w2 @ jnp.tanh(w1 @ x + b1) + b2))

    def fold_jax(x):
        import jax
        import jax.numpy as jnp

        return jnp.sum(jax.lax.scan(lambda c, _: (jnp.tanh(0.9 * c + 0.1 * x), None), x, None, length=1000)[0])

    x0, v = rng.normal(size=64) * 0.5 + a * 0.0, rng.normal(size=64)

    # the loss of an MLP along a direction in weight space (SafeRate's line): 256 samples of 64 features,
    # 256 hidden units, 16 outputs; x is the first layer's weights (16,384 numbers), compute-bound
    data, target = rng.normal(size=(256, 64)), rng.normal(size=(256, 16))
    w_out = rng.normal(size=(256, 16)) / 16.0

    def mlp_weights(w):
        return anp.mean((anp.tanh(data @ anp.reshape(w, (64, 256))) @ w_out - target) ** 2)

    def mlp_weights_jax(w):
        import jax.numpy as jnp

        return jnp.mean((jnp.tanh(data @ jnp.reshape(w, (64, 256))) @ w_out - target) ** 2)

    w0, dw = rng.normal(size=64 * 256) / 8.0, rng.normal(size=64 * 256) / 8.0
    return {"mlp": (mlp, mlp_jax, x0, v), "fold": (fold, fold_jax, x0, v),
            "mlp-weights": (mlp_weights, mlp_weights_jax, w0, dw)}


def _nested_jvp(f, order):
    """t -> (d/dt)^order f(x0 + t v) by nested ad.jvp, staged by ad.jit."""
    def path(t, x0, v):
        return f(x0 + t * v)

    derivative = path
    for _ in range(order):
        derivative = (lambda g: lambda t, x0, v: ad.jvp(lambda s: g(s, x0, v), (t,), (1.0,))[1])(derivative)
    return ad.jit(derivative)


def _time(fn, number, repeat):
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _jax_jet(f_jax, order):
    try:
        import jax
        from jax.experimental.jet import jet
    except ImportError:
        return None, "JAX not installed"
    jax.config.update("jax_enable_x64", True)

    @jax.jit
    def coefficients(x0, v):
        zeros = [v * 0.0] * (order - 1)
        _, terms = jet(f_jax, (x0,), ([v] + zeros,))
        return terms[-1] / math.factorial(order)  # derivative terms -> coefficient

    return coefficients, None


def run_cost(args, rng) -> int:
    failures = 0
    problems = _problems(rng)
    print("\n### Cost of order-k Taylor coefficients (ms per call; in parentheses: times the primal)\n")
    print("| problem | k | primal | ad.taylor(f, k) | k nested ad.jvp | jax.experimental.jet |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.problems:
        f, f_jax, x0, v = problems[name]
        primal = ad.jit(f)
        primal(x0)
        t_primal = _time(lambda primal=primal, x0=x0: primal(x0), args.number, args.repeat)
        for k in args.orders:
            taylor = ad.taylor(f, k)
            coefficients = taylor(x0, v)
            t_taylor = _time(lambda taylor=taylor, x0=x0, v=v: taylor(x0, v), args.number, args.repeat)
            cells = [f"{t_primal * 1e3:.3f}", f"{t_taylor * 1e3:.3f} ({t_taylor / t_primal:.1f}x)"]
            if k <= args.max_nested:
                nested = _nested_jvp(f, k)
                start = time.perf_counter()
                derivative = nested(0.0, x0, v)
                staging = time.perf_counter() - start
                t_nested = _time(lambda nested=nested, x0=x0, v=v: nested(0.0, x0, v), args.number, args.repeat)
                want = float(derivative) / math.factorial(k)
                if not np.isclose(float(coefficients[k]), want, rtol=1e-8, atol=1e-12):
                    print(f"WRONG: {name} k={k}: ad.taylor {float(coefficients[k])} vs nested jvp {want}")
                    failures += 1
                cells.append(f"{t_nested * 1e3:.3f} ({t_nested / t_primal:.1f}x; staged in {staging:.1f} s)")
            else:
                cells.append("not run (--max-nested)")
            jax_fn, reason = _jax_jet(f_jax, k)
            if jax_fn is None:
                cells.append(reason)
            else:
                try:
                    got = jax_fn(x0, v)
                    t_jax = _time(lambda fn=jax_fn, x0=x0, v=v: fn(x0, v).block_until_ready(),
                                  args.number, args.repeat)
                    wrong = not np.isclose(float(got), float(coefficients[k]), rtol=1e-8, atol=1e-12)
                    if wrong:  # a peer's wrong value is reported in its cell, not counted as our failure
                        print(f"JAX jet differs: {name} k={k}: {float(got)} vs ad.taylor {float(coefficients[k])}")
                    cells.append(f"{t_jax * 1e3:.3f} ({t_jax / t_primal:.1f}x)" + (f"; wrong: {float(got):.3g}"
                                                                                   if wrong else ""))
                except Exception as error:  # noqa: BLE001 - JAX's jet lacks rules (scan): report which
                    cells.append(f"no rule ({type(error).__name__}: {str(error)[:30]})")
            print(f"| {name} | {k} | " + " | ".join(cells) + " |", flush=True)
    return failures


# --- saferate ----------------------------------------------------------------------------------------------

def _saferate_problems(rng):
    features = rng.normal(size=(200, 3))
    labels = (features @ np.array([1.5, -2.0, 0.5]) + 0.3 * rng.normal(size=200) > 0).astype(float)

    def logistic(p):
        logits = features @ p["w"] + p["b"]
        return anp.mean(nn.softplus(logits) - labels * logits)

    x = rng.normal(size=(64, 2))
    y = np.sin(2.0 * x[:, :1]) * x[:, 1:]

    def mlp(p):
        return anp.mean((anp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] - y) ** 2)

    mlp_start = {"w1": 0.5 * rng.normal(size=(2, 16)), "b1": np.zeros(16), "w2": 0.5 * rng.normal(size=(16, 1))}
    return {
        "(x - 3)^4 from 0": (lambda z: (z - 3.0) ** 4, 0.0),
        "logistic regression": (logistic, {"w": np.zeros(3), "b": np.zeros(())}),
        "MLP 2-16-1, tanh": (mlp, mlp_start),
    }


def _descend(loss, start, steps, rate, adam: bool):
    grad = ad.value_and_grad(loss)
    params = ad.tree_util.tree_map(lambda p: np.asarray(p, np.float64), start)
    first = ad.tree_util.tree_map(np.zeros_like, params)
    second = ad.tree_util.tree_map(np.zeros_like, params)
    losses = []
    for t in range(1, steps + 1):
        value, g = grad(params)
        losses.append(float(value))
        if not np.isfinite(value):
            return losses + [math.inf] * (steps + 1 - len(losses))
        if adam:
            first = ad.tree_util.tree_map(lambda m, d: 0.9 * m + 0.1 * d, first, g)
            second = ad.tree_util.tree_map(lambda s, d: 0.999 * s + 0.001 * d * d, second, g)
            params = ad.tree_util.tree_map(
                lambda p, m, s, t=t: p - rate * (m / (1 - 0.9 ** t)) / (np.sqrt(s / (1 - 0.999 ** t)) + 1e-8),
                params, first, second)
        else:
            params = ad.tree_util.tree_map(lambda p, d: p - rate * d, params, g)
    losses.append(float(grad(params)[0]))
    return losses


def _tuned(loss, start, steps, adam: bool):
    """The learning rate on a grid with the lowest final loss, and its losses."""
    best = None
    for rate in (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0):
        with np.errstate(all="ignore"):
            losses = _descend(loss, start, steps, rate, adam)
        final = losses[-1] if np.isfinite(losses[-1]) else math.inf
        if best is None or final < best[0]:
            best = (final, rate, losses)
    return best[1], best[2]


def run_saferate(args, rng) -> int:
    steps = 30 if args.quick else 100
    results = {}
    print(f"\n### SafeRate against tuned Adam and gradient descent ({steps} steps; loss after 10 / 30 / {steps})\n")
    print(f"| problem | method | learning rate | loss after 10 | after 30 | after {steps} | never increased |")
    print("|---|---|---:|---:|---:|---:|:---:|")
    failures = 0
    for name, (loss, start) in _saferate_problems(rng).items():
        safe = safe_rate(loss, start, steps=steps)
        adam_rate, adam = _tuned(loss, start, steps, adam=True)
        gd_rate, gd = _tuned(loss, start, steps, adam=False)
        results[name] = {"SafeRate": safe.losses, f"Adam (lr {adam_rate:g})": adam, f"GD (lr {gd_rate:g})": gd}
        for method, rate, losses in (("SafeRate", "none", safe.losses), ("Adam, tuned", f"{adam_rate:g}", adam),
                                     ("gradient descent, tuned", f"{gd_rate:g}", gd)):
            monotone = bool(np.all(np.diff(losses) <= 0))
            if method == "SafeRate" and not monotone:
                failures += 1
            print(f"| {name} | {method} | {rate} | {losses[10]:.4g} | {losses[30]:.4g} | {losses[steps]:.4g} | "
                  f"{'yes' if monotone else 'no'} |", flush=True)
    if args.plot:
        _plot(results, args.plot)
    return failures


def _plot(results, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no plot: matplotlib is in the bench extra)")
        return
    figure, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.8))
    for axis, (name, curves) in zip(axes, results.items()):
        for label, losses in curves.items():
            shown = np.maximum(np.asarray(losses, np.float64), 1e-300)
            axis.semilogy(shown, label=label)
        axis.set_title(name)
        axis.set_xlabel("step")
        axis.set_ylabel("loss")
        axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"\nplot written to {path}")


def _orders(text):
    if "-" in text:
        low, high = text.split("-")
        return list(range(int(low), int(high) + 1))
    return [int(k) for k in text.split(",")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="adarray bench taylor", description=__doc__.splitlines()[0])
    parser.add_argument("--section", default="cost,saferate", help="cost, saferate or both (default)")
    parser.add_argument("--orders", type=_orders, default=list(range(1, 9)), help="orders k, e.g. 1-8 or 1,2,4")
    parser.add_argument("--problems", default="mlp,mlp-weights,fold", help="cost problems: mlp, mlp-weights, fold")
    parser.add_argument("--max-nested", type=int, default=8, help="highest order run by nested jvp (default 8)")
    parser.add_argument("--number", type=int, default=5, help="calls per timing (default 5)")
    parser.add_argument("--repeat", type=int, default=5, help="timings; the minimum is reported (default 5)")
    parser.add_argument("--plot", default=None, help="write the SafeRate plot here (a .png)")
    parser.add_argument("--quick", action="store_true", help="orders 1-3, fewer steps: a smoke test")
    args = parser.parse_args(argv)
    args.problems = args.problems.split(",")
    if args.quick:
        args.orders, args.number, args.repeat = [k for k in args.orders if k <= 3], 1, 1
    failures = 0
    sections = args.section.split(",")
    for section in sections:
        if section not in SECTIONS:
            parser.error(f"unknown section {section!r}; known: {', '.join(SECTIONS)}")
    if "cost" in sections:
        failures += run_cost(args, np.random.default_rng(0))
    if "saferate" in sections:  # its own seed: the same problems whether or not the cost section ran
        failures += run_saferate(args, np.random.default_rng(0))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
