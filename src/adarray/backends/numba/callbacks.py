"""Calls from compiled code back into the NumPy backend: how an equation without a native lowering runs inside
a compiled loop body (fold, while, cond, scan operators) without cutting the loop into interpreted pieces.

The generated code writes, where such an equation is,

    with numba.objmode():
        _cb.call('3f9a...', (x, t5), (o7,))

one Python call per execution of the equation (the loop around it stays native): `call` runs the NumPy
backend's implementation on the inputs and copies its results into output arrays that the compiled code
allocated (0-d values travel as 1-element arrays). An equation is registered under a key derived from its
primitive, params and shapes when its code is generated, in every process (generation precedes loading from
the disk cache), so cached machine code finds it.

At the top level of a program no callback is needed: the runtime cuts the program there and runs the equation
between compiled segments (runtime.segments), which is the same single call.

    >>> key = register(eqn)           # at generation time  # doctest: +SKIP
"""
from __future__ import annotations

import hashlib
import sys

import numpy as np

from ..numpy.registry import implementation

# key -> (implementation, params, input avals, output avals, multiple results?)
CALLBACKS: dict[str, tuple] = {}


def register(eqn) -> str:
    """The key under which the generated code calls `eqn` back: a digest of its primitive, params (printed in
    full, arrays included) and shapes, so equal keys are equal equations."""
    with np.printoptions(threshold=sys.maxsize):
        text = (f"{eqn.prim.name} {sorted(eqn.params.items(), key=lambda kv: kv[0])!r} "
                f"{[str(a.aval) for a in eqn.inputs]} {[str(v.aval) for v in eqn.outputs]}")
    key = hashlib.sha1(text.encode()).hexdigest()[:20]
    CALLBACKS[key] = (implementation(eqn.prim), dict(eqn.params), [a.aval for a in eqn.inputs],
                      [v.aval for v in eqn.outputs], eqn.prim.multiple_results)
    return key


def call(key: str, inputs, outputs) -> None:
    """Run the registered equation on `inputs` (arrays or scalars) and write its results into `outputs`."""
    function, params, in_avals, out_avals, multiple = CALLBACKS[key]
    values = [np.asarray(value, aval.dtype).reshape(aval.shape) for value, aval in zip(inputs, in_avals)]
    with np.errstate(all="ignore"):
        results = function(*values, **params)
    if not multiple:
        results = [results]
    for target, result, aval in zip(outputs, results, out_avals):
        target[...] = np.asarray(result, aval.dtype).reshape(target.shape)
