"""`adarray bench train` and `adarray bench ode` (benchmarks/train.py, benchmarks/ode.py): quick runs on the NumPy
interpreter print their tables, pass their own checks, write Markdown, CSV and a plot; a disagreement makes them
exit 1. No timing is asserted. (In process: `main` would first re-run itself in a child process that fixes the
thread counts.)"""
import numpy as np
import pytest
from benchmarks import ode, train

from adarray.cli import main as cli_main


def quick(module, tools, tmp_path, *extra):
    args = module.build_parser().parse_args(["--quick", "--clock", "cpu", "--out", str(tmp_path), "--plot",
                                             str(tmp_path / "plot.png"), *extra])
    if module is train:
        args.epochs = 2  # on 517 samples: 3 batches an epoch
    else:
        args.horizon, args.points, args.steps, args.repeat = 1.0, 3, 2, 1
    return module.run(args, tools)


def test_a_quick_training_run_prints_its_table_and_checks_the_tools_agree(tmp_path, capsys):
    assert quick(train, ["default", "numpy", "torch"], tmp_path) == 0
    out = capsys.readouterr().out
    assert "| tool | first epoch s | steady epoch ms | steady step µs | last epoch's loss |" in out
    assert "| default (adarray" in out and "| numpy (adarray" in out and "WRONG" not in out
    assert ("| torch | not installed, skipped |" in out) or ("| torch (PyTorch" in out)
    assert (tmp_path / "train.md").read_text().count("\n") == 4
    assert (tmp_path / "train.csv").read_text().startswith("tool,version,first_epoch_s")
    assert (tmp_path / "plot.png").stat().st_size > 1000


def test_training_disagreeing_parameters_exit_1(tmp_path, capsys, monkeypatch):
    real = train.trainer

    def off_by_a_bit(tool):
        run, to_numpy, version = real(tool)
        if tool != "numpy":
            return run, to_numpy, version
        return run, lambda params: {k: v * 1.001 for k, v in to_numpy(params).items()}, version

    monkeypatch.setattr(train, "trainer", off_by_a_bit)
    assert quick(train, ["default", "numpy"], tmp_path) == 1
    assert "WRONG: numpy ends with other parameters than default" in capsys.readouterr().out


def test_the_generated_digits_have_the_shape_of_scikit_learns():
    images, labels, _ = train.digits()
    assert images.shape == (1797, 64) and labels.shape == (1797,)
    assert images.min() >= 0 and images.max() <= 1 and set(np.unique(labels)) == set(range(10))
    again, _, _ = train.digits()
    np.testing.assert_array_equal(images, again)  # deterministic


def test_a_quick_ode_fit_prints_its_table_and_checks_the_gradient(tmp_path, capsys):
    assert quick(ode, ["default", "numpy"], tmp_path) == 0
    out = capsys.readouterr().out
    assert "| tool | gradient ms | first call s | fit s | final loss | gradient vs differences |" in out
    assert "| default (adarray" in out and "| numpy (adarray" in out and "WRONG" not in out
    assert (tmp_path / "ode.md").is_file() and (tmp_path / "ode.csv").is_file()
    assert (tmp_path / "plot.png").stat().st_size > 1000


def test_an_ode_gradient_off_from_finite_differences_exits_1(tmp_path, capsys, monkeypatch):
    real = ode.finite_differences
    monkeypatch.setattr(ode, "finite_differences", lambda loss, theta: real(loss, theta) * 1.01)
    assert quick(ode, ["numpy"], tmp_path) == 1
    assert "WRONG: numpy: gradient differs from central differences" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["train", "ode"])
def test_the_benchmarks_are_registered_and_reject_unknown_tools(name, capsys):
    assert cli_main(["bench", name, "--tools", "numpy,tensorflow"]) == 2
    assert "unknown tool tensorflow" in capsys.readouterr().err
    assert cli_main(["bench"]) == 2
    assert name in capsys.readouterr().err
