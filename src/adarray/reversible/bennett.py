"""rv.bennett: Bennett's time-space trade-off for n applications of a reversible step (NiLang's
stdlib/bennett.jl; Bennett 1989, "Time/space trade-offs for reversible computation").

`step(dst, src)` must compute a new state into `dst` (a zero state) from `src`, e.g. `dst += F(src)`, so that its
inverse returns dst to zero. To apply it n times without keeping all n states or erasing any, split the n steps
into k segments, compute them one after the other (recursively), keep the last state and uncompute the k - 1
intermediate ones by running their segments backwards:

    forward(n) = forward(n1), ..., forward(nk), backward(n_{k-1}), ..., backward(n1)
    backward(n) = forward(n1), ..., forward(n_{k-1}), backward(nk), backward(n_{k-1}), ..., backward(n1)

Both make (2k - 1) recursive calls, so for n = k^m: (2k - 1)^m step calls, and at most m (k - 1) + 2 states
alive at once (k - 1 kept per level plus the input and the state being computed): time n^(log(2k-1)/log k),
memory O(k log_k n). For k = 2, n = 8: 27 calls and 5 states.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import numpy as anp
from ..core.errors import ArgumentError, ReversibilityError
from ..tracing import Tracer
from .function import ReversibleFunction

BennettStats = namedtuple("BennettStats", "calls peak_states")


def _segments(length: int, k: int) -> list[int]:
    parts = min(k, length)
    q, r = divmod(length, parts)
    return [q + 1] * r + [q] * (parts - r)


def bennett(step, state, k: int, n: int):
    """Apply the reversible `step(dst, src)` n times to `state` by Bennett's recursion with k segments per level.

    Returns (final_state, stats) with stats.calls the step calls (forward and inverse) and stats.peak_states the
    most states alive at once (the input included).

    >>> final, stats = bennett(double_step, 1.0, k=2, n=8)  # doctest: +SKIP
    >>> stats
    BennettStats(calls=27, peak_states=5)
    """
    if not isinstance(step, ReversibleFunction) or len(step.args) != 2:
        raise ArgumentError("rv.bennett: step must be a @rv.reversible function step(dst, src)")
    for name, value, low in (("k", k, 2), ("n", n, 0)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low:
            raise ArgumentError(f"rv.bennett: {name} must be an integer >= {low}, got {value!r}")
    inverse = step.inverse
    counts = {"calls": 0, "alive": 1, "peak": 1}

    def forward_step(src):
        dst, _ = step(_zeros_like(src), src)
        counts["calls"] += 1
        counts["alive"] += 1
        counts["peak"] = max(counts["peak"], counts["alive"])
        return dst

    def backward_step(dst, src):
        zero, _ = inverse(dst, src)
        counts["calls"] += 1
        counts["alive"] -= 1
        if step.check and not isinstance(zero, Tracer) and np.size(zero) and np.max(np.abs(zero)) > step.atol:
            raise ReversibilityError(f"rv.bennett: the inverse of '{step.name}' did not return the state to zero "
                                     f"(max |dst| = {np.max(np.abs(zero))!r}, atol {step.atol}); step(dst, src) must "
                                     "compute dst from src alone, e.g. dst += F(src)")

    def run(src, length, dst=None, backward=False):
        if length == 1:
            return backward_step(dst, src) if backward else forward_step(src)
        sizes = _segments(length, int(k))
        states = [src]
        for size in sizes[:-1]:
            states.append(run(states[-1], size))
        if backward:
            run(states[-1], sizes[-1], dst=dst, backward=True)
        else:
            dst = run(states[-1], sizes[-1])
        for j in range(len(sizes) - 1, 0, -1):
            run(states[j - 1], sizes[j - 1], dst=states[j], backward=True)
        return None if backward else dst

    final = state if n == 0 else run(state, int(n))
    return final, BennettStats(counts["calls"], counts["peak"])


def _zeros_like(value):
    if isinstance(value, Tracer):
        return anp.zeros_like(value)
    return np.zeros_like(np.asarray(value, dtype=np.result_type(np.asarray(value).dtype, np.float64))
                         if np.asarray(value).dtype.kind not in "fc" else np.asarray(value))
