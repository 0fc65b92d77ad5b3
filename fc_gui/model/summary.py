"""The summary view of a big fabric: nodes grouped into aggregates found from its structure.

Pure functions and data (numpy, no Qt), tested in ``tests/gui/model/test_summary.py``. The canvas draws
a fabric above :data:`SUMMARY_NODES` nodes as its aggregates (one symbol each, the links between
two aggregates as one line with their total bandwidth) and expands an aggregate into its parts
on demand (:class:`SummaryState`).

Grouping (:func:`find_grouping`), from the fabric itself; ``group`` names are used for the
boxes when every compute node has one, but are never needed:

- **boxes**: the compute nodes joined by the fabric's fastest links (at least half the fastest
  bandwidth at a compute node: NVLink, xGMI, an NVSwitch) are one box; a switch whose links to
  boxes all go into one box (a NIC, a PCIe switch) joins it, repeatedly. With ``group`` names on
  every compute node, each group holding compute nodes is a box instead.
- **tiers**: every other switch gets its hop distance from the boxes (1: a ToR or rail switch,
  2: an aggregation switch, ...).
- **pods**: the boxes and the tier-1 switches that are only linked within one connected part of
  (boxes + tier-1 switches) form a pod (an HPN segment, a SuperPOD scalable unit), when there
  are at least two such parts holding boxes and there are fewer pods than boxes.
- **zones**: with more than :data:`ZONE_MIN_PODS` pods, the pods whose tier-1 switches all go
  up into one tier-2 switch group (the racks of a Clos zone) are one aggregate with that group.
- **switch groups**: the switches left (outside boxes and pods), tier by tier, are grouped with
  those that share a neighbour one tier down (the aggregation switches of one plane share their
  ToRs; the cores of one plane share that plane's aggregation group): one aggregate per group.
  Switches above tier 1 that share no such neighbour with any other (one top switch per plane
  of a Clos) are one aggregate per tier and role; rails and ToRs stay themselves.

The result is a tree: pods hold boxes and switches, boxes hold nodes; a switch group holds
switches. An aggregate of a single node is not made (the node is shown as itself).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from solver.model.topology import COMPUTE, Link, Node

#: The canvas shows the summary when the fabric has more nodes than this.
SUMMARY_NODES = 3000

#: Above this many pods, pods that go up into one tier-2 switch group form a zone holding them.
ZONE_MIN_PODS = 32

#: Prefix of aggregate ids (never a node id: it is checked).
AGG_PREFIX = "⊞"


@dataclass(frozen=True)
class Aggregate:
    """One aggregate: a pod, a box or a group of switches.

    ``children``: aggregate ids inside it; ``nodes``: node ids directly inside it (not in a
    child); ``compute``/``size``: compute nodes / nodes under it in all; ``tier``: hop distance
    of its switches from the boxes (0 for pods and boxes)."""

    id: str
    label: str
    level: str  # "pod" | "box" | "switches"
    parent: str | None
    children: tuple[str, ...]
    nodes: tuple[str, ...]
    compute: int
    size: int
    tier: int = 0
    roles: tuple[tuple[str, int], ...] = ()  # (role, count) of every node under it

    def caption(self) -> str:
        """``s0 · 1024 GPUs`` or ``agg group 1: 60``: short, written under its symbol."""
        if self.compute:
            return f"{self.label} · {self.compute} GPU{'s' if self.compute != 1 else ''}"
        if len(self.roles) == 1:  # "agg group 1: 60"
            return f"{self.label}: {self.size}"
        what = " + ".join(f"{c} {r or 'switch'}" for r, c in self.roles)
        return f"{self.label} · {what}"

    def details(self) -> str:
        """The caption with how many boxes and which tier (its hover text)."""
        parts = [self.caption()]
        if self.level == "pod" and self.children:
            parts.append(f"{len(self.children)} boxes" if len(self.children) != 1 else "1 box")
        if self.compute:
            parts.append(f"{self.size} nodes")
        if self.tier:
            parts.append(f"tier {self.tier}")
        return " · ".join(parts)


@dataclass
class Grouping:
    """Aggregates of one fabric (see module docstring) and the node rows they hold.

    ``ids``: node ids in document order; ``inner[row]``: index into ``order`` of the innermost
    aggregate holding node ``row`` (-1: none); ``order``: aggregate ids, parents before
    children; ``parent_index[a]``: index of the parent of aggregate ``a`` (-1: top level)."""

    ids: list[str]
    aggregates: dict[str, Aggregate]
    order: list[str]
    inner: np.ndarray
    parent_index: np.ndarray
    is_compute: np.ndarray  # per node row
    row: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.row:
            self.row = {n: i for i, n in enumerate(self.ids)}
        self.index = {a: i for i, a in enumerate(self.order)}

    def __len__(self) -> int:
        return len(self.order)

    def members(self, agg_id: str) -> list[str]:
        """Every node id under ``agg_id`` (document order)."""
        inside = self._under(self.index[agg_id])
        return [self.ids[r] for r in np.flatnonzero(inside[self.inner] & (self.inner >= 0))]

    def _under(self, a: int) -> np.ndarray:
        """Mask over aggregates: ``a`` and its descendants."""
        mask = np.zeros(len(self.order), dtype=bool)
        mask[a] = True
        for i in range(a + 1, len(self.order)):  # parents come before children
            p = self.parent_index[i]
            if p >= 0 and mask[p]:
                mask[i] = True
        return mask

    def aggregate_of(self, node_id: str) -> str | None:
        """The innermost aggregate holding ``node_id`` (None: it stands alone)."""
        a = int(self.inner[self.row[node_id]])
        return self.order[a] if a >= 0 else None

    def ancestors(self, agg_id: str) -> list[str]:
        """``agg_id`` and its parents, innermost first."""
        out = [agg_id]
        p = self.aggregates[agg_id].parent
        while p is not None:
            out.append(p)
            p = self.aggregates[p].parent
        return out


# ---------------------------------------------------------------------- grouping
class _Union:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, v: int) -> int:
        parent = self.parent
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _neighbours(n: int, src: np.ndarray, dst: np.ndarray) -> list[np.ndarray]:
    """Undirected adjacency (neighbour rows of every node)."""
    a = np.concatenate([src, dst])
    b = np.concatenate([dst, src])
    order = np.argsort(a, kind="stable")
    a, b = a[order], b[order]
    starts = np.searchsorted(a, np.arange(n + 1))
    return [b[starts[i] : starts[i + 1]] for i in range(n)]


def _boxes(
    nodes: Sequence[Node], src: np.ndarray, dst: np.ndarray, bw: np.ndarray, nbr
) -> np.ndarray:
    """Box number of every node row (-1: outside the boxes); see the module docstring."""
    n = len(nodes)
    compute = np.array([nd.kind == COMPUTE for nd in nodes], dtype=bool)
    box = np.full(n, -1, dtype=np.int64)
    if compute.sum() < 2:
        return box
    groups = [nd.group for nd in nodes]
    if all(groups[i] for i in np.flatnonzero(compute)):
        names: dict[str, int] = {}
        for c in np.flatnonzero(compute).tolist():
            names.setdefault(groups[c], len(names))  # type: ignore[arg-type]
        for i, g in enumerate(groups):
            if g in names:
                box[i] = names[g]
    else:
        touching = compute[src] | compute[dst]
        if not touching.any():
            return box
        fast = touching & (bw >= bw[touching].max() / 2)
        uf = _Union(n)
        for u, v in zip(src[fast].tolist(), dst[fast].tolist()):
            uf.join(u, v)
        roots: dict[int, int] = {}
        for c in np.flatnonzero(compute).tolist():
            roots.setdefault(uf.find(c), len(roots))
        for i in range(n):  # everything joined to compute nodes by fast links
            r = uf.find(i)
            if r in roots:
                box[i] = roots[r]
    # switches hanging off a single box join it (NICs, PCIe switches), repeatedly
    changed = True
    while changed:
        changed = False
        for i in np.flatnonzero(box < 0).tolist():
            inside = {int(box[j]) for j in nbr[i] if box[j] >= 0}
            if len(inside) == 1:
                box[i] = inside.pop()
                changed = True
    counts = np.bincount(box[box >= 0], minlength=1) if (box >= 0).any() else np.zeros(0)
    if len(counts) < 2 or (counts > 0).sum() < 2:
        return np.full(n, -1, dtype=np.int64)  # one box holding everything: no boxes
    return box


def _tiers(box: np.ndarray, nbr) -> np.ndarray:
    """Hop distance of every node from the boxes (0 inside; nodes unreachable: large)."""
    n = len(box)
    tier = np.full(n, 1 << 30, dtype=np.int64)
    frontier = np.flatnonzero(box >= 0)
    tier[frontier] = 0
    if not len(frontier):  # no boxes: the distance from the compute-free start is 0 everywhere
        tier[:] = 0
        return tier
    d = 0
    while len(frontier):
        d += 1
        nxt = set()
        for v in frontier.tolist():
            for w in nbr[v].tolist():
                if tier[w] > d:
                    tier[w] = d
                    nxt.add(w)
        frontier = np.array(sorted(nxt), dtype=np.int64)
    return tier


def _box_label(nodes: Sequence[Node], rows: Sequence[int], number: int) -> str:
    groups = {nodes[r].group for r in rows if nodes[r].kind == COMPUTE}
    if len(groups) == 1 and None not in groups:
        return str(groups.pop())
    return f"box {number}"


def _pod_label(nodes: Sequence[Node], switch_rows: Sequence[int], number: int) -> str:
    groups = {nodes[r].group for r in switch_rows}
    if len(groups) == 1 and None not in groups:
        return str(groups.pop())
    return f"pod {number}"


def _switch_label(nodes: Sequence[Node], rows: Sequence[int], number: int) -> str:
    roles = {nodes[r].role for r in rows}
    role = roles.pop() if len(roles) == 1 else "switch"
    return f"{role or 'switch'} group {number}"


def find_grouping(nodes: Sequence[Node], links: Iterable[Link]) -> Grouping:
    """The aggregates of a fabric (see the module docstring).

    Notes
    -----
    O((n + m) log m) numpy plus a few Python passes over the nodes: ~1 s for 300 000 nodes.
    """
    nodes = list(nodes)
    ids = [nd.id for nd in nodes]
    row = {nid: i for i, nid in enumerate(ids)}
    links = list(links)
    n = len(nodes)
    src = np.array([row[ln.source] for ln in links], dtype=np.int64)
    dst = np.array([row[ln.target] for ln in links], dtype=np.int64)
    bw = np.array([float(ln.bandwidth) for ln in links], dtype=float)
    nbr = _neighbours(n, src, dst)
    box = _boxes(nodes, src, dst, bw, nbr)
    tier = _tiers(box, nbr)
    n_boxes = int(box.max()) + 1 if n else 0

    # pods: parts of (boxes + tier-1 switches), tier-1 switches joined through their links
    uf = _Union(n_boxes + n)  # 0..n_boxes-1: boxes; n_boxes + row: a tier-1 switch
    tier1 = np.flatnonzero((box < 0) & (tier == 1))
    t1 = set(tier1.tolist())
    for v in tier1.tolist():
        for w in nbr[v].tolist():
            if box[w] >= 0:
                uf.join(int(box[w]), n_boxes + v)
            elif w in t1:
                uf.join(n_boxes + v, n_boxes + w)
    part_of_box = [uf.find(b) for b in range(n_boxes)]
    parts = sorted(set(part_of_box))
    pod_of_box = np.full(n_boxes, -1, dtype=np.int64)
    pod_of_switch: dict[int, int] = {}
    if n_boxes >= 2 and 2 <= len(parts) < n_boxes:
        number = {p: i for i, p in enumerate(parts)}
        pod_of_box[:] = [number[p] for p in part_of_box]
        for v in tier1.tolist():
            p = uf.find(n_boxes + v)
            if p in number:
                pod_of_switch[v] = number[p]
    n_pods = len(parts) if (pod_of_box >= 0).any() else 0

    # switch groups: tier by tier, joined when they share a neighbour one tier down
    key = np.full(n, -1, dtype=np.int64)  # group number of a grouped switch
    rest = [
        int(v) for v in np.flatnonzero(box < 0) if int(v) not in pod_of_switch and tier[v] < 1 << 30
    ]
    by_tier: dict[int, list[int]] = {}
    for v in rest:
        by_tier.setdefault(int(tier[v]), []).append(v)
    for v in np.flatnonzero(tier >= 1 << 30).tolist():  # unreachable from the boxes
        by_tier.setdefault(1 << 30, []).append(int(v))
    next_group = 0
    for t in sorted(by_tier):
        members = by_tier[t]
        local = {v: i for i, v in enumerate(members)}
        uf2 = _Union(len(members))
        seen: dict[tuple[str, int], int] = {}  # neighbour below (by its group or row) -> member
        for v in members:
            role = nodes[v].role
            for w in nbr[v].tolist():
                if tier[w] >= t or box[w] >= 0:  # only switches one tier down are shared
                    continue
                below = ("g", int(key[w])) if key[w] >= 0 else ("n", w)
                k = (role, below[1]) if below[0] == "n" else (role, -2 - below[1])
                if k in seen:
                    uf2.join(local[v], seen[k])
                else:
                    seen[k] = local[v]
        roots: dict[int, int] = {}
        for v in members:
            r = uf2.find(local[v])
            if r not in roots:
                roots[r] = next_group
                next_group += 1
            key[v] = roots[r]

    # zones: with many pods, the pods whose tier-1 switches all go up into one tier-2 switch
    # group (the racks of a Clos zone and the zone's spines) are one aggregate holding both
    zone_of_pod: dict[int, int] = {}
    if n_pods > ZONE_MIN_PODS:
        ups: list[set[int]] = [set() for _ in range(n_pods)]
        for v, p in pod_of_switch.items():
            for w in nbr[v].tolist():
                if key[w] >= 0 and tier[w] == 2:
                    ups[p].add(int(key[w]))
        if all(len(u) == 1 for u in ups):
            zone_of_pod = {p: next(iter(u)) for p, u in enumerate(ups)}
            if not 2 <= len(set(zone_of_pod.values())) < n_pods:
                zone_of_pod = {}

    # build the aggregates, parents before children
    aggregates: dict[str, Aggregate] = {}
    inner = np.full(n, -1, dtype=np.int64)
    parent_idx: list[int] = []
    taken = set(ids)

    def new_id(stem: str) -> str:
        aid = f"{AGG_PREFIX}{stem}"
        while aid in taken:
            aid += "'"
        taken.add(aid)
        return aid

    box_rows: dict[int, list[int]] = {}
    for r in np.flatnonzero(box >= 0).tolist():
        box_rows.setdefault(int(box[r]), []).append(r)
    compute = np.array([nd.kind == COMPUTE for nd in nodes], dtype=bool)

    def roles_of(rows: Iterable[int]) -> tuple[tuple[str, int], ...]:
        count: dict[str, int] = {}
        for r in rows:
            count[nodes[r].role] = count.get(nodes[r].role, 0) + 1
        return tuple(sorted(count.items(), key=lambda p: (-p[1], p[0])))

    # (id, label, level, parent, child ids, direct rows, tier), parents before children
    pending: list[tuple[str, str, str, str | None, list[str], list[int], int]] = []
    groups: dict[int, list[int]] = {}
    for v in np.flatnonzero(key >= 0).tolist():
        groups.setdefault(int(key[v]), []).append(v)
    zone_id: dict[int, str] = {}
    zone_children: dict[int, list[str]] = {}
    for zone_number, up in enumerate(sorted(set(zone_of_pod.values()))):
        zid = zone_id[up] = new_id(f"zone{up}")
        zone_children[up] = []
        rows = groups.pop(up)
        pending.append((zid, f"zone {zone_number}", "pod", None, zone_children[up], rows, 0))
    if n_pods:
        for p in range(n_pods):
            sw = sorted(v for v, q in pod_of_switch.items() if q == p)
            pid = new_id(f"pod{p}")
            child_ids: list[str] = []
            zone = zone_of_pod.get(p)
            parent = None if zone is None else zone_id[zone]
            if zone is not None:
                zone_children[zone].append(pid)
            pending.append((pid, _pod_label(nodes, sw, p), "pod", parent, child_ids, sw, 0))
            for b in range(n_boxes):
                if pod_of_box[b] != p:
                    continue
                rows = box_rows[b]
                if len(rows) < 2:
                    sw.extend(rows)
                    continue
                bid = new_id(f"box{b}")
                child_ids.append(bid)
                pending.append((bid, _box_label(nodes, rows, b), "box", pid, [], rows, 0))
            sw.sort()
    else:
        for b, rows in box_rows.items():
            if len(rows) < 2:
                continue
            bid = new_id(f"box{b}")
            pending.append((bid, _box_label(nodes, rows, b), "box", None, [], rows, 0))
    # switches that share no neighbour below with one another (the top switches of a Clos,
    # one per plane) are one aggregate per tier and role, not a row of lone nodes
    alone: dict[tuple[int, str], list[int]] = {}
    for g, rows in groups.items():
        if len(rows) == 1 and tier[rows[0]] >= 2:  # rails and ToRs (tier 1) stay themselves
            alone.setdefault((int(tier[rows[0]]), nodes[rows[0]].role), []).append(g)
    for same in alone.values():
        if len(same) > 1:
            for g in same[1:]:
                groups[same[0]] += groups.pop(g)
            groups[same[0]].sort()
    per_role: dict[str, int] = {}
    for g, rows in sorted(groups.items()):
        if len(rows) < 2:
            continue
        t = int(tier[rows[0]])
        gid = new_id(f"sw{g}")
        role = nodes[rows[0]].role
        per_role[role] = per_role.get(role, 0) + 1
        label = _switch_label(nodes, rows, per_role[role])
        pending.append((gid, label, "switches", None, [], rows, t))

    # pods first (their children follow them), then the rest
    order = [p[0] for p in pending]
    index = {a: i for i, a in enumerate(order)}
    under: dict[str, list[int]] = {p[0]: list(p[5]) for p in pending}
    parent_of = {p[0]: p[3] for p in pending}
    for aid, _label, _level, parent, _children, rows, _t in pending:
        parent_idx.append(index[parent] if parent is not None else -1)
        for r in rows:
            inner[r] = index[aid]
        while parent is not None:  # every ancestor holds them (a zone: its racks' hosts)
            under[parent].extend(rows)
            parent = parent_of[parent]
    for aid, label, level, parent, children, rows, t in pending:
        all_rows = under[aid]
        aggregates[aid] = Aggregate(
            id=aid,
            label=label,
            level=level,
            parent=parent,
            children=tuple(children),
            nodes=tuple(ids[r] for r in rows),
            compute=int(compute[all_rows].sum()),
            size=len(all_rows),
            tier=t,
            roles=roles_of(all_rows),
        )
    return Grouping(
        ids=ids,
        aggregates=aggregates,
        order=order,
        inner=inner,
        parent_index=np.array(parent_idx, dtype=np.int64),
        is_compute=compute,
        row=row,
    )


# ---------------------------------------------------------------------- what is shown
@dataclass(frozen=True)
class SummaryLink:
    """The links between two shown items (aggregate or node ids), drawn once."""

    a: str
    b: str
    bandwidth: float  # total GB/s of the links (each direction of a full-duplex link once)
    links: int  # how many fabric links


@dataclass(frozen=True)
class SummaryScene:
    """What the summary shows: the collapsed aggregates with their position, the nodes shown
    as themselves, and the aggregated links touching an aggregate (links between two shown
    nodes are the fabric's own)."""

    aggregates: tuple[str, ...]
    positions: np.ndarray  # (len(aggregates), 2): the centre of their nodes
    extents: np.ndarray  # (len(aggregates), 4): xmin, ymin, xmax, ymax of their nodes
    nodes: frozenset[str]  # nodes shown as themselves
    links: tuple[SummaryLink, ...]
    owner: np.ndarray  # per node row: index into ``aggregates`` (-1: shown as itself)


class SummaryState:
    """Which aggregates of a :class:`Grouping` are expanded, and what is shown then."""

    def __init__(
        self,
        grouping: Grouping,
        positions: np.ndarray,
        link_ends: np.ndarray,
        link_bandwidth: np.ndarray,
    ) -> None:
        """``positions``: (n, 2) node positions by row; ``link_ends``: (m, 2) node rows of every
        link; ``link_bandwidth``: (m,) GB/s."""
        self.grouping = grouping
        self.positions = np.asarray(positions, dtype=float).reshape(-1, 2)
        self.ends = np.asarray(link_ends, dtype=np.int64).reshape(-1, 2)
        self.bandwidth = np.asarray(link_bandwidth, dtype=float)
        self.expanded: set[str] = set()
        self._frames: dict[str, tuple[np.ndarray, np.ndarray, float]] = {}

    def frame(self, agg_id: str) -> tuple[np.ndarray, np.ndarray, float]:
        """(lo, hi, padding) of the frame round all nodes of ``agg_id`` (cached)."""
        if agg_id not in self._frames:
            g = self.grouping
            inside = g._under(g.index[agg_id])
            rows = np.flatnonzero((g.inner >= 0) & inside[np.maximum(g.inner, 0)])
            pts = self.positions[rows]
            lo, hi = pts.min(axis=0), pts.max(axis=0)
            pad = max(10.0, 0.04 * float(max(hi - lo)))
            self._frames[agg_id] = (lo, hi, pad)
        return self._frames[agg_id]

    def move(self, rows: np.ndarray, xy: np.ndarray) -> None:
        """Nodes ``rows`` moved to ``xy``."""
        self.positions[rows] = xy
        self._frames.clear()

    @classmethod
    def of(cls, nodes: Sequence[Node], links: Sequence[Link], grouping: Grouping | None = None):
        """The state of a fabric (``grouping`` found when not given); :meth:`matches` tells
        whether it still is this fabric's."""
        nodes, links = list(nodes), list(links)
        grouping = grouping or find_grouping(nodes, links)
        row = grouping.row
        pos = np.array([[nd.x or 0.0, nd.y or 0.0] for nd in nodes], dtype=float)
        ends = np.array([[row[ln.source], row[ln.target]] for ln in links], dtype=np.int64)
        bw = np.array([float(ln.bandwidth) for ln in links], dtype=float)
        state = cls(grouping, pos, ends, bw)
        state.link_refs = links
        return state

    #: the links the state was made of (identity tells a structural edit since)
    link_refs: list[Link] | None = None

    def matches(self, node_ids: Iterable[str], links: Iterable[Link]) -> bool:
        """Whether the state is of a fabric with these node ids (in order) and these very
        link objects (an edit replaces them): O(n + m) comparisons, no copies of Links."""
        if self.link_refs is None:
            return False
        links = list(links)
        if len(links) != len(self.link_refs) or list(node_ids) != self.grouping.ids:
            return False
        return all(map(operator.is_, links, self.link_refs))

    # ------------------------------------------------------------------ expanding
    def expand(self, agg_id: str) -> bool:
        """Show ``agg_id``'s parts (and its parents'); False if it already was."""
        if agg_id not in self.grouping.aggregates:
            raise KeyError(agg_id)
        chain = self.grouping.ancestors(agg_id)
        if all(a in self.expanded for a in chain):
            return False
        self.expanded.update(chain)
        return True

    def collapse(self, agg_id: str) -> bool:
        """Show ``agg_id`` as one again (its expanded children with it); False if it was."""
        if agg_id not in self.expanded:
            return False
        g = self.grouping
        under = g._under(g.index[agg_id])
        self.expanded -= {g.order[i] for i in np.flatnonzero(under)}
        return True

    def collapse_all(self) -> bool:
        had = bool(self.expanded)
        self.expanded.clear()
        return had

    def expand_all(self) -> None:
        self.expanded = set(self.grouping.order)

    def shown_as(self, node_id: str) -> str:
        """The shown item ``node_id`` is drawn in: an aggregate id, or the node itself."""
        g = self.grouping
        a = g.aggregate_of(node_id)
        if a is None:
            return node_id
        chain = g.ancestors(a)
        for agg in reversed(chain):  # outermost first
            if agg not in self.expanded:
                return agg
        return node_id

    # ------------------------------------------------------------------ the scene
    def scene(self) -> SummaryScene:
        """What to draw now (see :class:`SummaryScene`). O(n + m) numpy."""
        g = self.grouping
        k = len(g.order)
        # the shown aggregate of every aggregate: its outermost collapsed ancestor (or itself)
        shown = np.full(k, -1, dtype=np.int64)
        for i in range(k):  # parents before children
            p = g.parent_index[i]
            if p >= 0 and shown[p] >= 0:
                shown[i] = shown[p]
            elif g.order[i] not in self.expanded:
                shown[i] = i
        inner = g.inner
        owner_agg = np.where(inner >= 0, shown[np.maximum(inner, 0)], -1)
        visible_aggs = np.unique(owner_agg[owner_agg >= 0])
        local = np.full(k, -1, dtype=np.int64)
        local[visible_aggs] = np.arange(len(visible_aggs))
        owner = np.where(owner_agg >= 0, local[np.maximum(owner_agg, 0)], -1)
        n = len(g.ids)
        pos = self.positions
        na = len(visible_aggs)
        grouped = owner >= 0
        counts = np.bincount(owner[grouped], minlength=na).astype(float)
        centre = np.zeros((na, 2))
        extents = np.zeros((na, 4))
        if na:
            for d in (0, 1):
                centre[:, d] = np.bincount(owner[grouped], pos[grouped, d], minlength=na)
                centre[:, d] /= np.maximum(counts, 1)
                lo = np.full(na, np.inf)
                hi = np.full(na, -np.inf)
                np.minimum.at(lo, owner[grouped], pos[grouped, d])
                np.maximum.at(hi, owner[grouped], pos[grouped, d])
                extents[:, d], extents[:, 2 + d] = lo, hi
        # aggregated links: items numbered aggregates 0..na-1, then nodes na + row
        item = np.where(grouped, owner, na + np.arange(n))
        links: list[SummaryLink] = []
        if len(self.ends):
            a, b = item[self.ends[:, 0]], item[self.ends[:, 1]]
            keep = (a != b) & ((a < na) | (b < na))
            lo_i, hi_i = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
            pair = lo_i * (na + n) + hi_i
            uniq, inv = np.unique(pair, return_inverse=True)
            total = np.bincount(inv, self.bandwidth[keep], minlength=len(uniq))
            many = np.bincount(inv, minlength=len(uniq))
            names = [g.order[i] for i in visible_aggs]

            def name(i: int) -> str:
                return names[i] if i < na else g.ids[i - na]

            for p, t, c in zip(uniq.tolist(), total.tolist(), many.tolist()):
                links.append(SummaryLink(name(p // (na + n)), name(p % (na + n)), t, c))
        if not self.expanded and not (~grouped).any() and na:
            centre = tidy_layout([g.aggregates[g.order[i]] for i in visible_aggs], centre)
        return SummaryScene(
            aggregates=tuple(g.order[i] for i in visible_aggs),
            positions=centre,
            extents=extents,
            nodes=frozenset(g.ids[r] for r in np.flatnonzero(~grouped)),
            links=tuple(links),
            owner=owner,
        )

    # ------------------------------------------------------------------ the cut
    def crossing(
        self, scene: SummaryScene, links: Iterable[tuple[str, str, object]]
    ) -> list[tuple[str, str, int]]:
        """The directed links ``links`` (source, target, ...) as pairs of shown items
        (aggregate or node ids) with how many links each stands for; links inside one item
        and links between two nodes shown as themselves are left out (the fabric's own
        links draw those)."""
        g = self.grouping
        na = len(scene.aggregates)
        count: dict[tuple[int, int], int] = {}
        for u, v, *_ in links:
            ru, rv = g.row.get(u), g.row.get(v)
            if ru is None or rv is None:
                continue
            a, b = int(scene.owner[ru]), int(scene.owner[rv])
            if a == b and a >= 0 or a < 0 and b < 0:
                continue
            key = (a if a >= 0 else na + ru, b if b >= 0 else na + rv)
            count[key] = count.get(key, 0) + 1

        def name(i: int) -> str:
            return scene.aggregates[i] if i < na else g.ids[i - na]

        return [(name(a), name(b), c) for (a, b), c in count.items()]

    def cut_shares(self, scene: SummaryScene, cut_nodes: Iterable[str]) -> np.ndarray:
        """Per shown aggregate of ``scene``: the share (0..1) of its nodes inside S*
        (``cut_nodes``), compute nodes counted when it holds any."""
        g = self.grouping
        na = len(scene.aggregates)
        mask = np.zeros(len(g.ids), dtype=bool)
        rows = [g.row[c] for c in cut_nodes if c in g.row]
        mask[rows] = True
        grouped = scene.owner >= 0
        owners = scene.owner[grouped]
        inside = mask[grouped].astype(float)
        comp = g.is_compute[grouped].astype(float)
        total = np.bincount(owners, minlength=na).astype(float)
        got = np.bincount(owners, inside, minlength=na)
        c_total = np.bincount(owners, comp, minlength=na)
        c_got = np.bincount(owners, inside * comp, minlength=na)
        share = np.where(total > 0, got / np.maximum(total, 1), 0.0)
        return np.where(c_total > 0, c_got / np.maximum(c_total, 1), share)


#: Distance between two aggregates of the overview (data units; symbols are sized in pixels).
TIDY_STEP = 1000.0
#: Aggregates holding compute nodes per row of the overview.
TIDY_ROW = 6


def kept_expansions(state: SummaryState) -> tuple[tuple[str, str, str], ...]:
    """What :func:`reopen_expansions` needs to open the same aggregates again after an edit
    regrouped the fabric: (id, label, first node) of every expanded aggregate."""
    g = state.grouping
    out = []
    for aid in sorted(state.expanded, key=g.index.__getitem__):
        first = g.members(aid)[:1]
        out.append((aid, g.aggregates[aid].label, first[0] if first else ""))
    return tuple(out)


def reopen_expansions(state: SummaryState, kept: Sequence[tuple[str, str, str]]) -> tuple:
    """Expand in ``state`` the aggregates of ``kept`` that are still there: same id, same label
    and the same first node (an edit elsewhere leaves them; a changed part stays closed).
    Returns ``()``: nothing is left to reopen."""
    g = state.grouping
    for aid, label, first in kept:
        agg = g.aggregates.get(aid)
        if agg is not None and agg.label == label and g.members(aid)[:1] == [first]:
            state.expand(aid)
    return ()


def share_text(share: float) -> str:
    """An aggregate's share of the cut S* for its caption: ``100%`` only when all of it is
    inside, ``>99.9%``/``<0.1%`` for a sliver in or out (4088 of 4096 GPUs is not 100%)."""
    if share >= 1.0:
        return "100%"
    if share <= 0.0:
        return "0%"
    if share >= 0.999:
        return ">99.9%"
    if share < 0.001:
        return "<0.1%"
    whole = round(share * 100)
    return f"{whole}%" if 1 <= whole <= 99 and abs(share * 100 - whole) < 0.05 else f"{share:.1%}"


def tidy_layout(aggregates: Sequence[Aggregate], centres: np.ndarray) -> np.ndarray:
    """Positions of the overview (every aggregate collapsed, no node on its own): the ones
    holding compute nodes side by side in rows of :data:`TIDY_ROW` (in the order of their
    nodes' centres, top to bottom, left to right), the switch groups below them in one row per
    tier (in the order of their centres' x), each row centred under the first."""
    out = np.zeros((len(aggregates), 2))
    compute = [i for i, a in enumerate(aggregates) if a.compute]
    compute.sort(key=lambda i: (round(float(centres[i, 1]), 3), float(centres[i, 0])))
    width = (min(len(compute), TIDY_ROW) - 1) * TIDY_STEP
    for k, i in enumerate(compute):
        out[i] = ((k % TIDY_ROW) * TIDY_STEP, (k // TIDY_ROW) * TIDY_STEP)
    y = (max(len(compute) - 1, 0) // TIDY_ROW + 1) * TIDY_STEP
    tiers: dict[int, list[int]] = {}
    for i, a in enumerate(aggregates):
        if not a.compute:
            tiers.setdefault(a.tier, []).append(i)
    for t in sorted(tiers):
        row = sorted(tiers[t], key=lambda i: float(centres[i, 0]))
        step = max(TIDY_STEP, width / max(len(row) - 1, 1)) if len(row) > 1 else 0.0
        x0 = (width - step * (len(row) - 1)) / 2
        for k, i in enumerate(row):
            out[i] = (x0 + k * step, y)
        y += TIDY_STEP
    return out


class ShownFabric:
    """What the canvas's usual layers draw in the summary view: the nodes shown as themselves
    and the links among them, read like a :class:`~fc_gui.model.document.TopologyDocument`
    (what-if and selection state come from the document ``doc``)."""

    def __init__(self, doc, nodes: Mapping[str, Node], links: Mapping[int, Link]) -> None:
        self.doc = doc
        self.nodes = nodes
        self.links = links

    @property
    def disabled_nodes(self) -> frozenset[str]:
        return self.doc.disabled_nodes

    @property
    def disabled_links(self) -> frozenset[int]:
        return self.doc.disabled_links

    def is_link_disabled(self, uid: int) -> bool:
        return self.doc.is_link_disabled(uid)

    @property
    def selected_nodes(self) -> frozenset[str]:
        return self.doc.selected_nodes

    @property
    def selected_links(self) -> frozenset[int]:
        return self.doc.selected_links


def shown_fabric(doc, state: SummaryState, scene: SummaryScene) -> ShownFabric:
    """The part of ``doc`` shown as itself in ``scene``: nodes outside every collapsed
    aggregate, and the links with both ends among them (document order kept)."""
    ids = state.grouping.ids
    shown = scene.owner < 0
    nodes = {ids[r]: doc.nodes[ids[r]] for r in np.flatnonzero(shown).tolist()}
    links: dict[int, Link] = {}
    if len(state.ends) and nodes:
        rows = np.flatnonzero(shown[state.ends[:, 0]] & shown[state.ends[:, 1]]).tolist()
        if rows:
            uids = list(doc.links)
            links = {uids[i]: doc.links[uids[i]] for i in rows}
    return ShownFabric(doc, nodes, links)
