"""adarray.numpy: a NumPy-like API that works on traced values and on plain arrays.

    import adarray.numpy as anp
    anp.tanh(x @ w + b)          # traced inside ad.grad / ad.jit, computed directly otherwise

Semantics follow NumPy: broadcasting, dtype promotion (Python scalars are weak),
`axis`/`keepdims`. Conventions at non-smooth points: abs'(0) = 0; max/min
(binary and reductions) give the whole derivative to the first argument or
element at a tie; prod/cumprod/at[].multiply gradients are exact with zeros.
"""
from __future__ import annotations

import numpy as _np

from ..tracing import ARRAY_METHODS
from . import fft, linalg
from ._arithmetic import (
    allclose,
    around,
    array_equal,
    array_equiv,
    cbrt,
    copysign,
    divmod,
    fix,
    float_power,
    fmod,
    frexp,
    gcd,
    heaviside,
    isclose,
    isinf,
    isneginf,
    isposinf,
    lcm,
    ldexp,
    modf,
    nextafter,
    rint,
    signbit,
    trunc,
)
from ._array import Array, at, wrap_functions
from ._assembly import block, ndim, resize, shape, size
from ._complex import angle, conj, conjugate, imag, iscomplex, iscomplexobj, isreal, isrealobj, real, real_if_close
from ._constructors import copy, empty, empty_like, fromfunction, geomspace, identity, logspace
from ._contractions import dot, einsum, inner, matmul, outer, tensordot, vdot
from ._counting import bincount, histogram
from ._creation import (
    arange,
    array,
    asarray,
    eye,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from ._index_tricks import (
    diag_indices,
    diag_indices_from,
    indices,
    ix_,
    mgrid,
    ogrid,
    ravel_multi_index,
    tril_indices,
    tril_indices_from,
    triu_indices,
    triu_indices_from,
    unravel_index,
)
from ._indexing import getitem, take, take_along_axis
from ._manipulation import (
    append,
    array_split,
    c_,
    delete,
    dsplit,
    fliplr,
    flipud,
    hsplit,
    insert,
    meshgrid,
    pad,
    r_,
    roll,
    rot90,
    vsplit,
)
from ._math import (
    abs,
    absolute,
    acos,
    acosh,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    ceil,
    clip,
    cos,
    cosh,
    deg2rad,
    degrees,
    divide,
    equal,
    erf,
    exp,
    exp2,
    expm1,
    fabs,
    floor,
    floor_divide,
    fmax,
    fmin,
    greater,
    greater_equal,
    hypot,
    isfinite,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    nan_to_num,
    negative,
    not_equal,
    piecewise,
    positive,
    power,
    rad2deg,
    radians,
    reciprocal,
    remainder,
    round,
    select,
    sigmoid,
    sign,
    sin,
    sinc,
    sinh,
    softplus,
    sqrt,
    square,
    stop_gradient,
    subtract,
    tan,
    tanh,
    true_divide,
    where,
)
from ._matrix import cross, diag, diagflat, diagonal, kron, trace, tri, tril, triu
from ._numerical import convolve, correlate, diff, ediff1d, gradient, interp, trapezoid
from ._reductions import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    count_nonzero,
    cummax,
    cummin,
    cumprod,
    cumsum,
    logcumsumexp,
    logsumexp,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from ._selection import choose, compress, digitize, extract, isin, lexsort, put_along_axis, trim_zeros
from ._shape import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_arrays,
    broadcast_to,
    column_stack,
    concatenate,
    dstack,
    expand_dims,
    flatten,
    flip,
    hstack,
    moveaxis,
    ravel,
    repeat,
    reshape,
    rollaxis,
    row_stack,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    vstack,
)
from ._sorting import (
    argpartition,
    argsort,
    argwhere,
    flatnonzero,
    nonzero,
    partition,
    searchsorted,
    sort,
    unique,
)
from ._statistics import (
    average,
    corrcoef,
    cov,
    median,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmean,
    nanmedian,
    nanmin,
    nanpercentile,
    nanprod,
    nanquantile,
    nanstd,
    nansum,
    nanvar,
    percentile,
    ptp,
    quantile,
)
from .linalg import norm

float32, float64, int32, int64, bool_ = _np.float32, _np.float64, _np.int32, _np.int64, _np.bool_
complex64, complex128, float16, dtype = _np.complex64, _np.complex128, _np.float16, _np.dtype
longdouble, clongdouble = _np.longdouble, _np.clongdouble   # accepted, computed in float64 (core/precision.py)

pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None


def astype(x, dtype):
    return asarray(x, dtype)


def _method_table():
    table = {
        "add": add, "sub": subtract, "mul": multiply, "truediv": divide, "floordiv": floor_divide,
        "mod": remainder, "pow": power, "matmul": matmul, "and": logical_and, "or": logical_or,
        "xor": logical_xor, "neg": negative, "pos": positive, "abs": abs, "invert": logical_not,
        "lt": less, "le": less_equal, "gt": greater, "ge": greater_equal, "eq": equal, "ne": not_equal,
        "getitem": getitem, "sum": sum, "prod": prod, "max": max, "min": min, "mean": mean, "var": var,
        "std": std, "reshape": reshape, "astype": astype, "argmax": argmax, "argmin": argmin, "all": all,
        "any": any, "squeeze": squeeze, "flatten": flatten, "ravel": ravel, "dot": dot, "clip": clip,
        "cumsum": cumsum, "cumprod": cumprod, "take": take, "swapaxes": swapaxes, "repeat": repeat,
        "transpose": transpose, "T": lambda x: transpose(x), "at": at,
        "real": real, "imag": imag, "conj": conj, "conjugate": conj,
    }
    ufuncs = {
        "add": add, "subtract": subtract, "multiply": multiply, "divide": divide, "true_divide": divide,
        "power": power, "matmul": matmul, "negative": negative, "exp": exp, "log": log, "sin": sin,
        "cos": cos, "tanh": tanh, "sqrt": sqrt, "maximum": maximum, "minimum": minimum, "equal": equal,
        "not_equal": not_equal, "less": less, "less_equal": less_equal, "greater": greater,
        "greater_equal": greater_equal, "absolute": abs, "square": square, "log1p": log1p, "expm1": expm1,
        "arctan2": arctan2, "logaddexp": logaddexp, "floor_divide": floor_divide, "remainder": remainder,
        "tan": tan, "sinh": sinh, "cosh": cosh, "arcsin": arcsin, "arccos": arccos, "arctan": arctan,
        "sign": sign, "floor": floor, "ceil": ceil, "logical_and": logical_and, "logical_or": logical_or,
        "logical_not": logical_not, "reciprocal": reciprocal,
        "conjugate": conj, "fabs": fabs, "fmax": fmax, "fmin": fmin, "logaddexp2": logaddexp2,
    }
    ufuncs.update({name: globals()[name] for name in (
        "log2", "log10", "exp2", "hypot", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "radians",
        "degrees", "sinh", "cosh", "arctan2", "positive", "logical_xor", "isfinite", "isnan", "fmod"
    ) if name in globals()})
    table.update({"argsort": argsort, "diagonal": diagonal, "nonzero": nonzero,
                  "searchsorted": searchsorted})
    table.update({f"ufunc.{name}": fn for name, fn in ufuncs.items()})
    public = {name: fn for name, fn in globals().items() if callable(fn) and not name.startswith("_")}
    table.update({f"function.{name}": fn for name, fn in public.items()})
    return table


wrap_functions(globals())  # concrete results are `Array`s (an ndarray with .at[] and traced indexing)
ARRAY_METHODS.update(_method_table())
__all__ = sorted(name for name in dir() if not name.startswith("_") and name not in ("annotations", "types"))
