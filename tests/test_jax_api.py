"""`jit(f, backend="jax")`, `lower`, `data_parallel`: values against the NumPy backend, the HLO, the user's JAX
settings left alone, the ADBench programs, and sharding over four (simulated) devices in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import adarray as ad  # noqa: E402
import adarray.numpy as anp  # noqa: E402


def _loss(w, x):
    return anp.sum(anp.tanh(x @ w) ** 2) + anp.sum(anp.cumprod(w, axis=0))


def test_jit_on_jax_matches_the_numpy_backend_and_returns_jax_arrays():
    rng = np.random.default_rng(0)
    w, x = rng.normal(size=(3, 2)), rng.normal(size=(5, 3))
    before = jax.config.jax_enable_x64
    got = ad.jit(ad.grad(_loss), backend="jax")(w, x)
    assert isinstance(got, jax.Array) and got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), ad.grad(_loss)(w, x), rtol=1e-12)
    assert jax.config.jax_enable_x64 == before  # enabled for our program only
    again = ad.jit(ad.grad(_loss), backend="jax")(jax.numpy.asarray(w, np.float32).astype(np.float32), x)
    assert again.dtype == np.float32  # the program of the float32 signature, not a silent promotion


def test_arrays_and_tuples_of_arrays_skip_staging_after_the_first_call(monkeypatch):
    from adarray.api import xla as compiled

    def f(params, x):
        w, b = params
        return anp.sum(anp.tanh(x @ w + b) ** 2)

    rng = np.random.default_rng(1)
    params, x = (rng.normal(size=(3, 2)), rng.normal(size=2)), rng.normal(size=(5, 3))
    jitted = ad.jit(ad.grad(f), backend="jax")
    first = jitted(params, x)
    staged = []
    original = compiled._JaxFunction.staged
    monkeypatch.setattr(compiled._JaxFunction, "staged", lambda self, *a: staged.append(1) or original(self, *a))
    again = jitted(params, x)
    assert not staged
    for got, want in zip(again, ad.grad(f)(params, x)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    jitted([params[0], params[1]], x)  # a list is another structure: staged again, then fast
    jitted((params[0], params[1][:1]), x)  # another shape too
    assert len(staged) == 2
    np.testing.assert_allclose(np.asarray(first[0]), np.asarray(again[0]))


def test_lower_returns_the_jax_lowered_computation():
    w, x = np.ones((3, 2)), np.ones((5, 3))
    lowered = ad.lower(ad.grad(_loss), backend="jax")(w, x)
    assert isinstance(lowered, jax.stages.Lowered)
    text = lowered.as_text()
    assert "tensor<3x2xf64>" in text and "tensor<5x3xf64>" in text
    from adarray.backends.jax import x64

    with x64():  # float64 arguments; the flat list of output leaves
        np.testing.assert_allclose(np.asarray(lowered.compile()(w, x)[0]), ad.grad(_loss)(w, x), rtol=1e-12)


def test_jitted_on_jax_composes_with_our_transformations():
    f = ad.jit(lambda x: anp.sin(x) * x, backend="jax")
    x = np.linspace(-1.0, 1.0, 4)
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(f(x)))(x), np.sin(x) + x * np.cos(x), rtol=1e-12)


def test_control_flow_and_while_loop_gradients_on_jax():
    def f(x):
        def body(state):
            value, count = state
            return 0.9 * value + 0.3 * anp.sin(value) * x, count + 1
        value, _ = ad.while_loop(lambda s: s[1] < 70, body, (x, 0))
        return anp.sum(value)

    x = np.array([0.1, -0.2])
    assert "while_grad" in str(ad.make_ir(ad.grad(f))(x))  # reverse mode through the loop, which JAX cannot do
    np.testing.assert_allclose(np.asarray(ad.jit(ad.grad(f), backend="jax")(x)), ad.grad(f)(x), rtol=1e-10)


def test_bad_backend_and_options_raise_our_errors():
    with pytest.raises(ad.ArgumentError, match="unknown backend"):
        ad.jit(np.sin, backend="tpu-magic")
    with pytest.raises(ad.ArgumentError, match="need a compiled backend"):
        ad.jit(np.sin, in_shardings=None, out_shardings=1)


def test_adbench_programs_agree_with_the_numpy_backend():
    sys.path.insert(0, os.path.dirname(__file__))
    from benchmarks.adbench import tool_adarray, tool_adarray_jax

    from test_adbench import ROOT, hand_instance, synthetic_ba, synthetic_gmm, synthetic_lstm

    instances = [("gmm", synthetic_gmm()), ("ba", synthetic_ba()), ("lstm", synthetic_lstm())]
    if ROOT is not None:
        instances += [("hand-simple", hand_instance(False)), ("hand-complicated", hand_instance(True))]
    for problem, data in instances:
        ours, lowered = tool_adarray.prepare(problem, data), tool_adarray_jax.prepare(problem, data)
        for run, output in (("objective", "objective_output"), ("derivative", "derivative_output")):
            want = getattr(ours, output)(getattr(ours, run)())
            got = getattr(lowered, output)(getattr(lowered, run)())
            want, got = (v.toarray() if hasattr(v, "toarray") else np.asarray(v) for v in (want, got))
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=f"{problem} {run}")


SHARDING_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import adarray as ad
    import adarray.numpy as anp
    from adarray.backends.jax import x64
    from benchmarks.adbench import tool_adarray
    from benchmarks.adbench.data import GMMData

    mesh = Mesh(np.array(jax.devices()), ("data",))
    report = {"devices": len(jax.devices())}

    # Per-point values stay split: each device holds a quarter of the rows.
    f = ad.jit(lambda w, x: anp.tanh(x @ w), backend="jax",
               in_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))),
               out_shardings=NamedSharding(mesh, P("data")))
    rng = np.random.default_rng(0)
    w, x = rng.normal(size=(3, 2)), rng.normal(size=(8, 3))
    y = f(w, x)
    report["per_point_error"] = float(np.max(np.abs(np.asarray(y) - np.tanh(x @ w))))
    report["per_point_shards"] = sorted([list(s.data.shape), s.device.id] for s in y.addressable_shards)

    # ADBench's GMM gradient over 10^5 points, split four ways.
    n, d, k = 100_000, 3, 5
    data = GMMData(rng.normal(size=k), rng.normal(size=(k, d)), 0.3 * rng.normal(size=(k, d * (d + 1) // 2)),
                   rng.normal(size=(n, d)), gamma=1.3, m=2)
    objective = lambda a, mu, icf, pts: tool_adarray.gmm_objective(a, mu, icf, pts, gamma=data.gamma, m=data.m)
    gradient = ad.grad(objective, argnums=(0, 1, 2))
    args = (data.alphas, data.means, data.icf, data.x)
    reference = gradient(*args)                                   # the NumPy backend
    one_device = ad.jit(gradient, backend="jax")(*args)
    split = ad.data_parallel(gradient, mesh, batch_argnums=3)
    with x64():  # float64 on the devices (outside, JAX would make it float32)
        points = jax.device_put(data.x, NamedSharding(mesh, P("data")))   # already sharded: used as it is
    parallel = split(data.alphas, data.means, data.icf, points)
    parallel_numpy = split(*args)                                 # NumPy input: placed by data_parallel
    report["point_shards"] = sorted([list(s.data.shape), s.device.id] for s in points.addressable_shards)
    report["one_device_vs_numpy"] = max(float(np.max(np.abs(np.asarray(a) - b))) for a, b in zip(one_device, reference))
    report["split_vs_one_device"] = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                                        for a, b in zip(parallel, one_device))
    report["split_numpy_input"] = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                                      for a, b in zip(parallel_numpy, parallel))
    report["scale"] = max(float(np.max(np.abs(b))) for b in reference)
    hlo = ad.lower(gradient, backend="jax", in_shardings=(None, None, None, NamedSharding(mesh, P("data"))))(
        *args).compile().as_text()
    report["all_reduce"] = "all-reduce" in hlo
    print(json.dumps(report))
""")


def test_sharding_over_four_devices_in_a_subprocess():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(root, "src"), root, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", SHARDING_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    print(report)
    assert report["devices"] == 4
    assert report["per_point_error"] <= 1e-14
    assert report["per_point_shards"] == [[[2, 2], i] for i in range(4)]
    assert report["point_shards"] == [[[25_000, 3], i] for i in range(4)]
    assert report["one_device_vs_numpy"] <= 1e-9 * report["scale"]
    assert report["split_vs_one_device"] <= 1e-9 * report["scale"]
    assert report["split_numpy_input"] == 0.0
    assert report["all_reduce"]  # the partial gradients are added across devices by XLA


def test_while_loop_gradient_recomputes_from_snapshots(monkeypatch):
    """70 steps with 4 snapshots: each step is recomputed from the snapshot before it (stride 18)."""
    from adarray.backends.jax import control

    monkeypatch.setattr(control, "MIN_SNAPSHOTS", 4)
    monkeypatch.setattr(control, "MAX_SNAPSHOTS", 4)

    def f(x):
        def body(state):
            value, count = state
            return 0.9 * value + 0.3 * anp.sin(value) * x, count + 1
        value, _ = ad.while_loop(lambda s: s[1] < 70, body, (x, 0))
        return anp.sum(value ** 2)

    x = np.array([0.4, -0.7, 1.1])
    np.testing.assert_allclose(np.asarray(ad.jit(ad.grad(f), backend="jax")(x)), ad.grad(f)(x), rtol=1e-10)


def test_bench_backend_jax_runs_our_xla_programs_beside_jax():
    from benchmarks.adbench import run

    args = run.build_parser().parse_args(["--backend", "jax"])
    assert run._csv_choice(args.backend, ("numpy", "numba", "jax"), "backend") == ["jax"]
    assert run.tool_label("jax") == "adarray-jax"
    assert run._tool_module("adarray-jax").NAME == "adarray-jax" and run.available("adarray-jax")
