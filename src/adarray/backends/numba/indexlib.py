"""Hand-written native kernels that the generated code calls for scatter partials, argsort and searchsorted.

Each writes into output arrays that the caller allocated, so a loop body that calls one allocates
nothing per iteration. Each returns False when a target is out of range, and the generated code
then raises an IndexError naming the equation. They follow the NumPy backend's implementations
(backends/numpy/arrays.py, sorting.py) element for element:

* scatter_winner: -1 where x keeps its slot (x wins a tie), else the first update equal to the
  result, -2 where nothing is (a NaN slot);
* scatter_mul_partials: zero counting per slot and one division per update; when a divided
  product is not a normal finite number (or a scaled one overflows), the exact route instead:
  a stable counting sort by slot and exclusive prefix and suffix products per slot (restarted
  per slot, so an overflowed slot does not turn later slots into NaN);
* scatter_mul_partials_from_output: the same partials given the scatter's result `output`; where every
  slot of it is a nonzero normal number whose quotient by x is one too (so no factor is zero and
  nothing overflows) the partials are w * output / x and w * output / updates, one pass over the
  updates; otherwise scatter_mul_partials, as if there were no hint;
* argsort: stable (NumPy's kind="stable"; NaN last); integer keys spanning a short range are
  counting-sorted in O(n + range), the others merge-sorted;
* searchsorted: a binary search per value with NumPy's order (NaN after everything).

This module imports numba: only generated code imports it. Like mathlib, the kernels are
compiled into the calling generated function, which Numba caches on disk.
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, fastmath=False)
def _wrapped(target, m):
    """A target as a slot: negative ones count from the end, as NumPy's indices (a select, not a branch,
    so that loops stay vectorisable); the caller checks 0 <= slot < m where the target is not known."""
    t = np.int64(target)
    return t + m if t < 0 else t


@numba.njit(cache=True, fastmath=False)
def scatter_winner(x, updates, output, targets, result):
    m, n = x.shape[0], updates.shape[0]
    # Each slot looks for its result among the updates; a slot x wins looks for NaN, which nothing equals.
    wanted = np.empty(m, output.dtype)
    for i in range(m):
        own = x[i] == output[i]
        wanted[i] = np.nan if own else output[i]
        result[i] = -1 if own else -2
    # The candidates (updates equal to their slot's wanted value) in order, without a branch: every
    # position is written and the count advances on a match. Then backwards, so that the last write into
    # a slot is its first candidate. 10^6 updates: 0.8 ms into 10^3 slots and 1.5 ms into 10^5, against
    # 1.3 and 2.3 ms in one pass that loads and tests each slot's winner so far (a branch on "no winner
    # yet" mispredicts; a select stores on every update); a scatter-min is 0.6 and 1.1 ms.
    candidates = np.empty(n, np.int64)
    count = 0
    for j in range(n):
        t = _wrapped(targets[j], m)
        if t < 0 or t >= m:
            return False
        candidates[count] = j
        count += updates[j] == wanted[t]
    for k in range(count - 1, -1, -1):
        j = candidates[k]
        result[_wrapped(targets[j], m)] = j
    return True


@numba.njit(cache=True, fastmath=False)
def scatter_mul_partials(x, updates, targets, weights, px, pu, tiny):
    m, n = x.shape[0], updates.shape[0]
    product = np.ones(m, x.dtype)
    zeros = np.zeros(m, np.int64)
    any_zero = False
    for j in range(n):
        t = _wrapped(targets[j], m)
        if t < 0 or t >= m:
            return False
        if updates[j] == 0:
            zeros[t] += 1
            any_zero = True
        else:
            product[t] *= updates[j]
    scaled = np.empty(m, x.dtype)
    exact = False
    for i in range(m):
        scaled[i] = weights[i] * x[i] * product[i]
        if np.isfinite(x[i]) and np.isfinite(weights[i]) and not np.isfinite(scaled[i]):
            exact = True
        if zeros[i] == 0 and not (np.isfinite(product[i]) and abs(product[i]) >= tiny):
            exact = True
    if exact:
        _exact_mul_partials(x, updates, targets, weights, px, pu)
        return True
    zero = x.dtype.type(0)
    for i in range(m):
        px[i] = weights[i] * (product[i] if zeros[i] == 0 else zero)
    if not any_zero:  # the common case: a division per update, no test (the loop vectorises)
        for j in range(n):
            pu[j] = scaled[_wrapped(targets[j], m)] / updates[j]
        return True
    for j in range(n):
        t = _wrapped(targets[j], m)  # in range: checked above
        count = zeros[t]
        if count == 0:
            pu[j] = scaled[t] / updates[j]
        elif count == 1 and updates[j] == 0:
            pu[j] = scaled[t]
        else:
            pu[j] = zero
    return True


@numba.njit(cache=True, fastmath=False)
def scatter_mul_partials_from_output(x, updates, targets, weights, output, px, pu, tiny):
    m, n = x.shape[0], updates.shape[0]
    scaled = np.empty(m, x.dtype)
    usable = True
    for i in range(m):
        scaled[i] = weights[i] * output[i]
        product = output[i] / x[i]  # the product of the slot's updates
        px[i] = weights[i] * product
        # Not a branch per slot but one flag: the fast route is all or nothing.
        usable &= (abs(output[i]) >= tiny) & np.isfinite(output[i]) & (abs(product) >= tiny) & np.isfinite(product)
        usable &= np.isfinite(scaled[i]) | (not np.isfinite(weights[i]))
    if not usable:
        return scatter_mul_partials(x, updates, targets, weights, px, pu, tiny)
    for j in range(n):
        t = _wrapped(targets[j], m)
        if t < 0 or t >= m:
            return False
        pu[j] = scaled[t] / updates[j]
    return True


@numba.njit(cache=True, fastmath=False)
def _exact_mul_partials(x, updates, targets, weights, px, pu):
    """The product of the others per element of [x; updates] grouped by slot (x first in its slot),
    as exclusive prefix times exclusive suffix products: no division."""
    m, n = x.shape[0], updates.shape[0]
    slots = np.empty(n, np.int64)
    for j in range(n):
        slots[j] = _wrapped(targets[j], m)  # checked by the caller
    start = np.zeros(m + 1, np.int64)
    for i in range(m):
        start[i + 1] = 1
    for j in range(n):
        start[slots[j] + 1] += 1
    for i in range(m):
        start[i + 1] += start[i]
    values = np.empty(m + n, x.dtype)
    fill = start[:m].copy()
    where = np.empty(n, np.int64)  # the position of update j in the grouped sequence
    for i in range(m):
        values[fill[i]] = x[i]
        fill[i] += 1
    for j in range(n):
        t = slots[j]
        where[j] = fill[t]
        values[fill[t]] = updates[j]
        fill[t] += 1
    others = np.empty(m + n, x.dtype)
    one = x.dtype.type(1)
    for i in range(m):
        running = one
        for k in range(start[i], start[i + 1]):
            others[k] = running
            running = running * values[k]
        running = one
        for k in range(start[i + 1] - 1, start[i] - 1, -1):
            others[k] = others[k] * running
            running = running * values[k]
    for i in range(m):
        px[i] = weights[i] * others[start[i]]
    for j in range(n):
        pu[j] = weights[slots[j]] * others[where[j]]


@numba.njit(cache=True, fastmath=False)
def argsort_any(keys, order):
    """The stable sorting permutation of the 1-d `keys` into `order`."""
    order[:] = np.argsort(keys, kind="mergesort")


@numba.njit(cache=True, fastmath=False)
def argsort_integers(keys, order):
    """Counting sort when the keys span at most 4 n + 1024 values (stable); merge sort otherwise."""
    n = keys.shape[0]
    if n == 0:
        return
    low, high = np.int64(keys[0]), np.int64(keys[0])
    for k in range(n):
        value = np.int64(keys[k])
        low, high = min(low, value), max(high, value)
    span = high - low + 1
    if span < 0 or span > 4 * n + 1024:  # span < 0: the range overflowed int64 (uint64 keys)
        order[:] = np.argsort(keys, kind="mergesort")
        return
    start = np.zeros(span + 1, np.int64)
    for k in range(n):
        start[np.int64(keys[k]) - low + 1] += 1
    for v in range(span):
        start[v + 1] += start[v]
    for k in range(n):
        v = np.int64(keys[k]) - low
        order[start[v]] = k
        start[v] += 1


@numba.njit(cache=True, fastmath=False)
def _before(a, b):
    """a < b in NumPy's sort order (NaN after every number)."""
    return a < b or (b != b and a == a)


@numba.njit(cache=True, fastmath=False)
def searchsorted(sorted_row, values, out, right):
    """Insertion positions of `values` in `sorted_row` (1-d each), leftmost or rightmost."""
    n = sorted_row.shape[0]
    for k in range(values.shape[0]):
        value = values[k]
        low, high = 0, n
        while low < high:
            middle = (low + high) >> 1
            if (not _before(value, sorted_row[middle])) if right else _before(sorted_row[middle], value):
                low = middle + 1
            else:
                high = middle
        out[k] = low
