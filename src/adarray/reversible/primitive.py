"""reversible[program, batch] and reversible_grad[program, batch]: a reversible function as one IR equation.

`program` is the typed statement IR (ir.py; it prints and parses as a param), `batch` the number of leading
batch axes every argument carries (vmap). reversible: (args) -> (args, updated). reversible_grad:
(args, seeds for the float args) -> the float args' cotangents, by reverse computing (no stored states).

    reversible.jvp         reversible[T](x, x')[tangent part], T = tangent_program(P): forward mode
    reversible.vjp         reversible_grad[P](x, y^)
    reversible_grad.jvp    G(x, y^) = J(x)^T y^, so dG = J^T dy^ + grad_x <y^, J(x) dx>
                           = reversible_grad[T](x, dx; dy^, y^)[cotangent of x]
    reversible_grad.vjp    for a cotangent w of G: y^ gets J w = reversible[T](x, w)[tangent part], and x gets
                           grad_x <y^, J(x) w> = reversible_grad[T](x, w; 0, y^)[cotangent of x]
    batching               broadcast every argument along the new axis, batch + 1
Every rule binds the same two primitives on derived programs, so derivatives of every order work and
second-order reverse mode is again reverse computing, with memory independent of the iteration count.
"""
from __future__ import annotations

import functools

from ..core.errors import ShapeError
from ..core.primitive import Primitive, Zero, is_zero
from ..primitives.rules import aval_of_value, batch_all, instantiate
from ..primitives.taylor import FROM_JVP
from ..transforms import sparsity
from .derivatives import adjoint_program, tangent_program
from .specialize import differentiable, kind_of_dtype

tangent_of = functools.lru_cache(maxsize=512)(tangent_program)
adjoint_of = functools.lru_cache(maxsize=512)(adjoint_program)


def float_flags(program) -> list[bool]:
    """Which arguments of the entry function carry tangents and cotangents (floats and complex values)."""
    name, args, types = program[0][:3]
    table = {v: k for v, k, _ in types}
    return [differentiable(table[a]) for a in args]


def _check_arguments(name, avals, program, batch):
    entry, args, types = program[0][0], program[0][1], {v: (k, r) for v, k, r in program[0][2]}
    if len(avals) != len(args):
        raise ShapeError(f"{name}: '{entry}' takes {len(args)} arguments ({', '.join(args)}), got {len(avals)}")
    lead = None
    for arg, aval in zip(args, avals):
        kind, rank = types[arg]
        if kind_of_dtype(aval.dtype) != kind or len(aval.shape) != rank + batch:
            raise ShapeError(f"{name}: argument '{arg}' of '{entry}' is {aval}; the program was specialised for a "
                             f"{ {'f': 'float', 'c': 'complex', 'i': 'integer', 'b': 'boolean'}[kind]} of {rank} axes"
                             + (f" under {batch} batch axes" if batch else ""))
        if batch:
            if lead is not None and tuple(aval.shape[:batch]) != lead:
                raise ShapeError(f"{name}: the batch axes of '{entry}''s arguments differ: {lead} and "
                                 f"{tuple(aval.shape[:batch])}")
            lead = tuple(aval.shape[:batch])


def _reversible_abstract_eval(*avals, program, batch):
    _check_arguments("reversible", avals, program, batch)
    return list(avals)


def _grad_abstract_eval(*avals, program, batch):
    flags = float_flags(program)
    n = len(flags)
    _check_arguments("reversible_grad", avals[:n], program, batch)
    floats = [a for a, f in zip(avals[:n], flags) if f]
    seeds = avals[n:]
    if len(seeds) != len(floats) or any(s.shape != a.shape or kind_of_dtype(s.dtype) != kind_of_dtype(a.dtype)
                                        for s, a in zip(seeds, floats)):
        raise ShapeError(f"reversible_grad: '{program[0][0]}' needs one float seed per float argument "
                         f"({', '.join(map(str, floats))}), got ({', '.join(map(str, seeds))})")
    return [a.update(dtype=s.dtype) for a, s in zip(floats, seeds)]


reversible_p = Primitive("reversible", _reversible_abstract_eval, multiple_results=True)
reversible_grad_p = Primitive("reversible_grad", _grad_abstract_eval, multiple_results=True)


def _materialise(values, primals, flags):
    return [instantiate(v, aval_of_value(p)) for v, p, f in zip(values, primals, flags) if f]


# --- reversible ------------------------------------------------------------------------------------------

def _reversible_jvp(tangents, primals, outputs, *, program, batch):
    flags = float_flags(program)
    if not any(f and not is_zero(t) for t, f in zip(tangents, flags)):
        return [Zero(aval_of_value(o)) for o in outputs]
    outs = reversible_p.bind(*primals, *_materialise(tangents, primals, flags), program=tangent_of(program),
                             batch=batch)
    rest = iter(outs[len(primals):])
    return [next(rest) if f else Zero(aval_of_value(o)) for o, f in zip(outputs, flags)]


def _reversible_vjp(cotangents, primals, outputs, needs, *, program, batch):
    flags = float_flags(program)
    if not any(f and n for f, n in zip(flags, needs)):
        return [None] * len(primals)
    bars = iter(reversible_grad_p.bind(*primals, *_materialise(cotangents, primals, flags), program=program,
                                       batch=batch))
    out = []
    for need, flag in zip(needs, flags):
        bar = next(bars) if flag else None
        out.append(bar if need else None)
    return out


def _reversible_batch(args, batched, size, *, program, batch):
    outs = reversible_p.bind(*batch_all(args, batched, size), program=program, batch=batch + 1)
    return outs, [True] * len(outs)


# --- reversible_grad --------------------------------------------------------------------------------------

def _grad_jvp(tangents, primals, outputs, *, program, batch):
    flags = float_flags(program)
    n = len(flags)
    x, seeds = primals[:n], primals[n:]
    dx, dseeds = tangents[:n], tangents[n:]
    dseeds = [instantiate(t, aval_of_value(s)) for t, s in zip(dseeds, seeds)]
    if not any(f and not is_zero(t) for t, f in zip(dx, flags)):  # G is linear in the seeds
        return list(reversible_grad_p.bind(*x, *dseeds, program=program, batch=batch))
    outs = reversible_grad_p.bind(*x, *_materialise(dx, x, flags), *dseeds, *seeds, program=tangent_of(program),
                                  batch=batch)
    return list(outs[:len(seeds)])


def _grad_vjp(cotangents, primals, outputs, needs, *, program, batch):
    flags = float_flags(program)
    n = len(flags)
    x, seeds = primals[:n], primals[n:]
    w = [instantiate(c, aval_of_value(s)) for c, s in zip(cotangents, seeds)]
    tangent = tangent_of(program)
    result = [None] * len(primals)
    if any(need and f for need, f in zip(needs[:n], flags)):
        zeros = [instantiate(Zero(aval_of_value(s))) for s in seeds]
        bars = iter(reversible_grad_p.bind(*x, *w, *zeros, *seeds, program=tangent, batch=batch)[:len(seeds)])
        for k, (need, flag) in enumerate(zip(needs[:n], flags)):
            bar = next(bars) if flag else None
            result[k] = bar if need else None
    if any(needs[n:]):
        pushed = reversible_p.bind(*x, *w, program=tangent, batch=batch)[n:]
        for k, need in enumerate(needs[n:]):
            result[n + k] = pushed[k] if need else None
    return result


def _grad_batch(args, batched, size, *, program, batch):
    outs = reversible_grad_p.bind(*batch_all(args, batched, size), program=program, batch=batch + 1)
    return outs, [True] * len(outs)


reversible_p.jvp, reversible_p.vjp, reversible_p.batch = _reversible_jvp, _reversible_vjp, _reversible_batch
reversible_grad_p.jvp, reversible_grad_p.vjp, reversible_grad_p.batch = _grad_jvp, _grad_vjp, _grad_batch


def _set_taylor_rules():
    """Taylor mode (ad.jet, ad.taylor): the series of the jvp rules. Exact, but each order binds the
    primitive on the tangent program of the previous one, so order K runs a program with 2^K times the
    float arguments (as while_grad and fixed_point; a Taylor transformation of the statement IR would
    make it O(K^2))."""
    reversible_p.taylor = reversible_grad_p.taylor = FROM_JVP


_set_taylor_rules()

# Every output may depend on every input (conservative).
sparsity.register([reversible_p, reversible_grad_p], sparsity.DENSE)
