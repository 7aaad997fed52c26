"""LAPACK for the generated code: SciPy's LAPACK (scipy.linalg.cython_lapack) called from compiled code.

Each routine's address is registered with LLVM under a name of ours (`adarray_dgetrf`, ...) and called as a
Numba external function, so compiled code names the symbol, not an address, and Numba's disk cache keeps
working (the symbols are registered again when this module is imported, before cached code is loaded).

`call(routine, typed, *arguments)` calls the routine of `typed`'s dtype (s, d, c, z): a literal routine name
without its type letter ("getrf", "potrf", ...), then every argument as an array (Fortran passes pointers):
integers as one-element int32 arrays, characters as one-element uint8 arrays, matrices in column-major order.
A real-only routine on a complex dtype (or the reverse) compiles to a TypeError: kernels branch on the dtype
at run time, and Numba types both branches.

    info = np.zeros(1, np.int32)
    call("getrf", a, m, n, a, lda, pivots, info)     # inside numba.njit code

This module imports numba and scipy: only generated code (and its helper modules) imports it.
"""
from __future__ import annotations

import llvmlite.binding as llvm
import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import get_cython_function_address, intrinsic, overload

LETTERS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
           np.dtype(np.complex128): "z"}
# routine (without its type letter) -> number of arguments; complex variants with other names or arities
ROUTINES = {"potrf": 5, "getrf": 6, "gesv": 8, "geqrf": 8, "orgqr": 9, "ungqr": 9, "syevd": 11, "heevd": 13,
            "gesdd_real": 14, "gesdd_complex": 15, "geev_real": 14, "geev_complex": 14, "gees_complex": 15,
            "trsyl": 13}
_REAL_ONLY = {"orgqr", "syevd", "gesdd_real", "geev_real"}
_COMPLEX_ONLY = {"ungqr", "heevd", "gesdd_complex", "geev_complex", "gees_complex"}
_EXTERNALS: dict = {}


def _external(routine: str, letter: str):
    """The external function of LAPACK's `letter + routine` (registered once)."""
    key = (routine, letter)
    if key not in _EXTERNALS:
        name = letter + routine.split("_")[0]
        symbol = f"adarray_{name}"
        llvm.add_symbol(symbol, get_cython_function_address("scipy.linalg.cython_lapack", name))
        _EXTERNALS[key] = types.ExternalFunction(symbol, types.void(*([types.voidptr] * ROUTINES[routine])))
    return _EXTERNALS[key]


for _routine in ROUTINES:
    for _dtype, _letter in LETTERS.items():
        if (_routine in _REAL_ONLY and _letter in "cz") or (_routine in _COMPLEX_ONLY and _letter in "sd"):
            continue
        _external(_routine, _letter)


@intrinsic
def pointer(typingctx, array):
    """The address of an array's data, as a void pointer."""
    def codegen(context, builder, signature, args):
        proxy = cgutils.create_struct_proxy(signature.args[0])(context, builder, value=args[0])
        return builder.bitcast(proxy.data, cgutils.voidptr_t)

    return types.voidptr(array), codegen


def call(routine, typed, *arguments):  # noqa: ARG001 - replaced in compiled code by the overload below
    raise NotImplementedError("lapack.call runs in compiled code only")


@overload(call, prefer_literal=True)
def _call(routine, typed, *arguments):
    if not isinstance(routine, types.StringLiteral):
        return None
    function = _EXTERNALS.get((routine.literal_value, LETTERS[np.dtype(typed.dtype.name)]))
    count = len(arguments[0]) if arguments and isinstance(arguments[0], types.BaseTuple) else len(arguments)
    if function is None:  # a real routine on a complex matrix or the reverse: a branch the caller never takes
        source = "def impl(routine, typed, *arguments):\n    raise TypeError('no LAPACK routine for this dtype')\n"
    else:
        source = ("def impl(routine, typed, *arguments):\n"
                  f"    function({', '.join(f'pointer(arguments[{k}])' for k in range(count))})\n")
    scope = {"function": function, "pointer": pointer}
    exec(source, scope)  # one call of fixed arity per routine (Numba needs the arguments unpacked)
    return scope["impl"]


# --- small arrays of arguments --------------------------------------------------------------------------------


@numba.njit(cache=True, fastmath=False)
def integer(value):
    """A one-element int32 array (Fortran's INTEGER by reference)."""
    out = np.empty(1, np.int32)
    out[0] = value
    return out


@numba.njit(cache=True, fastmath=False)
def character(code):
    """A one-element uint8 array holding the character `code` (its ord)."""
    out = np.empty(1, np.uint8)
    out[0] = code
    return out


@numba.njit(cache=True, fastmath=False)
def to_fortran(matrix, out):
    """Write the (m, n) matrix into `out` of shape (n, m) in C order, i.e. the matrix in Fortran order."""
    m, n = matrix.shape
    for j in range(n):
        for i in range(m):
            out[j, i] = matrix[i, j]


@numba.njit(cache=True, fastmath=False)
def from_fortran(fortran, out):
    """Read a matrix stored in Fortran order (`fortran` of shape (n, m) in C order) into `out` (m, n)."""
    m, n = out.shape
    for i in range(m):
        for j in range(n):
            out[i, j] = fortran[j, i]
