"""The statements of the reversible language that look like calls: rv.alloc, rv.free, rv.swap, rv.rot, rv.neg,
rv.push, rv.pop, rv.compute, rv.uncompute, rv.if_, rv.while_, and the initial values rv.stack() and
rv.lognumber(c) of an ancilla. They are syntax, read from the source of a @rv.reversible function; called anywhere
else they raise ReversibilityError."""
from __future__ import annotations

from ..core.errors import ReversibilityError

MARKERS: dict = {}  # marker function -> its statement name


def _marker(name: str, signature: str, meaning: str):
    def marker(*args, **kwargs):
        raise ReversibilityError(f"rv.{name}{signature} is a statement of the reversible language: it only has a "
                                 f"meaning inside a function decorated with @rv.reversible ({meaning})")

    marker.__name__ = marker.__qualname__ = name
    marker.__doc__ = f"rv.{name}{signature}: {meaning}. Only inside @rv.reversible functions."
    MARKERS[marker] = name
    return marker


alloc = _marker("alloc", "(value)", "t = rv.alloc(0.0) creates an ancilla holding a known constant")
free = _marker("free", "(t, value)", "asserts that the ancilla t holds value again and releases it")
swap = _marker("swap", "(a, b)", "exchanges a and b")
rot = _marker("rot", "(a, b, theta)", "(a, b) <- (a cos theta - b sin theta, b cos theta + a sin theta)")
neg = _marker("neg", "(a)", "a <- -a")
push = _marker("push", "(s, x)", "moves x onto the stack s, leaving x zero (the inverse of rv.pop)")
pop = _marker("pop", "(s, x)", "moves the top of the stack s into x, which must be zero (the inverse of rv.push)")
stack = _marker("stack", "(capacity=None)", "s = rv.alloc(rv.stack()) creates an empty stack for rv.push and rv.pop")
lognumber = _marker("lognumber", "(value)", "p = rv.alloc(rv.lognumber(1.0)) creates a logarithmic number, whose "
                    "*= and /= are exact")
compute = _marker("compute", "()", "with rv.compute(): a block that rv.uncompute() later undoes")
uncompute = _marker("uncompute", "()", "runs the inverse of the last rv.compute() block")
if_ = _marker("if_", "(pre, post)", "if rv.if_(pre, post): a branch whose condition is post afterwards")
while_ = _marker("while_", "(pre, post)", "while rv.while_(pre, post): post false on entry, true after each "
                 "iteration")


def marker_name(value) -> str | None:
    try:
        return MARKERS.get(value)
    except TypeError:  # unhashable
        return None
