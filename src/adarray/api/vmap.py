"""vmap: vectorise a function over an axis of its arguments (in_axes / out_axes as in JAX).

The function is traced once on unbatched arguments; the batching transformation
turns that program into one that works on whole batches (no Python loop).
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.errors import ArgumentError
from ..core.pytree import TreeDef, flatten, unflatten
from ..numpy import broadcast_to, expand_dims, moveaxis
from ..numpy._core import shape
from ..tracing import Tracer
from ..transforms.vmap import vmap_program
from .staging import Staged, name_of, split_keywords, stage


def flat_axes(axes, tree: TreeDef, what: str) -> list:
    """Broadcast an axis spec (int, None, or a pytree prefix of `tree`) to one entry per leaf."""
    if axes is None or isinstance(axes, int):
        return [axes] * tree.num_leaves
    if tree.kind in ("tuple", "list", "namedtuple") and isinstance(axes, (tuple, list)) and len(axes) == len(
            tree.children):
        return [a for sub, child in zip(axes, tree.children) for a in flat_axes(sub, child, what)]
    if tree.kind == "dict" and isinstance(axes, dict) and sorted(axes) == list(tree.keys):
        return [a for key, child in zip(tree.keys, tree.children) for a in flat_axes(axes[key], child, what)]
    raise ArgumentError(f"{what} {axes!r} does not match the structure {tree}")


def vmap(fn, in_axes=0, out_axes=0):
    """Map `fn` over axis `in_axes` of its arguments, stacking results along `out_axes`.

    Keyword arguments that are arrays are mapped over their leading axis, as in JAX; other
    keyword values (numbers, strings, ...) are static and passed unchanged.

    >>> vmap(lambda x, w: x @ w, in_axes=(0, None))(xs, w)  # doctest: +SKIP
    """
    _name = name_of

    @functools.wraps(fn)
    def batched(*args, **kwargs):
        traced_kwargs, static_kwargs = split_keywords(fn, kwargs)
        leaves, in_tree = flatten((list(args), traced_kwargs))
        positional_tree, keyword_tree = in_tree.children
        axes_spec = list(in_axes) if isinstance(in_axes, tuple) else in_axes
        if isinstance(axes_spec, list) and len(axes_spec) != len(args):
            raise ArgumentError(
                f"vmap of '{_name(fn)}': in_axes has {len(axes_spec)} entries for {len(args)} arguments"
            )
        axes = flat_axes(axes_spec, positional_tree, "in_axes") + [0] * keyword_tree.num_leaves
        sizes = set()
        moved = []
        for leaf, axis in zip(leaves, axes):
            if axis is None:
                moved.append(leaf)
                continue
            leaf_shape = shape(leaf) if isinstance(leaf, Tracer) else np.shape(leaf)
            if not -len(leaf_shape) <= axis < len(leaf_shape):
                raise ArgumentError(f"vmap of '{_name(fn)}': in_axes {axis} is out of range for shape {leaf_shape}")
            sizes.add(leaf_shape[axis])
            moved.append(moveaxis(leaf, axis, 0))
        if len(sizes) != 1:
            raise ArgumentError(
                f"vmap of '{_name(fn)}' needs one batch size, got sizes {sorted(sizes) or 'none (all in_axes None)'}"
            )
        size = sizes.pop()
        flags = [axis is not None for axis in axes]
        examples = [_example(leaf, flag) for leaf, flag in zip(moved, flags)]

        def build(program, out_tree, closure, call):
            new_program, out_batched = vmap_program(program, flags + [False] * len(closure), size)
            staged = Staged(new_program, out_tree, closure)
            staged.out_batched = out_batched
            return staged

        example_args, example_kwargs = unflatten(in_tree, examples)
        staged, _ = stage(fn, ("vmap", tuple(flags), size), example_args, {**example_kwargs, **static_kwargs}, build,
                          every_call=True)
        outputs = staged(moved)
        out_axes_flat = flat_axes(out_axes, staged.out_tree, "out_axes")
        results = []
        for value, is_batched, axis in zip(outputs, staged.out_batched, out_axes_flat):
            if axis is None:
                if is_batched:
                    raise ArgumentError(f"vmap of '{_name(fn)}': out_axes None for an output that depends on the batch")
                results.append(value)
            elif is_batched:
                results.append(moveaxis(value, 0, axis))
            else:
                out = broadcast_to(expand_dims(value, 0), (size,) + tuple(np.shape(value) if not isinstance(
                    value, Tracer) else value.shape))
                results.append(moveaxis(out, 0, axis))
        return unflatten(staged.out_tree, results)

    return batched


def _example(leaf, batched: bool):
    """A stand-in with the unbatched type (only its aval is used for tracing)."""
    if isinstance(leaf, Tracer):
        aval = leaf.aval
        dtype, leaf_shape = aval.dtype, aval.shape
    else:
        array = np.asarray(leaf)
        dtype, leaf_shape = (np.float64 if isinstance(leaf, float) else array.dtype), array.shape
    if batched:
        leaf_shape = leaf_shape[1:]
    return np.broadcast_to(np.zeros((), dtype), leaf_shape)
