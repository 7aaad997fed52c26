"""The folder layout is the architecture: lower layers never import upper ones; modules stay small."""
import ast
import pathlib

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src" / "adarray"
MAX_LINES = 800

# Each layer may import itself and the layers listed (by package name under adarray).
ALLOWED = {
    "core": set(),
    "tracing": {"core"},
    "primitives": {"core"},
    "transforms": {"core", "tracing", "primitives", "passes"},
    "passes": {"core", "tracing", "primitives"},
    "backends": {"core", "primitives"},
    "numpy": {"core", "tracing", "primitives"},
    "testing": {"core", "tracing", "primitives", "transforms", "passes", "backends"},
    "control": {"core", "tracing", "primitives", "transforms", "passes", "backends"},
    "parallel": {"core", "tracing", "primitives", "transforms", "passes", "backends", "control", "numpy"},
    "kernels": {"core", "tracing", "primitives", "transforms", "passes", "backends", "control", "numpy"},
    "scipy": {"core", "tracing", "primitives", "transforms", "passes", "control", "parallel", "numpy", "scipy"},
    # Applications: the public API only (the top-level modules of the transformations, pytrees, errors).
    "optim": {"core", "api", "jacobians", "sparse_jacobians", "tree_util"},
}


def _modules():
    return sorted(SOURCE.rglob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SOURCE)))
def test_module_is_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines; split it by family or construct"


def _imported_layers(path):
    layer_depth = len(path.relative_to(SOURCE).parts) - 1
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            parts = path.relative_to(SOURCE).parts[:-1]
            base = parts[: max(0, layer_depth - (node.level - 1))]
            target = list(base) + (node.module.split(".") if node.module else [])
            if target:
                yield target[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("adarray."):
            yield node.module.split(".")[1]


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_lower_layers_never_import_upper_ones(layer):
    for path in (SOURCE / layer).rglob("*.py"):
        for imported in _imported_layers(path):
            if imported.endswith(".py") or imported == layer:
                continue
            assert imported in ALLOWED[layer], f"{path.relative_to(SOURCE)} imports adarray.{imported}"
