"""Mixed-mode gradients of scalar kernels against pure reverse mode (design notes, part (a): A1, A2, A4).

Three sections, each printed as a Markdown table (all variants run in this one process, side by side):

hmlstm  The HM-LSTM cell-state update of Revels et al. (arXiv 1810.08297) on n x n float64 matrices, two
        length-n 0/1 control vectors z, zb broadcast along rows (FLUSH, COPY or UPDATE per element), the
        gradient of a scalar loss w.r.t. c, f, i, g (k = 4), by
          (a) adarray, pure reverse mode over array operations, branches as `anp.where` (the reference);
          (b) adarray, the `@ad.kernel` version in mixed mode run by the NumPy masked interpreter;
          (c) the same compiled by Numba (when numba is installed);
          (d) JAX `jit(grad)` of the same `jnp.where` formulation; (e) PyTorch eager with `torch.where`;
          on the Numba backend (`--backend numba`: the whole gradient program compiled, kernel calls
          included): (f) the kernel in mixed mode, (g) reverse mode over the where formulation.
        Losses: sum(c_new**2) (the cotangent is a full array: the forward sweep stores k partials) and
        sum(c_new) (the cotangent is known before the forward sweep: the partials are never stored).
arity   The kernel prod_j tanh(x_j if x_j > 0.5 else -x_j), k = 1..16 inputs, mixed mode against the
        fallback, reverse mode over the kernel's operations (forced through the arity limit), per kernel backend;
        the crossover k is compared with the setting kernel_arity_<backend>. Form "branch" writes the choice as an
        if statement (a masked `cond`), form "select" as a conditional expression (a `select`).
branch  A kernel whose rare branch (10% of the elements) is ~100x more expensive than the common one,
        against the `where` formulation that evaluates both branches everywhere (expected: ~10x).

Protocol: every variant's first call (tracing, transformation, compilation, first run) is timed alone;
then `--repeats` rounds call every variant in turn (interleaved, so that load from other processes on a
shared machine hits all variants alike); the tables give the minimum and the median per call. Peak
memory is tracemalloc's peak during one more call, above what was allocated before it (it includes the
returned gradients). tracemalloc sees NumPy's allocations, not XLA's or PyTorch's: peers show "n/a".
Checks: every variant's gradient against variant (a) (max |difference| / max |reference|, at most 1e-10
for adarray, 1e-8 for the peers); a failed check prints WRONG and the command exits 1.

    python benchmarks/mixed_mode.py [--sizes 256,512,1024,2048] [--section hmlstm,arity,branch] [--quick]
    adarray bench mixed --tools adarray,jax --backends numpy,numba --backend numpy,numba --out results/
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import importlib.util
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import adarray as ad
import adarray.numpy as anp
from adarray.kernels import kernel, kernel_backend, set_kernel_backend

SECTIONS = ("hmlstm", "arity", "branch")
PEERS = ("jax", "torch")
BACKENDS = ("numpy", "numba")
LOSSES = ("square", "sum")
ARITY_FORMS = ("branch", "select")
RTOL_ADARRAY, RTOL_PEER = 1e-10, 1e-8
RARE_STEPS = 100      # iterations of the rare branch's loop (each one sin: ~100x the common branch)
RARE_THRESHOLD = 0.9  # x ~ U(0, 1) above this takes the rare branch: 10% of the elements
MEMORY_NOTE = ("Peak memory: tracemalloc, one call, above what was allocated before it (includes the returned "
               "gradients). tracemalloc does not see XLA's or PyTorch's allocators: n/a for the peers.")


# --- the computations ---------------------------------------------------------------------------------

@kernel
def hmlstm_cell(z, zb, c, f, i, g):
    if z == 1.0:
        return anp.sigmoid(i) * anp.tanh(g)                        # FLUSH
    elif zb == 0.0:
        return c                                                   # COPY
    else:
        return anp.sigmoid(f) * c + anp.sigmoid(i) * anp.tanh(g)   # UPDATE


def hmlstm_where(ops, z, zb, c, f, i, g):
    """The same update as array operations: every branch on every element, then where (TF's way)."""
    flush = ops.sigmoid(i) * ops.tanh(g)
    return ops.where(z == 1.0, flush, ops.where(zb == 0.0, c, ops.sigmoid(f) * c + flush))


@kernel
def rare_branch(x):
    if x > RARE_THRESHOLD:
        y = x
        for _ in range(RARE_STEPS):
            y = 0.5 * anp.sin(y) + x
        return y
    return anp.sin(x)


def rare_where(ops, x):
    y = x
    for _ in range(RARE_STEPS):
        y = 0.5 * ops.sin(y) + x
    return ops.where(x > RARE_THRESHOLD, y, ops.sin(x))


def loss(ops, kind, y):
    return ops.sum(y * y) if kind == "square" else ops.sum(y)


ADARRAY_OPS = SimpleNamespace(sigmoid=anp.sigmoid, tanh=anp.tanh, sin=anp.sin, where=anp.where, sum=anp.sum)


def arity_source(k: int, form: str) -> str:
    """A module defining prod_j tanh(x_j if x_j > 0.5 else -x_j) of k arguments (kernels are parsed from
    their source, so the generated function must live in a file that inspect can read)."""
    names = [f"x{j}" for j in range(k)]
    lines = ["import adarray.numpy as anp", "", "", f"def product_{form}_{k}({', '.join(names)}):"]
    for x in names:
        if form == "branch":
            lines += [f"    if {x} > 0.5:", f"        y_{x} = {x}", "    else:", f"        y_{x} = -{x}"]
        else:
            lines += [f"    y_{x} = {x} if {x} > 0.5 else -{x}"]
    lines.append("    return " + " * ".join(f"anp.tanh(y_{x})" for x in names))
    return "\n".join(lines) + "\n"


def arity_kernel(k: int, form: str, folder: str):
    name = f"product_{form}_{k}"
    path = os.path.join(folder, f"{name}.py")
    with open(path, "w") as handle:
        handle.write(arity_source(k, form))
    spec = importlib.util.spec_from_file_location(f"mixed_mode_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return kernel(getattr(module, name))


# --- measuring ----------------------------------------------------------------------------------------

@dataclass
class Variant:
    """One way to compute a gradient: `call()` runs it once; `to_numpy` turns its result into arrays."""

    label: str
    call: object
    rtol: float = RTOL_ADARRAY
    traced: bool = True        # are its allocations visible to tracemalloc?
    to_numpy: object = None
    how: str = ""
    describe: object = None    # returns `how`, called after the first call (it traces the function again)
    first: float = float("nan")
    times: list = field(default_factory=list)
    peak: float | None = None
    error: float = 0.0
    grads: list | None = None

    @property
    def best(self) -> float:
        return min(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def on_backend(mode: str, fn):
    """`fn` run with the kernel backend `mode` (tracing happens on the first call, so the guard sees it)."""
    def call(*args):
        previous = set_kernel_backend(mode)
        try:
            return fn(*args)
        finally:
            set_kernel_backend(previous)
    return call


@contextlib.contextmanager
def arity_limit(limit: int):
    """Every backend's arity limit set to `limit` while a gradient is traced: 0 forces reverse mode over the
    kernel's operations, a large value forces mixed mode (the guard is evaluated at trace time)."""
    with ad.config.override(kernel_arity_numpy=limit, kernel_arity_numba=limit):
        yield


def arity_limits() -> dict:
    """The arity limit of each kernel backend (the settings kernel_arity_numpy and kernel_arity_numba)."""
    return {"numpy": ad.config.kernel_arity_numpy, "numba": ad.config.kernel_arity_numba}


def peak_memory(call) -> float:
    """tracemalloc's peak during one call, in bytes above the memory allocated before it."""
    gc.collect()
    running = tracemalloc.is_tracing()  # e.g. python -X tracemalloc: leave it running
    if running:
        tracemalloc.reset_peak()
    else:
        tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        if not running:
            tracemalloc.stop()


def measure(variants, repeats: int, memory: bool = True) -> None:
    """First call of each, then `repeats` interleaved rounds, then (optionally) one traced call each."""
    for v in variants:
        begin = time.perf_counter()
        result = v.call()
        v.first = time.perf_counter() - begin
        v.grads = [np.asarray(g, dtype=np.float64) for g in (v.to_numpy or list)(result)]
        if v.describe is not None:
            v.how = v.describe()
    for _ in range(repeats):
        for v in variants:
            begin = time.perf_counter()
            v.call()
            v.times.append(time.perf_counter() - begin)
    if memory:
        for v in variants:
            v.peak = peak_memory(v.call) if v.traced else None


def relative_error(got, want) -> float:
    scale = max(max(float(np.max(np.abs(w))) for w in want), 1e-300)
    return max(float(np.max(np.abs(g - w))) for g, w in zip(got, want)) / scale


def check(variants, failures: list, where: str) -> None:
    """Compare every variant's gradients with the first one's; record failures."""
    reference = variants[0].grads
    for v in variants[1:]:
        shapes_match = len(v.grads) == len(reference) and all(g.shape == w.shape for g, w in zip(v.grads, reference))
        v.error = relative_error(v.grads, reference) if shapes_match else float("inf")
        if not v.error <= v.rtol:
            failures.append(f"{where}: {v.label}: relative error {v.error:.1e} > {v.rtol:.0e}")


def gradient_path(fn, args) -> str:
    """How adarray differentiated the kernel in `fn`, read off the names of the gradient's kernel calls."""
    names = [str(e.params.get("name", "")) for e in ad.make_ir(fn)(*args).eqns if e.prim.name == "kernel"]
    if any(n.endswith("_vjp") for n in names):
        return "mixed, fused"
    if any(n.endswith("_partials") for n in names):
        return "mixed, partials stored"
    return "reverse over the kernel's ops" if names else "array ops"


# --- tables -------------------------------------------------------------------------------------------

class Table:
    """A Markdown table printed row by row (a long run shows progress), kept for --out."""

    def __init__(self, name: str, title: str, columns):
        self.name, self.title, self.columns, self.rows, self.notes = name, title, list(columns), [], []
        print(f"\n## {title}\n", flush=True)
        print(self._line(self.columns))
        print(self._line(["---"] * len(self.columns)), flush=True)

    @staticmethod
    def _line(cells) -> str:
        return "| " + " | ".join(str(c) for c in cells) + " |"

    def add(self, row) -> None:
        self.rows.append(list(row))
        print(self._line(row), flush=True)

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"\n{text}", flush=True)

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", self._line(self.columns), self._line(["---"] * len(self.columns))]
        lines += [self._line(r) for r in self.rows]
        return "\n".join(lines + [""] + [n + "\n" for n in self.notes])

    def write_csv(self, folder: Path) -> None:
        with open(folder / f"mixed_mode_{self.name}.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(self.columns)
            writer.writerows(self.rows)


def ms(seconds) -> str:
    return f"{seconds * 1e3:.2f}"


def mb(peak) -> str:
    return "n/a" if peak is None else f"{peak / 2**20:.1f}"


def verdict(v) -> str:
    return f"{v.error:.1e}" + ("" if v.error <= v.rtol else " WRONG")


# --- peers --------------------------------------------------------------------------------------------

def load_peer(name: str, threads: int):
    """The peer's module configured for float64 and `threads` threads, or None if it is not installed."""
    if importlib.util.find_spec(name) is None:
        return None
    if name == "jax":
        if "jax" not in sys.modules:  # XLA reads its flags when jax is first imported
            flags = os.environ.get("XLA_FLAGS", "")
            if "intra_op_parallelism_threads" not in flags:
                os.environ["XLA_FLAGS"] = (f"{flags} --xla_cpu_multi_thread_eigen={str(threads > 1).lower()} "
                                           f"intra_op_parallelism_threads={threads}").strip()
        import jax

        jax.config.update("jax_enable_x64", True)
        with contextlib.suppress(Exception):  # refused once JAX's backends are initialised: CPU-only anyway
            jax.config.update("jax_platforms", "cpu")
        return jax
    import torch

    torch.set_num_threads(threads)
    return torch


def jax_variant(jax, label, formulation, arrays, kind, argnums):
    """`jax.jit(jax.grad(loss))` of a where formulation; the arguments stay on the device between calls."""
    import jax.numpy as jnp

    ops = SimpleNamespace(sigmoid=jax.nn.sigmoid, tanh=jnp.tanh, sin=jnp.sin, where=jnp.where, sum=jnp.sum)
    gradient = jax.jit(jax.grad(lambda *a: loss(ops, kind, formulation(ops, *a)), argnums=argnums))
    device = [jnp.asarray(a) for a in arrays]
    return Variant(label, lambda: jax.block_until_ready(gradient(*device)), rtol=RTOL_PEER, traced=False,
                   to_numpy=lambda r: [np.asarray(g) for g in r], how="jit(grad), XLA")


def torch_variant(torch, label, formulation, arrays, kind, argnums):
    """PyTorch eager: the where formulation forward, then backward, the gradients w.r.t. `argnums`."""
    ops = SimpleNamespace(sigmoid=torch.sigmoid, tanh=torch.tanh, sin=torch.sin, where=torch.where, sum=torch.sum)
    tensors = [torch.tensor(a, requires_grad=j in argnums) for j, a in enumerate(arrays)]
    wrt = [tensors[j] for j in argnums]

    def call():
        for t in wrt:
            t.grad = None
        loss(ops, kind, formulation(ops, *tensors)).backward()
        return [t.grad for t in wrt]

    return Variant(label, call, rtol=RTOL_PEER, traced=False, to_numpy=lambda r: [g.numpy() for g in r],
                   how="eager, autograd")


def peer_variants(peers, formulation, arrays, kind, argnums):
    out = []
    if "jax" in peers:
        out.append(jax_variant(peers["jax"], "(d) JAX, where", formulation, arrays, kind, argnums))
    if "torch" in peers:
        out.append(torch_variant(peers["torch"], "(e) PyTorch, where", formulation, arrays, kind, argnums))
    return out


def on_program_backend(name: str, fn):
    """`fn` run with every staged program on backend `name` ('numpy' or 'numba')."""
    def call(*args):
        previous = ad.set_backend(name)
        try:
            return fn(*args)
        finally:
            ad.set_backend(previous)
    return call


def adarray_variants(backends, formulation, cell, arrays, controls, kind, program_backends=("numpy",)):
    """(a) reverse mode over the where formulation, then the kernel in mixed mode on each kernel backend;
    with the Numba program backend, (f) mixed mode and (g) reverse mode compiled whole.

    `controls` are closed over (not differentiated); the gradient is w.r.t. `arrays`."""
    argnums = tuple(range(len(arrays)))

    def where_loss(*xs):
        return loss(ADARRAY_OPS, kind, formulation(ADARRAY_OPS, *controls, *xs))

    def kernel_loss(*xs):
        return loss(ADARRAY_OPS, kind, cell()(*controls, *xs))  # cell() looks the kernel up at trace time

    where_grad = ad.grad(where_loss, argnums=argnums)
    out = [Variant("(a) adarray reverse, where", lambda: where_grad(*arrays), how="array ops")]
    for backend, label in (("numpy", "(b) adarray mixed, NumPy interpreter"), ("numba", "(c) adarray mixed, Numba")):
        if backend in backends:
            gradient = on_backend(backend, ad.grad(lambda *xs: kernel_loss(*xs), argnums=argnums))
            out.append(Variant(label, lambda g=gradient: g(*arrays),
                               describe=lambda g=gradient, b=backend: on_backend(b, gradient_path)(g, arrays)))
    if "numba" in program_backends:
        mixed = on_program_backend("numba", ad.grad(lambda *xs: kernel_loss(*xs), argnums=argnums))
        reverse = on_program_backend("numba", ad.grad(lambda *xs: where_loss(*xs), argnums=argnums))
        out.append(Variant("(f) adarray mixed, Numba backend", lambda: mixed(*arrays), how="compiled program"))
        out.append(Variant("(g) adarray reverse, where, Numba backend", lambda: reverse(*arrays),
                           how="compiled program"))
    return out


# --- sections -----------------------------------------------------------------------------------------

def hmlstm_inputs(n: int, rng):
    z = (rng.random(n) < 0.3) * 1.0
    zb = (rng.random(n) < 0.5) * 1.0
    z[:3], zb[:3] = [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]  # every case is taken: FLUSH, COPY, UPDATE
    return [z[:, None], zb[:, None]], [rng.standard_normal((n, n)) for _ in range(4)]


def run_hmlstm(args, backends, peers, failures) -> Table:
    table = Table("hmlstm", "HM-LSTM cell update: gradient w.r.t. c, f, i, g (n x n float64, k = 4)",
                  ["n", "loss", "variant", "how", "first call ms", "min ms", "median ms", "speed-up vs (a)",
                   "peak MB", "peak / n² arrays", "error vs (a)"])
    rng = np.random.default_rng(0)
    for n in args.sizes:
        controls, arrays = hmlstm_inputs(n, rng)
        for kind in args.losses:
            variants = adarray_variants(backends, hmlstm_where, lambda: hmlstm_cell, arrays, controls, kind,
                                        args.program_backends)
            variants += peer_variants(peers, hmlstm_where, controls + arrays, kind, (2, 3, 4, 5))
            measure(variants, args.repeats)
            check(variants, failures, f"hmlstm n={n} loss={kind}")
            base = variants[0].best
            formula = "sum(c_new²)" if kind == "square" else "sum(c_new)"
            for v in variants:
                arrays_peak = "n/a" if v.peak is None else f"{v.peak / (n * n * 8):.1f}"
                table.add([n, formula, v.label, v.how, ms(v.first), ms(v.best), ms(v.median),
                           f"{base / v.best:.2f}x", mb(v.peak), arrays_peak, verdict(v)])
            del variants
            gc.collect()
    table.note(MEMORY_NOTE + " The 4 returned gradients alone are 4 n² arrays.")
    return table


def arity_pair(k, form, backend, folder, elements, repeats, rng):
    """Mixed mode and forced reverse mode for the k-ary product kernel on `backend`."""
    product = arity_kernel(k, form, folder)
    xs = [rng.uniform(-1.0, 1.5, elements) for _ in range(k)]
    variants = []
    for mode, limit in (("mixed", k), ("reverse", 0)):
        gradient = ad.grad(lambda *a: anp.sum(product(*a) ** 2), argnums=tuple(range(k)))
        with arity_limit(limit):
            how = on_backend(backend, gradient_path)(gradient, xs)  # traces (and caches) under the limit
        expected = "reverse" if mode == "reverse" else "mixed"
        if not how.startswith(expected):
            raise RuntimeError(f"arity k={k}: forcing {mode} mode gave '{how}'")
        variants.append(Variant(mode, lambda g=on_backend(backend, gradient): g(*xs), how=how))
    measure(variants, repeats, memory=False)
    return variants


def crossover(ratios: dict) -> int | None:
    """The smallest k from which reverse mode is faster at every larger k measured (None: never)."""
    ks = sorted(ratios)
    for k in ks:
        if all(ratios[j] < 1.0 for j in ks if j >= k):
            return k
    return None


def run_arity(args, backends, peers, failures) -> Table:
    table = Table("arity", f"Arity crossover: prod_j tanh(x_j if x_j > 0.5 else -x_j), {args.elements:,} elements, "
                  "loss sum(y²)", ["backend", "form", "k", "mixed ms", "reverse ms", "reverse / mixed",
                                   "error mixed vs reverse"])
    rng = np.random.default_rng(1)
    summary = []
    with tempfile.TemporaryDirectory(prefix="adarray-arity-") as folder:
        for backend in backends:
            for form in args.forms:
                ratios = {}
                for k in range(1, args.max_arity + 1):
                    mixed, reverse = arity_pair(k, form, backend, folder, args.elements, args.repeats, rng)
                    check([reverse, mixed], failures, f"arity {backend} {form} k={k}")
                    ratios[k] = reverse.best / mixed.best
                    table.add([backend, form, k, ms(mixed.best), ms(reverse.best), f"{ratios[k]:.2f}",
                               verdict(mixed)])
                summary.append((backend, form, crossover(ratios)))
    limit = arity_limits()
    for backend, form, k in summary:
        table.note(f"- {backend}, {form}: {crossover_verdict(k, args.max_arity, limit[backend])} "
                   f"(kernel_arity_{backend} = {limit[backend]})")
    return table


def crossover_verdict(k, largest, limit) -> str:
    if k is None:
        agrees = "consistent" if limit >= largest else f"does not match: the limit could be at least {largest}"
        return f"mixed mode faster at every k <= {largest}, no crossover measured: {agrees}"
    agrees = "matches" if limit == k - 1 else f"does not match: the measured limit is {k - 1}"
    return f"reverse mode faster from k = {k} on: {agrees}"


def run_branch(args, backends, peers, failures) -> Table:
    table = Table("branch", f"Rare expensive branch: {round((1 - RARE_THRESHOLD) * 100)}% of {args.elements:,} "
                  f"elements run {RARE_STEPS} sin steps, the rest one sin; loss sum(y²)",
                  ["variant", "how", "first call ms", "min ms", "median ms", "speed-up vs (a)", "peak MB",
                   "error vs (a)"])
    x = np.random.default_rng(2).random(args.elements)
    variants = adarray_variants(backends, rare_where, lambda: rare_branch, [x], [], "square", args.program_backends)
    variants += peer_variants(peers, rare_where, [x], "square", (0,))
    measure(variants, args.repeats)
    check(variants, failures, "branch")
    for v in variants:
        table.add([v.label, v.how, ms(v.first), ms(v.best), ms(v.median), f"{variants[0].best / v.best:.2f}x",
                   mb(v.peak), verdict(v)])
    table.note(MEMORY_NOTE)
    return table


# --- command line -------------------------------------------------------------------------------------

def _names(text: str, allowed, what: str):
    names = [t.strip() for t in text.split(",") if t.strip()]
    for name in names:
        if name not in allowed:
            raise argparse.ArgumentTypeError(f"unknown {what} {name} (choose from {', '.join(allowed)})")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adarray bench mixed", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,512,1024,2048", help="HM-LSTM matrix sizes n (default 256..2048)")
    parser.add_argument("--section", default=",".join(SECTIONS), help="sections to run: hmlstm,arity,branch")
    parser.add_argument("--tools", default="adarray,jax,torch",
                        help="adarray (always run: it is the reference) and the peers jax, torch (when installed)")
    parser.add_argument("--backends", default="numpy,numba", help="kernel backends for mixed mode: numpy,numba")
    parser.add_argument("--backend", default="numpy,numba",
                        help="program backends: numpy (variants a-c), numba (adds f and g, the gradient program "
                             "compiled whole); default both")
    parser.add_argument("--losses", default="square,sum", help="HM-LSTM losses: square = sum(c_new²), sum")
    parser.add_argument("--forms", default="branch,select", help="arity kernel forms: branch (if), select")
    parser.add_argument("--max-arity", type=int, default=16, help="arity section: k = 1..this (default 16)")
    parser.add_argument("--elements", type=int, default=1 << 18,
                        help="elements of the arity and branch sections (default 2^18)")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per variant after the first")
    parser.add_argument("--threads", type=int, default=1, help="threads for JAX, PyTorch and the Numba backend's "
                        "parallel loops (default 1; NumPy's elementwise operations and the Numba kernels use one)")
    parser.add_argument("--quick", action="store_true", help="n = 64, k = 1..2, 4096 elements, 2 repeats: a smoke run")
    parser.add_argument("--out", help="also write mixed_mode.md and one .csv per section to this folder")
    return parser


def parse(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.sections = _names(args.section, SECTIONS, "section")
        args.tools = _names(args.tools, ("adarray",) + PEERS, "tool")
        args.backends = _names(args.backends, BACKENDS, "backend")
        args.program_backends = _names(args.backend, BACKENDS, "backend")
        args.losses = _names(args.losses, LOSSES, "loss")
        args.forms = _names(args.forms, ARITY_FORMS, "form")
        args.sizes = [int(s) for s in args.sizes.split(",")]
    except (argparse.ArgumentTypeError, ValueError) as error:
        parser.error(str(error))
    if min(args.repeats, args.max_arity, args.elements, args.threads, *args.sizes) < 1:
        parser.error("--sizes, --repeats, --max-arity, --elements and --threads must be at least 1")
    if args.quick:
        args.sizes, args.max_arity, args.elements, args.repeats = [64], 2, 4096, 2
    return args


def available_backends(wanted):
    from adarray.kernels import execution

    return [b for b in wanted if b != "numba" or execution.numba_available()]


def numba_threads(count):
    """Let the Numba backend's parallel loops use `count` threads (at most those Numba started), as the peers get;
    returns the previous count (None without Numba, or when `count` is None)."""
    from adarray.kernels import execution

    if count is None or not execution.numba_available():
        return None
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(min(count, numba.config.NUMBA_NUM_THREADS))
    return previous


def main(argv=None) -> int:
    args = parse(argv)
    backends = available_backends(args.backends)
    args.program_backends = available_backends(args.program_backends)
    peers = {name: module for name in PEERS if name in args.tools
             for module in [load_peer(name, args.threads)] if module is not None}
    print(f"# mixed-mode kernels vs reverse mode: {os.cpu_count()} cores (shared with other work), "
          f"kernel backends {', '.join(backends)}, peers {', '.join(peers) or 'none'}, {args.threads} thread(s), "
          f"{args.repeats} timed repeats, arity limits {arity_limits()}")
    for name in args.backends:
        if name not in backends:
            print(f"- kernel backend {name}: numba is not installed, skipped")
    for name in PEERS:
        if name in args.tools and name not in peers:
            print(f"- {name}: not installed, skipped")
    runners = {"hmlstm": run_hmlstm, "arity": run_arity, "branch": run_branch}
    failures, tables = [], []
    previous, threads = kernel_backend(), numba_threads(args.threads)
    try:
        for section in args.sections:
            tables.append(runners[section](args, backends, peers, failures))
    finally:
        set_kernel_backend(previous)
        numba_threads(threads)
    if args.out:
        folder = Path(args.out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "mixed_mode.md").write_text("# Mixed-mode benchmark\n\n" + "\n".join(t.markdown() for t in tables))
        for t in tables:
            t.write_csv(folder)
    print()
    if failures:
        print("WRONG gradients:\n" + "\n".join(f"- {f}" for f in failures))
        return 1
    print("all gradients agree with variant (a)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
