"""Sample kernels for the generated rule tests (tests/test_rules.py): every rule of the `kernel`
primitive is checked on branches with broadcasting, a loop with a per-element trip count and an
early return (two outputs), and a while loop to a tolerance."""
from __future__ import annotations

import numpy as np

from .. import numpy as anp
from .kernel import kernel


@kernel
def sample_cell(z, zb, c, f, i, g):
    """The HM-LSTM cell update with boolean controls: FLUSH, COPY or UPDATE per element."""
    if z:
        return anp.sigmoid(i) * anp.tanh(g)
    elif zb:
        return c
    else:
        return anp.sigmoid(f) * c + anp.sigmoid(i) * anp.tanh(g)


@kernel
def sample_series(x, y, n):
    """Partial sums of y * exp(x), n terms per element, stopping early above 1.5."""
    total = 0.0
    term = 1.0
    for k in range(n):
        total += term * y
        if total > 1.5:
            return total, term
        term = term * x / (k + 1)
    return total, term


@kernel
def sample_root(a, x):
    """Newton's iteration for sqrt(a) from x, to a relative tolerance."""
    while abs(x * x - a) > 1e-13 * a:
        x = 0.5 * (x + a / x)
    return x


def _case(fn, *args):
    program, closure = fn.scalar_program(tuple(np.asarray(a).dtype for a in args))
    return [np.asarray(a) for a in args], {"kernel": program, "name": fn.__name__}


def attach_sampler(primitive) -> None:
    def sample(rng):
        controls = np.array([[True, False], [False, True], [False, False]])
        return [
            _case(sample_cell, controls[:, :1], controls[:, 1:], rng.normal(size=(3, 4)), rng.normal(size=(4,)),
                  rng.normal(size=(3, 4)), rng.normal(size=(1, 4))),
            _case(sample_series, rng.uniform(-1.0, 1.0, size=(2, 3)), rng.uniform(0.3, 0.9, size=(3,)),
                  np.array([[1, 3, 6]])),
            _case(sample_root, rng.uniform(0.5, 4.0, size=(4,)), rng.uniform(1.0, 2.0, size=())),
        ]

    primitive.sample = sample
