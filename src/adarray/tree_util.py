"""Pytrees for users, as `jax.tree_util`: nested tuples, lists, dicts, None and NamedTuples with array
leaves, plus any type you register. Every transformation takes and returns pytrees: `ad.grad` of a
function of a NamedTuple or a registered dataclass returns the same type.

>>> import adarray.tree_util as tu
>>> tu.tree_map(lambda a, b: a + b, {"w": 1.0, "b": (2.0, 3.0)}, {"w": 10.0, "b": (20.0, 30.0)})
{'b': (22.0, 33.0), 'w': 11.0}
>>> tu.tree_leaves({"w": 1.0, "b": (2.0, None)})
[2.0, 1.0]
"""
from __future__ import annotations

import dataclasses
import functools

from .core.errors import ArgumentError
from .core.pytree import TreeDef, flatten, flatten_up_to, register_dataclass_node, register_node, unflatten

__all__ = ["PyTreeDef", "register_dataclass", "register_pytree_node", "register_pytree_node_class", "tree_all",
           "tree_flatten", "tree_leaves", "tree_map", "tree_reduce", "tree_structure", "tree_unflatten"]

PyTreeDef = TreeDef

_NO_INITIAL = object()


def tree_flatten(tree, is_leaf=None) -> tuple[list, TreeDef]:
    """(leaves, treedef); `is_leaf(x)` returning True stops the descent at x.

    >>> tree_flatten((1.0, {"a": 2.0}))
    ([1.0, 2.0], (*, {'a': *}))
    """
    return flatten(tree, is_leaf)


def tree_unflatten(treedef: TreeDef, leaves):
    """The pytree of structure `treedef` with `leaves` (an iterable, in order)."""
    if not isinstance(treedef, TreeDef):
        raise ArgumentError(f"tree_unflatten needs a treedef (from tree_structure or tree_flatten), got "
                            f"{type(treedef).__name__}")
    return unflatten(treedef, list(leaves))


def tree_leaves(tree, is_leaf=None) -> list:
    """The leaves of `tree`, in order (dict entries by sorted key)."""
    return flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> TreeDef:
    """The structure of `tree` without its leaves; equal structures compare equal."""
    return flatten(tree, is_leaf)[1]


def tree_map(fn, tree, *rest, is_leaf=None):
    """fn applied leaf by leaf: ``fn(leaf, *corresponding leaves of rest)``.

    Each tree in `rest` has `tree`'s structure, or `tree`'s structure as a prefix: then fn gets the
    whole subtree found where `tree` has a leaf (as in JAX).

    >>> tree_map(lambda x, y: x * y, (1.0, [2.0]), (3.0, [4.0]))
    (3.0, [8.0])
    """
    leaves, treedef = flatten(tree, is_leaf)
    others = [flatten_up_to(treedef, other) for other in rest]
    return unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])


def tree_reduce(fn, tree, initializer=_NO_INITIAL, is_leaf=None):
    """functools.reduce(fn, leaves[, initializer]).

    >>> tree_reduce(lambda a, b: a + b, {"x": 1.0, "y": (2.0, 3.0)})
    6.0
    """
    leaves = flatten(tree, is_leaf)[0]
    if initializer is _NO_INITIAL:
        if not leaves:
            raise ArgumentError("tree_reduce of a tree without leaves needs an initializer")
        return functools.reduce(fn, leaves)
    return functools.reduce(fn, leaves, initializer)


def tree_all(tree, is_leaf=None) -> bool:
    """True when every leaf is truthy (an empty tree gives True)."""
    return all(flatten(tree, is_leaf)[0])


def register_pytree_node(nodetype: type, flatten_func, unflatten_func) -> None:
    """Make `nodetype` a container: ``flatten_func(x) -> (children, aux_data)`` and
    ``unflatten_func(aux_data, children) -> x``. aux_data must be hashable (it is part of the cache
    key of every transformation) and compare equal for equal structures.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, c: Pair(*c))
    """
    register_node(nodetype, flatten_func, unflatten_func)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: `cls.tree_flatten(self) -> (children, aux_data)` and the classmethod
    `cls.tree_unflatten(aux_data, children)` make it a container."""
    if not hasattr(cls, "tree_flatten") or not hasattr(cls, "tree_unflatten"):
        raise ArgumentError(f"register_pytree_node_class: {cls.__name__} needs the methods tree_flatten and "
                            "tree_unflatten (a classmethod)")
    register_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype: type, data_fields=None, meta_fields=None) -> type:
    """Make a dataclass a container: `data_fields` hold the (array) children, `meta_fields` static,
    hashable values that are part of the structure. Without lists, the fields marked
    ``field(metadata=dict(static=True))`` are meta fields and the others data fields (as in JAX).
    Returns the class, so it works as a decorator.

    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Params:
    ...     w: object
    ...     b: object
    """
    if not dataclasses.is_dataclass(nodetype) or not isinstance(nodetype, type):
        raise ArgumentError(f"register_dataclass needs a dataclass type, got {nodetype!r}")
    fields = [f for f in dataclasses.fields(nodetype) if f.init]
    if data_fields is None and meta_fields is None:
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise ArgumentError("register_dataclass: give both data_fields and meta_fields, or neither")
    names = {f.name for f in fields}
    listed = list(data_fields) + list(meta_fields)
    if set(listed) != names or len(listed) != len(names):
        raise ArgumentError(f"register_dataclass({nodetype.__name__}): data_fields and meta_fields must list "
                            f"each field of __init__ once: fields {sorted(names)}, listed {listed}")
    register_dataclass_node(nodetype, data_fields, meta_fields)
    return nodetype
