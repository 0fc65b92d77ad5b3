"""One automorphism σ that moves every box, nested tiers and all: an odometer of sibling shifts.

A 3-tier fabric has no box translation that fixes every switch (:mod:`solver.algorithm.symmetry`):
moving the last rack of a zone to the first of the next moves the zone's spines. It does have
verified *sibling shifts* (:mod:`solver.algorithm.orbits`): the zones of the cluster, the racks of
a zone, each shift an automorphism moving part i onto part i + 1 and fixing everything else.
They compose into one σ that counts like an odometer, the top tier's index least significant:

    σ_T = σ_{C_0} ∘ τ_T

for a part T with child parts C_0..C_{m-1} (its sibling shift τ_T), where σ_{C_0} is the odometer
of the first child (identity outside C_0) and a box's odometer is the identity. So σ moves zone z
to zone z + 1 and zone m - 1 back to zone 0 with its racks moved on by one: with branching
m_1 (top) .. m_L (boxes), σ has order B = m_1 ··· m_L, every box lies on one cycle of length B
(σ acts regularly on the boxes), and a switch of a part at depth ℓ (a zone's spines) has period
m_1 ··· m_ℓ (fixed at the top: cores, ATSWs). σ is a composition of automorphisms, and is
checked link by link again anyway, with its periods.

The tree of parts is read from the partitions of :class:`solver.algorithm.orbits._Finder`
(network tiers set aside from the farthest in): the children of a part are its compute-holding
parts at the first finer partition that splits it, and they must form one verified sibling
class. The descent stops at a box: a part whose compute nodes share one node group (racks of a
``clos3`` file, DGX nodes of a ``superpod``), or, without groups, a part whose own switches
(those in no child) touch compute nodes (an NVSwitch), or a part no finer partition splits into
one sibling class.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solver.algorithm.box_group import BoxSymmetry, is_automorphism
from solver.algorithm.orbits import _Finder
from solver.flow.csr import IndexedFabric
from solver.model.topology import Topology

#: a cycle structure with more boxes than this is not built (the order of σ bounds loops)
MAX_ORDER = 1 << 20


def find_odometer(
    topology: Topology, fabric: IndexedFabric, groups: Sequence[str | None] | None = None
) -> BoxSymmetry | None:
    """The odometer σ of ``fabric`` (see the module docstring) with its periods, or ``None``
    when the parts do not nest into single sibling classes down to boxes of at least two
    levels' worth (one level is a plain box translation: :func:`~solver.algorithm.symmetry.
    find_box_symmetry` covers it), or when the result fails the checks.

    ``groups[v]`` is node v's group name (``None`` or ``""``: none).
    """
    finder = _Finder(topology, fabric)
    partitions = [removed for _, removed in finder.partitions()]
    cache: dict[int, tuple[list[list[list[int]]], list[int]]] = {}

    def level(j: int) -> tuple[list[list[list[int]]], list[int]]:
        if j not in cache:
            found, _, part = finder.sibling_orders(partitions[j])
            cache[j] = (found, part)
        return cache[j]

    is_compute = fabric.is_compute
    group_of = list(groups) if groups is not None else [None] * fabric.n
    chain: list[list[list[int]]] = []  # per depth: the sibling class (ordered boxes)
    members = list(range(fabric.n))  # the current part on the chain (top: every node)
    j = 0
    while True:
        computes = [v for v in members if is_compute[v]]
        names = {group_of[v] for v in computes}
        if len(names) == 1 and None not in names and "" not in names:
            break  # one node group: a box
        step = _children(members, computes, j, len(partitions), level)
        if step is None:
            break
        j, orders = step
        inside = {v for order in orders for v in order}
        own = [v for v in members if v not in inside]
        if groups is None or all(g in (None, "") for g in group_of):
            if any(not is_compute[v] and any(is_compute[w] for w, _ in finder.out[v]) for v in own):
                break  # an NVSwitch of its own: a box
        chain.append(orders)
        members = orders[0]
        j += 1
    if len(chain) < 2:
        return None
    return _assemble(fabric, chain, members)


def _children(members, computes, j, count, level):
    """(partition index, ordered sibling class) of the first partition from j on that splits
    ``members`` into several compute-holding parts, if those parts are one verified sibling
    class inside ``members``; else ``None``."""
    inside = set(members)
    for i in range(j, count):
        found, part = level(i)
        held = {part[v] for v in computes}
        if -1 in held:
            return None  # a compute node set aside: no partition of this part
        if len(held) < 2:
            continue
        for orders in found:
            ids = {part[order[0]] for order in orders}
            if ids == held:
                if all(v in inside for order in orders for v in order):
                    return i, orders
                return None
        return None
    return None


def _assemble(fabric: IndexedFabric, chain: list[list[list[int]]], box0: list[int]):
    """σ from the chain of sibling classes (top first), checked, as a :class:`BoxSymmetry`."""
    n = fabric.n
    sigma = np.arange(n, dtype=np.int64)
    order = 1
    depth = np.zeros(n, dtype=np.int64)
    for orders in chain:  # σ = τ_L ∘ ... ∘ τ_1: the top shift applies first
        tau = np.arange(n, dtype=np.int64)
        m = len(orders)
        for b in range(m):
            tau[np.asarray(orders[b], dtype=np.int64)] = np.asarray(
                orders[(b + 1) % m], dtype=np.int64
            )
        sigma = tau[sigma]
        order *= m
        depth[np.asarray(orders[0], dtype=np.int64)] += 1
        if order > MAX_ORDER:
            return None
    if not is_automorphism(fabric, sigma):
        return None
    # representatives: the nodes of the chain's parts that no deeper chain part holds, i.e. per
    # cycle the node of greatest depth (exactly one per cycle, checked below)
    cycle_nodes = np.empty(n, dtype=np.int64)
    cycle_start = np.full(n, -1, dtype=np.int64)
    period = np.zeros(n, dtype=np.int64)
    phase = np.zeros(n, dtype=np.int64)
    at = 0
    for r in np.argsort(-depth, kind="stable").tolist():
        if cycle_start[r] >= 0:
            continue
        v, j = r, 0
        while True:
            cycle_nodes[at + j] = v
            cycle_start[v] = at
            phase[v] = j
            j += 1
            v = int(sigma[v])
            if v == r:
                break
            if j > order or cycle_start[v] >= 0:
                return None
        period[cycle_nodes[at : at + j]] = j
        if depth[cycle_nodes[at + 1 : at + j]].max(initial=-1) >= depth[r]:
            return None  # two nodes of one cycle on the chain: no unique representative
        at += j
    if np.any(order % period) or np.any(period[list(fabric.compute)] != order):
        return None  # σ^B is not the identity, or a compute node's orbit is not B boxes
    first = np.asarray(box0, dtype=np.int64)
    if np.any(phase[first]):
        return None
    size = len(first)
    node_at = cycle_nodes[cycle_start[first][None, :] + np.arange(order)[:, None]]
    box_of = np.full(n, -1, dtype=np.int64)
    pos_of = np.full(n, -1, dtype=np.int64)
    box_of[node_at] = np.arange(order)[:, None]
    pos_of[node_at] = np.arange(size)[None, :]
    if np.any((period == order) & (box_of < 0)):
        return None  # a node of period B outside the boxes: not a nesting of boxes
    return BoxSymmetry(
        order,
        size,
        node_at,
        box_of,
        pos_of,
        sigma,
        period=period,
        phase=phase,
        cycle_nodes=cycle_nodes,
        cycle_start=cycle_start,
    )


__all__ = ["find_odometer"]
