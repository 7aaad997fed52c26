"""Central differences: the one finite-difference oracle of the tests (computed in float64, complex128 for
complex values).

    numerical_jvp(f, args, tangents, eps)   (f(x + h t) - f(x - h t)) / 2h, f returning a list of outputs
    numerical_derivative(f, x, eps)         f' of an elementwise (or scalar) f, at every element of x
    numerical_gradient(f, x, eps)           one coordinate at a time; x may be a pytree (the same structure back)
    numerical_jacobian(f, x, eps)           shape f(x).shape + x.shape
    numerical_hessian(f, x, eps)            second differences of a scalar f: shape x.shape + x.shape

The error of a central difference is O(h^2) (truncation) + O(ulp(f) / h) (rounding), smallest near h = 1e-6 in
float64 for a first derivative. `richardson=True` (derivative, hessian) combines the steps h and h / 2 as
(4 D(h / 2) - D(h)) / 3, which cancels the h^2 term: O(h^4) truncation, for references that must hold to about
1e-8 (use a larger h then, 1e-3 or 1e-4, to keep the rounding term small).

>>> round(float(numerical_derivative(np.sin, 0.0)), 9)
1.0
>>> numerical_jacobian(lambda x: x ** 2, np.array([1.0, 2.0]))
array([[2., 0.],
       [0., 4.]])
"""
from __future__ import annotations

import numpy as np

from ..core.pytree import flatten, unflatten
from ..core.types import is_complex, is_float

__all__ = ["numerical_derivative", "numerical_gradient", "numerical_hessian", "numerical_jacobian", "numerical_jvp",
           "wide"]


def wide(x):
    """x in float64, or complex128 if it is complex: the precision every check computes in."""
    x = np.asarray(x)
    return x.astype(np.complex128 if is_complex(x.dtype) else np.float64)


def numerical_jvp(f, args, tangents, eps: float):
    """Central differences (f(x + h t) - f(x - h t)) / 2h, computed in float64 (complex128 for complex
    arguments or results; a complex tangent moves along the real and the imaginary directions at once).

    `f(*args)` returns a list of arrays; `tangents` has one entry per arg (None:
    that arg is held fixed). Perturbed args are cast back to their own dtype.
    Returns one float64 array per float output of `f`, None for the others.
    """
    def shifted(sign):
        out = []
        for arg, tangent in zip(args, tangents):
            arg = np.asarray(arg)
            if tangent is None:
                out.append(arg)
            else:
                moved = wide(arg) + sign * eps * wide(tangent)
                out.append(moved.astype(arg.dtype))
        return out

    with np.errstate(all="ignore"):
        plus, minus = f(*shifted(1.0)), f(*shifted(-1.0))
    return [
        (wide(p) - wide(m)) / (2.0 * eps)
        if is_float(np.asarray(p).dtype) else None
        for p, m in zip(plus, minus)
    ]


def _richardson(difference, eps: float, richardson: bool):
    """difference(h), or (4 difference(h / 2) - difference(h)) / 3 with richardson."""
    if not richardson:
        return difference(eps)
    return (4.0 * difference(eps / 2.0) - difference(eps)) / 3.0


def numerical_derivative(f, x, eps: float = 1e-6, *, richardson: bool = False):
    """(f(x + h) - f(x - h)) / 2h, x moved at every element at once: the derivative of a scalar function, or of
    an elementwise one at each element. A 0-d result is a NumPy scalar."""
    x = wide(x)

    def difference(step):
        return (wide(f(x + step)) - wide(f(x - step))) / (2.0 * step)

    return _richardson(difference, eps, richardson)[()]


def _is_array_like(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic, int, float, complex))


def numerical_gradient(f, x, eps: float = 1e-6):
    """Central differences of a scalar function, one coordinate at a time (float64).

    For a vector-valued f the result stacks one row per input coordinate (a Jacobian's rows). For a pytree x
    (a dict, list, tuple or registered node of arrays), the gradient has x's structure: each float leaf is moved
    with the others fixed (None for the leaves that are not floats).
    """
    if not _is_array_like(x):
        leaves, tree = flatten(x)
        gradients = []
        for position, leaf in enumerate(leaves):
            if not is_float(np.asarray(leaf).dtype):
                gradients.append(None)
                continue

            def along(value, position=position):
                moved = list(leaves)
                moved[position] = value
                return f(unflatten(tree, moved))

            gradients.append(numerical_gradient(along, leaf, eps))
        return unflatten(tree, gradients)
    x = wide(x)
    rows = []
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        rows.append((wide(f(x + step)) - wide(f(x - step))) / (2 * eps))
    stacked = np.stack(rows) if rows else np.zeros((0,))
    return stacked.reshape(x.shape) if stacked.ndim == 1 else stacked


def numerical_jacobian(f, x, eps: float = 1e-6):
    """The Jacobian of an array function of one array by central differences: shape f(x).shape + x.shape."""
    x = wide(x)
    out_shape = np.shape(f(x))
    if x.size == 0:
        return np.zeros(out_shape + x.shape)
    rows = numerical_gradient(f, x, eps).reshape((x.size,) + out_shape)
    return np.moveaxis(rows, 0, -1).reshape(out_shape + x.shape)


def numerical_hessian(f, x, eps: float = 1e-3, *, richardson: bool = False):
    """The Hessian of a scalar f by second central differences, f(x + h e_i + h e_j) - f(x + h e_i - h e_j)
    - f(x - h e_i + h e_j) + f(x - h e_i - h e_j) over 4 h^2: shape x.shape + x.shape."""
    x = wide(x)
    n = x.size

    def difference(step):
        basis = np.eye(n).reshape((n,) + x.shape) * step
        out = np.zeros((n, n), dtype=x.dtype)
        for i in range(n):
            for j in range(n):
                ei, ej = basis[i], basis[j]
                out[i, j] = (wide(f(x + ei + ej)) - wide(f(x + ei - ej)) - wide(f(x - ei + ej))
                             + wide(f(x - ei - ej))) / (4.0 * step * step)
        return out

    return _richardson(difference, eps, richardson).reshape(x.shape + x.shape)
