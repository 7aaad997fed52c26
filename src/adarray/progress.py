"""Progress of a long computation on stderr: the one helper of the solvers (adarray.optim) and the benchmarks.

A tqdm bar when tqdm is installed (an optional dependency: the `optim` and `bench` extras bring it) and the
stream is a terminal; plain lines otherwise, which read well in a log. `show` decides whether anything appears:

    None   a bar on a terminal (after `delay` seconds), nothing elsewhere or without tqdm
    True   a bar on a terminal, plain lines elsewhere or without tqdm
    False  nothing

Steps are reported either as they begin (`start(label)`, for benchmark cases) or as they end
(`update(status)`, for solver iterations); `write` prints a result line on stdout without cutting the bar.

>>> progress = Progress(2, "adarray bench demo")                          # doctest: +SKIP
>>> progress.start("case 1"); progress.write("| row 1 |"); progress.close()  # doctest: +SKIP
"""
from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


def _is_terminal(stream) -> bool:
    return bool(getattr(stream, "isatty", None) and stream.isatty())


class Progress:
    """Progress of `total` steps named `description` on `stream` (default sys.stderr); see the module."""

    def __init__(self, total: int, description: str, *, show: bool | None = True, stream=None, delay: float = 0.0,
                 leave: bool = False):
        self.total, self.description, self.done = total, description, 0
        self.stream = stream or sys.stderr
        self.begun = time.perf_counter()
        self.bar, self.plain, self.overwrite, self.pending_line, self.status = None, False, False, False, ""
        if show is False:
            return
        terminal = _is_terminal(self.stream)
        if terminal:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self.bar = tqdm(total=total, desc=description, file=self.stream, leave=leave, delay=delay,
                                dynamic_ncols=True)
                return
        self.plain = show is True
        self.overwrite = terminal  # plain updates on a terminal rewrite one line

    def _end_line(self) -> None:
        if self.pending_line:
            print(file=self.stream, flush=True)
            self.pending_line = False

    def _count(self) -> str:
        return f"[{self.done}/{self.total}]"

    def start(self, label: str) -> None:
        """A step begins (the previous one, if any, is done)."""
        if self.bar is not None:
            if self.done:
                self.bar.update(1)
            self.bar.set_postfix_str(label)
        self.done += 1
        if self.plain:
            self._end_line()
            elapsed = time.perf_counter() - self.begun
            print(f"{self.description}: {self._count()} {label} ({elapsed:.0f} s so far)", file=self.stream,
                  flush=True)

    def update(self, status: str = "") -> None:
        """A step is done; `status` (e.g. "cost=1.5") is shown beside the count."""
        self.done += 1
        self.status = status
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix_str(status, refresh=False)
        elif self.plain:
            line = f"{self.description}: {self._count()} {status}".rstrip()
            if self.overwrite:
                print(f"\r{line}", end="", file=self.stream, flush=True)
                self.pending_line = True
            else:
                print(line, file=self.stream, flush=True)

    def write(self, line: str) -> None:
        """A line of results on stdout, printed above the bar."""
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
        else:
            self._end_line()
            print(line, flush=True)

    def close(self) -> None:
        """The last step is done: the bar shows its final status and closes; plain lines end with the time."""
        if self.bar is not None:
            if self.bar.n < self.done:  # the step begun last (start) is done too
                self.bar.update(self.done - self.bar.n)
            if self.status:
                self.bar.set_postfix_str(self.status, refresh=True)
            self.bar.close()
        elif self.plain:
            self._end_line()
            print(f"{self.description}: done in {time.perf_counter() - self.begun:.0f} s", file=self.stream,
                  flush=True)
