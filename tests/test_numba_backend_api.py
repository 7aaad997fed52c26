"""The Numba backend end to end: choosing it (jit(backend=), set_backend, $ADARRAY_BACKEND), every
transformation running on it, the fallback to NumPy implementations, native loops, errors, IEEE
values, the disk cache and compile reports, the vectorised math functions, and the benchmark programs."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("numba")

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402
import adarray.scipy.special as special  # noqa: E402
from adarray.backends import numba as numba_backend  # noqa: E402
from adarray.backends.numba import options, runtime  # noqa: E402
from adarray.core.primitive import REGISTRY  # noqa: E402


@pytest.fixture
def on_numba():
    previous = ad.set_backend("numba")
    yield
    ad.set_backend(previous)


def compiled_names():
    return [entry[0] for entry in runtime.COMPILE_LOG]


def loss(x, y):
    return anp.sum(anp.tanh(x * y) + anp.exp(-x) * anp.sin(y))


# --- choosing the backend -------------------------------------------------------------------------------------


def test_jit_with_backend_numba_compiles_and_agrees():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))

    def f(x, y):
        return anp.tanh(x) @ y.T, anp.max(x, axis=0)

    before = len(runtime.COMPILE_LOG)
    got = ad.jit(f, backend="numba")(x, y)
    want = ad.jit(f, backend="numpy")(x, y)
    assert [name for name in compiled_names()[before:]] == ["jit(f)"]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_every_staged_transformation_runs_on_the_chosen_backend(on_numba):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=3), rng.normal(size=3)
    before = len(runtime.COMPILE_LOG)
    results = {
        "grad": ad.grad(loss)(x, y),
        "value_and_grad": ad.value_and_grad(loss, argnums=(0, 1))(x, y),
        "jvp": ad.jvp(loss, (x, y), (y, x)),
        "jacfwd": ad.jacfwd(loss)(x, y),
        "jacrev": ad.jacrev(loss, argnums=1)(x, y),
        "hessian": ad.hessian(loss)(x, y),
        "vmap": ad.vmap(loss, in_axes=(0, None))(np.stack([x, y]), y),
    }
    value, pullback = ad.vjp(loss, x, y)
    results["vjp"] = (value, pullback(1.0))
    out, f_jvp = ad.linearize(loss, x, y)
    results["linearize"] = (out, f_jvp(y, x))
    kinds = {name.split("(")[0] for name in compiled_names()[before:]}
    assert {"grad", "jvp", "jacfwd", "jacrev", "vmap", "vjp", "linearize"} <= kinds
    ad.set_backend("numpy")
    expected = {
        "grad": ad.grad(loss)(x, y), "value_and_grad": ad.value_and_grad(loss, argnums=(0, 1))(x, y),
        "jvp": ad.jvp(loss, (x, y), (y, x)), "jacfwd": ad.jacfwd(loss)(x, y),
        "jacrev": ad.jacrev(loss, argnums=1)(x, y), "hessian": ad.hessian(loss)(x, y),
        "vmap": ad.vmap(loss, in_axes=(0, None))(np.stack([x, y]), y),
    }
    value, pullback = ad.vjp(loss, x, y)
    expected["vjp"] = (value, pullback(1.0))
    out, f_jvp = ad.linearize(loss, x, y)
    expected["linearize"] = (out, f_jvp(y, x))
    for name in results:
        got, want = ad.tree_util.tree_leaves(results[name]), ad.tree_util.tree_leaves(expected[name])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=name)


def test_the_environment_variable_sets_the_default_backend(tmp_path):
    script = textwrap.dedent("""
        import numpy as np
        import adarray as ad, adarray.numpy as anp
        from adarray.backends.numba import runtime
        g = ad.grad(lambda x: anp.sum(anp.sin(x) ** 2))(np.arange(3.0))
        assert np.allclose(g, np.sin(2 * np.arange(3.0)))
        print([name for name, *_ in runtime.COMPILE_LOG])
    """)
    env = dict(os.environ, ADARRAY_BACKEND="numba", ADARRAY_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert "grad(<lambda>)" in out.stdout


def test_an_unknown_backend_is_an_argument_error():
    with pytest.raises(ad.ArgumentError, match="unknown backend 'fortran'"):
        ad.set_backend("fortran")
    with pytest.raises(ad.ArgumentError, match="unknown backend"):
        ad.jit(loss, backend="fortran")


def test_without_numba_the_backend_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(numba_backend, "numba_available", lambda: False)
    with pytest.raises(ad.BackendError, match=r"pip install 'adarray\[numba\]'"):
        ad.set_backend("numba")
    with pytest.raises(ad.Error, match="numba"):
        ad.jit(loss, backend="numba")


# --- what is compiled, and what falls back -------------------------------------------------------------------

COMPILED = {
    "add", "mul", "exp", "log", "tanh", "logistic", "select", "convert", "integer_pow", "safe_mul",
    "broadcast_in_dim", "reshape", "transpose", "slice", "unslice", "concatenate", "gather", "scatter",
    "reduce", "argmax", "argmin", "scan", "linear_recurrence", "matrix_recurrence", "product_others",
    "einsum", "fold", "while", "cond", "custom_jvp_call", "custom_vjp_call", "checkpoint_call", "kernel",
    "general_scan", "general_reduce",
}


def test_coverage_lists_every_primitive_as_compiled_or_falling_back(capsys):
    coverage = numba_backend.coverage()
    assert sorted(coverage["compiled"] + coverage["numpy"]) == sorted(REGISTRY)
    assert COMPILED <= set(coverage["compiled"]), COMPILED - set(coverage["compiled"])
    assert coverage["percent"] == round(100.0 * len(coverage["compiled"]) / len(REGISTRY), 1)
    with capsys.disabled():
        print(f"\nNumba backend: {len(coverage['compiled'])} primitives compiled ({coverage['percent']}%), "
              f"{len(coverage['numpy'])} on NumPy: {', '.join(coverage['numpy'])}")


def test_at_least_95_percent_of_the_registry_is_compiled():
    """Special functions, linear algebra, complex values and the FFT included (issue 23)."""
    coverage = numba_backend.coverage()
    assert coverage["percent"] >= 95.0, coverage["numpy"]
    native = {"gamma", "digamma", "gammaln", "erfc", "erfinv", "ndtri", "log_ndtr", "xlogy", "xlog1py", "i0e", "i1e",
              "beta", "betaln", "binom", "betainc", "gammainc", "gammaincc", "expn", "zeta", "polygamma", "cholesky",
              "det", "eig", "eigh", "lu", "qr", "solve", "svd", "triangular_solve", "pinv", "expm", "sqrtm", "logm",
              "adjugate", "complex", "real", "imag", "conj", "fft", "jn", "yn", "iv", "ive"}
    assert native <= set(coverage["compiled"]), native - set(coverage["compiled"])


def test_a_primitive_without_a_lowering_cuts_the_program_and_runs_on_numpy(monkeypatch):
    from adarray.backends.numba.table import LOWERINGS

    monkeypatch.delitem(LOWERINGS, REGISTRY["gammaln"])  # as if gammaln had no Numba lowering

    def f(x):
        y = anp.exp(x) * 2.0
        z = special.gammaln(y)          # a NumPy step between two compiled segments
        return anp.sum(anp.sin(z) * y)

    x = np.linspace(0.1, 1.0, 7)
    program = ad.make_ir(ad.grad(f))(x)
    kinds = [kind for kind, _ in runtime.segments(program)]
    assert "numpy" in kinds and kinds.count("numba") >= 2
    np.testing.assert_allclose(ad.jit(ad.grad(f), backend="numba")(x), ad.grad(f)(x), rtol=1e-12)


def test_a_long_program_is_compiled_as_several_functions(monkeypatch):
    """Compile time grows faster than a function's length: long runs are cut (options.MAX_SEGMENT_EQUATIONS)."""
    monkeypatch.setattr(options, "MAX_SEGMENT_EQUATIONS", 4)

    def f(x):
        for k in range(5):
            x = anp.sin(x) * (k + 1.5) + x
        return anp.sum(x * x)

    x = np.linspace(-1.0, 1.0, 9)
    program = ad.make_ir(ad.grad(f))(x)
    runs = [body for kind, body in runtime.segments(program) if kind == "numba"]
    assert len(runs) == -(-len(program.eqns) // 4) and max(map(len, runs)) == 4
    np.testing.assert_allclose(ad.jit(ad.grad(f), backend="numba")(x), ad.grad(f)(x), rtol=1e-12)


# --- loops, errors, values ----------------------------------------------------------------------------------


def test_a_fold_and_its_gradient_run_as_native_loops():
    def f(x):
        def step(carry, row):
            carry = anp.tanh(carry * row + 1.0)
            return carry, anp.sum(carry)
        final, ys = ad.fold(step, x[0], x)
        return anp.sum(final) + anp.sum(ys ** 2)

    x = np.random.default_rng(2).normal(size=(50, 6))
    program = ad.make_ir(ad.grad(f))(x)
    assert [kind for kind, _ in runtime.segments(program)] == ["numba"]
    lines = runtime.CompiledSegment(program, "fold").text.splitlines()
    loops = [k for k, line in enumerate(lines) if line.lstrip().startswith("for t")]
    assert len(loops) == 2  # the forward fold and the reverse one
    for k in loops:  # a step allocates nothing: the body's arrays are allocated before the loop
        indent = len(lines[k]) - len(lines[k].lstrip())
        body = []
        for line in lines[k + 1:]:
            if len(line) - len(line.lstrip()) <= indent:
                break
            body.append(line)
        assert body and not any("np.empty" in line for line in body), "\n".join(body)
    np.testing.assert_allclose(ad.jit(ad.grad(f), backend="numba")(x), ad.grad(f)(x), rtol=1e-11)


def test_while_loop_and_cond_compile():
    def f(x):
        def body(state):
            k, v = state
            return k + 1, ad.cond(k % 2 == 0, lambda u: u * 0.5, lambda u: u + 1.0, v)
        return ad.while_loop(lambda s: s[0] < 7, body, (0, x))[1]

    x = np.array([1.0, -2.0, 3.5])
    np.testing.assert_allclose(ad.jit(f, backend="numba")(x), ad.jit(f)(x))
    np.testing.assert_allclose(ad.jit(ad.grad(lambda v: anp.sum(f(v))), backend="numba")(x),
                               ad.grad(lambda v: anp.sum(f(v)))(x))


def test_an_index_out_of_range_is_an_execution_error_naming_the_equation():
    def pick(x, i):
        return x[i]

    with pytest.raises(ad.ExecutionError, match="index out of range in `.*gather"):
        ad.jit(pick, backend="numba")(np.arange(4.0), np.array([1, 9]))
    np.testing.assert_array_equal(ad.jit(pick, backend="numba")(np.arange(4.0), np.array([-1, 2])), [3.0, 2.0])


def test_an_index_read_twice_is_checked_once():
    """Each raise site costs Numba compile time: gathers of the same index at the same element share one check."""
    def pick(x, y, i):
        return x[i] * y[i] + anp.sin(x[i])

    x, y, i = np.arange(4.0), np.arange(4.0) + 1, np.array([1, -1])
    program = ad.make_ir(pick)(x, y, i)
    text = runtime.generate(program, "pick", False)[0]
    assert text.count("raise IndexError") == 1, text
    np.testing.assert_allclose(ad.jit(pick, backend="numba")(x, y, i), x[i] * y[i] + np.sin(x[i]))
    with pytest.raises(ad.ExecutionError, match="index out of range"):
        ad.jit(pick, backend="numba")(x, y, np.array([1, 4]))


def test_a_literal_index_is_checked_when_the_code_is_generated():
    """(One out of range is an error when the function is traced.)"""
    def pick(x):
        return x[np.array([0, -4, 3])] * 2.0

    text = runtime.generate(ad.make_ir(pick)(np.arange(4.0)), "pick", False)[0]
    assert "raise IndexError" not in text
    np.testing.assert_allclose(ad.jit(pick, backend="numba")(np.arange(4.0)), [0.0, 0.0, 6.0])


def arrays_allocated(program) -> int:
    """The arrays a program's generated function allocates per call or takes from its workspace."""
    generated = runtime.generate(program, "f", False)
    return generated.text.count("np.empty") + len(generated.workspace.params)


def test_an_array_read_for_the_last_time_at_its_own_element_is_written_over():
    """The gradient of a product: the product of the others is scaled in place, not into a fresh array."""
    x = np.exp(np.random.default_rng(3).normal(0.0, 0.1, 64))
    program = ad.make_ir(ad.grad(lambda v: ad.reduce("mul", v) ** 2))(x)
    assert arrays_allocated(program) == 1
    np.testing.assert_allclose(ad.jit(ad.grad(lambda v: ad.reduce("mul", v) ** 2), backend="numba")(x),
                               2 * np.prod(x) ** 2 / x, rtol=1e-12)


def test_an_array_is_written_over_again_down_a_chain():
    def f(x):
        a = anp.cumsum(x)
        b = anp.sin(a) + 1.0     # into a's array
        return b * anp.cumsum(b)  # into it again

    x = np.linspace(0.0, 1.0, 50)
    assert arrays_allocated(ad.make_ir(f)(x)) == 2
    np.testing.assert_allclose(ad.jit(f, backend="numba")(x), (np.sin(np.cumsum(x)) + 1) * np.cumsum(
        np.sin(np.cumsum(x)) + 1), rtol=1e-13)


@pytest.mark.parametrize("later", ["another element", "a later group", "an output"])
def test_an_array_still_needed_is_not_written_over(later):
    def f(x):
        others = ad.numpy.cumsum(anp.sin(x))  # an opaque group's array
        scaled = anp.exp(others) * 2.0
        if later == "another element":
            return scaled + others[::-1]
        if later == "a later group":
            return anp.sort(scaled) + anp.sort(others)
        return scaled, others

    x = np.linspace(-1.0, 1.0, 50)
    expected = ad.jit(f)(x)
    for got, want in zip(np.atleast_1d(ad.jit(f, backend="numba")(x)), np.atleast_1d(expected)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def group_descriptions(fn, *args) -> list[str]:
    return runtime.generate(ad.make_ir(fn)(*args), "f", True)[3]


def test_loops_sharing_a_leading_axis_run_as_one_loop_keeping_their_values_per_iteration(monkeypatch):
    """BA's Jacobian blocks (loops over (p, 3), (p, 2), (p, 2, 3), ...): one chain over p, and no (p, ...) array but
    the four outputs."""
    from benchmarks.adbench import tool_adarray

    from test_adbench import synthetic_ba

    monkeypatch.setattr(options, "CHAIN_MIN_BYTES", 0)
    data = synthetic_ba(p=40)
    args = (data.cams, data.X, data.w, data.obs[:, 0], data.obs[:, 1], data.feats)
    groups = group_descriptions(tool_adarray.ba_blocks, *args)
    assert [g.split(":")[0] for g in groups] == ["chain (40,)"], groups
    text = runtime.generate(ad.make_ir(tool_adarray.ba_blocks)(*args), "blocks", False)[0]
    assert len(re.findall(r"np\.empty\(\((40|_n0),", text)) == 4, text  # the observations: a batch size
    for got, want in zip(ad.jit(tool_adarray.ba_blocks, backend="numba")(*args), ad.jit(tool_adarray.ba_blocks)(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_small_loops_sharing_a_leading_axis_stay_apart():
    """Below options.CHAIN_MIN_BYTES the values passing between loops stay in the cache: no chain."""
    def f(x):
        row = anp.sum(anp.exp(x), axis=1)
        return anp.exp(x) * row[:, None]

    x = np.random.default_rng(5).normal(size=(10, 3))
    assert not any(g.startswith("chain") for g in group_descriptions(f, x))
    assert any(g.startswith("chain") for g in group_descriptions(f, np.zeros((options.CHAIN_MIN_BYTES // 8, 3))))


def test_a_value_read_at_another_leading_index_is_not_kept_per_iteration(monkeypatch):
    """The row sums are read in reverse order, so they must all exist before the second loop: two loops."""
    def f(x):
        row = anp.sum(anp.exp(x), axis=1)
        return x * row[::-1, None] + row[:, None]

    monkeypatch.setattr(options, "CHAIN_MIN_BYTES", 0)
    x = np.random.default_rng(6).normal(size=(30, 3))
    assert not any(g.startswith("chain") for g in group_descriptions(f, x))
    np.testing.assert_allclose(ad.jit(f, backend="numba")(x), ad.jit(f)(x), rtol=1e-13)


def test_an_array_read_at_another_leading_index_in_a_chain_is_not_written_over(monkeypatch):
    """The running sums are read by the chain's first loop in reverse order (at rows the last loop has already
    passed): the last loop must not write its result into their array, though it is their last reader."""
    def f(x):
        running = anp.cumsum(x, axis=0)
        backwards = anp.sum(running[::-1] * running[::-1], axis=1)
        return anp.exp(running) * backwards[:, None]

    monkeypatch.setattr(options, "CHAIN_MIN_BYTES", 0)
    x = np.random.default_rng(7).normal(size=(30, 3))
    assert any(g.startswith("chain") for g in group_descriptions(f, x))
    np.testing.assert_allclose(ad.jit(f, backend="numba")(x), ad.jit(f)(x), rtol=1e-13)


def test_a_large_loop_runs_on_threads(monkeypatch):
    monkeypatch.setattr(options, "parallel", lambda: True)
    x = np.linspace(-1.0, 1.0, options.PARALLEL_MIN_WORK)
    text = runtime.generate(ad.make_ir(lambda v: anp.exp(v) * anp.sin(v))(x), "f", False)[0]
    assert re.search(r"for i0_0 in numba\.prange\(\d+\):", text) and "parallel=True" in text, text


def test_a_chain_on_threads_has_scratch_arrays_per_thread(monkeypatch):
    """In a parallel chain the scratch arrays are allocated inside the prange loop (Numba hoists them, one per
    thread), not shared before it."""
    def f(x):
        squares = anp.exp(x) * anp.sin(x)
        return anp.exp(squares) * anp.sum(squares, axis=1)[:, None]

    monkeypatch.setattr(options, "CHAIN_MIN_BYTES", 0)
    monkeypatch.setattr(options, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(options, "parallel", lambda: True)
    x = np.random.default_rng(8).normal(size=(2000, 5))
    text = runtime.generate(ad.make_ir(f)(x), "f", False)[0]
    lines = text.splitlines()
    loop = next(k for k, line in enumerate(lines) if "numba.prange(2000)" in line)
    scratch = [k for k, line in enumerate(lines) if re.search(r"w\d+ = np\.empty\(\(5,\)", line)]
    assert scratch and all(k > loop for k in scratch), text
    np.testing.assert_allclose(ad.jit(f, backend="numba")(x), ad.jit(f)(x), rtol=1e-13)


def test_a_reversed_argument_is_read_in_place_by_a_right_to_left_scan():
    """The general reduce's gradient scans the reversed input: a view of the argument, not a copy."""
    def f(m):
        return anp.sum(ad.reduce(lambda a, b: a @ b, m, identity=np.eye(2)) ** 2)

    m = np.eye(2) + 0.1 * np.random.default_rng(4).normal(size=(30, 2, 2))
    m.flags.writeable = False
    text = runtime.generate(ad.make_ir(ad.grad(f))(m), "grad", False)[0]
    assert re.search(r"v\d+ = p0\[29::-1, 0:2, 0:2\]", text), text
    np.testing.assert_allclose(ad.jit(ad.grad(f), backend="numba")(m), ad.grad(f)(m), rtol=1e-10)


def test_inputs_are_never_written():
    x = np.arange(6.0)
    x.flags.writeable = False

    def f(x):
        return x.at[np.array([0, 2, 2])].add(1.0) * 2

    np.testing.assert_allclose(ad.jit(f, backend="numba")(x), [2, 2, 8, 6, 8, 10])


def test_nan_and_inf_are_values_as_in_numpy():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e308, -1.0, 750.0, -750.0])

    def f(x):
        return (anp.exp(x), anp.log(x), anp.tanh(x), anp.sigmoid(x), anp.expm1(x), anp.log1p(x), anp.max(x),
                anp.maximum(x, 0.0), anp.sqrt(x), x / 0.0)

    with np.errstate(all="ignore"):
        want = ad.jit(f)(x)
    for g, w in zip(ad.jit(f, backend="numba")(x), want):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_allclose(np.nan_to_num(g), np.nan_to_num(w), rtol=1e-15)
        np.testing.assert_array_equal(np.signbit(g[g == 0]), np.signbit(w[w == 0]))


def test_float32_programs_stay_float32():
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    got = ad.jit(ad.grad(lambda v: anp.sum(anp.tanh(v) * anp.exp(v))), backend="numba")(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ad.grad(lambda v: anp.sum(anp.tanh(v) * anp.exp(v)))(x), rtol=1e-5)


# --- compile times and the disk cache ------------------------------------------------------------------------


def test_a_long_compile_says_so_on_stderr(monkeypatch, capfd):
    monkeypatch.setattr(options, "REPORT_COMPILE_SECONDS", 0.0)
    ad.jit(lambda x: anp.cos(x) * 3.0 + 1.0, backend="numba")(np.ones(3))
    assert "adarray: compiled 'jit(<lambda>)'" in capfd.readouterr().err


def test_compiled_programs_are_cached_on_disk_per_signature(tmp_path):
    script = textwrap.dedent("""
        import numpy as np
        import adarray as ad, adarray.numpy as anp
        from adarray.backends.numba import runtime
        f = ad.jit(lambda x: anp.sum(anp.exp(x) * x), backend="numba")
        f(np.ones(4)); f(np.ones(5))
        print([cached for *_, cached in runtime.COMPILE_LOG])
    """)
    env = dict(os.environ, ADARRAY_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.strip() == "[False, False]" and second.stdout.strip() == "[True, True]"


# --- the vectorised math functions ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, reference, low, high", [
    ("exp", np.exp, -760, 720), ("log", np.log, -1, 1e300), ("expm1", np.expm1, -50, 50),
    ("log1p", np.log1p, -1.5, 1e10), ("tanh", np.tanh, -30, 30),
    ("logistic", lambda x: 1 / (1 + np.exp(-x)), -800, 800),
])
def test_vectorised_math_is_within_a_few_ulp_of_numpy(name, reference, low, high):
    import numba

    from adarray.backends.numba import mathlib

    function = getattr(mathlib, name)

    @numba.njit(fastmath={"contract", "arcp", "reassoc"})  # the flags of the generated code
    def apply(values, out):
        for i in range(values.shape[0]):
            out[i] = function(values[i])
    rng = np.random.default_rng(3)
    special_values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 0.5, -0.5, 1.0, 22.0, -22.0,
                      709.78, 709.79, -745.13, -745.14]
    x = np.concatenate([rng.uniform(low, high, 20000), rng.normal(size=20000), rng.normal(scale=1e-6, size=2000),
                        special_values])
    if name == "log":
        x = np.concatenate([x, np.exp(rng.uniform(-745, 709, 20000))])
    out = np.empty_like(x)
    apply(x, out)
    with np.errstate(all="ignore"):
        want = reference(x)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(out[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    np.testing.assert_array_equal(np.signbit(out[want == 0]), np.signbit(want[want == 0]))
    nonzero = finite & (want != 0)
    ulps = np.abs(out[nonzero] - want[nonzero]) / np.spacing(np.abs(want[nonzero]))
    assert ulps.max() <= 4, f"{name}: {ulps.max()} ulp at {x[nonzero][np.argmax(ulps)]!r}"


# --- the benchmark programs --------------------------------------------------------------------------------


@pytest.mark.parametrize("problem", ["gmm", "ba", "lstm"])
def test_adbench_programs_agree_on_both_backends(problem):
    from benchmarks.adbench import tool_adarray

    from test_adbench import synthetic_ba, synthetic_gmm, synthetic_lstm

    data = {"gmm": synthetic_gmm, "ba": synthetic_ba, "lstm": synthetic_lstm}[problem]()
    outputs = {}
    for backend in ("numpy", "numba"):
        tool_adarray.use_backend(backend)
        try:
            task = tool_adarray.prepare(problem, data)
            outputs[backend] = (task.objective_output(task.objective()), task.derivative_output(task.derivative()))
        finally:
            ad.set_backend("numpy")
    for got, want in zip(outputs["numba"], outputs["numpy"]):
        got, want = (got.toarray(), want.toarray()) if hasattr(got, "toarray") else (got, want)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# --- what the generated code does not handle falls back, and bad input is an error ----------------------------


def test_complex_programs_fall_back_to_numpy_and_agree():
    z = np.array([0.5 + 1.0j, -1.0 + 0.25j, 2.0 - 0.5j])

    def f(z):
        w = anp.exp(z) * z + anp.sin(z)
        return anp.real(anp.sum(w * anp.conj(w))), anp.fft.fft(w)

    program = ad.make_ir(f)(z)
    assert "numpy" in [kind for kind, _ in runtime.segments(program)]
    for got, want in zip(ad.jit(f, backend="numba")(z), ad.jit(f)(z)):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-13)
    loss = lambda z: f(z)[0]  # noqa: E731
    np.testing.assert_allclose(ad.jit(ad.grad(loss), backend="numba")(z), ad.grad(loss)(z), rtol=1e-12)


def test_float16_runs_on_numpy_not_in_generated_code():
    x = np.linspace(-1, 1, 5).astype(np.float16)

    def f(x):
        return anp.tanh(x) * 2 + x

    program = ad.make_ir(f)(x)
    assert all(kind == "numpy" for kind, _ in runtime.segments(program))
    got = ad.jit(f, backend="numba")(x)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, ad.jit(f)(x))


def test_a_compiled_program_rejects_arguments_of_another_signature():
    program = ad.make_ir(lambda x: anp.sum(anp.exp(x) * x))(np.ones(4))
    run = numba_backend.compile_program(program, "sum_exp")
    np.testing.assert_allclose(run(np.ones(4))[0], 4 * np.e)
    np.testing.assert_allclose(run(np.ones(4, np.float32))[0], 4 * np.e, rtol=1e-7)  # a safe cast
    with pytest.raises(ad.ArgumentError, match=r"'sum_exp': argument 0 is float64\[5\].*f64\[4\]"):
        run(np.ones(5))
    with pytest.raises(ad.ArgumentError, match="argument 0 is complex128"):
        run(np.ones(4, complex))
    with pytest.raises(ad.ArgumentError, match="takes 1 arguments, got 2"):
        run(np.ones(4), np.ones(4))


def test_bad_input_to_a_jitted_function_is_the_same_error_on_both_backends():
    def f(x, y):
        return anp.dot(x, y)

    for backend in ("numpy", "numba"):
        with pytest.raises(ad.ShapeError):
            ad.jit(f, backend=backend)(np.ones((2, 3)), np.ones((4,)))


def test_long_reductions_over_leading_axes_accumulate_in_memory_order():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(300, 2, 3))
    x[7, 1, 2] = np.nan

    def f(x):
        return (anp.sum(x, axis=0), anp.max(x, axis=(0, 1)), anp.min(x, axis=0), anp.prod(1.0 + 0.01 * x, axis=0),
                anp.sum(anp.exp(x), axis=(0, 2)))

    program = ad.make_ir(f)(x)
    text = runtime.CompiledSegment(program, "reductions").text
    assert "for r0_0 in range(300):" in text  # the reduced axis outermost, in memory order
    assert "== 0:" not in text  # the output starts at the identity: no first-element test in the loop
    for got, want in zip(ad.jit(f, backend="numba")(x), ad.jit(f)(x)):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    g = ad.jit(ad.grad(lambda v: anp.sum(f(v)[3])), backend="numba")(x)
    np.testing.assert_allclose(g, ad.grad(lambda v: anp.sum(f(v)[3]))(x), rtol=1e-11)


# --- contractions on BLAS ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["ij,jk->ik", "ij,jk->ki", "kij,nkj->nki", "kij,nkj->kin", "kij,nkj->ikn",
                                  "nki,nkj->kij", "kij,nki->nkj", "bij,bjk->bki", "ijb,jkb->kbi"])
def test_large_contractions_agree_in_every_output_layout(spec):
    """Large enough for the BLAS path (options.BLAS_MIN_WORK); the product is stored with the output's innermost
    letter last, whichever operand holds it, and read through the output's index order."""
    (left, right), out = spec.split("->")[0].split(","), spec.split("->")[1]
    sizes = dict(zip("ijknb", (24, 40, 32, 48, 3)))
    rng = np.random.default_rng(7)
    a = rng.normal(size=[sizes[c] for c in left])
    b = rng.normal(size=[sizes[c] for c in right])
    work = np.prod([sizes[c] for c in dict.fromkeys(left + right) if c not in "b" or c not in out])
    assert work >= options.BLAS_MIN_WORK

    def f(a, b):
        return anp.tanh(anp.einsum(spec, a, b)) * 2.0

    np.testing.assert_allclose(ad.jit(f, backend="numba")(a, b), np.tanh(np.einsum(spec, a, b)) * 2.0,
                               rtol=1e-12, atol=1e-12)
    gradient = ad.jit(ad.grad(lambda a, b: anp.sum(f(a, b) ** 2), argnums=(0, 1)), backend="numba")(a, b)
    reference = ad.jit(ad.grad(lambda a, b: anp.sum(f(a, b) ** 2), argnums=(0, 1)), backend="numpy")(a, b)
    for got, want in zip(gradient, reference):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
