"""Scalar kernels in array programs: derivatives against finite differences on every branch, loops
with per-element trip counts, mixed mode (values and partials in one pass; fused into a sum), the
guards that fall back to reverse mode, nested derivatives, batching and the masked interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import adarray as ad
import adarray.numpy as anp
from adarray.backends.numpy import kernels as numpy_kernels
from adarray.kernels import kernel, partials_program, tangent_program
from adarray.passes import simplify
from adarray.testing import numerical_jvp


@kernel
def hmlstm_cell(z, zb, c, f, i, g):
    if z == 1.0:
        return anp.sigmoid(i) * anp.tanh(g)          # FLUSH
    elif zb == 0.0:
        return c                                     # COPY
    else:
        return anp.sigmoid(f) * c + anp.sigmoid(i) * anp.tanh(g)   # UPDATE


@kernel
def which_branch(z, zb):
    if z == 1.0:
        return 0
    elif zb == 0.0:
        return 1
    return 2


def cell_where(z, zb, c, f, i, g):
    """The same update as array operations: every branch everywhere, then where (pure reverse mode)."""
    flush = anp.sigmoid(i) * anp.tanh(g)
    return anp.where(z == 1.0, flush, anp.where(zb == 0.0, c, anp.sigmoid(f) * c + flush))


@kernel
def series(x, n):
    """exp(x) by n Taylor terms: the trip count differs per element."""
    total, term = 0.0, 1.0
    for k in range(n):
        total += term
        term = term * x / (k + 1)
    return total


@kernel
def newton_root(a):
    """sqrt(a) by Newton's method to a tolerance: a while loop with a data-dependent trip count."""
    x = a
    steps = 0
    while abs(x * x - a) > 1e-14 * a:
        x = 0.5 * (x + a / x)
        steps += 1
    return x, steps


def _controls(rng, n):
    z = (rng.random(n) < 0.3) * 1.0
    zb = (rng.random(n) < 0.5) * 1.0
    z[:3], zb[:3] = [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]  # every branch is taken
    return z[:, None], zb[:, None]


def _directional_check(fn, args, grads, rng, eps=1e-6, rtol=1e-6):
    """<grad, v> against central differences of fn along a random direction v."""
    directions = [rng.standard_normal(np.shape(a)) for a in args]
    (numerical,) = numerical_jvp(lambda *xs: [np.asarray(fn(*xs))], args, directions, eps)
    analytic = sum(np.sum(g * v) for g, v in zip(grads, directions))
    assert np.isclose(analytic, numerical, rtol=rtol, atol=1e-7), (analytic, numerical)


def test_hmlstm_cell_gradient_matches_finite_differences_and_reverse_mode_on_every_branch():
    rng = np.random.default_rng(0)
    z, zb = _controls(rng, 8)
    c, f, i, g = [rng.standard_normal((8, 5)) for _ in range(4)]
    assert set(np.unique(which_branch(z, zb * np.ones((1, 5))))) == {0, 1, 2}

    def loss(c, f, i, g):
        return anp.sum(anp.sin(hmlstm_cell(z, zb, c, f, i, g)) * c)

    def loss_where(c, f, i, g):
        return anp.sum(anp.sin(cell_where(z, zb, c, f, i, g)) * c)

    args = (c, f, i, g)
    value, grads = ad.value_and_grad(loss, argnums=(0, 1, 2, 3))(*args)
    reference_value, reference = ad.value_and_grad(loss_where, argnums=(0, 1, 2, 3))(*args)
    assert np.isclose(value, reference_value)
    for got, want in zip(grads, reference):
        assert np.allclose(got, want, rtol=1e-13, atol=1e-13)
    _directional_check(lambda *a: loss(*a), args, grads, rng)


def test_broadcast_arguments_get_cotangents_summed_over_their_broadcast_axes():
    @kernel
    def bump(x, y, b):
        if x * y > b:
            return anp.sin(x * y)
        return b * x

    rng = np.random.default_rng(1)
    x, y, b, w = rng.standard_normal((4, 1)), rng.standard_normal((1, 6)), np.array(0.1), rng.standard_normal((4, 6))
    loss = lambda x, y, b: anp.sum(w * bump(x, y, b))  # noqa: E731
    grads = ad.grad(loss, argnums=(0, 1, 2))(x, y, b)
    assert [np.shape(g) for g in grads] == [(4, 1), (1, 6), ()]
    _directional_check(loss, (x, y, b), grads, rng)


@pytest.mark.parametrize("wrt_sum", [False, True])
def test_mixed_mode_keeps_partials_not_a_tape_and_fuses_a_sum(wrt_sum):
    rng = np.random.default_rng(2)
    z, zb = _controls(rng, 6)
    args = [rng.standard_normal((6, 3)) for _ in range(4)]
    if wrt_sum:  # the output feeds straight into a sum: the cotangent enters the forward pass
        fn = lambda c, f, i, g: anp.sum(hmlstm_cell(z, zb, c, f, i, g))  # noqa: E731
    else:
        fn = lambda c, f, i, g: anp.sum(hmlstm_cell(z, zb, c, f, i, g) ** 2)  # noqa: E731
    program = ad.make_ir(ad.grad(fn, argnums=(0, 1, 2, 3)))(*args)
    kernels = [e for e in program.eqns if e.prim.name == "kernel"]
    assert len(kernels) == 1, program
    assert kernels[0].params["name"] == ("hmlstm_cell_vjp" if wrt_sum else "hmlstm_cell_partials")
    # The value and four partials, or, fused, the four cotangents alone (grad does not need the value,
    # and dead-code elimination prunes it from the kernel): no tape either way.
    assert len(kernels[0].outputs) == (4 if wrt_sum else 5)
    if wrt_sum:
        assert len(program.eqns) == 1  # nothing but the fused kernel: the partials are never stored
    grads = ad.grad(fn, argnums=(0, 1, 2, 3))(*args)
    _directional_check(fn, args, grads, rng)


def test_vjp_splits_into_a_forward_and_a_backward_program():
    x = np.linspace(0.5, 2.0, 5)
    out, pullback = ad.vjp(lambda x: newton_root(x)[0], x)
    (cotangent,) = pullback(np.arange(5.0))
    assert np.allclose(out, np.sqrt(x)) and np.allclose(cotangent, np.arange(5.0) * 0.5 / np.sqrt(x))


def test_loops_with_per_element_trip_counts_differentiate_like_finite_differences():
    rng = np.random.default_rng(3)
    x, n = rng.uniform(-1.0, 1.5, 6), np.array([0, 1, 2, 4, 7, 11])
    assert np.allclose(series(x, n), [sum(v ** k / np.prod(range(1, k + 1)) for k in range(m)) for v, m in zip(x, n)])
    grads = ad.grad(lambda x: anp.sum(series(x, n) ** 2))(x)
    _directional_check(lambda x: anp.sum(series(x, n) ** 2), (x,), (grads,), rng)
    a = np.array([0.5, 2.0, 10.0, 1e4])
    root, steps = newton_root(a)
    assert np.allclose(root, np.sqrt(a)) and len(set(steps.tolist())) > 1  # elements stop at different steps
    assert np.allclose(ad.grad(lambda a: anp.sum(newton_root(a)[0]))(a), 0.5 / np.sqrt(a))


def test_forward_mode_is_the_kernel_forward_derivative():
    rng = np.random.default_rng(4)
    z, zb = _controls(rng, 5)
    primals = [rng.standard_normal((5, 2)) for _ in range(4)]
    tangents = [rng.standard_normal((5, 2)) for _ in range(4)]
    fn = lambda c, f, i, g: hmlstm_cell(z, zb, c, f, i, g)  # noqa: E731
    _, tangent = ad.jvp(fn, primals, tangents)
    (numerical,) = numerical_jvp(lambda *a: [fn(*a)], primals, tangents, 1e-6)
    assert np.allclose(tangent, numerical, rtol=1e-6, atol=1e-8)
    x = np.array([0.3, 1.1, -0.4])
    assert np.allclose(ad.jacfwd(lambda x: series(x, 6))(x), ad.jacrev(lambda x: series(x, 6))(x))


def test_second_and_third_derivatives_through_a_kernel_are_right():
    a = np.array([0.7, 2.0, 5.0])
    second = ad.grad(lambda a: anp.sum(ad.grad(lambda b: anp.sum(newton_root(b)[0]))(a)))(a)
    assert np.allclose(second, -0.25 * a ** -1.5)
    third = ad.grad(lambda a: anp.sum(ad.grad(lambda b: anp.sum(ad.grad(lambda c: anp.sum(newton_root(c)[0]))(b)))(a)))
    assert np.allclose(third(a), 0.375 * a ** -2.5)
    x = np.array([0.2, -0.5])
    hessian = ad.hessian(lambda x: anp.sum(series(x, 9) * x))(x)
    expected = np.diag([2 * sum(v ** k / np.prod(range(1, k + 1)) for k in range(8))
                        + x_ * sum(v ** k / np.prod(range(1, k + 1)) for k in range(7)) for v, x_ in zip(x, x)])
    assert np.allclose(hessian, expected)


def test_partials_are_one_pass_with_structured_control_flow_and_no_swell():
    program = hmlstm_cell.ir()
    derived, pairs = partials_program(program, [True] * 6)
    assert pairs == ((0, 2), (0, 3), (0, 4), (0, 5))  # z and zb feed only the branch index
    assert [e.prim.name for e in derived.eqns].count("cond") == 1
    second, _ = partials_program(derived, [True] * 6)
    assert len(str(second)) < 8 * len(str(derived))
    # A composition of depth d: a tree of derivatives doubles per level, the DAG after CSE grows linearly.
    sizes = []
    for depth in (4, 8, 16):
        def compose(x, depth=depth):
            for _ in range(depth):
                x = anp.sin(x) * x
            return x

        traced = ad.make_ir(compose)(0.5)
        sizes.append(len(simplify(tangent_program(partials_program(traced, [True])[0], [True])).eqns))
    assert sizes[2] - sizes[1] == 2 * (sizes[1] - sizes[0]) and sizes[2] < 25 * 16


def test_vmap_of_a_kernel_call_is_a_kernel_call():
    a = np.array([[0.5, 2.0], [9.0, 4.0], [1.5, 3.0]])  # not 1.0: the loop would not run, x = a is exact
    fn = lambda a: anp.sum(newton_root(a)[0])  # noqa: E731
    program = ad.make_ir(ad.vmap(fn))(a)
    assert [e.prim.name for e in program.eqns].count("kernel") == 1 and "while" not in [e.prim.name for e in
                                                                                          program.eqns]
    assert np.allclose(ad.vmap(fn)(a), [fn(row) for row in a])
    assert np.allclose(ad.vmap(ad.grad(fn))(a), 0.5 / np.sqrt(a))


# --- guards ----------------------------------------------------------------------------------------


def test_a_closure_over_a_traced_array_falls_back_to_reverse_mode_with_its_gradient():
    def loss(x, y):
        @kernel
        def scaled(a):
            if a > 0.0:
                return a * y
            return a - y
        return anp.sum(scaled(x) ** 2)

    x, y = np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.5, 2.0])
    assert "kernel" not in [e.prim.name for e in ad.make_ir(loss)(x, y).eqns]
    gx, gy = ad.grad(loss, argnums=(0, 1))(x, y)
    assert np.allclose(gx, np.where(x > 0, 2 * x * y * y, 2 * (x - y)))
    assert np.allclose(gy, np.where(x > 0, 2 * x * y * x, -2 * (x - y)))  # Zygote PR #1018 lost this


def test_a_closure_over_a_constant_array_stays_a_mixed_mode_kernel():
    weights = np.array([1.0, 2.0, 3.0])

    @kernel
    def weighted(a):
        return a * weights if a > 0.0 else a

    x = np.array([1.0, -2.0, 3.0])
    assert "kernel" in [e.prim.name for e in ad.make_ir(lambda x: anp.sum(weighted(x)))(x).eqns]
    assert np.allclose(ad.grad(lambda x: anp.sum(weighted(x)))(x), np.where(x > 0, weights, 1.0))


def test_complex_arguments_fall_back_to_array_operations():
    @kernel
    def affine(a, b):
        return a * b + a

    a, b = np.array([1 + 2j, 3 - 1j]), np.array([2j, 1.0 + 0j])
    assert np.allclose(affine(a, b), a * b + a)
    assert "kernel" not in [e.prim.name for e in ad.make_ir(affine)(a, b).eqns]


def test_too_many_partials_fall_back_to_reverse_mode_over_the_kernel_operations():
    @kernel
    def product(a, b, c):
        return anp.tanh(a if a > 0.5 else -a) * anp.tanh(b if b > 0.5 else -b) * anp.tanh(c if c > 0.5 else -c)

    args = [np.array([0.2, 0.7, 1.5]), np.array([0.9, 0.1, -0.3]), np.array([0.6, 2.0, 0.4])]
    fn = lambda a, b, c: anp.sum(product(a, b, c) ** 2)  # noqa: E731
    mixed = ad.grad(fn, argnums=(0, 1, 2))(*args)
    with ad.config.override(kernel_arity_numpy=2, kernel_arity_numba=2):  # obeyed by the next call
        names = [e.params.get("name") for e in ad.make_ir(ad.grad(fn, argnums=(0, 1, 2)))(*args).eqns]
        assert "product" in names and "product_partials" not in names
        reverse = ad.grad(fn, argnums=(0, 1, 2))(*args)
    for m, r in zip(mixed, reverse):
        assert np.allclose(m, r, rtol=1e-13)


def test_powers_of_negative_numbers_need_no_fallback():
    @kernel
    def powers(x, p):
        return x ** 3 + pow(x, p)

    x, p = np.array([-2.0, -0.5, 1.5]), np.array([2.0, 4.0, 3.0])
    assert np.allclose(ad.grad(lambda x: anp.sum(powers(x, p)))(x), 3 * x ** 2 + p * x ** (p - 1))


# --- the masked interpreter -------------------------------------------------------------------------


@kernel
def costly_branch(x):
    if x > 0.9:
        s = 0.0
        for k in range(50):
            s = s + anp.sin(x * k)
        return s
    return x


def test_each_branch_runs_only_on_its_own_elements(monkeypatch):
    seen = []
    original = numpy_kernels.interpret
    branch = next(e for e in costly_branch.ir().eqns if e.prim.name == "cond").params["branches"][1]
    body = next(e for e in branch.eqns if e.prim.name == "while").params["body"]

    def spy(program, args):
        if program is body:
            seen.append(max(np.size(a) for a in args if a is not None))
        return original(program, args)

    monkeypatch.setattr(numpy_kernels, "interpret", spy)
    with ad.config.override(kernel_backend="numpy"):
        x = np.linspace(0.0, 1.0, 1000)
        out = costly_branch(x)
    taken = int(np.sum(x > 0.9))
    assert np.allclose(out[x > 0.9], [sum(np.sin(v * k) for k in range(50)) for v in x[x > 0.9]])
    assert len(seen) == 50 and set(seen) == {taken}  # the loop ran on the 10% only


def test_a_while_loop_runs_each_element_its_own_number_of_steps(monkeypatch):
    sizes = []
    original = numpy_kernels._while

    def spy(args, **params):
        sizes.append(max(np.size(a) for a in args))
        return original(args, **params)

    monkeypatch.setattr(numpy_kernels, "_while", spy)
    with ad.config.override(kernel_backend="numpy"):
        root, steps = newton_root(np.array([1.0, 4.0, 1e6]))
    assert np.allclose(root, [1.0, 2.0, 1e3]) and steps.tolist()[0] < steps.tolist()[2] and sizes == [3]
