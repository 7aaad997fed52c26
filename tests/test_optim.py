"""adarray.optim: Gauss-Newton and Levenberg-Marquardt against SciPy, SciPy interop, bad input, and the showcases
(bundle adjustment scenes built from ADBench ba1..ba5, hand tracking, a sum-of-exponentials fit)."""
from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.optimize
import scipy.stats
from benchmarks import solver_problems

import adarray as ad
import adarray.numpy as anp
from adarray import optim
from test_adbench import needs_data


def _read_only(tree):
    def freeze(leaf):
        array = np.array(leaf, dtype=float)
        array.flags.writeable = False
        return array
    return ad.tree_util.tree_map(freeze, tree)


def _scipy_cost(problem, method="lm"):
    """SciPy's MINPACK (or trf) from the same start with our exact Jacobian: the reference cost."""
    return optim.least_squares(problem.residual, problem.x0, problem.args, method=method).cost


# --- the curve fit ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("solver", [optim.levenberg_marquardt, optim.gauss_newton])
def test_exponentials_fit_matches_scipy_with_confidence_intervals(solver):
    problem = solver_problems.exponentials()
    start = _read_only(problem.x0)
    result = solver(problem.residual, start, problem.args)
    assert result.success, result.message
    reference = _scipy_cost(problem)
    assert abs(result.cost - reference) <= 1e-10 * reference
    assert set(result.x) == {"amplitude", "rate"} and result.x["rate"].shape == (3,)
    np.testing.assert_array_equal(start["rate"], problem.x0["rate"])  # x0 untouched (and read-only)
    # 99.9% intervals from s^2 (J^T J)^-1 cover the parameters that made the data.
    sigma = np.sqrt(np.diag(result.covariance))
    estimate = np.concatenate([result.x["amplitude"], result.x["rate"]])
    truth = np.concatenate([problem.truth["amplitude"], problem.truth["rate"]])
    t = scipy.stats.t.ppf(0.9995, problem.args[0].size - truth.size)
    assert np.all(np.abs(estimate - truth) <= t * sigma), (estimate, truth, sigma)
    assert np.all(sigma < 0.2)
    # The history: the starting cost, then one cost per iteration, never increasing.
    assert len(result.history) == result.iterations + 1
    start_residual = np.asarray(problem.residual(problem.x0, *problem.args))
    assert result.history[0] == pytest.approx(0.5 * np.sum(start_residual ** 2))
    assert np.all(np.diff(result.history) <= 0) and result.history[-1] == result.cost


def test_result_cost_is_half_the_sum_of_squares_and_the_jacobian_is_exact():
    problem = solver_problems.exponentials(points=50)
    result = optim.levenberg_marquardt(problem.residual, problem.x0, problem.args)
    r = np.asarray(problem.residual(result.x, *problem.args))
    assert result.cost == pytest.approx(0.5 * r @ r, rel=1e-12)
    np.testing.assert_allclose(result.residual, r, rtol=1e-12, atol=1e-15)
    flat = ad.jacfwd(lambda a, k: problem.residual({"amplitude": a, "rate": k}, *problem.args), argnums=(0, 1))(
        result.x["amplitude"], result.x["rate"])
    np.testing.assert_allclose(np.asarray(result.jacobian), np.concatenate(flat, axis=1), rtol=1e-12, atol=1e-14)
    assert result.num_passes == 6 and result.function_evaluations >= 0 and result.jacobian_evaluations >= 1


# --- showcases: bundle adjustment and hand tracking -----------------------------------------------------------


@needs_data
@pytest.mark.parametrize("instance", solver_problems.BA_INSTANCES)
def test_bundle_adjustment_scene_reaches_scipys_cost(instance):
    problem = solver_problems.bundle_adjustment(instance, observations=150)
    result = optim.levenberg_marquardt(problem.residual, problem.x0, problem.args)
    assert result.success, result.message
    assert result.num_passes <= 15 + 1
    assert abs(result.cost - _scipy_cost(problem)) <= 1e-6 * result.cost
    # Down to the noise: 0.5 sum of 2p squared errors of standard deviation `noise`, at most.
    assert result.cost < 0.5 * 2 * problem.notes["observations"] * problem.notes["noise"] ** 2
    assert not any(np.isnan(leaf).any() for leaf in ad.tree_util.tree_leaves(result.x))


@needs_data
def test_bundle_adjustment_gauge_freedom_makes_gauss_newton_refuse():
    """A BA scene is fixed only up to a similarity (7 free directions): J^T J is singular."""
    problem = solver_problems.bundle_adjustment(observations=150)
    with pytest.raises(optim.SingularJacobianError, match="rank") as error:
        optim.gauss_newton(problem.residual, problem.x0, problem.args)
    assert isinstance(error.value, ad.Error)
    with pytest.raises(optim.SingularJacobianError, match="pivot"):
        optim.gauss_newton(problem.residual, problem.x0, problem.args, jacobian="sparse")


@needs_data
@pytest.mark.parametrize("path", ["simple_small/hand1_t26_c100.txt", "complicated_small/hand1_t26_c100.txt"])
def test_hand_tracking_recovers_the_pose(path):
    problem = solver_problems.hand_tracking(path)
    result = optim.levenberg_marquardt(problem.residual, problem.x0, problem.args)
    assert result.success, result.message
    assert abs(result.cost - _scipy_cost(problem)) <= 1e-6 * result.cost
    # Down to the noise (0.5 sum of 3N squared errors of standard deviation 1e-3, with a margin); the global
    # rotation and translation come back (some finger angles are barely seen by the points; with free barycentric
    # coordinates the points may also slide along their triangles).
    points = problem.args[0]
    assert result.cost < 1.5 * 0.5 * points.size * 1e-3 ** 2
    theta = result.x["theta"] if isinstance(result.x, dict) else result.x
    truth = problem.truth["theta"] if isinstance(problem.truth, dict) else problem.truth
    assert np.max(np.abs(theta[:3] - truth[:3])) < 0.05 and np.max(np.abs(theta[3:6] - truth[3:6])) < 0.005
    assert result.num_passes <= 26 + 2


# --- linear algebra choices -------------------------------------------------------------------------------------


def _chain(x, offsets):
    """A sparse, well-posed problem: r_i = x_i - x_(i+1)^2 / 2 - offset_i, and r_n = x_n - 1."""
    return anp.concatenate([x[:-1] - 0.5 * x[1:] ** 2 - offsets, x[-1:] - 1.0])


@pytest.mark.parametrize("linear_solver", ["direct", "lsqr", "cg"])
def test_sparse_linear_solvers_agree(linear_solver):
    offsets = np.linspace(0.0, 0.2, 599)
    dense = optim.levenberg_marquardt(_chain, np.zeros(600), (offsets,), jacobian="dense")
    sparse = optim.levenberg_marquardt(_chain, np.zeros(600), (offsets,), jacobian="sparse",
                                       linear_solver=linear_solver)
    assert sparse.success and dense.success
    assert sparse.cost <= 1e-15 and dense.cost <= 1e-15
    np.testing.assert_allclose(sparse.x, dense.x, rtol=1e-7, atol=1e-9)
    assert sparse.num_passes == 2 and isinstance(dense.jacobian, np.ndarray)


def test_auto_keeps_large_sparse_jacobians_sparse():
    offsets = np.linspace(0.0, 0.2, 2999)
    result = optim.gauss_newton(_chain, np.zeros(3000), (offsets,))
    assert result.success and result.cost <= 1e-15
    assert ad.tree_util.tree_leaves(result.x)[0].shape == (3000,)
    assert hasattr(result.jacobian, "tocsr")


# --- bad input ---------------------------------------------------------------------------------------------------


def test_nan_at_the_start_is_an_error():
    with pytest.raises(optim.NonFiniteResidualError, match="not finite at x0") as error:
        optim.levenberg_marquardt(lambda x: anp.log(x) - 1.0, np.array([-1.0, 2.0]))
    assert isinstance(error.value, ad.Error) and "flat index 0" in str(error.value)
    with pytest.raises(optim.NonFiniteResidualError):
        optim.gauss_newton(lambda x: anp.sqrt(x) - 1.0, np.array([0.0]))  # finite value, infinite derivative


def test_nan_during_the_solve_is_rejected_and_reported():
    def residual(x):  # NaN beyond x = 1; the undamped first step lands at x = 4
        return 1.0 / anp.sqrt(1.0 - x) - 3.0

    result = optim.levenberg_marquardt(residual, np.array([0.0]), damping=1e-12)
    assert result.success and np.all(np.isfinite(result.x))
    assert result.x[0] == pytest.approx(8.0 / 9.0)
    assert "non-finite residual and were rejected" in result.message
    assert all(np.isfinite(result.history))
    newton = optim.gauss_newton(residual, np.array([0.0]))
    assert newton.x[0] == pytest.approx(8.0 / 9.0)


def test_singular_normal_equations():
    def residual(x):  # depends on x0 + x1 only
        return anp.stack([x[0] + x[1] - 1.0, 2.0 * (x[0] + x[1]) - 2.5, x[2] - 3.0])

    with pytest.raises(optim.SingularJacobianError, match="numerical rank 2"):
        optim.gauss_newton(residual, np.zeros(3))
    with pytest.raises(optim.SingularJacobianError, match="pivot"):
        optim.gauss_newton(residual, np.zeros(3), jacobian="sparse")
    with pytest.raises(optim.SingularJacobianError, match="structural rank 1"):
        optim.gauss_newton(lambda x: anp.stack([x[0] ** 2 - 1.0, x[0] - 1.0]), np.zeros(2), jacobian="sparse")
    damped = optim.levenberg_marquardt(residual, np.zeros(3))  # the damping makes every step unique
    assert damped.success and damped.x[0] + damped.x[1] == pytest.approx(1.2) and damped.x[2] == pytest.approx(3.0)


def test_mismatched_shapes_and_bad_options():
    with pytest.raises(ad.ShapeError):
        optim.levenberg_marquardt(lambda x, y: x[:, None] * np.ones(3) - y, np.ones(2), (np.ones((3, 2)),))
    with pytest.raises(ad.ShapeError, match="sparsity pattern has shape"):
        optim.levenberg_marquardt(lambda x: x - 1.0, np.ones(3), sparsity=np.eye(2, dtype=bool))
    with pytest.raises(ad.ArgumentError, match="numbers"):
        optim.levenberg_marquardt(lambda x: x, {"a": "text"})
    with pytest.raises(ad.ArgumentError, match="no parameters"):
        optim.gauss_newton(lambda x: x, np.zeros(0))
    with pytest.raises(ad.ArgumentError, match="linear_solver"):
        optim.levenberg_marquardt(lambda x: x, np.ones(2), linear_solver="magic")
    with pytest.raises(ad.ArgumentError, match="gtol"):
        optim.levenberg_marquardt(lambda x: x, np.ones(2), gtol=-1.0)
    with pytest.raises(ad.ArgumentError, match="jacobian"):
        optim.gauss_newton(lambda x: x, np.ones(2), jacobian="banded")


def test_a_sparsity_pattern_missing_a_nonzero_is_caught_by_the_probe():
    offsets = np.zeros(9)
    diagonal = np.eye(10, dtype=bool)
    with pytest.raises(ad.ArgumentError, match="misses non-zeros"):
        optim.levenberg_marquardt(_chain, np.zeros(10), (offsets,), sparsity=diagonal, check=True)


def test_iteration_cap_and_callback():
    problem = solver_problems.exponentials()
    seen = []
    result = optim.levenberg_marquardt(problem.residual, problem.x0, problem.args, max_iterations=2,
                                       callback=lambda k, x, cost: seen.append((k, cost)))
    assert not result.success and "max_iterations" in result.message and result.iterations == 2
    assert [k for k, _ in seen] == [1, 2] and seen[-1][1] == result.cost


def test_progress_bar_shows_the_cost(capfd):
    problem = solver_problems.exponentials()
    optim.levenberg_marquardt(problem.residual, problem.x0, problem.args, progress=True)
    assert "cost=" in capfd.readouterr().err
    optim.levenberg_marquardt(problem.residual, problem.x0, problem.args, progress=False)
    assert capfd.readouterr().err == ""


def test_progress_without_tqdm_prints_lines(capfd, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    problem = solver_problems.exponentials()
    optim.gauss_newton(problem.residual, problem.x0, problem.args, progress=True)
    assert "gauss_newton: [1/100] cost=" in capfd.readouterr().err


# --- SciPy interop --------------------------------------------------------------------------------------------


def rosenbrock(p, scale):
    return (1 - p["a"]) ** 2 + scale * anp.sum((p["b"] - p["a"] ** 2) ** 2)


@pytest.mark.parametrize("method", ["BFGS", "L-BFGS-B", "Newton-CG", "trust-ncg", "trust-krylov"])
def test_minimize_with_exact_derivatives_and_pytrees(method):
    start = _read_only({"a": 0.0, "b": np.zeros(2)})
    result = optim.minimize(rosenbrock, start, args=(10.0,), method=method, options={"maxiter": 500})
    assert isinstance(result, scipy.optimize.OptimizeResult) and result.success, result.message
    assert result.x["b"].shape == (2,)
    np.testing.assert_allclose(result.x["a"], 1.0, atol=1e-4)
    np.testing.assert_allclose(result.x["b"], [1.0, 1.0], atol=1e-4)
    assert result.x_flat.shape == (3,)


def test_minimize_hessian_vector_products_are_exact():
    calls = []
    optim.minimize(rosenbrock, {"a": 0.5, "b": np.array([0.2, 0.3])}, args=(10.0,), method="trust-krylov",
                   callback=lambda x: calls.append(x))
    assert calls and isinstance(calls[0], dict)
    with pytest.raises(ad.ArgumentError, match="method"):
        optim.minimize(rosenbrock, {"a": 0.0, "b": np.zeros(2)}, args=(10.0,), method="Nelder-Mead")


@pytest.mark.parametrize("jac, method, options", [
    ("exact", "trf", {}), ("exact", "trf", {"tr_solver": "exact"}), ("exact", "lm", {}), ("exact", "dogbox", {}),
    ("operator", "trf", {}), ("2-point", "trf", {}), ("2-point", "lm", {}),
])
def test_scipy_least_squares_with_our_jacobians(jac, method, options):
    problem = solver_problems.exponentials(points=80)
    result = optim.least_squares(problem.residual, problem.x0, problem.args, jac=jac, method=method, **options)
    ours = optim.levenberg_marquardt(problem.residual, problem.x0, problem.args)
    assert result.success
    assert result.cost == pytest.approx(ours.cost, rel=1e-6)
    assert set(result.x) == {"amplitude", "rate"}


def test_scipy_least_squares_bad_jac():
    problem = solver_problems.exponentials(points=20)
    with pytest.raises(ad.ArgumentError, match="jac must be"):
        optim.least_squares(problem.residual, problem.x0, problem.args, jac="symbolic")
    with pytest.raises(ad.ArgumentError, match="operator"):
        optim.least_squares(problem.residual, problem.x0, problem.args, jac="operator", method="lm")
