"""Trim the spare capacity of the shared switches before a symmetric fabric is split.

On a fat tree whose bottleneck is each GPU's own link, the leaf-spine links carry far more
than the optimum needs: a leaf must pass about one unit per tree that enters or leaves it,
(N - n_leaf)·k units each way, while its uplinks hold up to 16× that. Splitting the spines
with all of it gives every GPU logical edges to most GPUs of other leaves (about N²/3 one-unit
edges at 4096 GPUs), and a dense logical graph makes everything after it slow.

:func:`trim_shared_links` lowers every link at a switch outside the boxes (spines, rails, IB
switches: the switches a box translation fixes) to at most a common cap ``c``, the smallest
``c`` that keeps the splitting invariant ``λ(s, v) >= N·k`` for every compute node v. The
check needs one max-flow per orbit of compute nodes (the trimmed fabric keeps the
translation, since σ fixes those switches), and ``c`` is found by bisection. Lowering a
capacity never raises a max-flow, so the optimum is unchanged: the cut bound needs no more
than the trimmed links give, and trees packed on the trimmed capacities fit the untrimmed
fabric.

Then the links *between* two shared switches (leaf-spine when the leaves themselves are
shared, as in GB200 NVL72 racks on a rail-optimised 2-tier network) get their own smallest
common cap, by a second bisection. On 16 NVL72 racks that cap is 0: the rail leaves already
join every rack, so the spines carry nothing, and plan splitting (which cannot split a shared
switch next to another shared switch) sees leaves with box neighbours only.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solver.algorithm.symmetry import BoxSymmetry
from solver.flow.csr import IndexedFabric, flow_network
from solver.flow.sinks import flows_to_sinks


def trim_shared_links(
    fabric: IndexedFabric,
    caps: list[int],
    k: int,
    sym: BoxSymmetry,
    check: Callable[[], None] | None = None,
) -> list[int]:
    """Edge capacities (in ``fabric.edges`` order) with the links at shared switches capped.

    Returns ``caps`` itself when nothing can be trimmed, or when capping would leave a switch
    unbalanced (in-capacity != out-capacity; plan splitting needs balanced switches).
    """
    shared = np.asarray(
        [
            sym.box_of[u] < 0
            and not fabric.is_compute[u]
            or sym.box_of[v] < 0
            and not fabric.is_compute[v]
            for u, v in fabric.edges
        ],
        dtype=bool,
    )
    if not shared.any():
        return caps
    base = np.asarray(caps, dtype=np.int64)
    N = fabric.num_compute
    net = flow_network(fabric, caps, k)
    arcs = net.edge_arc[: len(caps)][shared]
    sinks = sym.sinks(fabric)

    def holds(c: int) -> bool:
        net.cap[arcs] = np.minimum(base[shared], c)
        flows = flows_to_sinks(net, fabric.n, sinks, N * k, check=check)
        return all(flow >= N * k for flow, _ in flows)

    lo = _smallest(holds, int(base[shared].max()))
    trimmed = base.copy()
    trimmed[shared] = np.minimum(base[shared], lo)
    # links between two shared switches (leaf-spine in a 2-tier network outside the boxes)
    # may need far less than the common cap: a second bisection for them alone
    inner = np.asarray(
        [
            sym.box_of[u] < 0
            and sym.box_of[v] < 0
            and not fabric.is_compute[u]
            and not fabric.is_compute[v]
            for u, v in fabric.edges
        ],
        dtype=bool,
    )
    if inner.any():
        net.cap[arcs] = trimmed[shared]
        inner_arcs = net.edge_arc[: len(caps)][inner]
        inner_base = trimmed[inner]

        def inner_holds(c: int) -> bool:
            net.cap[inner_arcs] = np.minimum(inner_base, c)
            flows = flows_to_sinks(net, fabric.n, sinks, N * k, check=check)
            return all(flow >= N * k for flow, _ in flows)

        trimmed[inner] = np.minimum(inner_base, _smallest(inner_holds, int(inner_base.max())))
    if np.array_equal(trimmed, base):
        return caps
    if not _balanced(fabric, trimmed) and _balanced(fabric, base):
        return caps
    return trimmed.tolist()


def _smallest(holds: Callable[[int], bool], top: int) -> int:
    """The smallest c in [0, top] with ``holds(c)``, by bisection (``holds(top)`` is assumed:
    capping at the largest capacity changes nothing)."""
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _balanced(fabric: IndexedFabric, caps: np.ndarray) -> bool:
    """Whether every switch has equal in- and out-capacity."""
    tails = np.asarray([u for u, _ in fabric.edges], dtype=np.int64)
    heads = np.asarray([v for _, v in fabric.edges], dtype=np.int64)
    into = np.bincount(heads, weights=caps, minlength=fabric.n)
    out = np.bincount(tails, weights=caps, minlength=fabric.n)
    switch = ~np.asarray(fabric.is_compute, dtype=bool)
    return bool(np.array_equal(into[switch], out[switch]))
