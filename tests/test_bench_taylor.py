"""`adarray bench taylor --quick`: the smoke run of benchmarks/taylor.py. Its exit code is 1 when ad.taylor
disagrees with nested jvp (k <= 3) or SafeRate lets a loss increase, so a zero exit checks both."""
from adarray.cli import main


def test_quick_taylor_benchmark_runs_and_checks_itself(capfd):
    code = main(["bench", "taylor", "--quick", "--problems", "mlp,fold"])
    out = capfd.readouterr().out
    assert code == 0, out
    assert "| problem | k | primal | ad.taylor(f, k) | k nested ad.jvp | jax.experimental.jet |" in out
    for row in ("| mlp | 3 |", "| fold | 3 |", "| (x - 3)^4 from 0 | SafeRate | none |",
                "| MLP 2-16-1, tanh | SafeRate | none |"):
        assert row in out, row
    assert "WRONG" not in out
