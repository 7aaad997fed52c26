"""`adarray bench parallel --quick`: every primitive x operator x rule row the issue asks for is
measured, and the specialised rules run without the general machinery."""

import numpy as np
from benchmarks.parallel_primitives import cases

import adarray as ad
from adarray.cli import main


def test_quick_run_covers_every_primitive_operator_and_rule(capfd):
    """(It runs in a child process that fixes the thread counts: capfd sees that process's output.)"""
    assert main(["bench", "parallel", "--quick", "--no-peers"]) == 0
    rows = {tuple(cell.strip() for cell in line.strip("|").split("|")[:3])
            for line in capfd.readouterr().out.splitlines() if line.startswith("| ") and "---" not in line}
    for kind in ("reduce", "scan", "reduce_by_index[100]"):
        for operator in ("add", "mul", "min"):
            assert (kind, operator, "specialised") in rows
    general = "reduce_by_index[100] n=2,000"
    for kind in ("reduce", "scan", general):
        for operator in ("add", "mul", "min", "matmul2x2", "linear-composition"):
            assert (kind, operator, "general") in rows, (kind, operator)


def test_specialised_rows_use_no_general_rule_and_general_rows_do():
    for kind, operator, rule, fn, arg in cases(64, [8], np.random.default_rng(0), 32):
        text = str(ad.make_ir(ad.grad(fn))(arg))
        uses_general = "general_scan" in text or "general_reduce" in text
        assert uses_general == (rule == "general"), (kind, operator, rule)
