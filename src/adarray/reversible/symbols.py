"""The symbol table of a reversible function, checked at decoration (NiLang's symboltable.jl): every ancilla is
allocated once before use and freed once in the block that allocated it; nothing is used after rv.free; loop
variables are read-only; arguments are never allocated or freed."""
from __future__ import annotations

from .ir import base_name, names_read, root_name, statement_targets, target_reads


def _init_names(init) -> set:
    if isinstance(init, tuple) and init[0] == "zeros":
        return set().union(*(names_read(n) for n in init[1:])) if len(init) > 1 else set()
    if isinstance(init, tuple) and init[0] == "zeros_like":
        return names_read(init[1])
    if isinstance(init, tuple) and init[0] == "stack" and init[1] is not None:
        return names_read(init[1])
    return set()


def _reads(statement) -> set:
    kind = statement[0]
    names = set()
    for target in statement_targets(statement):
        names.add(base_name(target))
        names |= target_reads(target)
    if kind in ("inc", "dec", "xor"):
        names |= names_read(statement[3])
    elif kind in ("mul", "div"):
        names |= names_read(statement[3])
    elif kind == "rot":
        names |= names_read(statement[4])
    elif kind in ("alloc", "free"):
        names |= _init_names(statement[3])
        if kind == "alloc":
            names.discard(statement[2])
    elif kind in ("if", "while"):
        names |= names_read(statement[2]) | names_read(statement[3])
    elif kind == "for":
        for bound in statement[3:6]:
            names |= names_read(bound)
    return names


class _Scope:
    def __init__(self, source, live, freed, what):
        self.source, self.live, self.freed, self.what = source, dict(live), dict(freed), what
        self.allocated: dict[str, int] = {}

    def fail(self, line, message):
        raise self.source.error(line, message)

    def use(self, name, line) -> None:
        name = root_name(name)  # a field of a structured argument: the argument
        if name in self.live:
            return
        if name in self.freed:
            self.fail(line, f"'{name}' is used after rv.free (line {self.freed[name]}) released it")
        self.fail(line, f"'{name}' is used before it is allocated with rv.alloc")

    def block(self, statements) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, statement) -> None:
        kind, line = statement[0], statement[1]
        for name in sorted(_reads(statement)):
            if not (kind == "free" and name == statement[2]):  # rv.free reports its own errors
                self.use(name, line)
        for target in statement_targets(statement):
            name = base_name(target)
            if self.live.get(name, ("",))[0] == "loop" and kind not in ("alloc",):
                self.fail(line, f"the loop variable '{name}' is written")
        if kind == "alloc":
            self.alloc(statement[2], line)
        elif kind == "free":
            self.free(statement[2], line)
        elif kind == "if":
            for branch, label in ((statement[4], "branch"), (statement[5], "else branch")):
                self.child(branch, label)
        elif kind == "for":
            var = statement[2]
            if var in self.live:
                self.fail(line, f"the loop variable '{var}' is already a variable of this function")
            self.child(statement[7], "loop body", {var: ("loop", line)})
        elif kind == "while":
            self.child(statement[4], "loop body")

    def alloc(self, name, line) -> None:
        if name in self.live:
            role, where = self.live[name]
            if role == "arg":
                self.fail(line, f"rv.alloc of '{name}', which is an argument (ancillas need fresh names)")
            if role == "loop":
                self.fail(line, f"rv.alloc of the loop variable '{name}'")
            self.fail(line, f"double rv.alloc of '{name}': it was allocated at line {where} and not freed")
        self.live[name] = ("ancilla", line)
        self.allocated[name] = line
        self.freed.pop(name, None)

    def free(self, name, line) -> None:
        if name not in self.live:
            if name in self.freed:
                self.fail(line, f"double rv.free of '{name}': it was freed at line {self.freed[name]}")
            self.fail(line, f"rv.free of '{name}', which was never allocated with rv.alloc")
        role, where = self.live[name]
        if role != "ancilla":
            self.fail(line, f"rv.free of the {'argument' if role == 'arg' else 'loop variable'} '{name}' (only "
                            "ancillas made by rv.alloc are freed)")
        if name not in self.allocated:
            self.fail(line, f"rv.free of '{name}' inside a {self.what}; it was allocated outside it (line {where}): "
                            "free it in the block that allocated it")
        del self.live[name]
        del self.allocated[name]
        self.freed[name] = line

    def child(self, statements, what, extra=None) -> None:
        scope = _Scope(self.source, {**self.live, **(extra or {})}, self.freed, what)
        scope.block(statements)
        scope.finish()

    def finish(self) -> None:
        for name, line in self.allocated.items():
            self.fail(line, f"missing rv.free: the ancilla '{name}' allocated here is still allocated at the end of "
                            f"the {self.what}")


def check_symbols(statements, args, source) -> None:
    """Raise ReversibilityError (via source.error) at the first symbol-table violation."""
    scope = _Scope(source, {a: ("arg", 0) for a in args}, {}, "function")
    scope.block(statements)
    scope.finish()
