"""Per-call overhead of adarray's staged functions against the same NumPy code written by hand.

Three tables, measured in one process:
1. A 10-operation function of two 1,000-element arrays, then a sum: NumPy by hand (forward only, and forward plus
   a hand-written reverse sweep) against cached `ad.jit(f)` and `ad.grad(f)` calls.
2. Programs of 10, 100 and 1,000 equations on 10-element arrays (where the arithmetic costs little): the cached
   call's time per equation against the same NumPy calls by hand (the difference is the interpreter's dispatch),
   and the one-time cost per equation of tracing (`ad.make_ir`) and of a first `ad.jit` / `ad.grad` call (trace,
   transform, simplify, compile, run).
3. Un-jitted gradients: `ad.grad(f)(x, y)` with a new `ad.grad` every call, against `jax.grad(f)(x, y)` (JAX runs
   it op by op) and autograd's `grad(f)(x, y)`, when installed.

    adarray bench overhead [--size 1000] [--number 2000] [--repeat 15] [--backend numpy|numba] [--clock wall|cpu]
                           [--quick]
"""
from __future__ import annotations

import argparse
import itertools
import time
import timeit

import numpy as np

import adarray as ad
import adarray.numpy as anp

LENGTHS = (10, 100, 1000)
WARM_UP = 10
# wall: elapsed time; cpu: this process's processor time, which other processes on a busy machine do not inflate
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def f(x, y):
    a = anp.sin(x)
    b = a * y
    c = anp.exp(-b)
    d = c + x
    e = anp.tanh(d)
    g = e * e
    h = g - y
    return anp.sum(anp.log1p(h * h))


def f_numpy(x, y):
    e = np.tanh(np.exp(-np.sin(x) * y) + x)
    h = e * e - y
    return np.sum(np.log1p(h * h))


def grad_numpy(x, y):
    """The forward sweep and a hand-written reverse sweep of f with respect to x."""
    a = np.sin(x)
    c = np.exp(-a * y)
    e = np.tanh(c + x)
    h = e * e - y
    d_bar = 2.0 * h / (1.0 + h * h) * 2.0 * e * (1.0 - e * e)
    return d_bar - d_bar * c * y * np.cos(x)


def chain(length: int, module):
    """A function of (x, y) whose program has `length` equations: sin, multiply, add and tanh in turn, then a sum,
    written out line by line with `module` (adarray.numpy to be staged, numpy for the calls by hand)."""
    steps = ("x = np.sin(x)", "x = x * y", "x = x + y", "x = np.tanh(x)")
    lines = [f"def chain{length}(x, y):"] + [f"    {step}" for step in itertools.islice(itertools.cycle(steps),
                                                                                        length - 1)]
    namespace = {"np": module}
    exec(compile("\n".join(lines + ["    return np.sum(x)"]), f"<chain{length}>", "exec"), namespace)
    return namespace[f"chain{length}"]


def per_call(fn, number: int, repeat: int, clock: str = "wall") -> float:
    """Minimum seconds per call over `repeat` timings of `number` calls, after WARM_UP calls (the NumPy
    interpreter compiles a program to Python on its 8th call)."""
    for _ in range(WARM_UP):
        fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=CLOCKS[clock])) / number


def once(make_and_call, clock: str = "wall") -> float:
    """Seconds of one call of make_and_call()."""
    timer = CLOCKS[clock]
    start = timer()
    make_and_call()
    return timer() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="adarray bench overhead", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000, help="elements per array of table 1 (default 1000)")
    parser.add_argument("--number", type=int, default=2000, help="calls per timing (default 2000)")
    parser.add_argument("--repeat", type=int, default=15, help="timings, the minimum is reported (default 15)")
    parser.add_argument("--backend", default="numpy", choices=("numpy", "numba"),
                        help="the backend staged calls run on (default numpy)")
    parser.add_argument("--clock", default="wall", choices=tuple(CLOCKS),
                        help="wall time, or this process's processor time (steadier on a busy machine)")
    parser.add_argument("--quick", action="store_true", help="few calls, no 1,000-equation program, no JAX: a smoke "
                                                             "run")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.number, args.repeat = min(args.size, 100), 3, 1
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=args.size), rng.normal(size=args.size)
    previous = ad.set_backend(args.backend)
    try:
        status = _measure(args, x, y)
        if status == 0:
            status = _program_lengths(args)
        if status == 0:
            status = _unjitted(args, x, y)
        return status
    finally:
        ad.set_backend(previous)


def _measure(args, x, y) -> int:
    jit_f, grad_f = ad.jit(f), ad.grad(f)
    if not (np.isclose(jit_f(x, y), f_numpy(x, y)) and np.allclose(grad_f(x, y), grad_numpy(x, y), rtol=1e-12)):
        print("WRONG: adarray and the hand-written NumPy code disagree")
        return 1
    rows = [("NumPy forward", lambda: f_numpy(x, y)), ("ad.jit(f)", lambda: jit_f(x, y)),
            ("NumPy forward + hand-written gradient", lambda: grad_numpy(x, y)), ("ad.grad(f)", lambda: grad_f(x, y))]
    times = {}
    print(f"| call ({args.size} elements, 10 operations, {args.backend} backend) | µs per call |\n|---|---:|")
    for label, fn in rows:
        times[label] = per_call(fn, args.number, args.repeat, args.clock) * 1e6
        print(f"| {label} | {times[label]:.1f} |")
    print(f"\noverhead per call: ad.jit {times['ad.jit(f)'] - times['NumPy forward']:.1f} µs, ad.grad "
          f"{times['ad.grad(f)'] - times['NumPy forward + hand-written gradient']:.1f} µs "
          f"(gradient program: {len(ad.make_ir(ad.grad(f))(x, y).eqns)} equations)")
    return 0


def _program_lengths(args) -> int:
    """Table 2: per-equation costs of programs of LENGTHS equations on 10-element arrays."""
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, 10), rng.uniform(-1, 1, 10)
    print("\n| equations | ad.jit µs/call | NumPy by hand µs/call | dispatch µs/equation | trace µs/equation | "
          "first ad.jit call µs/equation | ad.grad µs/call | first ad.grad call µs/equation |\n"
          "|---:|---:|---:|---:|---:|---:|---:|---:|")
    extra = []  # (equations, seconds beyond NumPy by hand)
    for length in LENGTHS[:2] if args.quick else LENGTHS:
        by_hand, staged = chain(length, np), chain(length, anp)
        equations = len(ad.make_ir(staged)(x, y).eqns)
        # each on a new function object, so that nothing is cached
        trace, first_jit, first_grad = (once(lambda make=make, n=length: make(chain(n, anp))(x, y), args.clock)
                                        for make in (ad.make_ir, ad.jit, ad.grad))
        jitted, gradient = ad.jit(staged), ad.grad(staged)
        if not np.isclose(jitted(x, y), by_hand(x, y), rtol=1e-12):
            print(f"WRONG: the {length}-equation program disagrees with NumPy")
            return 1
        number = max(1, args.number * 10 // length)
        t_jit, t_hand, t_grad = (per_call(lambda fn=fn: fn(x, y), number, args.repeat, args.clock)
                                 for fn in (jitted, by_hand, gradient))
        print(f"| {equations} | {t_jit * 1e6:.1f} | {t_hand * 1e6:.1f} | {(t_jit - t_hand) / equations * 1e6:.2f} | "
              f"{trace / equations * 1e6:.1f} | {first_jit / equations * 1e6:.1f} | {t_grad * 1e6:.1f} | "
              f"{first_grad / equations * 1e6:.1f} |")
        extra.append((equations, t_jit - t_hand))
    (short, short_extra), (long, long_extra) = extra[0], extra[-1]
    print(f"\nper call: {short_extra * 1e6:.1f} µs beyond NumPy for {short} equations (mostly fixed: arguments, cache "
          f"look-up); each further equation {(long_extra - short_extra) / (long - short) * 1e6:.2f} µs")
    return 0


def _unjitted(args, x, y) -> int:
    """Table 3: a new gradient function on every call, adarray against JAX and autograd (when installed)."""
    rows = [("adarray: ad.grad(f)(x, y)", lambda: ad.grad(f)(x, y))]
    expected = grad_numpy(x, y)
    if not args.quick:
        try:
            import jax
            import jax.numpy as jnp

            jax.config.update("jax_enable_x64", True)

            def f_jax(x, y):
                e = jnp.tanh(jnp.exp(-jnp.sin(x) * y) + x)
                h = e * e - y
                return jnp.sum(jnp.log1p(h * h))

            xj, yj = jnp.asarray(x), jnp.asarray(y)
            rows.append((f"JAX {jax.__version__}: jax.grad(f)(x, y), not jitted",
                         lambda: jax.grad(f_jax)(xj, yj).block_until_ready()))
        except ImportError:
            print("\n(JAX not installed: its row is skipped)")
        try:
            import autograd
            import autograd.numpy as agnp

            def f_autograd(x, y):
                e = agnp.tanh(agnp.exp(-agnp.sin(x) * y) + x)
                h = e * e - y
                return agnp.sum(agnp.log1p(h * h))

            rows.append(("autograd: autograd.grad(f)(x, y)", lambda: autograd.grad(f_autograd)(x, y)))
        except ImportError:
            print("\n(autograd not installed: its row is skipped)")
    print(f"\n| un-jitted gradient, a new grad function per call ({args.size} elements) | µs per call |\n|---|---:|")
    for label, fn in rows:
        if not np.allclose(np.asarray(fn()), expected, rtol=1e-10):
            print(f"WRONG: {label} disagrees with the hand-written gradient")
            return 1
        print(f"| {label} | {per_call(fn, max(1, args.number // 10), args.repeat, args.clock) * 1e6:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
