"""Results out: a Markdown report (a side-by-side table of F, J and J/F per instance and tool, then the details),
a CSV with every field, and PNG plots (J/F and J time against problem size, log-log) when matplotlib is installed."""
from __future__ import annotations

import csv
import math
from dataclasses import asdict
from pathlib import Path

from .harness import Result

PROBLEM_AXES = {"gmm": "K (1 + d + d(d+1)/2)", "ba": "11 n + 3 m + 2 p", "hand-simple": "points N",
                "hand-complicated": "points N", "lstm": "layers x characters"}


def _seconds(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.0f} µs"


def _number(value: float, digits: int = 1) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _instances(results):
    seen = []
    for r in results:
        if (r.problem, r.instance) not in seen:
            seen.append((r.problem, r.instance))
    return seen


def side_by_side(results: list[Result], tools: list[str]) -> str:
    """One row per instance: F, J and J/F of every tool."""
    header = "| problem | instance | size | " + " | ".join(f"{t} F | {t} J | {t} J/F" for t in tools) + " |"
    lines = [header, "|" + "---|" * 3 + "---:|" * (3 * len(tools))]
    by_key = {(r.problem, r.instance, r.tool): r for r in results}
    for problem, instance in _instances(results):
        size = next(r.size for r in results if (r.problem, r.instance) == (problem, instance))
        cells = []
        for tool in tools:
            r = by_key.get((problem, instance, tool))
            if r is None or r.status not in ("ok", "WRONG"):
                reason = "n/a" if r is None else r.status.split(":")[0]
                cells += [reason, "-", "-"]
            else:
                mark = " (WRONG)" if r.status == "WRONG" else ""
                cells += [_seconds(r.objective) + mark, _seconds(r.derivative), _number(r.ratio)]
        lines.append(f"| {problem} | {instance} | {size} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def details(results: list[Result]) -> str:
    """First calls, peak memory and the correctness checks of every run."""
    lines = ["| problem | instance | tool | first F | first J | peak MB (J) | error F | error J (vs) | status |",
             "|---|---|---|---:|---:|---:|---:|---|---|"]
    for r in results:
        checked = f"{r.error_derivative:.1e} ({r.checked_against})" if r.checked_against else "-"
        error_f = "-" if math.isnan(r.error_objective) else f"{r.error_objective:.1e}"
        note = f"{r.status}; {r.note}" if r.note else r.status
        lines.append(f"| {r.problem} | {r.instance} | {r.tool} | {_seconds(r.first_objective)} | "
                     f"{_seconds(r.first_derivative)} | {_number(r.peak_mb)} | {error_f} | {checked} | {note} |")
    return "\n".join(lines)


def markdown(results: list[Result], tools: list[str], header: str) -> str:
    return "\n\n".join([
        header,
        "F: objective, J: derivative (gradient / sparse Jacobian / Jacobian), minimum seconds per call over the "
        "repeats (ADBench protocol); J/F: their ratio. First calls (tracing and compilation included) are "
        "excluded from the minimum and listed below.",
        side_by_side(results, tools),
        "Details: first calls, peak memory growth during one J call, and the checks (ADBench's |a-b| / "
        "max(1, |a|+|b|): F against the plain-NumPy reference, J against adarray's J or, for adarray, J v against "
        "central differences of the reference along a random v).",
        details(results),
    ]) + "\n"


def write_csv(results: list[Result], path: Path) -> None:
    fields = [name for name in asdict(results[0]) if name != "extra"] + ["ratio"] if results else ["tool"]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for r in results:
            row = asdict(r)
            row["ratio"] = r.ratio
            writer.writerow(row)


def plot(results: list[Result], tools: list[str], out: Path) -> list[Path]:
    """J/F and J time against problem size (log-log), one panel per problem; [] without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import NullFormatter
    except ImportError:
        return []
    good = [r for r in results if r.status == "ok" and r.derivative > 0]
    problems = [p for p in PROBLEM_AXES if any(r.problem == p for r in good)]
    if not problems:
        return []
    written = []
    for metric, label, name in [("ratio", "J / F", "adbench_ratio.png"),
                                ("derivative", "J time (s)", "adbench_jacobian.png")]:
        columns = min(3, len(problems))
        rows = -(-len(problems) // columns)
        figure, axes = plt.subplots(rows, columns, figsize=(4.6 * columns, 3.6 * rows), squeeze=False)
        for axis in axes.flat[len(problems):]:
            axis.set_visible(False)
        for axis, problem in zip(axes.flat, problems):
            for tool in tools:
                points = sorted((r.size, getattr(r, metric)) for r in good if r.problem == problem and r.tool == tool)
                if points:
                    axis.plot(*zip(*points), marker="o", label=tool)
            axis.set_xscale("log")
            axis.set_yscale("log")
            sizes = [r.size for r in good if r.problem == problem]
            if max(sizes) > 10 * min(sizes):  # several decades: their labels only (the minor ones overlap)
                axis.xaxis.set_minor_formatter(NullFormatter())
            axis.set_title(problem)
            axis.set_xlabel(PROBLEM_AXES[problem])
            axis.set_ylabel(label)
            axis.grid(True, which="both", alpha=0.3)
        axes[0][0].legend()
        figure.tight_layout()
        path = out / name
        figure.savefig(path, dpi=110)
        plt.close(figure)
        written.append(path)
    return written
