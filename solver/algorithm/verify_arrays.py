"""The verifier's per-tree scan on integer arrays (a numba kernel), for large schedules.

:mod:`solver.algorithm.verify` checks every tree edge of a schedule: the tree spans the compute
nodes from its root, breadth-first, every child a compute node reached once; and it counts how
many tree edges cross each link. Done edge by edge in Python that costs about 2-3 µs per tree
edge (16 GB200 NVL72 racks: 7.9M tree edges, 20-29 s). Here the distinct edge objects (trees
share them) get one index each, every tree becomes a row of edge indices, and one kernel checks
the rows; the link counts come from one ``bincount`` per tree weight and one walk over each
distinct path. Paths are checked once per distinct edge object, as before.

Nothing here names a problem: :func:`scan` returns the index of the first tree that fails (the
caller re-checks that tree edge by edge for the message), so both scans accept exactly the same
schedules. Like the rest of the verifier this shares no code with the solver.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, cast

import numpy as np

from solver.flow.jit import njit_noalloc


def scan(
    trees: Sequence[Any],
    node_index: dict[str, int],
    is_compute: np.ndarray,
    path_ok: Callable[[Any], bool],
    gather: bool,
) -> tuple[int, dict[Fraction, Counter] | None]:
    """``(-1, link uses per tree weight)`` if every tree is a valid spanning tree with valid
    paths, else ``(index of the first tree that is not, None)``."""
    slot: dict[int, int] = {}
    objects: list[Any] = []
    flat = array("q")
    starts = np.zeros(len(trees) + 1, dtype=np.int64)
    for i, tree in enumerate(trees):
        edges = tree.edges
        ids = list(map(id, edges))
        new = set(ids).difference(slot)
        if new:
            for e in edges:  # in tree order, so that indices do not depend on set order
                if id(e) in new and id(e) not in slot:
                    slot[id(e)] = len(objects)
                    objects.append(e)
        flat.extend(map(slot.__getitem__, ids))
        starts[i + 1] = len(flat)
    rows = np.frombuffer(flat, dtype=np.int64) if len(flat) else np.zeros(0, dtype=np.int64)
    E = len(objects)
    parent = np.empty(E, dtype=np.int64)
    child = np.empty(E, dtype=np.int64)
    bad = np.zeros(E, dtype=np.bool_)
    for j, e in enumerate(objects):
        a, b = (e.src, e.dst) if gather else (e.dst, e.src)
        parent[j] = node_index.get(a, -1)
        child[j] = node_index.get(b, -1)
        bad[j] = parent[j] < 0 or child[j] < 0 or not path_ok(e)
    roots = np.asarray([node_index.get(t.root, -1) for t in trees], dtype=np.int64)
    n = len(is_compute)
    N = int(np.count_nonzero(is_compute))
    failed = _scan_rows(
        rows,
        starts,
        roots,
        parent,
        child,
        bad,
        is_compute,
        N,
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
    )
    if failed >= 0:
        return failed, None
    # link uses: per tree weight, how often each distinct edge is used, then its path once
    by_weight: dict[Fraction, list[int]] = {}
    for i, tree in enumerate(trees):
        by_weight.setdefault(Fraction(tree.weight), []).append(i)
    uses_by_weight: dict[Fraction, Counter] = {}
    for weight, members in by_weight.items():
        if len(by_weight) == 1:
            counts = np.bincount(rows, minlength=E)
        else:
            idx = np.asarray(members, dtype=np.int64)
            lengths = starts[idx + 1] - starts[idx]
            # the rows of these trees, concatenated: each range starts[i]..starts[i+1]
            offsets = np.cumsum(lengths) - lengths
            take = np.repeat(starts[idx] - offsets, lengths) + np.arange(int(lengths.sum()))
            counts = np.bincount(rows[take], minlength=E)
        uses = uses_by_weight[weight] = Counter()
        for j in np.flatnonzero(counts).tolist():
            path = objects[j].path
            c = int(counts[j])
            for h in range(len(path) - 1):
                uses[path[h], path[h + 1]] += c
    return -1, uses_by_weight


@njit_noalloc
def _scan_kernel(rows, starts, roots, parent, child, bad, is_compute, N, stamp, depth):
    """The first tree (row) that is not a breadth-first spanning out-tree of the compute nodes
    from its root with valid edges, or -1. ``stamp``/``depth``: zeroed work arrays, one per
    node (stamp[v] = tree index + 1 when v is in the current tree)."""
    for i in range(len(roots)):
        r = roots[i]
        if r < 0 or not is_compute[r] or starts[i + 1] - starts[i] != N - 1:
            return i
        mark = i + 1
        stamp[r] = mark
        depth[r] = 0
        last = 1
        for a in range(starts[i], starts[i + 1]):
            j = rows[a]
            p = parent[j]
            c = child[j]
            if bad[j] or not is_compute[c] or stamp[p] != mark or stamp[c] == mark:
                return i
            d = depth[p] + 1
            if d < last:
                return i
            stamp[c] = mark
            depth[c] = d
            last = d
    return -1


# mypy sees numba's decorator, not the kernel it returns
_scan_rows = cast("Callable[..., int]", _scan_kernel)
