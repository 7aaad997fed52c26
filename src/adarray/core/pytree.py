"""Pytrees: nested tuples, lists, dicts (sorted keys) and None, with array leaves.

>>> leaves, tree = flatten({"b": 1.0, "a": (2.0, None)})
>>> leaves
[2.0, 1.0]
>>> unflatten(tree, [20.0, 10.0])
{'a': (20.0, None), 'b': 10.0}
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TreeDef:
    kind: str  # "leaf", "none", "tuple", "list", "dict"
    children: tuple = ()
    keys: tuple = ()

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(
            f"{k!r}: {c!r}" for k, c in zip(self.keys, self.children)
        ) if self.kind == "dict" else ", ".join(map(repr, self.children))
        return {"tuple": f"({inner})", "list": f"[{inner}]", "dict": f"{{{inner}}}"}[self.kind]


LEAF = TreeDef("leaf")


def flatten(tree) -> tuple[list, TreeDef]:
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves) -> TreeDef:
    if tree is None:
        return TreeDef("none")
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return TreeDef("tuple", tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, list):
        return TreeDef("list", tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, dict):
        keys = tuple(sorted(tree))
        return TreeDef("dict", tuple(_flatten(tree[k], leaves) for k in keys), keys)
    leaves.append(tree)
    return LEAF


def unflatten(treedef: TreeDef, leaves) -> object:
    iterator = iter(leaves)
    tree = _unflatten(treedef, iterator)
    if next(iterator, _END) is not _END:
        raise ValueError("too many leaves for the tree structure")
    return tree


_END = object()


def _unflatten(treedef: TreeDef, leaves):
    if treedef.kind == "leaf":
        return next(leaves)
    if treedef.kind == "none":
        return None
    children = [_unflatten(c, leaves) for c in treedef.children]
    if treedef.kind == "tuple":
        return tuple(children)
    if treedef.kind == "list":
        return children
    return dict(zip(treedef.keys, children))


def tree_map(fn, tree, *rest):
    leaves, treedef = flatten(tree)
    others = [flatten(r)[0] for r in rest]
    return unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])


def leaf_paths(treedef: TreeDef, prefix: str = "") -> list[str]:
    """A readable path per leaf, e.g. ``[0]['w']``, to name leaves in error messages."""
    if treedef.kind == "leaf":
        return [prefix or "(the value)"]
    if treedef.kind == "none":
        return []
    if treedef.kind == "dict":
        pairs = zip(treedef.keys, treedef.children)
        return [p for key, child in pairs for p in leaf_paths(child, f"{prefix}[{key!r}]")]
    return [p for i, child in enumerate(treedef.children) for p in leaf_paths(child, f"{prefix}[{i}]")]
