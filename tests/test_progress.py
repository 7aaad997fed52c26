"""adarray.progress: the one progress helper of the solvers and the benchmarks (tqdm when installed)."""
import io
import sys

import numpy as np

import adarray.numpy as anp
from adarray import optim
from adarray.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_updates_are_lines_in_a_log_and_one_rewritten_line_on_a_terminal(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # as without the optional dependency
    log = io.StringIO()
    progress = Progress(3, "solve", show=True, stream=log)
    progress.update("cost=2")
    progress.update("cost=1")
    progress.close()
    lines = log.getvalue().splitlines()
    assert lines[:2] == ["solve: [1/3] cost=2", "solve: [2/3] cost=1"] and lines[2].startswith("solve: done in")
    terminal = Terminal()
    progress = Progress(3, "solve", show=True, stream=terminal)
    progress.update("cost=2")
    progress.update("cost=1")
    progress.close()
    assert terminal.getvalue().startswith("\rsolve: [1/3] cost=2\rsolve: [2/3] cost=1\nsolve: done in")


def test_show_none_is_silent_off_a_terminal_and_false_always():
    for show, stream in ((None, io.StringIO()), (False, Terminal()), (False, io.StringIO())):
        progress = Progress(2, "quiet", show=show, stream=stream)
        progress.start("a")
        progress.update("b")
        progress.close()
        assert stream.getvalue() == ""


def test_a_bar_on_a_terminal_counts_started_and_finished_steps(capsys):
    terminal = Terminal()
    progress = Progress(2, "bench", stream=terminal, leave=True)
    assert progress.bar is not None  # tqdm is a test dependency
    progress.start("first")
    progress.write("| row |")
    progress.start("second")
    progress.close()
    assert progress.bar.n == 2 and "bench" in terminal.getvalue() and "2/2" in terminal.getvalue()
    assert capsys.readouterr().out == "| row |\n"
    finished = Progress(3, "solve", stream=Terminal(), show=None)
    finished.update("cost=1.5")
    finished.close()
    assert finished.bar.n == 1 and finished.bar.postfix == "cost=1.5"


def test_safe_rate_reports_its_steps_when_asked(capfd, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    result = optim.safe_rate(lambda p: anp.sum((p - 1.0) ** 2), np.zeros(2), steps=3, progress=True)
    err = capfd.readouterr().err
    assert "safe_rate '<lambda>': [3/3] loss=" in err and len(result.losses) == 4
    optim.safe_rate(lambda p: anp.sum((p - 1.0) ** 2), np.zeros(2), steps=3)
    assert capfd.readouterr().err == ""
