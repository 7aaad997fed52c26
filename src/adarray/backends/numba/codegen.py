"""Programs as Numba source: the program emitter, which writes a program's fusion plan out.

A program (or a nested program: a loop body, a branch) is emitted in two steps:

1. *Plan* (planning.py): which values are stored (the roots), which equations form one loop nest
   (a group), which groups run as one loop over shared leading axes (a chain). Planning asks the
   emitter one thing: which roots a root's expression reads, found by a dry run of its lowering
   (`_dry_reads`: the lowering writes through the emitter, which then writes nothing).
2. *Emission* (here): one loop nest per group; each root's expression is written once per element
   with common subexpressions shared (`(variable, index)` -> temporary), and stored if it is read
   elsewhere: in a fresh array, in an array read for the last time (`FusionPlan.reusable`), in a
   chain's scratch array or in a local. A large loop runs on threads (`FusionPlan.parallel`).

Shapes are static: loop bounds and index arithmetic are constants, and every array a nested body
needs is allocated once before the outermost loop (a loop body allocates nothing per iteration).

    sources = ProgramEmitter(FunctionWriter(), program, [Buffer("p0"), Local("a1")]).run()
"""
from __future__ import annotations

import contextlib

from ...core.ir import Literal, Var
from . import scalar
from .planning import FusionPlan, Group
from .table import lowering_of
from .writer import Buffer, FunctionWriter, Local, Scratch, allocation, index_names


class ProgramEmitter:
    """Emits one program into a FunctionWriter (see the module docstring).

    inputs: one Source per program input; targets: None (outputs get fresh arrays) or one Source per
    output to write into (a loop's next carry, a row of its stacked outputs, a branch's result).
    """

    def __init__(self, writer: FunctionWriter, program, inputs, *, depth: int = 0, indent: int = 1, targets=None,
                 silent: bool = False):
        self.writer, self.program, self.depth, self.indent = writer, program, depth, indent
        self._silent = silent
        inputs = list(inputs)
        self.sources = {id(var): source for var, source in zip(program.inputs, inputs)}
        self.targets = targets
        self.scopes: list[dict] = [{}]
        self.dry = None  # during planning: the list collecting (root variable, index) reads
        self.raises = False  # did the group being written emit a `raise` (a checked index)?
        self.fusion = FusionPlan(program, inputs, depth=depth, top_level=depth == 0 and targets is None)
        self.defining = self.fusion.defining

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
            if self.fusion.is_root(eqn):
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

    # --- planning (planning.py) asks which roots an expression reads ------------------------------

    def _dry_reads(self, eqn, domain) -> list:
        """The roots (and indices) that computing `eqn` at its group's index reads (asked by the plan): the
        lowering is run with nothing written."""
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
        groups = self.fusion.make(self._dry_reads)
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
                self.writer.groups.append(self.fusion.describe(group))
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

    def _emit_input_views(self) -> None:
        for eqn in self.fusion.input_views:
            (x,), (out,) = eqn.inputs, eqn.outputs
            name = self.fresh("v")
            self.emit(f"{name} = {self.sources[id(x)].name}[{_slice_text(eqn, x.aval.shape)}]")
            self.sources[id(out)] = Buffer(name)

    def _emit_views(self) -> None:
        for eqn in self.fusion.views:
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

    def _emit_loop(self, group: Group, output_targets) -> None:
        storage = self._storage(group, output_targets)  # allocates before the loop
        header = len(self.writer.lines)
        self.raises = False
        self._emit_nest(group, storage)
        if group.domain and self.fusion.parallel(group.domain, [group], self.raises):
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
        if self.fusion.parallel(chain.domain, chain.members, self.raises):
            self.run_on_threads(header)
            self.writer.lines[header + 1:header + 1] = [body + line for line in scratch]
        else:
            self.writer.lines[header:header] = ["    " * self.indent + line for line in scratch]

    def _storage(self, group: Group, output_targets):
        """Where a loop group's outputs go: {variable id: Source}, the outputs written over arrays read for
        the last time here, and those arrays' values."""
        stored = {}
        reusable = self.fusion.reusable(group, self.sources, self.writer.contiguous)
        reused, moved = set(), []
        for eqn in group.eqns:
            for var in eqn.outputs:
                if id(var) in output_targets:
                    stored[id(var)] = output_targets[id(var)]
                elif var.aval.ndim == 0 or self.fusion.scratch.get(id(var)) == var.aval.ndim:
                    stored[id(var)] = Local(self.fresh("s"))
                elif id(var) in self.fusion.scratch:
                    stored[id(var)] = Scratch(self.fresh("w"), var.aval, self.fusion.scratch[id(var)])
                elif id(var) in self.fusion.needs_array:
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

