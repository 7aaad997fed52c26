"""Reversible programs for the registry's generated rule tests (tests/test_rules.py, test_nested_rules.py, and
the backends' tests): together they use every statement of the language (stacks, lognumbers, complex ancillas
and a user instruction included), smooth in their float inputs (finite differences apply, also at 0) and cheap
to run."""
from __future__ import annotations

import numpy as np

from .. import numpy as anp
from . import markers as rv
from .function import reversible
from .instructions import instruction


@instruction
def _shear(a, b, s):
    """(a, b) <- (a + s b, b): a shear by s."""
    return a + s * b, b, s


@_shear.definverse
def _unshear(a, b, s):
    return a - s * b, b, s


@_shear.defadjoint
def _shear_adjoint(a, b, s, a_bar, b_bar, s_bar):
    return a_bar, b_bar + s * a_bar, s_bar + b * a_bar


@reversible
def _kick(p, q, h):
    p -= h * (q + 0.5 * q ** 3)


@reversible
def sample_scalars(y, a, b, theta, n):
    t = rv.alloc(0.0)
    with rv.compute():
        t += anp.sin(theta) * 2.0
    for _i in range(n):
        rv.rot(a, b, theta)
        y += t * a
        _kick(b, a, 0.1)
    rv.uncompute()
    rv.free(t, 0.0)
    y *= 1.5
    rv.swap(a, b)
    rv.neg(b)


@reversible
def sample_arrays(out, x, w, k):
    for i in range(len(x)):
        out += w[i] * anp.tanh(x[i])
    x += 0.5 * w
    w[0] += x[1] * x[2]
    c = rv.alloc(0)
    while rv.while_(c < k, c > 0):
        out += anp.exp(-x[0] ** 2) * w[1]
        c += 1
    rv.free(c, k)
    if k > 1:
        out -= anp.sum(x * w)


@reversible
def sample_features(out, x, w):
    s = rv.alloc(rv.stack(4))
    p = rv.alloc(rv.lognumber(1.0))
    z = rv.alloc(0j)
    with rv.compute():
        for i in range(len(x)):
            t = rv.alloc(0.0)
            t += anp.sin(x[i]) + w[i] ** 2
            rv.push(s, t)
            rv.free(t, 0.0)
        top = rv.alloc(0.0)
        rv.pop(s, top)
        p *= anp.exp(w[0])
        p /= 1.5 + x[1] ** 2
        z += x[0] + 1j * w[1]
        z *= 0.5 - 0.25j
    _shear(out, x[2], w[2])
    out += top * p + anp.real(z * anp.conj(z) + anp.exp(z)) + anp.angle(z + 2.0)
    rv.uncompute()
    rv.free(top, 0.0)
    rv.free(z, 0j)
    rv.free(p, 1.0)
    rv.free(s, rv.stack())


def _cases(rng):
    scalars = [rng.uniform(-1.0, 1.0) for _ in range(4)] + [np.int64(3)]
    arrays = [rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0, 3), rng.uniform(-1.0, 1.0, 3), np.int64(2)]
    features = [rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0, 3), rng.uniform(-1.0, 1.0, 3)]
    out = []
    for fn, args in ((sample_scalars, scalars), (sample_arrays, arrays), (sample_features, features)):
        args = [np.asarray(a) for a in args]
        types = [({"f": "f", "i": "i"}[a.dtype.kind], a.ndim) for a in args]
        out.append((args, {"program": fn.program(types), "batch": 0}))
    return out


def reversible_cases(rng):
    return _cases(rng)


def gradient_cases(rng):
    cases = []
    for args, params in _cases(rng):
        seeds = [rng.standard_normal(a.shape) for a in args if a.dtype.kind == "f"]
        cases.append((args + seeds, params))
    return cases
