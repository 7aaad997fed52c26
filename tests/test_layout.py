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
    # the user-facing transformations: staging, the engine tiers (which also choose the engine of the NumPy
    # backend's kernel and reversible calls), grad/vjp/jvp/jit, vmap, jacobians, Taylor mode, jit on XLA
    "api": TRANSFORMS | {"numpy", "backends", "kernels", "reversible"},
    "scipy": EXTENSIONS,
    "nn": ARRAY_API | {"scipy"},
    "extend": TRANSFORMS | {"backends", "testing"},
    # applications: the public API, transformations and primitive families (to register enclosures by
    # primitive object), never a backend
    "bounds": EXTENSIONS | {"api", "tree_util"},
    # sparse Jacobians: a colouring of the pattern, one sweep per colour, on the public API
    "sparse_jacobians": TRANSFORMS | {"api"},
    "progress": set(),                                          # progress bars and lines (tqdm when installed)
    "optim": EXTENSIONS | {"api", "tree_util", "bounds", "sparse_jacobians", "progress"},
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


def test_the_reference_backend_imports_no_other_backend():
    """backends/numpy runs without Numba and JAX: the choice of a faster engine is made above the backends
    (api/tiering.py fills backends/numpy/registry.ACCELERATORS)."""
    reference = SOURCE / "backends" / "numpy"
    found = [f"{path.relative_to(SOURCE)}:{line} imports {target}" for path in sorted(reference.rglob("*.py"))
             for target, line, _ in _imported_modules(path)
             if target.split("/")[:2] in (["backends", "numba"], ["backends", "jax"])]
    assert not found, "the NumPy backend imports another backend:\n" + "\n".join(found)


def test_the_checker_sees_imports_inside_functions():
    text = "def late():\n    from ..backends import numpy\n    import adarray.api\n    import benchmarks.adbench\n"
    found = list(_imported_layers(SOURCE / "primitives" / "probe.py", text))
    assert found == [("backends", 2), ("api", 3), ("benchmarks", 4)]


# --- import circles and imports inside functions ----------------------------------------------------

CIRCLE_CHECK_EXCLUDES = ()  # paths left out of the circle and late-import checks (none)


def _module_name(path: pathlib.Path) -> str:
    """'primitives/elementwise' for src/adarray/primitives/elementwise.py, 'primitives' for its __init__."""
    parts = path.relative_to(SOURCE).with_suffix("").parts
    return "/".join(parts[:-1] if parts[-1] == "__init__" else parts) or "adarray"


MODULES = {_module_name(path): path for path in _modules()}


def _package_of(path: pathlib.Path) -> list[str]:
    parts = list(path.relative_to(SOURCE).parts[:-1])
    return parts


def _imported_modules(path: pathlib.Path, text: str | None = None):
    """(module, line, inside a function) for every import of a module of adarray in `path`; `from .pkg
    import name` counts `pkg/name` if that is a module, else `pkg` itself."""
    tree = ast.parse(path.read_text() if text is None else text)
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside.update(id(n) for n in ast.walk(node) if n is not node)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                package = _package_of(path)
                base = package[: len(package) - node.level + 1]
            elif node.module and node.module.split(".")[0] == "adarray":
                base = []
            else:
                continue
            names = base + [n for n in (node.module or "").split(".") if n]
            if not node.level:
                names = names[1:]
            for alias in node.names:
                target = "/".join(names + [alias.name])
                if target not in MODULES:
                    target = "/".join(names) or "adarray"
                yield target, node.lineno, id(node) in inside
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "adarray":
                    yield "/".join(names[1:]) or "adarray", node.lineno, id(node) in inside


def _import_graph():
    graph = {}
    for name, path in MODULES.items():
        if any(str(path.relative_to(SOURCE)).startswith(prefix) for prefix in CIRCLE_CHECK_EXCLUDES):
            continue
        graph[name] = {target for target, _, _ in _imported_modules(path) if target != name}
    return graph


def _circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in graph:
                    continue
                if succ not in index:
                    index[succ] = low[succ] = counter[0]
                    counter[0] += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_module_imports_itself_in_a_circle():
    """Imports inside functions count too: a circle they close is still a circle."""
    circles = _circles(_import_graph())
    assert not circles, "import circles (move the shared piece down or split a module):\n" + "\n".join(
        " <-> ".join(circle) for circle in circles)


def test_the_circle_check_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


# Imports inside functions: only of an optional engine (imported when asked for), each named here with
# its reason. The list is the ceiling: a new one is added here with its reason, or moved to the top.
LATE_IMPORTS = {
    ("backends/__init__.py", "from . import numba"): "the Numba engine, when the numba backend is asked for",
    ("api/xla.py", "from ..backends import jax as jax_backend"): "JAX, an optional dependency (backend='jax')",
    ("api/xla.py", "import jax"): "JAX, an optional dependency",
    ("testing/coverage.py", "from ..backends import jax as jax_backend"): "JAX, optional: its lowering column",
    ("api/xla.py", "from jax.sharding import NamedSharding, PartitionSpec"): "JAX, an optional dependency",
    ("progress.py", "from tqdm import tqdm"): "tqdm, an optional dependency, for progress bars only",
    ("backends/numba/options.py", "import numba"): "Numba, optional: its thread count, when a program compiles",
    ("backends/numba/runtime.py", "import numba"): "Numba, optional: imported when a program compiles",
    ("backends/numba/runtime.py", "from .mathlib import read_cycles"): "Numba, optional (mathlib is compiled code)",
}


def _late_imports():
    """(module path, the statement) for every import statement inside a function."""
    found = []
    for path in _modules():
        relative = str(path.relative_to(SOURCE))
        if any(relative.startswith(prefix) for prefix in CIRCLE_CHECK_EXCLUDES):
            continue
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    found.append((relative, ast.unparse(node)))
    return found


def test_imports_inside_functions_are_only_the_named_optional_engines():
    late = _late_imports()
    unexpected = sorted({entry for entry in late if entry not in LATE_IMPORTS})
    assert not unexpected, (
        "imports inside functions (move them to the top, or, for an optional engine, name them in "
        f"LATE_IMPORTS with the reason): {unexpected}")
    assert len(late) <= len(LATE_IMPORTS), f"{len(late)} imports inside functions, ceiling {len(LATE_IMPORTS)}"
