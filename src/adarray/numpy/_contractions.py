"""Contractions, all lowered to the binary einsum primitive: dot, matmul, einsum,
inner, outer, tensordot, vdot."""
from __future__ import annotations

import string

import numpy as np

from ..core.errors import ShapeError
from ..primitives import linalg
from ._complex import conj
from ._core import asvalue, broadcast_shapes, cast, result_dtype, shape
from ._einsum import einsum  # noqa: F401 - re-exported
from ._shape import broadcast_to, ravel

_LETTERS = string.ascii_letters
_BATCH = string.ascii_uppercase


def _promote(a, b):
    a, b = asvalue(a), asvalue(b)
    target = result_dtype(a, b)
    if target == np.bool_:
        target = np.dtype(np.int64)
    return cast(a, target), cast(b, target)


def matmul(a, b):
    """Matrix product with NumPy's rules for 1-d operands and broadcast batch axes."""
    a, b = _promote(a, b)
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        raise ShapeError(f"matmul: operands must not be scalars, got shapes {sa} and {sb}")
    if len(sa) == 1 and len(sb) == 1:
        return _contract("i,i->", a, b, "matmul")
    if len(sa) == 1:
        batch = _BATCH[: len(sb) - 2]
        return _contract(f"j,{batch}jk->{batch}k", a, b, "matmul")
    if len(sb) == 1:
        batch = _BATCH[: len(sa) - 2]
        return _contract(f"{batch}ij,j->{batch}i", a, b, "matmul")
    batch_shape = broadcast_shapes("matmul", sa[:-2], sb[:-2])
    a, b = broadcast_to(a, batch_shape + sa[-2:]), broadcast_to(b, batch_shape + sb[-2:])
    batch = _BATCH[: len(batch_shape)]
    return _contract(f"{batch}ij,{batch}jk->{batch}ik", a, b, "matmul")


def _contract(spec, a, b, op):
    _check(spec, a, b, op)
    return linalg.einsum(spec, a, b)


def _check(spec, a, b, op):
    (sa, sb), _ = linalg.parse_spec(spec)
    sizes = {}
    for letters, operand_shape in ((sa, shape(a)), (sb, shape(b))):
        if len(letters) != len(operand_shape):
            raise ShapeError(f"{op}: operand of shape {operand_shape} does not fit '{letters}'")
        for letter, size in zip(letters, operand_shape):
            if sizes.setdefault(letter, size) != size:
                raise ShapeError(f"{op}: shapes {shape(a)} and {shape(b)} do not align for contraction")


def dot(a, b):
    """numpy.dot: inner product, matrix product, or sum over a's last and b's second-to-last axis."""
    a, b = _promote(a, b)
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        return a * b
    if len(sb) == 1:
        left = _LETTERS[: len(sa)]
        return _contract(f"{left},{left[-1]}->{left[:-1]}", a, b, "dot")
    left = _LETTERS[: len(sa)]
    right = _LETTERS[len(sa): len(sa) + len(sb)]
    right = right[:-2] + left[-1] + right[-1]
    return _contract(f"{left},{right}->{left[:-1] + right[:-2] + right[-1]}", a, b, "dot")


def inner(a, b):
    a, b = _promote(a, b)
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        return a * b
    left = _LETTERS[: len(sa)]
    right = _LETTERS[len(sa): len(sa) + len(sb) - 1] + left[-1]
    return _contract(f"{left},{right}->{left[:-1] + right[:-1]}", a, b, "inner")


def outer(a, b):
    a, b = _promote(ravel(a), ravel(b))
    return _contract("i,j->ij", a, b, "outer")


def vdot(a, b):
    """sum(conj(a) * b) over the flattened arrays (numpy.vdot conjugates its first argument)."""
    return inner(conj(ravel(a)), ravel(b))


def tensordot(a, b, axes=2):
    a, b = _promote(a, b)
    sa, sb = shape(a), shape(b)
    if isinstance(axes, int):
        axes_a, axes_b = list(range(len(sa) - axes, len(sa))), list(range(axes))
    else:
        axes_a, axes_b = [list(np.atleast_1d(x)) for x in axes]
    axes_a = [int(x) % len(sa) for x in axes_a]
    axes_b = [int(x) % len(sb) for x in axes_b]
    left = list(_LETTERS[: len(sa)])
    right = list(_LETTERS[len(sa): len(sa) + len(sb)])
    for i, j in zip(axes_a, axes_b):
        right[j] = left[i]
    out = [c for i, c in enumerate(left) if i not in axes_a] + [c for j, c in enumerate(right) if j not in axes_b]
    return _contract(f"{''.join(left)},{''.join(right)}->{''.join(out)}", a, b, "tensordot")
