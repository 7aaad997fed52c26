"""adarray.scipy.integrate: odeint, an adaptive Dormand-Prince 5(4) solver that adarray differentiates.

    ys = odeint(lambda y, t, k: -k * y, y0, anp.linspace(0.0, 1.0, 5), 0.5)   # JAX's convention

How it is differentiated, and why. The solver is ordinary adarray code: a `fold` over the output
times, and in each interval a `while_loop` of Runge-Kutta steps with error control. Its
derivatives (forward and reverse, any order, vmap) are those of `fold` and `while_loop`; reverse
mode keeps the loop states by binomial checkpointing, so memory grows with the logarithm of the
number of steps (plus one state per output time), at the price of recomputing some steps.

The other choice is the continuous adjoint (JAX's odeint: a custom_vjp that integrates the
adjoint equation backwards in time, with y re-integrated backwards too). It needs no memory per
step but its gradient is only as accurate as the backward solve and is not the derivative of the
solution that was computed, and re-integrating y backwards is unstable for dissipative systems
(a decaying mode grows like exp(+lambda t) when run backwards). Differentiating the solver
gives the exact derivative of the computed solution on its mesh, agrees with finite
differences of the same function, and second order, forward mode and batching come from the
loop rules with nothing hand-written.

The step-size controller is frozen (`stop_gradient`): accepting or rejecting a step and the next
step size are treated as constants. The derivative is then the exact derivative of the Runge-Kutta
map on the mesh the solver chose, which converges to the true sensitivity as the tolerances go to
zero; differentiating the controller would add the derivative of the discretisation error (of the
order of the tolerance, and discontinuous where a step flips between accepted and rejected).
The last step of each interval is cut to land exactly on the output time, so derivatives with
respect to the times are exact too (dy(t_i)/dt_i = func(y(t_i), t_i)).
"""
from __future__ import annotations

import numpy as np

from .. import numpy as anp
from ..control import fold, while_loop
from ..core.errors import ArgumentError, ShapeError
from ..core.pytree import flatten, unflatten
from ..tracing import Tracer

# Dormand & Prince (1980), the tableau of scipy's RK45 and JAX's odeint. The last row of A is the
# fifth-order weights, so the seventh stage is func at the new point (first same as last).
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_B4 = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)
_ERROR = tuple(b5 - b4 for b5, b4 in zip(_A[6] + (0.0,), _B4))

# Step-size control (Hairer, Norsett & Wanner, Solving ODEs I, II.4), as in scipy and JAX.
_SAFETY, _MAX_FACTOR, _MIN_FACTOR, _ORDER = 0.9, 10.0, 0.2, 5.0


def _combination(weights, ks):
    total = None
    for weight, k in zip(weights, ks):
        if weight:
            total = weight * k if total is None else total + weight * k
    return total


def _dopri_step(fun, y, f0, t, h):
    """One Dormand-Prince step of size h: (y1, func(y1, t + h), error estimate)."""
    ks = [f0]
    for i in range(1, 7):
        ks.append(fun(y + h * _combination(_A[i], ks), t + _C[i] * h))
    y1 = y + h * _combination(_A[6], ks)
    return y1, ks[6], h * _combination(_ERROR, ks)


def _error_ratio(error, rtol, atol, y0, y1):
    scale = atol + rtol * anp.maximum(anp.abs(y0), anp.abs(y1))
    return anp.sqrt(anp.mean((error / scale) ** 2))


def _next_step(h, ratio):
    """The step the controller proposes after a step h whose error ratio was `ratio`."""
    shrink = anp.where(ratio < 1.0, 1.0, _MIN_FACTOR)  # never shrink after an accepted step
    safe = anp.where(ratio > 0.0, ratio, 1.0)
    factor = anp.minimum(_MAX_FACTOR, anp.maximum(_SAFETY * safe ** (-1.0 / _ORDER), shrink))
    factor = anp.where(ratio == 0.0, _MAX_FACTOR, factor)
    return h * anp.where(anp.isfinite(ratio), factor, _MIN_FACTOR)  # a NaN or inf step: try a smaller one


def _initial_step(fun, t0, y0, f0, rtol, atol):
    """Hairer, Norsett & Wanner's starting step (II.4, 'starting step size'), as in scipy and JAX."""
    scale = atol + anp.abs(y0) * rtol
    d0, d1 = anp.sqrt(anp.sum((y0 / scale) ** 2)), anp.sqrt(anp.sum((f0 / scale) ** 2))
    small = anp.logical_or(d0 < 1e-5, d1 < 1e-5)
    h0 = anp.where(small, 1e-6, 0.01 * d0 / anp.where(small, 1.0, d1))
    f1 = fun(y0 + h0 * f0, t0 + h0)
    d2 = anp.sqrt(anp.sum(((f1 - f0) / scale) ** 2)) / h0
    largest = anp.maximum(d1, d2)
    h1 = anp.where(largest <= 1e-15, anp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / anp.where(largest <= 1e-15, 1.0, largest)) ** (1.0 / (_ORDER + 1.0)))
    return anp.minimum(100.0 * h0, h1)


def _ravel(name, y0):
    """The leaves of y0 as one float vector, and the function that rebuilds the pytree."""
    leaves, tree = flatten(y0)
    if not leaves:
        raise ArgumentError(f"{name}: y0 has no arrays")
    arrays = [leaf if isinstance(leaf, Tracer) else np.asarray(leaf) for leaf in leaves]
    shapes = [tuple(a.shape) for a in arrays]
    dtypes = [np.dtype(a.aval.dtype if isinstance(a, Tracer) else a.dtype) for a in arrays]
    dtype = np.result_type(np.float32, *dtypes)
    if dtype.kind != "f":
        raise ArgumentError(f"{name}: y0 must hold real floating-point arrays, got {[str(d) for d in dtypes]}")
    sizes = [int(np.prod(s)) for s in shapes]
    flat = anp.concatenate([anp.reshape(anp.asarray(a, dtype), (-1,)) for a in arrays])

    def unravel(vector, leading=()):
        parts, start = [], 0
        for shape, size in zip(shapes, sizes):
            parts.append(anp.reshape(vector[..., start:start + size], tuple(leading) + shape))
            start += size
        return unflatten(tree, parts)

    def ravel_like(value, what):
        out_leaves, out_tree = flatten(value)
        out_shapes = [tuple(np.shape(o)) if not isinstance(o, Tracer) else o.shape for o in out_leaves]
        if out_tree != tree or out_shapes != shapes:
            raise ShapeError(f"{name}: {what} returned {out_tree} with shapes {out_shapes}, but y0 is {tree} with "
                             f"shapes {shapes}; func(y, t, *args) must return dy/dt shaped like y")
        return anp.concatenate([anp.reshape(anp.asarray(o, dtype), (-1,)) for o in out_leaves])

    return flat, unravel, ravel_like, dtype


def _check_times(name, t):
    shape = t.shape if isinstance(t, Tracer) else np.shape(t)
    if len(shape) != 1 or shape[0] < 1:
        raise ShapeError(f"{name}: t must be a 1-D array of at least one time, got shape {tuple(shape)}")
    if not isinstance(t, Tracer) and np.any(np.diff(np.asarray(t, np.float64)) <= 0):
        raise ArgumentError(f"{name}: the times t must be strictly increasing, got {np.asarray(t)}")


def _check_options(name, rtol, atol, mxstep, hmax):
    for label, value in (("rtol", rtol), ("atol", atol)):
        if not (isinstance(value, (int, float, np.floating)) and value >= 0):
            raise ArgumentError(f"{name}: {label} must be a non-negative number, got {value!r}")
    if rtol == 0 and atol == 0:
        raise ArgumentError(f"{name}: rtol and atol cannot both be zero")
    if not (mxstep == np.inf or (isinstance(mxstep, (int, np.integer)) and mxstep > 0)):
        raise ArgumentError(f"{name}: mxstep must be a positive integer or inf, got {mxstep!r}")
    if not (isinstance(hmax, (int, float, np.floating)) and hmax > 0):
        raise ArgumentError(f"{name}: hmax must be a positive number or inf, got {hmax!r}")


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf, checkpoint="binomial"):
    """Solve dy/dt = func(y, t, *args) from y(t[0]) = y0; the solution at every time in t.

    JAX's `odeint` convention: `y0` is any pytree of float arrays, `func` returns dy/dt with
    its structure, and each leaf of the result gains a leading axis of len(t) (row 0 is y0).
    The times must be strictly increasing. Adaptive Dormand-Prince 5(4) steps with the error
    control of scipy's RK45 (`rtol`, `atol`), at most `mxstep` steps per interval between output
    times and steps of at most `hmax`. Where an interval cannot be finished (mxstep reached, or
    the step size vanished), the result is NaN from there on rather than a wrong number.

    Differentiable in y0, t and args, in forward and reverse mode, to any order, under vmap and
    jit (see the module docstring for how). `checkpoint` (an adarray extension) sets what
    reverse mode keeps of the steps: "binomial" (memory logarithmic in the number of steps),
    "all", or every k-th.

    >>> ys = odeint(lambda y, t, k: -k * y, 1.0, anp.linspace(0.0, 1.0, 3), 0.5)  # doctest: +SKIP
    >>> np.allclose(ys, np.exp(-0.5 * np.linspace(0.0, 1.0, 3)))  # doctest: +SKIP
    True
    """
    name = "odeint"
    if not callable(func):
        raise ArgumentError(f"{name}: func must be callable, got {type(func).__name__}")
    _check_options(name, rtol, atol, mxstep, hmax)
    _check_times(name, t)
    y_flat, unravel, ravel_like, dtype = _ravel(name, y0)
    times = anp.asarray(t, dtype)
    rtol, atol, hmax = float(rtol), float(atol), float(hmax)

    def fun(y, time):
        return ravel_like(func(unravel(y), time, *args), f"func '{getattr(func, '__name__', 'func')}'")

    t0 = times[0]
    f0 = fun(y_flat, t0)
    if times.shape[0] == 1:
        return unravel(anp.reshape(y_flat, (1, -1)), (1,))
    h0 = anp.stop_gradient(_initial_step(fun, t0, y_flat, f0, rtol, atol))
    failed = anp.asarray(False)

    def interval(carry, target):
        y, f, time, h, failed = carry

        def running(state):
            y, f, time, h, steps = state
            go = anp.logical_and(time < target, time + h > time)  # a step that no longer moves time ends the loop
            return go if mxstep == np.inf else anp.logical_and(go, steps < mxstep)

        def step(state):
            y, f, time, h, steps = state
            trial = anp.minimum(h, hmax)
            last = time + trial >= target
            size = anp.where(last, target - time, trial)  # cut the last step to land on the target
            y1, f1, error = _dopri_step(fun, y, f, time, size)
            ratio = anp.stop_gradient(_error_ratio(error, rtol, atol, y, y1))
            accept = ratio <= 1.0
            proposal = anp.stop_gradient(_next_step(size, ratio))
            # after a cut last step, keep the step the controller had in mind before the cut
            kept = anp.maximum(proposal, anp.stop_gradient(trial))
            proposal = anp.where(anp.logical_and(last, accept), kept, proposal)
            new_time = anp.where(accept, anp.where(last, target, time + size), time)
            return (anp.where(accept, y1, y), anp.where(accept, f1, f), new_time, proposal, steps + 1)

        y, f, reached, h, _ = while_loop(running, step, (y, f, time, h, anp.asarray(0)), checkpoint=checkpoint)
        failed = anp.logical_or(failed, reached < target)
        y_out = anp.where(failed, np.nan, y)
        return (y, f, reached, h, failed), y_out

    _, ys = fold(interval, (y_flat, f0, t0, h0, failed), times[1:])
    return unravel(anp.concatenate([anp.reshape(y_flat, (1, -1)), ys]), (times.shape[0],))
