"""adarray.nn: activation functions and friends, as jax.nn.

    import adarray.nn as nn
    nn.relu(x), nn.gelu(x), nn.softmax(logits, axis=-1), nn.one_hot(labels, 10)

Conventions at the kinks follow JAX: the derivative of relu (and relu6, hard_tanh, leaky_relu at
their corners) is 0 on the flat side, so relu'(0) = 0; elu and celu have derivative 1 at 0. The
functions are written so that no branch overflows: gelu and silu stay finite and exact-to-rounding
at large |x|, softmax and log_softmax subtract the maximum first.

    >>> nn.relu(np.array([-1.0, 0.0, 2.0]))
    array([0., 0., 2.])
"""
from __future__ import annotations

import math

import numpy as np

from . import numpy as anp
from .core.errors import ArgumentError
from .numpy._core import asvalue, cast, float_dtype, normalize_axes, shape
from .numpy._core import dtype as dtype_of
from .scipy import special

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_tanh", "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp", "one_hot",
    "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus", "standardize", "swish",
]

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)

sigmoid = anp.sigmoid
softplus = anp.softplus
logsumexp = special.logsumexp


def _float(x):
    x = asvalue(x)
    return cast(x, float_dtype(x))


def relu(x):
    """max(x, 0), with derivative 0 at 0 (as JAX)."""
    x = _float(x)
    return anp.where(anp.greater(x, 0.0), x, 0.0)


def relu6(x):
    """min(max(x, 0), 6), with derivative 0 at 0 and at 6 (as JAX)."""
    x = _float(x)
    inside = anp.logical_and(anp.greater(x, 0.0), anp.less(x, 6.0))
    return anp.where(inside, x, anp.where(anp.greater_equal(x, 6.0), 6.0, 0.0))


def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, negative_slope * x below."""
    x = _float(x)
    return anp.where(anp.greater_equal(x, 0.0), x, negative_slope * x)


def hard_tanh(x):
    """x clipped to [-1, 1]: derivative 1 on [-1, 1] (corners included, as JAX), 0 outside."""
    x = _float(x)
    return anp.where(anp.greater(x, 1.0), 1.0, anp.where(anp.less(x, -1.0), -1.0, x))


def elu(x, alpha=1.0):
    """x for x > 0, alpha (exp(x) - 1) below (the exponential is of min(x, 0), never overflowing)."""
    x = _float(x)
    positive = anp.greater(x, 0.0)
    return anp.where(positive, x, alpha * anp.expm1(anp.where(positive, 0.0, x)))


def celu(x, alpha=1.0):
    """x for x > 0, alpha (exp(x / alpha) - 1) below; derivative 1 at 0."""
    x = _float(x)
    positive = anp.greater(x, 0.0)
    return anp.where(positive, x, alpha * anp.expm1(anp.where(positive, 0.0, x) / alpha))


def selu(x):
    """scale * elu(x, alpha) with the self-normalizing constants of Klambauer et al. (2017)."""
    return SELU_SCALE * elu(x, SELU_ALPHA)


def silu(x):
    """x * sigmoid(x)."""
    x = _float(x)
    return x * anp.sigmoid(x)


swish = silu


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), without overflow."""
    return -anp.softplus(-_float(x))


def soft_sign(x):
    """x / (|x| + 1)."""
    x = _float(x)
    return x / (anp.abs(x) + 1.0)


def gelu(x, approximate=True):
    """The Gaussian error linear unit x Phi(x) (approximate=False), or its tanh approximation (the default,
    as JAX): x / 2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

    Both are written without cancellation at large negative x: Phi(x) = erfc(-x / sqrt 2) / 2 and
    (1 + tanh(z)) / 2 = sigmoid(2 z).
    """
    x = _float(x)
    if approximate:
        return x * anp.sigmoid(2.0 * SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x)))
    return x * special.ndtr(x)


def glu(x, axis=-1):
    """The gated linear unit: first half * sigmoid(second half), split along `axis` (even length)."""
    x = _float(x)
    (axis,) = normalize_axes(axis, len(shape(x)), "glu")
    size = shape(x)[axis]
    if size % 2:
        raise ArgumentError(f"glu: axis {axis} of an array of shape {tuple(shape(x))} must have even length")
    first, second = anp.split(x, 2, axis=axis)
    return first * anp.sigmoid(second)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis` (the last by default, as JAX), shifted by the maximum first."""
    return special.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along `axis` (the last by default, as JAX), without overflow."""
    return special.log_softmax(x, axis=axis)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    """(x - mean) / sqrt(variance + epsilon), with the mean and variance over `axis` unless given."""
    x = _float(x)
    if mean is None:
        mean = anp.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = anp.mean(anp.square(x - mean), axis=axis, keepdims=True)
    return (x - mean) / anp.sqrt(variance + epsilon)


def one_hot(x, num_classes, *, dtype=np.float64, axis=-1):
    """One-hot encoding of integer labels: a new axis of length num_classes (at `axis`); labels outside
    [0, num_classes) give all zeros. Not differentiable in x (the labels are integers).

    >>> one_hot(np.array([0, 2]), 3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
    """
    x = asvalue(x)
    if not isinstance(num_classes, (int, np.integer)) or num_classes < 0:
        raise ArgumentError(f"one_hot: num_classes must be a static non-negative integer, got {num_classes!r}")
    ndim = len(shape(x)) + 1
    (axis,) = normalize_axes(axis, ndim, "one_hot")
    labels = anp.expand_dims(anp.stop_gradient(x) if np.issubdtype(dtype_of(x), np.floating) else x, axis)
    classes = np.arange(num_classes).reshape([num_classes if i == axis else 1 for i in range(ndim)])
    return anp.asarray(anp.equal(labels, classes), dtype)
