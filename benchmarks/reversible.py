"""Reversible programs (adarray.reversible): gradients by reverse computing against stored tapes and checkpoints.

Five sections, each a Markdown table (every variant in this one process, side by side):

loop    A leapfrog integrator of 1,000 anharmonic oscillators (q, p of 500 each), --steps steps (10^5), the
        gradient of sum(q_T^2) with respect to (q_0, p_0) by
          reverse computing: rv (NumPy interpreter), rv (Numba), when installed;
          ad.fold with checkpoint="all", 100 and "binomial" (stored carries, recomputed blocks);
          JAX: jit(grad) of lax.scan, when installed.
        Time of one gradient call (tracing and compilation excluded: a warm-up call on 10 steps for the
        interpreters, the same length for fold and JAX, whose programs depend on it), peak memory as the growth of
        the resident set during the call, and for the NumPy variants the states that peak holds (tracemalloc peak /
        the 8 kB of one state).
stack   A map that forgets its input, y <- 1.3 sin(y) on a 1,000-element state, --steps / 10 steps: reversible only
        with a stack that keeps every input (rv.push / rv.pop, NiLang's PUSH!/POP!), whose memory is the known
        cost: the stack holds one state per step, and the gradient a second stack of their cotangents. Next to
        ad.fold with checkpoint="all" and "binomial". Peak memory and states as in `loop`, and the stack's own
        size.
bessel  J_2(1) by its series with a reversible while: gradient / primal for the interpreter and Numba (NiLang's
        paper: 53 ns call, 231 ns gradient, zero allocation).
sparse  1000 x 1000 CSR matrices, density 0.01 and 0.05: sparse.dot(A, B)^2 (two patterns) and sum((A @ v)^2),
        forward and gradient with respect to the stored values (and v), for the "index" method (gathers and
        segment_sum) and the "reversible" one (reversible kernels, interpreted and Numba). NiLang: backward /
        forward 1.6-2.8.
gmm     ADBench's GMM objective (n = 1000 points, d = 2, K = 5) written reversibly (scalar loops), objective
        and gradient, interpreted and Numba, next to the array program under ad.grad.
Checks: every gradient against a reference (the interpreter's, or the array program's), at most 1e-8 relative;
a failed check prints WRONG and the command exits 1.

    python benchmarks/reversible.py [--steps 100000] [--section loop,stack,bessel,sparse,gmm] [--quick]
        [--no-peers]
    adarray bench reversible ...
"""
from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import math
import sys
import time

import numpy as np
import scipy.sparse

import adarray as ad
import adarray.numpy as anp
import adarray.reversible as rv
import adarray.sparse as sp

from . import timing
from .adbench.harness import peak_memory_mb
from .timing import traced_peak

best_time = functools.partial(timing.best_time, min_total=0.3, max_repeats=50)  # minimum seconds per call

SECTIONS = ("loop", "stack", "bessel", "sparse", "gmm")
STATE = 500  # q and p: a 1,000-element state
DT = 0.01
HALF_DT = 0.5 * DT
LOG_ATOL = math.log(1e-17)
RTOL = 1e-8
HAVE_NUMBA = importlib.util.find_spec("numba") is not None
failures: list[str] = []


# --- the programs --------------------------------------------------------------------------------------------

@rv.reversible
def leapfrog(q, p, steps):
    for _ in range(steps):
        p -= HALF_DT * (q + 0.1 * q ** 3)
        q += DT * p
        p -= HALF_DT * (q + 0.1 * q ** 3)


def leapfrog_body(carry, _):
    q, p = carry
    p = p - HALF_DT * (q + 0.1 * q ** 3)
    q = q + DT * p
    p = p - HALF_DT * (q + 0.1 * q ** 3)
    return (q, p), None


@rv.reversible
def sine_map(out, x, steps):
    """y <- 1.3 sin(y), `steps` times from y = x, then out += sum(y^2). A step forgets its input, so the input goes
    on a stack of `steps` slots (the memory that makes the step reversible)."""
    s = rv.alloc(rv.stack(steps))
    y = rv.alloc(anp.zeros_like(x))
    with rv.compute():
        y += x
        for _ in range(steps):
            t = rv.alloc(anp.zeros_like(x))
            t += 1.3 * anp.sin(y)
            rv.push(s, y)
            rv.swap(y, t)
            rv.free(t, 0.0)
    out += anp.sum(y ** 2)
    rv.uncompute()
    rv.free(y, 0.0)
    rv.free(s, rv.stack())


def sine_body(y, _):
    return 1.3 * anp.sin(y), None


@rv.reversible
def besselj(out, nu, z):
    k = rv.alloc(0)
    sign = rv.alloc(1.0)
    log_half_z = rv.alloc(0.0)
    exponent = rv.alloc(0.0)
    term = rv.alloc(0.0)
    total = rv.alloc(0.0)
    with rv.compute():
        log_half_z += anp.log(z / 2)
        exponent += nu * log_half_z
        for i in range(1, nu + 1):
            exponent -= anp.log(i)
        total += anp.exp(exponent)
        while rv.while_(exponent > LOG_ATOL, k > 0):
            k += 1
            rv.neg(sign)
            exponent += 2 * log_half_z - anp.log(k) - anp.log(k + nu)
            with rv.compute():
                term += sign * anp.exp(exponent)
            total += term
            rv.uncompute()
    out += total
    rv.uncompute()
    rv.free(total, 0.0)
    rv.free(term, 0.0)
    rv.free(exponent, 0.0)
    rv.free(log_half_z, 0.0)
    rv.free(sign, 1.0)
    rv.free(k, 0)


@rv.reversible
def logsumexp(out, v):
    s = rv.alloc(0.0)
    with rv.compute():
        for k in range(len(v)):
            s += anp.exp(v[k] - v[0])
    out += v[0] + anp.log(s)
    rv.uncompute()
    rv.free(s, 0.0)


@rv.reversible
def squared_mahalanobis(sq, means, icf, x, i, k):
    t = rv.alloc(0.0)
    for r in range(x.shape[1]):
        with rv.compute():
            t += anp.exp(icf[k, r]) * (x[i, r] - means[k, r])
            for c in range(r):
                t += icf[k, x.shape[1] + c * (x.shape[1] - 1) - c * (c - 1) // 2 + r - c - 1] * (x[i, c] - means[k, c])
        sq += t ** 2
        rv.uncompute()
    rv.free(t, 0.0)


@rv.reversible
def main_term(term, alphas, means, icf, x, i, k):
    term += alphas[k]
    for r in range(x.shape[1]):
        term += icf[k, r]
    sq = rv.alloc(0.0)
    with rv.compute():
        squared_mahalanobis(sq, means, icf, x, i, k)
    term -= 0.5 * sq
    rv.uncompute()
    rv.free(sq, 0.0)


@rv.reversible
def gmm_objective(out, alphas, means, icf, x, gamma, m):
    terms = rv.alloc(anp.zeros(len(alphas)))
    for i in range(len(x)):
        with rv.compute():
            for k in range(len(alphas)):
                main_term(terms[k], alphas, means, icf, x, i, k)
        logsumexp(out, terms)
        rv.uncompute()
    rv.free(terms, 0.0)
    t = rv.alloc(0.0)
    with rv.compute():
        logsumexp(t, alphas)
    out -= len(x) * t
    rv.uncompute()
    rv.free(t, 0.0)
    for k in range(len(alphas)):
        for r in range(x.shape[1]):
            out += 0.5 * gamma ** 2 * anp.exp(2.0 * icf[k, r]) - m * icf[k, r]
        for j in range(x.shape[1], icf.shape[1]):
            out += 0.5 * gamma ** 2 * icf[k, j] ** 2


def gmm_array(alphas, means, icf, x, gamma, m):
    n, d = x.shape
    k = alphas.shape[0]
    index = np.zeros((d, d), dtype=np.int64)
    position = 1
    for column in range(d):
        for row in range(column + 1, d):
            index[row, column] = position
            position += 1
    log_diagonal = icf[:, :d]
    lower = anp.concatenate([anp.zeros((k, 1)), icf[:, d:]], axis=1)[:, index]
    centred = x[:, None, :] - means[None, :, :]
    scaled = anp.exp(log_diagonal) * centred + anp.einsum("kij,nkj->nki", lower, centred)
    sum_log_diagonal = anp.sum(log_diagonal, axis=1)
    inner = alphas + sum_log_diagonal - 0.5 * anp.sum(scaled * scaled, axis=2)
    prior = anp.sum(0.5 * gamma ** 2 * (anp.sum(anp.exp(2.0 * log_diagonal), axis=1)
                                        + anp.sum(icf[:, d:] ** 2, axis=1)) - m * sum_log_diagonal)
    return anp.sum(anp.logsumexp(inner, axis=1)) - n * anp.logsumexp(alphas) + prior


# --- helpers ---------------------------------------------------------------------------------------------------

class backend:
    """with backend("numba"): reversible programs run compiled by Numba inside the block."""

    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        self.previous = rv.set_reversible_backend(self.mode)

    def __exit__(self, *exc):
        rv.set_reversible_backend(self.previous)


def check(label, got, want) -> str:
    got, want = np.concatenate([np.ravel(g) for g in got]), np.concatenate([np.ravel(w) for w in want])
    error = float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-300))
    if not error <= RTOL:
        failures.append(f"{label}: relative difference {error:.1e}")
        return f"WRONG ({error:.1e})"
    return f"{error:.0e}"


# --- loop ------------------------------------------------------------------------------------------------------

def timed_peak(fn):
    """(seconds, peak MB) of one call: the growth of the resident set while it runs."""
    box = {}

    def run():
        begin = time.perf_counter()
        box["result"] = fn()
        box["seconds"] = time.perf_counter() - begin

    gc.collect()
    peak = peak_memory_mb(run)
    return box["seconds"], peak, box["result"]


def loop_section(steps, peers):
    rng = np.random.default_rng(0)
    q0, p0 = rng.standard_normal(STATE), rng.standard_normal(STATE)
    state_mb = 2 * STATE * 8 / 2 ** 20
    print(f"\n## loop: leapfrog, {2 * STATE:,}-element state, {steps:,} steps, gradient of sum(q_T^2) by (q_0, p_0)\n")
    print("| method | seconds | peak MB | states (peak / 8 kB) | time / checkpoint=\"all\" | check |")
    print("|---|---|---|---|---|---|", flush=True)

    def reversible_gradient(n):
        return ad.grad(lambda q, p: anp.sum(leapfrog(q, p, n)[0] ** 2), argnums=(0, 1))

    rows, reference = [], None
    variants = [("reverse computing, rv (NumPy)", "numpy")] + ([("reverse computing, rv (Numba)", "numba")]
                                                                 if HAVE_NUMBA else [])
    for label, mode in variants:
        with backend(mode):
            reversible_gradient(10)(q0, p0)  # tracing, and compilation for Numba, on a short run
            gradient = reversible_gradient(steps)
            seconds, peak, result = timed_peak(lambda gradient=gradient: gradient(q0, p0))
            if mode == "numpy":
                traced = traced_peak(lambda: reversible_gradient(min(steps, 2_000))(q0, p0)) / 2 ** 20 / state_mb
                label += f" (tracemalloc: {traced:.1f} states)"
        reference = result if reference is None else reference
        rows.append((label, seconds, peak, check(label, result, reference)))
    for policy in ("all", 100, "binomial"):
        def loss(q, p, policy=policy):
            (q, _), _ = ad.fold(leapfrog_body, (q, p), length=steps, checkpoint=policy)
            return anp.sum(q ** 2)

        gradient = ad.jit(ad.grad(loss, argnums=(0, 1)))
        seconds, peak, result = timed_peak(lambda gradient=gradient: gradient(q0, p0))  # tracing: ms of seconds
        rows.append((f'ad.fold, checkpoint={policy!r}'.replace("'", '"'), seconds, peak,
                     check(f"fold {policy}", result, reference)))
    if peers and importlib.util.find_spec("jax") is not None:
        rows.append(_jax_loop(q0, p0, steps, reference))
    all_seconds = next(r[1] for r in rows if r[0].endswith('"all"'))
    for label, seconds, peak, verdict in rows:
        print(f"| {label} | {seconds:.2f} | {_mb(peak)} | {peak / state_mb:.0f} | {seconds / all_seconds:.2f}x | "
              f"{verdict} |", flush=True)
    print("\nOne gradient call each (after a warm-up that traces and compiles). Peak MB: growth of the resident set "
          "during the call (VmHWM); states: that peak in units of one state (q and p, 8 kB), so about the number of "
          "states the method keeps alive. tracemalloc's count for the interpreter (2,000 steps) includes the "
          "cotangents and the temporaries of one statement.")


def _mb(value):
    return "n/a" if value is None else f"{value:.1f}"


def _jax_loop(q0, p0, steps, reference):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def body(carry, _):
        q, p = carry
        p = p - HALF_DT * (q + 0.1 * q ** 3)
        q = q + DT * p
        p = p - HALF_DT * (q + 0.1 * q ** 3)
        return (q, p), None

    def loss(q, p):
        (q, _), _ = jax.lax.scan(body, (q, p), None, length=steps)
        return jnp.sum(q ** 2)

    gradient = jax.jit(jax.grad(loss, argnums=(0, 1)))
    jax.block_until_ready(gradient(q0, p0))
    seconds, peak, result = timed_peak(lambda: jax.block_until_ready(gradient(q0, p0)))
    return ("JAX jit(grad(lax.scan))", seconds, peak, check("jax", [np.asarray(r) for r in result], reference))


# --- stack -----------------------------------------------------------------------------------------------------

def stack_section(steps):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(2 * STATE)
    state_mb = 2 * STATE * 8 / 2 ** 20
    print(f"\n## stack: y <- 1.3 sin(y), {2 * STATE:,}-element state, {steps:,} steps, gradient of sum(y_T^2) by y_0\n")
    print("| method | seconds | peak MB | states (peak / 8 kB) | stack MB | check |")
    print("|---|---|---|---|---|---|", flush=True)
    stack_mb = steps * state_mb  # the pushed states: the stack's capacity, allocated at its first push
    rows, reference = [], None
    for policy in ("all", "binomial"):
        def loss(x, policy=policy):
            y, _ = ad.fold(sine_body, x, length=steps, checkpoint=policy)
            return anp.sum(y ** 2)

        gradient = ad.jit(ad.grad(loss))
        seconds, peak, result = timed_peak(lambda gradient=gradient: gradient(x))
        reference = result if reference is None else reference
        rows.append((f'ad.fold, checkpoint="{policy}"', seconds, peak, "", check(f"stack fold {policy}", [result],
                                                                                   [reference])))
    variants = [("rv, a stack of the inputs (NumPy)", "numpy")] + ([("rv, a stack of the inputs (Numba)", "numba")]
                                                                   if HAVE_NUMBA else [])
    for label, mode in variants:
        with backend(mode):
            rv.grad(sine_map)(0.0, x, 10)  # compilation for Numba, on a short run
            seconds, peak, result = timed_peak(lambda: rv.grad(sine_map)(0.0, x, steps))
        rows.append((label, seconds, peak, f"{stack_mb:.1f} (x 2 in the gradient)",
                     check(f"stack rv {mode}", [result[1]], [reference])))
    for label, seconds, peak, stack, verdict in rows:
        print(f"| {label} | {seconds:.2f} | {_mb(peak)} | {peak / state_mb:.0f} | {stack} | {verdict} |", flush=True)
    print("\nA step that forgets its input is made reversible by pushing the input: the stack holds one state per "
          "step, the memory NiLang's PUSH! costs, and the gradient (reverse computing) fills a second stack with "
          "their cotangents while it drains the first, so about 2 x steps states at its peak, as a tape. Bennett's "
          "recursion (rv.bennett) trades that memory for recomputation.")


# --- bessel ----------------------------------------------------------------------------------------------------

def bessel_section():
    print("\n## bessel: J_2(1) by its series (a reversible while), gradient / primal\n")
    print("| backend | primal µs | gradient µs | gradient / primal | check |")
    print("|---|---|---|---|---|", flush=True)
    exact = (_scipy_jvp(2, 1.0, 1))
    for mode in ("numpy",) + (("numba",) if HAVE_NUMBA else ()):
        with backend(mode):
            primal = best_time(besselj, 0.0, 2, 1.0)
            gradient_fn = rv.grad(besselj, loss=0)
            gradient = best_time(gradient_fn, 0.0, 2, 1.0)
            verdict = check(f"bessel {mode}", [gradient_fn(0.0, 2, 1.0)[2]], [exact])
        print(f"| rv ({mode}) | {primal * 1e6:.1f} | {gradient * 1e6:.1f} | {gradient / primal:.1f}x | {verdict} |")
    print("\nThe times include adarray's per-call overhead (argument checks, binding the primitive, copying the "
          "arguments): a few µs. NiLang (Julia, compiled): 53 ns call, 231 ns gradient (4.4x).")


def _scipy_jvp(nu, z, n):
    import scipy.special

    return scipy.special.jvp(nu, z, n)


# --- sparse ----------------------------------------------------------------------------------------------------

def sparse_section(quick):
    size = 200 if quick else 1000
    print(f"\n## sparse: {size} x {size} CSR, forward and gradient with respect to the stored values\n")
    print("| operation | density | method | forward ms | gradient ms | gradient / forward | check |")
    print("|---|---|---|---|---|---|---|", flush=True)
    rng = np.random.default_rng(1)
    methods = [("index", "numpy"), ("reversible", "numpy")] + ([("reversible", "numba")] if HAVE_NUMBA else [])
    for density in (0.01, 0.05):
        S = scipy.sparse.random(size, size, density=density, format="csr", random_state=2)
        T = scipy.sparse.random(size, size, density=density, format="csr", random_state=3)
        A, B, v = sp.CSR.from_scipy(S), sp.CSR.from_scipy(T), rng.standard_normal(size)
        operations = {
            # squared: the gradient of a linear function is a constant, which the simplifier would fold away
            "dot(A, B)^2": (lambda d, A=A, B=B: sp.dot(sp.CSR(d, A.indices, A.indptr, A.shape), B) ** 2, (A.data,),
                            (0,)),
            "sum((A @ v)^2)": (lambda d, v, A=A: anp.sum((sp.CSR(d, A.indices, A.indptr, A.shape) @ v) ** 2),
                               (A.data, v), (0, 1)),
        }
        for name, (fn, args, argnums) in operations.items():
            reference = None
            for method, mode in methods:
                previous = sp.set_method(method)
                try:
                    with backend(mode):
                        fresh = (lambda *a, fn=fn: fn(*a))  # a new function: ad.jit caches per function object
                        forward, gradient = ad.jit(fresh), ad.jit(ad.grad(fresh, argnums=argnums))
                        t_forward, t_gradient = best_time(forward, *args), best_time(gradient, *args)
                        result = gradient(*args)
                finally:
                    sp.set_method(previous)
                reference = result if reference is None else reference
                verdict = check(f"sparse {name} {method} {mode}", result, reference)
                label = method if method == "index" else f"reversible ({mode})"
                print(f"| {name} | {density} | {label} | {t_forward * 1e3:.3f} | {t_gradient * 1e3:.3f} | "
                      f"{t_gradient / t_forward:.1f}x | {verdict} |", flush=True)


# --- gmm -------------------------------------------------------------------------------------------------------

def gmm_section(quick):
    n, d, k = (100 if quick else 1000), 2, 5
    rng = np.random.default_rng(2)
    alphas, means = rng.standard_normal(k), rng.standard_normal((k, d))
    icf, x = 0.3 * rng.standard_normal((k, d * (d + 1) // 2)), rng.standard_normal((n, d))
    print(f"\n## gmm: ADBench's objective, n = {n}, d = {d}, K = {k}, gradient by (alphas, means, icf)\n")
    print("| version | objective ms | gradient ms | gradient / objective | check |")
    print("|---|---|---|---|---|", flush=True)
    array_objective = ad.jit(lambda a, mu, c: gmm_array(a, mu, c, x, 1.0, 0))
    array_gradient = ad.jit(ad.grad(lambda a, mu, c: gmm_array(a, mu, c, x, 1.0, 0), argnums=(0, 1, 2)))
    reference = array_gradient(alphas, means, icf)
    t_objective, t_gradient = best_time(array_objective, alphas, means, icf), best_time(array_gradient, alphas, means,
                                                                                        icf)
    print(f"| array program, ad.grad | {t_objective * 1e3:.2f} | {t_gradient * 1e3:.2f} | "
          f"{t_gradient / t_objective:.1f}x | reference |")
    for mode in ("numpy",) + (("numba",) if HAVE_NUMBA else ()):
        with backend(mode):
            gradient_fn = rv.grad(gmm_objective, loss=0)
            t_objective = best_time(gmm_objective, 0.0, alphas, means, icf, x, 1.0, 0)
            t_gradient = best_time(gradient_fn, 0.0, alphas, means, icf, x, 1.0, 0)
            verdict = check(f"gmm {mode}", gradient_fn(0.0, alphas, means, icf, x, 1.0, 0)[1:4], reference)
        print(f"| reversible, rv.grad ({mode}) | {t_objective * 1e3:.2f} | {t_gradient * 1e3:.2f} | "
              f"{t_gradient / t_objective:.1f}x | {verdict} |", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="adarray bench reversible", description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="leapfrog steps of the loop section (10^5)")
    parser.add_argument("--section", default=",".join(SECTIONS), help="comma-separated: " + ", ".join(SECTIONS))
    parser.add_argument("--quick", action="store_true", help="1,000 steps and small instances: a smoke run")
    parser.add_argument("--no-peers", action="store_true", help="skip JAX")
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.section.split(",") if s.strip()]
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}; choose from {', '.join(SECTIONS)}")
    steps = 1_000 if args.quick else args.steps
    failures.clear()  # of an earlier run in this process
    print(f"# adarray bench reversible (numba: {'yes' if HAVE_NUMBA else 'not installed'})")
    if "loop" in sections:
        loop_section(steps, not args.no_peers)
    if "stack" in sections:
        stack_section(max(steps // 10, 10))
    if "bessel" in sections:
        bessel_section()
    if "sparse" in sections:
        sparse_section(args.quick)
    if "gmm" in sections:
        gmm_section(args.quick)
    if failures:
        print("\nWRONG: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
