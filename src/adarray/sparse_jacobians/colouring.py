"""Graph colouring of Jacobian sparsity patterns (Curtis, Powell and Reid 1974; Coleman and Moré 1983).

Two columns of a Jacobian that share no row can be found with one forward pass: seed both at once,
and every non-zero of the result belongs to exactly one of them. A colouring of the columns' conflict
graph (an edge between two columns that share a row) groups the columns into such sets; each colour
is one forward pass (J s with s the sum of its columns' unit vectors), and the compressed Jacobian
J S is decompressed by reading entry (i, j) from column colour[j]. Rows and reverse passes are the
same on the transpose.

Greedy colouring visits the vertices in some order and gives each the smallest colour none of its
neighbours has. The order matters (Gebremedhin, Manne and Pothen, "What color is your Jacobian?",
SIAM Review 2005):
  natural        the vertices in order
  largest_first  by decreasing degree (Welsh and Powell)
  smallest_last  repeatedly remove a vertex of smallest degree, colour in reverse removal order
                 (Matula and Beck); never more colours than the graph's degeneracy + 1
  dsatur         next the vertex whose neighbours already use the most colours (Brelaz)
  auto           (the default) largest_first, then DSATUR when that left more colours than the lower
                 bound and the conflict graph is small enough (DSATUR is the slowest here, in
                 Python, and usually the best)
Measured (`adarray bench solvers --section colouring`, table in benchmarks/README.md): on bundle
adjustment every order reaches the lower bound (14 colours); on a 2-d Laplacian and on random patterns
DSATUR needs 5 and 14 colours where largest_first needs 7 and 16, smallest_last 7 and 17. The lower
bound is the largest number of non-zeros in one row (columns) or one column (rows): those columns
all conflict.
"""
from __future__ import annotations

import heapq

import numpy as np
import scipy.sparse as sp

METHODS = ("auto", "natural", "largest_first", "smallest_last", "dsatur")
DEFAULT_METHOD = "auto"

# "auto" tries DSATUR only on conflict graphs with at most this many edges (about a second).
DSATUR_EDGES = 5_000_000

# The conflict graph (a sparse matrix) is built only while the pairs of columns sharing a row,
# counted with repeats, stay below this; larger patterns are coloured on the bipartite graph of rows
# and columns directly, in largest-first order.
MAX_CONFLICTS = 150_000_000


def lower_bound(pattern) -> int:
    """The most non-zeros in one row: at least that many colours for the columns."""
    pattern = sp.csr_matrix(pattern)
    return int(np.diff(pattern.indptr).max()) if pattern.shape[0] else 0


def conflict_estimate(pattern) -> int:
    """An upper bound on the conflict graph's size (pairs of columns sharing a row, with repeats)."""
    counts = np.diff(sp.csr_matrix(pattern).indptr).astype(np.int64)
    return int(np.sum(counts * counts))


def conflict_graph(pattern):
    """The symmetric adjacency (CSR, no diagonal) of the columns of `pattern` that share a row."""
    pattern = sp.csr_matrix(pattern, dtype=bool)
    adjacency = (pattern.T @ pattern).tocsr()
    adjacency.setdiag(False)
    adjacency.eliminate_zeros()
    return adjacency


def colour_columns(pattern, method: str = DEFAULT_METHOD) -> np.ndarray:
    """A colour per column of `pattern` such that two columns sharing a row differ in colour.

    >>> colour_columns(np.array([[1, 1, 0, 0], [0, 0, 1, 1]], bool)).tolist()
    [0, 1, 0, 1]
    """
    if method not in METHODS:
        raise ValueError(f"unknown colouring method {method!r}; choose one of {', '.join(METHODS)}")
    pattern = sp.csr_matrix(pattern, dtype=bool)
    n = pattern.shape[1]
    if n == 0:
        return np.zeros(0, np.int64)
    if lower_bound(pattern) >= n:
        return np.arange(n, dtype=np.int64)  # a dense row: one column per pass
    if conflict_estimate(pattern) > MAX_CONFLICTS:
        return greedy_bipartite(pattern)
    adjacency = conflict_graph(pattern)
    if method == "auto":
        colours = greedy(adjacency, _largest_first(adjacency))
        if colours.max() + 1 > lower_bound(pattern) and adjacency.nnz <= DSATUR_EDGES:
            other = _dsatur(adjacency)
            colours = other if other.max() < colours.max() else colours
        return colours
    if method == "dsatur":
        return _dsatur(adjacency)
    order = {"natural": lambda a: np.arange(n), "largest_first": _largest_first,
             "smallest_last": _smallest_last}[method](adjacency)
    return greedy(adjacency, order)


def colour_rows(pattern, method: str = DEFAULT_METHOD) -> np.ndarray:
    """A colour per row such that two rows sharing a column differ in colour (for reverse passes)."""
    return colour_columns(sp.csr_matrix(pattern, dtype=bool).T.tocsr(), method)


def is_valid(pattern, colours) -> bool:
    """No row of `pattern` holds two columns of the same colour."""
    pattern = sp.csr_matrix(pattern, dtype=bool)
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    pairs = rows.astype(np.int64) * (int(np.max(colours, initial=0)) + 1) + np.asarray(colours)[pattern.indices]
    return np.unique(pairs).size == pairs.size


def greedy(adjacency, order) -> np.ndarray:
    """Colour the vertices in `order`, each with the smallest colour its neighbours do not have."""
    n = adjacency.shape[0]
    indptr, indices = adjacency.indptr, adjacency.indices
    colours = np.full(n, -1, np.int64)
    taken = np.full(n + 1, -1, np.int64)
    for v in np.asarray(order, np.int64):
        colours[v] = _first_free(taken, colours[indices[indptr[v]:indptr[v + 1]]], v)
    return colours


def _first_free(taken, neighbour_colours, v) -> int:
    """The smallest colour that no neighbour of v has. taken[c] == v marks colour c as used by a neighbour of
    v, so `taken` is shared by all vertices and never cleared."""
    taken[neighbour_colours[neighbour_colours >= 0]] = v
    colour = 0
    while taken[colour] == v:
        colour += 1
    return colour


def greedy_bipartite(pattern) -> np.ndarray:
    """Greedy colouring of the columns without building the conflict graph: a column's neighbours are
    the columns of its rows, gathered when it is coloured. Largest first by the number of (column,
    row) pairs it reaches, an upper bound of its degree."""
    pattern = sp.csr_matrix(pattern, dtype=bool)
    by_column = pattern.tocsc()
    row_lengths = np.diff(pattern.indptr)
    reach = np.zeros(pattern.shape[1], np.int64)
    np.add.at(reach, pattern.indices, row_lengths[np.repeat(np.arange(pattern.shape[0]), row_lengths)])
    order = np.argsort(-reach, kind="stable")
    colours = np.full(pattern.shape[1], -1, np.int64)
    taken = np.full(pattern.shape[1] + 1, -1, np.int64)
    indptr, indices = pattern.indptr, pattern.indices
    for v in order:
        rows = by_column.indices[by_column.indptr[v]:by_column.indptr[v + 1]]
        starts, lengths = indptr[rows], row_lengths[rows]
        positions = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        colours[v] = _first_free(taken, colours[indices[positions]], v)
    return colours


def _largest_first(adjacency):
    return np.argsort(-np.diff(adjacency.indptr), kind="stable")


def _smallest_last(adjacency):
    """Matula and Beck's degeneracy ordering with a bucket queue: O(vertices + edges)."""
    n = adjacency.shape[0]
    indptr, indices = adjacency.indptr, adjacency.indices
    degree = np.diff(indptr).astype(np.int64)
    buckets = [set() for _ in range(int(degree.max(initial=0)) + 1)]
    for v, d in enumerate(degree.tolist()):
        buckets[d].add(v)
    removed = np.zeros(n, bool)
    order = np.empty(n, np.int64)
    degree_list = degree.tolist()
    low = 0
    for position in range(n - 1, -1, -1):
        low = max(low - 1, 0)
        while not buckets[low]:
            low += 1
        v = buckets[low].pop()
        removed[v] = True
        order[position] = v
        for u in indices[indptr[v]:indptr[v + 1]].tolist():
            if not removed[u]:
                d = degree_list[u]
                buckets[d].discard(u)
                buckets[d - 1].add(u)
                degree_list[u] = d - 1
    return order


def _dsatur(adjacency):
    """Brelaz's DSATUR: colour next the vertex with the most distinct neighbour colours (ties: the
    largest degree), with a lazy priority queue."""
    n = adjacency.shape[0]
    indptr, indices = adjacency.indptr, adjacency.indices
    degree = np.diff(indptr).tolist()
    colours = np.full(n, -1, np.int64)
    seen = [set() for _ in range(n)]
    queue = [(0, -d, v) for v, d in enumerate(degree)]
    heapq.heapify(queue)
    while queue:
        saturation, _, v = heapq.heappop(queue)
        if colours[v] >= 0 or -saturation != len(seen[v]):
            continue  # already coloured, or a stale entry
        colour = 0
        while colour in seen[v]:
            colour += 1
        colours[v] = colour
        for u in indices[indptr[v]:indptr[v + 1]].tolist():
            if colours[u] < 0 and colour not in seen[u]:
                seen[u].add(colour)
                heapq.heappush(queue, (-len(seen[u]), -degree[u], u))
    return colours
