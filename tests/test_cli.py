"""The command line: exit codes and the key lines of each command's output."""
import subprocess
import sys
import textwrap

import pytest

from adarray import __version__
from adarray.cli import main, parse_avals
from adarray.core.types import Aval

MODULE = textwrap.dedent("""
    import adarray.numpy as anp

    def loss(w, x, idx):
        return anp.sum(anp.tanh(x @ w)[idx] ** 2)

    def elementwise(x):
        return anp.sin(x)

    def count(n):
        return anp.sum(n)

    def branchy(x):
        if x > 0:
            return x
        return -x

    not_a_function = 3
""")


@pytest.fixture
def module_file(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODULE)
    return str(path)


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_demo_trains_prints_the_gradient_program_and_passes(capsys):
    code, out, _ = run(capsys, "demo", "--steps", "40")
    assert code == 0
    losses = [float(line.split()[-1]) for line in out.splitlines() if line.strip().startswith("step")]
    assert len(losses) >= 2 and losses[-1] < losses[0]
    assert "{ lambda" in out and "tanh" in out and "einsum" in out
    assert "PASS" in out and "FAIL" not in out


def test_ir_prints_the_program_and_its_gradient(capsys, module_file):
    code, out, _ = run(capsys, "ir", f"{module_file}:loss", "--shapes", "f64[4],f64[3,4],i64[2]")
    assert code == 0
    assert "# loss(f64[4], f64[3,4], i64[2])" in out
    assert "{ lambda a:f64[4] b:f64[3,4] c:i64[2] ." in out
    assert "# grad(loss, argnums=(0, 1))" in out
    assert "scatter" in out  # the transpose of the gather


def test_ir_with_random_inputs_gives_the_same_program(capsys, module_file):
    _, zeros, _ = run(capsys, "ir", f"{module_file}:loss", "--shapes", "f64[4],f64[3,4],i64[2]")
    _, random, _ = run(capsys, "ir", f"{module_file}:loss", "--shapes", "f64[4],f64[3,4],i64[2]", "--seed", "1")
    assert zeros == random


@pytest.mark.parametrize("func, shapes, reason", [
    ("elementwise", "f32[2]", "its output is f32[2], not a float scalar"),
    ("count", "i64[3]", "its output is i64[], not a float scalar"),
])
def test_ir_says_why_there_is_no_gradient(capsys, module_file, func, shapes, reason):
    code, out, _ = run(capsys, "ir", f"{module_file}:{func}", "--shapes", shapes)
    assert code == 0
    assert "{ lambda" in out
    assert f"# no gradient: {reason}" in out


@pytest.mark.parametrize("target, shapes, message", [
    ("{file}:loss", "f64[4],f65[3]", "unknown dtype 'f65'"),
    ("{file}:loss", "f64[4,x]", "bad dimensions [4,x]"),
    ("{file}:loss", "f64", "cannot read a type at 'f64'"),
    ("{file}:loss", "f64[4],", "ends with a comma"),
    ("{file}:loss", "f64[4]", "cannot be called with 1 argument ("),
    ("{file}:missing", "f64[]", "has no function 'missing'"),
    ("{file}:not_a_function", "f64[]", "is not a function"),
    ("{file}", "f64[]", "expected FILE.py:FUNCTION"),
    ("/nonexistent/model.py:loss", "f64[]", "no such file: /nonexistent/model.py"),
])
def test_ir_usage_errors_exit_2_naming_the_problem(capsys, module_file, target, shapes, message):
    code, out, err = run(capsys, "ir", target.format(file=module_file), "--shapes", shapes)
    assert code == 2
    assert message in err
    assert out == ""


def test_ir_reports_a_tracing_error_with_exit_1(capsys, module_file):
    code, _, err = run(capsys, "ir", f"{module_file}:branchy", "--shapes", "f64[]")
    assert code == 1
    assert "TracingError" in err and "branchy" in err


def test_parse_avals():
    assert parse_avals(" f64[3, 4], i32[], bool[2] ") == [
        Aval((3, 4), "float64"), Aval((), "int32"), Aval((2,), "bool")]
    assert parse_avals("") == []


def test_check_passes(capsys):
    code, out, _ = run(capsys, "check")
    assert code == 0
    assert "FAIL" not in out
    assert out.count("PASS") >= 5
    assert "checks passed" in out


def test_bench_needs_a_benchmark_name(capsys):
    code, _, err = run(capsys, "bench")
    assert code == 2
    assert "adbench" in err and "parallel" in err  # tests/test_bench_cli.py covers the benchmarks themselves


def test_version_and_usage(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and __version__ in out
    code, out, _ = run(capsys)
    assert code == 2 and "demo" in out and "ir" in out
    code, _, err = run(capsys, "frobnicate")
    assert code == 2 and "invalid choice" in err


def test_python_dash_m_adarray():
    result = subprocess.run([sys.executable, "-m", "adarray", "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.strip() == f"adarray {__version__}"


def test_ir_into_a_pipe_closed_early_ends_without_a_traceback(tmp_path):
    """`adarray ir ... | head -1`: the reader stops after a line; the IR (far more than a pipe buffer) stops quietly."""
    path = tmp_path / "long.py"
    path.write_text("import adarray.numpy as anp\n\ndef long(x):\n    for _ in range(1500):\n"
                    "        x = anp.sin(x) * 1.01\n    return anp.sum(x)\n")
    process = subprocess.Popen([sys.executable, "-m", "adarray", "ir", f"{path}:long", "--shapes", "f64[3]"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline().startswith("# long(f64[3])")
    process.stdout.close()  # what `head -1` does
    err = process.stderr.read()
    assert process.wait(timeout=120) == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
