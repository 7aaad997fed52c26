"""Abstract values: the static type of an array, its shape and dtype.

>>> Aval((3, 4), "float64")
f64[3,4]
"""
from __future__ import annotations

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
    """True for the dtypes we differentiate (real floating point)."""
    return np.issubdtype(np.dtype(dtype), np.floating)


@dataclass(frozen=True)
class Aval:
    """Shape and dtype of an array; all shapes are static."""

    shape: tuple[int, ...]
    dtype: np.dtype

    def __init__(self, shape, dtype):
        object.__setattr__(self, "shape", tuple(int(d) for d in shape))
        object.__setattr__(self, "dtype", np.dtype(dtype))
        if self.dtype not in SHORT_NAMES:
            raise TypeError(f"adarray does not support dtype {self.dtype}")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

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
