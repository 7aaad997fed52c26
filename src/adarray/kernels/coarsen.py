"""Coarsening: maximal chains of elementwise equations become one kernel call each.

After `coarsen_program`, ordinary adarray.numpy code differentiates like a hand-written kernel:
the chain's reverse mode is mixed mode (values and partials in one pass, no intermediate arrays
kept for the backward sweep) instead of one taped array operation per primitive (Shen et al.,
"Coarsening optimization for differentiable programming", OOPSLA 2021; section b of the design
notes). `select` (where) joins a chain like any elementwise operation: in the kernel it is the
phi of the phi-calculus, and its partials are selected too, so a NaN in the arm not taken (sqrt
or log of a negative number) never reaches the gradient.

The pass walks the equations once, in a topological order it chooses: a ready elementwise
equation first, else a ready other equation that reads no open group, else the first ready one
(traced order is an accident: a reduction that reads a chain should not split it from
elementwise work that does not depend on the reduction). It keeps one open group per shape:
  * an elementwise equation joins the group of its shape; any other group it reads from closes
    first (so a group never waits on a value computed after it: groups stay convex);
  * any other equation closes the groups it reads from, then is copied;
  * `broadcast_in_dim` that only adds axes or stretches ones is not materialised for a group:
    the kernel reads its operand and broadcasts it itself (NumPy rules);
  * a closed group of at least `min_size` equations becomes `kernel[kernel=<its scalar IR>]`
    whose outputs are the group's values used outside it (a value with another use stays
    materialised, so no work is duplicated); smaller groups are copied unchanged.
Groups are per shape because an elementwise value of a smaller shape that is broadcast into a
chain would be recomputed once per element of the larger shape inside the kernel.

    { lambda a:f64[4] b:f64[4] .            { lambda a:f64[4] b:f64[4] .
        c:f64[4] = sin a                        c:f64[4] = kernel[kernel={ lambda a:f64[] b:f64[] .
        d:f64[4] = mul c b           ->                 c:f64[] = sin a
        e:f64[] = reduce[...] d                         d:f64[] = mul c b
      in (e) }                                        in (d) }, name=coarse0] a b
                                                d:f64[] = reduce[...] c
                                              in (d) }

Nested programs (loop bodies, cond branches) are left as they are.
"""
from __future__ import annotations

import bisect
import functools
import heapq

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
    """(operand, the shape NumPy broadcasting needs it in) if the broadcast is NumPy broadcasting, else None.

    broadcast_in_dim[dims=(0,), shape=(4, 3)] of an f64[4] is NumPy broadcasting of the f64[4, 1]."""
    operand, shape, dims = eqn.inputs[0], eqn.params["shape"], eqn.params["dims"]
    if list(dims) != sorted(set(dims)):
        return None  # the broadcast also transposes
    expanded = [1] * len(shape)
    for size, d in zip(operand.aval.shape, dims):
        expanded[d] = size
    while expanded and expanded[0] == 1 and len(expanded) > len(operand.aval.shape):
        expanded.pop(0)  # NumPy supplies leading axes: a scalar stays 0-d, no reshape to (1, 1)
    return operand, tuple(expanded)


def _inlined(atom):
    """A literal that the scalar program can hold as a 0-d constant, or None (a kernel argument)."""
    if not isinstance(atom, Literal):
        return None
    if atom.uniform is not None:
        return np.asarray(atom.uniform, atom.aval.dtype)
    if atom.value.size == 0:  # no element reads it: any value does
        return np.zeros((), atom.aval.dtype)
    return None


def _key(atom):
    """Identity of a kernel argument: the variable, or a literal's contents (one argument per constant)."""
    if isinstance(atom, Var):
        return id(atom)
    return ("literal", atom.aval.shape, atom.aval.dtype.str, atom.value.tobytes())


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
        self.aliases: dict[int, tuple] = {}  # id(broadcast output) -> (operand, shape NumPy needs)
        self.count = 0
        self.consumers: dict[int, list] = {}
        for eqn in program.eqns:
            for atom in eqn.inputs:
                if isinstance(atom, Var):
                    self.consumers.setdefault(id(atom), []).append(eqn)
        self.outputs = {id(a) for a in program.outputs if isinstance(a, Var)}

    def run(self) -> Program:
        """Visit the equations in a topological order of our choosing (see the module docstring)."""
        eqns = self.program.eqns
        producer = {id(v): eqn for eqn in eqns for v in eqn.outputs}
        waiting, users = {}, {}  # id(eqn) -> producers not yet visited; id(eqn) -> equations reading it
        for eqn in eqns:
            before = {id(producer[id(a)]) for a in eqn.inputs if isinstance(a, Var) and id(a) in producer}
            waiting[id(eqn)] = len(before)
            for key in before:
                users.setdefault(key, []).append(eqn)
        members: list = []  # ready elementwise equations: a heap of (original position, eqn)
        others: list = []   # ready other equations, sorted by original position
        position = {id(eqn): i for i, eqn in enumerate(eqns)}

        def ready(eqn):
            if _is_member(eqn):
                heapq.heappush(members, (position[id(eqn)], eqn))
            else:
                bisect.insort(others, (position[id(eqn)], eqn), key=lambda item: item[0])

        for eqn in eqns:
            if not waiting[id(eqn)]:
                ready(eqn)
        while members or others:
            eqn = heapq.heappop(members)[1] if members else self._pop_other(others)
            self.visit(eqn)
            for user in users.get(id(eqn), ()):
                waiting[id(user)] -= 1
                if not waiting[id(user)]:
                    ready(user)
        for group in sorted(self.open.values(), key=lambda g: g.number):
            self.close(group)  # the groups still open do not read each other (that would have closed one)
        return eliminate_dead_code(Program(self.program.inputs, tuple(self.eqns), self.program.outputs))

    def _pop_other(self, others):
        """The first ready non-elementwise equation that reads no open group (it cuts no chain), else the
        first one: no elementwise equation is ready, so some chain must end here."""
        for index, (_, eqn) in enumerate(others):
            reads = {id(a) for a in eqn.inputs if isinstance(a, Var)}
            if not any(reads & group.produced for group in self.open.values()):
                return others.pop(index)[1]
        return others.pop(0)[1]

    def visit(self, eqn) -> None:
        """Add `eqn` to the group of its shape (elementwise) or copy it, closing the groups it reads."""
        reads = {id(a) for a in eqn.inputs if isinstance(a, Var)}
        shape = eqn.outputs[0].aval.shape
        target = self.open.get(shape) if _is_member(eqn) else None
        for group in list(self.open.values()):
            if group is not target and reads & group.produced:
                self.close(group)
        if _is_member(eqn):
            group = self.open.get(shape)
            if group is None:
                group = self.open[shape] = _Group(shape, self.count)
                self.count += 1
            group.members.append(eqn)
            group.produced.add(id(eqn.outputs[0]))
            return
        if eqn.prim.name == "broadcast_in_dim":
            alias = _alias(eqn)
            if alias is not None:
                self.aliases[id(eqn.outputs[0])] = alias
        self.eqns.append(eqn)

    def close(self, group: _Group) -> None:
        del self.open[group.shape]
        if len(group.members) < self.min_size:
            self.eqns.extend(group.members)
            return
        members = {id(e) for e in group.members}
        inputs, positions = [], {}  # the group's external atoms in order; key -> position
        for eqn in group.members:
            for atom in eqn.inputs:
                if _inlined(atom) is not None or (isinstance(atom, Var) and id(atom) in group.produced):
                    continue
                key = _key(atom)
                if key not in positions:
                    positions[key] = len(inputs)
                    inputs.append(atom)
        outputs = [e.outputs[0] for e in group.members
                   if id(e.outputs[0]) in self.outputs
                   or any(id(c) not in members for c in self.consumers.get(id(e.outputs[0]), []))]
        if not outputs:
            return  # nothing outside reads the chain: dead code
        if not inputs:  # constants only (simplify folds them): no argument would give the kernel its shape
            self.eqns.extend(group.members)
            return
        program = self._scalar_program(group, inputs, positions, outputs)
        atoms = self._kernel_arguments(inputs, group.shape)
        self.eqns.append(Eqn(kernel_p, tuple(atoms), {"kernel": program, "name": f"coarse{group.number}"},
                             tuple(outputs)))

    def _scalar_program(self, group, inputs, positions, outputs) -> Program:
        """The chain's scalar IR: the members re-bound on 0-d values, one input per kernel argument."""
        def run(*scalars):
            env = {}

            def read(atom):
                if isinstance(atom, Var) and id(atom) in env:
                    return env[id(atom)]
                constant = _inlined(atom)
                return constant if constant is not None else scalars[positions[_key(atom)]]

            for eqn in group.members:
                env[id(eqn.outputs[0])] = eqn.prim.bind(*[read(a) for a in eqn.inputs], **eqn.params)
            return [env[id(v)] for v in outputs]

        program, _, _ = trace_program(run, [Aval((), a.aval.dtype) for a in inputs], f"coarse{group.number}")
        return simplify(program)

    def _kernel_arguments(self, inputs, shape):
        """The group's inputs, broadcasts replaced by their operands (reshaped if NumPy needs it) when
        the kernel's output keeps `shape`."""
        atoms = list(inputs)
        for position, atom in enumerate(inputs):
            alias = self.aliases.get(id(atom)) if isinstance(atom, Var) else None
            if alias is None:
                continue
            operand, expanded = alias
            trial = atoms[:position] + [Var(Aval(expanded, operand.aval.dtype))] + atoms[position + 1:]
            if tuple(np.broadcast_shapes(*[a.aval.shape for a in trial])) != tuple(shape):
                continue  # every argument smaller than the chain: one must carry its shape
            if operand.aval.shape != expanded:
                if isinstance(operand, Literal):
                    operand = Literal(np.reshape(operand.value, expanded), Aval(expanded, operand.aval.dtype))
                else:
                    reshaped = Var(Aval(expanded, operand.aval.dtype))
                    self.eqns.append(Eqn(reshape_p, (operand,), {"shape": expanded}, (reshaped,)))
                    operand = reshaped
            atoms[position] = operand
        return atoms


def coarsen_program(program: Program, min_size: int = 2) -> Program:
    """`program` with each maximal chain of at least `min_size` elementwise equations as one kernel call.

    The result computes the same values (up to rounding: the kernel's scalar IR is simplified) and
    its derivatives are the kernels' mixed-mode rules.

    >>> program = ad.make_ir(lambda x, y: anp.sum(anp.where(x > y, anp.sin(x * y), y)))(x, y)  # doctest: +SKIP
    >>> print(coarsen_program(program))  # one kernel, then the reduce           # doctest: +SKIP
    """
    return _Coarsener(program, min_size).run()


def coarsen(fn, min_size: int = 2):
    """`fn` traced, coarsened (coarsen_program) and run: elementwise chains become kernels.

    Use it under any transformation: ad.grad(ad.coarsen(loss)) differentiates each chain in mixed
    mode, with no intermediate arrays kept between the sweeps. The coarsened program is cached per
    argument signature; `coarsened.ir(*args)` (or ad.make_ir(coarsened)(*args)) returns it.

    >>> fast_loss = ad.coarsen(loss)                                      # doctest: +SKIP
    >>> ad.grad(fast_loss)(x)  # the same gradient as ad.grad(loss)(x)   # doctest: +SKIP
    """
    cache: dict = {}
    name = getattr(fn, "__name__", "coarsened")

    def staged(args):
        leaves, tree = flatten(list(args))
        avals = [leaf.aval if isinstance(leaf, Tracer) else Aval(np.shape(leaf), _dtype(leaf)) for leaf in leaves]
        key = (tree, tuple(avals))
        hit = cache.get(key)
        if hit is None:
            program, out_tree, closure = trace_program(lambda *ls: fn(*unflatten(tree, ls)), avals, name)
            hit = (coarsen_program(simplify(program), min_size), out_tree, closure)
            if not closure:  # a closure over traced values belongs to one trace: not reusable
                cache[key] = hit
        return leaves, hit

    @functools.wraps(fn)
    def coarsened(*args):
        leaves, (program, out_tree, closure) = staged(args)
        return unflatten(out_tree, eval_program(program, list(leaves) + list(closure)))

    coarsened.ir = lambda *args: staged(args)[1][0]
    return coarsened


def _dtype(value):
    return np.float64 if isinstance(value, float) else np.asarray(value).dtype
