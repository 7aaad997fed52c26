"""Complex values and Fourier transforms on the Numba backend.

real, imag, conj and complex are elementwise (`z.real`, `z.imag`, `z.conjugate()`, `complex(x, y)`: the
constructor keeps inf and NaN parts apart, as NumPy's assignment of parts does). fft is opaque: one call of
fftlib.py per transformed axis on (outer, n, inner) views, in numpy.fft's order of axes, with its per-axis
scaling for each norm; complex64 and float32 operands are computed in complex128 and rounded into the output
(numpy.fft computes them in single precision: the two agree to float32's rounding).

    >>> _scale("backward", 4, inverse=True)
    0.25
"""
from __future__ import annotations

import math

import numpy as np

from ...core.types import Aval
from ...primitives import complex as complex_values
from ...primitives import fft
from . import scalar
from .linalg import matrix_dtypes
from .table import elemental, opaque
from .writer import Buffer


@elemental(complex_values.real_p, complex_values.imag_p, complex_values.conj_p, complex_values.complex_p,
           supports=matrix_dtypes)
def _complex_parts(em, eqn, index):
    args = [em.read(atom, index) for atom in eqn.inputs]
    dtype = np.dtype(eqn.outputs[0].aval.dtype)
    if eqn.prim is complex_values.real_p:
        return [f"{args[0]}.real"]
    if eqn.prim is complex_values.imag_p:
        return [f"{args[0]}.imag"]
    if eqn.prim is complex_values.conj_p:
        return [f"{args[0]}.conjugate()"]
    text = f"complex({args[0]}, {args[1]})"
    return [text if dtype == np.complex128 else f"{scalar.type_name(dtype)}({text})"]


def _scale(norm: str, n: int, inverse: bool) -> float:
    """numpy.fft's factor for one axis of length n."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "backward") == inverse:
        return 1.0 / n
    return 1.0


def _view(name: str, shape, axis: int) -> str:
    """`name` (C-contiguous, of `shape`) as (outer, n, inner) around `axis`."""
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    return f"{name}.reshape(({outer}, {shape[axis]}, {inner}))"


@opaque(fft.fft_p, materialized=lambda eqn: [0], supports=matrix_dtypes)
def _fft(em, eqn):
    (x,) = eqn.inputs
    kind, axes, norm = eqn.params["kind"], tuple(eqn.params["axes"]), eqn.params["norm"]
    out_aval = eqn.outputs[0].aval
    out = em.allocate(out_aval, "o")
    current, shape = f"np.ascontiguousarray({em.array(x)})", tuple(x.aval.shape)
    # (axis, operation) in numpy.fft's order: fftn/ifftn last axis first; rfftn the real axis first;
    # irfftn the complex axes first, the real one last
    if kind in ("fft", "ifft"):
        steps = [(axis, kind) for axis in reversed(axes)]
    elif kind == "rfft":
        steps = [(axes[-1], "rfft")] + [(axis, "fft") for axis in reversed(axes[:-1])]
    else:
        steps = [(axis, "ifft") for axis in axes[:-1]] + [(axes[-1], "irfft")]
    for position, (axis, operation) in enumerate(steps):
        last = position == len(steps) - 1
        new_shape = list(shape)
        if operation == "rfft":
            new_shape[axis] = shape[axis] // 2 + 1
        elif operation == "irfft":
            new_shape[axis] = eqn.params["n"]
        new_shape = tuple(new_shape)
        target = out if last else em.allocate(Aval(new_shape, np.complex128), "f")
        length = new_shape[axis] if operation == "irfft" else shape[axis]
        scale = repr(_scale(norm, length, operation in ("ifft", "irfft")))
        source, destination = _view(current, shape, axis), _view(target, new_shape, axis)
        if operation in ("fft", "ifft", "rfft"):
            em.emit(f"_ff.complex_axis({source}, {destination}, {operation == 'ifft'}, {scale})")
        else:
            em.emit(f"_ff.real_inverse_axis({source}, {destination}, {scale})")
        current, shape = target, new_shape
    return [Buffer(out)]
