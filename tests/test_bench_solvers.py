"""`adarray bench solvers` (benchmarks/solvers.py): a quick run prints its tables, passes its checks and writes the
plot; bad options exit 2. No timing is asserted."""
import importlib.util

import pytest
from benchmarks import solvers

from adarray.cli import main as cli_main
from test_adbench import needs_data


@needs_data
def test_quick_run_prints_every_table_and_passes_its_checks(tmp_path, capsys):
    code = solvers.main(["--quick", "--tools", "adarray", "--section", "solve,jacobian,colouring,plot",
                         "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "| BA ba1 scene (n3 m16 p60) | adarray LM | exact, sparse_jacobian |" in out
    assert "| BA ba1 scene (n3 m16 p60) | adarray GN | exact, sparse_jacobian | refused: J^T J singular |" in out
    assert "| scipy lm | finite differences |" in out
    assert "| sum of 3 exponentials (200 points) | scipy trf exact |" in out
    assert "sparse_jacobian (forward, coloured) | 14 |" in out
    assert "| 5-point stencil 30x30 | 900x900 | 5 | dsatur | 5 |" in out
    assert "all checks passed" in out
    assert (tmp_path / "solvers.md").read_text().startswith("# Least-squares benchmark")
    if importlib.util.find_spec("matplotlib"):  # the test extra installs it; a bare install says why there is no plot
        assert (tmp_path / "solvers_cost.png").stat().st_size > 1000
    else:
        assert "matplotlib is not installed" in out and not (tmp_path / "solvers_cost.png").exists()


@pytest.mark.parametrize("argv, message", [(["--section", "everything"], "unknown section"),
                                           (["--instances", "ba99"], "unknown BA instance")])
def test_bad_options_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["bench", "solvers", *argv])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
