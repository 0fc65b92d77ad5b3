"""Auto-layout algorithms: node positions (scene units, y down, ~100 between neighbours).

Pure functions of a :class:`solver.Topology`; the window applies the result as one undoable
ApplyLayoutCommand. ``layered`` keeps boxes (groups) together with switches above and network
below, ``spring`` is a force-directed layout (networkx), ``circular`` puts compute nodes on a
circle and switches on an inner one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from solver.model.topology import COMPUTE, Topology

Positions = dict[str, tuple[float, float]]

SPACING = 100.0

# vertical tier of a role in the layered layout (0 = top)
_TIERS = {
    "nvswitch": 0,
    "xgmi": 0,
    "pcie": 0,
    "cpu": 0,
    "nic": 2,
    "leaf": 3,
    "ib": 3,
    "rail": 3,
    "spine": 4,
}


def _tier(kind: str, role: str) -> int:
    role = (role or "").lower()
    for name, tier in _TIERS.items():
        if role.startswith(name):
            return tier
    return 1 if kind == COMPUTE else 3


def layered(topo: Topology) -> Positions:
    """Groups side by side (wrapped in a grid), each with one row per role tier; ungrouped
    nodes in their tier's row below the grid, centred."""
    groups: dict[str, list] = {}
    loose: list = []
    for n in topo.nodes:
        (groups.setdefault(n.group, []) if n.group else loose).append(n)
    pos: Positions = {}
    # size of each group block
    blocks = []
    for g, members in groups.items():
        rows: dict[int, list] = {}
        for n in members:
            rows.setdefault(_tier(n.kind, n.role), []).append(n)
        width = max(len(r) for r in rows.values())
        blocks.append((g, rows, width))
    cols = max(1, math.ceil(math.sqrt(len(blocks) / 2))) if len(blocks) > 4 else max(1, len(blocks))
    block_w = max((w for _, _, w in blocks), default=1) * SPACING + SPACING * 1.5
    tiers_used = sorted({t for _, rows, _ in blocks for t in rows})
    block_h = (len(tiers_used) + 0.5) * SPACING * 1.5 if tiers_used else 0.0
    tier_y = {t: i * SPACING * 1.5 for i, t in enumerate(tiers_used)}
    for b, (_, rows, _) in enumerate(blocks):
        ox = (b % cols) * block_w
        oy = (b // cols) * block_h
        for t, members in rows.items():
            start = ox + (block_w - SPACING * 1.5 - (len(members) - 1) * SPACING) / 2
            for j, n in enumerate(members):
                pos[n.id] = (start + j * SPACING, oy + tier_y[t])
    grid_w = min(cols, max(1, len(blocks))) * block_w - SPACING * 1.5 if blocks else 0.0
    grid_h = math.ceil(len(blocks) / cols) * block_h if blocks else 0.0
    rows_loose: dict[int, list] = {}
    for n in loose:
        rows_loose.setdefault(_tier(n.kind, n.role), []).append(n)
    for i, t in enumerate(sorted(rows_loose)):
        members = rows_loose[t]
        span = (len(members) - 1) * SPACING * (2 if blocks else 1)
        start = (grid_w - span) / 2
        y = grid_h + i * SPACING * 1.5
        for j, n in enumerate(members):
            pos[n.id] = (start + j * SPACING * (2 if blocks else 1), y)
    return pos


def circular(topo: Topology) -> Positions:
    """Compute nodes on a circle (in group order), switches on an inner circle."""

    def order(nodes):
        return sorted(nodes, key=lambda n: (n.group or "", 0))  # stable: keeps file order

    compute = order([n for n in topo.nodes if n.kind == COMPUTE])
    switches = order([n for n in topo.nodes if n.kind != COMPUTE])
    radius = max(2 * SPACING, SPACING * len(compute) / (2 * math.pi))
    pos: Positions = {}
    for ring, r in ((compute, radius), (switches, radius * 0.6)):
        for j, n in enumerate(ring):
            a = 2 * math.pi * j / max(1, len(ring)) - math.pi / 2
            pos[n.id] = (r * math.cos(a), r * math.sin(a))
    return pos


SPRING_DIRECT_LIMIT = 400  # nodes; bigger fabrics are laid out group by group


def _spring_raw(nodes, edges, seed: int) -> dict:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    return nx.spring_layout(g, seed=seed, iterations=60)


def spring(topo: Topology, seed: int = 7) -> Positions:
    """A force-directed layout (networkx ``spring_layout``), scaled to the usual spacing.

    Notes
    -----
    Fruchterman-Reingold costs O(n^2) per iteration (36 s for 2178 nodes here), so fabrics with
    more than :data:`SPRING_DIRECT_LIMIT` nodes are laid out in two levels: each group (box) on
    its own, then the groups as super-nodes of the quotient graph, spread so boxes do not overlap.
    """
    ids = [n.id for n in topo.nodes]
    edges = [(ln.source, ln.target) for ln in topo.links]
    if len(ids) <= SPRING_DIRECT_LIMIT:
        raw = _spring_raw(ids, edges, seed)
        scale = SPACING * max(2.0, math.sqrt(len(ids)))
        return {k: (float(v[0]) * scale, float(v[1]) * scale) for k, v in raw.items()}
    group_of = {n.id: (n.group or f"\0{n.id}") for n in topo.nodes}
    members: dict[str, list[str]] = {}
    for node_id in ids:
        members.setdefault(group_of[node_id], []).append(node_id)
    inner: dict[str, dict[str, tuple[float, float]]] = {}
    radius: dict[str, float] = {}
    for g, nodes in members.items():
        r = SPACING * 0.7 * math.sqrt(len(nodes)) if len(nodes) > 1 else 0.0
        radius[g] = r
        if len(nodes) == 1:
            inner[g] = {nodes[0]: (0.0, 0.0)}
            continue
        nodeset = set(nodes)
        raw = _spring_raw(nodes, [(u, v) for u, v in edges if u in nodeset and v in nodeset], seed)
        inner[g] = {k: (float(v[0]) * r, float(v[1]) * r) for k, v in raw.items()}
    quotient = {(group_of[u], group_of[v]) for u, v in edges if group_of[u] != group_of[v]}
    centres = _spring_raw(list(members), quotient, seed)
    keys = list(centres)
    best = math.inf
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            d = math.dist(centres[a], centres[b]) / (radius[a] + radius[b] + SPACING)
            best = min(best, d)
    scale = 1.0 / best if best not in (0.0, math.inf) else SPACING
    pos: Positions = {}
    for g, layout in inner.items():
        cx, cy = centres[g]
        for k, (x, y) in layout.items():
            pos[k] = (float(cx) * scale + x, float(cy) * scale + y)
    return pos


LAYOUTS: dict[str, tuple[str, Callable[[Topology], Positions]]] = {
    "layered": ("Layered (by group and role)", layered),
    "spring": ("Spring (force-directed)", spring),
    "circular": ("Circular", circular),
}


def compute_layout(topo: Topology, key: str) -> Positions:
    """Positions of every node of ``topo`` by layout ``key`` (a key of :data:`LAYOUTS`)."""
    try:
        _, fn = LAYOUTS[key]
    except KeyError:
        raise ValueError(f"unknown layout {key!r} (known: {', '.join(LAYOUTS)})") from None
    return fn(topo)


def needs_layout(topo: Topology) -> bool:
    """True when some node has no position (e.g. an imported GraphML without coordinates)."""
    return any(n.x is None or n.y is None for n in topo.nodes)
