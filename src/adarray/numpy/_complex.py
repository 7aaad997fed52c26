"""Complex numbers: real, imag, conj, angle and the dtype queries, like NumPy's.

Complex arrays go through every holomorphic function (exp, sin, sqrt, ...), arithmetic, matmul,
einsum, sums and products, indexing and the structural functions; build them as `x + 1j * y` or
with `anp.asarray(x, complex)`. Functions that need an ordering (maximum, sort, floor, comparisons
other than == and !=) raise ShapeError on them. Derivatives follow JAX's conventions (see
primitives/complex.py): `ad.grad(f)(z)` of a real f is df/dx - i df/dy, and
`ad.grad(f, holomorphic=True)(z)` of a holomorphic f is f'(z).

>>> anp.angle(anp.exp(1j * 0.5))  # doctest: +SKIP
0.5
"""
from __future__ import annotations

import numpy as np

from ..core.errors import TracingError
from ..core.types import is_complex, real_dtype
from ..primitives import complex as cp
from ..primitives import elementwise as ew
from ._core import asvalue, cast, dtype, float_dtype, shape
from ._reductions import all as all_


def real(x):
    """The real part (x itself for a real array), like numpy.real."""
    x = asvalue(x)
    return cp.real(x) if is_complex(dtype(x)) else x


def imag(x):
    """The imaginary part (zeros, without derivative, for a real array), like numpy.imag."""
    x = asvalue(x)
    if is_complex(dtype(x)):
        return cp.imag(x)
    return np.zeros(shape(x), dtype(x))


def conj(x):
    """The complex conjugate (x itself for a real array), like numpy.conj."""
    x = asvalue(x)
    return cp.conj(x) if is_complex(dtype(x)) else x


conjugate = conj


def angle(z, deg: bool = False):
    """The argument of z in (-pi, pi] (degrees with deg=True): arctan2(imag z, real z).

    Its derivative at z != 0 is Im(t / z) along a tangent t; at z = 0 it is 0 (the origin is a
    branch point), and for real z it is 0 (the angle is 0 or pi).
    """
    z = asvalue(z)
    if is_complex(dtype(z)):
        x, y = cp.real(z), cp.imag(z)
    else:
        x = cast(z, float_dtype(z))
        y = np.zeros(shape(x), dtype(x))
    out = ew.arctan2(y, x)
    return ew.mul(out, 180.0 / np.pi) if deg else out


def iscomplexobj(x) -> bool:
    """True if x has a complex dtype (whatever its values), like numpy.iscomplexobj."""
    return bool(is_complex(dtype(x)))


def isrealobj(x) -> bool:
    """True unless x has a complex dtype, like numpy.isrealobj."""
    return not iscomplexobj(x)


def iscomplex(x):
    """Elementwise: the imaginary part is nonzero (boolean, like numpy.iscomplex)."""
    x = asvalue(x)
    if not is_complex(dtype(x)):
        return np.zeros(shape(x), bool)
    return ew.ne(cp.imag(x), 0.0)


def isreal(x):
    """Elementwise: the imaginary part is zero (boolean, like numpy.isreal)."""
    x = asvalue(x)
    if not is_complex(dtype(x)):
        return np.ones(shape(x), bool)
    return ew.eq(cp.imag(x), 0.0)


def real_if_close(a, tol=100):
    """The real part when every imaginary part is below tol machine epsilons (tol > 1; an absolute
    bound when tol <= 1), else `a` unchanged, like numpy.real_if_close.

    The result's dtype depends on the values: a traced complex `a` needs its value known (under
    grad, jvp, vjp and the Jacobians, where the choice is a guard, as Python control flow is);
    under jit or vmap it is a TracingError (use anp.real there).
    """
    a = asvalue(a)
    if not is_complex(dtype(a)):
        return a
    bound = tol * np.finfo(real_dtype(dtype(a))).eps if tol > 1 else tol
    close = _all_below(cp.imag(a), bound)
    try:
        decided = bool(close)
    except TracingError as error:
        raise TracingError(f"real_if_close of a traced complex array: its result type depends on the values, "
                           f"which are unknown here; use anp.real ({error})") from None
    return cp.real(a) if decided else a


def _all_below(values, bound):
    magnitude = ew.abs(values)
    return all_(ew.lt(magnitude, np.full(shape(magnitude), bound, dtype(magnitude))))


