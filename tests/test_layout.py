"""The folder layout is the architecture: lower layers never import upper ones; modules stay small.

Every module of the library belongs to a layer (a subpackage, or a top-level module) and may import
only the layers listed for it. Every import counts: `from .x import`, `from adarray.x import`,
`import adarray.x`, at module level or inside a function.
"""
import ast
import pathlib

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src" / "adarray"
MAX_LINES = 800

CORE = {"core"}
STAGING = CORE | {"tracing"}
RULES = STAGING | {"primitives"}
TRANSFORMS = RULES | {"passes", "transforms"}
NESTED = TRANSFORMS | {"control"}                              # primitives whose rules transform programs
ARRAY_API = RULES | {"numpy"}
EXTENSIONS = NESTED | {"numpy", "parallel", "kernels", "reversible"}  # every primitive family
API = {"api", "staging", "batching", "jacobians", "tree_util", "backends"}

# layer -> the layers it may import (itself always allowed)
ALLOWED = {
    "core": set(),
    "tracing": CORE,
    "primitives": CORE,
    "passes": RULES,
    "transforms": RULES | {"passes"},
    "numpy": RULES,
    "control": TRANSFORMS,
    "parallel": NESTED | {"numpy"},
    "kernels": NESTED | {"numpy"},
    "backends": EXTENSIONS - {"numpy"},                        # every family's primitives, never the user API
    "testing": TRANSFORMS | {"backends", "numpy"},
    "tree_util": CORE,
    "tiering": CORE | {"backends"},                             # the default tier: interpreter, then Numba
    "staging": TRANSFORMS | {"backends", "tiering"},
    "api": TRANSFORMS | {"staging", "backends", "compiled"},
    "compiled": TRANSFORMS | {"staging", "backends"},           # jit/lower/data_parallel on compiled backends
    "batching": TRANSFORMS | {"numpy", "staging", "api"},
    "jacobians": TRANSFORMS | {"numpy", "staging", "api", "batching"},
    "scipy": EXTENSIONS,
    "nn": ARRAY_API | {"scipy"},
    "extend": TRANSFORMS | {"backends", "testing"},
    "taylor_mode": TRANSFORMS | {"staging", "backends"},
    # applications: the public API, transformations and primitive families (to register enclosures by
    # primitive object), never a backend
    "bounds": EXTENSIONS | {"api", "staging", "tree_util"},
    # least squares: graph colouring (no adarray import), sparse Jacobians, and the solvers on the public API
    "colouring": set(),
    "sparse_jacobians": TRANSFORMS | {"staging", "api", "colouring"},
    "progress": set(),                                          # progress bars and lines (tqdm when installed)
    "optim": EXTENSIONS | {"api", "staging", "tree_util", "bounds", "jacobians", "sparse_jacobians", "progress"},
    "reversible": NESTED | {"numpy", "kernels"},                # the reversible language and its primitives
    "sparse": EXTENSIONS,                                       # an application: user API and primitives
    # the top: the package itself and the command line see everything
    "__init__": None,
    "__main__": None,
    "cli": None,
}


def _modules():
    return sorted(SOURCE.rglob("*.py"))


def _layer(path: pathlib.Path) -> str:
    parts = path.relative_to(SOURCE).parts
    return parts[0] if len(parts) > 1 else parts[0][:-3]


def _imported_layers(path: pathlib.Path, text: str | None = None):
    """(layer, line) for every import of a module of adarray (or of `benchmarks`) in `path`."""
    parts = path.relative_to(SOURCE).parts
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(parts[:-1])[: len(parts) - node.level]
            names = node.module.split(".") if node.module else []
            targets = [base + names] if names else [base + [alias.name] for alias in node.names]
            for target in targets:
                if target:
                    yield target[0].removesuffix(".py"), node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = node.module.split(".")
            if names[0] == "benchmarks":
                yield "benchmarks", node.lineno
            elif names[0] == "adarray":
                for target in ([names[1]] if len(names) > 1 else [alias.name for alias in node.names]):
                    yield target, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "benchmarks":
                    yield "benchmarks", node.lineno
                elif names[0] == "adarray" and len(names) > 1:
                    yield names[1], node.lineno


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SOURCE)))
def test_module_is_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines; split it by family or construct"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SOURCE)))
def test_every_module_imports_only_lower_layers(path):
    layer = _layer(path)
    assert layer in ALLOWED, f"{path.relative_to(SOURCE)} is in no layer: add '{layer}' to ALLOWED"
    allowed = ALLOWED[layer]
    for imported, line in _imported_layers(path):
        assert imported != "benchmarks", f"{path.relative_to(SOURCE)}:{line} imports the benchmarks"
        if allowed is None or imported == layer:
            continue
        assert imported in allowed, (
            f"{path.relative_to(SOURCE)}:{line} (layer {layer}) imports adarray.{imported}, which is not "
            f"below it; allowed: {', '.join(sorted(allowed)) or 'nothing'}"
        )


def test_the_layers_have_no_cycle():
    def reaches(start, goal, seen=()):
        return any(nxt == goal or (nxt not in seen and reaches(nxt, goal, seen + (nxt,)))
                   for nxt in (ALLOWED.get(start) or ()) if nxt in ALLOWED)

    cycles = [layer for layer in ALLOWED if ALLOWED[layer] is not None and reaches(layer, layer)]
    assert not cycles, f"layers that reach themselves: {cycles}"


def test_the_checker_sees_imports_inside_functions():
    text = "def late():\n    from ..backends import numpy\n    import adarray.api\n    import benchmarks.adbench\n"
    found = list(_imported_layers(SOURCE / "primitives" / "probe.py", text))
    assert found == [("backends", 2), ("api", 3), ("benchmarks", 4)]
