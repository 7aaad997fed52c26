"""Abstract values: the static type of an array, its shape and dtype.

>>> Aval((3, 4), "float64")
f64[3,4]
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SHORT_NAMES = {
    np.dtype("float64"): "f64",
    np.dtype("float32"): "f32",
    np.dtype("float16"): "f16",
    np.dtype("int64"): "i64",
    np.dtype("int32"): "i32",
    np.dtype("int16"): "i16",
    np.dtype("int8"): "i8",
    np.dtype("uint8"): "u8",
    np.dtype("uint32"): "u32",
    np.dtype("uint64"): "u64",
    np.dtype("bool"): "bool",
    np.dtype("complex128"): "c128",
    np.dtype("complex64"): "c64",
}
DTYPES_BY_NAME = {name: dtype for dtype, name in SHORT_NAMES.items()}


def dtype_name(dtype) -> str:
    return SHORT_NAMES[np.dtype(dtype)]


def is_float(dtype) -> bool:
    """True for the dtypes we differentiate: floating point, real or complex.

    Complex values follow JAX's conventions: a tangent of a complex value is complex, and reverse
    mode is the linear transpose under the real pairing <u, v> = Re(sum u * v) (no conjugation), so
    the gradient of a real f(z) is df/dx - i df/dy and that of a holomorphic f is f'(z).
    """
    return np.dtype(dtype).kind in "fc"  # np.issubdtype(..., np.inexact), 5x cheaper (tracing asks often)


def is_complex(dtype) -> bool:
    """True for complex64 and complex128."""
    return np.dtype(dtype).kind == "c"


def is_real_float(dtype) -> bool:
    """True for the real floating-point dtypes (float16, float32, float64)."""
    return np.dtype(dtype).kind == "f"


def real_dtype(dtype) -> np.dtype:
    """The real dtype of the same precision: complex128 -> float64, complex64 -> float32; others unchanged."""
    dtype = np.dtype(dtype)
    return np.finfo(dtype).dtype if is_complex(dtype) else dtype


def complex_dtype(dtype) -> np.dtype:
    """The complex dtype of the same precision: float32 -> complex64, float64 (and the rest) -> complex128."""
    dtype = np.dtype(dtype)
    if is_complex(dtype):
        return dtype
    return np.dtype(np.complex64) if dtype in (np.float32, np.float16) else np.dtype(np.complex128)


_DTYPE_TYPES = frozenset(type(np.dtype(name)) for name in SHORT_NAMES)


@dataclass(frozen=True)
class Aval:
    """Shape and dtype of an array; all shapes are static."""

    shape: tuple[int, ...]
    dtype: np.dtype

    def __init__(self, shape, dtype):
        # Tracing builds several avals per operation: the common case (a tuple of ints, a dtype) is kept cheap.
        if type(shape) is not tuple or not all(type(d) is int for d in shape):
            shape = tuple(int(d) for d in shape)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", dtype if type(dtype) in _DTYPE_TYPES else np.dtype(dtype))
        if self.dtype not in SHORT_NAMES:
            raise TypeError(f"adarray does not support dtype {self.dtype}")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def differentiable(self) -> bool:
        return is_float(self.dtype)

    def update(self, shape=None, dtype=None) -> Aval:
        return Aval(self.shape if shape is None else shape, self.dtype if dtype is None else dtype)

    def __repr__(self) -> str:
        return f"{dtype_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    __str__ = __repr__


def aval_of(value) -> Aval:
    """The aval of a concrete value (NumPy array or Python scalar)."""
    array = np.asarray(value)
    if isinstance(value, float) or array.dtype == np.float64:
        return Aval(array.shape, np.float64)
    return Aval(array.shape, array.dtype)
