"""adarray.scipy.integrate.odeint: solutions against closed forms and scipy's solve_ivp, derivatives in
y0, t and args against closed forms and finite differences (first and second order, both modes),
vmap over initial conditions, jit, pytree states, and errors."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import adarray as ad
import adarray.numpy as anp
from adarray.scipy.integrate import odeint
from adarray.testing import numerical_derivative, numerical_gradient, numerical_jacobian

TIMES = np.linspace(0.0, 3.0, 7)


def _decay(y, t, k):
    return -k * y


def _oscillator(y, t, omega):
    return anp.stack([y[1], -omega ** 2 * y[0]])


def _lotka_volterra(y, t, a, b, c, d):
    prey, predator = y[0], y[1]
    return anp.stack([a * prey - b * prey * predator, c * prey * predator - d * predator])


LV_PARAMS = (1.1, 0.4, 0.1, 0.4)
LV_Y0 = np.array([10.0, 5.0])


def _reference(fun, y0, times, *args):
    solution = solve_ivp(lambda t, y: fun(y, t, *args), (times[0], times[-1]), y0, t_eval=times, method="DOP853",
                         rtol=1e-13, atol=1e-13)
    return solution.y.T


def test_exponential_decay_and_its_derivatives_in_closed_form():
    y0, k = 2.0, 0.7
    ys = odeint(_decay, y0, TIMES, k)
    np.testing.assert_allclose(ys, y0 * np.exp(-k * TIMES), rtol=1e-7)
    final = lambda y0, k, t1: odeint(_decay, y0, anp.stack([0.0, t1]), k)[-1]
    t1 = 3.0
    grads = ad.grad(final, argnums=(0, 1, 2))(y0, k, t1)
    np.testing.assert_allclose(grads, [np.exp(-k * t1), -t1 * y0 * np.exp(-k * t1), -k * y0 * np.exp(-k * t1)],
                               rtol=1e-7)
    # second order: d2/dk2 = t^2 y0 exp(-k t), d2/dk dt = (k t - 1) y0 exp(-k t)
    hessian = ad.hessian(final, argnums=(1, 2))(y0, k, t1)
    expected = [[t1 ** 2 * y0 * np.exp(-k * t1), (k * t1 - 1) * y0 * np.exp(-k * t1)],
                [(k * t1 - 1) * y0 * np.exp(-k * t1), k ** 2 * y0 * np.exp(-k * t1)]]
    np.testing.assert_allclose(np.array(hessian, dtype=float), expected, rtol=1e-6)
    np.testing.assert_allclose(ad.grad(ad.grad(final, argnums=1), argnums=1)(y0, k, t1), expected[0][0], rtol=1e-6)


def test_harmonic_oscillator_matches_the_closed_form_and_solve_ivp():
    omega, y0 = 1.3, np.array([1.0, 0.0])
    ys = odeint(_oscillator, y0, TIMES, omega)
    closed = np.stack([np.cos(omega * TIMES), -omega * np.sin(omega * TIMES)], axis=1)
    np.testing.assert_allclose(ys, closed, atol=1e-7)
    np.testing.assert_allclose(ys, _reference(_oscillator, y0, TIMES, omega), atol=1e-7)
    # d y(T)[0] / d omega = -T sin(omega T)
    final = lambda omega: odeint(_oscillator, y0, TIMES, omega)[-1, 0]
    np.testing.assert_allclose(ad.grad(final)(omega), -TIMES[-1] * np.sin(omega * TIMES[-1]), rtol=1e-6)
    np.testing.assert_allclose(ad.grad(final)(omega), numerical_derivative(final, omega, 1e-5), rtol=1e-5)


def test_lotka_volterra_matches_solve_ivp_and_finite_differences():
    times = np.linspace(0.0, 5.0, 6)
    ys = odeint(_lotka_volterra, LV_Y0, times, *LV_PARAMS)
    reference = _reference(_lotka_volterra, LV_Y0, times, *LV_PARAMS)
    np.testing.assert_allclose(ys, reference, rtol=1e-7)

    def loss(y0, params):
        return anp.sum(odeint(_lotka_volterra, y0, times, *params) ** 2)

    grad_y0, grad_params = ad.grad(loss, argnums=(0, 1))(LV_Y0, LV_PARAMS)
    np.testing.assert_allclose(grad_y0, numerical_gradient(lambda y0: loss(y0, LV_PARAMS), LV_Y0, 1e-5), rtol=1e-5)
    numeric = numerical_gradient(lambda p: loss(LV_Y0, tuple(p)), np.array(LV_PARAMS), 1e-6)
    np.testing.assert_allclose(grad_params, numeric, rtol=1e-5)
    # forward mode agrees with reverse mode
    jac_fwd = ad.jacfwd(lambda y0: odeint(_lotka_volterra, y0, times, *LV_PARAMS)[-1])(LV_Y0)
    jac_rev = ad.jacrev(lambda y0: odeint(_lotka_volterra, y0, times, *LV_PARAMS)[-1])(LV_Y0)
    np.testing.assert_allclose(jac_fwd, jac_rev, rtol=1e-9)


def test_derivatives_with_respect_to_the_times():
    omega, y0 = 1.3, np.array([1.0, 0.0])
    times = np.array([0.2, 1.0, 2.5])
    jacobian = ad.jacrev(lambda t: odeint(_oscillator, y0, t, omega)[:, 0])(times)
    numeric = numerical_jacobian(lambda t: odeint(_oscillator, y0, t, omega)[:, 0], times, 1e-6)
    np.testing.assert_allclose(jacobian, numeric, rtol=1e-5, atol=1e-7)
    # the exact solution from y(t0) = y0 is cos(omega (t - t0)): d y(t_i) / d t_i = y'(t_i), d / d t0 = -that
    phase = omega * (times - times[0])
    np.testing.assert_allclose(np.diag(jacobian)[1:], -omega * np.sin(phase[1:]), rtol=1e-6)
    np.testing.assert_allclose(jacobian[1:, 0], omega * np.sin(phase[1:]), rtol=1e-6)


def test_second_order_against_finite_differences_of_the_gradient():
    times = np.linspace(0.0, 2.0, 3)

    def loss(params):
        return anp.sum(odeint(_lotka_volterra, LV_Y0, times, *params) ** 2)

    params = np.array(LV_PARAMS)
    gradient = ad.grad(lambda p: loss((p[0], p[1], p[2], p[3])))
    hessian = ad.hessian(lambda p: loss((p[0], p[1], p[2], p[3])))(params)
    numeric = numerical_gradient(gradient, params, 1e-5)  # row i: d gradient / d params[i]
    np.testing.assert_allclose(hessian, numeric, rtol=1e-4, atol=1e-6 * np.abs(hessian).max())
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-7)


def test_vmap_over_initial_conditions_and_jit():
    y0s = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]])
    batched = ad.vmap(lambda y0: odeint(_oscillator, y0, TIMES, 1.3))(y0s)
    assert batched.shape == (3, len(TIMES), 2)
    for y0, ys in zip(y0s, batched):
        np.testing.assert_allclose(ys, odeint(_oscillator, y0, TIMES, 1.3), rtol=1e-8, atol=1e-10)
    grads = ad.vmap(ad.grad(lambda y0: odeint(_oscillator, y0, TIMES, 1.3)[-1, 0]))(y0s)
    # y(T)[0] = cos(wT) y0[0] + sin(wT) / w y0[1]
    w, t1 = 1.3, TIMES[-1]
    np.testing.assert_allclose(grads, np.tile([np.cos(w * t1), np.sin(w * t1) / w], (3, 1)), rtol=1e-6)
    jitted = ad.jit(lambda y0, k: odeint(_decay, y0, TIMES, k))
    np.testing.assert_allclose(jitted(1.0, 0.5), np.exp(-0.5 * TIMES), rtol=1e-7)
    np.testing.assert_allclose(jitted(3.0, 0.2), 3.0 * np.exp(-0.2 * TIMES), rtol=1e-7)


def test_pytree_state_closures_and_memory_policies():
    def dynamics(state, t, k):
        return {"position": state["velocity"], "velocity": -k * state["position"] - 0.1 * state["velocity"]}

    y0 = {"position": np.array([1.0, 0.5]), "velocity": np.zeros(2)}
    ys = odeint(dynamics, y0, TIMES, 2.0)
    assert ys["position"].shape == (len(TIMES), 2) and ys["velocity"].shape == (len(TIMES), 2)
    flat = lambda y, t: np.concatenate([y[2:], -2.0 * y[:2] - 0.1 * y[2:]])
    reference = _reference(lambda y, t: flat(y, t), np.array([1.0, 0.5, 0.0, 0.0]), TIMES)
    np.testing.assert_allclose(ys["position"], reference[:, :2], rtol=1e-7, atol=1e-9)
    # func may close over traced values; every checkpoint policy gives the same gradient
    def loss(policy):
        return lambda k: anp.sum(odeint(lambda y, t: dynamics(y, t, k), y0, TIMES, checkpoint=policy)["position"])

    gradients = [ad.grad(loss(policy))(2.0) for policy in ("all", "binomial", 4)]
    np.testing.assert_allclose(gradients, gradients[0], rtol=1e-12)
    np.testing.assert_allclose(gradients[0], numerical_derivative(loss("all"), 2.0, 1e-6), rtol=1e-5)


def test_time_dependent_dynamics_and_a_single_time():
    # y' = cos(t) y: y = y0 exp(sin t - sin t0)
    times = np.array([0.5, 1.0, 4.0])
    ys = odeint(lambda y, t: anp.cos(t) * y, 1.5, times)
    np.testing.assert_allclose(ys, 1.5 * np.exp(np.sin(times) - np.sin(0.5)), rtol=1e-7)
    np.testing.assert_allclose(odeint(_decay, np.ones(3), np.array([1.0]), 2.0), np.ones((1, 3)))


def test_failures_are_nan_or_clear_errors():
    y0 = np.array([1.0])
    ys = odeint(lambda y, t: y ** 2, y0, np.array([0.0, 0.5, 2.0]), mxstep=500)  # blows up at t = 1
    assert np.isfinite(ys[1]).all() and np.isnan(ys[2]).all()
    np.testing.assert_allclose(ys[1], 2.0, rtol=1e-7)
    assert np.isnan(odeint(_decay, y0, np.linspace(0.0, 10.0, 3), 1.0, mxstep=3)[1:]).all()
    with pytest.raises(ad.ArgumentError, match="increasing"):
        odeint(_decay, y0, np.array([0.0, 2.0, 1.0]), 1.0)
    with pytest.raises(ad.ShapeError, match="func"):
        odeint(lambda y, t: anp.concatenate([y, y]), y0, TIMES)
    with pytest.raises(ad.ShapeError, match="1-D"):
        odeint(_decay, y0, np.ones((2, 2)), 1.0)
    with pytest.raises(ad.ArgumentError, match="rtol"):
        odeint(_decay, y0, TIMES, 1.0, rtol=-1.0)
    with pytest.raises(ad.ArgumentError, match="real floating"):
        odeint(_decay, np.array([1j]), TIMES, 1.0)


def test_hmax_bounds_the_step_and_inputs_are_not_written():
    y0, times = np.array([1.0, 2.0]), TIMES.copy()
    before = (y0.copy(), times.copy())
    ys = odeint(_decay, y0, times, 0.3, hmax=0.01)
    np.testing.assert_allclose(ys, y0 * np.exp(-0.3 * times)[:, None], rtol=1e-8)
    assert np.array_equal(y0, before[0]) and np.array_equal(times, before[1])


def test_reverse_mode_memory_is_logarithmic_in_the_steps_with_binomial_checkpoints():
    import tracemalloc

    y0 = np.linspace(0.5, 1.5, 500)

    def peak(policy, steps):
        gradient = ad.jit(ad.grad(lambda k: anp.sum(odeint(_decay, y0, np.array([0.0, 1.0]), k, hmax=1.0 / steps,
                                                           checkpoint=policy)[-1])))
        np.testing.assert_allclose(gradient(0.5), -np.sum(y0) * np.exp(-0.5), rtol=1e-9)
        tracemalloc.start()
        gradient(0.5)
        result = tracemalloc.get_traced_memory()[1] / y0.nbytes
        tracemalloc.stop()
        return result

    short, long = peak("binomial", 32), peak("binomial", 256)
    tape = peak("all", 256)
    assert tape > 2 * 256, tape  # "all" keeps every step's states (y and dy/dt)
    assert long < 1.5 * short, (short, long)  # 8 times the steps, about the same memory
    assert long < tape, (long, tape)
