"""`adarray bench mixed` (benchmarks/mixed_mode.py): a quick run prints every table and passes its gradient
checks, a wrong gradient makes it exit 1, and the helpers behave. No timing is asserted."""

import numpy as np
import pytest
from benchmarks import mixed_mode

import adarray.numpy as anp
from adarray.cli import main as cli_main
from adarray.kernels import execution, kernel, kernel_backend

# adarray only and the NumPy interpreter: no JAX, PyTorch or Numba compilation, so a run takes seconds.
# NumPy programs only: compiling the Numba backend's variants (f, g) takes 15 s on a cold cache; they are tested
# once, in test_the_numba_variant_runs_compiled_and_agrees
QUICK = ["--quick", "--tools", "adarray", "--backends", "numpy", "--backend", "numpy"]


def test_a_quick_run_prints_every_table_and_writes_markdown_and_csv(tmp_path, capsys):
    before = (kernel_backend(), mixed_mode.arity_limits())
    code = mixed_mode.main(QUICK + ["--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "| n | loss | variant | how |" in out
    for row in ("| 64 | sum(c_new²) | (a) adarray reverse, where | array ops |",
                "| 64 | sum(c_new²) | (b) adarray mixed, NumPy interpreter | mixed, partials stored |",
                "| 64 | sum(c_new) | (b) adarray mixed, NumPy interpreter | mixed, fused |"):
        assert row in out
    assert "| backend | form | k | mixed ms | reverse ms |" in out
    assert "| numpy | branch | 2 |" in out and "| numpy | select | 1 |" in out
    assert "- numpy, branch: " in out and "kernel_arity_numpy =" in out
    assert "| variant | how | first call ms |" in out and "(b) adarray mixed, NumPy interpreter" in out
    assert "does not see XLA's or PyTorch's" in out
    assert "WRONG" not in out and "all gradients agree" in out
    assert (kernel_backend(), mixed_mode.arity_limits()) == before  # the run restores both
    assert (tmp_path / "mixed_mode.md").read_text().startswith("# Mixed-mode benchmark")
    for name in ("hmlstm", "arity", "branch"):
        assert (tmp_path / f"mixed_mode_{name}.csv").read_text().count("\n") > 2


def test_a_wrong_gradient_is_reported_and_exits_1(monkeypatch, capsys):
    @kernel
    def doubled_copy(z, zb, c, f, i, g):
        if z == 1.0:
            return anp.sigmoid(i) * anp.tanh(g)
        elif zb == 0.0:
            return 2.0 * c                   # COPY doubled: the gradient w.r.t. c differs from variant (a)
        else:
            return anp.sigmoid(f) * c + anp.sigmoid(i) * anp.tanh(g)

    monkeypatch.setattr(mixed_mode, "hmlstm_cell", doubled_copy)
    code = mixed_mode.main(QUICK + ["--section", "hmlstm", "--losses", "square"])
    out = capsys.readouterr().out
    assert code == 1
    assert "WRONG gradients:" in out and "hmlstm n=64 loss=square: (b) adarray mixed, NumPy interpreter" in out


@pytest.mark.skipif(not execution.numba_available(), reason="numba is not installed")
def test_the_numba_variant_runs_compiled_and_agrees(capsys):
    code = mixed_mode.main(["--quick", "--tools", "adarray", "--backends", "numba", "--section", "hmlstm"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "| 64 | sum(c_new) | (c) adarray mixed, Numba | mixed, fused |" in out
    assert "| 64 | sum(c_new) | (f) adarray mixed, Numba backend | compiled program |" in out
    assert "| 64 | sum(c_new) | (g) adarray reverse, where, Numba backend | compiled program |" in out


def test_without_numba_or_peers_those_variants_are_skipped_with_a_note(monkeypatch, capsys):
    monkeypatch.setattr(execution, "numba_available", lambda: False)
    monkeypatch.setattr(mixed_mode, "load_peer", lambda name, threads: None)
    code = mixed_mode.main(["--quick", "--section", "branch"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "- kernel backend numba: numba is not installed, skipped" in out
    assert "- jax: not installed, skipped" in out and "- torch: not installed, skipped" in out
    assert "Numba" not in out.split("## ")[-1] and "JAX" not in out.split("## ")[-1]


def test_the_cli_dispatches_to_the_benchmark(capsys):
    assert cli_main(["bench", "mixed", *QUICK, "--section", "branch"]) == 0
    assert "Rare expensive branch" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--section", "hmlstm,foo"], "unknown section foo"),
    (["--tools", "tensorflow"], "unknown tool tensorflow"),
    (["--sizes", "0"], "must be at least 1"),
])
def test_bad_options_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        mixed_mode.main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_generated_arity_kernels_are_the_product_of_branches(tmp_path):
    x = [np.array([0.2, 0.7, -1.0]), np.array([0.9, 0.1, 1.2])]
    want = np.prod([np.tanh(np.where(v > 0.5, v, -v)) for v in x], axis=0)
    for form in mixed_mode.ARITY_FORMS:
        assert np.allclose(mixed_mode.arity_kernel(2, form, str(tmp_path))(*x), want)


def test_crossover_is_where_reverse_mode_stays_faster():
    assert mixed_mode.crossover({1: 2.0, 2: 0.9, 3: 1.1, 4: 0.8, 5: 0.7}) == 4
    assert mixed_mode.crossover({1: 2.0, 2: 1.5}) is None
    assert "matches" in mixed_mode.crossover_verdict(9, 16, 8)
    assert "does not match: the measured limit is 3" in mixed_mode.crossover_verdict(4, 16, 8)
    assert "consistent" in mixed_mode.crossover_verdict(None, 16, 16)
    assert "the limit could be at least 16" in mixed_mode.crossover_verdict(None, 16, 8)


@pytest.mark.skipif(not execution.numba_available(), reason="numba is not installed")
def test_the_numba_backend_runs_with_the_peers_thread_count_and_gets_its_own_back(monkeypatch):
    import numba

    seen = []

    def section(args, backends, peers, failures):
        seen.append(numba.get_num_threads())
        return mixed_mode.Table("branch", "a stand-in", ["n"])

    before = numba.get_num_threads()
    monkeypatch.setattr(mixed_mode, "run_branch", section)
    assert mixed_mode.main(["--quick", "--tools", "adarray", "--section", "branch", "--threads", "1"]) == 0
    assert seen == [1] and numba.get_num_threads() == before
