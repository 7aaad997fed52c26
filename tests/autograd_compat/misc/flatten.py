"""autograd.misc.flatten: a pytree of arrays as one vector, and the function that rebuilds it.

adarray's pytrees (tuples, lists, dicts with sorted keys, None) replace autograd's vspaces; the
unflatten function uses adarray.numpy, so it also works on traced vectors."""
import numpy as _onp

import adarray.numpy as _anp
from adarray.core.pytree import flatten as _tree_flatten
from adarray.core.pytree import unflatten as _tree_unflatten


def flatten(value):
    leaves, tree = _tree_flatten(value)
    shapes = [_onp.shape(leaf) if not hasattr(leaf, "aval") else leaf.aval.shape for leaf in leaves]
    sizes = [int(_onp.prod(s)) for s in shapes]
    flat = _anp.concatenate([_anp.ravel(leaf) for leaf in leaves]) if leaves else _onp.zeros(0)

    def unflatten(vector):
        parts, start = [], 0
        for shape, size in zip(shapes, sizes):
            parts.append(_anp.reshape(vector[start:start + size], shape))
            start += size
        return _tree_unflatten(tree, parts)

    return flat, unflatten


def flatten_func(func, example):
    """(flat_func, unflatten, flat_example): func seen as a map between flat vectors, for a function of a
    pytree shaped like `example` that returns a pytree; extra positional arguments pass through."""
    flat_example, unflatten = flatten(example)

    def flat_func(vector, *args):
        return flatten(func(unflatten(vector), *args))[0]

    return flat_func, unflatten, flat_example
