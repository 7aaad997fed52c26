"""Vectorisable exp, log, expm1, log1p, tanh and logistic for the generated code (float64).

LLVM cannot vectorise a loop that calls libm, and without a vector math library (this LLVM build
has no `-vector-library` option, and Intel's SVML is not installed) each exp is a scalar call: 4 ns
against NumPy's 0.6 ns AVX-512 loop, tanh 20 ns against 1.3 ns. These are branch-free versions
(selects, bit casts through an LLVM intrinsic) that LLVM vectorises inside the fused loops:

* exp: FreeBSD's e_exp.c (Cody-Waite reduction by ln 2, a rational approximation on
  [-ln2/2, ln2/2], < 1 ulp), scaled by 2^k in two steps so that subnormal results are right;
* log: FreeBSD's e_log.c (x = 2^k (1 + f), log(1 + f) = 2s + s R(s^2) with s = f / (2 + f), < 1 ulp);
* expm1: a degree-13 polynomial for |x| < 0.5 (relative error below 1e-16), exp(x) - 1 beyond;
* log1p: log(u) x / (u - 1) with u = 1 + x (Goldberg's correction, a few ulp);
* tanh: e / (e + 2) with e = expm1(2|x|) (a few ulp; 1 beyond |x| = 22), the sign of x;
* logistic: 1 / (1 + exp(-x)), as scipy's expit.

NaN and inf follow IEEE and NumPy (exp(inf) = inf, exp(-inf) = 0, log(0) = -inf, log(-1) = NaN,
tanh(+-inf) = +-1). The tests compare each with NumPy on values across the whole range.
This module imports numba: only generated code imports it.
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic


@intrinsic
def as_float(typingctx, bits):
    """The float64 whose bit pattern is the int64 `bits`."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def cycles(typingctx):
    """The processor's cycle counter (llvm.readcyclecounter): the profiler's clock."""
    def codegen(context, builder, signature, args):
        function = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=ir.FunctionType(ir.IntType(64), []))
        return builder.call(function, [])

    return types.int64(), codegen


@numba.njit(fastmath=False)
def read_cycles():
    return cycles()


@intrinsic
def as_bits(typingctx, value):
    """The bit pattern of the float64 `value`, as an int64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


# Compiled with these flags as functions of their own, which LLVM inlines into the caller's loop
# (forceinline: alwaysinline) keeping their own flags, so a caller's `reassoc` cannot reorder their
# careful arithmetic (log1p's correction overflowed under it): Numba's own inline="always" would
# re-lower them with the caller's flags. Inside this module they call each other that way.
# Cached on disk like the rest of the library: LLVM still inlines them into a caller compiled later (same run
# time), and a process compiling a new program loads them instead of compiling each again (exp and log took
# 0.12-0.17 s each; a first call of sum(exp(k x) + log1p(x * x)) 1.32 s -> 0.63 s once they were cached).
_FLAGS = dict(error_model="numpy", fastmath={"contract", "arcp"})
_JIT = dict(_FLAGS, forceinline=True, cache=True)



def _inline(function):
    return numba.njit(inline="always", **_FLAGS)(function.py_func)

LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e+00
SHIFT = 6755399441055744.0  # 1.5 * 2^52: adding it rounds to an integer held in the low bits
SHIFT_BITS = 0x4338000000000000
P1, P2, P3 = 1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05
P4, P5 = -1.65339022054652515390e-06, 4.13813679705723846039e-08
EXP_OVERFLOW, EXP_UNDERFLOW = 7.09782712893383973096e+02, -7.45133219101941108420e+02


@numba.njit(**_JIT)
def exp(x):
    shifted = x * INV_LN2 + SHIFT
    k = as_bits(shifted) - SHIFT_BITS
    kd = shifted - SHIFT
    hi = x - kd * LN2_HI
    lo = kd * LN2_LO
    r = hi - lo
    t = r * r
    c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))))
    y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
    half = k >> 1
    scaled = y * as_float((half + 1023) << 52) * as_float((k - half + 1023) << 52)
    result = np.inf if x > EXP_OVERFLOW else scaled
    return 0.0 if x < EXP_UNDERFLOW else result


LG1, LG2, LG3 = 6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01
LG4, LG5, LG6, LG7 = 2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01, \
    1.479819860511658591e-01
MANTISSA = 0x000fffffffffffff
TWO54 = 1.80143985094819840000e+16


@numba.njit(**_JIT)
def log(x):
    tiny = x < 2.2250738585072014e-308
    scaled = x * TWO54 if tiny else x
    bits = as_bits(scaled)
    k = (bits >> 52) - (1023 + 54 if tiny else 1023)
    m = bits & MANTISSA
    i = (m + 0x95f6400000000) & 0x10000000000000  # the mantissa is at least sqrt(2)'s
    f = as_float(m | (i ^ 0x3ff0000000000000)) - 1.0
    k = k + (i >> 52)
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (LG2 + w * (LG4 + w * LG6))
    t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)))
    r = t2 + t1
    hfsq = 0.5 * f * f
    dk = float(k)
    result = dk * LN2_HI - ((hfsq - (s * (hfsq + r) + dk * LN2_LO)) - f)
    result = x if x == np.inf else result
    result = -np.inf if x == 0.0 else result
    result = np.nan if x < 0.0 else result
    return x if x != x else result


# expm1 on |x| < 0.5: the Taylor series to x^14 / 14! (relative error < 2e-17 there)
E2, E3, E4, E5, E6 = 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720
E7, E8, E9, E10 = 1 / 5040, 1 / 40320, 1 / 362880, 1 / 3628800
E11, E12, E13, E14 = 1 / 39916800, 1 / 479001600, 1 / 6227020800, 1 / 87178291200


_exp = _inline(exp)
_log = _inline(log)


@numba.njit(**_JIT)
def expm1(x):
    series = x + x * x * (E2 + x * (E3 + x * (E4 + x * (E5 + x * (E6 + x * (E7 + x * (
        E8 + x * (E9 + x * (E10 + x * (E11 + x * (E12 + x * (E13 + x * E14))))))))))))
    result = series if abs(x) < 0.5 else _exp(x) - 1.0
    return x if x == 0.0 else result  # keeps -0.0


_expm1 = _inline(expm1)


@numba.njit(**_JIT)
def log1p(x):
    u = 1.0 + x
    d = u - 1.0
    corrected = _log(u) * (x / d)
    result = x if d == 0.0 else corrected
    return x if x == np.inf else result


@numba.njit(**_JIT)
def tanh(x):
    a = min(abs(x), 22.0)
    e = _expm1(2.0 * a)
    t = e / (e + 2.0)
    result = -t if x < 0.0 else t
    result = x if a < 1e-300 else result  # zeros keep their sign
    return x if x != x else result


@numba.njit(**_JIT)
def logistic(x):
    return 1.0 / (1.0 + _exp(-x))


# --- helpers of the generated code's templates (scalar.py), any float or integer dtype ----------------


@numba.njit(**_JIT)
def logistic_any(x):
    return 1.0 / (1.0 + np.exp(-x))


@numba.njit(**_JIT)
def sinc(x):
    if x == 0:
        return 1.0
    y = np.pi * x
    return np.sin(y) / y


@numba.njit(**_JIT)
def maximum(x, y):
    # NumPy's maximum: NaN if either is NaN, the second operand at a tie (-0.0 against 0.0)
    return x if (x > y or x != x) else y


@numba.njit(**_JIT)
def minimum(x, y):
    return x if (x < y or x != x) else y


@numba.njit(**_JIT)
def floor_divide(x, y):
    return np.floor_divide(x, y)
