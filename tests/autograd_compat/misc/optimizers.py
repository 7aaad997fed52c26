"""autograd.misc.optimizers' interface, written here: sgd (with momentum), rmsprop and adam.

Each takes `gradient(x, iteration)`, a starting point `x0` that may be any pytree of arrays (a dict of weight
matrices, a list of layers), an optional `callback(x, iteration, g)` called before each step, and keyword
options with the names and defaults autograd uses; it returns the last iterate with x0's structure.

    trained = adam(lambda x, i: 2 * x, np.ones(3), num_iters=50, step_size=0.1)

The updates run on one flat float vector (adarray's pytree flattening), with NumPy.
"""
import numpy as _onp

from .flatten import flatten


def _flat_steps(update):
    """`update(gradient_at, x, callback, **options)` on flat vectors -> the same over pytrees."""
    def optimizer(grad, x0, callback=None, **options):
        flat_start, unflatten = flatten(x0)

        def gradient_at(vector, iteration):
            return _onp.asarray(flatten(grad(unflatten(vector), iteration))[0], dtype=float)

        def report(vector, iteration, gradient):
            if callback is not None:
                callback(unflatten(vector), iteration, unflatten(gradient))

        return unflatten(update(gradient_at, _onp.asarray(flat_start, dtype=float), report, **options))

    optimizer.__name__, optimizer.__doc__ = update.__name__, update.__doc__
    return optimizer


@_flat_steps
def sgd(gradient_at, x, report, num_iters=200, step_size=0.1, mass=0.9):
    """Gradient descent with momentum: the velocity is an exponential average (weight `mass`) of -gradient."""
    velocity = _onp.zeros_like(x)
    for iteration in range(num_iters):
        g = gradient_at(x, iteration)
        report(x, iteration, g)
        velocity = mass * velocity + (mass - 1.0) * g
        x = x + step_size * velocity
    return x


@_flat_steps
def rmsprop(gradient_at, x, report, num_iters=100, step_size=0.1, gamma=0.9, eps=1e-8):
    """Steps of -step_size g / (sqrt(mean square of g) + eps), the mean an exponential average (weight
    `gamma`) that starts at one."""
    mean_square = _onp.ones_like(x)
    for iteration in range(num_iters):
        g = gradient_at(x, iteration)
        report(x, iteration, g)
        mean_square = gamma * mean_square + (1.0 - gamma) * g * g
        x = x - step_size * g / (_onp.sqrt(mean_square) + eps)
    return x


@_flat_steps
def adam(gradient_at, x, report, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba, 2015): exponential averages of g (weight b1) and of g^2 (weight b2), both started
    at zero and divided by 1 - b^t to remove that start's bias; the step is -step_size mean / (sqrt(square) + eps)."""
    mean, square = _onp.zeros_like(x), _onp.zeros_like(x)
    for iteration in range(num_iters):
        g = gradient_at(x, iteration)
        report(x, iteration, g)
        mean = b1 * mean + (1.0 - b1) * g
        square = b2 * square + (1.0 - b2) * g * g
        steps = iteration + 1
        unbiased_mean, unbiased_square = mean / (1.0 - b1 ** steps), square / (1.0 - b2 ** steps)
        x = x - step_size * unbiased_mean / (_onp.sqrt(unbiased_square) + eps)
    return x
