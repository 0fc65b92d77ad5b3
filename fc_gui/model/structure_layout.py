"""The structural auto-layout: a fabric drawn the way its hardware is built.

Pure function of a :class:`solver.Topology` (no Qt), used for files without coordinates (NCCL/RCCL
dumps, GraphML from other tools) and offered in View > Auto-layout:

- every box (``group`` holding compute nodes; all ungrouped compute nodes form one box) is drawn
  on its own, boxes side by side in a grid;
- in a box, GPUs joined to each other (xGMI/NVLink meshes, rings) or through an NVSwitch sit on a
  circle, one circle per connected island, the NVSwitch(es) in its centre. On a circle no three
  GPUs are collinear, so every GPU-to-GPU link is a distinct chord. The two ends of a package pair
  (the box's fastest GPU-to-GPU links, e.g. the two GCDs of an MI250) sit next to each other, and
  the order around the circle follows the ring of the next-fastest links;
- GPUs without such links sit in a row (a grid of at most :data:`ROW_MAX` per row);
- the rest of the box (PCIe switches, NICs, CPUs) hangs below its GPUs in rows by hop distance,
  each node under the mean position of its neighbours in the row above;
- network switches (outside every box) sit in tiers below the boxes, leaves above spines; a
  scale-up switch shared by several boxes (a multi-node NVLink domain) sits above them instead,
  near the GPUs it joins.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from solver.model.topology import COMPUTE, Topology

Positions = dict[str, tuple[float, float]]

SPACING = 100.0
ROW_MAX = 8  # GPUs per row when they are not on a circle
_ROW_GAP = 0.9 * SPACING  # between rows of switches
_SWITCH_GAP = 0.6 * SPACING  # between switches in a row
_BOX_GAP = 1.5 * SPACING


def _is_star(role: str) -> bool:
    role = (role or "").lower()
    return role.startswith("nvswitch") or role.startswith("nvsw") or role.startswith("xgmi")


def _components(members: list[str], adj: dict[str, dict[str, float]]) -> list[list[str]]:
    seen: set[str] = set()
    out = []
    inside = set(members)
    for start in members:
        if start in seen:
            continue
        comp, stack = [], [start]
        seen.add(start)
        while stack:
            u = stack.pop()
            comp.append(u)
            for v in adj[u]:
                if v in inside and v not in seen:
                    seen.add(v)
                    stack.append(v)
        order = {m: i for i, m in enumerate(members)}
        out.append(sorted(comp, key=order.__getitem__))
    return out


def circle_order(gpus: list[str], adj: dict[str, dict[str, float]]) -> list[str]:
    """GPUs of one island in circle order: package pairs (mutual fastest links) adjacent, then
    a greedy walk along the fastest remaining links (a ring comes out as the ring)."""
    inside = set(gpus)
    bw = {g: {h: w for h, w in adj[g].items() if h in inside} for g in gpus}
    top = max((w for g in gpus for w in bw[g].values()), default=0.0)
    partner: dict[str, str] = {}
    for g in gpus:
        best = [h for h, w in bw[g].items() if w == top]
        if len(best) == 1:
            partner[g] = best[0]
    pairs = {g: h for g, h in partner.items() if partner.get(h) == g}
    units: list[tuple[str, ...]] = []
    placed: set[str] = set()
    for g in gpus:
        if g in placed:
            continue
        unit = (g, pairs[g]) if g in pairs else (g,)
        placed.update(unit)
        units.append(unit)
    if len(units) <= 2:
        return [g for u in units for g in u]

    def between(a: tuple[str, ...], b: tuple[str, ...]) -> float:
        return sum(bw[x].get(y, 0.0) for x in a for y in b)

    order = [units[0]]
    left = units[1:]
    while left:
        last = order[-1]
        nxt = max(left, key=lambda u: (between(last, u), -left.index(u)))
        left.remove(nxt)
        if len(last) == 2 and len(nxt) == 2:  # face the pair's better-linked end to the next
            if between((last[0],), nxt) > between((last[1],), nxt):
                order[-1] = (last[1], last[0])
                last = order[-1]
            if between((nxt[1],), (last[-1],)) > between((nxt[0],), (last[-1],)):
                nxt = (nxt[1], nxt[0])
        order.append(nxt)
    return [g for u in order for g in u]


def _spread(items: list[tuple[float, str]], gap: float) -> dict[str, float]:
    """x of each item: its wish (sorted), pushed apart to at least ``gap``, recentred."""
    items = sorted(items)
    xs: list[float] = []
    for wish, _ in items:
        xs.append(wish if not xs else max(wish, xs[-1] + gap))
    if xs:
        shift = (sum(w for w, _ in items) - sum(xs)) / len(xs)
        xs = [x + shift for x in xs]
    return {nid: x for (_, nid), x in zip(items, xs, strict=True)}


def _radial(
    ring: list[str],
    stars: list[str],
    rest: list[str],
    pos: Positions,
    adj: dict[str, dict[str, float]],
    r: float,
    x0: float,
) -> float:
    """Place one island: GPUs ``ring`` on a circle of radius ``r`` (package pairs closer), its
    ``stars`` in the centre, and the box nodes of ``rest`` that hang off this island alone on
    rings outside it (each at the mean angle of its neighbours one ring in), so that PCIe
    switches, NICs and CPUs never cross the GPU links inside. Returns the extra radius used."""
    cx = x0 + r
    angle_of: dict[str, float] = {}
    top = max(adj[a].get(b, 0.0) for a in ring for b in ring)
    best = {}
    for g in ring:
        tops = [h for h in ring if adj[g].get(h, 0.0) == top]
        best[g] = tops[0] if len(tops) == 1 and top > 0 else None
    steps = []
    for i in range(len(ring)):
        a, b = ring[i], ring[(i + 1) % len(ring)]
        steps.append(0.55 if best[a] == b and best[b] == a else 1.0)
    total = sum(steps)
    angle = -math.pi / 2
    for g, step in zip(ring, steps, strict=True):
        angle_of[g] = angle
        angle += 2 * math.pi * step / total
    for j, s in enumerate(stars):
        pos[s] = (cx + (j - (len(stars) - 1) / 2) * _SWITCH_GAP, 0.0)
    inner = set(ring)
    candidates = [n for n in rest if n not in pos]
    level, extra = 0, 0.0
    while True:
        row = [n for n in candidates if n not in angle_of and any(v in inner for v in adj[n])]
        # only nodes that hang off this island alone go on its rings
        row = [n for n in row if all(v in angle_of or v not in pos for v in adj[n])]
        if not row:
            break
        level += 1
        radius = r + level * _ROW_GAP * 0.8
        wishes = []
        for n in row:
            ang = [angle_of[v] for v in adj[n] if v in inner]
            sx = sum(math.cos(a) for a in ang)
            sy = sum(math.sin(a) for a in ang)
            wishes.append((math.atan2(sy, sx) if (sx or sy) else angle_of[ring[0]], n))
        gap = min(_SWITCH_GAP / radius, 2 * math.pi / max(1, len(row)))
        for n, a in _spread(wishes, gap).items():
            angle_of[n] = a
        extra = radius - r
        inner = set(row)
    for n, a in angle_of.items():
        rad = r if n in set(ring) else r + _level_of(n, ring, adj, angle_of) * _ROW_GAP * 0.8
        pos[n] = (cx + rad * math.cos(a), rad * math.sin(a))
    # the circle's centre is at (cx, 0); the caller shifts the box to its top-left corner
    return extra


def _level_of(n: str, ring: list[str], adj: dict[str, dict[str, float]], placed) -> int:
    """Hop distance of ``n`` from the GPUs of ``ring`` through nodes placed on its rings."""
    seen = {g: 0 for g in ring}
    frontier = list(ring)
    while frontier and n not in seen:
        nxt = []
        for u in frontier:
            for v in adj[u]:
                if v in placed and v not in seen:
                    seen[v] = seen[u] + 1
                    nxt.append(v)
        frontier = nxt
    return seen.get(n, 1)


def _box(
    gpus: list[str], others: list[str], role: dict[str, str], adj: dict[str, dict[str, float]]
) -> tuple[Positions, float, float]:
    """Positions of one box relative to its top-left corner: (positions, width, height)."""
    pos: Positions = {}
    stars = [n for n in others if _is_star(role[n])]
    rest = [n for n in others if n not in set(stars)]
    core = gpus + stars
    x0 = 0.0
    row_gpus: list[str] = []
    circle_h = 0.0
    for comp in _components(core, adj):
        cg = [n for n in comp if n in set(gpus)]
        cs = [n for n in comp if n not in set(gpus)]
        if len(cg) < 3:
            row_gpus.extend(cg)
            rest.extend(cs)
            continue
        ring = circle_order(cg, adj)
        r = max(1.2 * SPACING, SPACING * len(ring) / (2 * math.pi))
        span = r + _radial(ring, cs, rest, pos, adj, r, x0)
        x0 += 2 * span + SPACING
        circle_h = max(circle_h, 2 * span)
        continue
    y_row = circle_h / 2 + (SPACING if circle_h else 0.0)
    for j, g in enumerate(row_gpus):
        pos[g] = (x0 + (j % ROW_MAX) * SPACING, y_row + (j // ROW_MAX) * SPACING)
    if row_gpus:
        y_row += math.ceil(len(row_gpus) / ROW_MAX) * SPACING
    else:
        y_row = circle_h / 2 + _ROW_GAP if circle_h else 0.0
    # the rest hangs below, by hop distance from what is placed
    remaining = [n for n in rest if n not in pos]
    frontier = set(pos)
    y = y_row
    while remaining:
        row = [n for n in remaining if any(v in frontier for v in adj[n])]
        if not row:
            row = remaining
        wishes = []
        for i, n in enumerate(row):
            xs = [pos[v][0] for v in adj[n] if v in pos]
            wishes.append((sum(xs) / len(xs) if xs else x0 + i * _SWITCH_GAP, n))
        for n, x in _spread(wishes, _SWITCH_GAP).items():
            pos[n] = (x, y)
        frontier = set(row)
        remaining = [n for n in remaining if n not in frontier]
        y += _ROW_GAP
    if not pos:
        return pos, 0.0, 0.0
    _untangle(pos, adj, fixed=set(gpus) | set(stars))
    left = min(x for x, _ in pos.values())
    up = min(yy for _, yy in pos.values())
    pos = {n: (x - left, yy - up) for n, (x, yy) in pos.items()}
    width = max(x for x, _ in pos.values())
    height = max(yy for _, yy in pos.values())
    return pos, width, height


_CLEARANCE = 0.12 * SPACING  # a link passing a node closer than this runs "through" it


def _untangle(
    pos: Positions, adj: dict[str, dict[str, float]], fixed: set[str], rounds: int = 12
) -> None:
    """Move nodes off links that run through them (within :data:`_CLEARANCE`), in place.

    A host device (PCIe switch, CPU, NIC) steps aside; when the node passed through must stay
    (a GPU on its circle, a star), one movable end of the link moves instead -- e.g. the CPU-CPU
    diagonal that would cross an NVSwitch at the centre. A few rounds, numpy over the box."""
    ids = list(pos)
    if len(ids) < 3:
        return
    index = {n: i for i, n in enumerate(ids)}
    edges = sorted(
        {(min(index[a], index[b]), max(index[a], index[b])) for a in ids for b in adj[a]
         if b in index and b != a}
    )
    if not edges:
        return
    ends = np.array(edges, dtype=np.int64)
    p = np.array([pos[n] for n in ids], dtype=float)
    movable = np.array([n not in fixed for n in ids])
    rows = np.arange(len(ends))
    for _ in range(rounds):
        a, b = p[ends[:, 0]], p[ends[:, 1]]
        d = b - a
        length2 = np.maximum((d**2).sum(axis=1), 1e-9)
        t = ((p[None, :, :] - a[:, None, :]) * d[:, None, :]).sum(axis=2) / length2[:, None]
        closest = a[:, None, :] + t[..., None] * d[:, None, :]
        dist = np.hypot(*(p[None, :, :] - closest).transpose(2, 0, 1))
        hit = (t > 0.02) & (t < 0.98) & (dist < _CLEARANCE)
        hit[rows, ends[:, 0]] = False
        hit[rows, ends[:, 1]] = False
        if not hit.any():
            break
        for e, n in zip(*np.nonzero(hit), strict=True):
            normal = np.array([-d[e, 1], d[e, 0]]) / math.sqrt(length2[e])
            side = 1.0 if float(np.dot(p[n] - closest[e, n], normal)) >= 0 else -1.0
            need = 1.6 * _CLEARANCE - dist[e, n]
            if movable[n]:
                _step_aside(p, n, side * normal, need)
                continue
            # else move an end of the link: the line moves (1 - t) or t as far at n
            u, v = ends[e]
            tries = sorted(((1.0 - t[e, n], u), (t[e, n], v)), reverse=True)
            for w, end in tries:
                if movable[end] and _step_aside(p, end, -side * normal, need / max(w, 0.25)):
                    break
    for n, i in index.items():
        pos[n] = (float(p[i, 0]), float(p[i, 1]))


def _step_aside(p: np.ndarray, i: int, direction: np.ndarray, step: float) -> bool:
    """Move point ``i`` by ``step`` (or a little more) along ``direction``, unless every such
    move lands nearer than half a spacing to another node (then it stays: False)."""
    others = np.delete(p, i, axis=0)
    for k in (1.0, 1.5, 2.2):
        q = p[i] + k * step * direction
        if not len(others) or np.hypot(*(others - q).T).min() >= 0.5 * SPACING:
            p[i] = q
            return True
    return False


def structural(topo: Topology) -> Positions:
    """Positions of every node of ``topo`` by its structure (see the module's docstring)."""
    adj: dict[str, dict[str, float]] = defaultdict(dict)
    for ln in topo.links:
        w = float(ln.bandwidth)
        for a, b in ((ln.source, ln.target), (ln.target, ln.source)):
            adj[a][b] = adj[a].get(b, 0.0) + w
    role = {n.id: n.role or "" for n in topo.nodes}
    boxes: dict[str, tuple[list[str], list[str]]] = {}
    for n in topo.nodes:
        if n.kind == COMPUTE:
            boxes.setdefault(n.group or "", ([], []))[0].append(n.id)
    for n in topo.nodes:
        if n.kind != COMPUTE and n.group in boxes and n.group:
            boxes[n.group][1].append(n.id)
    network = [n.id for n in topo.nodes if n.kind != COMPUTE and not (n.group and n.group in boxes)]
    if "" in boxes:  # ungrouped GPUs: their direct switches and stars join them
        gpus = set(boxes[""][0])
        near = [s for s in network if any(v in gpus for v in adj[s]) and _is_star(role[s])]
        boxes[""][1].extend(near)
        network = [s for s in network if s not in set(near)]
    drawn = [_box(gpus, others, role, adj) for gpus, others in boxes.values()]
    n_boxes = len(drawn)
    cols = n_boxes if n_boxes <= 4 else max(4, math.ceil(math.sqrt(n_boxes)))
    col_w = max((w for _, w, _ in drawn), default=0.0) + _BOX_GAP
    row_h = max((h for _, _, h in drawn), default=0.0) + _BOX_GAP
    pos: Positions = {}
    for b, (p, w, _) in enumerate(drawn):
        ox = (b % cols) * col_w + (col_w - _BOX_GAP - w) / 2
        oy = (b // cols) * row_h
        for nid, (x, y) in p.items():
            pos[nid] = (ox + x, oy + y)
    # a scale-up switch shared by the boxes (an NVLink domain across trays) sits above them,
    # next to the GPUs it joins, so its links do not run through the boxes' host devices
    gpus = {n.id for n in topo.nodes if n.kind == COMPUTE}
    above = [s for s in network if _is_star(role[s]) and any(v in gpus for v in adj[s])]
    if above and pos:
        top = min(y for _, y in pos.values()) - 1.5 * SPACING
        wishes = []
        for i, n in enumerate(above):
            xs = [pos[v][0] for v in adj[n] if v in pos]
            wishes.append((sum(xs) / len(xs) if xs else i * SPACING, n))
        for n, x in _spread(wishes, SPACING).items():
            pos[n] = (x, top)
        network = [s for s in network if s not in set(above)]
    y = math.ceil(n_boxes / cols) * row_h if n_boxes else 0.0
    remaining = list(network)
    frontier = set(pos)
    while remaining:
        row = [n for n in remaining if any(v in frontier for v in adj[n])] or remaining
        wishes = []
        for i, n in enumerate(row):
            xs = [pos[v][0] for v in adj[n] if v in pos]
            wishes.append((sum(xs) / len(xs) if xs else i * SPACING, n))
        for n, x in _spread(wishes, SPACING).items():
            pos[n] = (x, y)
        frontier = set(row)
        remaining = [n for n in remaining if n not in frontier]
        y += 1.5 * SPACING
    return pos
