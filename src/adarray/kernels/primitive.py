"""kernel[kernel, name]: a scalar kernel applied elementwise, with NumPy broadcasting of its arguments.

`kernel` is the scalar IR (a Program over 0-d values); the call's outputs have the broadcast shape
of the arguments. Rules (Revels et al., "Dynamic automatic differentiation of GPU broadcast
kernels", arXiv 1810.08297, section a of the design notes):
  * jvp: a kernel call of the kernel's forward derivative (one tangent per differentiated input);
  * vjp, mixed mode: the forward sweep is one kernel call computing the values and the per-element
    partials dy/dx_j (no tape of the kernel's operations); the backward sweep multiplies them by the
    cotangent and sums over the axes each input was broadcast along (`unbroadcast`);
  * fused: when the cotangent is known before the forward kernel runs (the output feeds straight
    into a sum, so its cotangent is a broadcast of the sum's; or it is an input of the derivative
    program), the forward call is rewritten into one computing the values and u * dy/dx_j directly,
    so the partials are never stored. This is a rule, not a pass: the backward sweep sees the
    cotangent's producer, and the staged program lets it move the product into the forward call;
  * guard: with more than `max_arity()` partials per element (the measured crossover, see
    benchmarks/mixed_mode.py), reverse mode over the kernel's operations (the scalar IR batched
    over the elements: select for branches, a masked loop for while) replaces mixed mode;
  * batching: a kernel call with the batch axis placed to broadcast (vmap of a kernel is a kernel).
All rules emit kernel calls of derived kernels, so every order of derivative works.
"""
from __future__ import annotations

import numpy as np

from ..core.config import config
from ..core.errors import ShapeError
from ..core.ir import Eqn, Literal, Program, Var
from ..core.primitive import Primitive, Zero, is_zero
from ..core.types import Aval, is_float
from ..passes import prune_nested
from ..primitives import elementwise as ew
from ..primitives.reduce import reduce_sum
from ..primitives.rules import POINTWISE_VJP, aval_of_value, instantiate
from ..primitives.structural import broadcast_to, reshape
from ..tracing import Tracer, current_trace, eval_program
from ..transforms import sparsity, sparsity_nested
from ..transforms.jet import grouped_jet, grouped_series, grouped_values, has_series
from ..transforms.vjp import vjp_program
from ..transforms.vmap import vmap_program
from . import execution
from .derivative import cotangent_program, float_flags, partials_program, scale, tangent_program


def max_arity() -> int:
    """Above this many partials per element, reverse mode (settings kernel_arity_numpy / kernel_arity_numba)."""
    return config.kernel_arity_numba if execution.numba_enabled() else config.kernel_arity_numpy


def broadcast_shape(name, avals) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*[a.shape for a in avals]))
    except ValueError:
        shapes = " ".join(str(a.shape) for a in avals)
        raise ShapeError(f"kernel '{name}': arguments could not be broadcast together with shapes {shapes}") from None


def _kernel_abstract_eval(*avals, kernel, name):
    if len(avals) != len(kernel.inputs):
        raise ShapeError(f"kernel '{name}' takes {len(kernel.inputs)} arguments, got {len(avals)}")
    for position, (aval, expected) in enumerate(zip(avals, kernel.in_avals)):
        if aval.dtype != expected.dtype:
            raise ShapeError(f"kernel '{name}': argument {position} is {aval}, the kernel was traced for "
                             f"{expected.dtype}")
    shape = broadcast_shape(name, avals)
    return [Aval(shape, a.dtype) for a in kernel.out_avals]


kernel_p = Primitive("kernel", _kernel_abstract_eval, multiple_results=True)


def unbroadcast(value, shape):
    """Sum `value` over the axes along which an input of `shape` was broadcast, then give it `shape`."""
    full = aval_of_value(value).shape
    lead = len(full) - len(shape)
    axes = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1 and full[lead + i] != 1]
    if axes:
        value = reduce_sum(value, axes)
    return reshape(value, tuple(shape))


def _suffix(name, what):
    return f"{name}_{what}"


# --- jvp -------------------------------------------------------------------------------------------

def _kernel_jvp(tangents, primals, outputs, *, kernel, name):
    wrt = [is_float(a.dtype) and not is_zero(t) for t, a in zip(tangents, kernel.in_avals)]
    out_flags = float_flags(kernel.out_avals)
    if not any(wrt) or not any(out_flags):
        return [Zero(aval_of_value(o)) for o in outputs]
    derived = tangent_program(kernel, wrt)
    results = iter(kernel_p.bind(*primals, *[t for t, w in zip(tangents, wrt) if w], kernel=derived,
                                 name=_suffix(name, "jvp")))
    return [next(results) if f else Zero(aval_of_value(o)) for o, f in zip(outputs, out_flags)]


# --- vjp: mixed mode -------------------------------------------------------------------------------

class _Residuals:
    """What the forward sweep kept: the partials (or None for reverse mode), and where it ran."""

    def __init__(self, primals, partials=None, eqn=None, trace=None):
        self.primals, self.partials, self.eqn, self.trace = primals, partials, eqn, trace


def _kernel_forward(*args, kernel, name):
    """The forward sweep: values and every partial in one kernel call (no tape of the kernel's ops)."""
    wrt = float_flags(kernel.in_avals)
    derived, pairs = partials_program(kernel, wrt)
    n = len(kernel.outputs)
    if not pairs:
        return kernel_p.bind(*args, kernel=kernel, name=name), _Residuals(args, {})
    if len({j for _, j in pairs}) > max_arity():
        return kernel_p.bind(*args, kernel=kernel, name=name), _Residuals(args)
    outs = kernel_p.bind(*args, kernel=derived, name=_suffix(name, "partials"))
    trace = current_trace()
    eqn = None
    last = trace.eqns[-1] if trace is not None and trace.eqns else None
    if last is not None and isinstance(outs[0], Tracer) and last.outputs[0] is outs[0].variable:
        eqn = last
    return outs[:n], _Residuals(args, dict(zip(pairs, outs[n:])), eqn, trace)


def _kernel_vjp(cotangents, primals, outputs, needs, *, kernel, name, residuals=None):
    needed = [bool(need) and is_float(a.dtype) for need, a in zip(needs, kernel.in_avals)]
    seeded = [f and not is_zero(c) for c, f in zip(cotangents, float_flags(kernel.out_avals))]
    if not any(needed) or not any(seeded):
        return [None] * len(primals)
    shape = aval_of_value(outputs[0]).shape
    reverse = residuals.partials is None if residuals is not None else sum(needed) > max_arity()
    if reverse:
        return _reverse_mode(cotangents, primals, needed, kernel, shape)
    fused = _fused(cotangents, seeded, primals, needed, kernel, name, residuals)
    if fused is None:
        fused = _stored(cotangents, seeded, primals, needed, kernel, name, residuals)
    return [unbroadcast(fused[j], aval_of_value(p).shape) if j in fused else None for j, p in enumerate(primals)]


def _stored(cotangents, seeded, primals, needed, kernel, name, residuals):
    """ct_j = sum_o u_o * P_oj with the partials P the forward sweep stored."""
    if residuals is None:  # called outside vjp_program's forward sweep: compute the partials now
        derived, pairs = partials_program(kernel, float_flags(kernel.in_avals))
        outs = kernel_p.bind(*primals, kernel=derived, name=_suffix(name, "partials"))
        partials = dict(zip(pairs, outs[len(kernel.outputs):]))
    else:
        partials = residuals.partials
    totals = {}
    for (o, j), partial in partials.items():
        if needed[j] and seeded[o]:
            term = scale(cotangents[o], partial)
            totals[j] = term if j not in totals else ew.add(totals[j], term)
    return totals


def _reducible(cotangent):
    """The smallest array that broadcasts to `cotangent` (NumPy rules), if we can see one, else itself."""
    if isinstance(cotangent, np.ndarray):
        index = tuple(slice(0, 1) if stride == 0 else slice(None) for stride in cotangent.strides)
        return np.ascontiguousarray(cotangent[index])
    if isinstance(cotangent, Tracer):
        producer = _producer(cotangent.trace, cotangent.variable)
        if producer is not None and producer.prim.name == "broadcast_in_dim":
            operand = producer.inputs[0]
            shape, dims = producer.params["shape"], producer.params["dims"]
            rank = len(operand.aval.shape)
            if tuple(dims) == tuple(range(len(shape) - rank, len(shape))):
                return operand if isinstance(operand, Literal) else Tracer(operand, cotangent.trace)
    return cotangent


def _producer(trace, var):
    for eqn in reversed(trace.eqns):
        if any(v is var for v in eqn.outputs):
            return eqn
    return None


def _fused(cotangents, seeded, primals, needed, kernel, name, residuals):
    """sum_o u_o dy_o/dx_j computed inside a kernel pass, so the partials are never stored.

    Taken when every seeded cotangent is a constant (grad's seed through a sum: the forward call is
    rewritten to compute the values and the cotangents in one pass) or a broadcast of something
    smaller (the output feeds a sum: the forward call keeps only the values and one more pass,
    in the backward sweep, computes the cotangents). Returns {j: array}, or None for no fusion."""
    if residuals is None or residuals.eqn is None or residuals.trace is not current_trace():
        return None
    trace, eqn = residuals.trace, residuals.eqn
    position = next((i for i, e in enumerate(trace.eqns) if e is eqn), None)
    if position is None:
        return None
    reduced, constant = [], True
    for cotangent, flag in zip(cotangents, seeded):
        if not flag:
            continue
        small = _reducible(cotangent)
        if isinstance(small, Tracer):
            if small is cotangent:
                return None  # a full array computed in the backward sweep: keep the stored partials
            constant = False
        elif not isinstance(small, (np.ndarray, Literal)):
            return None
        reduced.append(small)
    n = len(kernel.outputs)
    if constant:  # one pass computes the values and the cotangents
        derived, used = cotangent_program(kernel, needed, seeded, with_values=True)
        atoms = list(eqn.inputs) + [trace.atom(c) for c in reduced]
        out_avals = kernel_p.abstract_eval(*[a.aval for a in atoms], kernel=derived, name=_suffix(name, "vjp"))
        if tuple(out_avals[:n]) != tuple(v.aval for v in eqn.outputs[:n]):
            return None  # a cotangent wider than the outputs
        new_vars = [Var(a) for a in out_avals[n:]]
        trace.eqns[position] = Eqn(kernel_p, tuple(atoms), {"kernel": derived, "name": _suffix(name, "vjp")},
                                   tuple(eqn.outputs[:n]) + tuple(new_vars))
        return {j: Tracer(v, trace) for j, v in zip(used, new_vars)}
    derived, used = cotangent_program(kernel, needed, seeded, with_values=False)
    trace.eqns[position] = Eqn(kernel_p, eqn.inputs, {"kernel": kernel, "name": name}, tuple(eqn.outputs[:n]))
    results = kernel_p.bind(*primals, *reduced, kernel=derived, name=_suffix(name, "vjp"))
    return dict(zip(used, results))


def _reverse_mode(cotangents, primals, needed, kernel, shape):
    """The guard's fallback: reverse mode over the kernel's operations, batched over the elements."""
    size = int(np.prod(shape, dtype=np.int64))
    results = []
    if size == 0:
        return [ew.zeros_like(instantiate(p)) if n else None for p, n in zip(primals, needed)]
    flat = [reshape(broadcast_to(p, shape), (size,)) for p in primals]
    batched, _ = vmap_program(kernel, [True] * len(primals), size)
    derived = vjp_program(batched, needed)
    seeds = [reshape(broadcast_to(instantiate(c, a), shape), (size,)) if not is_zero(c) else
             np.zeros((size,), a.dtype) for c, a in zip(cotangents, [Aval(shape, o.dtype) for o in kernel.out_avals])]
    values = iter(eval_program(derived, flat + seeds)[len(kernel.outputs):])
    for primal, need in zip(primals, needed):
        results.append(unbroadcast(reshape(next(values), shape), aval_of_value(primal).shape) if need else None)
    return results


def evaluate_by_operations(kernel: Program, args):
    """The kernel's values from array operations (select for branches, masked loops): used when a
    guard rules out the kernel primitive, e.g. a closure over traced arrays or a complex argument."""
    shape = broadcast_shape("kernel", [aval_of_value(a) for a in args])
    size = int(np.prod(shape, dtype=np.int64))
    flat = [reshape(broadcast_to(a, shape), (size,)) for a in args]
    batched, flags = vmap_program(kernel, [True] * len(args), size)
    outs = eval_program(batched, flat)
    return [reshape(o if f else broadcast_to(o, (size,)), shape) for o, f in zip(outs, flags)]


# --- batching: vmap of a kernel call is a kernel call ----------------------------------------------

def _kernel_batch(args, batched, size, *, kernel, name):
    unbatched = [aval_of_value(a).shape[1:] if b else aval_of_value(a).shape for a, b in zip(args, batched)]
    rank = len(np.broadcast_shapes(*unbatched)) if unbatched else 0
    placed = []
    for arg, flag, shape in zip(args, batched, unbatched):
        if flag:  # the batch axis first, then ones, then the argument's axes: it broadcasts
            arg = reshape(arg, (size,) + (1,) * (rank - len(shape)) + tuple(shape))
        placed.append(arg)
    outs = kernel_p.bind(*placed, kernel=kernel, name=name)
    return outs, [True] * len(outs)


kernel_p.jvp, kernel_p.vjp, kernel_p.batch = _kernel_jvp, _kernel_vjp, _kernel_batch
POINTWISE_VJP.add(kernel_p)  # a kernel's vjp is pointwise where its operands are not broadcast
kernel_p.forward_with_residuals = _kernel_forward
kernel_p.prune = lambda eqn, used: prune_nested(eqn, used, "kernel")  # unused outputs leave the kernel


# --- Taylor mode: a kernel call of the kernel's Taylor program (scalar IR again) -------------------------

def _kernel_taylor(series, outputs, *, kernel, name):
    order = len(series[0]) - 1
    wrt = [a.differentiable and has_series(s) for s, a in zip(series, kernel.in_avals)]
    groups, out_groups = [range(len(kernel.inputs))], [range(len(kernel.outputs))]
    program, flags = grouped_jet(kernel, order, wrt, groups, out_groups)
    outs = kernel_p.bind(*grouped_values(series, groups, wrt), kernel=program, name=_suffix(name, f"taylor{order}"))
    result = grouped_series(outs, out_groups, flags, order, [aval_of_value(o) for o in outputs])
    return [s[1:] for s in result]


kernel_p.taylor = _kernel_taylor

sparsity.register(kernel_p, sparsity.Rule("nested", sparsity_nested.kernel_dependence, exact=False))
