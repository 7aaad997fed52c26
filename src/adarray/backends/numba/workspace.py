"""Scratch arrays kept across calls: a generated function's intermediate arrays come from a workspace
allocated once per program and thread, so that a repeated call neither allocates nor faults in fresh
pages (XLA's buffer assignment does the same); arrays whose lifetimes do not overlap share memory.

`assign(lines, prologue, allocations, returned)` reads the generated function:

* every array of `options.WORKSPACE_MIN_BYTES` or more allocated by `ProgramEmitter.allocate` (or a
  contraction) at the top level or hoisted out of a loop body
  becomes a parameter, unless the function may return it (or a view of it, or an array it is swapped
  with in a loop): a result is always a fresh array, never one a later call writes over;
* its lifetime is the span of top-level statements whose text names it (or a view of it, or an array
  it is swapped with), and arrays of one dtype with disjoint lifetimes share a *slot* (first fit).

`Workspace` holds the slots of one program per thread, as flat arrays, and a view of the right shape
per parameter. `release(results)` is the guard behind the static analysis: a result that lies in a
slot takes the slot with it (the caller owns it now) and the thread's next call gets a new one.

    >>> plan = assign(["    b1 = np.empty((3,), np.float64)", "    b1[0] = 1.0"], [], {"b1": aval}, [])
"""
from __future__ import annotations

import re
import threading

import numpy as np

from . import options

_NAME = re.compile(r"[A-Za-z_]\w*")
_SWAP = re.compile(r"^\s*(\w+), (\w+) = (\w+), (\w+)$")
_VIEW = re.compile(r"^\s*(\w+) = (\w+)(\[[^\]]*:[^\]]*\]|\.reshape\()")
_CONTINUATION = ("else:", "elif ", "except", "finally:")


def _nbytes(aval) -> int:
    return int(np.prod(aval.shape)) * np.dtype(aval.dtype).itemsize


class Plan:
    """What `assign` decided: the body without the workspace's allocation lines, the parameters (names,
    in order) with their (slot, shape, dtype), and the slots' sizes (elements) and dtypes."""

    def __init__(self, lines, prologue, params, slots):
        self.lines, self.prologue = lines, prologue
        self.params = params          # [(name, slot, shape, dtype)]
        self.slots = slots            # [(elements, dtype)]

    @property
    def names(self) -> list[str]:
        return [name for name, _, _, _ in self.params]

    @property
    def nbytes(self) -> int:
        return sum(int(size) * np.dtype(dtype).itemsize for size, dtype in self.slots)


class _Aliases:
    """Union-find over array names: an array, its views and the arrays it is swapped with."""

    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, name: str) -> str:
        root = name
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        self.parent[name] = root
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb


def _statements(lines):
    """The index of the top-level statement each line belongs to (a line indented once opens one)."""
    index, found = -1, []
    for line in lines:
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) == 4 and not stripped.startswith(_CONTINUATION):
            index += 1
        found.append(max(index, 0))
    return found


def assign(lines, prologue, allocations, returned) -> Plan:
    """The workspace plan of a generated function (see the module docstring). `allocations` maps the
    names written by `ProgramEmitter.allocate` to their avals; `returned` lists the returned names."""
    aliases = _Aliases()
    for line in prologue + lines:
        swap = _SWAP.match(line)
        if swap and swap.group(1) == swap.group(4) and swap.group(2) == swap.group(3):
            aliases.union(swap.group(1), swap.group(2))
            continue
        view = _VIEW.match(line)
        if view:
            aliases.union(view.group(1), view.group(2))
    escaping = {aliases.find(name) for name in returned}
    kept = {name for name, aval in allocations.items()
            if aliases.find(name) not in escaping and _nbytes(aval) >= options.WORKSPACE_MIN_BYTES}
    # an allocation inside a block (a fresh array per iteration, which the code might rely on) stays
    kept -= {_NAME.match(line.lstrip(" ")).group() for line in lines
             if len(line) - len(line.lstrip(" ")) > 4 and "= np.empty(" in line}

    def removed(line):
        name = _NAME.match(line.lstrip(" "))
        return (line.startswith("    ") and not line.startswith("     ") and name is not None
                and name.group() in kept and line.startswith(f"    {name.group()} = np.empty("))

    body = [line for line in lines if not removed(line)]
    head = [line for line in prologue if not removed(line)]
    spans: dict[str, list[int]] = {}
    for statement, line in zip(_statements(body), body):
        for word in set(_NAME.findall(line)):
            if word in allocations or word in aliases.parent:
                span = spans.setdefault(aliases.find(word), [statement, statement])
                span[0], span[1] = min(span[0], statement), max(span[1], statement)

    slots: list[list] = []  # [elements, dtype, last statement of its latest tenant]
    params = []
    for name in sorted(kept, key=lambda n: (spans.get(aliases.find(n), [0, 0])[0], n)):
        aval = allocations[name]
        start, end = spans.get(aliases.find(name), [0, 0])
        size, dtype = max(int(np.prod(aval.shape)), 1), np.dtype(aval.dtype)
        free = [k for k, (_, d, last) in enumerate(slots) if d == dtype and last < start]
        fits = [k for k in free if slots[k][0] >= size]
        if fits:
            chosen = min(fits, key=lambda k: slots[k][0])
        elif free:
            chosen = max(free, key=lambda k: slots[k][0])
        else:
            chosen = len(slots)
            slots.append([0, dtype, -1])
        slots[chosen][0] = max(slots[chosen][0], size)
        slots[chosen][2] = end
        params.append((name, chosen, tuple(aval.shape), dtype))
    return Plan(body, head, params, [(size, dtype) for size, dtype, _ in slots])


class Workspace:
    """The slots of one generated function, per thread (see the module docstring)."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.local = threading.local()

    def views(self) -> list:
        """This thread's arrays, one per workspace parameter (allocated on its first call)."""
        views = getattr(self.local, "views", None)
        if views is None:
            self.local.slots = [np.empty(size, dtype) for size, dtype in self.plan.slots]
            views = self.local.views = [self._view(k) for k in range(len(self.plan.params))]
        return views

    def _view(self, k):
        _, slot, shape, _ = self.plan.params[k]
        return self.local.slots[slot][:int(np.prod(shape))].reshape(shape)

    def release(self, results) -> None:
        """Give up every slot a result lies in: the caller owns the result, the next call gets new memory."""
        slots = getattr(self.local, "slots", None)
        if not slots:
            return
        for result in results:
            if not isinstance(result, np.ndarray) or result.size == 0:
                continue
            for k, slot in enumerate(slots):
                if np.may_share_memory(result, slot):  # overlapping bounds
                    slots[k] = np.empty(slot.shape, slot.dtype)
                    self.local.views = [self._view(j) for j in range(len(self.plan.params))]

