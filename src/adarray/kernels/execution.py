"""How kernel calls run: the mode that the engine choice reads (adarray.api.tiering), and whether Numba is there.

`ADARRAY_KERNEL_BACKEND` (or `set_kernel_backend`) = "auto" (the default: calls of NUMBA_MIN_SIZE
elements or more compile with Numba when it is installed), "numpy" (always the masked NumPy
interpreter) or "numba" (always compiled; an error without Numba). The derivative rules read it
too: mixed mode pays off up to a larger arity when kernels compile (settings kernel_arity_numpy and kernel_arity_numba).
"""
from __future__ import annotations

from ..core.config import config
from ..core.engines import numba_available

NUMBA_MIN_SIZE = 1 << 14  # smaller calls are not worth a compiled loop (and tests stay fast)


def set_kernel_backend(mode: str) -> str:
    """Choose how kernels run: 'auto', 'numpy' or 'numba' (an ArgumentError otherwise). Returns the previous mode.

    >>> previous = set_kernel_backend("numpy")  # doctest: +SKIP
    """
    return config.update("kernel_backend", mode)


def kernel_backend() -> str:
    return config.kernel_backend


def numba_enabled() -> bool:
    """Will large kernel calls run compiled by Numba?"""
    return config.kernel_backend != "numpy" and numba_available()
