"""Single-use temporaries written into their reader, and names numbered in order: less to compile, and the
same text for the same code.

The emitter names every element expression (`t7 = (a[i] * b[i])`), so that common subexpressions
are computed once. A name read once, by a later statement of the same block, is only one more
variable: Numba's passes (typing, lowering, liveness) cost time per statement and variable, about
a quarter of a first call's compile (GMM's gradient: 227 lines compile in 1.7 s of CPU instead of
2.3). `inline_temporaries(lines)` moves such an expression into its reader when nothing between
them may change what it reads:

    t1 = (x[i] * 2.0)          ->      y[i] = _m.exp((x[i] * 2.0))
    y[i] = _m.exp(t1)

Only temporaries (`t<n>`) are moved, into a statement at the same indentation (so an expression
is evaluated exactly as often as before, never into a loop it was hoisted out of, nor into a
`while` test), and only past statements that assign none of the names the expression reads and
call nothing that writes its arguments.
"""
from __future__ import annotations

import re

_TEMPORARY = re.compile(r"^( *)(t\d+) = (.+)$")
_NAME = re.compile(r"[A-Za-z_]\w*")
# calls that may write into arrays they are given (BLAS products, the index library, sorts)
_WRITERS = ("_la.dot_into(", "_ix.", ".sort(", "np.copyto(")
_HEADERS = ("for ", "while ", "if ", "elif ", "else:", "return", "raise", "break", "continue")
MAX_DISTANCE = 40  # statements searched between a temporary and its reader


def _assigned(line: str) -> set[str] | None:
    """The names a statement assigns (array names for element writes); None if it may write anything."""
    text = line.strip()
    if any(writer in text for writer in _WRITERS):
        return None
    if text.startswith(_HEADERS):
        return {match for match in _NAME.findall(text.split(" in ")[0])} if text.startswith("for ") else set()
    target, equals, _ = text.partition(" = ")
    if not equals:
        for operator in (" += ", " -= ", " *= ", " /= "):
            if operator in text:
                return {_NAME.match(text).group()}
        return None  # an expression statement: a call that may write anything
    if "[" in target:  # an element write: the array is assigned
        return {_NAME.match(target).group()}
    return {_NAME.match(part.strip()).group() for part in target.split(",") if _NAME.match(part.strip())}


def _atomic(expr: str) -> bool:
    """Can `expr` stand anywhere without parentheses (a name, a number, a call or an element, a bracketed whole)?"""
    if re.fullmatch(r"[\w.]+", expr):
        return True
    depth = 0
    for k, char in enumerate(expr):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
            if depth == 0 and k != len(expr) - 1:
                return False
        elif depth == 0 and not (char.isalnum() or char in "_."):
            return False
    return depth == 0


def inline_temporaries(lines: list[str]) -> list[str]:
    """`lines` with every single-use temporary moved into its reader where that is safe (module docstring)."""
    lines = list(lines)
    occurrences: dict[str, list[int]] = {}
    for k, line in enumerate(lines):
        for name in _NAME.findall(line):
            if name[0] == "t" and name[1:].isdigit():
                occurrences.setdefault(name, []).append(k)
    for k in range(len(lines)):
        match = _TEMPORARY.match(lines[k]) if lines[k] is not None else None
        if match is None:
            continue
        indent, name, expr = match.groups()
        places = occurrences.get(name, [])
        if len(places) != 2 or places[0] != k:
            continue
        reader = places[1]
        if reader - k > MAX_DISTANCE or lines[reader] is None or not lines[reader].startswith(indent) \
                or lines[reader][len(indent)] == " " or lines[reader].lstrip().startswith("while "):
            continue
        reads = set(_NAME.findall(expr))
        safe = True
        for between in range(k + 1, reader):
            line = lines[between]
            if line is None:
                continue
            if len(line) - len(line.lstrip(" ")) < len(indent):  # the block ended before the reader
                safe = False
                break
            assigned = _assigned(line)
            if assigned is None or assigned & reads:
                safe = False
                break
        if not safe:
            continue
        text = expr if _atomic(expr) else f"({expr})"
        lines[reader] = re.sub(rf"\b{name}\b", lambda _, text=text: text, lines[reader], count=1)
        lines[k] = None
        for moved in _NAME.findall(expr):
            if moved in occurrences:
                occurrences[moved] = sorted(reader if place == k else place for place in occurrences[moved])
    return [line for line in lines if line is not None]


_FRESH = re.compile(r"(?<![\w.])([a-z]+)(\d+)\b")


def canonical_names(*blocks: list[str]) -> tuple[list[list[str]], dict[str, str]]:
    """The `blocks` of lines with the emitter's names (`t17`, `acc40`, `b9`: letters and a counter) renumbered
    in order of first appearance, and the renaming. Two programs that differ only in names the emitter spent
    on the way (a planning pass, a size-dependent choice elsewhere) then give the same text, so the same
    compiled code (the disk cache and Numba's are keyed by the text). Parameters (`p0`, `a0`) keep theirs."""
    renamed: dict[str, str] = {}

    def rename(match):
        name = match.group(0)
        if match.group(1) in ("p", "a"):
            return name
        if name not in renamed:
            renamed[name] = f"{match.group(1)}{len(renamed) + 1}"
        return renamed[name]

    return [[_FRESH.sub(rename, line) for line in lines] for lines in blocks], renamed
