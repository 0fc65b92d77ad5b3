"""Route sets: what the simulator runs (ForestColl schedules and baselines alike).

A :class:`RouteSet` is a list of :class:`Flow` objects on a :class:`~solver.model.topology.Topology`.
A flow carries ``share`` x M bytes (M = the nccl-tests message size) over a tree whose edges join
compute nodes along physical paths:

- ``kind="bcast"``: the root holds the data and sends it down the tree (edges parent -> child);
  an allgather tree, a ring allgather chain, the broadcast half of NCCL's tree allreduce.
- ``kind="reduce"``: every node holds a contribution; a node sends its partial sum to its parent
  once it has received all of its children's (edges child -> parent); the root ends with the sum.

Dependencies (allreduce): a flow may wait for other flows to finish at its root, either all of
their chunks (``after``) or chunk by chunk (``after_chunkwise``, same byte count required).

:func:`from_schedule` turns a :class:`~solver.model.schedule.Schedule` into a route set; identical
trees (same root, same edges and paths) are merged so that a tree with multiplicity c is one flow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from solver.model.errors import ForestCollError
from solver.model.schedule import Schedule
from solver.model.topology import Topology

#: Latency of a link hop when the topology gives none (microseconds).
DEFAULT_LATENCY_US = 1.0

BCAST = "bcast"
REDUCE = "reduce"


@dataclass(frozen=True)
class Flow:
    """One tree carrying ``share`` of the message (see the module docstring)."""

    kind: str
    root: str
    share: float
    edges: tuple[tuple[str, str, tuple[str, ...]], ...]  # (src, dst, physical path src..dst)
    phase: str = ""
    after: tuple[int, ...] = ()  # flow indices that must be complete at this flow's root first
    after_chunkwise: int = -1  # flow index whose chunk c releases this flow's chunk c


@dataclass(frozen=True)
class RouteSet:
    """The flows of one algorithm for one collective on one fabric."""

    topology: Topology
    collective: str
    algorithm: str
    flows: tuple[Flow, ...]
    notes: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def num_compute_nodes(self) -> int:
        return len(self.topology.compute_ids)


@dataclass(frozen=True)
class LinkTable:
    """Directed links of a topology as arrays (bytes/s and seconds)."""

    pairs: tuple[tuple[str, str], ...]
    index: dict
    bandwidth: np.ndarray  # bytes/s, float64
    latency: np.ndarray  # seconds, float64
    bandwidth_gbs: tuple[Fraction, ...]

    @classmethod
    def of(cls, topo: Topology, default_latency_us: float = DEFAULT_LATENCY_US) -> LinkTable:
        if not (default_latency_us >= 0):
            raise ForestCollError(f"latency must be >= 0 us, got {default_latency_us}")
        caps = topo.directed_bandwidths()
        lats = topo.directed_latencies()
        pairs = tuple(caps)
        bw = np.array([float(caps[p]) * 1e9 for p in pairs], dtype=np.float64)
        lat = np.array(
            [
                (float(lats[p]) if lats.get(p) is not None else default_latency_us) * 1e-6
                for p in pairs
            ],
            dtype=np.float64,
        )
        return cls(
            pairs, {p: i for i, p in enumerate(pairs)}, bw, lat, tuple(caps[p] for p in pairs)
        )

    def path_links(self, path: Sequence[str], what: str) -> list[int]:
        out = []
        for u, v in zip(path[:-1], path[1:]):
            i = self.index.get((u, v))
            if i is None:
                raise ForestCollError(
                    f"{what}: path {'->'.join(path)} uses a missing link {u}->{v}"
                )
            out.append(i)
        if not out:
            raise ForestCollError(f"{what}: empty path")
        return out


def check_route_set(rs: RouteSet) -> None:
    """Raise :class:`ForestCollError` if a flow is not a tree over compute nodes on real links."""
    topo = rs.topology
    compute = set(topo.compute_ids)
    kinds = {n.id: n.kind for n in topo.nodes}
    table = LinkTable.of(topo)
    for i, f in enumerate(rs.flows):
        what = f"{rs.algorithm} flow {i} (root {f.root})"
        if f.kind not in (BCAST, REDUCE):
            raise ForestCollError(f"{what}: kind must be bcast or reduce, got {f.kind!r}")
        if f.root not in compute:
            raise ForestCollError(f"{what}: root is not a compute node")
        if not (f.share >= 0):
            raise ForestCollError(f"{what}: share must be >= 0")
        seen_dst = set()
        for src, dst, path in f.edges:
            if src not in compute or dst not in compute:
                raise ForestCollError(f"{what}: edge {src}->{dst} does not join compute nodes")
            if path[0] != src or path[-1] != dst:
                raise ForestCollError(f"{what}: path of edge {src}->{dst} does not join its ends")
            for inner in path[1:-1]:
                if kinds.get(inner) != "switch":
                    raise ForestCollError(
                        f"{what}: path of {src}->{dst} goes through non-switch {inner}"
                    )
            table.path_links(path, what)
            key = dst if f.kind == BCAST else src
            if key in seen_dst:
                raise ForestCollError(f"{what}: node {key} has two parents")
            seen_dst.add(key)
        for j in f.after:
            if not 0 <= j < len(rs.flows):
                raise ForestCollError(f"{what}: depends on unknown flow {j}")
        if f.after_chunkwise >= 0 and f.after_chunkwise >= len(rs.flows):
            raise ForestCollError(f"{what}: depends on unknown flow {f.after_chunkwise}")


def _tree_flows(sched: Schedule, kind: str, phase: str) -> list[Flow]:
    n = sched.num_compute_nodes
    merged: dict[tuple, float] = {}
    order: list[tuple] = []
    for t in sched.trees:
        edges = tuple([(e.src, e.dst, e.path) for e in t.edges])  # paths are tuples
        key = (t.root, edges)
        if key not in merged:
            merged[key] = 0.0
            order.append(key)
        merged[key] += float(t.weight) / n
    return [Flow(kind, root, merged[(root, edges)], edges, phase) for root, edges in order]


def from_schedule(sched: Schedule, algorithm: str = "forestcoll") -> RouteSet:
    """The route set of a solved schedule (allgather, reduce-scatter or allreduce).

    For allreduce, the allgather trees of root r wait until every reduce-scatter tree of r has
    finished at r (per root, not a global barrier).
    """
    if sched.collective == "allgather":
        flows = _tree_flows(sched, BCAST, "allgather")
    elif sched.collective == "reduce-scatter":
        flows = _tree_flows(sched, REDUCE, "reduce-scatter")
    elif sched.collective == "allreduce":
        if len(sched.phases) != 2:
            raise ForestCollError(
                "allreduce schedule must have two phases (reduce-scatter, allgather)"
            )
        rs = _tree_flows(sched.phases[0], REDUCE, "reduce-scatter")
        ag = _tree_flows(sched.phases[1], BCAST, "allgather")
        flows = rs + chain_allgather_after(rs, ag)
    else:
        raise ForestCollError(f"unknown collective {sched.collective!r}")
    return RouteSet(sched.topology, sched.collective, algorithm, tuple(flows))


def chain_allgather_after(rs: list[Flow], ag: list[Flow]) -> list[Flow]:
    """Make allgather flows wait for the reduce-scatter flows of the same root.

    If each root has exactly one flow in each phase with the same share, the wait is chunk by
    chunk (pipelined like NCCL's ring allreduce); otherwise the allgather of root r starts when
    all of r's reduce-scatter flows are complete at r. Indices refer to ``rs + ag``.
    """
    by_root: dict[str, list[int]] = {}
    for i, f in enumerate(rs):
        by_root.setdefault(f.root, []).append(i)
    ag_by_root: dict[str, list[int]] = {}
    for j, f in enumerate(ag):
        ag_by_root.setdefault(f.root, []).append(j)
    out = []
    for f in ag:
        rs_idx = by_root.get(f.root, [])
        if (
            len(rs_idx) == 1
            and len(ag_by_root[f.root]) == 1
            and abs(rs[rs_idx[0]].share - f.share) <= 1e-12 * max(1.0, f.share)
        ):
            out.append(_replace(f, after_chunkwise=rs_idx[0]))
        else:
            out.append(_replace(f, after=tuple(rs_idx)))
    return out


def _replace(f: Flow, **kw) -> Flow:
    from dataclasses import replace

    return replace(f, **kw)


def link_bytes(rs: RouteSet, size: float, table: LinkTable | None = None) -> np.ndarray:
    """Bytes crossing every directed link for message size ``size`` (all phases summed)."""
    table = table or LinkTable.of(rs.topology)
    load = np.zeros(len(table.pairs))
    for i, f in enumerate(rs.flows):
        for _src, _dst, path in f.edges:
            for li in table.path_links(path, f"flow {i}"):
                load[li] += f.share * size
    return load


def bandwidth_bound_time(rs: RouteSet, size: float, table: LinkTable | None = None) -> float:
    """Lower bound on the time of this route set: max over links of bytes / bandwidth (s).

    Phases that wait for each other are not added up: this is what the links alone impose.
    """
    table = table or LinkTable.of(rs.topology)
    return float(np.max(link_bytes(rs, size, table) / table.bandwidth))


def phase_bound_time(rs: RouteSet, size: float, table: LinkTable | None = None) -> float:
    """Sum over phases of each phase's link bound (s): the time with a barrier between phases."""
    table = table or LinkTable.of(rs.topology)
    total = 0.0
    for phase in dict.fromkeys(f.phase for f in rs.flows):
        sub = RouteSet(
            rs.topology, rs.collective, rs.algorithm, tuple(f for f in rs.flows if f.phase == phase)
        )
        total += bandwidth_bound_time(sub, size, table)
    return total


def alpha_estimate_time(
    rs: RouteSet, size: float, chunk: float, table: LinkTable | None = None, min_chunks: int = 32
) -> float:
    """An alpha-beta estimate (s): phase bounds + the pipeline fill of the deepest tree path.

    Fill of a tree path = sum over its logical edges of (latencies of the hops + one chunk over the
    slowest hop). Phases that depend on each other add their fills.
    """
    table = table or LinkTable.of(rs.topology)
    fill_per_phase: dict[str, float] = {}
    for f in rs.flows:
        if f.share <= 0:
            continue
        data = f.share * size
        nchunks = max(1, int(np.ceil(data / chunk)), min(min_chunks, int(data // 4096)))
        c = data / nchunks
        fill = _deepest_path_cost(f, table, c)
        fill_per_phase[f.phase] = max(fill_per_phase.get(f.phase, 0.0), fill)
    return phase_bound_time(rs, size, table) + sum(fill_per_phase.values())


def _deepest_path_cost(f: Flow, table: LinkTable, chunk_bytes: float) -> float:
    cost_of: dict[tuple[str, str], float] = {}
    children: dict[str, list[str]] = {}
    for src, dst, path in f.edges:
        links = table.path_links(path, "flow")
        cost = float(sum(table.latency[li] for li in links)) + chunk_bytes / float(
            min(table.bandwidth[li] for li in links)
        )
        parent, child = (src, dst) if f.kind == BCAST else (dst, src)
        cost_of[(parent, child)] = cost
        children.setdefault(parent, []).append(child)
    best = 0.0
    stack = [(f.root, 0.0)]
    while stack:
        node, acc = stack.pop()
        best = max(best, acc)
        for ch in children.get(node, ()):
            stack.append((ch, acc + cost_of[(node, ch)]))
    return best
