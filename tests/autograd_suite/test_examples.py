"""autograd's examples run on adarray: each example's functions (from the pinned sdist, renamed by
autograd_source.py) on a small problem of our own, for a few iterations of an optimizer.

Every test first checks the gradient the example computes against central differences of the objective at
the start (along random directions: adarray.testing.numerical_jvp), then asserts that an optimizer lowers the
objective. The problems, data and objectives here are ours; the models (covariances, variational bound, ICA
likelihood, fluid solver, neural ODE, recurrent nets) are the examples'. Random draws inside a stochastic
objective are replayed (its RandomState is reset before each call) so that the differences see one function.
"""
import numpy as onp
import pytest
from scipy.integrate import odeint as scipy_odeint
from scipy.optimize import minimize

import autograd_compat.numpy as np
from adarray.testing import numerical_jvp
from autograd_compat import grad, value_and_grad
from autograd_compat.misc import flatten
from autograd_compat.misc.optimizers import adam

from . import autograd_source

try:
    EXAMPLES = autograd_source.prepare() / "examples"
except autograd_source.Unavailable as error:
    pytest.skip(f"autograd {autograd_source.VERSION}'s examples not run: {error}", allow_module_level=True)


def assert_gradient_matches_differences(objective, gradient, params, directions=3, rtol=1e-5, atol=1e-8):
    """<gradient(params), v> against the central difference of objective along v, for random directions v
    (params may be any pytree of arrays)."""
    rng = onp.random.default_rng(1)
    flat_params, unflatten = flatten(params)
    flat_gradient = onp.asarray(flatten(gradient(params))[0])
    assert onp.all(onp.isfinite(flat_gradient)), "the gradient is not finite"
    for _ in range(directions):
        direction = rng.standard_normal(onp.shape(flat_params))
        (numeric,) = numerical_jvp(lambda p: [objective(unflatten(p))], [flat_params], [direction], eps=1e-6)
        analytic = float(onp.dot(flat_gradient, direction))
        assert abs(analytic - numeric) <= atol + rtol * abs(numeric), (analytic, numeric)


def _captured(function, name):
    """The value a closure of `function` holds under `name`."""
    return function.__closure__[function.__code__.co_freevars.index(name)].cell_contents


# --- Gaussian process regression (gaussian_process.py) -------------------------------------------

def test_gaussian_process_marginal_likelihood():
    from autograd_upstream.examples.gaussian_process import make_gp_funs, rbf_covariance

    count, predict, log_evidence = make_gp_funs(rbf_covariance, num_cov_params=2)  # one input dimension
    rng = onp.random.default_rng(3)
    inputs = onp.sort(rng.uniform(-2.0, 2.0, size=(10, 1)), axis=0)
    targets = onp.sin(2.0 * inputs[:, 0]) + 0.05 * rng.standard_normal(10)

    def negative_log_evidence(params):
        return -log_evidence(params, inputs, targets)

    start = onp.array([0.1, -1.0, 0.2, -0.3])[:count]
    assert_gradient_matches_differences(negative_log_evidence, grad(negative_log_evidence), start)
    fitted = minimize(value_and_grad(negative_log_evidence), start, jac=True, method="CG", options={"maxiter": 10})
    assert fitted.fun < negative_log_evidence(start) - 1e-3
    mean, covariance = predict(fitted.x, inputs, targets, onp.linspace(-1.0, 1.0, 4)[:, None])
    assert mean.shape == (4,) and covariance.shape == (4, 4)


# --- black-box variational inference (black_box_svi.py) -------------------------------------------

def test_black_box_variational_inference():
    from autograd_upstream.examples.black_box_svi import black_box_variational_inference

    centre, precision = onp.array([1.0, -0.5]), onp.array([[2.0, 0.6], [0.6, 1.0]])

    def log_target(samples, t):  # a correlated Gaussian, unnormalised
        offsets = samples - centre
        return -0.5 * np.sum(np.dot(offsets, precision) * offsets, axis=1)

    objective, gradient, _ = black_box_variational_inference(log_target, 2, num_samples=100)
    random_state = _captured(objective, "rs")
    first_draw = random_state.get_state()

    def replayed(function):
        def call(params, t=0):
            random_state.set_state(first_draw)
            return function(params, t)
        return call

    start = onp.array([0.0, 0.0, -2.0, -2.0])  # means, then log standard deviations
    assert_gradient_matches_differences(replayed(objective), replayed(gradient), start)
    trained = adam(gradient, start, step_size=0.1, num_iters=30)
    assert replayed(objective)(trained) < replayed(objective)(start) - 1.0


# --- independent component analysis (ica.py) ------------------------------------------------------

def test_independent_component_analysis():
    from autograd_upstream.examples.ica import make_ica_funs

    observed, latent, points = 8, 2, 25
    weight_count, sample, log_likelihood, to_weight_matrix = make_ica_funs(observed, latent)
    mixing = onp.stack([onp.cos(onp.linspace(0.0, 3.0, observed)), onp.linspace(-1.0, 1.0, observed)], axis=1)
    _, data = sample(mixing, points, 0.5, onp.random.RandomState(2))
    sizes = [weight_count, latent * points, 1]
    bounds = onp.cumsum([0] + sizes)

    def negative_log_likelihood(params):
        weights, sources, log_noise = (params[bounds[i]:bounds[i + 1]] for i in range(3))
        sources = np.reshape(sources, (latent, points))
        return -log_likelihood(to_weight_matrix(weights), sources, np.exp(log_noise[0]), data) / points

    start = 0.5 * onp.random.default_rng(4).standard_normal(bounds[-1])
    assert_gradient_matches_differences(negative_log_likelihood, grad(negative_log_likelihood), start)
    fitted = minimize(value_and_grad(negative_log_likelihood), start, jac=True, method="CG",
                      options={"maxiter": 10})
    assert fitted.fun < negative_log_likelihood(start) - 1e-2


# --- fluid simulation (fluidsim/fluidsim.py) ------------------------------------------------------

def test_fluid_simulation_initial_velocities():
    from autograd_upstream.examples.fluidsim import simulate

    size, steps = 10, 3
    axis = onp.linspace(0.0, 1.0, size)
    smoke = onp.exp(-((axis[:, None] - 0.5) ** 2 + (axis[None, :] - 0.3) ** 2) / 0.04)
    wanted = onp.exp(-((axis[:, None] - 0.5) ** 2 + (axis[None, :] - 0.6) ** 2) / 0.04)

    def mismatch(velocities):  # how far the smoke ends from where we want it
        vx = np.reshape(velocities[:size * size], (size, size))
        vy = np.reshape(velocities[size * size:], (size, size))
        return np.sum((simulate(vx, vy, smoke, steps) - wanted) ** 2)

    start = 0.1 * onp.random.default_rng(5).standard_normal(2 * size * size)  # off the grid: away from kinks
    assert_gradient_matches_differences(mismatch, grad(mismatch), start)
    fitted = minimize(value_and_grad(mismatch), start, jac=True, method="CG", options={"maxiter": 3})
    assert fitted.fun < mismatch(start) * 0.99


# --- neural ODE (ode_net.py) --------------------------------------------------------------------

def test_ode_net_learns_the_dynamics():
    from autograd_upstream.examples.ode_net import L1_loss, func, init_nn_params, ode_pred

    from autograd_compat.scipy.integrate import odeint

    times = onp.linspace(0.0, 0.8, 6)
    start_state = onp.array([1.5, 0.5])
    coupling = onp.array([[-0.2, 1.5], [-1.5, -0.2]])
    observed = odeint(func, start_state, times, args=(coupling,))
    trusted = scipy_odeint(func, start_state, times, args=(coupling,), rtol=1e-10, atol=1e-10)
    onp.testing.assert_allclose(observed, trusted, rtol=1e-5, atol=1e-7)

    def loss(params, iteration=0):
        return L1_loss(ode_pred(params, start_state, times), observed)

    start = init_nn_params(0.1, layer_sizes=[2, 10, 2], rs=onp.random.RandomState(6))
    assert_gradient_matches_differences(loss, grad(loss), start, rtol=1e-4)
    trained = adam(grad(loss), start, num_iters=15, step_size=0.01)
    assert loss(trained) < loss(start) - 1e-2


# --- fixed points (fixed_points.py) --------------------------------------------------------------

def test_fixed_point_square_root_and_its_derivatives(capsys):  # no optimizer in this example
    from autograd_upstream.examples import fixed_points  # prints as it runs, like the script

    assert "1.41" in capsys.readouterr().out
    # The example stops at tol=1e-4 with a slow contraction (x - 0.05 (x^2 - a), rate about 0.86), and
    # adarray's rule stops when a step moves x by at most tol (1 + |x|): the solution is good to about
    # tol (1 + |x|) q / (1 - q) = 1.5e-3.
    onp.testing.assert_allclose(fixed_points.sqrt(2.0), onp.sqrt(2.0), rtol=3e-3)
    onp.testing.assert_allclose(grad(fixed_points.sqrt)(2.0), 0.5 / onp.sqrt(2.0), rtol=3e-3)
    onp.testing.assert_allclose(grad(grad(fixed_points.sqrt))(2.0), -0.25 * 2.0 ** -1.5, rtol=1e-2)
    # Here the exact derivatives are the oracle: central differences of a loop stopped at tol=1e-4
    # would measure where it stopped (the stopping point jumps by up to about 1e-3 with a).


# --- character RNN and LSTM (rnn.py, lstm.py) ----------------------------------------------------

@pytest.mark.parametrize("model", ["rnn", "lstm"])
def test_character_model_on_its_own_source(model):
    from autograd_upstream.examples.rnn import build_dataset

    if model == "rnn":
        from autograd_upstream.examples.rnn import create_rnn_params as create_params
        from autograd_upstream.examples.rnn import rnn_log_likelihood as log_likelihood
    else:
        from autograd_upstream.examples.lstm import init_lstm_params as create_params
        from autograd_upstream.examples.lstm import lstm_log_likelihood as log_likelihood

    text = build_dataset(str(EXAMPLES / f"{model}.py"), sequence_length=8, alphabet_size=128, max_lines=6)
    start = create_params(input_size=128, output_size=128, state_size=6, param_scale=0.01,
                          rs=onp.random.RandomState(7))

    def negative_log_likelihood(params, iteration=0):
        return -log_likelihood(params, text, text)

    assert_gradient_matches_differences(negative_log_likelihood, grad(negative_log_likelihood), start)
    trained = adam(grad(negative_log_likelihood), start, step_size=0.1, num_iters=10)
    assert negative_log_likelihood(trained) < negative_log_likelihood(start) - 0.1
