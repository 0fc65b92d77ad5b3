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
- an island whose GPUs have a host tree (PCIe switches, NICs, CPUs of an NCCL/RCCL dump) sits
  on a bowl instead -- an arc around the bottom, open at the top -- and each host device nearest
  to that island alone hangs outside it on arcs by hop distance (PCIe switches, then the root
  switches with their NICs, then the CPUs), at the mean angle of its neighbours one arc in, so
  no host link crosses a GPU-to-GPU chord. Which order (the circle order or the host order:
  GPUs under one CPU together, package pairs kept; each turned and mirrored) and which arc
  (:data:`_SPANS`, the full circle last) is chosen by the fewest link crossings of the box;
- GPUs without such links sit in a row (a grid of at most :data:`ROW_MAX` per row);
- the rest of the box (host devices of GPUs in rows, or as near to several islands) hangs below
  its GPUs in rows by hop distance, each node under the mean position of its neighbours in the
  row above;
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
    order = {m: i for i, m in enumerate(members)}
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


#: arcs a GPU island with a host tree may sit on (open at the top); the full circle last
_SPANS = (math.pi, 1.25 * math.pi, 1.5 * math.pi, 2 * math.pi)
_SEAM = -math.pi / 2  # angles run over (_SEAM, _SEAM + 2 pi]: the top, where no tree hangs


def _unwrap(a: float) -> float:
    while a <= _SEAM:
        a += 2 * math.pi
    while a > _SEAM + 2 * math.pi:
        a -= 2 * math.pi
    return a


def _gpu_angles(ring: list[str], adj: dict[str, dict[str, float]], span: float) -> dict[str, float]:
    """Angle of each GPU of ``ring`` in its order: a full circle from the top (clockwise, y
    down) when ``span`` is a full turn, else an arc of ``span`` around the bottom (a bowl, for
    an island with a host tree: the tree hangs below, outside every GPU-to-GPU chord). The two
    GCDs of a package take a shorter step (0.55)."""
    top = max(adj[a].get(b, 0.0) for a in ring for b in ring)
    best = {}
    for g in ring:
        tops = [h for h in ring if adj[g].get(h, 0.0) == top]
        best[g] = tops[0] if len(tops) == 1 and top > 0 else None
    steps = []
    for i in range(len(ring)):
        a, b = ring[i], ring[(i + 1) % len(ring)]
        steps.append(0.55 if best[a] == b and best[b] == a else 1.0)
    out: dict[str, float] = {}
    if span >= 2 * math.pi:
        total, angle = sum(steps), -math.pi / 2
        for g, step in zip(ring, steps, strict=True):
            out[g] = angle
            angle += 2 * math.pi * step / total
        return out
    total = sum(steps[:-1]) or 1.0
    angle = math.pi / 2 + span / 2  # the left end, then clockwise through the bottom
    for g, step in zip(ring, steps, strict=True):
        out[g] = angle
        angle -= span * step / total
    return out


def _radius(n: int, span: float) -> float:
    return max(1.2 * SPACING, SPACING * n / min(span, 2 * math.pi))


def _island(
    ring: list[str],
    stars: list[str],
    tree: dict[str, int],
    adj: dict[str, dict[str, float]],
    span: float = 2 * math.pi,
) -> Positions:
    """One island around (r, 0): GPUs ``ring`` on their circle or bowl, its ``stars`` in the
    centre, and its host ``tree`` (node -> hop distance from the GPUs) on arcs outside, each node
    at the mean angle of its neighbours one arc in, spread apart in that order."""
    r = _radius(len(ring), span)
    angle_of = _gpu_angles(ring, adj, span)
    radius_of = dict.fromkeys(ring, r)
    for level in range(1, max(tree.values(), default=0) + 1):
        row = [n for n, lv in tree.items() if lv == level]
        radius = r + level * _ROW_GAP * 0.8
        wishes = []
        for n in row:
            ang = [angle_of[v] for v in adj[n] if v in angle_of]
            if span < 2 * math.pi:  # on a bowl: between its neighbours, through the bottom
                wish = sum(ang) / len(ang) if ang else math.pi / 2
            else:
                sx = sum(math.cos(a) for a in ang)
                sy = sum(math.sin(a) for a in ang)
                wish = math.atan2(sy, sx) if (sx or sy) else math.pi / 2
            wishes.append((_unwrap(wish), n))
        gap = min(_SWITCH_GAP / radius, 2 * math.pi / max(1, len(row)))
        for n, a in _spread(wishes, gap).items():
            angle_of[n], radius_of[n] = a, radius
    pos = {
        n: (r + radius_of[n] * math.cos(a), radius_of[n] * math.sin(a)) for n, a in angle_of.items()
    }
    for j, s in enumerate(stars):
        pos[s] = (r + (j - (len(stars) - 1) / 2) * _SWITCH_GAP, 0.0)
    return pos


def _trees(
    islands: list[list[str]], row_gpus: list[str], rest: list[str], adj: dict[str, dict[str, float]]
) -> tuple[list[dict[str, int]], list[str]]:
    """Split the box's host devices: each that is nearest (in hops through host devices) to
    one island alone hangs in that island's tree (node -> hop distance); the others (nearest to
    GPUs in a row, to several islands, or to none) go in rows below."""
    hosts = set(rest)
    dist: dict[str, int] = {}
    owner: dict[str, set[int]] = {}
    frontier: list[str] = []
    for k, members in enumerate([*islands, row_gpus]):
        for g in members:
            dist[g], owner[g] = 0, {k}
            frontier.append(g)
    while frontier:
        nxt = []
        for u in frontier:
            for v in adj[u]:
                if v not in hosts:
                    continue
                if v not in dist:
                    dist[v], owner[v] = dist[u] + 1, set(owner[u])
                    nxt.append(v)
                elif dist[v] == dist[u] + 1:
                    owner[v] |= owner[u]
        frontier = nxt
    trees: list[dict[str, int]] = [{} for _ in islands]
    below = []
    for n in rest:
        own = owner.get(n, set())
        if len(own) == 1 and min(own) < len(islands):
            trees[min(own)][n] = dist[n]
        else:
            below.append(n)
    return trees, below


def _packages(ring: list[str], adj: dict[str, dict[str, float]]) -> list[tuple[str, ...]]:
    """``ring`` cut into units: the package pairs (mutual fastest links) and single GPUs."""
    top = max(adj[a].get(b, 0.0) for a in ring for b in ring)
    best = {}
    for g in ring:
        tops = [h for h in ring if adj[g].get(h, 0.0) == top]
        best[g] = tops[0] if len(tops) == 1 and top > 0 else None
    units: list[tuple[str, ...]] = []
    placed: set[str] = set()
    for g in ring:
        if g in placed:
            continue
        h = best[g]
        unit = (g, h) if h is not None and best.get(h) == g else (g,)
        placed.update(unit)
        units.append(unit)
    return units


def _host_order(
    ring: list[str], adj: dict[str, dict[str, float]], tree: dict[str, int]
) -> list[str]:
    """``ring`` reordered so that GPUs under one CPU / PCIe switch are neighbours (depth first
    from the deepest host devices), package pairs kept together."""
    inside = set(ring)
    seen: set[str] = set()
    order: list[str] = []

    def walk(u: str) -> None:
        seen.add(u)
        if u in inside:
            order.append(u)
            return
        for v in sorted(adj[u], key=lambda x: (x not in tree, x)):
            if v not in seen and (v in inside or (v in tree and tree[v] < tree[u])):
                walk(v)

    for h in sorted(tree, key=lambda h: (-tree[h], h)):
        if h not in seen:
            walk(h)
    rank = {g: i for i, g in enumerate(order)}
    units = sorted(_packages(ring, adj), key=lambda u: min(rank.get(g, len(rank)) for g in u))
    return [g for u in units for g in u]


def _unit_moves(ring: list[str], adj: dict[str, dict[str, float]]) -> list[list[str]]:
    """``ring`` with two neighbouring units (package pairs or single GPUs) exchanged, or with
    one pair turned round: the local moves tried after the candidate orders."""
    units = _packages(ring, adj)
    out = []
    for i in range(len(units)):
        j = (i + 1) % len(units)
        swapped = list(units)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        out.append([g for u in swapped for g in u])
        if len(units[i]) == 2:
            turned = list(units)
            turned[i] = units[i][::-1]
            out.append([g for u in turned for g in u])
    return out


def _ring_candidates(
    ring: list[str], adj: dict[str, dict[str, float]], tree: dict[str, int]
) -> list[tuple[list[str], float]]:
    """(order, span) of an island with a host tree to try: its circle order and its host
    order, each turned and mirrored, on each arc of :data:`_SPANS` (the half circle first: a
    search cut short by the budget keeps the bowl)."""
    n = len(ring)
    orders: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for base in (ring, _host_order(ring, adj, tree)):
        for rev in (base, base[::-1]):
            for i in range(n):
                cand = rev[i:] + rev[:i]
                if tuple(cand) not in seen:
                    seen.add(tuple(cand))
                    orders.append(cand)
    return [(order, span) for span in _SPANS for order in orders]


class _Badness:
    """Crossings of the links among a box's nodes, and ``through`` for each link drawn through
    a node (a line through a node reads as two links: worse than a crossing) -- before nodes
    step aside (:func:`_untangle`) a light weight, after it :data:`_THROUGH`. Built once per box
    (the links as index arrays), called on each candidate drawing; ``spent`` once the calls
    have done :data:`_BUDGET` element operations, so that the searches stop (bounded time)."""

    def __init__(self, nodes, adj: dict[str, dict[str, float]]) -> None:
        self.ids = sorted(nodes)
        self.adj = adj
        self.work = 0
        index = {n: i for i, n in enumerate(self.ids)}
        edges = sorted(
            {
                (min(index[a], index[b]), max(index[a], index[b]))
                for a in self.ids
                for b in adj[a]
                if b in index and b != a
            }
        )
        self.ends = np.array(edges, dtype=np.int64).reshape(-1, 2)
        ea, eb = self.ends[:, 0], self.ends[:, 1]
        shared = (ea[:, None] == ea[None, :]) | (ea[:, None] == eb[None, :])
        shared |= (eb[:, None] == ea[None, :]) | (eb[:, None] == eb[None, :])
        self.apart = np.triu(~shared, 1)  # pairs of links without a common end, each once
        self.own = np.zeros((len(edges), len(self.ids)), dtype=bool)  # a link's own ends
        self.own[np.arange(len(edges)), ea] = True
        self.own[np.arange(len(edges)), eb] = True

    @property
    def spent(self) -> bool:
        return self.work > _BUDGET

    def __call__(self, pos: Positions, through: int = 4) -> int:
        if len(self.ends) == 0:
            return 0
        self.work += len(self.ends) * (len(self.ends) + len(self.ids))
        p = np.array([pos[n] for n in self.ids], dtype=float)
        a, b = p[self.ends[:, 0]], p[self.ends[:, 1]]
        d = b - a

        def side(x: np.ndarray) -> np.ndarray:  # [i, j]: side of link i's line that x[j] is on
            return np.sign(
                d[:, None, 0] * (x[None, :, 1] - a[:, None, 1])
                - d[:, None, 1] * (x[None, :, 0] - a[:, None, 0])
            )

        split = side(a) * side(b)  # [i, j] < 0: link j's ends on either side of link i's line
        crossings = int(((split < 0) & (split.T < 0) & self.apart).sum())
        length2 = np.maximum((d**2).sum(axis=1), 1e-9)
        t = ((p[None, :, :] - a[:, None, :]) * d[:, None, :]).sum(axis=2) / length2[:, None]
        closest = a[:, None, :] + t[..., None] * d[:, None, :]
        dist = np.hypot(*(p[None, :, :] - closest).transpose(2, 0, 1))
        hit = (t > 0.02) & (t < 0.98) & (dist < _CLEARANCE) & ~self.own
        return crossings + through * int(hit.sum())


def _box(
    gpus: list[str], others: list[str], role: dict[str, str], adj: dict[str, dict[str, float]]
) -> tuple[Positions, float, float]:
    """Positions of one box relative to its top-left corner: (positions, width, height).

    Each island with a host tree tries its candidate orders (:func:`_ring_candidates`), the
    others held, and keeps the one whose box has the fewest crossings (two sweeps)."""
    stars = [n for n in others if _is_star(role[n])]
    rest = [n for n in others if n not in set(stars)]
    core = gpus + stars
    islands: list[tuple[list[str], list[str]]] = []
    row_gpus: list[str] = []
    for comp in _components(core, adj):
        cg = [n for n in comp if n in set(gpus)]
        cs = [n for n in comp if n not in set(gpus)]
        if len(cg) < 3:
            row_gpus.extend(cg)
            rest.extend(cs)
        else:
            islands.append((circle_order(cg, adj), cs))
    trees, below = _trees([ring for ring, _ in islands], row_gpus, rest, adj)
    rings = [
        (ring, _SPANS[0] if tree else 2 * math.pi)
        for (ring, _), tree in zip(islands, trees, strict=True)
    ]
    candidates = [
        _ring_candidates(ring, adj, tree) if tree else []
        for (ring, _), tree in zip(rings, trees, strict=True)
    ]
    first = _place(islands, rings, trees, row_gpus, below, adj)
    badness = _Badness(first, adj)
    best = badness(first)
    for _sweep in range(2):
        changed = False
        for k, cands in enumerate(candidates):
            for cand in cands:
                if badness.spent:
                    break
                trial = [*rings[:k], cand, *rings[k + 1 :]]
                score = badness(_place(islands, trial, trees, row_gpus, below, adj))
                if score < best:
                    best, rings, changed = score, trial, True
        if not changed:
            break
    for _sweep in range(3):  # then neighbouring packages trade places, or a package turns round
        changed = False
        for k, tree in enumerate(trees):
            if not tree:
                continue
            for trial_ring in _unit_moves(rings[k][0], adj):
                if badness.spent:
                    break
                trial = [*rings[:k], (trial_ring, rings[k][1]), *rings[k + 1 :]]
                score = badness(_place(islands, trial, trees, row_gpus, below, adj))
                if score < best:
                    best, rings, changed = score, trial, True
        if not changed:
            break
    pos = _place(islands, rings, trees, row_gpus, below, adj)
    if not pos:
        return pos, 0.0, 0.0
    fixed = set(gpus) | set(stars)
    swapped = dict(pos)
    _swap_improve(swapped, badness, [n for n in rest if n in pos], 4)
    drawn = []
    for p in (pos, swapped):  # stepping aside may undo an exchange's gain: keep the better
        _untangle(p, adj, fixed=fixed)
        drawn.append((badness(p, _THROUGH), len(drawn), p))
    pos = min(drawn)[2]
    left = min(x for x, _ in pos.values())
    up = min(yy for _, yy in pos.values())
    pos = {n: (x - left, yy - up) for n, (x, yy) in pos.items()}
    width = max(x for x, _ in pos.values())
    height = max(yy for _, yy in pos.values())
    return pos, width, height


def _swap_improve(
    pos: Positions,
    badness: _Badness,
    movable: list[str],
    through: int,
    reach: float = 3.5 * SPACING,
    rounds: int = 3,
) -> int:
    """Exchange the places of two nearby host devices, or move one to the middle of the nodes it
    links (where no node is within 0.6 spacing), while that lowers the box's ``badness`` (the
    adjacent exchange and barycentre steps of layered drawing), in place; returns the score."""
    score = badness(pos, through)
    for _ in range(rounds):
        better = False
        for i, u in enumerate(movable):
            for v in movable[i + 1 :]:
                if badness.spent:
                    return score
                if math.dist(pos[u], pos[v]) > reach:
                    continue
                pos[u], pos[v] = pos[v], pos[u]
                trial = badness(pos, through)
                if trial < score:
                    score, better = trial, True
                else:
                    pos[u], pos[v] = pos[v], pos[u]
        for u in movable:  # a device moves to the middle of what it links, if there is room
            if badness.spent:
                return score
            near = [pos[v] for v in badness.adj[u] if v in pos]
            if not near:
                continue
            mid = (sum(x for x, _ in near) / len(near), sum(y for _, y in near) / len(near))
            if any(math.dist(mid, q) < 0.6 * SPACING for n, q in pos.items() if n != u):
                continue
            old = pos[u]
            pos[u] = mid
            trial = badness(pos, through)
            if trial < score:
                score, better = trial, True
            else:
                pos[u] = old
        if not better:
            break
    return score


def _place(
    islands: list[tuple[list[str], list[str]]],
    rings: list[tuple[list[str], float]],
    trees: list[dict[str, int]],
    row_gpus: list[str],
    below: list[str],
    adj: dict[str, dict[str, float]],
) -> Positions:
    """The box drawn with the islands' GPUs in the orders and on the arcs of ``rings``: islands
    side by side, GPUs
    without an island in rows below them, then the host devices of no single island in rows
    by hop distance, each under the mean position of its neighbours."""
    pos: Positions = {}
    x0, bottom = 0.0, 0.0
    for (_, cs), (ring, span), tree in zip(islands, rings, trees, strict=True):
        p = _island(ring, cs, tree, adj, span)
        left = min(x for x, _ in p.values())
        for n, (x, y) in p.items():
            pos[n] = (x - left + x0, y)
        x0 = max(x for x, _ in pos.values()) + SPACING
        bottom = max(bottom, max(y for _, y in p.values()))
    y_row = bottom + SPACING if islands else 0.0
    for j, g in enumerate(row_gpus):
        pos[g] = (x0 + (j % ROW_MAX) * SPACING, y_row + (j // ROW_MAX) * SPACING)
    if row_gpus:
        y_row += math.ceil(len(row_gpus) / ROW_MAX) * SPACING
    elif islands:
        y_row = bottom + _ROW_GAP
    remaining = [n for n in below if n not in pos]
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
    return pos


_CLEARANCE = 0.12 * SPACING  # a link passing a node closer than this runs "through" it
_THROUGH = 12  # crossings a link through a node is worth, once nodes have stepped aside
_BUDGET = 3e7  # element operations of crossing counts per box (16p1h needs about a third)


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
        {
            (min(index[a], index[b]), max(index[a], index[b]))
            for a in ids
            for b in adj[a]
            if b in index and b != a
        }
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


def _box_key(
    group: str,
    gpus: list[str],
    others: list[str],
    role: dict[str, str],
    adj: dict[str, dict[str, float]],
) -> tuple | None:
    """What :func:`_box` depends on, with the ``group.`` prefix taken off every id, so that a
    box repeated under another name is laid out once; None when an id lacks the prefix."""
    prefix = group + "."
    members = [*gpus, *others]
    if not group or not all(n.startswith(prefix) for n in members):
        return None
    inside = set(members)
    cut = len(prefix)
    links = tuple(
        (n[cut:], v[cut:], w) for n in members for v, w in sorted(adj[n].items()) if v in inside
    )
    return (
        tuple(n[cut:] for n in gpus),
        tuple((n[cut:], role[n]) for n in others),
        links,
    )


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
    drawn = []
    done: dict[tuple, tuple[Positions, float, float]] = {}
    for group, (gpus, others) in boxes.items():
        key = _box_key(group, gpus, others, role, adj)
        if key is not None and key in done:  # the same box again (a dump read --boxes N)
            p, w, h = done[key]
            cut = len(group) + 1
            drawn.append(({f"{group}.{n[cut:]}": xy for n, xy in p.items()}, w, h))
            continue
        drawn.append(_box(gpus, others, role, adj))
        if key is not None:
            done.setdefault(key, drawn[-1])
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
