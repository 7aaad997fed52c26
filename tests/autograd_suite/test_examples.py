"""autograd's examples (vendored in upstream/examples) run on adarray: each example's main computation,
on a smaller problem, for a few iterations of its own optimizer.

Every test checks the gradient the example uses against central differences of the example's own
objective at the starting point (along random directions), then asserts that the example's
optimizer lowers the objective. Sizes are smaller than the examples' so that the suite stays quick;
nothing else about the models changes. Random draws inside stochastic objectives are replayed
(the RandomState is reset) so that finite differences compare the same function.
"""
import pathlib

import numpy as onp
import pytest
from scipy.optimize import minimize

import autograd_compat.numpy as np
from autograd_compat import grad, value_and_grad
from autograd_compat.misc import flatten
from autograd_compat.misc.optimizers import adam

EXAMPLES = pathlib.Path(__file__).resolve().parent / "upstream" / "examples"


def check_gradient_by_differences(objective, gradient, params, directions=3, eps=1e-6, rtol=1e-5, atol=1e-8):
    """<gradient(params), v> against (f(p + eps v) - f(p - eps v)) / 2 eps for random directions v."""
    rng = onp.random.default_rng(0)
    flat, unflatten = flatten(params)
    flat_gradient, _ = flatten(gradient(params))
    assert onp.all(onp.isfinite(flat_gradient)), "the gradient is not finite"
    for _ in range(directions):
        v = rng.standard_normal(onp.shape(flat))
        exact = float(onp.dot(flat_gradient, v))
        numeric = (objective(unflatten(flat + eps * v)) - objective(unflatten(flat - eps * v))) / (2 * eps)
        assert abs(exact - numeric) <= atol + rtol * abs(numeric), (exact, numeric)


def _closure_cell(function, name):
    return function.__closure__[function.__code__.co_freevars.index(name)].cell_contents


# --- Gaussian process regression (gaussian_process.py) -------------------------------------------

def test_gaussian_process_marginal_likelihood():
    from .upstream.examples.gaussian_process import build_toy_dataset, make_gp_funs, rbf_covariance

    D = 1
    num_params, predict, log_marginal_likelihood = make_gp_funs(rbf_covariance, num_cov_params=D + 1)
    X, y = build_toy_dataset(D=D, n_data=12)
    objective = lambda params: -log_marginal_likelihood(params, X, y)  # noqa: E731
    init_params = 0.1 * onp.random.RandomState(0).randn(num_params)
    check_gradient_by_differences(objective, grad(objective), init_params)
    result = minimize(value_and_grad(objective), init_params, jac=True, method="CG", options={"maxiter": 10})
    assert result.fun < objective(init_params) - 1e-3
    mean, cov = predict(result.x, X, y, onp.linspace(-2, 2, 5)[:, None])
    assert mean.shape == (5,) and cov.shape == (5, 5)


# --- black-box variational inference (black_box_svi.py) -------------------------------------------

def test_black_box_variational_inference():
    import autograd_compat.scipy.stats.norm as norm

    from .upstream.examples.black_box_svi import black_box_variational_inference

    def log_density(x, t):  # the example's target, defined in its __main__
        mu, log_sigma = x[:, 0], x[:, 1]
        sigma_density = norm.logpdf(log_sigma, 0, 1.35)
        mu_density = norm.logpdf(mu, 0, np.exp(log_sigma))
        return sigma_density + mu_density

    objective, gradient, unpack_params = black_box_variational_inference(log_density, 2, num_samples=200)
    random_state = _closure_cell(objective, "rs")
    start = random_state.get_state()

    def replayed(function):  # the same samples at every call
        def call(params, t=0):
            random_state.set_state(start)
            return function(params, t)
        return call

    init_params = onp.concatenate([-1 * onp.ones(2), -5 * onp.ones(2)])
    check_gradient_by_differences(replayed(objective), replayed(gradient), init_params)
    trained = adam(gradient, init_params, step_size=0.1, num_iters=40)
    assert replayed(objective)(trained) < replayed(objective)(init_params) - 1.0


# --- independent component analysis (ica.py) ------------------------------------------------------

def test_independent_component_analysis():
    from .upstream.examples.ica import make_ica_funs

    observed_dimension, latent_dimension, n_samples = 12, 2, 30
    num_weights, sample, logprob, unpack_weights = make_ica_funs(observed_dimension, latent_dimension)
    num_latent_params = latent_dimension * n_samples

    def unpack_params(params):
        weights = unpack_weights(params[:num_weights])
        latents = np.reshape(params[num_weights:num_weights + num_latent_params], (latent_dimension, n_samples))
        return weights, latents, np.exp(params[-1])

    rs = onp.random.RandomState(0)
    true_weights = onp.zeros((observed_dimension, latent_dimension))
    for i in range(latent_dimension):
        true_weights[:, i] = onp.sin(onp.linspace(0, 4 + i * 3.2, observed_dimension))
    _, data = sample(true_weights, n_samples, 1.0, rs)

    def objective(params):
        weight_matrix, latents, noise_std = unpack_params(params)
        return -logprob(weight_matrix, latents, noise_std, data) / n_samples

    init_params = onp.random.RandomState(0).randn(num_weights + num_latent_params + 1)
    check_gradient_by_differences(objective, grad(objective), init_params)
    result = minimize(value_and_grad(objective), init_params, jac=True, method="CG", options={"maxiter": 10})
    assert result.fun < objective(init_params) - 1e-2


# --- fluid simulation (fluidsim/fluidsim.py) ------------------------------------------------------

def test_fluid_simulation_initial_velocities():
    from .upstream.examples.fluidsim import simulate

    rows = cols = 12
    steps = 4
    grid = onp.linspace(0, 1, rows)
    init_smoke = onp.exp(-((grid[:, None] - 0.4) ** 2 + (grid[None, :] - 0.5) ** 2) / 0.05)
    target = onp.exp(-((grid[:, None] - 0.6) ** 2 + (grid[None, :] - 0.5) ** 2) / 0.05)

    def objective(params):  # the example's objective, defined in its __main__
        init_vx = np.reshape(params[:rows * cols], (rows, cols))
        init_vy = np.reshape(params[rows * cols:], (rows, cols))
        final_smoke = simulate(init_vx, init_vy, init_smoke, steps)
        return np.mean((target - final_smoke) ** 2)

    init_params = 0.05 * onp.random.RandomState(0).randn(2 * rows * cols)  # not zero: away from the kinks
    check_gradient_by_differences(objective, grad(objective), init_params)
    result = minimize(value_and_grad(objective), init_params, jac=True, method="CG", options={"maxiter": 3})
    assert result.fun < objective(init_params) * 0.99


# --- neural ODE (ode_net.py) --------------------------------------------------------------------

def test_ode_net_learns_the_dynamics():
    from autograd_compat.scipy.integrate import odeint

    from .upstream.examples.ode_net import L1_loss, func, init_nn_params, ode_pred

    t = onp.linspace(0.0, 1.0, 8)
    true_y0 = onp.array([2.0, 0.0])
    true_A = onp.array([[-0.1, 2.0], [-2.0, -0.1]])
    true_y = odeint(func, true_y0, t, args=(true_A,))
    reference = __import__("scipy.integrate", fromlist=["odeint"]).odeint(func, true_y0, t, args=(true_A,),
                                                                          rtol=1e-10, atol=1e-10)
    onp.testing.assert_allclose(true_y, reference, rtol=1e-5, atol=1e-7)

    def train_loss(params, iter=0):
        return L1_loss(ode_pred(params, true_y0, t), true_y)

    init_params = init_nn_params(0.1, layer_sizes=[2, 12, 2])
    check_gradient_by_differences(train_loss, grad(train_loss), init_params, rtol=1e-4)
    trained = adam(grad(train_loss), init_params, num_iters=15, step_size=0.01)
    assert train_loss(trained) < train_loss(init_params) - 1e-2


# --- fixed points (fixed_points.py) --------------------------------------------------------------

def test_fixed_point_square_root_and_its_derivatives(capsys):  # no optimizer in this example
    from .upstream.examples import fixed_points  # prints as it runs, like the script

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

def _text_dataset(source):
    from .upstream.examples.rnn import build_dataset

    return build_dataset(str(EXAMPLES / source), sequence_length=8, alphabet_size=128, max_lines=6)


@pytest.mark.parametrize("model", ["rnn", "lstm"])
def test_character_model_on_its_own_source(model):
    if model == "rnn":
        from .upstream.examples.rnn import create_rnn_params as create_params
        from .upstream.examples.rnn import rnn_log_likelihood as log_likelihood
    else:
        from .upstream.examples.lstm import init_lstm_params as create_params
        from .upstream.examples.lstm import lstm_log_likelihood as log_likelihood

    train_inputs = _text_dataset(f"{model}.py")
    init_params = create_params(input_size=128, output_size=128, state_size=6, param_scale=0.01,
                                rs=onp.random.RandomState(0))

    def training_loss(params, iter=0):
        return -log_likelihood(params, train_inputs, train_inputs)

    check_gradient_by_differences(training_loss, grad(training_loss), init_params)
    trained = adam(grad(training_loss), init_params, step_size=0.1, num_iters=10)
    assert training_loss(trained) < training_loss(init_params) - 0.1
