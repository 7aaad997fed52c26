"""Pytrees: nested containers with array leaves.

Containers are tuples, lists, dicts (sorted keys), None (no leaves), NamedTuples (automatically, as
in JAX) and any type registered with `register_node` (dataclasses through `register_dataclass`,
in adarray.tree_util). Everything else is a leaf.

>>> leaves, tree = flatten({"b": 1.0, "a": (2.0, None)})
>>> leaves
[2.0, 1.0]
>>> unflatten(tree, [20.0, 10.0])
{'a': (20.0, None), 'b': 10.0}
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import ArgumentError

# type -> (flatten: node -> (children, aux data), unflatten: (aux data, children) -> node)
_NODES: dict = {}


def register_node(node_type: type, flatten_node, unflatten_node) -> None:
    """Make instances of `node_type` containers: flatten_node(x) -> (children, hashable aux data),
    unflatten_node(aux data, children) -> x."""
    if not isinstance(node_type, type):
        raise ArgumentError(f"register_pytree_node: {node_type!r} is not a type")
    if node_type in _NODES or node_type in (tuple, list, dict, type(None)):
        raise ArgumentError(f"register_pytree_node: {node_type.__name__} is already a pytree node type")
    if not callable(flatten_node) or not callable(unflatten_node):
        raise ArgumentError(f"register_pytree_node: the flatten and unflatten functions of {node_type.__name__} "
                            "must be callable")
    _NODES[node_type] = (flatten_node, unflatten_node)


@dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree. Equal structures compare (and hash) equal, so it can key caches.

    kind: "leaf", "none", "tuple", "list", "dict", "namedtuple" (node_type: the class, keys: its
    fields) or "custom" (node_type: the registered type, aux: its hashable aux data).
    """

    kind: str
    children: tuple = ()
    keys: tuple = ()
    node_type: type | None = None
    aux: object = None

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
        if self.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.keys, self.children)) + "}"
        inner = ", ".join(map(repr, self.children))
        if self.kind == "namedtuple":
            fields = ", ".join(f"{k}={c!r}" for k, c in zip(self.keys, self.children))
            return f"{self.node_type.__name__}({fields})"
        if self.kind == "custom":
            return f"{self.node_type.__name__}[{self.aux!r}]({inner})"
        return f"({inner})" if self.kind == "tuple" else f"[{inner}]"


LEAF = TreeDef("leaf")
NONE = TreeDef("none")


def flatten(tree, is_leaf=None) -> tuple[list, TreeDef]:
    """(leaves in order, structure). `is_leaf(x)` may stop the descent at a container."""
    leaves: list = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(tree, leaves, is_leaf) -> TreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return LEAF
    if tree is None:
        return NONE
    kind = type(tree)
    if kind is tuple:
        return TreeDef("tuple", tuple([_flatten(t, leaves, is_leaf) for t in tree]))
    if kind is list:
        return TreeDef("list", tuple([_flatten(t, leaves, is_leaf) for t in tree]))
    if kind is dict:
        keys = _sorted_keys(tree)
        return TreeDef("dict", tuple([_flatten(tree[k], leaves, is_leaf) for k in keys]), keys)
    node = _NODES.get(kind)
    if node is not None:
        children, aux = node[0](tree)
        return TreeDef("custom", tuple(_flatten(c, leaves, is_leaf) for c in children), node_type=kind, aux=aux)
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # a NamedTuple
        return TreeDef("namedtuple", tuple(_flatten(t, leaves, is_leaf) for t in tree), tuple(tree._fields), kind)
    if isinstance(tree, (tuple, list, dict)):  # subclasses (OrderedDict, ...) as their base
        base = tuple if isinstance(tree, tuple) else list if isinstance(tree, list) else dict
        return _flatten(base(tree), leaves, is_leaf)
    leaves.append(tree)
    return LEAF


def _sorted_keys(tree: dict) -> tuple:
    try:
        return tuple(sorted(tree))
    except TypeError:
        raise ArgumentError(f"a dict in a pytree needs keys that sort, got {list(tree)!r}") from None


def unflatten(treedef: TreeDef, leaves) -> object:
    iterator = iter(leaves)
    tree = _unflatten(treedef, iterator)
    if next(iterator, _END) is not _END:
        raise ArgumentError(f"too many leaves for the tree structure {treedef}")
    return tree


_END = object()


def _unflatten(treedef: TreeDef, leaves):
    if treedef.kind == "leaf":
        leaf = next(leaves, _END)
        if leaf is _END:
            raise ArgumentError("too few leaves for the tree structure")
        return leaf
    if treedef.kind == "none":
        return None
    children = [_unflatten(c, leaves) for c in treedef.children]
    if treedef.kind == "tuple":
        return tuple(children)
    if treedef.kind == "list":
        return children
    if treedef.kind == "dict":
        return dict(zip(treedef.keys, children))
    if treedef.kind == "namedtuple":
        return treedef.node_type(*children)
    return _NODES[treedef.node_type][1](treedef.aux, children)


def flatten_up_to(treedef: TreeDef, tree) -> list:
    """The subtrees of `tree` at the leaves of `treedef` (a prefix of tree's structure)."""
    out: list = []
    _up_to(treedef, tree, out)
    return out


def _up_to(treedef: TreeDef, tree, out) -> None:
    if treedef.kind == "leaf":
        out.append(tree)
        return
    children, node = flatten(tree, is_leaf=lambda x: x is not tree)  # one level: the children are leaves
    if (node.kind, node.keys, node.node_type, node.aux, len(node.children)) != (
            treedef.kind, treedef.keys, treedef.node_type, treedef.aux, len(treedef.children)):
        raise ArgumentError(f"tree structures do not match: expected {treedef}, got {node}")
    for child_def, child in zip(treedef.children, children):
        _up_to(child_def, child, out)


def tree_map(fn, tree, *rest, is_leaf=None):
    leaves, treedef = flatten(tree, is_leaf)
    others = [flatten_up_to(treedef, r) for r in rest]
    return unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])


def leaf_paths(treedef: TreeDef, prefix: str = "") -> list[str]:
    """A readable path per leaf, e.g. ``[0]['w']`` or ``.x``, to name leaves in error messages."""
    if treedef.kind == "leaf":
        return [prefix or "(the value)"]
    if treedef.kind == "none":
        return []
    if treedef.kind == "dict":
        pairs = zip(treedef.keys, treedef.children)
        return [p for key, child in pairs for p in leaf_paths(child, f"{prefix}[{key!r}]")]
    if treedef.kind == "namedtuple" or (treedef.kind == "custom" and isinstance(treedef.aux, _FieldNames)):
        names = treedef.keys if treedef.kind == "namedtuple" else treedef.aux.data
        return [p for name, child in zip(names, treedef.children) for p in leaf_paths(child, f"{prefix}.{name}")]
    return [p for i, child in enumerate(treedef.children) for p in leaf_paths(child, f"{prefix}[{i}]")]


@dataclass(frozen=True)
class _FieldNames:
    """The aux data of a registered dataclass: its data fields and the values of its meta fields."""

    data: tuple
    meta: tuple

    def __repr__(self) -> str:
        return ", ".join(self.data)


def register_dataclass_node(cls, data_fields, meta_fields) -> None:
    """`cls` (a dataclass) as a pytree node: `data_fields` are children, `meta_fields` static (hashed)."""
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten_node(x):
        return [getattr(x, name) for name in data_fields], _FieldNames(
            data_fields, tuple((name, getattr(x, name)) for name in meta_fields))

    def unflatten_node(aux, children):
        return cls(**dict(zip(aux.data, children)), **dict(aux.meta))

    register_node(cls, flatten_node, unflatten_node)
