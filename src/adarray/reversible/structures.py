"""Structured arguments of reversible functions: dataclasses, dicts, tuples, lists and NamedTuples of arrays
(pytrees, as for ad.grad), flattened into one program variable per leaf.

A leaf is named by its path from the argument (core/pytree.leaf_paths): `layer.W1` (a field of a registered
dataclass or a NamedTuple), `params['w']` (a dict key), `pair[0]` (a tuple or list item). The parser writes
`layer.W1` and `params["w"]` as such names; `pair[0][i]` stays an element until typing, which knows that `pair`
is a tuple and reads it as the element i of the leaf `pair[0]`. A dataclass's meta (static) fields read as
constants. A whole structure, or a part of one, passed to another reversible function passes its leaves.

    >>> @rv.reversible
    ... def affine(out, layer, x):
    ...     for i in range(len(out)):
    ...         for j in range(len(x)):
    ...             out[i] += layer.W[i, j] * x[j]
    ...         out[i] += layer.b[i]
"""
from __future__ import annotations


def _fields(treedef):
    """(data field names, (name, value) of the meta fields) of a registered dataclass node, else None."""
    aux = treedef.aux
    if treedef.kind == "custom" and isinstance(getattr(aux, "data", None), tuple) and hasattr(aux, "meta"):
        return aux.data, aux.meta
    return None


def tree_type(treedef, leaf_types) -> tuple:
    """The type of a structured argument: ("tree", its TreeDef, the (kind, rank) of each leaf)."""
    return ("tree", treedef, tuple(leaf_types))


def is_tree_type(typ) -> bool:
    return isinstance(typ, tuple) and len(typ) == 3 and typ[0] == "tree"


def _walk(treedef, path, containers, leaves, constants) -> None:
    """Record every container path (-> (TreeDef, its leaf paths)) and leaf path under `path`, in leaf order."""
    if treedef.kind == "leaf":
        leaves.append(path)
        return
    start = len(leaves)
    if treedef.kind == "dict":
        steps = [f"[{key!r}]" for key in treedef.keys]
    elif treedef.kind == "namedtuple":
        steps = [f".{name}" for name in treedef.keys]
    elif _fields(treedef) is not None:
        data, meta = _fields(treedef)
        steps = [f".{name}" for name in data]
        for name, value in meta:
            constants[f"{path}.{name}"] = value
    else:
        steps = [f"[{k}]" for k in range(len(treedef.children))]
    for step, child in zip(steps, treedef.children):
        _walk(child, path + step, containers, leaves, constants)
    containers[path] = (treedef, tuple(leaves[start:]))


class Structures:
    """The structured arguments of one function specialisation, and the resolution of paths into leaves."""

    def __init__(self, fn, arg_types):
        self.containers: dict = {}  # path -> (TreeDef, leaf paths)
        self.constants: dict = {}  # path -> a meta field's value
        self.types: dict = {}  # leaf (or plain argument) -> (kind, rank)
        self.flat: list = []
        for arg, typ in zip(fn.args, arg_types):
            if is_tree_type(typ):
                leaves: list = []
                _walk(typ[1], arg, self.containers, leaves, self.constants)
                self.flat += leaves
                self.types.update(zip(leaves, typ[2]))
            else:
                self.flat.append(arg)
                self.types[arg] = typ

    def leaf_types(self) -> list:
        return [(name, self.types[name]) for name in self.flat]

    def flat_args(self) -> list:
        return list(self.flat)

    def _path(self, expr, fail):
        """(path, remaining indices) of a name or element whose leading constant indices select in a structure."""
        if isinstance(expr, str):
            return expr, ()
        path, indices = expr[1], list(expr[2:])
        while path in self.containers and indices:
            step = indices[0]
            if not isinstance(step, int) or isinstance(step, bool):
                fail(f"`{path}[...]`: a tuple or list argument is indexed by constants (its items may differ in "
                     "shape and kind)")
            treedef = self.containers[path][0]
            if treedef.kind not in ("tuple", "list", "namedtuple", "custom") or not 0 <= step < len(
                    treedef.children):
                fail(f"`{path}[{step}]`: no such item in the structured argument ({treedef})")
            if treedef.kind == "namedtuple":
                path += f".{treedef.keys[step]}"
            elif _fields(treedef) is not None:
                path += f".{_fields(treedef)[0][step]}"
            else:
                path += f"[{step}]"
            indices.pop(0)
        return path, tuple(indices)

    def _reference(self, expr, fail, whole_ok=False):
        path, rest = self._path(expr, fail)
        if path in self.containers and not whole_ok:
            fail(f"'{path}' is a structure ({self.containers[path][0]}), not a value: use its fields")
        if rest:
            return ("index", path) + tuple(self.expression(i, fail) for i in rest)
        return path

    def expression(self, expr, fail):
        """`expr` with every path resolved into a leaf (and a meta field into its constant)."""
        if not self.containers and not self.constants:
            return expr
        if isinstance(expr, str):
            if expr in self.constants:
                value = self.constants[expr]
                if not isinstance(value, (bool, int, float, complex)):
                    fail(f"'{expr}' is a static field holding {type(value).__name__}; reversible functions read "
                         "numbers")
                return value
            return self._reference(expr, fail)
        if not isinstance(expr, tuple):
            return expr
        if expr[0] == "index":
            return self._reference(expr, fail)
        if expr[0] in ("len", "shape"):
            return (expr[0], self._reference(expr[1], fail)) + expr[2:]
        return (expr[0],) + tuple(self.expression(o, fail) for o in expr[1:])

    def target(self, target, fail):
        if not self.containers:
            return target
        resolved = self._reference(target, fail)
        if (resolved if isinstance(resolved, str) else resolved[1]) in self.constants:
            fail(f"'{resolved}' is a static field of a structured argument: it cannot be updated")
        return resolved

    def call_arguments(self, args, fail) -> tuple[list, list]:
        """(the call's targets with structures expanded into their leaves, one entry per argument: the resolved
        target, or the structure's type ("tree", TreeDef, leaf types))."""
        expanded, types = [], []
        for arg in args:
            resolved = self._reference(arg, fail, whole_ok=True) if self.containers else arg
            if isinstance(resolved, str) and resolved in self.containers:
                treedef, leaves = self.containers[resolved]
                expanded += leaves
                types.append(tree_type(treedef, [self.types[leaf] for leaf in leaves]))
            else:
                expanded.append(resolved)
                types.append(resolved)
        return expanded, types
