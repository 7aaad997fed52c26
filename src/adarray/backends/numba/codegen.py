"""Programs as Numba source: the writer, the sources values are read from, and the program emitter.

A program (or a nested program: a loop body, a branch) is emitted in three steps:

1. *Fusion plan* (which values are stored): an equation with an elemental lowering is inlined
   into its readers (its expression is written wherever an element is needed) unless it is an
   output, a nested program or an opaque lowering needs it whole, or it is expensive (more than
   `CHEAP`, counting the producers inlined into it) and read by several equations or several
   times per element (through a broadcast, a gather, a contraction). The others are *roots*.
2. *Groups*: each root joins a loop nest over its shape (its *domain*): the earliest group of the
   same domain that comes after everything it reads, where a root of the group itself may be read
   only at the group's own index (that element is already computed in the iteration). A root read
   only inside its own group needs no array at all: it stays a scalar temporary (multi-output
   fusion). Opaque equations are groups of their own. Consecutive loop groups whose domains share
   leading axes become a *chain* when that saves large arrays: one loop over the shared axes, each
   group's own loops inside, and a value read only inside the chain at the same leading index is
   kept for one iteration (a scalar or a scratch array of its inner shape).
3. *Emission*: one loop nest per group; each root's expression is written once per element with
   common subexpressions shared (`(variable, index)` -> temporary), and stored if it is read
   elsewhere.

Shapes are static: loop bounds and index arithmetic are constants, and every array a nested body
needs is allocated once before the outermost loop (a loop body allocates nothing per iteration).
"""
from __future__ import annotations

import contextlib

import numpy as np

from ...core.ir import Literal, Var
from ...primitives.structural import slice_p
from . import options, scalar
from .symbolic import planned, product
from .table import lowering_of
from .writer import Buffer, FunctionWriter, Local, Scratch, allocation, index_names

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


class ProgramEmitter:
    """Emits one program into a FunctionWriter (see the module docstring).

    inputs: one Source per program input; targets: None (outputs get fresh arrays) or one Source per
    output to write into (a loop's next carry, a row of its stacked outputs, a branch's result).
    """

    def __init__(self, writer: FunctionWriter, program, inputs, *, depth: int = 0, indent: int = 1, targets=None,
                 silent: bool = False):
        self.writer, self.program, self.depth, self.indent = writer, program, depth, indent
        self._silent = silent
        self.sources = {id(var): source for var, source in zip(program.inputs, inputs)}
        self.targets = targets
        self.scopes: list[dict] = [{}]
        self.dry = None  # during planning: the list collecting (root variable, index) reads
        self.raises = False  # did the group being written emit a `raise` (a checked index)?
        self.defining = {}
        for eqn in program.eqns:
            for k, var in enumerate(eqn.outputs):
                self.defining[id(var)] = (eqn, k)

    # --- writing ---------------------------------------------------------------------------------

    @property
    def silent(self) -> bool:
        """Planning (a dry run) writes nothing."""
        return self._silent or self.dry is not None

    def emit(self, text: str) -> None:
        if not self.silent:
            self.writer.lines.append("    " * self.indent + text)

    def fresh(self, prefix: str = "t") -> str:
        return self.writer.fresh(prefix)

    def let(self, expr: str, prefix: str = "t") -> str:
        """A temporary holding `expr` (names and constants are returned as they are)."""
        if expr.isidentifier() or _is_number(expr):
            return expr
        name = self.fresh(prefix)
        self.emit(f"{name} = {expr}")
        return name

    @contextlib.contextmanager
    def block(self, header: str | None = None):
        """An indented block (a loop or a branch) with its own temporaries."""
        if header is not None:
            self.emit(header)
        self.indent += 1
        self.scopes.append({})
        try:
            yield
        finally:
            self.scopes.pop()
            self.indent -= 1

    @contextlib.contextmanager
    def loop(self, index: str, count: int):
        """`for index in range(count):`, or `index = 0` when the count is 1 (nothing to iterate: less to compile)."""
        if count == 1:
            self.emit(f"{index} = 0")
            yield
            return
        with self.block(f"for {index} in range({count}):"):
            yield

    def allocate(self, aval, prefix: str = "b") -> str:
        """A fresh array of `aval`; inside a loop body it is allocated once, before the loops."""
        name = self.fresh(prefix)
        self.hoist(f"{name} = {allocation(aval)}")
        if not self.silent:
            self.writer.allocations[name] = aval
        self.writer.contiguous.add(name)
        return name

    def hoist(self, line: str) -> None:
        """Write `line` here at the top level; inside a loop body, once at the start of the function."""
        if self.depth > 0:
            if not self.silent:
                self.writer.prologue.append("    " + line)
        else:
            self.emit(line)

    # --- reading -----------------------------------------------------------------------------------

    def _cached(self, key):
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def read(self, atom, index) -> str:
        """The expression of `atom`'s element at `index` (a tuple of index expressions)."""
        index = tuple(index)
        if isinstance(atom, Literal):
            text = scalar.literal(atom)
            if text is not None:
                return self.writer.scalar(atom, text)
            return Buffer(self.writer.constant(atom.value)).read(index) if index else scalar.constant(
                atom.value.reshape(()), atom.aval.dtype)
        key = (id(atom), index)
        cached = self._cached(key)
        if cached is not None:
            return cached
        source = self.sources.get(id(atom))
        if source is not None:
            text = source.read(index)
        else:
            eqn, k = self.defining[id(atom)]
            if self.is_root(eqn):
                if self.dry is None:
                    raise AssertionError(f"root {atom} read before it is computed")
                self.dry.append((atom, index))
                text = f"__root{id(atom)}[{', '.join(index)}]"
            else:
                text = self._expand(eqn, index)[k]
        self.scopes[-1][key] = text
        return text

    def once(self, key, make, *args):
        """`make(*args)` the first time `key` is asked for in this block or an enclosing one; the same value after."""
        value = self._cached(key)
        if value is None:
            value = self.scopes[-1][key] = make(*args)
        return value

    def _expand(self, eqn, index) -> list[str]:
        """An elemental equation's outputs at `index`, written once per index (cached per equation)."""
        key = (id(eqn), index)
        cached = self._cached(key)
        if cached is None:
            exprs = lowering_of(eqn).emit(self, eqn, index)
            cached = [self.let(e) for e in exprs]
            self.scopes[-1][key] = cached
        return cached

    def source(self, atom):
        """A stored form of `atom` (opaque lowerings and nested programs read whole arrays)."""
        if isinstance(atom, Literal):
            if atom.aval.ndim == 0:
                return Local(self.read(atom, ()))
            return Buffer(self.writer.constant(atom.value))
        source = self.sources.get(id(atom))
        if source is None:
            raise AssertionError(f"{atom} is not stored")
        return source

    def array(self, atom) -> str:
        """The name of a whole array holding `atom` (copied into a fresh one if it is only a view)."""
        source = self.source(atom)
        if isinstance(source, Buffer) and source.whole:
            return source.name
        name = self.allocate(atom.aval)
        self.copy(atom, Buffer(name))
        return name

    def copy(self, atom, target) -> None:
        """Write `atom`'s elements into `target` (a loop nest over its shape)."""
        names = index_names(self.depth, atom.aval.ndim, "c")
        with contextlib.ExitStack() as stack:
            for d, n in enumerate(atom.aval.shape):
                stack.enter_context(self.loop(names[d], n))
            self.emit(target.write(names, self.read(atom, names)))

    def copy_from(self, source, target, shape) -> None:
        """Write the elements of `source` (of `shape`) into `target`."""
        names = index_names(self.depth, len(shape), "c")
        with contextlib.ExitStack() as stack:
            for d, n in enumerate(shape):
                stack.enter_context(self.loop(names[d], n))
            self.emit(target.write(names, source.read(names)))

    # --- planning ----------------------------------------------------------------------------------

    def is_root(self, eqn) -> bool:
        return id(eqn) in self.roots

    def plan(self) -> list[Group]:
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
        self.roots: set[int] = set()
        self.cost: dict[int, float] = {}
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
        groups = self._group(live)
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
        if self.depth > 0 or self.targets is not None:
            return []
        outputs = {id(atom) for atom in self.program.outputs if isinstance(atom, Var)}
        return [eqn for eqn in self.program.eqns
                if eqn.prim is slice_p and id(eqn.outputs[0]) in outputs and isinstance(eqn.inputs[0], Var)
                and id(eqn.inputs[0]) in self.defining and all(step > 0 for step in eqn.params["steps"])]

    def _input_views(self, stored) -> list:
        """Slices of the arguments (any steps: a reversed input) that an opaque lowering needs whole, e.g. the
        right-to-left scan of a general reduce's gradient: views of the argument, not copies. Arguments are
        never written, so a view of one stays valid."""
        if self.depth > 0 or self.targets is not None:
            return []
        outputs = {id(atom) for atom in self.program.outputs if isinstance(atom, Var)}
        return [eqn for eqn in self.program.eqns
                if eqn.prim is slice_p and id(eqn.outputs[0]) in stored and id(eqn.outputs[0]) not in outputs
                and isinstance(eqn.inputs[0], Var) and isinstance(self.sources.get(id(eqn.inputs[0])), Buffer)
                and self.sources[id(eqn.inputs[0])].whole and all(step != 0 for step in eqn.params["steps"])]

    def _emit_input_views(self) -> None:
        for eqn in self.input_views:
            (x,), (out,) = eqn.inputs, eqn.outputs
            name = self.fresh("v")
            self.emit(f"{name} = {self.sources[id(x)].name}[{_slice_text(eqn, x.aval.shape)}]")
            self.sources[id(out)] = Buffer(name)

    def _emit_views(self) -> None:
        for eqn in self.views:
            (x,), (out,) = eqn.inputs, eqn.outputs
            source = self.sources.get(id(x))
            if isinstance(source, Buffer) and source.whole:
                name = self.fresh("v")
                self.emit(f"{name} = {source.name}[{_slice_text(eqn, x.aval.shape)}]")
                self.sources[id(out)] = Buffer(name)
            else:
                name = self.allocate(out.aval)
                self.copy(out, Buffer(name))
                self.sources[id(out)] = Buffer(name)

    def _live_equations(self) -> set[int]:
        """Equations whose outputs are used (the simplifier removes dead code; this is a safeguard)."""
        needed = {id(a) for a in self.program.outputs if isinstance(a, Var)}
        live = set()
        for eqn in reversed(self.program.eqns):
            if any(id(v) in needed for v in eqn.outputs):
                live.add(id(eqn))
                needed.update(id(a) for a in eqn.inputs if isinstance(a, Var))
        return live

    def _group(self, live) -> list[Group]:
        groups: list[Group] = []
        self.group_of: dict[int, Group] = {}
        self.needs_array: set[int] = set()
        self.last_read: dict[int, float] = {}  # root variable -> position of the last group reading it
        self.crossing: dict[int, list] = {}  # root variable -> (loop group, index) reading it from outside its own
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
                reads = self._dry_reads(eqn, domain)
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

    def _chain(self, groups) -> list[Group]:
        """Runs of consecutive loop groups whose domains share leading axes, and that read each other's
        values only at the same leading index, become chains: one loop over the shared axes, each
        member's own loops inside. A value that only members of its chain read is then kept for one
        iteration (a scalar, or a scratch array of its inner shape) instead of as a whole array: BA's
        Jacobian blocks, loops over (p, 3), (p, 2), (p, 2, 3), ..., need no (p, ...) intermediates.
        Only at the top level (a loop body's arrays are already allocated once)."""
        self.scratch: dict[int, int] = {}  # variable kept per iteration -> its chain's number of outer axes
        if self.depth > 0 or self.targets is not None:
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

    def _roots_reached(self, atom):
        """The roots an inlined expression of `atom` may read (any index)."""
        found, stack, seen = [], [atom], set()
        while stack:
            atom = stack.pop()
            if not isinstance(atom, Var) or id(atom) in seen or id(atom) in self.sources:
                continue
            seen.add(id(atom))
            eqn, _ = self.defining[id(atom)]
            if self.is_root(eqn):
                found.append(atom)
            else:
                stack.extend(eqn.inputs)
        return found

    def _dry_reads(self, eqn, domain) -> list:
        """The roots (and indices) that computing `eqn` at its group's index reads: the lowering is
        run into a scratch writer."""
        saved = (self.scopes, self.indent, len(self.writer.constants), self.raises)
        self.scopes, self.dry = [{}], []
        try:
            lowering_of(eqn).emit(self, eqn, index_names(self.depth, len(domain)))
            return self.dry
        finally:
            self.scopes, self.indent, constants, self.raises = saved
            del self.writer.constants[constants:]
            self.dry = None

    # --- emission ----------------------------------------------------------------------------------

    def run(self) -> list:
        """Emit the program; returns one Source per output."""
        groups = self.plan()
        self._emit_input_views()
        output_targets = {}
        if self.targets is not None:
            for atom, target in zip(self.program.outputs, self.targets):
                if isinstance(atom, Var) and id(atom) not in self.sources and id(atom) not in output_targets:
                    eqn, _ = self.defining[id(atom)]
                    if not lowering_of(eqn).opaque:
                        output_targets[id(atom)] = target
        timed = self.writer.profile and self.depth == 0 and not self.silent
        for group in groups:
            if timed:
                self.emit("_start = _m.cycles()")
            if group.kind == "opaque":
                (eqn,) = group.eqns
                outs = lowering_of(eqn).emit(self, eqn)
                for var, source in zip(eqn.outputs, outs):
                    self.sources[id(var)] = source
            elif group.kind == "chain":
                self._emit_chain(group, output_targets)
            else:
                self._emit_loop(group, output_targets)
            if timed:
                self.emit(f"_profile[{len(self.writer.groups)}] += _m.cycles() - _start")
                self.writer.groups.append(self.describe(group))
        self._emit_views()
        results = []
        for position, atom in enumerate(self.program.outputs):
            if self.targets is None:
                results.append(self.source(atom))
                continue
            target = self.targets[position]
            if isinstance(atom, Var) and output_targets.get(id(atom)) is target:
                results.append(target)
                continue
            self.copy(atom, target)
            results.append(target)
        return results

    def describe(self, group: Group) -> str:
        """`loop (1000, 25): exp x2, mul x3, reduce -> 2 arrays` or `opaque: fold`."""
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

    def _emit_loop(self, group: Group, output_targets) -> None:
        storage = self._storage(group, output_targets)  # allocates before the loop
        header = len(self.writer.lines)
        self.raises = False
        self._emit_nest(group, storage)
        if group.domain and self._parallel(group.domain, [group]):
            self.run_on_threads(header)

    def _emit_chain(self, chain: Group, output_targets) -> None:
        """One loop over the chain's shared axes; each member's loops over its other axes inside, in order.
        The members' whole arrays are allocated before the loop, their scratch arrays in it (Numba hoists
        an allocation out of a parallel loop, one per thread; without threads they come before it)."""
        storage = [self._storage(group, output_targets) for group in chain.members]
        scratch = [source.allocation() for stored, _, _ in storage for source in stored.values()
                   if isinstance(source, Scratch)]
        header = len(self.writer.lines)
        self.raises = False
        names = index_names(self.depth, len(chain.domain))
        with contextlib.ExitStack() as stack:
            for d, n in enumerate(chain.domain):
                stack.enter_context(self.loop(names[d], n))
            body = "    " * self.indent
            for group, entry in zip(chain.members, storage):
                self._emit_nest(group, entry, outer=len(chain.domain))
        if self._parallel(chain.domain, chain.members):
            self.run_on_threads(header)
            self.writer.lines[header + 1:header + 1] = [body + line for line in scratch]
        else:
            self.writer.lines[header:header] = ["    " * self.indent + line for line in scratch]

    def _storage(self, group: Group, output_targets):
        """Where a loop group's outputs go: {variable id: Source}, the outputs written over arrays read for
        the last time here, and those arrays' values."""
        stored = {}
        reusable = self._dead_after(group)
        reused, moved = set(), []
        for eqn in group.eqns:
            for var in eqn.outputs:
                if id(var) in output_targets:
                    stored[id(var)] = output_targets[id(var)]
                elif var.aval.ndim == 0 or self.scratch.get(id(var)) == var.aval.ndim:
                    stored[id(var)] = Local(self.fresh("s"))
                elif id(var) in self.scratch:
                    stored[id(var)] = Scratch(self.fresh("w"), var.aval, self.scratch[id(var)])
                elif id(var) in self.needs_array:
                    same = next((name for name, (aval, _) in reusable.items() if aval == var.aval), None)
                    if same is not None:
                        moved.append(reusable.pop(same)[1])
                        reused.add(id(var))
                    stored[id(var)] = Buffer(same or self.allocate(var.aval))
        return stored, reused, moved

    def _emit_nest(self, group: Group, storage, outer: int = 0) -> None:
        """The loops of a group over its domain's axes from `outer` on (the others are a chain's)."""
        stored, reused, moved = storage
        names = index_names(self.depth, len(group.domain))
        with contextlib.ExitStack() as stack:
            for d, n in enumerate(group.domain[outer:], outer):
                stack.enter_context(self.loop(names[d], n))
            deferred = []  # writes into an input's array: after every read of this element
            for eqn in group.eqns:
                exprs = self._expand(eqn, names)
                for var, expr in zip(eqn.outputs, exprs):
                    self.scopes[-1][(id(var), names)] = expr
                    target = stored.get(id(var))
                    if id(var) in reused:
                        value = self.fresh("t")
                        self.emit(f"{value} = {expr}")
                        deferred.append(target.write(names, value))
                    elif target is not None:
                        self.emit(target.write(names, expr))
            for line in deferred:
                self.emit(line)
        for var_id in moved:  # the array now holds the output only (so that a later group may write over it)
            del self.sources[var_id]
        for var_id, source in stored.items():
            self.sources[var_id] = source

    def run_on_threads(self, header: int) -> None:
        """Make the loop written at line `header` a numba.prange (the function becomes parallel=True)."""
        self.writer.lines[header] = self.writer.lines[header].replace(" in range(", " in numba.prange(", 1)
        self.writer.parallel = True

    def _dead_after(self, group) -> dict:
        """{array name: (aval, variable id)} of the arrays computed here that this loop group reads last, each only at
        its own element: the group may write its outputs into them instead of into fresh arrays (no
        page faults for a new array, a lower peak). Not inside a loop body, and never a program input,
        a constant or an array that another value also lives in."""
        if self.depth > 0 or self.targets is not None or self.dry is not None:
            return {}
        own = index_names(self.depth, len(group.domain))
        holders: dict[str, int] = {}
        for source in self.sources.values():
            if isinstance(source, Buffer):
                holders[source.name] = holders.get(source.name, 0) + 1
        found, refused = {}, set()
        for other in group.chain.members if group.chain else ():  # read in another iteration of its loop
            if other is not group:
                refused.update(getattr(self.sources.get(id(var)), "name", None) for var, _ in other.reads)
        for var, index in group.reads:
            source = self.sources.get(id(var))
            if (isinstance(source, Buffer) and source.whole and source.name in self.writer.contiguous
                    and holders[source.name] == 1 and index == own and self.last_read.get(id(var)) == group.position):
                found[source.name] = (var.aval, id(var))
            else:
                refused.add(getattr(source, "name", None))
        return {name: entry for name, entry in found.items() if name not in refused}

    def _parallel(self, domain, groups) -> bool:
        """Run the outer loop (over `domain`, of loop `groups`) on several threads? Only at the top level
        (not inside a loop body), for large groups (the cost model's threshold) whose elements cannot
        raise (gathers check their indices)."""
        work = sum(planned(product(group.domain)) * sum(1.0 + self.cost_of(eqn) for eqn in group.eqns)
                   for group in groups)
        return (self.depth == 0 and options.parallel() and not self.raises and domain[0] > 1
                and work >= options.PARALLEL_MIN_WORK)

    def cost_of(self, eqn) -> float:
        lowering = lowering_of(eqn)
        return 0.0 if lowering.opaque else lowering.cost(
            eqn, [self.cost.get(id(a), 0.0) for a in eqn.inputs if isinstance(a, Var)])


def _slice_text(eqn, shape) -> str:
    """`a:b:c, ...` of a slice equation, for a NumPy view (a negative step's stop may be before the start: None)."""
    parts = []
    for start, stop, step, n in zip(eqn.params["starts"], eqn.params["stops"], eqn.params["steps"], shape):
        first, last, step = slice(start, stop, step).indices(n)
        end = "" if last < 0 else str(last)
        parts.append(f"{first}:{end}" + (f":{step}" if step != 1 else ""))
    return ", ".join(parts)


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _values(shape) -> tuple:
    """A shape with its symbolic sizes as numbers (for descriptions)."""
    return tuple(int(d) for d in shape)
