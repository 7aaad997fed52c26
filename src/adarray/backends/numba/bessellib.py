"""Bessel functions for the generated code: SciPy's compiled scalar functions (scipy.special.cython_special)
called from compiled code, so the Numba backend computes what the NumPy backend's scipy.special calls compute
(backends/numpy/special.py: jv for integer orders, yn, iv and ive, in float64).

Each function's address is registered with LLVM under a name of ours (`adarray_jv`, ...) and called as a Numba
external function, as lapack.py does: compiled code names the symbol, so Numba's disk cache keeps working (the
symbols are registered again when this module is imported, before cached code is loaded). Cython's fused
functions take a trailing `skip_dispatch` flag, passed as 0.

    jn(1.0, 2.0)        # inside numba.njit code: J_1(2) = 0.5767...

This module imports numba and scipy: only generated code imports it.
"""
from __future__ import annotations

import math

import llvmlite.binding as llvm
import numba
from numba import types
from numba.extending import get_cython_function_address

_JIT = dict(cache=True, error_model="numpy", fastmath=False)


def _external(name: str, symbol: str, signature):
    llvm.add_symbol(symbol, get_cython_function_address("scipy.special.cython_special", name))
    return types.ExternalFunction(symbol, signature)


# the real (double) versions of the fused functions; yn's with a C long order, as scipy.special.yn's integer loop
_jv = _external("__pyx_fuse_1jv", "adarray_jv", types.float64(types.float64, types.float64, types.intc))
_yn = _external("__pyx_fuse_1yn", "adarray_yn", types.float64(types.long_, types.float64, types.intc))
_iv = _external("__pyx_fuse_1iv", "adarray_iv", types.float64(types.float64, types.float64, types.intc))
_ive = _external("__pyx_fuse_1ive", "adarray_ive", types.float64(types.float64, types.float64, types.intc))

_WHOLE_LIMIT = 2.0 ** 62  # orders at or beyond it are not taken as integers (backends/numpy/special.py)


@numba.njit(**_JIT)
def _whole(n):
    return math.isfinite(n) and n == math.floor(n) and abs(n) < _WHOLE_LIMIT


@numba.njit(**_JIT)
def jn(n, x):
    """J_n(x) for an integer order n (NaN for another order)."""
    if not _whole(n):
        return math.nan
    return _jv(float(n), x, 0)


@numba.njit(**_JIT)
def yn(n, x):
    """Y_n(x) for an integer order n (NaN for another order)."""
    if not _whole(n):
        return math.nan
    return _yn(int(n), x, 0)


@numba.njit(**_JIT)
def jn_integer(n, x):
    """J_n(x) for an order of an integer dtype (every value is an integer order)."""
    return _jv(float(n), x, 0)


@numba.njit(**_JIT)
def yn_integer(n, x):
    """Y_n(x) for an order of an integer dtype."""
    return _yn(n, x, 0)


@numba.njit(**_JIT)
def iv(v, x):
    """I_v(x) of real order v."""
    return _iv(v, x, 0)


@numba.njit(**_JIT)
def ive(v, x):
    """I_v(x) exp(-|x|)."""
    return _ive(v, x, 0)
