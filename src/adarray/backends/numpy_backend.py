"""The reference backend: an interpreter of programs over NumPy arrays.

`compile_program(program)` resolves every equation to its NumPy function once,
so a call only runs the list of steps. Each primitive's NumPy implementation is
one function here, attached to the primitive as `impl` (used for eager calls on
plain arrays too).
"""
from __future__ import annotations

import numpy as np
import scipy.special

from ..core.errors import ExecutionError
from ..core.ir import Literal, Program, dead_after
from ..core.primitive import IMPLS
from ..primitives.indexing import numpy_index
from ..primitives.linalg import parse_spec
from ..primitives.structural import slice_indices


def impl(name):
    def register(fn):
        IMPLS[name] = fn
        return fn

    return register


def _direct(name, fn):
    impl(name)(lambda *args, **params: fn(*args))


for _name, _fn in {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "neg": np.negative,
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "logistic": scipy.special.expit,
    "erf": scipy.special.erf, "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "round": np.round, "pow": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "arctan2": np.arctan2, "logaddexp": np.logaddexp, "rem": np.remainder,
    "floor_divide": np.floor_divide, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "logical_xor": np.logical_xor, "logical_not": np.logical_not,
    "isfinite": np.isfinite, "select": np.where, "stop_gradient": np.asarray,
    "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh, "log2": np.log2, "log10": np.log10,
    "exp2": np.exp2, "sinc": np.sinc, "hypot": np.hypot,
}.items():
    _direct(_name, _fn)


@impl("safe_mul")
def _safe_mul(x, y):
    return np.where(x == 0, np.zeros((), np.result_type(x, y)), np.multiply(x, y))


@impl("integer_pow")
def _integer_pow(x, *, n):
    if n == 2:
        return x * x
    if n < 0:
        return 1.0 / np.power(x, -n)
    return np.power(x, n)


@impl("convert")
def _convert(x, *, dtype):
    return np.asarray(x).astype(dtype)


@impl("broadcast_in_dim")
def _broadcast_in_dim(x, *, shape, dims):
    expanded = [1] * len(shape)
    for size, d in zip(np.shape(x), dims):
        expanded[d] = size
    return np.broadcast_to(np.reshape(x, expanded), shape)


@impl("reshape")
def _reshape(x, *, shape):
    return np.reshape(x, shape)


@impl("transpose")
def _transpose(x, *, perm):
    return np.transpose(x, perm)


@impl("slice")
def _slice(x, *, starts, stops, steps):
    return np.asarray(x)[slice_indices(starts, stops, steps)]


@impl("unslice")
def _unslice(x, *, shape, starts, stops, steps):
    out = np.zeros(shape, np.asarray(x).dtype)
    out[slice_indices(starts, stops, steps)] = x
    return out


@impl("concatenate")
def _concatenate(*xs, axis):
    return np.concatenate(xs, axis=axis)


_REDUCERS = {"add": np.sum, "mul": np.prod, "max": np.max, "min": np.min, "and": np.all, "or": np.any}


@impl("reduce")
def _reduce(x, *, op, axes):
    return np.asarray(_REDUCERS[op](x, axis=axes))


@impl("product_others")
def _product_others(x, *, axes):
    """Zero counting: no zero -> prod / x; one zero -> the product of the others at the zero; more -> 0."""
    x = np.asarray(x)
    is_zero = x == 0
    if not is_zero.any():  # the common case, in one pass
        return (np.prod(x, axis=axes, keepdims=True) / x).astype(x.dtype)
    zeros = np.sum(is_zero, axis=axes, keepdims=True)
    safe = np.where(is_zero, 1, x)
    product = np.prod(safe, axis=axes, keepdims=True)
    return np.where(zeros == 0, product / safe, np.where((zeros == 1) & is_zero, product, 0)).astype(x.dtype)


@impl("argmax")
def _argmax(x, *, axis):
    return np.argmax(x, axis=axis)


@impl("argmin")
def _argmin(x, *, axis):
    return np.argmin(x, axis=axis)


_ACCUMULATE = {"add": np.cumsum, "mul": np.cumprod, "max": np.maximum.accumulate, "min": np.minimum.accumulate}


@impl("scan")
def _scan(x, *, op, axis, reverse):
    accumulate = _ACCUMULATE[op]
    if reverse:
        return np.flip(accumulate(np.flip(x, axis), axis=axis), axis)
    return accumulate(x, axis=axis)


@impl("linear_recurrence")
def _linear_recurrence(a, b, *, axis, reverse):
    """s_k = a_k s_(k-1) + b_k in O(n) work and about 2 sqrt(n) vectorised steps: each block of
    length ~sqrt(n) is solved from zero (a loop over the positions in a block, all blocks at once),
    then the blocks' end values are chained (a loop over blocks) and fed back in."""
    a, b = np.moveaxis(np.asarray(a), axis, 0), np.moveaxis(np.asarray(b), axis, 0)
    if reverse:
        a, b = a[::-1], b[::-1]
    n = b.shape[0]
    if n == 0:
        return np.ascontiguousarray(np.moveaxis(b.copy(), 0, axis))
    width = max(1, int(np.ceil(np.sqrt(n))))
    count = -(-n // width)
    pad = count * width - n
    if pad:  # a = 1, b = 0 leaves the values before it unchanged
        a = np.concatenate([a, np.ones((pad,) + a.shape[1:], a.dtype)])
        b = np.concatenate([b, np.zeros((pad,) + b.shape[1:], b.dtype)])
    rest = b.shape[1:]
    # Laid out (position in block, block, ...): each step of the loop over positions reads and
    # writes contiguous memory, in place, so these must be fresh copies (never views of the inputs).
    gain = np.array(np.swapaxes(a.reshape((count, width) + rest), 0, 1), order="C")
    local = np.array(np.swapaxes(b.reshape((count, width) + rest), 0, 1), order="C")
    step = np.empty_like(local[0])
    for j in range(1, width):
        np.multiply(gain[j], local[j - 1], out=step)
        local[j] += step
        gain[j] *= gain[j - 1]
    starts = np.empty_like(local[0])
    incoming = np.zeros(rest, b.dtype)
    for k in range(count):
        starts[k] = incoming
        incoming = gain[-1, k] * incoming + local[-1, k]
    local += gain * starts[None]
    values = np.swapaxes(local, 0, 1).reshape((count * width,) + rest)[:n]
    if reverse:
        values = values[::-1]
    return np.ascontiguousarray(np.moveaxis(values, 0, axis))


@impl("matrix_recurrence")
def _matrix_recurrence(a, b, *, reverse):
    """Doubling on pairs (A, b): (A1, b1) then (A2, b2) composes to (A2 A1, A2 b1 + b2)."""
    axis = np.ndim(b) - 2
    a, b = np.asarray(a), np.asarray(b)
    if reverse:
        a, b = np.flip(a, axis), np.flip(b, axis)
    matrices, offsets = a.copy(), b.copy()
    n, step = b.shape[axis], 1
    later = (slice(None),) * axis
    while step < n:
        head, tail = later + (slice(step, None),), later + (slice(None, n - step),)
        offsets[head] = offsets[head] + np.einsum("...ij,...j->...i", matrices[head], offsets[tail])
        matrices[head] = matrices[head] @ matrices[tail]
        step *= 2
    if reverse:
        offsets = np.flip(offsets, axis)
    return np.ascontiguousarray(offsets)


@impl("argsort")
def _argsort(x, *, axis):
    return np.argsort(x, axis=axis, kind="stable")


@impl("gather")
def _gather(x, *indices, spec):
    return np.asarray(x)[numpy_index(spec, indices)]


_SCATTERS = {"add": np.add.at, "mul": np.multiply.at, "min": np.minimum.at, "max": np.maximum.at}


@impl("scatter")
def _scatter(x, updates, *indices, spec, op):
    out = np.array(x, copy=True)
    index = numpy_index(spec, indices)
    if op == "set":
        out[index] = updates
    else:
        _SCATTERS[op](out, index, updates)
    return out


@impl("einsum")
def _einsum(a, b, *, spec):
    (sa, sb), so = parse_spec(spec)
    if sa and sa[-1:] == sb[:1] and sa[-1] not in so and len(sb) <= 2 and so == sa[:-1] + sb[1:]:
        return np.matmul(a, b) if len(sa) <= 2 else np.tensordot(a, b, axes=1)
    return np.einsum(spec, a, b, optimize=True)


def compile_program(program: Program):
    """A Python callable running `program` on NumPy arrays."""
    slots = {id(v): i for i, v in enumerate(program.inputs)}
    constants: list = []

    def slot(atom):
        if isinstance(atom, Literal):
            constants.append(atom.value)
            return -len(constants)
        return slots[id(atom)]

    steps = []
    for eqn in program.eqns:
        fn = IMPLS.get(eqn.prim.name)
        if fn is None:
            raise ExecutionError(f"the NumPy backend has no implementation of '{eqn.prim.name}'")
        in_slots = tuple(slot(a) for a in eqn.inputs)
        out_slots = []
        for var in eqn.outputs:
            slots[id(var)] = len(slots)
            out_slots.append(slots[id(var)])
        steps.append((fn, in_slots, tuple(out_slots) if eqn.prim.multiple_results else out_slots[0], eqn.params, eqn))
    out_slots = tuple(slot(a) for a in program.outputs)
    size = len(slots)
    constants.reverse()  # slot -k is constants[len - k] after reversal: index with -k
    # Each value is dropped after its last use: holding every intermediate until the program ends
    # would make peak memory the sum of all arrays, and rematerialisation (checkpoint) save nothing.
    releases = [tuple(slots[id(v)] for v in dead) for dead in dead_after(program)]
    steps = [step + (release,) for step, release in zip(steps, releases)]

    def run(*args):
        env = list(args) + [None] * (size - len(args)) + constants
        with np.errstate(all="ignore"):  # NaN and inf are values, not errors
            _execute(steps, env)
        return [env[i] for i in out_slots]

    return run


def _execute(steps, env) -> None:
    for fn, ins, outs, params, eqn, release in steps:
        try:
            result = fn(*[env[i] for i in ins], **params)
        except IndexError as error:
            raise ExecutionError(f"index out of range in `{eqn!r}`: {error}") from None
        if isinstance(outs, int):
            env[outs] = result
        else:
            for o, r in zip(outs, result):
                env[o] = r
        for i in release:
            env[i] = None


from . import (  # noqa: E402  (these modules register the implementations of their families)
    numpy_control,  # noqa: F401  (control flow)
    numpy_fixed_point,  # noqa: F401  (fixed_point's iteration)
    numpy_linalg,  # noqa: F401  (linear algebra)
    numpy_reversible,  # noqa: F401  (reversible programs)
    numpy_sort,  # noqa: F401  (searchsorted)
    numpy_special,  # noqa: F401  (special functions)
)
