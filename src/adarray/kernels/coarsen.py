"""Coarsening: maximal chains of elementwise equations become one kernel call each.

After `coarsen_program`, ordinary adarray.numpy code differentiates like a hand-written kernel:
the chain's reverse mode is mixed mode (values and partials in one pass, no intermediate arrays
kept for the backward sweep) instead of one taped array operation per primitive (Shen et al.,
"Coarsening optimization for differentiable programming", OOPSLA 2021; section b of the design
notes). `select` (where) joins a chain like any elementwise operation.

The pass walks the equations once, keeping one open group per output shape:
  * an elementwise equation joins the group of its shape; any other group it reads from closes
    first (so a group never waits on a value computed after it: groups stay convex);
  * any other equation closes the groups it reads from, then is copied;
  * `broadcast_in_dim` that only adds axes or stretches ones is not materialised for a group:
    the kernel reads its operand and broadcasts it itself (NumPy rules);
  * a closed group of at least `min_size` equations becomes `kernel[kernel=<its scalar IR>]`
    whose outputs are the group's values used outside it; smaller groups are copied unchanged.

    { lambda a:f64[4] b:f64[4] .            { lambda a:f64[4] b:f64[4] .
        c:f64[4] = sin a                        d:f64[4] = kernel[kernel={ lambda a:f64[] b:f64[] .
        d:f64[4] = mul c b           ->                 c:f64[] = sin a
        e:f64[] = reduce[...] d                         d:f64[] = mul c b
      in (e) }                                        in (d) }, name=coarse0] a b
                                                e:f64[] = reduce[...] d
                                              in (e) }
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.ir import Eqn, Literal, Program, Var
from ..core.pytree import flatten, unflatten
from ..core.types import Aval
from ..passes import eliminate_dead_code, simplify
from ..primitives.structural import reshape_p
from ..tracing import Tracer, eval_program, trace_program
from .primitive import kernel_p


def _is_member(eqn) -> bool:
    return eqn.prim.elementwise and len(eqn.outputs) == 1 and not eqn.prim.multiple_results


def _alias(eqn):
    """(operand, its shape with ones inserted) if the broadcast is NumPy broadcasting, else None."""
    operand, (shape, dims) = eqn.inputs[0], (eqn.params["shape"], eqn.params["dims"])
    if list(dims) != sorted(set(dims)):
        return None
    expanded = [1] * len(shape)
    for size, d in zip(operand.aval.shape, dims):
        expanded[d] = size
    return operand, tuple(expanded)


class _Group:
    def __init__(self, shape, number):
        self.shape, self.number = shape, number
        self.members: list[Eqn] = []
        self.produced: set[int] = set()


class _Coarsener:
    def __init__(self, program: Program, min_size: int):
        self.program, self.min_size = program, min_size
        self.eqns: list[Eqn] = []
        self.open: dict[tuple, _Group] = {}
        self.aliases: dict[int, tuple] = {}  # id(broadcast output) -> (operand, expanded shape, output var)
        self.count = 0
        self.consumers: dict[int, list] = {}
        for eqn in program.eqns:
            for atom in eqn.inputs:
                if isinstance(atom, Var):
                    self.consumers.setdefault(id(atom), []).append(eqn)
        self.outputs = {id(a) for a in program.outputs if isinstance(a, Var)}

    def run(self) -> Program:
        for eqn in self.program.eqns:
            reads = {id(a) for a in eqn.inputs if isinstance(a, Var)}
            target = self.open.get(eqn.outputs[0].aval.shape) if _is_member(eqn) else None
            for group in list(self.open.values()):
                if group is not target and reads & group.produced:
                    self.close(group)
            if _is_member(eqn):
                group = self.open.get(eqn.outputs[0].aval.shape)
                if group is None:
                    group = self.open[eqn.outputs[0].aval.shape] = _Group(eqn.outputs[0].aval.shape, self.count)
                    self.count += 1
                group.members.append(eqn)
                group.produced.add(id(eqn.outputs[0]))
                continue
            if eqn.prim.name == "broadcast_in_dim" and _alias(eqn) is not None:
                operand, expanded = _alias(eqn)
                self.aliases[id(eqn.outputs[0])] = (operand, expanded, eqn.outputs[0])
            self.eqns.append(eqn)
        for group in sorted(self.open.values(), key=lambda g: g.number):
            self.close(group)
        return eliminate_dead_code(Program(self.program.inputs, tuple(self.eqns), self.program.outputs))

    def close(self, group: _Group) -> None:
        del self.open[group.shape]
        if len(group.members) < self.min_size:
            self.eqns.extend(group.members)
            return
        members = {id(e) for e in group.members}
        inputs, keys = [], {}  # external atoms, in order; key -> position
        for eqn in group.members:
            for atom in eqn.inputs:
                if isinstance(atom, Literal) and atom.uniform is not None:
                    continue
                if isinstance(atom, Var) and id(atom) in group.produced:
                    continue
                key = id(atom)
                if key not in keys:
                    keys[key] = len(inputs)
                    inputs.append(atom)
        outputs = [e.outputs[0] for e in group.members
                   if id(e.outputs[0]) in self.outputs
                   or any(id(c) not in members for c in self.consumers.get(id(e.outputs[0]), []))]
        if not outputs:
            return
        program = self._scalar_program(group, inputs, keys, outputs)
        atoms = self._kernel_arguments(inputs, group.shape)
        self.eqns.append(Eqn(kernel_p, tuple(atoms), {"kernel": program, "name": f"coarse{group.number}"},
                             tuple(outputs)))

    def _scalar_program(self, group, inputs, keys, outputs) -> Program:
        def run(*scalars):
            env = {}

            def read(atom):
                if isinstance(atom, Var) and id(atom) in env:
                    return env[id(atom)]
                if isinstance(atom, Literal) and atom.uniform is not None:
                    return np.asarray(atom.uniform, atom.aval.dtype)
                return scalars[keys[id(atom)]]

            for eqn in group.members:
                env[id(eqn.outputs[0])] = eqn.prim.bind(*[read(a) for a in eqn.inputs], **eqn.params)
            return [env[id(v)] for v in outputs]

        program, _, _ = trace_program(run, [Aval((), a.aval.dtype) for a in inputs], f"coarse{group.number}")
        return simplify(program)

    def _kernel_arguments(self, inputs, shape):
        """The group's inputs, broadcast ones replaced by their (reshaped) operands when that keeps the
        kernel's output shape."""
        atoms = list(inputs)
        for position, atom in enumerate(inputs):
            alias = self.aliases.get(id(atom)) if isinstance(atom, Var) else None
            if alias is None:
                continue
            operand, expanded, _ = alias
            if not isinstance(operand, Var) and not isinstance(operand, Literal):
                continue
            if operand.aval.shape != expanded:
                reshaped = Var(Aval(expanded, operand.aval.dtype))
                self.eqns.append(Eqn(reshape_p, (operand,), {"shape": expanded}, (reshaped,)))
                operand = reshaped
            trial = atoms[:position] + [operand] + atoms[position + 1:]
            if tuple(np.broadcast_shapes(*[a.aval.shape for a in trial])) == tuple(shape):
                atoms = trial
        return atoms


def coarsen_program(program: Program, min_size: int = 2) -> Program:
    """`program` with each maximal chain of at least `min_size` elementwise equations as one kernel call."""
    return _Coarsener(program, min_size).run()


def coarsen(fn, min_size: int = 2):
    """`fn` traced, coarsened (coarsen_program) and run: elementwise chains become kernels.

    Use it under any transformation: ad.grad(ad.coarsen(loss)) differentiates each chain in mixed
    mode, with no intermediate arrays kept between the sweeps.

    >>> fast_loss = ad.coarsen(loss)  # doctest: +SKIP
    """
    cache: dict = {}

    @functools.wraps(fn)
    def coarsened(*args):
        leaves, tree = flatten(list(args))
        avals = [leaf.aval if isinstance(leaf, Tracer) else Aval(np.shape(leaf), _dtype(leaf)) for leaf in leaves]
        key = (tree, tuple(avals))
        hit = cache.get(key)
        if hit is None:
            program, out_tree, closure = trace_program(lambda *ls: fn(*unflatten(tree, ls)), avals,
                                                       getattr(fn, "__name__", "coarsened"))
            hit = (coarsen_program(simplify(program), min_size), out_tree, closure)
            if not closure:
                cache[key] = hit
        program, out_tree, closure = hit
        return unflatten(out_tree, eval_program(program, list(leaves) + list(closure)))

    coarsened.ir = lambda *args: _ir(fn, min_size, args)
    return coarsened


def _ir(fn, min_size, args):
    leaves, tree = flatten(list(args))
    avals = [Aval(np.shape(leaf), _dtype(leaf)) for leaf in leaves]
    program, _, _ = trace_program(lambda *ls: fn(*unflatten(tree, ls)), avals, getattr(fn, "__name__", "fn"))
    return coarsen_program(simplify(program), min_size)


def _dtype(value):
    return np.float64 if isinstance(value, float) else np.asarray(value).dtype
