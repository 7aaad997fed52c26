"""Fuzzer: staged programs compute what NumPy computes, NaN, inf and the sign of zero included.

Hypothesis (seeded: derandomized) builds random straight-line programs of elementwise and structural
operations over special values (NaN, +-inf, +-0.0, subnormals, the largest and smallest normals) and
checks that `ad.jit` on every backend, and eager adarray, return NumPy's values bit for bit: the same
NaN positions, the same infinities, the same signs of zero, the same numbers. The constant factors
are 0, -0, +-1, +-2, +-inf and NaN, for which the simplifier's one reassociation ((x * c1) * c2 ->
x * (c1 c2)) is exact, so any difference is a value the staging changed. Transcendental maps (exp,
log, sin, tanh) are within a few ulp on the compiled backends, not exact: they only end a chain (their
results are checked, with NaN, inf and zero signs exact, but not reused).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import adarray as ad
import adarray.numpy as anp
from adarray.backends import NAMES

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -1e-310, np.finfo(np.float64).tiny, 1e308, -1e308, 1e-300,
           1.0, -1.0, 0.5, 3.0, -7.25, 2.0]
# XLA on the CPU flushes subnormal numbers to zero (inputs and results, as jax.jit does), so the JAX backend
# is fuzzed over values whose results stay normal: no subnormals, and 1e300 for the largest and smallest.
NORMAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, -1e300, 1e-300, 1.0, -1.0, 0.5, 3.0, -7.25, 2.0]
CONSTANTS = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, np.inf, -np.inf, np.nan]
SIZE = 6

# name -> (arity, function of (m, *operands)) where m is numpy or adarray.numpy
UNARY = {
    "neg": lambda m, a: -a, "abs": lambda m, a: m.abs(a), "sqrt": lambda m, a: m.sqrt(a),
    "square": lambda m, a: a * a, "power2": lambda m, a: a ** 2, "reciprocal": lambda m, a: 1.0 / a,
    "minus_itself": lambda m, a: a - a, "over_itself": lambda m, a: a / a, "times_zero": lambda m, a: a * 0.0,
    "plus_zero": lambda m, a: a + 0.0, "zero_minus": lambda m, a: 0.0 - a, "negzero_minus": lambda m, a: -0.0 - a,
    "minus_zero": lambda m, a: a - 0.0, "times_one": lambda m, a: a * 1.0, "over_one": lambda m, a: a / 1.0,
    "neg_neg": lambda m, a: m.negative(m.negative(a)), "reversed": lambda m, a: a[::-1],
    "transposed": lambda m, a: a.reshape(2, 3).T.reshape(SIZE),
    "rolled": lambda m, a: m.concatenate([a[2:], a[:2]]),
    "is_nan_picks": lambda m, a: m.where(a != a, 1.0, a),
}
BINARY = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b, "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b),
    "where_greater": lambda m, a, b: m.where(a > b, a, b), "where_zero": lambda m, a, b: m.where(a == 0.0, b, a),
    "masked_product": lambda m, a, b: m.where(a > 0, a, 0.0) * b,
}
CONSTANT = {
    "add_c": lambda m, a, c: a + c, "c_add": lambda m, a, c: c + a, "sub_c": lambda m, a, c: a - c,
    "c_sub": lambda m, a, c: c - a, "mul_c": lambda m, a, c: a * c, "c_mul": lambda m, a, c: c * a,
    "div_c": lambda m, a, c: a / c, "c_div": lambda m, a, c: c / a, "where_c": lambda m, a, c: m.where(a < c, c, a),
}
INEXACT = {
    "exp": lambda m, a: m.exp(a), "log": lambda m, a: m.log(a), "sin": lambda m, a: m.sin(a),
    "tanh": lambda m, a: m.tanh(a),
}


@st.composite
def programs(draw, pool=tuple(SPECIAL)):
    """(instructions, x, y): each instruction (kind, name, operand positions, constant) appends a value."""
    values = st.sampled_from(pool)
    x = np.array(draw(st.lists(values, min_size=SIZE, max_size=SIZE)))
    y = np.array(draw(st.lists(values, min_size=SIZE, max_size=SIZE)))
    exact, instructions = 2, []
    for _ in range(draw(st.integers(3, 10))):
        kind = draw(st.sampled_from(["unary", "binary", "constant", "inexact"]))
        table = {"unary": UNARY, "binary": BINARY, "constant": CONSTANT, "inexact": INEXACT}[kind]
        name = draw(st.sampled_from(sorted(table)))
        operands = tuple(draw(st.integers(0, exact - 1)) for _ in range(2 if kind == "binary" else 1))
        constant = draw(st.sampled_from(CONSTANTS)) if kind == "constant" else None
        instructions.append((kind, name, operands, constant))
        if kind != "inexact":
            exact += 1  # an exact value can feed later instructions
    return instructions, x, y


def run(m, instructions, x, y):
    """Every value the instructions make, in order (the exact ones first, then the inexact ones)."""
    values, ends = [x, y], []
    for kind, name, operands, constant in instructions:
        args = [values[i] for i in operands]
        if kind == "constant":
            result = CONSTANT[name](m, args[0], constant)
        elif kind == "inexact":
            ends.append(INEXACT[name](m, args[0]))
            continue
        else:
            result = {"unary": UNARY, "binary": BINARY}[kind][name](m, *args)
        values.append(result)
    return tuple(values[2:]) + tuple(ends)


def _describe(instructions, x, y):
    return f"x={x.tolist()} y={y.tolist()}\n" + "\n".join(map(str, instructions))


def assert_same_values(got, expected, exact: bool, what: str):
    """NaN positions, infinities and zero signs identical; numbers identical (or within 4 ulp if inexact)."""
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    assert got.shape == expected.shape, what
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan), f"{what}: NaN positions {got} vs NumPy's {expected}"
    finite = np.isfinite(expected)
    assert np.array_equal(got[~nan & ~finite], expected[~nan & ~finite]), f"{what}: infinities {got} vs {expected}"
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan])), f"{what}: signs {got} vs {expected}"
    if exact:
        assert np.array_equal(got[finite], expected[finite]), f"{what}: {got} vs NumPy's {expected}"
    else:
        close = np.abs(got[finite] - expected[finite]) <= 4 * np.spacing(np.abs(expected[finite]))
        assert close.all(), f"{what}: {got} vs NumPy's {expected} (more than 4 ulp)"


def check(backend, instructions, x, y):
    with np.errstate(all="ignore"):
        expected = run(np, instructions, x, y)
        eager = run(anp, instructions, x, y)
        staged = ad.jit(lambda a, b: run(anp, instructions, a, b), backend=backend)(x, y)
    n_exact = sum(kind != "inexact" for kind, *_ in instructions)
    text = _describe(instructions, x, y)
    for k, (value, reference) in enumerate(zip(eager, expected)):
        assert_same_values(value, reference, k < n_exact, f"eager adarray, value {k}\n{text}")
    for k, (value, reference) in enumerate(zip(staged, expected)):
        assert_same_values(value, reference, k < n_exact, f"ad.jit on {backend}, value {k}\n{text}")


BACKENDS = NAMES + ("jax",)  # the staging layer's compilers, and the JAX lowering (ad.jit(..., backend="jax"))
# A compiled backend pays a compilation per program: fewer examples there.
EXAMPLES = {"numpy": 60, "jax": 12, "numba": 3}


@pytest.mark.parametrize("backend", BACKENDS)
def test_staged_programs_compute_numpys_values_bit_for_bit(backend):
    if backend != "numpy":
        pytest.importorskip(backend)

    @settings(max_examples=EXAMPLES.get(backend, 3), derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(programs(tuple(NORMAL if backend == "jax" else SPECIAL)))
    def fuzz(program):
        check(backend, *program)

    fuzz()


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_identities_that_would_change_values_are_not_applied(backend):
    """The cases the simplifier used to rewrite, one program, every backend."""
    if backend != "numpy":
        pytest.importorskip(backend)
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0])
    instructions = [("unary", name, (0,), None) for name in
                    ("times_zero", "minus_itself", "over_itself", "plus_zero", "zero_minus", "negzero_minus",
                     "minus_zero", "times_one", "over_one", "neg_neg")]
    instructions += [("constant", "mul_c", (0,), 0.0), ("constant", "c_mul", (0,), -0.0),
                     ("binary", "masked_product", (1, 0), None)]
    check(backend, instructions, x, -x)
