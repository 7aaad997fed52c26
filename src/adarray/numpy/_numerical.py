"""Finite differences, interpolation and convolution: diff, ediff1d, gradient, trapezoid, interp,
convolve, correlate. All are compositions of slices, gathers and products with NumPy's formulas
(so values agree with NumPy's to rounding), differentiable in every float input.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeError
from ..primitives import indexing
from ..primitives import sort as sorting
from ..tracing import Tracer
from ._contractions import matmul
from ._core import asvalue, cast, dtype, float_dtype, normalize_axes, normalize_axis, result_dtype, shape
from ._indexing import getitem
from ._math import abs as abs_
from ._math import add, divide, equal, greater, less, multiply, not_equal, remainder, subtract, where
from ._reductions import sum as sum_
from ._shape import broadcast_to, concatenate, flip, ravel, reshape
from ._sorting import argsort

_NO_VALUE = object()


def _along(x, axis, start, stop):
    """x[..., start:stop, ...] on `axis` (Python slice semantics)."""
    index = [slice(None)] * len(shape(x))
    index[axis] = slice(start, stop)
    return getitem(x, tuple(index))


def _edge(value, x, axis):
    """A prepend/append value: a scalar becomes a slab of thickness 1 along `axis`."""
    value = asvalue(value)
    if len(shape(value)) == 0:
        slab = tuple(1 if i == axis else n for i, n in enumerate(shape(x)))
        return broadcast_to(value, slab)
    return value


def diff(a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE):
    """The n-th discrete difference a[i+1] - a[i] along `axis` (numpy.diff); booleans give a != b."""
    if n < 0:
        raise ShapeError(f"diff: the order n must be non-negative, got {n}")
    a = asvalue(a)
    if n == 0:
        return a
    if len(shape(a)) == 0:
        raise ShapeError("diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, len(shape(a)), "diff")
    pieces = [a]
    if prepend is not _NO_VALUE:
        pieces.insert(0, _edge(prepend, a, axis))
    if append is not _NO_VALUE:
        pieces.append(_edge(append, a, axis))
    if len(pieces) > 1:
        a = concatenate(pieces, axis)
    for _ in range(int(n)):
        later, earlier = _along(a, axis, 1, None), _along(a, axis, None, -1)
        a = not_equal(later, earlier) if dtype(a) == np.bool_ else subtract(later, earlier)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with optional values before and after (numpy.ediff1d)."""
    flat = ravel(asvalue(ary))
    pieces = [diff(flat)]
    if to_begin is not None:
        pieces.insert(0, ravel(cast(asvalue(to_begin), dtype(flat))))
    if to_end is not None:
        pieces.append(ravel(cast(asvalue(to_end), dtype(flat))))
    return concatenate(pieces, 0)


def _spacings(varargs, f, axes):
    """One spacing per axis: a scalar step or the 1-d differences of coordinates (NumPy's rules)."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and len(shape(asvalue(varargs[0]))) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise ShapeError(f"gradient: {len(varargs)} spacings for {len(axes)} axes")
    spacings = []
    for spacing, axis in zip(varargs, axes):
        spacing = asvalue(spacing)
        if len(shape(spacing)) == 0:
            spacings.append(spacing)
            continue
        if len(shape(spacing)) != 1 or shape(spacing)[0] != shape(f)[axis]:
            raise ShapeError(f"gradient: coordinates of shape {shape(spacing)} do not match axis {axis} "
                             f"of shape {shape(f)}")
        steps = diff(cast(spacing, float_dtype(spacing)))
        if not isinstance(steps, Tracer) and np.all(np.asarray(steps) == np.asarray(steps)[0]):
            steps = np.asarray(steps)[0]  # uniform coordinates take the uniform formulas, as in NumPy
        spacings.append(steps)
    return spacings


def _slab(values, axis, ndim):
    """1-d values laid along `axis` for broadcasting."""
    return reshape(values, tuple(-1 if i == axis else 1 for i in range(ndim)))


def gradient(f, *varargs, axis=None, edge_order=1):
    """Central differences in the interior and one-sided ones at the edges (numpy.gradient), with
    scalar or coordinate spacings; edge_order 1 or 2. One array per axis (a tuple for several)."""
    f = asvalue(f)
    f = cast(f, float_dtype(f))
    ndim = len(shape(f))
    axes = normalize_axes(axis, ndim, "gradient")
    if edge_order not in (1, 2):
        raise ShapeError(f"gradient: edge_order must be 1 or 2, got {edge_order}")
    results = []
    for axis_, step in zip(axes, _spacings(varargs, f, axes)):
        n = shape(f)[axis_]
        if n < edge_order + 1:
            raise ShapeError(f"gradient: axis {axis_} of shape {shape(f)} needs at least {edge_order + 1} points")
        uniform = len(shape(asvalue(step))) == 0

        def part(start, stop, axis_=axis_):
            return _along(f, axis_, start, stop)

        if uniform:
            interior = divide(subtract(part(2, None), part(None, -2)), multiply(2.0, step))
        else:
            dx1, dx2 = _slab(_along(step, 0, 0, -1), axis_, ndim), _slab(_along(step, 0, 1, None), axis_, ndim)
            a = divide(-dx2, multiply(dx1, add(dx1, dx2)))
            b = divide(subtract(dx2, dx1), multiply(dx1, dx2))
            c = divide(dx1, multiply(dx2, add(dx1, dx2)))
            interior = add(add(multiply(a, part(None, -2)), multiply(b, part(1, -1))), multiply(c, part(2, None)))
        first, last = _edges(part, step, uniform, edge_order)
        results.append(concatenate([first, interior, last], axis_))
    return results[0] if len(results) == 1 else tuple(results)


def _edges(part, step, uniform, edge_order):
    if edge_order == 1:
        first_step = step if uniform else getitem(step, 0)
        last_step = step if uniform else getitem(step, -1)
        return (divide(subtract(part(1, 2), part(0, 1)), first_step),
                divide(subtract(part(-1, None), part(-2, -1)), last_step))
    if uniform:
        a, b, c = divide(-1.5, step), divide(2.0, step), divide(-0.5, step)
        first = add(add(multiply(a, part(0, 1)), multiply(b, part(1, 2))), multiply(c, part(2, 3)))
        a, b, c = divide(0.5, step), divide(-2.0, step), divide(1.5, step)
        last = add(add(multiply(a, part(-3, -2)), multiply(b, part(-2, -1))), multiply(c, part(-1, None)))
        return first, last
    dx1, dx2 = getitem(step, 0), getitem(step, 1)
    a = divide(-(add(multiply(2.0, dx1), dx2)), multiply(dx1, add(dx1, dx2)))
    b = divide(add(dx1, dx2), multiply(dx1, dx2))
    c = divide(-dx1, multiply(dx2, add(dx1, dx2)))
    first = add(add(multiply(a, part(0, 1)), multiply(b, part(1, 2))), multiply(c, part(2, 3)))
    dx1, dx2 = getitem(step, -2), getitem(step, -1)
    a = divide(dx2, multiply(dx1, add(dx1, dx2)))
    b = divide(-(add(dx2, dx1)), multiply(dx1, dx2))
    c = divide(add(multiply(2.0, dx2), dx1), multiply(dx2, add(dx1, dx2)))
    last = add(add(multiply(a, part(-3, -2)), multiply(b, part(-2, -1))), multiply(c, part(-1, None)))
    return first, last


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y by the trapezoidal rule along `axis`, at spacing dx or sample points x."""
    y = asvalue(y)
    axis = normalize_axis(axis, len(shape(y)), "trapezoid")
    if x is None:
        d = dx
    else:
        x = asvalue(x)
        d = diff(x, axis=-1 if len(shape(x)) == 1 else axis)
        if len(shape(x)) == 1:
            d = _slab(d, axis, len(shape(y)))
    heights = divide(add(_along(y, axis, 1, None), _along(y, axis, None, -1)), 2.0)
    return sum_(multiply(d, heights), axis=axis)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp) at x (numpy.interp; xp increasing).

    Differentiable in x (the slope of the segment, from the right at a knot), in fp and in xp.
    Outside [xp[0], xp[-1]] the value is `left` / `right` (default fp[0] / fp[-1]). Like NumPy, the
    result is float64.
    """
    x, xp, fp = asvalue(x), asvalue(xp), asvalue(fp)
    if len(shape(xp)) != 1 or len(shape(fp)) != 1 or shape(xp) != shape(fp) or shape(xp)[0] == 0:
        raise ShapeError(f"interp: xp and fp must be non-empty 1-d arrays of one length, got {shape(xp)} "
                         f"and {shape(fp)}")
    target = np.dtype(np.float64)
    x, xp, fp = cast(x, target), cast(xp, target), cast(fp, target)
    if period is not None:
        x, xp, fp = _periodic(x, xp, fp, period)
        left = right = None
    n = shape(xp)[0]
    first, last = getitem(xp, 0), getitem(xp, -1)
    low_value = getitem(fp, 0) if left is None else left
    high_value = getitem(fp, -1) if right is None else right
    if n == 1:
        inside = getitem(fp, 0)
    else:
        flat = reshape(x, (1, -1))
        position = sorting.searchsorted(reshape(xp, (1, -1)), flat, "right")
        index = reshape(position, shape(x))
        index = where(less(index, 1), 0, where(greater(index, n - 1), n - 2, subtract(index, 1)))
        x0, x1 = _take(xp, index), _take(xp, add(index, 1))
        f0, f1 = _take(fp, index), _take(fp, add(index, 1))
        slope = divide(subtract(f1, f0), subtract(x1, x0))
        inside = add(multiply(slope, subtract(x, x0)), f0)
        inside = where(equal(x, last), getitem(fp, -1), inside)
    return where(less(x, first), low_value, where(greater(x, last), high_value, inside))


def _take(values, index):
    return indexing.gather(values, (("array",),), [index])


def _periodic(x, xp, fp, period):

    if not isinstance(period, Tracer) and float(period) == 0:
        raise ShapeError("interp: period must be a non-zero value")
    period = abs_(period)
    x, xp = remainder(x, period), remainder(xp, period)
    order = argsort(xp)
    xp, fp = _take(xp, order), _take(fp, order)
    xp = concatenate([subtract(getitem(xp, slice(-1, None)), period), xp, add(getitem(xp, slice(0, 1)), period)], 0)
    fp = concatenate([getitem(fp, slice(-1, None)), fp, getitem(fp, slice(0, 1))], 0)
    return x, xp, fp


def _full_convolution(a, v):
    """The full discrete convolution of 1-d a (n) and v (m): windows of a zero-padded a (one gather
    with static indices) contracted with v, so the derivative is a scatter-add and an einsum."""
    n, m = shape(a)[0], shape(v)[0]
    padded = concatenate([np.zeros(m - 1, dtype(a)), a, np.zeros(m - 1, dtype(a))], 0)
    windows = np.arange(n + m - 1)[:, None] + np.arange(m - 1, -1, -1)[None, :]
    return matmul(indexing.gather(padded, (("array",),), [windows]), v)


def _operands(a, v, name):
    a, v = asvalue(a), asvalue(v)
    a = reshape(a, (1,)) if len(shape(a)) == 0 else a
    v = reshape(v, (1,)) if len(shape(v)) == 0 else v
    if len(shape(a)) != 1 or len(shape(v)) != 1:
        raise ShapeError(f"{name}: needs 1-d arrays, got shapes {shape(a)} and {shape(v)}")
    if shape(a)[0] == 0 or shape(v)[0] == 0:
        raise ShapeError(f"{name}: arrays must not be empty, got shapes {shape(a)} and {shape(v)}")
    target = result_dtype(a, v)
    if target == np.bool_:
        target = np.dtype(np.int64)
    return cast(a, target), cast(v, target)


def _mode_window(full, n, m, mode, name, same_start):
    if mode == "full":
        return full
    if mode == "same":
        return getitem(full, slice(same_start, same_start + max(n, m)))
    if mode == "valid":
        return getitem(full, slice(min(n, m) - 1, max(n, m)))
    raise ShapeError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-d arrays (numpy.convolve), modes full, same, valid."""
    a, v = _operands(a, v, "convolve")
    n, m = shape(a)[0], shape(v)[0]
    if m > n:
        a, v = v, a
    full = _full_convolution(a, v)
    return _mode_window(full, n, m, mode, "convolve", (min(n, m) - 1) // 2)


def correlate(a, v, mode="valid"):
    """Cross-correlation of two real 1-d arrays (numpy.correlate): c[k] = sum_n a[n + k] v[n]."""
    a, v = _operands(a, v, "correlate")
    n, m = shape(a)[0], shape(v)[0]
    reversed_v = flip(v)
    full = _full_convolution(a, reversed_v) if n >= m else _full_convolution(reversed_v, a)
    start = (min(n, m) - 1) // 2 if n >= m else min(n, m) // 2
    return _mode_window(full, n, m, mode, "correlate", start)
