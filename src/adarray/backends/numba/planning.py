"""The fusion plan of one program on the Numba backend: which values are stored, how equations group
into loop nests, which loop nests run as chains, which run on threads. No source is written here:
the program emitter (codegen.py) asks for the plan, then writes it out.

1. *Roots* (which values are stored): an equation with an elemental lowering is inlined into its
   readers (its expression is written wherever an element is needed) unless it is an output, a
   nested program or an opaque lowering needs it whole, or it is expensive (more than `CHEAP`,
   counting the producers inlined into it) and read by several equations or several times per
   element (through a broadcast, a gather, a contraction). The others are *roots*.
2. *Groups*: each root joins a loop nest over its shape (its *domain*): the earliest group of the
   same domain that comes after everything it reads, where a root of the group itself may be read
   only at the group's own index (that element is already computed in the iteration). A root read
   only inside its own group needs no array at all: it stays a scalar temporary (multi-output
   fusion). Opaque equations are groups of their own.
3. *Chains*: consecutive loop groups whose domains share leading axes become a chain when that
   saves large arrays (`options.CHAIN_MIN_BYTES`): one loop over the shared axes, each group's own
   loops inside, and a value read only inside the chain at the same leading index is kept for one
   iteration (a scalar or a scratch array of its inner shape).

Which roots (and at which indices) a root's expression reads is found by a dry run of its lowering
through the emitter (`reads(eqn, domain)`, given by the emitter: a lowering writes through it), the
only thing the plan asks of it.

    fusion = FusionPlan(program, inputs, depth=0, top_level=True)
    groups = fusion.make(reads)       # [Group]; fusion.roots, .needs_array, .scratch, ... filled in
"""
from __future__ import annotations

import numpy as np

from ...core.ir import Var
from ...primitives.structural import slice_p
from . import options
from .symbolic import planned, product
from .table import lowering_of
from .writer import Buffer, index_names

# An inlined value with more work per element than this (an add is 1, exp is 20) is stored when it
# has several readers, instead of being computed again by each.
CHEAP = 4.0


class Group:
    """A loop nest over `domain` ("loop"), one opaque equation ("opaque"), or a chain: loop groups
    (`members`) run inside one loop over their shared leading axes (`domain`)."""

    def __init__(self, kind: str, domain, position: int):
        self.kind, self.domain, self.position = kind, domain, position
        self.eqns: list = []
        self.reads: list = []  # (root variable, index) read by a loop group's elements
        self.members: list[Group] = []
        self.chain: Group | None = None  # the chain a loop group runs in


class FusionPlan:
    """The plan of `program` (see the module docstring), whose inputs are read from `inputs` (one Source each).

    depth: how many loop bodies enclose the program (0: the function's top level); top_level: the
    program is the function's own (depth 0, its outputs get fresh arrays), so that its arrays may be
    returned as views, chained, reused and its loops run on threads.
    """

    def __init__(self, program, inputs, *, depth: int, top_level: bool):
        self.program, self.depth, self.top_level = program, depth, top_level
        self.inputs = {id(var): source for var, source in zip(program.inputs, inputs)}
        self.defining = {}
        for eqn in program.eqns:
            for k, var in enumerate(eqn.outputs):
                self.defining[id(var)] = (eqn, k)
        self.roots: set[int] = set()
        self.cost: dict[int, float] = {}  # inlined variable -> work per element (0 for a root's)
        self.views: list = []  # slices returned as views of arrays computed here
        self.input_views: list = []  # slices of the arguments, as views
        self.group_of: dict[int, Group] = {}
        self.needs_array: set[int] = set()  # root variables stored as whole arrays
        self.last_read: dict[int, float] = {}  # root variable -> position of the last group reading it
        self.crossing: dict[int, list] = {}  # root variable -> (loop group, index) reading it from outside its own
        self.scratch: dict[int, int] = {}  # variable kept per iteration -> its chain's number of outer axes

    def is_root(self, eqn) -> bool:
        return id(eqn) in self.roots

    def make(self, reads) -> list[Group]:
        """The groups, in order; `reads(eqn, domain)`: the (root variable, index) pairs that computing an
        elemental root at its group's index reads (asked once the roots are known)."""
        program = self.program
        readers: dict[int, int] = {}
        duplicated, stored = set(), set()
        for atom in program.outputs:
            if isinstance(atom, Var):
                readers[id(atom)] = readers.get(id(atom), 0) + 1
                stored.add(id(atom))
        for eqn in program.eqns:
            lowering = lowering_of(eqn)
            needed = lowering.materialized(eqn) if lowering.opaque else set()
            for position, atom in enumerate(eqn.inputs):
                if not isinstance(atom, Var):
                    continue
                readers[id(atom)] = readers.get(id(atom), 0) + 1
                if position in needed:
                    stored.add(id(atom))
                elif not lowering.opaque and lowering.duplicates(eqn, position):
                    duplicated.add(id(atom))
        self.views = self._view_outputs()
        for eqn in self.views:
            stored.add(id(eqn.inputs[0]))
        self.input_views = self._input_views(stored)
        live = self._live_equations()
        for eqn in program.eqns:
            if id(eqn) not in live or any(e is eqn for e in self.input_views):
                continue
            lowering = lowering_of(eqn)
            if lowering.opaque:
                self.roots.add(id(eqn))
                continue
            cost = lowering.cost(eqn, [self.cost.get(id(a), 0.0) for a in eqn.inputs if isinstance(a, Var)])
            outs = [id(v) for v in eqn.outputs]
            count = sum(readers.get(o, 0) for o in outs)
            viewed = any(e is eqn for e in self.views)
            if not viewed and (any(o in stored for o in outs) or (cost > CHEAP and (count > 1 or any(
                    o in duplicated for o in outs)))):
                self.roots.add(id(eqn))
                cost = 0.0
            for o in outs:
                self.cost[o] = cost
        groups = self._group(live, reads)
        for eqn in self.views:
            self.needs_array.add(id(eqn.inputs[0]))
        groups = self._chain(groups)
        for var_id in self.crossing:
            if var_id not in self.scratch:
                self.needs_array.add(var_id)
        return groups

    def _view_outputs(self) -> list:
        """Slices (positive steps) of arrays computed here that the top-level program returns: they
        are returned as views of those arrays instead of being copied (e.g. the first n slots of a
        scatter into n + 1, the last one a dump for the slots nobody takes)."""
        if not self.top_level:
            return []
        outputs = {id(atom) for atom in self.program.outputs if isinstance(atom, Var)}
        return [eqn for eqn in self.program.eqns
                if eqn.prim is slice_p and id(eqn.outputs[0]) in outputs and isinstance(eqn.inputs[0], Var)
                and id(eqn.inputs[0]) in self.defining and all(step > 0 for step in eqn.params["steps"])]

    def _input_views(self, stored) -> list:
        """Slices of the arguments (any steps: a reversed input) that an opaque lowering needs whole, e.g. the
        right-to-left scan of a general reduce's gradient: views of the argument, not copies. Arguments are
        never written, so a view of one stays valid."""
        if not self.top_level:
            return []
        outputs = {id(atom) for atom in self.program.outputs if isinstance(atom, Var)}
        return [eqn for eqn in self.program.eqns
                if eqn.prim is slice_p and id(eqn.outputs[0]) in stored and id(eqn.outputs[0]) not in outputs
                and isinstance(eqn.inputs[0], Var) and isinstance(self.inputs.get(id(eqn.inputs[0])), Buffer)
                and self.inputs[id(eqn.inputs[0])].whole and all(step != 0 for step in eqn.params["steps"])]

    def _live_equations(self) -> set[int]:
        """Equations whose outputs are used (the simplifier removes dead code; this is a safeguard)."""
        needed = {id(a) for a in self.program.outputs if isinstance(a, Var)}
        live = set()
        for eqn in reversed(self.program.eqns):
            if any(id(v) in needed for v in eqn.outputs):
                live.add(id(eqn))
                needed.update(id(a) for a in eqn.inputs if isinstance(a, Var))
        return live

    def _group(self, live, reads_of) -> list[Group]:
        groups: list[Group] = []
        for atom in self.program.outputs:
            if isinstance(atom, Var):
                self.needs_array.add(id(atom))
        for eqn in self.program.eqns:
            if id(eqn) not in self.roots:
                continue
            lowering = lowering_of(eqn)
            if lowering.opaque:
                group = Group("opaque", None, len(groups))
                groups.append(group)
                for atom in eqn.inputs:
                    for var in self._roots_reached(atom):
                        self.needs_array.add(id(var))
                        self.last_read[id(var)] = max(self.last_read.get(id(var), 0), group.position)
            else:
                domain = tuple(eqn.outputs[0].aval.shape)
                reads = reads_of(eqn, domain)
                own = index_names(self.depth, len(domain))
                lowest = 0
                for var, index in reads:
                    producer = self.group_of[id(self.defining[id(var)][0])]
                    same = producer.kind == "loop" and producer.domain == domain and index == own
                    lowest = max(lowest, producer.position + (0 if same else 1))
                group = next((g for g in groups[lowest:] if g.kind == "loop" and g.domain == domain), None)
                if group is None:
                    group = Group("loop", domain, len(groups))
                    groups.append(group)
                for var, index in reads:  # read outside its own group's iteration: it must be stored
                    if self.group_of[id(self.defining[id(var)][0])] is not group or index != own:
                        self.crossing.setdefault(id(var), []).append((group, index))
                    self.last_read[id(var)] = max(self.last_read.get(id(var), 0), group.position)
                group.reads.extend(reads)
            group.eqns.append(eqn)
            self.group_of[id(eqn)] = group
        for eqn in self.program.eqns:  # nested programs and opaque lowerings read whole arrays
            if id(eqn) in self.roots and lowering_of(eqn).opaque:
                for position in lowering_of(eqn).materialized(eqn):
                    atom = eqn.inputs[position]
                    if isinstance(atom, Var):
                        self.needs_array.add(id(atom))
                        self.last_read[id(atom)] = max(self.last_read.get(id(atom), 0), self.group_of[id(eqn)].position)
        for atom in [*self.program.outputs, *(eqn.inputs[0] for eqn in self.views)]:
            if isinstance(atom, Var):
                self.last_read[id(atom)] = float("inf")
        return groups

    def _roots_reached(self, atom):
        """The roots an inlined expression of `atom` may read (any index)."""
        found, stack, seen = [], [atom], set()
        while stack:
            atom = stack.pop()
            if not isinstance(atom, Var) or id(atom) in seen or id(atom) in self.inputs:
                continue
            seen.add(id(atom))
            eqn, _ = self.defining[id(atom)]
            if self.is_root(eqn):
                found.append(atom)
            else:
                stack.extend(eqn.inputs)
        return found

    # --- chains ------------------------------------------------------------------------------------

    def _chain(self, groups) -> list[Group]:
        """Runs of consecutive loop groups whose domains share leading axes, and that read each other's
        values only at the same leading index, become chains: one loop over the shared axes, each
        member's own loops inside. A value that only members of its chain read is then kept for one
        iteration (a scalar, or a scratch array of its inner shape) instead of as a whole array: BA's
        Jacobian blocks, loops over (p, 3), (p, 2), (p, 2, 3), ..., need no (p, ...) intermediates.
        Only at the top level (a loop body's arrays are already allocated once)."""
        if not self.top_level:
            return groups
        chained, run = [], []
        for group in [*groups, None]:
            if group is not None and group.kind == "loop" and run and self._shared_axes([*run, group]):
                run.append(group)
                continue
            chained.extend(self._close_chain(run))
            run = [group] if group is not None and group.kind == "loop" and group.domain else []
            if group is not None and not run:
                chained.append(group)
        return chained

    def _shared_axes(self, members) -> int:
        """How many leading axes `members` (loop groups, in order) can share as a chain: the common
        leading axes of their domains, as long as every value one member computes is read by the
        members at the same index along them (0: they cannot be a chain)."""
        shared = 0
        for sizes in zip(*(group.domain for group in members)):
            if len(set(sizes)) > 1:
                break
            shared += 1
        outer = index_names(self.depth, shared)
        inside = {id(group) for group in members}
        for group in members:
            for var, index in group.reads:
                while shared and id(self.group_of[id(self.defining[id(var)][0])]) in inside \
                        and index[:shared] != outer[:shared]:
                    shared -= 1
        return shared

    def _close_chain(self, run) -> list[Group]:
        """`run` as one chain if that saves a whole array, else as the groups it is."""
        if len(run) < 2:
            return run
        shared = self._shared_axes(run)
        outer = index_names(self.depth, shared)
        inside = {id(group) for group in run}
        kept = [var_id for var_id, reads in self.crossing.items()
                if var_id not in self.needs_array and id(self.group_of[id(self.defining[var_id][0])]) in inside
                and all(id(group) in inside and index[:shared] == outer for group, index in reads)]
        if sum(self._whole_bytes(var_id) for var_id in kept) < options.CHAIN_MIN_BYTES:
            return run
        chain = Group("chain", run[0].domain[:shared], run[0].position)
        chain.members = run
        for group in run:
            group.chain = chain
        for var_id in kept:
            self.scratch[var_id] = shared
        return [chain]

    def _whole_bytes(self, var_id) -> int:
        aval = self.defining[var_id][0].outputs[self.defining[var_id][1]].aval
        return planned(product(aval.shape)) * np.dtype(aval.dtype).itemsize

    # --- decisions taken while the plan is written out ---------------------------------------------

    def reusable(self, group, sources, contiguous) -> dict:
        """{array name: (aval, variable id)} of the arrays computed here that loop `group` reads last, each only at
        its own element: the group may write its outputs into them instead of into fresh arrays (no
        page faults for a new array, a lower peak). Not inside a loop body, and never a program input,
        a constant or an array that another value also lives in. `sources`: where each value computed so
        far is stored ({variable id: Source}); `contiguous`: the names of the arrays the function allocated."""
        if not self.top_level:
            return {}
        own = index_names(self.depth, len(group.domain))
        holders: dict[str, int] = {}
        for source in sources.values():
            if isinstance(source, Buffer):
                holders[source.name] = holders.get(source.name, 0) + 1
        found, refused = {}, set()
        for other in group.chain.members if group.chain else ():  # read in another iteration of its loop
            if other is not group:
                refused.update(getattr(sources.get(id(var)), "name", None) for var, _ in other.reads)
        for var, index in group.reads:
            source = sources.get(id(var))
            if (isinstance(source, Buffer) and source.whole and source.name in contiguous
                    and holders[source.name] == 1 and index == own and self.last_read.get(id(var)) == group.position):
                found[source.name] = (var.aval, id(var))
            else:
                refused.add(getattr(source, "name", None))
        return {name: entry for name, entry in found.items() if name not in refused}

    def parallel(self, domain, groups, raises: bool) -> bool:
        """Run the outer loop (over `domain`, of loop `groups`) on several threads? Only at the top level
        (not inside a loop body), for large groups (the cost model's threshold) whose elements cannot
        raise (`raises`: the emitted elements check indices, as gathers do)."""
        work = sum(planned(product(group.domain)) * sum(1.0 + self.cost_of(eqn) for eqn in group.eqns)
                   for group in groups)
        return (self.depth == 0 and options.parallel() and not raises and domain[0] > 1
                and work >= options.PARALLEL_MIN_WORK)

    def cost_of(self, eqn) -> float:
        """Work per element of `eqn` (an add counting 1; its inlined producers' included), 0 for an opaque one."""
        lowering = lowering_of(eqn)
        return 0.0 if lowering.opaque else lowering.cost(
            eqn, [self.cost.get(id(a), 0.0) for a in eqn.inputs if isinstance(a, Var)])

    # --- descriptions (profiles) -------------------------------------------------------------------

    def describe(self, group: Group) -> str:
        """`loop (1000, 25): exp x2, mul x3, reduce -> 2 stored` or `fold (fold) -> (1000,)`."""
        if group.kind == "chain":
            return f"chain {_values(group.domain)}: " + "; ".join(self.describe(member) for member in group.members)
        if group.kind == "opaque":
            eqn = group.eqns[0]
            shapes = ", ".join(str(v.aval.update()) for v in eqn.outputs[:3])  # update(): sizes as numbers
            return f"{eqn.prim.name} ({lowering_of(eqn).emit.__name__.strip('_')}) -> {shapes}"
        counts: dict[str, int] = {}
        for eqn in group.eqns:
            for name in self._inlined_names(eqn):
                counts[name] = counts.get(name, 0) + 1
        stored = sum(1 for eqn in group.eqns for v in eqn.outputs if id(v) in self.needs_array)
        names = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in sorted(counts.items(), key=lambda kv: -kv[1]))
        return f"loop {_values(group.domain)}: {names} -> {stored} stored"

    def _inlined_names(self, eqn, seen=None):
        """The primitive names written into a root's expression (its own and its inlined producers')."""
        seen = set() if seen is None else seen
        if id(eqn) in seen:
            return []
        seen.add(id(eqn))
        names = [eqn.prim.name]
        for atom in eqn.inputs:
            if isinstance(atom, Var) and id(atom) in self.defining:
                producer = self.defining[id(atom)][0]
                if not self.is_root(producer):
                    names += self._inlined_names(producer, seen)
        return names


def _values(shape) -> tuple:
    """A shape with its symbolic sizes as numbers (for descriptions)."""
    return tuple(int(d) for d in shape)
