"""`adarray bench`: the ADBench smoke run, the dispatcher's errors, and the per-primitive profiler."""
import csv
import functools

import numpy as np
import pytest
from benchmarks.adbench.profiling import PrimitiveProfiler

import adarray as ad
import adarray.numpy as anp
from adarray.backends.numpy import IMPLS
from adarray.cli import main
from test_adbench import needs_data


@needs_data
def test_quick_adbench_run_writes_table_csv_and_plots(tmp_path, capfd):
    # The run happens in a child process that fixes the thread counts, hence capfd (file descriptors).
    code = main(["bench", "adbench", "--quick", "--tools", "adarray", "--out", str(tmp_path)])
    out = capfd.readouterr().out
    assert code == 0, out
    assert "| problem | instance | size | adarray F | adarray J | adarray J/F |" in out
    for problem in ("gmm", "ba", "hand-simple", "hand-complicated", "lstm"):
        assert f"| {problem} |" in out
    assert "threads: 1" in out and "finite differences" in out and "WRONG" not in out
    rows = list(csv.DictReader(open(tmp_path / "adbench_results.csv")))
    assert len(rows) == 5 and {row["status"] for row in rows} == {"ok"}
    assert all(float(row["derivative"]) > 0 and float(row["error_derivative"]) < 1e-5 for row in rows)
    assert (tmp_path / "adbench_results.md").read_text().startswith("# ADBench")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "adbench_ratio.png").stat().st_size > 1000
    assert (tmp_path / "adbench_jacobian.png").stat().st_size > 1000


@needs_data
def test_profiled_adbench_run_breaks_time_down_by_primitive(tmp_path, capfd):
    code = main(["bench", "--profile", "adbench", "--quick", "--problems", "lstm", "--out", str(tmp_path)])
    out = capfd.readouterr().out
    assert code == 0, out
    assert "| primitive | self time (ms) | calls | µs/call | share |" in out
    assert "| fold |" in out and "| logistic |" in out  # the loop and the gates' sigmoids were measured
    assert (tmp_path / "adbench_profile.md").is_file()


def test_a_missing_benchmark_module_exits_2_with_a_clear_message(capsys, monkeypatch):
    from adarray import cli

    monkeypatch.setitem(cli.BENCHMARKS, "missing", ("benchmarks.not_there", "not_there.py", "nothing"))
    assert main(["bench", "missing"]) == 2
    assert "the 'missing' benchmark is not available" in capsys.readouterr().err


def test_bench_without_a_name_lists_the_benchmarks(capsys):
    assert main(["bench"]) == 2
    err = capsys.readouterr().err
    assert "adbench" in err and "parallel" in err and "mixed" in err


@pytest.mark.parametrize("argv, message", [
    (["--problems", "gmm,foo"], "unknown problem foo"),
    (["--tools", "adarray,tensorflow"], "unknown tool tensorflow"),
    (["--threads", "0"], "--threads must be at least 1"),
    (["--runs", "0"], "--runs must be at least 1"),
])
def test_bad_adbench_options_exit_2(capsys, argv, message):
    assert main(["bench", "adbench", *argv]) == 2
    assert message in capsys.readouterr().err


def test_profiler_measures_what_runs_under_it_and_restores_the_implementations():
    originals = dict(IMPLS)

    def loss(x):
        return anp.sum(anp.sin(x) * anp.exp(x))

    staged_before = ad.jit(ad.grad(loss))
    staged_before(np.ones(3))
    with PrimitiveProfiler() as profile:
        staged_before(np.ones(3))            # staged again under the profiler: seen
    assert IMPLS == originals
    assert profile.calls["sin"] == 1 and profile.calls["exp"] == 1 and profile.calls["cos"] == 1
    assert 0 < profile.total <= profile.wall
    staged_before(np.ones(3))                # outside any profiler it still runs (untimed)
    assert profile.calls["sin"] == 1
    with PrimitiveProfiler() as again:
        ad.grad(loss)(np.ones(3))
        ad.grad(loss)(np.ones(3))            # un-jitted: the second call reuses the program staged here
    assert again.calls["sin"] == 2 and "| sin |" in again.table()


def test_profiler_charges_loop_bodies_to_their_primitives_not_twice():
    def loop(x):
        return ad.fold(lambda carry, _: (anp.sin(carry), None), x, length=50)[0].sum()

    with PrimitiveProfiler() as profile:
        ad.jit(functools.partial(loop))(np.ones(4))
    assert profile.calls["sin"] == 50 and profile.calls["fold"] == 1
    assert profile.total <= profile.wall


@needs_data
def test_a_missing_peer_is_skipped_with_a_note(tmp_path, capsys, monkeypatch):
    from benchmarks.adbench import run as adbench_run

    monkeypatch.setattr(adbench_run, "available", lambda tool: tool == "adarray")
    args = adbench_run.build_parser().parse_args(["--quick", "--no-plots", "--out", str(tmp_path)])
    code = adbench_run.run(args, ["gmm"], ["adarray", "jax", "torch"], "tiny")
    out = capsys.readouterr().out
    assert code == 0
    assert "- jax: not installed, skipped" in out and "- torch: not installed, skipped" in out
    assert "| gmm | 1k/gmm_d2_K5 | 30 |" in out and "jax F" not in out


def test_a_missing_data_folder_exits_2(tmp_path, capfd):
    assert main(["bench", "adbench", "--quick", "--data", str(tmp_path / "none"), "--out", str(tmp_path)]) == 2
    assert "ADBench data not found" in capfd.readouterr().err


@needs_data
def test_max_seconds_skips_the_larger_instances_of_a_problem(tmp_path, capsys):
    from benchmarks.adbench import run as adbench_run

    args = adbench_run.build_parser().parse_args(["--quick", "--no-plots", "--max-seconds", "0", "--out",
                                                  str(tmp_path)])
    assert adbench_run.run(args, ["gmm"], ["adarray"], "small") == 0
    rows = list(csv.DictReader(open(tmp_path / "adbench_results.csv")))
    assert [row["status"] for row in rows] == ["ok"] + ["skipped: over --max-seconds"] * 3
    assert "| gmm | 1k/gmm_d10_K5 | 330 | skipped | - | - |" in capsys.readouterr().out


def test_overhead_benchmark_checks_its_gradient_and_prints_the_tables(capsys):
    assert main(["bench", "overhead", "--quick", "--clock", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "| ad.grad(f) |" in out and "overhead per call" in out and "WRONG" not in out
    assert "| equations | ad.jit µs/call | NumPy by hand µs/call | dispatch µs/equation |" in out
    assert "\n| 10 |" in out and "\n| 100 |" in out  # the program lengths (1,000 in a full run)
    assert "| adarray: ad.grad(f)(x, y) |" in out


def test_the_tiers_benchmark_measures_a_background_compile_in_a_child(capfd):
    assert main(["bench", "tiers", "--quick", "--variants", "child"]) == 0
    out = capfd.readouterr().out
    assert "| compiled | interpreted | calls while compiling | median | p90 | longest | compile s | compiled |" in out
    assert "| in a child process (the default) | " in out and "WRONG" not in out and "failed" not in out
    assert main(["bench", "tiers", "--variants", "fork"]) == 2
    assert "unknown variant fork" in capfd.readouterr().err
