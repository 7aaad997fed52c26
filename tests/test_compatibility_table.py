"""The README's table "Compatibility with NumPy and SciPy" stays true.

Every name in a row's "adarray has" column exists in the adarray module of that row and can be
used as NumPy's or SciPy's can (a callable; `mgrid`/`ogrid` are indexed; a scipy.stats
distribution is a module with `logpdf` or `logpmf`); every name in "missing" does not exist yet,
so the table is updated when it lands. A module that does not exist (adarray.numpy.fft before it
is added) has every name missing.

Run this file to print the table with every name sorted into the right column again:

    PYTHONPATH=src python tests/test_compatibility_table.py
"""
from __future__ import annotations

import importlib
import pathlib
import re
import sys
import types

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Compatibility with NumPy and SciPy"
MODULES = {
    "numpy": "adarray.numpy", "numpy.linalg": "adarray.numpy.linalg", "numpy.fft": "adarray.numpy.fft",
    "scipy.special": "adarray.scipy.special", "scipy.linalg": "adarray.scipy.linalg",
    "scipy.stats": "adarray.scipy.stats", "scipy.signal": "adarray.scipy.signal", "nn": "adarray.nn",
}
ROW = re.compile(r"^\|\s*`?([\w.]+)`?\s*\|([^|]*)\|([^|]*)\|([^|]*)\|\s*$")
NAME = re.compile(r"`([^`]+)`")


def table_rows():
    """(module, group, has, missing) for every row of the README's table."""
    text = README.read_text()
    assert SECTION in text, f"README.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        match = ROW.match(line.strip())
        if match and match.group(1) in MODULES:
            module, group, has, missing = (part.strip() for part in match.groups())
            rows.append((module, group, NAME.findall(has), NAME.findall(missing)))
    return rows


def load(module):
    try:
        return importlib.import_module(MODULES[module])
    except ModuleNotFoundError:
        return None


def usable(module, namespace, name):
    """Whether `name` exists in the adarray module and can be used like its NumPy/SciPy namesake."""
    value = getattr(namespace, name, None)
    if value is None:
        return False
    if module == "scipy.stats":
        return isinstance(value, types.ModuleType) and (callable(getattr(value, "logpdf", None))
                                                        or callable(getattr(value, "logpmf", None)))
    if name in ("mgrid", "ogrid"):
        return hasattr(type(value), "__getitem__")
    return callable(value)


def test_the_table_exists_and_covers_every_module():
    rows = table_rows()
    assert {module for module, *_ in rows} == set(MODULES)
    assert sum(len(has) + len(missing) for *_, has, missing in rows) > 400


def test_no_name_is_listed_twice_for_one_module():
    seen = {}
    for module, group, has, missing in table_rows():
        for name in has + missing:
            assert (module, name) not in seen, f"{module}.{name} is in {seen[(module, name)]!r} and {group!r}"
            seen[(module, name)] = group


def test_every_name_adarray_has_exists():
    wrong = [f"{module}.{name}" for module, _, has, _ in table_rows() for name in has
             if not usable(module, load(module), name)]
    assert not wrong, f"listed as present but missing or not usable: {wrong}"


def test_every_missing_name_is_still_missing():
    present = [f"{module}.{name}" for module, _, _, missing in table_rows() for name in missing
               if hasattr(load(module), name)]
    assert not present, f"listed as missing but present now (move them to 'adarray has'): {present}"


def render():
    """The table with each name sorted into the column where it belongs today."""
    lines = ["| module | group | adarray has | missing |", "|---|---|---|---|"]
    for module, group, has, missing in table_rows():
        namespace = load(module)
        names = has + missing
        present = [n for n in names if usable(module, namespace, n)]
        absent = [n for n in names if n not in present]
        lines.append(f"| {module} | {group} | {' '.join(f'`{n}`' for n in present)} | "
                     f"{' '.join(f'`{n}`' for n in absent)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(render() + "\n")
