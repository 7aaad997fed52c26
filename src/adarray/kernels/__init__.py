"""Scalar kernels: elementwise Python with data-dependent control flow, differentiated in mixed mode.

    @ad.kernel
    def cell(z, c, f):
        if z == 1.0:
            return c
        return anp.sigmoid(f) * c

`kernel` parses the function (language.py) and traces its scalar IR once per argument dtypes
(lower.py); a call is one `kernel` equation (primitive.py) whose derivatives are source
transformations of that IR (derivative.py); `coarsen` turns chains of elementwise array
operations into kernels (coarsen.py). The NumPy backend interprets kernels with masks
(backends/numpy/kernels.py); with Numba installed they compile to fused loops (backends/numba/),
as `execution.py` chooses.
This layer sits above control flow, whose cond and while primitives the scalar IR uses.
"""
from .coarsen import coarsen, coarsen_program
from .derivative import cotangent_program, partials_program, tangent_program
from .execution import kernel_backend, set_kernel_backend
from .kernel import Kernel, kernel
from .primitive import kernel_p, max_arity
from .samples import attach_sampler as _attach_sampler

_attach_sampler(kernel_p)

__all__ = [
    "Kernel", "coarsen", "coarsen_program", "cotangent_program", "kernel", "kernel_backend",
    "kernel_p", "max_arity", "partials_program", "set_kernel_backend", "tangent_program",
]
