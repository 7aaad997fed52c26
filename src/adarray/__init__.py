"""adarray: automatic differentiation of array programs.

    import adarray as ad
    import adarray.numpy as anp

    g = ad.grad(lambda x: anp.sum(anp.sin(x) * x))(np.ones(3))
    print(ad.make_ir(ad.grad(f))(x))    # the gradient program, as text

Functions are traced into a small typed IR; every derivative is a program
transformation; programs are simplified and run by the NumPy backend.
"""
from . import (
    nn,  # noqa: F401  (activations and losses, as jax.nn)
    numpy,  # noqa: F401  (registers the array methods of tracers)
    reversible,  # noqa: F401  (reversible programs: rv.reversible, rv.invert, rv.grad)
    sparse,  # noqa: F401  (CSR and COO matrices with differentiable values)
    tree_util,  # noqa: F401  (pytrees for users: ad.tree_util.tree_map, register_dataclass, ...)
)
from . import primitives as _primitives  # noqa: F401  (registers every primitive)
from .api.grad import grad, jit, jvp, make_ir, value_and_grad, vjp
from .api.jacobians import hessian, hvp, jacfwd, jacrev, linearize
from .api.staging import clear_caches, set_backend
from .api.taylor import jet, taylor
from .api.vmap import vmap
from .api.xla import data_parallel, lower
from .backends import numpy as _numpy_backend  # noqa: F401  (the default backend: implementations, eager calls)
from .control import checkpoint, cond, custom_jvp, custom_vjp, fold, fori_loop, switch, while_loop
from .control.fixed_point import fixed_point
from .core.config import config
from .core.errors import (
    ArgumentError,
    BackendError,
    Error,
    ExecutionError,
    IndexOutOfRangeError,
    KernelSyntaxError,
    NonDifferentiableError,
    ParseError,
    ReversibilityError,
    ShapeError,
    TracingError,
    UnsupportedError,
    VerifyError,
)
from .core.ir import Program
from .core.parser import parse_program
from .kernels import coarsen, kernel
from .numpy import stop_gradient
from .parallel import (
    reduce,
    reduce_by_index,
    scan,
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    segment_sum,
)
from .sparse_jacobians import jacobian_sparsity, sparse_jacobian

__version__ = "0.1.0"

__all__ = [
    "reduce", "reduce_by_index", "scan", "segment_max", "segment_mean", "segment_min", "segment_prod",
    "segment_sum", "checkpoint", "cond", "custom_jvp", "custom_vjp", "fold", "fori_loop", "switch", "while_loop",
    "ArgumentError", "Error", "ExecutionError", "IndexOutOfRangeError", "KernelSyntaxError", "NonDifferentiableError",
    "ParseError", "Program", "ShapeError", "TracingError", "UnsupportedError", "VerifyError",
    "grad", "hessian", "hvp", "jacfwd", "jacrev", "jit", "jvp", "linearize", "make_ir", "parse_program",
    "stop_gradient", "value_and_grad", "vjp", "vmap", "kernel", "coarsen",
    "tree_util",
    "fixed_point",
    "jacobian_sparsity", "jet", "sparse_jacobian", "taylor",
    "clear_caches", "config", "set_backend", "BackendError",
    "data_parallel", "lower",
    "ReversibilityError", "reversible", "sparse",
]
