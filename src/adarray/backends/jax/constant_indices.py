"""Gathers and scatters whose index arrays are constants of the program, lowered as rows of windows.

XLA on the CPU runs a gather or scatter as a loop over its index vectors, one element at a time when
every axis is indexed by an array (about 10 ns per element for a scatter-add): the index patterns our
transformations emit (a batching rule's `arange` along the batch axis, a Jacobian's column numbers)
reach XLA as element-by-element scatters. When every index array is a constant, the selected flat
positions are known when the program is lowered, so:

* whole axes of `x` that are selected in order (a position advancing by that axis's stride along an
  axis of the index result) become the *window*: `x` is transposed to (rows, window), and the
  gather / scatter moves whole rows (a contiguous copy per index instead of one element);
* the rows left are classified: all of them in order (no gather or scatter at all), an arithmetic
  progression (a strided slice, which XLA fuses), a permutation (for a scatter: one gather of the
  updates and an elementwise combination), or a general list, with XLA told whether it is sorted
  and unique.

    form = window_form(x.shape, spec, indices)   # None when the positions cannot be computed
    form.gather(x);  form.scatter(x, updates, "add")

`fold_uniform_gather` handles the other constant case: a constant operand that does not vary along
the axes indexed by run-time arrays (the column numbers of a Jacobian gathered by data indices) gives
a constant result, so the scatter that consumes it sees constant indices again.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ...primitives.indexing import numpy_index

MAX_FOLDED = 1 << 22  # elements of a gather result computed while lowering (larger ones are left to XLA)
MAX_LAYERS = 8  # scatters with more updates on one row of x stay scatters
MAX_ANALYSED = 1 << 22  # elements of an index result analysed while lowering (larger: XLA's generic gather)


def _positions(shape, spec, indices):
    """The flat positions in an array of `shape` that `spec` with `indices` selects, or None (empty,
    out of bounds, or more than MAX_ANALYSED of them). Built axis by axis from broadcast views of
    `arange`, so the memory is that of the result, not of the indexed array."""
    if not shape or max(shape) > MAX_ANALYSED:
        return None
    index = numpy_index(spec, indices)
    positions = 0
    for axis, size in enumerate(shape):
        coordinate = np.broadcast_to(np.arange(size, dtype=np.int64).reshape(
            [size if a == axis else 1 for a in range(len(shape))]), shape)
        try:
            selected = coordinate[index]
        except (IndexError, ValueError):  # out of bounds: left to the generic lowering (XLA's clamping)
            return None
        if selected.size == 0 or selected.size > MAX_ANALYSED:
            return None
        positions = positions + selected * math.prod(shape[axis + 1:])
    return positions


class WindowForm:
    """The positions of a constant index as `rows` (one per element of the axes `rest_d` of the index
    result) of windows (the axes `window_e` of `x`, in the order of the result's axes `window_d`)."""

    def __init__(self, shape, positions):
        self.shape, self.result_shape = tuple(shape), positions.shape
        strides = [math.prod(shape[e + 1:]) for e in range(len(shape))]
        self.window_d, self.window_e = [], []
        for d, n in enumerate(positions.shape):
            if n < 2:
                continue
            step = int(np.take(positions, 1, axis=d).flat[0] - np.take(positions, 0, axis=d).flat[0])
            e = next((e for e, (size, stride) in enumerate(zip(shape, strides))
                      if size == n and stride == step and e not in self.window_e), None)
            if e is None:
                continue
            first = np.take(positions, [0], axis=d)
            along = np.arange(n).reshape([n if a == d else 1 for a in range(positions.ndim)]) * step
            if np.any((first // step) % n) or not np.array_equal(positions, first + along):
                continue
            self.window_d.append(d)
            self.window_e.append(e)
        self.rest_d = [d for d in range(positions.ndim) if d not in self.window_d]
        self.rest_e = [e for e in range(len(shape)) if e not in self.window_e]
        first = positions[tuple(0 if d in self.window_d else slice(None) for d in range(positions.ndim))]
        coordinates = np.unravel_index(first, shape)
        rest_sizes = [shape[e] for e in self.rest_e]
        rows = (np.ravel_multi_index([coordinates[e] for e in self.rest_e], rest_sizes) if self.rest_e
                else np.zeros(first.shape, np.int64))
        self.rows = np.asarray(rows, np.int64).ravel()
        self.row_count = math.prod(rest_sizes)
        self.window = math.prod(shape[e] for e in self.window_e)
        self.sorted = bool(np.all(np.diff(self.rows) >= 0))
        self.unique = len(np.unique(self.rows)) == len(self.rows)

    def _as_rows(self, x):
        return jnp.reshape(jnp.transpose(x, self.rest_e + self.window_e), (self.row_count, self.window))

    def _progression(self):
        """(start, step) when the rows are an increasing arithmetic progression, else None."""
        rows = self.rows
        step = int(rows[1] - rows[0]) if len(rows) > 1 else 1
        if step > 0 and np.array_equal(rows, rows[0] + step * np.arange(len(rows))):
            return int(rows[0]), step
        return None

    def gather(self, x):
        """`x[index]` for the constant index this form was made of. The windows stay where they are in `x`
        (XLA's offset dimensions; no transpose of `x`): a strided slice when one axis is indexed by an increasing
        progression, else one gather of whole windows; then only the (smaller) result is rearranged."""
        windows = sorted(self.window_e)
        progression = self._progression()
        if not self.rest_e:  # every axis a whole window: x itself (one row)
            taken = jnp.expand_dims(x, 0)
        elif progression is not None and len(self.rest_e) == 1:
            (axis,), (start, step) = self.rest_e, progression
            limits = list(self.shape)
            limits[axis] = start + step * (len(self.rows) - 1) + 1
            starts, strides = [0] * len(self.shape), [1] * len(self.shape)
            starts[axis], strides[axis] = start, step
            taken = jnp.transpose(jax.lax.slice(x, starts, limits, strides), [axis] + windows)
        else:
            coordinates = np.unravel_index(self.rows, [self.shape[e] for e in self.rest_e])
            dtype = np.int32 if max(self.shape) < 2 ** 31 else np.int64
            numbers = jax.lax.GatherDimensionNumbers(offset_dims=tuple(range(1, len(windows) + 1)),
                                                     collapsed_slice_dims=tuple(self.rest_e),
                                                     start_index_map=tuple(self.rest_e))
            taken = jax.lax.gather(x, np.stack(coordinates, axis=-1).astype(dtype), numbers,
                                   [1 if e in self.rest_e else size for e, size in enumerate(self.shape)],
                                   indices_are_sorted=self.sorted, unique_indices=self.unique,
                                   mode=jax.lax.GatherScatterMode.PROMISE_IN_BOUNDS)
        # taken: (rows, windows in x's order) -> (result's rest axes, windows in window_d order) -> result
        taken = jnp.transpose(taken, [0] + [1 + windows.index(e) for e in self.window_e])
        order = self.rest_d + self.window_d
        taken = jnp.reshape(taken, [self.result_shape[d] for d in order])
        return jnp.transpose(taken, np.argsort(order))

    def _layers(self):
        """The updates landing on each row of `x` as layers: in layer j, row r gets update `source[r]`, its
        j-th one (-1: none). Sorted by row first, so that occurrences keep the updates' order."""
        order = np.argsort(self.rows, kind="stable")
        by_row = self.rows[order]
        occurrence = np.arange(len(by_row)) - np.searchsorted(by_row, by_row, side="left")
        layers = []
        for j in range(int(occurrence.max()) + 1):
            source = np.full(self.row_count, -1, np.int64)
            source[by_row[occurrence == j]] = order[occurrence == j]
            layers.append(source)
        return layers

    def _take(self, table, rows):
        """table[rows] for constant rows: nothing for all of them in order, else a gather with XLA's hints."""
        if len(rows) == table.shape[0] and np.array_equal(rows, np.arange(len(rows))):
            return table
        return table.at[rows].get(indices_are_sorted=bool(np.all(np.diff(rows) >= 0)),
                                  unique_indices=len(np.unique(rows)) == len(rows), mode="promise_in_bounds",
                                  wrap_negative_indices=False)

    def scatter(self, x, updates, op):
        """`x` with `updates` combined by `op` (set, add, mul, min, max) at the constant index.

        When the updates are dense enough in `x` (each layer of `_layers` costs a pass over the rows of
        `x`), every layer is a gather of the updates combined with `x` elementwise: XLA runs gathers in
        parallel loops fused with their consumers, scatters one index after another."""
        table = self._as_rows(x)
        order = self.rest_d + self.window_d
        moved = jnp.reshape(jnp.transpose(updates, order), (len(self.rows), self.window))
        layers = self._layers() if self.unique or op != "set" else None
        if layers is not None and len(layers) <= MAX_LAYERS and len(layers) * self.row_count <= 4 * len(self.rows):
            combine = {"set": lambda old, new: new, "add": jnp.add, "mul": jnp.multiply, "min": jax.lax.min,
                       "max": jax.lax.max}[op]
            combined = table
            for source in layers:
                covered = source >= 0
                gathered = self._take(moved, np.where(covered, source, 0))
                combined = (combine(combined, gathered) if covered.all()
                            else jnp.where(covered[:, None], combine(combined, gathered), combined))
        else:
            at = table.at[self.rows]
            method = {"set": at.set, "add": at.add, "mul": at.multiply, "min": at.min, "max": at.max}[op]
            combined = method(moved, indices_are_sorted=self.sorted, unique_indices=self.unique,
                              mode="promise_in_bounds", wrap_negative_indices=False)
        combined = jnp.reshape(combined, [self.shape[e] for e in self.rest_e + self.window_e])
        return jnp.transpose(combined, np.argsort(self.rest_e + self.window_e))


def window_form(shape, spec, indices):
    """The WindowForm of a constant index into an array of `shape`, or None (empty, out of bounds)."""
    positions = _positions(tuple(shape), spec, [np.asarray(i) for i in indices])
    return None if positions is None else WindowForm(shape, positions)


def fold_uniform_gather(x, spec, indices, is_constant):
    """`x[index]` as a NumPy constant when `x` is a constant that is the same along every axis an index
    array that is not constant selects on (any in-bounds value of that index gives the same result),
    else None."""
    x = np.asarray(x)
    axis, substituted = 0, []
    arrays = iter(indices)
    for entry in spec:
        if entry[0] == "newaxis":
            continue
        if entry[0] == "array":
            index = next(arrays)
            if not is_constant(index):
                if x.shape[axis] == 0 or not np.all(x == np.take(x, [0], axis=axis)):
                    return None
                index = np.zeros(index.shape, np.int64)
            substituted.append(np.asarray(index))
        axis += 1
    try:
        result = x[numpy_index(spec, substituted)]
    except (IndexError, ValueError):
        return None
    return result if result.size <= MAX_FOLDED else None
