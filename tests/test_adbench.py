"""ADBench problems (benchmarks/adbench): readers, adarray's objectives and derivatives against finite differences
and against the independent NumPy formulation, ADBench's own golden values, the output layouts, the protocol."""
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from benchmarks.adbench import data as adbench_data
from benchmarks.adbench import harness, reference, tool_adarray
from benchmarks.adbench.data import BAData, FormatError, GMMData, HandData, LSTMData

from adarray.testing import numerical_jacobian

ADBENCH_TOLERANCE = 1e-8      # ADBench's JacobianCheck default, for our values against the reference
DIFFERENCE_TOLERANCE = 1e-6   # derivatives against central differences (step 1e-6, float64)

try:
    ROOT = adbench_data.data_root()  # the instances shipped in benchmarks/adbench/instances, unless $ADBENCH_DATA
except FileNotFoundError:
    ROOT = None
needs_data = pytest.mark.skipif(ROOT is None, reason="$ADBENCH_DATA names no ADBench data folder")


# --- tiny synthetic instances (no data files needed) --------------------------------------------------------------


def synthetic_gmm(seed=0, n=30, d=3, k=4):
    rng = np.random.default_rng(seed)
    return GMMData(rng.normal(size=k), rng.normal(size=(k, d)), 0.3 * rng.normal(size=(k, d * (d + 1) // 2)),
                   rng.normal(size=(n, d)), gamma=1.3, m=2)


def synthetic_ba(seed=0, n=3, m=4, p=7):
    rng = np.random.default_rng(seed)
    cams = np.concatenate([0.3 * rng.normal(size=(n, 3)), 0.5 * rng.normal(size=(n, 3)),
                           rng.uniform(400, 600, size=(n, 1)), rng.normal(size=(n, 2)),
                           1e-2 * rng.normal(size=(n, 2))], axis=1)
    cams[0, :3] = 0.0  # exactly no rotation: the Y + r x Y branch
    points = rng.normal(size=(m, 3)) + np.array([0.0, 0.0, 5.0])
    obs = np.stack([rng.integers(0, n, p), rng.integers(0, m, p)], axis=1)
    obs[:n, 0] = np.arange(n)  # every camera observed
    return BAData(cams, points, rng.uniform(0.5, 1.5, size=p), obs, rng.normal(size=(p, 2)))


def synthetic_lstm(seed=0, layers=2, bits=3, chars=6):
    rng = np.random.default_rng(seed)
    return LSTMData(rng.normal(size=(2 * layers, 4 * bits)), rng.normal(size=(3, bits)),
                    rng.normal(size=(2 * layers, bits)), (rng.random((chars, bits)) < 0.5).astype(float))


def hand_instance(complicated, seed=0, count=5, small_rotation=False):
    rng = np.random.default_rng(seed)
    model = adbench_data.read_hand_model(ROOT / "hand" / "model")
    theta = 0.2 * rng.normal(size=26)
    if small_rotation:
        theta[:3] = 3e-6  # norm below 1e-4: the global rotation is the identity
    limit = len(model.triangles) if complicated else len(model.base_positions)
    us = rng.uniform(0, 0.5, size=(count, 2)) if complicated else None
    return HandData(model, rng.integers(0, limit, count), rng.normal(scale=0.1, size=(count, 3)), theta, us)


def full_jacobian_by_differences(problem, data, step=1e-6):
    """Central differences of the NumPy reference along every parameter: (outputs, parameters)."""
    shapes = [np.shape(p) for p in data.params]
    ends = np.cumsum([int(np.prod(shape)) for shape in shapes])

    def objective(flat):
        parts = np.split(flat, ends[:-1])
        return reference.OBJECTIVES[problem](data.with_params(tuple(q.reshape(s) for q, s in zip(parts, shapes))))

    return numerical_jacobian(objective, np.concatenate([np.ravel(p) for p in data.params]), step)


def adarray_outputs(problem, data):
    task = tool_adarray.prepare(problem, data)
    return task.objective_output(task.objective()), task.derivative_output(task.derivative())


# --- adarray against the reference and finite differences ---------------------------------------------------------


def test_gmm_value_and_gradient():
    data = synthetic_gmm()
    value, gradient = adarray_outputs("gmm", data)
    assert reference.relative_error(value, reference.gmm(data)) < ADBENCH_TOLERANCE
    numerical = full_jacobian_by_differences("gmm", data)[0]
    assert gradient.shape == numerical.shape == (4 * (1 + 3 + 6),)
    assert reference.relative_error(gradient, numerical) < DIFFERENCE_TOLERANCE


def test_ba_values_and_sparse_jacobian():
    data = synthetic_ba()
    value, jacobian = adarray_outputs("ba", data)
    assert reference.relative_error(value, reference.ba(data)) < ADBENCH_TOLERANCE
    n, m, p = 3, 4, 7
    assert jacobian.shape == (3 * p, 11 * n + 3 * m + p) and jacobian.nnz == 30 * p + p
    numerical = full_jacobian_by_differences("ba", data)
    assert reference.relative_error(jacobian.toarray(), numerical) < DIFFERENCE_TOLERANCE
    assert np.all(numerical[jacobian.toarray() == 0] == 0)  # the CSR pattern holds every nonzero


@pytest.mark.parametrize("complicated", [False, True], ids=["simple", "complicated"])
@pytest.mark.parametrize("small_rotation", [False, True], ids=["rotated", "identity-rotation"])
@needs_data
def test_hand_residuals_and_jacobian(complicated, small_rotation):
    problem = "hand-complicated" if complicated else "hand-simple"
    data = hand_instance(complicated, small_rotation=small_rotation)
    value, jacobian = adarray_outputs(problem, data)
    assert reference.relative_error(value, reference.hand(data)) < ADBENCH_TOLERANCE
    numerical = full_jacobian_by_differences(problem, data)
    if complicated:  # compress the block-diagonal u part: row 3i + j keeps the columns of u_i
        count = len(data.points)
        u_part = numerical[:, :2 * count].reshape(count, 3, count, 2)[np.arange(count), :, np.arange(count), :]
        numerical = np.concatenate([u_part.reshape(3 * count, 2), numerical[:, 2 * count:]], axis=1)
    assert jacobian.shape == numerical.shape == (15, 28 if complicated else 26)
    assert reference.relative_error(jacobian, numerical) < DIFFERENCE_TOLERANCE


def test_lstm_value_and_gradient():
    data = synthetic_lstm()
    value, gradient = adarray_outputs("lstm", data)
    assert reference.relative_error(value, reference.lstm(data)) < ADBENCH_TOLERANCE
    numerical = full_jacobian_by_differences("lstm", data)[0]
    assert gradient.shape == numerical.shape == (8 * 2 * 3 + 3 * 3,)
    assert reference.relative_error(gradient, numerical) < DIFFERENCE_TOLERANCE


def test_a_wrong_derivative_fails_the_checks():
    data = synthetic_gmm()
    _, gradient = adarray_outputs("gmm", data)
    wrong = gradient.copy()
    wrong[3] *= 1.001
    assert harness.check_derivative_by_differences("gmm", data, gradient) < DIFFERENCE_TOLERANCE
    direction = tuple(np.zeros(np.shape(p)) for p in data.params)
    direction[0][3] = 1.0
    approx = reference.central_difference("gmm", data, direction)
    assert reference.relative_error(reference.directional_derivative("gmm", data, wrong, direction), approx) > 1e-5
    assert harness.compare_derivatives(wrong, gradient) > ADBENCH_TOLERANCE


# --- ADBench's golden values (microsoft/ADBench test/python/modules/common) ---------------------------------------


@needs_data
def test_ba_test_file_matches_adbench_golden_values():
    data = adbench_data.read_ba(ROOT / "ba" / "test.txt")
    value, jacobian = adarray_outputs("ba", data)
    expected_reprojection = np.tile([-2.69048849235189402e-01, 2.59944792677901881e-01], 10)
    assert reference.relative_error(value[:20], expected_reprojection) < ADBENCH_TOLERANCE
    assert reference.relative_error(value[20:], np.full(10, 8.26092651515999976e-01)) < ADBENCH_TOLERANCE
    assert jacobian.shape == (30, 62) and len(jacobian.indptr) == 31 and jacobian.nnz == 310
    first_row = [2.28877202208246757e+02, 6.34574811495545418e+02, -7.82222866259340549e+02,
                 2.42892615607159668e+00, -1.17828079628011313e+01, 2.54169312487743460e+00,
                 -1.03657084958518086e+00, 4.17022e-01, 0.0, -3.50739521096005205e+02, -9.12107773668008576e+02,
                 -2.42892615607159668e+00, 1.17828079628011313e+01, -2.54169312487743460e+00,
                 -6.45167039712987389e-01]
    assert reference.relative_error(jacobian.data[:15], first_row) < ADBENCH_TOLERANCE
    assert reference.relative_error(jacobian.data[-10:], np.full(10, -8.34044e-01)) < ADBENCH_TOLERANCE


@needs_data
def test_hand_test_files_match_adbench_golden_values():
    simple = adbench_data.read_hand(ROOT / "hand" / "test.txt")
    complicated = adbench_data.read_hand(ROOT / "hand" / "hand_complicated.txt")
    assert not simple.complicated and complicated.complicated
    value, jacobian = adarray_outputs("hand-simple", simple)
    expected = [1.65193147941611551e-01, -1.74542769272742593e-01, 1.54751161622253441e-01,
                -1.25651749731793605e-01, -4.25102935355075040e-02, -1.30665781132340175e-01]
    assert reference.relative_error(value, expected) < ADBENCH_TOLERANCE
    row = np.zeros(26)
    row[[0, 1, 2, 3]] = [-1.955129593412827452e-02, 1.184213197364370439e-02, -1.081400434503667143e-02, -1]
    row[22:] = [-2.215372991798553182e-02, 2.980232943547148072e-02, -8.897183847208387994e-03,
                -2.248878879166987636e-03]
    assert reference.relative_error(jacobian[0], row) < ADBENCH_TOLERANCE
    value, jacobian = adarray_outputs("hand-complicated", complicated)
    expected = [0.15618766169646370, -0.14930052600332222, 0.17223808982645483, -0.098877045184959655,
                -0.016123803546210125, -0.19758676846557965]
    assert reference.relative_error(value, expected) < ADBENCH_TOLERANCE
    row = np.zeros(28)
    row[:6] = [3.199947056506058374e-03, 5.941210363247684256e-03, -3.167804141392804862e-02,
               2.512738463135467254e-02, -3.437516924900453630e-02, -1]
    row[24:26] = [-2.673004593049009732e-03, -2.053759644210334219e-04]
    assert reference.relative_error(jacobian[0], row) < ADBENCH_TOLERANCE


@needs_data
def test_lstm_file_matches_adbench_golden_values():
    data = adbench_data.read_lstm(ROOT / "lstm" / "lstm_l2_c1024.txt")
    value, gradient = adarray_outputs("lstm", data)
    assert reference.relative_error(value, [0.66666518]) < ADBENCH_TOLERANCE
    assert reference.relative_error(reference.lstm(data), [0.66666518]) < ADBENCH_TOLERANCE
    head = [3.14387024996101187e-06, 0, 0, 0, 0, 0, 0, -3.67840807336070475e-05, -1.54848612683180522e-04]
    tail = [-5.23602406001136191e-03, -1.79316285235904226e-02, -7.73167106472800580e-03,
            -2.00225690895980656e-02]
    assert gradient.shape == (8 * 2 * 14 + 3 * 14,)
    assert reference.relative_error(gradient[:9], head) < ADBENCH_TOLERANCE
    assert reference.relative_error(gradient[-4:], tail) < ADBENCH_TOLERANCE


# --- readers ------------------------------------------------------------------------------------------------------


@needs_data
def test_readers_give_the_documented_shapes_and_replication():
    gmm = adbench_data.read_gmm(ROOT / "gmm" / "1k" / "gmm_d2_K5.txt")
    assert gmm.x.shape == (1000, 2) and gmm.means.shape == (5, 2) and gmm.icf.shape == (5, 3)
    assert (gmm.gamma, gmm.m) == (1.0, 0) and gmm.size == 5 * (1 + 2 + 3)
    ba = adbench_data.read_ba(ROOT / "ba" / "ba1_n49_m7776_p31843.txt")
    assert ba.cams.shape == (49, 11) and ba.X.shape == (7776, 3) and ba.w.shape == (31843,)
    assert np.all(ba.cams == ba.cams[0]) and np.all(ba.feats == ba.feats[0])
    assert ba.obs[50].tolist() == [50 % 49, 50] and ba.obs[7777].tolist() == [7777 % 49, 1]
    model = adbench_data.read_hand_model(ROOT / "hand" / "model")
    assert model.base_relatives.shape == (22, 4, 4) and model.base_positions.shape == (544, 4)
    assert model.parents[0] == -1 and np.allclose(model.weights.sum(axis=1), 1.0, atol=1e-5)
    lstm = adbench_data.read_lstm(ROOT / "lstm" / "lstm_l2_c1024.txt", max_chars=10)
    assert lstm.main.shape == (4, 56) and lstm.extra.shape == (3, 14) and lstm.sequence.shape == (10, 14)


def test_readers_reject_bad_files_with_clear_errors(tmp_path):
    truncated = tmp_path / "gmm.txt"
    truncated.write_text("2 2 3\n0.1\n0.2\n1 2\n3 4\n1 2 3\n")
    with pytest.raises(FormatError, match=r"gmm.txt: the file ends before the 2 lines of icf"):
        adbench_data.read_gmm(truncated)
    bad = tmp_path / "ba.txt"
    bad.write_text("2 3 4\n1 2 3\n")
    with pytest.raises(FormatError, match="camera"):
        adbench_data.read_ba(bad)
    header = tmp_path / "lstm.txt"
    header.write_text("two 3 4\n")
    with pytest.raises(FormatError, match="l c b"):
        adbench_data.read_lstm(header)
    with pytest.raises(FileNotFoundError, match="no such ADBench input file"):
        adbench_data.read_ba(tmp_path / "missing.txt")
    hand = tmp_path / "hand.txt"
    hand.write_text("2 26\n1 0 0 0\n" + "0\n" * 26)
    with pytest.raises(FormatError, match="expected 29 lines"):
        adbench_data.read_hand(hand)
    with pytest.raises(ValueError, match="unknown size"):
        adbench_data.catalogue(["gmm"], "huge")
    with pytest.raises(ValueError, match="unknown problem"):
        adbench_data.catalogue(["gmx"], "tiny")


def test_the_repository_ships_the_tiny_and_small_instances():
    assert adbench_data.data_root(adbench_data.SHIPPED) == adbench_data.SHIPPED
    for size in ("tiny", "small"):
        for instance in adbench_data.catalogue(adbench_data.PROBLEMS, size):
            assert (adbench_data.SHIPPED / instance.path).is_file(), instance.path
    sizes = sum(path.stat().st_size for path in adbench_data.SHIPPED.rglob("*") if path.is_file())
    assert sizes < 1_000_000, f"benchmarks/adbench/instances holds {sizes} bytes: keep the repository lean"
    complicated = adbench_data.read_hand(adbench_data.SHIPPED / "hand" / "complicated_small" / "hand1_t26_c100.txt")
    assert complicated.complicated and complicated.model.base_positions.shape == (544, 4)  # the model one folder up


def test_missing_instances_say_where_the_full_data_is(monkeypatch, tmp_path):
    monkeypatch.delenv("ADBENCH_DATA", raising=False)
    medium = adbench_data.catalogue(["gmm"], "medium")
    with pytest.raises(FileNotFoundError, match="ships the tiny and small instances only.*ADBENCH_DATA"):
        adbench_data.data_root(needed=medium)
    with pytest.raises(FileNotFoundError, match="ships the tiny and small instances only"):
        medium[0].load(adbench_data.SHIPPED)
    with pytest.raises(FileNotFoundError, match=r"ADBench data not found in .*none \(--data\)"):
        adbench_data.data_root(tmp_path / "none")
    monkeypatch.setenv("ADBENCH_DATA", str(tmp_path))
    (tmp_path / "gmm").mkdir()
    with pytest.raises(FileNotFoundError, match=r"missing in .*: gmm/1k/gmm_d10_K50.txt.*from \$ADBENCH_DATA"):
        adbench_data.data_root(needed=medium)


@pytest.mark.skipif(ROOT is None or ROOT == adbench_data.SHIPPED, reason="the medium set needs ADBench's full data "
                    "($ADBENCH_DATA)")
def test_every_catalogued_instance_exists_in_the_full_data():
    for size in adbench_data.SIZES:
        for instance in adbench_data.catalogue(adbench_data.PROBLEMS, size):
            assert (ROOT / instance.path).is_file(), instance.path


# --- the protocol and the measures --------------------------------------------------------------------------------


def test_relative_error_is_adbenchs_measure():
    assert reference.relative_error([1e-9], [0.0]) == pytest.approx(1e-9)       # absolute below 1
    assert reference.relative_error([1e6], [1e6 + 1]) == pytest.approx(1 / (2e6 + 1))
    with pytest.raises(ValueError, match="cannot compare"):
        reference.relative_error([1.0, 2.0], [1.0])


def test_measure_reports_the_minimum_per_call_of_timed_batches():
    calls = []
    measurement = harness.measure(lambda: calls.append(1), harness.Protocol(min_time=0.002, runs=4, time_limit=1.0))
    assert measurement.samples == 4 and measurement.repeats >= 1
    assert len(calls) == measurement.repeats * 4 + (measurement.repeats - 1)  # doubling 1, 2, ..., repeats
    assert 0 < measurement.best < 0.002
    slow = harness.measure(lambda: sum(range(20000)), harness.Protocol(min_time=0.0, runs=3, time_limit=10))
    assert slow.repeats == 1 and slow.samples == 3


def test_peak_memory_is_not_hidden_by_memory_an_allocator_kept():
    """XLA's buffers come back from memory glibc kept after earlier calls: a 15.7 MB output shows no growth, unless
    freed memory is returned first (as the benchmark does for its memory pass, after all timing)."""
    pytest.importorskip("jax")
    script = textwrap.dedent("""
        import numpy as np, jax, jax.numpy as jnp
        from benchmarks.adbench import harness
        jax.config.update("jax_enable_x64", True)
        outer = jax.jit(lambda x: jnp.outer(x, x) * 2.0)
        x = jax.device_put(np.linspace(0.0, 1.0, 1400))
        call = lambda: outer(x)
        for _ in range(5):
            harness.block(call())
        harness.return_freed_memory()
        print(harness.peak_memory_mb(call))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert float(out.stdout) > 14


def test_peak_memory_sees_a_large_temporary():
    assert harness.peak_memory_mb(lambda: np.ones(20_000_000).sum()) > 100  # 160 MB of float64
    assert harness.peak_memory_mb(lambda: None) < 20


def test_run_task_flags_a_wrong_value():
    data = synthetic_gmm()
    task = tool_adarray.prepare("gmm", data)
    wrong = harness.Task(lambda: task.objective() + 1e-3, task.derivative, task.objective_output,
                         task.derivative_output)
    quick = harness.Protocol(min_time=0.0, runs=1, time_limit=0.0)
    result, _ = harness.run_task("adarray", "gmm", "synthetic", data, wrong, quick)
    assert result.status == "WRONG" and result.error_objective > ADBENCH_TOLERANCE
    result, _ = harness.run_task("adarray", "gmm", "synthetic", data, task, quick)
    assert result.status == "ok" and result.checked_against == "finite differences"
    assert result.objective > 0 and result.derivative > 0 and not math.isnan(result.ratio)
