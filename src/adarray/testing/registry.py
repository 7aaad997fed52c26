"""Test cases generated from the primitive registry: every primitive's sampler, plus edge cases
a random sampler would miss. The rule tests, the nested-derivative tests and the read-only tests
all draw from here, so adding a primitive (with its `sample`) adds it to every one of them."""
from __future__ import annotations

import zlib

import numpy as np

import adarray.backends.numpy  # noqa: F401  (the implementations of every primitive)
import adarray.primitives  # noqa: F401  (registers every primitive)
from adarray.core.primitive import REGISTRY
from adarray.core.types import Aval
from adarray.tracing import trace_program

# Derivatives that are defined rather than computed: finite differences do not apply, the rules
# must give exactly zero instead (the adjoint tests still run).
ZERO_BY_DEFINITION = {"stop_gradient"}

# Edge cases the samplers do not cover: products with zeros (the zero-counting rules must be
# right to second order too, not only in value); prefix products along axes of length 1 and 2.
EXTRA_CASES = {
    "reduce": [
        ([np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 1.5], [0.5, 1.5, -2.0]])], {"op": "mul", "axes": (1,)}),
    ],
    "scatter": [
        ([np.array([[2.0, 0.0], [1.0, 3.0], [0.5, 0.7]]),
          np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 1.2], [1.1, 0.6]]),
          np.array([0, 2, 2, 0])], {"spec": (("array",),), "op": "mul"}),
    ],
    "scan": [
        ([np.array([1.5])], {"op": "mul", "axis": 0, "reverse": False}),
        ([np.array([[3.0, 5.0], [0.5, 2.0]])], {"op": "mul", "axis": 1, "reverse": True}),
    ],
}


# Primitives that move, sum or multiply values without a formula of their own get complex variants of
# their sampled cases (each float argument plus i times a standard-normal array; a variant their shape
# rule refuses, such as reduce[op=max], is left out). The maps of the scalar table, the linear algebra
# and fft sample complex cases of their own, in their domains (primitives/complex.py, the samplers).
COMPLEX_VARIANTS = ("broadcast_in_dim", "concatenate", "einsum", "gather", "linear_recurrence", "matrix_recurrence",
                    "product_others", "reduce", "reshape", "scan", "scatter", "scatter_mul_partials", "slice",
                    "transpose", "unslice")
MAX_COMPLEX_VARIANTS = 4


def _complex_variants(name, cases):
    """Up to MAX_COMPLEX_VARIANTS complex versions of `cases` that the primitive's shape rule accepts."""
    prim, rng, variants = REGISTRY[name], np.random.default_rng(seed(name, "complex")), []
    for args, params in cases:
        if not any(np.issubdtype(np.asarray(a).dtype, np.floating) for a in args):
            continue
        moved = [a + 1j * rng.standard_normal(np.shape(a)) if np.issubdtype(np.asarray(a).dtype, np.floating)
                 else a for a in args]
        try:
            prim.abstract_eval(*[Aval(np.shape(a), np.asarray(a).dtype) for a in moved], **params)
        except Exception:  # noqa: BLE001 - any refusal of the shape rule (ShapeError, TypeError) leaves it out
            continue
        variants.append((moved, params))
        if len(variants) == MAX_COMPLEX_VARIANTS:
            break
    return variants


def seed(*parts) -> int:
    """A stable seed per primitive (and case), so adding primitives does not move the others."""
    return zlib.crc32("/".join(map(str, parts)).encode())


def registry_cases():
    """(case id, primitive name, args, params) for every sampled case and edge case, sorted by name."""
    cases = []
    for name in sorted(REGISTRY):
        prim = REGISTRY[name]
        if prim.sample is None:
            continue
        sampled = prim.sample(np.random.default_rng(seed(name)))
        for index, (args, params) in enumerate(sampled):
            cases.append((f"{name}-{index}", name, [np.asarray(a) for a in args], params))
        for index, (args, params) in enumerate(EXTRA_CASES.get(name, [])):
            cases.append((f"{name}-edge{index}", name, [np.asarray(a) for a in args], params))
        if name in COMPLEX_VARIANTS:
            for index, (args, params) in enumerate(_complex_variants(name, sampled + EXTRA_CASES.get(name, []))):
                cases.append((f"{name}-complex{index}", name, [np.asarray(a) for a in args], params))
    return cases


def primitive_program(name, args, params):
    """The one-equation program applying primitive `name` to arguments like `args`."""
    prim = REGISTRY[name]
    avals = [Aval(np.shape(a), np.asarray(a).dtype) for a in args]
    program, _, _ = trace_program(lambda *xs: prim.bind(*xs, **params), avals, name)
    return program
