"""`adarray bench reversible` (benchmarks/reversible.py): a quick run prints every table and passes its gradient
checks, a wrong gradient makes it exit 1, bad options exit 2. No timing is asserted (Numba and JAX are left out:
compiling them would dominate the test)."""

import pytest
from benchmarks import reversible as bench

import adarray.reversible as rv
import adarray.sparse as sp


@pytest.fixture
def interpreter_only(monkeypatch):
    monkeypatch.setattr(bench, "HAVE_NUMBA", False)


def test_a_quick_run_prints_every_table_and_checks_every_gradient(interpreter_only, capsys):
    before = (rv.reversible_backend(), sp.get_method())
    code = bench.main(["--quick", "--no-peers"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "## loop: leapfrog, 1,000-element state, 1,000 steps" in out
    assert "## stack: y <- 1.3 sin(y), 1,000-element state, 100 steps" in out
    for row in ("| reverse computing, rv (NumPy)", '| ad.fold, checkpoint="all" |', "| ad.fold, checkpoint=100 |",
                '| ad.fold, checkpoint="binomial" |', "| rv, a stack of the inputs (NumPy) |", "| rv (numpy) |",
                "| dot(A, B)^2 | 0.01 | index |",
                "| sum((A @ v)^2) | 0.05 | reversible (numpy) |", "| array program, ad.grad |",
                "| reversible, rv.grad (numpy) |"):
        assert row in out, row
    assert "WRONG" not in out and "Numba" not in out.split("## bessel")[0]
    assert (rv.reversible_backend(), sp.get_method()) == before  # the run restores both


def test_a_wrong_gradient_is_reported_and_exits_1(interpreter_only, monkeypatch, capsys):
    monkeypatch.setattr(bench, "RTOL", -1.0)  # every comparison fails
    assert bench.main(["--quick", "--section", "bessel"]) == 1
    out = capsys.readouterr().out
    assert "| rv (numpy) |" in out and "WRONG (" in out and "\nWRONG: bessel numpy" in out
    monkeypatch.setattr(bench, "RTOL", 1e-8)
    assert bench.main(["--quick", "--section", "bessel"]) == 0  # the failures of a run do not stay


def test_an_unknown_section_exits_2(capsys):
    with pytest.raises(SystemExit) as info:
        bench.main(["--section", "loop,tape"])
    assert info.value.code == 2 and "unknown section 'tape'" in capsys.readouterr().err
