"""Least squares with exact sparse Jacobians (adarray.optim) against SciPy, and BA Jacobians against JAX.

Sections (each printed as a Markdown table; `--out DIR` also writes solvers.md and the plot):

solve      The showcases of benchmarks/solver_problems.py (bundle adjustment scenes built from ADBench ba1..ba5,
           scaled to `--observations`; hand tracking, simple and complicated; a sum of three exponentials), each
           solved from the same start by
             adarray LM and GN (GN refuses BA: the scene is fixed only up to a similarity, J^T J is singular);
             scipy.optimize.least_squares method="trf" (tr_solver="exact"), method="lm" (MINPACK), and
             method="trf" with tr_solver="lsmr" (sparse), each with adarray's exact Jacobian and with SciPy's
             finite differences (for lsmr grouped by adarray's sparsity pattern, `jac_sparsity`).
           Columns: wall time of the solve (adarray: the first solve, which traces, finds the pattern and colours
           it, and a second, warm one), iterations (SciPy: Jacobian evaluations), residual evaluations, passes per
           Jacobian (adarray: colours; SciPy's differences: groups of columns), the final cost and its relative
           distance from the best cost any solver reached. Check: adarray's LM within 1e-6 of SciPy's best.
jacobian   The Jacobian alone, on BA scenes at the full size of ADBench's files: ad.sparse_jacobian (14 batched
           forward passes, whatever the size), ADBench's per-observation blocks in adarray (vmap(jacrev), then CSR),
           and JAX jit(vmap(jacfwd)) and jit(vmap(jacrev)) of the per-observation residual (then the same CSR
           assembly). Minimum of `--repeats` warm calls; the first call separately. Check: every Jacobian equals
           adarray's to 1e-10 relative.
colouring  Colours and time of each colouring order (adarray.sparse_jacobians.colouring) on a BA pattern, a hand
           pattern, a 2-d 5-point stencil and random patterns, with the lower bound (the longest row).
plot       Cost per iteration of each solver on three showcases: results/solvers_cost.png (matplotlib).

    adarray bench solvers [--section solve,jacobian,colouring,plot] [--observations 300] [--instances ba1,ba5]
                          [--repeats 3] [--tools adarray,jax] [--quick] [--out results/]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.optimize
import scipy.sparse as sp

import adarray as ad
from adarray import optim
from adarray.optim.parameters import Parameters
from adarray.sparse_jacobians import colouring
from benchmarks import solver_problems as problems
from benchmarks.adbench.data import BAData, data_root
from benchmarks.adbench.layout import ba_sparse_jacobian
from benchmarks.adbench.tool_adarray import ba_blocks

SECTIONS = ("solve", "jacobian", "colouring", "plot")
CHECK = 1e-6
LSMR_NFEV = 500


class Table:
    """A Markdown table printed row by row, kept for --out."""

    def __init__(self, title, columns):
        self.title, self.columns, self.rows, self.notes = title, list(columns), [], []
        print(f"\n## {title}\n\n{self._line(self.columns)}\n{self._line(['---'] * len(self.columns))}", flush=True)

    @staticmethod
    def _line(cells):
        return "| " + " | ".join(str(c) for c in cells) + " |"

    def add(self, row):
        self.rows.append(list(row))
        print(self._line(row), flush=True)

    def note(self, text):
        self.notes.append(text)
        print(f"\n{text}", flush=True)

    def markdown(self):
        lines = [f"## {self.title}", "", self._line(self.columns), self._line(["---"] * len(self.columns))]
        return "\n".join(lines + [self._line(r) for r in self.rows] + [""] + [n + "\n" for n in self.notes])


def seconds(value):
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


# --- solve ------------------------------------------------------------------------------------------------------


def _ours(solver, problem):
    """(first result, first time, warm time): the second solve reuses every traced program."""
    begin = time.perf_counter()
    result = solver(problem.residual, problem.x0, problem.args, max_iterations=200)
    first = time.perf_counter() - begin
    begin = time.perf_counter()
    solver(problem.residual, problem.x0, problem.args, max_iterations=200)
    return result, first, time.perf_counter() - begin


def _scipy(problem, method, jac, **options):
    begin = time.perf_counter()
    result = optim.least_squares(problem.residual, problem.x0, problem.args, jac=jac, method=method,
                                 max_nfev=options.pop("max_nfev", 5000), **options)
    return result, time.perf_counter() - begin


def _groups(problem):
    """How many residual evaluations SciPy's grouped differences make per Jacobian (its own colouring)."""
    from scipy.optimize._numdiff import group_columns

    pattern = ad.jacobian_sparsity(problem.residual, problem.x0, *problem.args)
    return int(group_columns(pattern).max()) + 1


def solve_rows(problem, table, failures, quick):
    rows = []
    lm, first, warm = _ours(optim.levenberg_marquardt, problem)
    rows.append(["adarray LM", "exact, sparse_jacobian", f"{seconds(first)} / {seconds(warm)}", lm.iterations,
                 lm.function_evaluations, lm.num_passes, lm.cost])
    try:
        gn, first, warm = _ours(optim.gauss_newton, problem)
        rows.append(["adarray GN", "exact, sparse_jacobian", f"{seconds(first)} / {seconds(warm)}", gn.iterations,
                     gn.function_evaluations, gn.num_passes, gn.cost])
    except optim.SingularJacobianError:
        rows.append(["adarray GN", "exact, sparse_jacobian", "refused: J^T J singular", "", "", "", None])
    n = problem_size(problem)
    variants = [("trf exact", "trf", {"tr_solver": "exact"}), ("lm", "lm", {})]
    if not quick:  # inexact trust-region solves crawl on BA (thousands of iterations): capped at LSMR_NFEV
        variants.append(("trf lsmr", "trf", {"tr_solver": "lsmr", "max_nfev": LSMR_NFEV}))
    for label, method, options in variants:
        for jac in ("exact", "2-point"):
            if quick and jac == "2-point" and n > 50:
                continue
            result, elapsed = _scipy(problem, method, jac, **dict(options))
            dense = method == "lm" or options.get("tr_solver") == "exact"
            if jac == "exact":
                passes = "1 dense" if dense else "CSR"
            else:
                passes = n if dense else _groups(problem)
            what = "adarray exact" if jac == "exact" else "finite differences"
            rows.append([f"scipy {label}", what, seconds(elapsed), result.njev or "", result.nfev, passes,
                         result.cost])
    best = min(r[-1] for r in rows if r[-1] is not None)
    for row in rows:
        cost = row[-1]
        distance = "" if cost is None else f"{(cost - best) / best:.1e}"
        table.add([problem.name, *row[:-1], "" if cost is None else f"{cost:.10g}", distance])
    scipy_best = min(r[-1] for r in rows if r[0].startswith("scipy") and r[-1] is not None)
    if not lm.cost <= scipy_best * (1 + CHECK):
        failures.append(f"{problem.name}: adarray LM cost {lm.cost:.10g} above SciPy's best {scipy_best:.10g}")


def problem_size(problem):
    return sum(np.size(leaf) for leaf in ad.tree_util.tree_leaves(problem.x0))


def run_solve(args, failures):
    table = Table("Solvers from the same start", ["problem", "solver", "Jacobian", "time s (first / warm)",
                                                  "iterations", "residual evals", "passes per J", "final cost",
                                                  "above best"])
    showcases = [problems.bundle_adjustment(name, args.observations) for name in args.instances]
    if not args.quick:
        showcases += [problems.hand_tracking("simple_small/hand1_t26_c100.txt"),
                      problems.hand_tracking("complicated_small/hand1_t26_c100.txt")]
    showcases.append(problems.exponentials())
    for problem in showcases:
        solve_rows(problem, table, failures, args.quick)
    table.note("adarray times: the first solve (tracing, sparsity pattern, colouring, compilation) / a second solve "
               "from the same start. SciPy: one solve with adarray's Jacobian (lm and trf exact get it dense) or "
               "with 2-point differences (lm and trf exact difference every column; trf lsmr groups the columns "
               f"by adarray's pattern). Iterations: SciPy's Jacobian evaluations. max_nfev = 5000 ({LSMR_NFEV} for trf "
               "lsmr, which crawls on BA: its inexact steps wander along the 7 free directions of the gauge).")
    return table


# --- jacobian ---------------------------------------------------------------------------------------------------


def _jax_blocks(mode):
    from benchmarks.adbench import tool_jax

    tool_jax.configure(1)
    jax = tool_jax._jax()
    derivative = jax.jacfwd if mode == "fwd" else jax.jacrev
    blocks = jax.jit(jax.vmap(derivative(tool_jax.reprojection_error, argnums=(0, 1, 2))))
    weights = jax.jit(jax.vmap(jax.grad(lambda w: 1 - w * w)))

    def run(cams, points, w, cam_index, point_index, features):
        d_cam, d_point, d_weight = blocks(cams[cam_index], points[point_index], w, features)
        return (np.asarray(d_cam), np.asarray(d_point), np.asarray(d_weight), np.asarray(weights(w)))

    return run


def _best(call, repeats):
    begin = time.perf_counter()
    result = call()
    first = time.perf_counter() - begin
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        call()
        times.append(time.perf_counter() - begin)
    return result, first, min(times)


def run_jacobian(args, failures):
    table = Table("BA Jacobian alone, scenes at the size of ADBench's files",
                  ["instance", "n, m, p", "nonzeros", "tool", "how", "passes", "first s", "best s", "max rel diff"])
    have_jax = "jax" in args.tools and _has("jax")
    for name in args.instances:
        problem = problems.bundle_adjustment(name, observations=500 if args.quick else 10 ** 9)
        cam_index, point_index, features = problem.args
        params = problem.x0
        layout = BAData(params["cams"], params["points"], params["weights"], np.stack([cam_index, point_index], 1),
                        features)
        arrays = (params["cams"], params["points"], params["weights"], cam_index, point_index, features)
        jac = ad.sparse_jacobian(problem.residual)
        reference, first, best = _best(lambda j=jac, x=params, rest=problem.args: j(x, *rest), args.repeats)
        sizes = f"{len(params['cams'])}, {len(params['points'])}, {len(params['weights'])}"
        table.add([name.split("_")[0], sizes, reference.nnz, "adarray", "sparse_jacobian (forward, coloured)",
                   jac.num_passes(params, *problem.args), seconds(first), seconds(best), "0"])
        variants = [("adarray", "ADBench blocks: vmap(jacrev), CSR", ad.jit(ba_blocks))]
        if have_jax:
            variants += [("jax", "jit(vmap(jacfwd)), CSR", _jax_blocks("fwd")),
                         ("jax", "jit(vmap(jacrev)), CSR", _jax_blocks("rev"))]
        for tool, how, blocks in variants:
            matrix, first, best = _best(lambda b=blocks, d=layout, a=arrays: ba_sparse_jacobian(d, *b(*a)),
                                        args.repeats)
            error = abs(matrix - reference).max() / abs(reference).max()
            table.add([name.split("_")[0], sizes, reference.nnz, tool, how, "", seconds(first), seconds(best),
                       f"{error:.1e}"])
            if not error <= 1e-10:
                failures.append(f"{name}: {tool} {how}: Jacobian differs by {error:.1e}")
    if "jax" in args.tools and not have_jax:
        table.note("JAX is not installed (pip install -e '.[bench]'): its rows are missing.")
    table.note("One thread per library. The block layouts store all 15 entries of a row pair (the x row does not "
               "depend on the principal point's y, nor the y row on its x); sparse_jacobian stores the 14 "
               "structural non-zeros of each row.")
    return table


def _has(module):
    import importlib.util

    return importlib.util.find_spec(module) is not None


# --- colouring --------------------------------------------------------------------------------------------------


def _pattern_hand(quick: bool) -> str:
    """The hand of the colouring table: ADBench's big complicated hand5 (800 points) when the data folder holds
    it (--data, $ADBENCH_DATA), else the largest complicated hand shipped with the repository (400 points)."""
    if quick:
        return "complicated_small/hand1_t26_c100.txt"
    big = "complicated_big/hand5_t26_c800.txt"
    return big if (data_root() / "hand" / big).is_file() else "complicated_small/hand4_t26_c400.txt"


def _patterns(args):
    rng = np.random.default_rng(0)
    problem = problems.bundle_adjustment(args.instances[0], observations=500 if args.quick else 10 ** 9)
    found = {problem.name: ad.jacobian_sparsity(problem.residual, problem.x0, *problem.args)}
    hand = problems.hand_tracking(_pattern_hand(args.quick))
    found[hand.name] = ad.jacobian_sparsity(hand.residual, hand.x0, *hand.args)
    k = 30 if args.quick else 200
    line = sp.diags([np.ones(k - 1), np.ones(k), np.ones(k - 1)], [-1, 0, 1], format="csr")
    found[f"5-point stencil {k}x{k}"] = (sp.kron(sp.identity(k), line) + sp.kron(line, sp.identity(k))).astype(
        bool).tocsr()
    for m, n, per in ((2000, 1000, 5),) if args.quick else ((20000, 10000, 5), (5000, 5000, 10)):
        rows, cols = np.repeat(np.arange(m), per), rng.integers(0, n, m * per)
        found[f"random {m}x{n}, {per} per row"] = sp.csr_matrix((np.ones(m * per, bool), (rows, cols)), shape=(m, n))
    return found


def run_colouring(args, failures):
    table = Table("Column colouring orders", ["pattern", "shape", "lower bound", "method", "colours", "time s"])
    for name, pattern in _patterns(args).items():
        bound = colouring.lower_bound(pattern)
        for method in colouring.METHODS:
            begin = time.perf_counter()
            colours = colouring.colour_columns(pattern, method)
            elapsed = time.perf_counter() - begin
            if not colouring.is_valid(pattern, colours):
                failures.append(f"{name}: {method} gave an invalid colouring")
            table.add([name, f"{pattern.shape[0]}x{pattern.shape[1]}", bound, method, int(colours.max()) + 1,
                       seconds(elapsed)])
    return table


# --- plot -------------------------------------------------------------------------------------------------------


def _scipy_history(problem, method, options):
    """SciPy's cost at each Jacobian evaluation (one per iteration), from a wrapped Jacobian."""
    flat = Parameters("plot", problem.x0)
    value = ad.jit(problem.residual)
    jac = ad.sparse_jacobian(problem.residual)
    history = []

    def fun(vector):
        return flat.flat(value(flat.tree(vector), *problem.args))

    def jacobian(vector):
        r = fun(vector)
        history.append(0.5 * float(r @ r))
        matrix = jac(flat.tree(vector), *problem.args)
        return matrix.toarray() if method == "lm" or options.get("tr_solver") == "exact" else matrix

    scipy.optimize.least_squares(fun, flat.x0, jac=jacobian, method=method, max_nfev=5000, **options)
    return history


def run_plot(args, failures, out):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\nmatplotlib is not installed (pip install -e '.[bench]'): no plot")
        return None
    showcases = [problems.bundle_adjustment(args.instances[0], args.observations),
                 problems.hand_tracking("complicated_small/hand1_t26_c100.txt"), problems.exponentials()]
    figure, axes = plt.subplots(1, len(showcases), figsize=(5 * len(showcases), 4))
    for axis, problem in zip(axes, showcases):
        curves = {"adarray LM": optim.levenberg_marquardt(problem.residual, problem.x0, problem.args).history}
        try:
            curves["adarray GN"] = optim.gauss_newton(problem.residual, problem.x0, problem.args).history
        except optim.SingularJacobianError:
            pass
        curves["scipy trf (exact J)"] = _scipy_history(problem, "trf", {"tr_solver": "exact"})
        curves["scipy lm (exact J)"] = _scipy_history(problem, "lm", {})
        floor = min(min(c) for c in curves.values())
        for label, costs in curves.items():
            axis.semilogy(np.arange(len(costs)), np.asarray(costs) - floor * (1 - 1e-12) + 1e-300, label=label,
                          marker=".")
        axis.set_title(problem.name, fontsize=9)
        axis.set_xlabel("iteration")
        axis.set_ylabel("cost - final cost")
        axis.legend(fontsize=8)
    figure.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "solvers_cost.png"
    figure.savefig(path, dpi=120)
    print(f"\nwrote {path}")
    return path


# --- main -------------------------------------------------------------------------------------------------------


def parse(argv):
    parser = argparse.ArgumentParser(prog="adarray bench solvers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--section", default=",".join(SECTIONS), help=f"comma-separated: {', '.join(SECTIONS)}")
    parser.add_argument("--observations", type=int, default=300, help="observations per BA scene in 'solve' (300)")
    parser.add_argument("--instances", default="ba1,ba2,ba3,ba4,ba5", help="ADBench BA files (ba1..ba5)")
    parser.add_argument("--repeats", type=int, default=3, help="warm calls per Jacobian (minimum reported)")
    parser.add_argument("--tools", default="adarray,jax", help="peers for 'jacobian': adarray,jax (default both)")
    parser.add_argument("--quick", action="store_true", help="small sizes, fewer variants (seconds, for tests)")
    parser.add_argument("--out", default=None, help="folder for solvers.md and solvers_cost.png (default: results/)")
    args = parser.parse_args(argv)
    args.sections = [s for s in args.section.split(",") if s]
    args.tools = [t for t in args.tools.split(",") if t]
    for section in args.sections:
        if section not in SECTIONS:
            parser.error(f"unknown section {section!r}; choose from {', '.join(SECTIONS)}")
    chosen = [s.strip() for s in args.instances.split(",") if s.strip()]
    known = {name.split("_")[0]: name for name in problems.BA_INSTANCES}
    unknown = [c for c in chosen if c not in known and c not in problems.BA_INSTANCES]
    if unknown:
        parser.error(f"unknown BA instance(s) {unknown}; choose from {', '.join(known)}")
    args.instances = [known.get(c, c) for c in chosen]
    if args.quick:
        args.observations, args.repeats, args.instances = min(args.observations, 60), 1, args.instances[:1]
    return args


def main(argv=None) -> int:
    args = parse(argv)
    try:
        data_root()
    except FileNotFoundError as error:
        print(f"adarray bench solvers: {error}", file=sys.stderr)
        return 2
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    print(f"# least squares: {os.cpu_count()} cores (shared), OPENBLAS_NUM_THREADS={threads}, numpy {np.__version__}, "
          f"scipy {scipy.__version__}, adarray {ad.__version__}")
    failures, tables = [], []
    out = Path(args.out) if args.out else Path("results")
    for section in args.sections:
        if section == "plot":
            run_plot(args, failures, out)
        else:
            tables.append({"solve": run_solve, "jacobian": run_jacobian, "colouring": run_colouring}[section](
                args, failures))
    if args.out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "solvers.md").write_text("# Least-squares benchmark\n\n" + "\n".join(t.markdown() for t in tables))
        print(f"wrote {out / 'solvers.md'}")
    print()
    if failures:
        print("FAILED checks:\n" + "\n".join(f"- {f}" for f in failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
