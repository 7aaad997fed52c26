"""Coarsening (kernels/coarsen.py): elementwise chains of array programs become one kernel each.

Every coarsened program is verified and printed/parsed back; coarsened and uncoarsened programs
give the same values and gradients (random chains with where, comparisons, broadcasting, constants,
multi-use intermediates and non-elementwise splits), and both agree with central differences.
The spec's B1 (a long chain: O(1) equations in the gradient program) and B2 (nested branches as
where) are checked on the IR; NaN safety of where, composition with grad/jvp/vmap/jit and second
order, and edge cases (0-d, empty axes, float32, min_size, splits) each have a test.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.backends.numpy import compile_program
from adarray.core.ir import Literal
from adarray.kernels import coarsen_program
from adarray.testing import (
    check_jvp,
    check_passes,
    check_second_order,
    check_vjp,
    check_vmap,
    numerical_jvp,
    tolerances,
)

F64 = tolerances(np.float64)


# --- helpers -----------------------------------------------------------------------------------

def _names(program):
    return [e.prim.name for e in program.eqns]


def _kernels(program):
    return [e for e in program.eqns if e.prim.name == "kernel"]


def _elementwise(program):
    return [e for e in program.eqns if e.prim.elementwise]


def _scalar_ops(program) -> int:
    """Elementwise work in a program: top-level elementwise equations plus the kernels' equations."""
    return len(_elementwise(program)) + sum(len(k.params["kernel"].eqns) for k in _kernels(program))


def _run(program, args):
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in compile_program(program)(*args)]


def _coarsened(fn, args, min_size=2):
    """(the traced program, its coarsening), the latter verified and print/parse round-tripped."""
    program = ad.make_ir(fn)(*args)
    coarse = coarsen_program(program, min_size)
    check_passes(coarse, list(args))
    return program, coarse


def _assert_close(got, want, rtol, atol=0.0, what=""):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=False), (what, got, want)


def _directional_check(fn, args, grads, rng, wrt):
    """<grad, v> against central differences of fn along a random direction v on the args in `wrt`."""
    directions = [rng.standard_normal(np.shape(a)) if i in wrt else None for i, a in enumerate(args)]
    (numerical,) = numerical_jvp(lambda *xs: [np.asarray(fn(*xs))], args, directions, F64.eps)
    analytic = sum(np.sum(g * directions[i]) for i, g in zip(wrt, grads))
    assert np.isclose(analytic, numerical, rtol=F64.rtol, atol=F64.atol), (analytic, numerical)


# --- (a) IR before and after on a readable example ---------------------------------------------

def bump(x, y, b):
    """where over a broadcast product: the A3 example of the design notes."""
    z = x * y
    return anp.sum(anp.where(z > b, anp.sin(z), b * x))


def _bump_args(rng):
    return rng.standard_normal((4, 1)), rng.standard_normal((1, 3)), np.array(0.1)


def test_a_chain_with_where_becomes_one_kernel_reading_the_unbroadcast_inputs():
    args = _bump_args(np.random.default_rng(0))
    before, after = _coarsened(bump, args)
    wide = [e for e in _elementwise(before) if e.outputs[0].aval.shape == (4, 3)]
    assert {e.prim.name for e in wide} >= {"mul", "gt", "sin", "select"} and len(wide) == 4
    (kernel,) = _kernels(after)
    scalar = kernel.params["kernel"]
    assert {"mul", "gt", "sin", "select"} <= set(_names(scalar))
    assert all(v.aval.shape == () for v in scalar.inputs)
    # The broadcasts are not materialised: the kernel reads x (4,1), y (1,3), b () and b * x (4,1).
    assert sorted(a.aval.shape for a in kernel.inputs) == [(), (1, 3), (4, 1), (4, 1)]
    assert "broadcast_in_dim" not in [e.prim.name for e in after.eqns if e.outputs[0].aval.shape == (4, 3)]
    # Left as they were: b * x at shape (4, 1), a chain of one below min_size, and the sum.
    assert [e.prim.name for e in _elementwise(after)] == ["mul"]
    assert _names(after)[-1] == "reduce" and len(after.eqns) < len(before.eqns) - 5
    assert _scalar_ops(after) <= _scalar_ops(before)  # no work duplicated
    assert np.allclose(_run(after, args), _run(before, args), rtol=1e-14, atol=0)
    assert str(ad.coarsen(bump).ir(*args)) == str(after) == str(ad.make_ir(ad.coarsen(bump))(*args))


def test_the_gradient_of_the_coarsened_example_is_one_fused_kernel_pass():
    args = _bump_args(np.random.default_rng(1))
    argnums = (0, 1, 2)
    plain = ad.make_ir(ad.grad(bump, argnums=argnums))(*args)
    coarse = ad.make_ir(ad.grad(ad.coarsen(bump), argnums=argnums))(*args)
    check_passes(coarse, list(args))
    (kernel,) = _kernels(coarse)
    assert kernel.params["name"] == "coarse0_vjp"  # the sum's cotangent entered the forward pass
    assert not any(e.outputs[0].aval.shape == (4, 3) for e in coarse.eqns if e is not kernel)
    assert sum(e.outputs[0].aval.shape == (4, 3) for e in plain.eqns) >= 8  # taped intermediates
    grads = ad.grad(ad.coarsen(bump), argnums=argnums)(*args)
    reference = ad.grad(bump, argnums=argnums)(*args)
    assert [np.shape(g) for g in grads] == [(4, 1), (1, 3), ()]  # summed over the broadcast axes
    for got, want in zip(grads, reference):
        _assert_close(got, want, 1e-13, 1e-15)
    _directional_check(bump, args, grads, np.random.default_rng(2), argnums)


def test_coarsen_program_is_idempotent_and_keeps_chains_maximal():
    def fn(x, w):
        y = anp.sin(x) * x
        s = anp.sum(y)                      # reads the chain; nothing below depends on it
        z = anp.exp(y) * anp.cos(y) + x     # so this is still the same chain as y
        u = anp.tanh(z @ w)                 # the matmul splits: a second chain
        return s + anp.sum(z) + anp.sum(u * u + 1.0)   # the scalar adds: a third chain, of shape ()

    rng = np.random.default_rng(3)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((4, 4)))
    before, after = _coarsened(fn, args)
    assert [len(k.params["kernel"].eqns) for k in _kernels(after)] == [6, 3, 2]
    assert [k.outputs[0].aval.shape for k in _kernels(after)] == [(3, 4), (3, 4), ()]
    first = _kernels(after)[0]
    assert len(first.outputs) == 2  # y feeds the sum, z the matmul and the sum: both stay arrays
    assert not _elementwise(after)
    assert sorted(_names(coarsen_program(after))) == sorted(_names(after))  # nothing left to coarsen
    assert _scalar_ops(after) == _scalar_ops(before)  # every operation once: none duplicated
    assert np.allclose(_run(after, args), _run(before, args), rtol=1e-14)


def test_a_chain_is_not_cut_by_a_broadcast_that_can_wait():
    """The narrow chain tanh(y), minimum(., s) is read by a broadcast into the wide chain between its
    two operations (traced order); the pass runs the broadcast of s first, so the chain stays whole."""
    def fn(x, y, s):
        a = anp.tanh(y)              # (1, 4)
        b = anp.sin(x * a)           # (3, 4): reads a through a broadcast
        c = anp.minimum(a, s)        # (1, 4): still a's chain
        return anp.sum(b) + anp.sum(c)

    rng = np.random.default_rng(16)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((1, 4)), np.array(0.2))
    before, after = _coarsened(fn, args)
    assert [(k.outputs[0].aval.shape, len(k.params["kernel"].eqns)) for k in _kernels(after)] == [
        ((1, 4), 2), ((3, 4), 2)]
    assert [e.prim.name for e in _elementwise(after)] == ["add"]  # the final scalar add: a chain of one
    grads = ad.grad(ad.coarsen(fn), argnums=(0, 1, 2))(*args)
    for got, want in zip(grads, ad.grad(fn, argnums=(0, 1, 2))(*args)):
        _assert_close(got, want, 1e-13, 1e-15)


# --- (b) random programs: coarsened == uncoarsened == central differences ----------------------

N, M = 3, 4
UNARY = {
    "sin": anp.sin, "cos": anp.cos, "tanh": anp.tanh, "sigmoid": anp.sigmoid, "arctan": anp.arctan,
    "neg": lambda v: -v, "abs": anp.abs, "exp_sin": lambda v: anp.exp(anp.sin(v)),
    "log1p_square": lambda v: anp.log1p(v * v), "hypot1": lambda v: anp.sqrt(1.0 + v ** 2),
}
BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (1.0 + b * b), "maximum": anp.maximum, "minimum": anp.minimum,
    "mask": lambda a, b: a * (b > 0.2),  # a bool intermediate promoted to float
}
COMPARE = {"gt": lambda a, b: a > b, "lt": lambda a, b: a < b, "ge": lambda a, b: a >= b, "le": lambda a, b: a <= b}
SPLIT = ("sum_rows", "sum_cols", "matmul", "reverse")


def random_recipe(seed, length=14):
    """A random program as data: steps reading earlier values (0-3 are the inputs x, y, z, s)."""
    rng = np.random.default_rng(seed)
    constants = {"full": rng.standard_normal((N, M)), "row": rng.standard_normal((1, M)),
                 "col": rng.standard_normal((N, 1)), "w": rng.standard_normal((M, M)) / 2}
    steps, count = [], 4

    def pick():  # mostly recent values (long chains), sometimes any earlier one (multiple uses)
        return int(count - 1 - rng.integers(0, min(3, count))) if rng.random() < 0.7 else int(rng.integers(0, count))

    for _ in range(length):
        kind = rng.choice(["unary", "binary", "where", "constant", "split"], p=[0.35, 0.3, 0.15, 0.1, 0.1])
        if kind == "unary":
            steps.append(("unary", str(rng.choice(list(UNARY))), pick()))
        elif kind == "binary":
            steps.append(("binary", str(rng.choice(list(BINARY))), pick(), pick()))
        elif kind == "where":
            steps.append(("where", str(rng.choice(list(COMPARE))), pick(), pick(), pick(), pick()))
        elif kind == "constant":
            steps.append(("constant", str(rng.choice(list(constants)[:3])), pick(), float(rng.uniform(-1, 1))))
        else:
            steps.append(("split", str(rng.choice(SPLIT)), pick()))
        count += 1
    weights = rng.standard_normal((N, M))
    return steps, constants, weights, int(rng.integers(4, count))


def build(recipe):
    steps, constants, weights, reused = recipe

    def fn(x, y, z, s):
        values = [x, y, z, s]
        for step in steps:
            kind, op, a = step[0], step[1], values[step[2]]
            if kind == "unary":
                out = UNARY[op](a)
            elif kind == "binary":
                out = BINARY[op](a, values[step[3]])
            elif kind == "where":
                p, t, f = (values[i] for i in step[3:6])
                out = anp.where(COMPARE[op](a, p), t, f)
            elif kind == "constant":
                out = a * constants[op] + step[3]
            elif op == "sum_rows":
                out = anp.sum(a, axis=0, keepdims=True) if np.ndim(a) == 2 else a
            elif op == "sum_cols":
                out = anp.sum(a, axis=1, keepdims=True) if np.ndim(a) == 2 else a
            elif op == "matmul":
                out = (a + anp.zeros((1, M))) @ constants["w"]
            else:
                out = (a + anp.zeros((1, M)))[:, ::-1]
            values.append(out)
        return anp.sum(weights * values[-1]) + anp.sum(values[-2]) + 0.5 * anp.sum(values[reused] ** 2)

    return fn


def _random_args(seed):
    rng = np.random.default_rng(10_000 + seed)
    return (rng.standard_normal((N, M)), rng.standard_normal((N, 1)), rng.standard_normal((1, M)),
            np.array(rng.standard_normal()))


SEEDS = range(30)


@functools.lru_cache(maxsize=None)
def _random_case(seed):
    """(recipe, function, arguments, traced program, coarsened program) of one random program."""
    recipe = random_recipe(seed)
    fn, args = build(recipe), _random_args(seed)
    return (recipe, fn, args, *_coarsened(fn, args))


@pytest.mark.parametrize("seed", SEEDS)
def test_random_programs_coarsened_and_uncoarsened_agree_in_values_and_gradients(seed):
    recipe, fn, args, before, after = _random_case(seed)
    argnums = (0, 1, 2, 3)
    assert _scalar_ops(after) <= _scalar_ops(before), recipe  # no elementwise work duplicated
    assert sorted(_names(coarsen_program(after))) == sorted(_names(after))  # idempotent: chains were maximal
    assert not _elementwise(coarsen_program(before, min_size=1))  # every elementwise op is in a kernel
    _assert_close(_run(after, args)[0], _run(before, args)[0], 1e-12, 1e-12, recipe)
    grads = ad.grad(ad.coarsen(fn), argnums=argnums)(*args)
    reference = ad.grad(fn, argnums=argnums)(*args)
    for got, want in zip(grads, reference):
        _assert_close(got, want, 1e-10, 1e-12, recipe)
    rng = np.random.default_rng(seed)
    _directional_check(fn, args, grads, rng, argnums)
    check_jvp(after, list(args), rng)  # the kernels' forward rule against central differences
    if seed % 2 == 0:  # the adjoint test of the stored-partials reverse rule (half the cases: time)
        check_vjp(after, list(args), rng)


def test_random_programs_really_contain_what_they_claim():
    """The generator covers where, broadcasting, literals, multiple uses and splits (else the test
    above could pass vacuously)."""
    seen = set()
    for seed in SEEDS:
        _, _, _, before, after = _random_case(seed)
        seen |= set(_names(before))
        for kernel in _kernels(after):
            seen |= {"kernel", *(_names(kernel.params["kernel"]))}
            if len({a.aval.shape for a in kernel.inputs}) > 1:
                seen.add("broadcast kernel")
            if len(kernel.outputs) > 1:
                seen.add("multi-output kernel")
            if any(isinstance(a, Literal) for a in kernel.inputs):
                seen.add("constant argument")
    assert {"select", "gt", "lt", "convert", "einsum", "reduce", "slice", "kernel", "broadcast kernel",
            "multi-output kernel", "constant argument", "maximum", "div"} <= seen


# --- (c) B1: a long elementwise chain ----------------------------------------------------------

def long_chain(x, y, length=50):
    """`length` elementwise operations (no branches): the B1 benchmark of the design notes."""
    a, b = x, y
    for k in range(length // 5):
        a, b = anp.sin(a) * b + 0.1 * k, anp.tanh(b - a)
        a = a / (1.0 + b * b)
    return a * b


def test_b1_the_gradient_of_a_long_chain_is_one_kernel_with_no_intermediate_arrays():
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(2000), rng.standard_normal(2000)
    loss = lambda x, y: anp.sum(long_chain(x, y))  # noqa: E731
    primal = ad.make_ir(loss)(x, y)
    assert len(_elementwise(primal)) >= 50
    plain = ad.make_ir(ad.grad(loss, argnums=(0, 1)))(x, y)
    coarse = ad.make_ir(ad.grad(ad.coarsen(loss), argnums=(0, 1)))(x, y)
    assert len(plain.eqns) >= 100
    assert _names(coarse) == ["kernel"]  # every array in the gradient program is a kernel output
    assert len(coarse.eqns[0].outputs) == 2  # the two gradients (the unused values are pruned)
    grads = ad.grad(ad.coarsen(loss), argnums=(0, 1))(x, y)
    reference = ad.grad(loss, argnums=(0, 1))(x, y)
    for got, want in zip(grads, reference):
        _assert_close(got, want, 1e-12, 1e-14)
    _directional_check(loss, (x, y), grads, rng, (0, 1))


def test_b1_with_stored_partials_the_gradient_program_does_not_grow_with_the_chain():
    """The chain's result feeds a matmul, so the partials are stored (no fusion): still O(1)."""
    rng = np.random.default_rng(5)
    x, y, w = rng.standard_normal((20, 8)), rng.standard_normal((20, 8)), rng.standard_normal((8, 3))
    sizes = []
    for length in (10, 50):
        loss = lambda x, y, length=length: anp.sum(anp.tanh(long_chain(x, y, length) @ w))  # noqa: E731
        coarse = ad.make_ir(ad.grad(ad.coarsen(loss), argnums=(0, 1)))(x, y)
        check_passes(coarse, [x, y])
        (kernel,) = [k for k in _kernels(coarse) if k.outputs[0].aval.shape == (20, 8)]
        assert len(kernel.outputs) == 3  # the value and one partial per input, not one array per op
        sizes.append(len(coarse.eqns))
        grads = ad.grad(ad.coarsen(loss), argnums=(0, 1))(x, y)
        reference = ad.grad(loss, argnums=(0, 1))(x, y)
        for got, want in zip(grads, reference):
            _assert_close(got, want, 1e-12, 1e-14)
    assert sizes[0] == sizes[1] <= 12, sizes


# --- (d) B2: nested branches expressed with where ---------------------------------------------

def nested_branches(x):
    """x**2 sin x if x > 0 else exp(x) - 1, each arm branching again (two levels, as in B2)."""
    positive = anp.where(x > 1.0, x ** 2 * anp.sin(x), x * anp.cos(x))
    negative = anp.where(x < -1.0, anp.exp(x) - 1.0, x ** 3 / 3.0 + anp.sin(x))
    return anp.where(x > 0.0, positive, negative)


def _nested_branches_derivative(x):
    positive = np.where(x > 1.0, 2 * x * np.sin(x) + x ** 2 * np.cos(x), np.cos(x) - x * np.sin(x))
    negative = np.where(x < -1.0, np.exp(x), x ** 2 + np.cos(x))
    return np.where(x > 0.0, positive, negative)


def test_b2_nested_where_gives_the_uncoarsened_gradient_and_the_exact_derivative():
    rng = np.random.default_rng(6)
    x = rng.uniform(-3.0, 3.0, 200)
    x = x[np.min(np.abs(x[:, None] - np.array([-1.0, 0.0, 1.0])), axis=1) > 1e-3]  # off the boundaries
    loss = lambda x: anp.sum(nested_branches(x))  # noqa: E731
    _, after = _coarsened(nested_branches, (x,))
    assert _names(after) == ["kernel"] and _names(after.eqns[0].params["kernel"]).count("select") == 3
    grad = ad.grad(ad.coarsen(loss))(x)
    _assert_close(grad, ad.grad(loss)(x), 1e-13, 1e-15)
    _assert_close(grad, _nested_branches_derivative(x), 1e-12, 1e-14)
    _directional_check(loss, (x,), (grad,), rng, (0,))
    # On the boundaries both programs take the same one-sided derivative (where picks one arm).
    edges = np.array([-1.0, 0.0, 1.0])
    _assert_close(ad.grad(ad.coarsen(loss))(edges), ad.grad(loss)(edges), 1e-14, 0.0)


# --- (e) NaN safety ------------------------------------------------------------------------------

def test_where_keeps_the_gradient_finite_where_the_arm_not_taken_is_nan():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    simple = lambda x: anp.sum(anp.where(x > 0, anp.sqrt(x), x))  # noqa: E731
    expected = np.where(x > 0, 0.5 / np.sqrt(np.abs(x) + (x == 0)), 1.0)
    _assert_close(ad.grad(simple)(x), expected, 1e-15)  # what uncoarsened adarray does
    _assert_close(ad.grad(ad.coarsen(simple))(x), expected, 1e-15)
    # sqrt(x) * log(x + 3) is NaN for x < 0 and so is its partial: the kernel selects the partials.
    weights = np.arange(5.0)
    compound = lambda x: anp.sum(anp.where(x > 0, anp.sqrt(x) * anp.log(x + 3.0), anp.sin(x)) * weights)  # noqa: E731
    with np.errstate(divide="ignore", invalid="ignore"):
        taken = 0.5 / np.sqrt(x) * np.log(x + 3.0) + np.sqrt(x) / (x + 3.0)
    expected = weights * np.where(x > 0, taken, np.cos(x))
    _assert_close(ad.grad(ad.coarsen(compound))(x), expected, 1e-14, 1e-15)
    first = lambda x: anp.sum(ad.grad(ad.coarsen(compound))(x))  # noqa: E731
    second = ad.grad(first)(x)
    assert np.all(np.isfinite(second))
    _assert_close(second[:3], -weights[:3] * np.sin(x[:3]), 1e-14, 1e-15)
    h = np.zeros(5)
    h[3:] = 1e-6  # central differences where x > 0 (each entry moves only its own gradient)
    fd = (ad.grad(ad.coarsen(compound))(x + h) - ad.grad(ad.coarsen(compound))(x - h)) / 2e-6
    _assert_close(second[3:], fd[3:], 1e-6)


# --- composition with the transformations ----------------------------------------------------

def cell(x, y):
    return anp.tanh(anp.sin(x) * y + x) * anp.where(x > y, x, anp.cos(y))


def test_coarsen_composes_with_jvp_vmap_jit_and_a_closure_over_traced_values():
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    tx, ty = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    coarse = ad.coarsen(cell)
    for got, want in zip(ad.jvp(coarse, (x, y), (tx, ty)), ad.jvp(cell, (x, y), (tx, ty))):
        _assert_close(got, want, 1e-13, 1e-15)
    (numerical,) = numerical_jvp(lambda *a: [cell(*a)], [x, y], [tx, ty], F64.eps)
    _assert_close(ad.jvp(coarse, (x, y), (tx, ty))[1], numerical, F64.rtol, F64.atol)
    _assert_close(ad.vmap(coarse)(x, y), np.stack([cell(a, b) for a, b in zip(x, y)]), 1e-14)
    per_row = ad.vmap(ad.grad(lambda a, b: anp.sum(coarse(a, b))))(x, y)
    _assert_close(per_row, ad.grad(lambda a, b: anp.sum(cell(a, b)))(x, y), 1e-13, 1e-15)
    _assert_close(ad.jit(coarse)(x, y), cell(x, y), 1e-14)
    # A closure over a traced value: coarsen runs inside the outer trace, the gradient reaches `a`.
    outer = lambda a: anp.sum(ad.coarsen(lambda v: anp.sin(v * a) * a)(x))  # noqa: E731
    plain = lambda a: anp.sum(anp.sin(x * a) * a)  # noqa: E731
    _assert_close(ad.grad(outer)(0.7), ad.grad(plain)(0.7), 1e-13)
    program = coarsen_program(ad.make_ir(cell)(x, y))
    check_vmap(program, [x, y], rng)


def test_second_and_third_order_derivatives_of_a_coarsened_scalar_function():
    f = lambda x: anp.tanh(anp.sin(x) * x + 1.0) * anp.where(x > 0.2, x, anp.exp(x))  # noqa: E731
    coarse = ad.coarsen(f)
    for x in (0.7, -0.4):
        first, second = ad.grad(coarse)(x), ad.grad(ad.grad(coarse))(x)
        third = ad.grad(ad.grad(ad.grad(coarse)))(x)
        _assert_close(first, ad.grad(f)(x), 1e-13)
        _assert_close(second, ad.grad(ad.grad(f))(x), 1e-12)
        _assert_close(third, ad.grad(ad.grad(ad.grad(f)))(x), 1e-11)
        h = 1e-5
        _assert_close(second, (ad.grad(coarse)(x + h) - ad.grad(coarse)(x - h)) / (2 * h), 1e-7)
        _assert_close(third, (ad.grad(ad.grad(coarse))(x + h) - ad.grad(ad.grad(coarse))(x - h)) / (2 * h), 1e-6)
    v = np.array([0.3, -0.8, 1.1])
    hessian = ad.hessian(lambda v: anp.sum(coarse(v)))(v)
    _assert_close(hessian, ad.hessian(lambda v: anp.sum(f(v)))(v), 1e-12, 1e-14)
    program = coarsen_program(ad.make_ir(cell)(np.ones((2, 3)), np.ones((2, 3))))
    check_second_order(program, [np.array([[0.3, -1.2, 0.5], [2.0, 0.1, -0.7]]), np.full((2, 3), 0.25)],
                       np.random.default_rng(8))


def test_a_chain_with_more_inputs_than_max_arity_falls_back_to_reverse_mode_with_the_same_gradient():
    with ad.config.override(kernel_arity_numpy=2, kernel_arity_numba=2):
        _check_wide_chain()


def _check_wide_chain():

    def wide(a, b, c, d):
        return anp.sum(anp.tanh(a * b + anp.sin(c)) * anp.where(d > 0, d, a))

    rng = np.random.default_rng(17)
    args = tuple(rng.standard_normal((3, 4)) for _ in range(4))
    argnums = (0, 1, 2, 3)
    coarse = ad.make_ir(ad.grad(ad.coarsen(wide), argnums=argnums))(*args)
    assert not any(k.params["name"].endswith(("_vjp", "_partials")) for k in _kernels(coarse))  # no mixed mode:
    assert {"tanh", "cos", "select"} <= set(_names(coarse))  # reverse mode over the kernel's operations
    grads = ad.grad(ad.coarsen(wide), argnums=argnums)(*args)
    for got, want in zip(grads, ad.grad(wide, argnums=argnums)(*args)):
        _assert_close(got, want, 1e-13, 1e-15)
    _directional_check(wide, args, grads, rng, argnums)


def test_kernel_outputs_of_integer_and_boolean_type_are_values_not_differentiated():
    def fn(x, i):
        mask = (anp.sin(x) > 0) & (x < 1.0)
        count = (i * 3 + 1) % 5
        return anp.sum(anp.where(mask, x * x, -x) * count), mask, count

    rng = np.random.default_rng(9)
    x, i = rng.standard_normal((3, 4)), np.arange(12).reshape(3, 4)
    before, after = _coarsened(fn, (x, i))
    (kernel,) = _kernels(after)
    assert sorted(a.aval.dtype.kind for a in kernel.outputs) == ["b", "f", "i"]
    for got, want in zip(_run(after, [x, i]), _run(before, [x, i])):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    loss = lambda x, i: fn(x, i)[0]  # noqa: E731
    grad = ad.grad(ad.coarsen(loss))(x, i)
    _assert_close(grad, ad.grad(loss)(x, i), 1e-14)
    _directional_check(loss, (x, i), (grad,), rng, (0,))


# --- (f) edge cases --------------------------------------------------------------------------------

def test_zero_dimensional_arrays_form_a_kernel_of_0_d_arguments():
    args = (np.array(0.4), np.array(-1.3))
    _, after = _coarsened(cell, args)
    assert _names(after) == ["kernel"] and after.outputs[0].aval.shape == ()
    grads = ad.grad(ad.coarsen(cell), argnums=(0, 1))(*args)
    reference = ad.grad(cell, argnums=(0, 1))(*args)
    for got, want in zip(grads, reference):
        assert np.shape(got) == () and np.isclose(got, want, rtol=1e-14)
    _directional_check(cell, args, grads, np.random.default_rng(10), (0, 1))


def test_empty_axes_give_empty_values_and_gradients():
    x, y = np.zeros((0, 3)), np.zeros((1, 3))
    fn = lambda x, y: anp.sum(anp.where(x > 0, anp.exp(x) * y, x * 2.0) + np.arange(3.0))  # noqa: E731
    _, after = _coarsened(fn, (x, y))
    (kernel,) = _kernels(after)
    assert [a.aval.shape for a in kernel.inputs] == [(0, 3), (1, 3)]  # the empty literal is inlined
    assert float(ad.coarsen(fn)(x, y)) == 0.0
    gx, gy = ad.grad(ad.coarsen(fn), argnums=(0, 1))(x, y)
    assert gx.shape == (0, 3) and gy.shape == (1, 3) and np.all(gy == 0.0)


def test_float32_stays_float32():
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    _, after = _coarsened(cell, (x, y))
    (kernel,) = _kernels(after)
    scalar = kernel.params["kernel"]
    avals = [v.aval for e in scalar.eqns for v in e.outputs if v.aval.dtype.kind == "f"]
    assert avals and all(a.dtype == np.float32 for a in avals)
    value = ad.coarsen(cell)(x, y)
    assert value.dtype == np.float32
    gx, gy = ad.grad(lambda a, b: anp.sum(ad.coarsen(cell)(a, b)), argnums=(0, 1))(x, y)
    assert gx.dtype == gy.dtype == np.float32
    f32 = tolerances(np.float32)
    reference = ad.grad(lambda a, b: anp.sum(cell(a, b)), argnums=(0, 1))(x.astype(np.float64), y.astype(np.float64))
    _assert_close(gx, reference[0], f32.rtol, f32.atol)
    _assert_close(gy, reference[1], f32.rtol, f32.atol)


def test_min_size_leaves_short_chains_alone():
    rng = np.random.default_rng(12)
    x = rng.standard_normal(5)
    single = lambda x: anp.sum(anp.sin(x))  # noqa: E731
    before, after = _coarsened(single, (x,))
    assert _names(after) == _names(before) == ["sin", "reduce"]
    pair = lambda x: anp.sum(anp.sin(x) * x)  # noqa: E731
    assert _names(_coarsened(pair, (x,))[1]) == ["kernel", "reduce"]
    assert _names(_coarsened(pair, (x,), min_size=3)[1]) == ["sin", "mul", "reduce"]
    assert _names(_coarsened(single, (x,), min_size=1)[1]) == ["kernel", "reduce"]
    _assert_close(ad.grad(ad.coarsen(pair, min_size=3))(x), np.cos(x) * x + np.sin(x), 1e-15)


def test_non_elementwise_operations_split_chains():
    def fn(x, w):
        a = anp.tanh(anp.sin(x) * 2.0)            # chain 1 (3,4)
        b = anp.exp(a @ w) - 1.0                 # matmul, then chain 2 (3,4)
        c = anp.cos(b[::-1, 1:]) * b[::-1, 1:]   # indexing, then chain 3 (3,3)
        m = anp.sum(c, axis=1, keepdims=True)    # a reduction, then chain 4 (3,3) over a broadcast
        return anp.sum(anp.sqrt(1.0 + (c - m) ** 2) * c)

    rng = np.random.default_rng(13)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((4, 4)))
    before, after = _coarsened(fn, args)
    kernels = _kernels(after)
    assert len(kernels) == 4 and not _elementwise(after)
    assert [k.outputs[0].aval.shape for k in kernels] == [(3, 4), (3, 4), (3, 3), (3, 3)]
    names = _names(after)
    assert names.index("einsum") < names.index("kernel", names.index("einsum"))
    assert _scalar_ops(after) <= _scalar_ops(before)
    grads = ad.grad(ad.coarsen(fn), argnums=(0, 1))(*args)
    for got, want in zip(grads, ad.grad(fn, argnums=(0, 1))(*args)):
        _assert_close(got, want, 1e-12, 1e-14)
    _directional_check(fn, args, grads, rng, (0, 1))


def test_constants_become_kernel_arguments_once_or_inline_scalars():
    rng = np.random.default_rng(14)
    c = rng.standard_normal((3, 4))
    fn = lambda x: anp.sum(anp.sin(x * c) + c + 2.5 * x)  # noqa: E731
    x = rng.standard_normal((3, 4))
    _, after = _coarsened(fn, (x,))
    (kernel,) = _kernels(after)
    assert len(kernel.inputs) == 2  # x and one copy of c; 2.5 is a 0-d literal of the scalar IR
    assert any(isinstance(a, Literal) and a.aval.shape == () and a.value == 2.5
               for e in kernel.params["kernel"].eqns for a in e.inputs)
    grad = ad.grad(ad.coarsen(fn))(x)
    _assert_close(grad, np.cos(x * c) * c + 2.5, 1e-14)


def test_hand_written_programs_with_constant_chains_stay_well_typed():
    """Without simplify first: a chain of constants only has no argument to give a kernel its shape
    (left alone), and a kernel output that simplifies to a constant is broadcast to the chain's shape."""
    constants_only = ad.parse_program("""{ lambda a:f64[3] .
        b:f64[3] = sin 1.0:f64[3]
        c:f64[3] = mul b 2.0:f64[3]
      in (c) }""")
    assert _names(coarsen_program(constants_only)) == ["sin", "mul"]
    constant_output = ad.parse_program("""{ lambda a:f64[3] .
        b:f64[3] = sin 1.0:f64[3]
        c:f64[3] = mul b 2.0:f64[3]
        d:f64[3] = mul c a
        e:f64[3] = tanh d
      in (c, e) }""")
    x = np.array([0.5, -1.0, 2.0])
    after = coarsen_program(constant_output)
    check_passes(after, [x])
    assert _names(after) == ["kernel"] and isinstance(after.eqns[0].params["kernel"].outputs[0], Literal)
    for got, want in zip(_run(after, [x]), _run(constant_output, [x])):
        assert got.shape == (3,) and np.allclose(got, want, rtol=1e-15)
    rng = np.random.default_rng(15)
    check_jvp(after, [x], rng)
    check_vjp(after, [x], rng)
