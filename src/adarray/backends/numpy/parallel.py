"""NumPy implementations of the general reduce and scan (a user operator, adarray/parallel): the
operator is batched once per length and applied to all pairs of a level at once, so a scan takes
log2(n) vectorised steps (Hillis-Steele) and a reduce a tree of them."""
from __future__ import annotations

import weakref

import numpy as np

from ...core.ir import Program
from ...parallel.general import general_reduce_p, general_scan_p, identity_values
from ...passes import simplify
from ...transforms.vmap import vmap_program
from .interpreter import compile_program
from .registry import impl

_batched_ops: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _batched_operator(op: Program, n: int):
    cache = _batched_ops.setdefault(op, {})
    if n not in cache:
        cache[n] = compile_program(simplify(vmap_program(op, [True] * len(op.inputs), n)[0]))
    return cache[n]


@impl(general_scan_p)
def _general_scan(*args, op, identity):
    ys, identity = [np.asarray(x) for x in args], identity_values(identity)
    n = ys[0].shape[0]
    if n == 0:
        return [y.copy() for y in ys]
    combine, step = _batched_operator(op, n), 1
    while step < n:
        earlier = [np.concatenate([np.broadcast_to(e, (step,) + e.shape), y[:-step]]) for y, e in zip(ys, identity)]
        ys = [np.asarray(y) for y in combine(*earlier, *ys)]
        step *= 2
    return ys


@impl(general_reduce_p)
def _general_reduce(*args, op, identity):
    level, identity = [np.asarray(x) for x in args], identity_values(identity)
    if level[0].shape[0] == 0:
        return [e.copy() for e in identity]
    while level[0].shape[0] > 1:
        if level[0].shape[0] % 2:
            level = [np.concatenate([x, e[None]]) for x, e in zip(level, identity)]
        half = level[0].shape[0] // 2
        pairs = [x[0::2] for x in level] + [x[1::2] for x in level]
        level = [np.asarray(y) for y in _batched_operator(op, half)(*pairs)]
    return [x[0] for x in level]
