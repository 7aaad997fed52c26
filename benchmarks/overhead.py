"""Per-call overhead of adarray's staged functions against the same NumPy code written by hand.

A 10-operation function of two 1,000-element arrays, then a sum: NumPy by hand (forward only, and
forward plus a hand-written reverse sweep) against cached `ad.jit(f)` and `ad.grad(f)` calls. The
difference is what tracing once and interpreting a program costs per call (the issue asks for a small
fraction of a millisecond).

    adarray bench overhead [--size 1000] [--number 2000] [--repeat 15] [--backend numpy|numba]
"""
from __future__ import annotations

import argparse
import timeit

import numpy as np

import adarray as ad
import adarray.numpy as anp


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="adarray bench overhead", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000, help="elements per array (default 1000)")
    parser.add_argument("--number", type=int, default=2000, help="calls per timing (default 2000)")
    parser.add_argument("--repeat", type=int, default=15, help="timings, the minimum is reported (default 15)")
    parser.add_argument("--backend", default="numpy", choices=("numpy", "numba"),
                        help="the backend staged calls run on (default numpy)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=args.size), rng.normal(size=args.size)
    previous = ad.set_backend(args.backend)
    try:
        return _measure(args, x, y)
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
        times[label] = min(timeit.repeat(fn, number=args.number, repeat=args.repeat)) / args.number * 1e6
        print(f"| {label} | {times[label]:.1f} |")
    print(f"\noverhead per call: ad.jit {times['ad.jit(f)'] - times['NumPy forward']:.1f} µs, ad.grad "
          f"{times['ad.grad(f)'] - times['NumPy forward + hand-written gradient']:.1f} µs "
          f"(gradient program: {len(ad.make_ir(ad.grad(f))(x, y).eqns)} equations)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
