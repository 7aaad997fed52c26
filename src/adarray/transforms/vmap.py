"""Batching: vmap_program(program, batched, size) -> (program, out_batched).

Every batched value carries its batch axis first (axis 0); unbatched values
stay as they are, so equations whose inputs are all unbatched are copied
unchanged. Each primitive's `batch` rule gets its arguments, which of them are
batched, and the batch size, and returns its output and whether it is batched.
"""
from __future__ import annotations

from ..core.errors import UnsupportedError
from ..core.ir import Program, walk
from ..tracing import trace_program


def vmap_program(program: Program, batched, size: int):
    """Batch `program` over a leading axis of `size` on the inputs flagged in `batched`."""
    batched = tuple(bool(b) for b in batched)
    avals = [v.aval.update(shape=(size,) + v.aval.shape) if b else v.aval for v, b in zip(program.inputs, batched)]
    out_batched: list[bool] = []

    def batched_fn(*args):
        outs, flags = batch_eqns(program, args, batched, size)
        out_batched.extend(flags)
        return outs

    new_program, _, _ = trace_program(batched_fn, avals, "vmap")
    return new_program, tuple(out_batched)


def batch_eqns(program: Program, args, batched, size: int):
    """Bind `program`'s equations on `args` (batched ones with a leading axis of `size`)."""
    def step(eqn, pairs):
        ins, flags = [value for value, _ in pairs], tuple(flag for _, flag in pairs)
        if not any(flags):
            outs = eqn.prim.bind(*ins, **eqn.params)
            out_flags = [False] * len(eqn.outputs)
        else:
            if eqn.prim.batch is None:
                raise UnsupportedError(f"primitive '{eqn.prim.name}' has no batching rule (vmap)")
            outs, out_flags = eqn.prim.batch(ins, flags, size, **eqn.params)
            if not eqn.prim.multiple_results:
                out_flags = [out_flags]
        return list(zip(outs if eqn.prim.multiple_results else [outs], out_flags))

    outputs = walk(program, list(zip(args, batched)), step, literal=lambda literal: (literal.value, False))
    return [value for value, _ in outputs], [flag for _, flag in outputs]
