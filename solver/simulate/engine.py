"""The chunk-level discrete-event network simulator.

Model
-----
- A flow of B bytes (see :mod:`solver.simulate.routes`) is cut into ``n = ceil(B / chunk)`` equal
  chunks. Every logical tree edge is routed on a physical path; every hop of the path is one
  transmission of the chunk on one directed link.
- A hop on link l takes ``alpha_l + bytes / bw_l``: the link is busy (serialising) for
  ``bytes / bw_l``; the first byte reaches the far end ``alpha_l`` after the link starts sending.
  ``alpha_l`` is the link's ``latency`` or the default (1 us).
- **Compute nodes store and forward**: a node forwards a chunk (allgather/broadcast) or sends its
  partial sum for a chunk (reduce: once all of its children's contributions for that chunk have
  arrived) only when the whole chunk has arrived. Reduction arithmetic is free.
- **Switches cut through**: the next hop may start as soon as the first byte arrives (``alpha``
  after the previous hop started), but cannot finish before the last byte has arrived; so a chunk
  crossing a switch is paced by the slower of the two links and pays both latencies.
- **Link sharing**: a directed link sends one chunk at a time (no preemption) and is work
  conserving (never idle while a chunk waits). Among the chunks waiting at a link it picks the one
  whose flow has made the least relative progress (chunk index / number of chunks of its flow),
  ties in arrival order. This is *weighted fair sharing at chunk granularity*: every flow crossing
  a link gets a share of it proportional to its size, which is the rate the schedule's link loads
  assume (a tree of weight w runs at w times the optimal rate on each of its edges), so all trees
  progress together and the traffic mix on each link stays the planned one until the end.
  Plain FIFO would dump a root's whole shard first and stall the pipelines downstream; unweighted
  round-robin lets small trees finish early and leaves the bottleneck links under-used at the end
  (measured on 2x MI250 at 4 GiB: 0.82 of the optimum instead of 0.99).
  A flow that waits for others (the allgather half of an allreduce) ranks after every chunk of the
  flows it waits for (priority = dependency depth + progress), so reduce-scatters are not slowed
  by the allgathers of roots that finished early (without this, the slowest roots finish their
  reduce-scatter late and the allreduce drags to ~0.53 of the optimum on 2x MI250).
  Chunk-granular service costs O(log n) per hop, while exact bit-level fair sharing would have to
  recompute every active transfer's rate at each event.
- Completion time = the time the last chunk arrives anywhere. Link busy fraction = serialisation
  time / completion time.

The kernels (:mod:`solver.simulate.chunk_kernel`) take prepared int64/float64 arrays;
:func:`prepare` and :func:`simulate_prepared` build them.
"""

from __future__ import annotations

import math
import threading
import time as _time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from solver.model.errors import Cancelled, ForestCollError
from solver.model.topology import Topology
from solver.simulate import chunk_kernel as K
from solver.simulate.routes import BCAST, DEFAULT_LATENCY_US, LinkTable, RouteSet

#: Every flow is cut into at least this many slices when it holds enough data, so that schedules
#: with many small trees still pipeline (NCCL/MSCCL also move every transfer in many small steps).
DEFAULT_MIN_CHUNKS = 32
#: ... but a slice is never smaller than this (bytes).
MIN_SLICE = 4096
#: Above this many chunk transmissions (hops) in one run, fewer slices / bigger chunks are used
#: (the link queues take 24 bytes per transmission).
MAX_TRANSMISSIONS = 4_000_000

_MAX_STAGE = 7
#: First event-heap size: this many slots per link plus a constant (it grows when needed).
HEAP_SLOTS_PER_LINK = 4
HEAP_SLOTS_EXTRA = 1024


@dataclass(frozen=True)
class SimRun:
    """One simulated collective at one message size."""

    size: int  # bytes (nccl-tests "size")
    time: float  # seconds
    chunk: float  # bytes per chunk requested (flows smaller than a chunk send one chunk)
    busy_fraction: np.ndarray  # per directed link (LinkTable order)
    events: int
    wall: float  # seconds spent simulating
    flow_time: np.ndarray | None = None  # per flow: when its last chunk arrived (s)

    @property
    def algbw(self) -> float:
        """GB/s (1e9 bytes/s), nccl-tests' algbw = size / time."""
        return self.size / self.time / 1e9 if self.time > 0 else math.inf


class _Prepared:
    """Size-independent arrays of a route set (built once, reused for every size)."""

    def __init__(self, rs: RouteSet, table: LinkTable) -> None:
        compute = rs.topology.compute_ids
        self.n_nodes = nn = len(compute)
        self.flows = flows = list(rs.flows)
        self.table = table
        self._read_edges(rs, {c: i for i, c in enumerate(compute)})
        # edges out of (flow, node): CSR
        keys = self.e_flow * nn + self.e_src
        self.out_edges = np.argsort(keys, kind="stable").astype(np.int64)
        counts = np.bincount(keys, minlength=len(flows) * nn)
        self.out_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        # children per (flow, node) for reduce flows
        self.children = np.bincount(self.e_flow * nn + self.e_dst, minlength=len(flows) * nn)
        self.hops_per_edge = np.diff(self.path_ptr)
        self._groups_spec, self.has_dep = _dependency_groups(rs)
        self.stage = _stages(rs)

    def _read_edges(self, rs: RouteSet, node_ix: dict[str, int]) -> None:
        """Per flow its kind and root; per tree edge its flow, ends and path (CSR of links)."""
        kind, root = [], []
        e_flow, e_src, e_dst, path_ptr, path_links = [], [], [], [0], []
        known: dict[tuple[str, ...], list[int]] = {}  # trees share most of their paths
        for fi, f in enumerate(self.flows):
            kind.append(0 if f.kind == BCAST else 1)
            root.append(node_ix[f.root])
            for src, dst, path in f.edges:
                e_flow.append(fi)
                e_src.append(node_ix[src])
                e_dst.append(node_ix[dst])
                links = known.get(path)
                if links is None:
                    links = known[path] = self.table.path_links(path, f"{rs.algorithm} flow {fi}")
                    if len(links) > K.HMASK:
                        raise ForestCollError(
                            f"{rs.algorithm} flow {fi}: path too long ({len(links)} hops)"
                        )
                path_links.extend(links)
                path_ptr.append(len(path_links))
        self.kind = np.array(kind, np.int64)
        self.root = np.array(root, np.int64)
        self.e_flow = np.array(e_flow, np.int64)
        self.e_src = np.array(e_src, np.int64)
        self.e_dst = np.array(e_dst, np.int64)
        self.path_ptr = np.array(path_ptr, np.int64)
        self.path_links = np.array(path_links, np.int64)
        if len(e_flow) >= 1 << 28:
            raise ForestCollError("too many tree edges to simulate")

    def arrays_for(self, size: int, chunk: float, min_chunks: int = 1):
        flows = self.flows
        nn = self.n_nodes
        data = np.array([f.share * size for f in flows], np.float64)
        nch = np.maximum(1, np.ceil(data / chunk - 1e-9)).astype(np.int64)
        if min_chunks > 1:  # split small flows into a few slices too (not below MIN_SLICE bytes)
            nch = np.maximum(
                nch, np.minimum(min_chunks, np.floor(data / MIN_SLICE)).astype(np.int64)
            )
        nch[data <= 0] = 0
        cbytes = np.where(nch > 0, data / np.maximum(nch, 1), 0.0)
        # transmissions per link (for per-link queue capacities)
        per_edge = nch[self.e_flow]
        link_tx = np.bincount(
            self.path_links,
            weights=np.repeat(per_edge, self.hops_per_edge),
            minlength=len(self.table.pairs),
        ).astype(np.int64)
        q_off = np.concatenate([[0], np.cumsum(link_tx)]).astype(np.int64)
        total_tx = int(q_off[-1])
        # reduce counters
        cnt_ptr = np.zeros(len(flows), np.int64)
        parts = []
        pos = 0
        for fi, f in enumerate(flows):
            if f.kind != BCAST:
                cnt_ptr[fi] = pos
                ch = self.children[fi * nn : (fi + 1) * nn]
                parts.append(np.repeat(ch, nch[fi]))
                pos += nn * int(nch[fi])
        cnt_init = np.concatenate(parts).astype(np.int64) if parts else np.zeros(1, np.int64)
        # groups
        member_base = np.full(len(flows), -1, np.int64)
        member_cw = np.zeros(len(flows), np.int64)
        grp_rem, dep_ptr, dep_flow, dep_chunk = [], [0], [], []
        gid = 0
        for members, cw, deps in self._groups_spec:
            if cw:
                m = members[0]
                for d in deps:
                    if nch[d] != nch[m]:
                        raise ForestCollError(
                            f"flow {d} waits chunk by chunk for flow {m} with a different size"
                        )
                member_base[m] = gid
                member_cw[m] = 1
                for c in range(int(nch[m])):
                    grp_rem.append(1)
                    for d in deps:
                        dep_flow.append(d)
                        dep_chunk.append(c)
                    dep_ptr.append(len(dep_flow))
                gid += int(nch[m])
            else:
                total = 0
                for m in members:
                    member_base[m] = gid
                    total += int(nch[m])
                grp_rem.append(total)
                for d in deps:
                    dep_flow.append(d)
                    dep_chunk.append(-1)
                dep_ptr.append(len(dep_flow))
                gid += 1
        return dict(
            nch=nch,
            cbytes=cbytes,
            cnt_ptr=cnt_ptr,
            cnt_init=cnt_init,
            grp_rem=np.array(grp_rem or [0], np.int64),
            member_base=member_base,
            member_cw=member_cw,
            dep_ptr=np.array(dep_ptr, np.int64),
            dep_flow=np.array(dep_flow or [0], np.int64),
            dep_chunk=np.array(dep_chunk or [0], np.int64),
            q_off=q_off,
            total_tx=total_tx,
        )


def _dependency_groups(rs: RouteSet):
    """Groups of awaited flows: ([members], chunkwise, [dependent flows]) per group, and per flow
    1 if it waits for a group. Flows awaiting the same set of flows share one group (released
    when all of its members are done); a chunkwise wait gets one group per chunk of its member."""
    flows = rs.flows
    has_dep = np.zeros(len(flows), np.int64)
    groups = []
    by_after: dict[tuple[int, ...], list[int]] = {}
    chunkwise: dict[int, list[int]] = {}
    for fi, f in enumerate(flows):
        if f.after_chunkwise >= 0:
            chunkwise.setdefault(f.after_chunkwise, []).append(fi)
            has_dep[fi] = 1
        elif f.after:
            by_after.setdefault(tuple(sorted(set(f.after))), []).append(fi)
            has_dep[fi] = 1
    awaited: dict[int, None] = {}  # insertion order: the first bad flow is the one named
    for g_members, deps in list(by_after.items()):
        groups.append((list(g_members), False, deps))
        for m in g_members:
            if m in awaited:
                raise ForestCollError(f"{rs.algorithm}: flow {m} is awaited by two groups")
            awaited[m] = None
    for m, deps in chunkwise.items():
        if m in awaited:
            raise ForestCollError(f"{rs.algorithm}: flow {m} is awaited by two groups")
        groups.append(([m], True, deps))
        awaited[m] = None
    for m in awaited:
        if flows[m].kind == BCAST:
            raise ForestCollError(f"{rs.algorithm}: only reduce flows can be awaited (flow {m})")
    return groups, has_dep


def _stages(rs: RouteSet) -> np.ndarray:
    """Dependency depth of each flow: flows that wait for others come after them in link queues."""
    flows = rs.flows
    stage = np.zeros(len(flows), np.int64)
    for _ in range(len(flows) + 1):
        changed = False
        for fi, f in enumerate(flows):
            waits = list(f.after) + ([f.after_chunkwise] if f.after_chunkwise >= 0 else [])
            want = max((int(stage[j]) + 1 for j in waits), default=0)
            if want > _MAX_STAGE:
                raise ForestCollError(
                    f"{rs.algorithm}: flow dependencies nest deeper than {_MAX_STAGE} (or loop)"
                )
            if want != stage[fi]:
                stage[fi] = want
                changed = True
        if not changed:
            break
    return stage


class _Watcher:
    """A thread that reports a running kernel's progress and passes on a stop request."""

    def __init__(self, watch: Callable[[float], bool], control: np.ndarray, expected: int) -> None:
        self._watch = watch
        self._control = control
        self._expected = expected
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="simulate-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(0.1):
            if self._watch(min(1.0, float(self._control[1]) / self._expected)):
                self._control[0] = 1
                return

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def prepare(
    rs: RouteSet, latency_us: float = DEFAULT_LATENCY_US, links: Topology | None = None
) -> _Prepared:
    """Build the size-independent arrays of ``rs`` (reuse it for a sweep of sizes); ``links``: the
    fabric whose link bandwidths/latencies to use (default ``rs.topology``; same node ids)."""
    return _Prepared(rs, LinkTable.of(links if links is not None else rs.topology, latency_us))


def fits_chunk_level(prep: _Prepared, size: int, chunk: float, min_chunks: int) -> bool:
    """True when ``size`` runs at the requested chunking within :data:`MAX_TRANSMISSIONS`
    (otherwise :func:`simulate_prepared` would coarsen the chunks)."""
    return prep.arrays_for(size, chunk, min_chunks)["total_tx"] <= MAX_TRANSMISSIONS


def _run_kernels(prep: _Prepared, a: dict, control: np.ndarray):
    """Bundle the arrays of one run, release the first chunks and serve every event (growing the
    event heap when the kernel asks). Returns the (flows, links) bundles holding the results and
    the number of events; raises Cancelled when ``control[0]`` was set."""
    n_links = prep.table.bandwidth.shape[0]
    slots = max(a["total_tx"], 1)
    flows = K.Flows(
        prep.kind,
        prep.root,
        a["nch"],
        a["cbytes"],
        prep.stage,
        prep.has_dep,
        np.zeros(len(prep.flows), np.float64),
    )
    edges = K.Edges(
        prep.n_nodes,
        prep.e_flow,
        prep.e_dst,
        prep.path_ptr,
        prep.path_links,
        prep.out_ptr,
        prep.out_edges,
    )
    red = K.Reduce(  # arrays_for made fresh counters for this run: the kernels count them down
        a["cnt_ptr"],
        a["cnt_init"],
        a["grp_rem"],
        a["member_base"],
        a["member_cw"],
        a["dep_ptr"],
        a["dep_flow"],
        a["dep_chunk"],
    )
    links = K.Links(
        prep.table.bandwidth,
        prep.table.latency,
        np.zeros(n_links, np.bool_),
        np.zeros(n_links, np.float64),
        np.empty(n_links, np.int64),
        a["q_off"],
        np.zeros(n_links, np.int64),
        np.empty(slots, np.int64),
        np.empty(slots, np.int64),
        np.empty(slots, np.float64),
    )
    heap = K.new_heap(HEAP_SLOTS_PER_LINK * n_links + HEAP_SLOTS_EXTRA)
    clock = np.zeros(4, np.int64)
    K.release_at_start(flows, edges, red, links, heap, clock)
    while (status := K.run_events(flows, edges, red, links, heap, clock, control)) == K.NEED_ROOM:
        heap = K.grown_heap(heap, 2 * heap.time.shape[0] + n_links + 8, int(clock[K.PENDING]))
    if status == K.STOPPED:
        raise Cancelled("simulation cancelled")
    return flows, links, int(clock[K.EVENTS])


def simulate_prepared(
    prep: _Prepared,
    size: int,
    chunk: float,
    min_chunks: int = DEFAULT_MIN_CHUNKS,
    watch: Callable[[float], bool] | None = None,
) -> SimRun:
    """Simulate one message size on prepared arrays.

    ``watch(fraction)`` is called about every 0.1 s from a helper thread while the kernel runs
    (fraction = events so far / an estimate of the events of the run); when it returns True the
    kernel stops within ~10 ms and :class:`~solver.model.errors.Cancelled` is raised.
    """
    if size <= 0:
        raise ForestCollError(f"message size must be > 0 bytes, got {size}")
    if not (chunk > 0):
        raise ForestCollError(f"chunk size must be > 0 bytes, got {chunk}")
    t0 = _time.perf_counter()
    if min_chunks < 1:
        raise ForestCollError(f"min_chunks must be >= 1, got {min_chunks}")
    a = prep.arrays_for(size, chunk, min_chunks)
    eff_chunk = float(chunk)
    while (
        a["total_tx"] > MAX_TRANSMISSIONS
    ):  # too fine for memory: fewer slices, then bigger chunks
        if min_chunks > 1:
            min_chunks = max(1, min_chunks // 2)
        else:
            eff_chunk *= 2.0
        a = prep.arrays_for(size, eff_chunk, min_chunks)
    if a["nch"].size and int(a["nch"].max()) > K.CMASK:  # cannot happen below MAX_TRANSMISSIONS
        raise ForestCollError(f"a flow would need {int(a['nch'].max())} chunks (limit {K.CMASK})")
    control = np.zeros(2, np.int64)
    expected = max(1, 2 * a["total_tx"] + 1)  # a READY/ARRIVE and a KICK per transmission
    watcher = _Watcher(watch, control, expected) if watch is not None else None
    try:
        flows, links, events = _run_kernels(prep, a, control)
    finally:
        if watcher is not None:
            watcher.stop()
    busy = links.busy_time
    flow_done = flows.done
    finish = float(flow_done.max()) if flow_done.size else 0.0
    busy_frac = busy / finish if finish > 0 else np.zeros_like(busy)
    return SimRun(
        int(size),
        float(finish),
        eff_chunk,
        busy_frac,
        int(events),
        _time.perf_counter() - t0,
        flow_done,
    )


def simulate_routes(
    rs: RouteSet,
    size: int,
    chunk: float = 1 << 20,
    latency_us: float = DEFAULT_LATENCY_US,
    min_chunks: int = DEFAULT_MIN_CHUNKS,
) -> SimRun:
    """Simulate route set ``rs`` for a message of ``size`` bytes in chunks of ``chunk`` bytes
    (every flow in at least ``min_chunks`` slices of >= 4 KiB when it is big enough)."""
    return simulate_prepared(prepare(rs, latency_us), size, chunk, min_chunks)
