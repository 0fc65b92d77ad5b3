"""Turn a :class:`solver.model.schedule.Schedule` into an MSCCL++ execution plan (JSON document).

Chunks are those of the MSCCL XML export (:mod:`solver.msccl.generate`): each rank's shard is
split into ``C`` chunks (the lcm of the trees-per-root counts of the phases), a tree of
multiplicity ``m`` out of ``k`` carries ``m*C/k`` consecutive chunks of its root's shard, and
``instances`` repeats everything on fresh threadblocks and channels with ``instances`` times as
many chunks. Buffers (C' = C x instances): allgather input C', output N*C'; reduce-scatter input
N*C', output C', partial sums in scratch; allreduce input = output = N*C' (in-place safe: a
rank's input chunk is read before anything writes its output chunk).

Threadblocks. The ops of one (instance, phase, tree) at a rank only talk to the node's parent
and children in that tree (every tree spans every rank). Each such unit gets a threadblock of its
own, or, when that would pass the threadblocks that can be resident at once (``resident``), units
of one phase share threadblocks, in the same order on every rank, as few per threadblock as the
budget allows and within 64 ops and 16 channels per type (:func:`_pack`): a unit only waits on
units earlier in every rank's same threadblock or on its own tree, so the plan cannot deadlock. A
threadblock never waits on another of its rank, except in allreduce where the root's allgather
unit acquires a semaphore its reduce-scatter unit releases (reduce-scatter never waits on
allgather). Every tree edge has its own channel pair
(memory channel inside a box, port channel across boxes or with ``channels="port"``), so signals
of different trees never mix.

Per edge, as MSCCL++'s own DSL plans do (python/mscclpp/language/tests/multi_node/allgather.py):
the receiver first signals "ready" (``rlxsignal``) and the sender waits for it (``rlxwait``)
before writing into the receiver's buffer, so a call never overwrites what the previous call on
that rank still reads; data then goes with ``put`` + ``nop`` + ``signal`` (memory channel: the
threads copy, synchronise, then one thread signals) or ``pwsf`` (port channel: put with signal
and flush, so the kernel does not end before the proxy has read the source); the receiver
``wait``s, then ``nop`` before any thread reads. Allgather forwards from the output buffer;
reduce-scatter receives each child's partial sum into a fresh scratch slot and adds them with one
``re`` (chained past 9 children), the root into its output.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from solver.model.schedule import Schedule, Tree
from solver.mscclpp.options import DEFAULT_PLAN_OPTIONS, PlanOptions
from solver.mscclpp.plan import (
    COLLECTIVE_NAMES,
    COMMON,
    EXECUTOR,
    MAX_BUFFERS_PER_OPERATION,
    MAX_CHANNEL,
    MAX_CHANNEL_PER_OPERATION,
    MAX_DEVICE_SEMAPHORES,
    MAX_OPERATION,
    UINT32_MAX,
    MscclppError,
    cite,
)


@dataclass
class _Tb:
    ops: list = field(default_factory=list)
    chans: dict = field(default_factory=lambda: {"memory": [], "port": []})  # flat channel indices
    bufs: dict = field(default_factory=lambda: {"memory": [], "port": []})  # remote buffer ids

    def channel(self, ctype: str, flat_index: int) -> int:
        lst = self.chans[ctype]
        if flat_index not in lst:
            lst.append(flat_index)
        return lst.index(flat_index)

    def buffer(self, ctype: str, buffer_id: int) -> int:
        lst = self.bufs[ctype]
        if buffer_id not in lst:
            lst.append(buffer_id)
        return lst.index(buffer_id)


@dataclass
class _Rank:
    channels: dict = field(default_factory=lambda: {"memory": [], "port": []})  # peers, in order
    remote: dict = field(default_factory=dict)  # (owner, type) -> [id, access types]
    scratch: int = 0
    semaphores: int = 0
    tbs: list = field(default_factory=list)

    def remote_buffer(self, owner: int, btype: str, ctype: str) -> int:
        entry = self.remote.setdefault((owner, btype), [len(self.remote), []])
        if ctype not in entry[1]:
            entry[1].append(ctype)
        return entry[0]


@dataclass
class _Edge:
    """The channel pair of one tree edge: at the sender and at the receiver (flat indices)."""

    ctype: str
    at_src: int
    at_dst: int


def _phases(schedule: Schedule) -> list[tuple[str, Schedule]]:
    if schedule.collective == "allreduce":
        kinds = [p.collective for p in schedule.phases]
        if kinds != ["reduce-scatter", "allgather"]:
            raise MscclppError(
                f"allreduce phases must be reduce-scatter then allgather, got {kinds}"
            )
        return [("rs", schedule.phases[0]), ("ag", schedule.phases[1])]
    if schedule.collective == "allgather":
        return [("ag", schedule)]
    if schedule.collective == "reduce-scatter":
        return [("rs", schedule)]
    raise MscclppError(
        f"cannot write an MSCCL++ plan for {schedule.collective!r} "
        "(allgather, reduce-scatter, allreduce)"
    )


def rank_order(schedule: Schedule, order: list[str] | None = None) -> list[str]:
    """Compute node ids by rank: the fabric's compute order, or ``order`` (checked)."""
    compute = list(schedule.topology.compute_ids)
    if order is None:
        return compute
    if len(set(order)) != len(order):
        raise MscclppError(
            f"rank order lists {next(x for x in order if order.count(x) > 1)!r} twice"
        )
    extra, missing = set(order) - set(compute), set(compute) - set(order)
    if extra:
        raise MscclppError(
            f"rank order names {min(extra)!r}, which is not a compute node of the fabric"
        )
    if missing:
        raise MscclppError(f"rank order misses compute node {min(missing)!r}")
    return list(order)


def _check_tree(tree: Tree, kind: str, compute: set[str]) -> dict[str, int]:
    depth = tree.depth_of()
    nodes = {tree.root} | {e.src for e in tree.edges} | {e.dst for e in tree.edges}
    if (
        tree.multiplicity < 1
        or nodes != compute
        or len(tree.edges) != len(compute) - 1
        or len(depth) != len(compute)
    ):
        raise MscclppError(
            f"tree of root {tree.root!r} does not span the compute nodes exactly once"
        )
    for e in tree.edges:
        if (depth[e.dst] == depth[e.src] + 1) != (kind == "ag"):
            raise MscclppError(
                f"tree of root {tree.root!r}: edge {e.src}->{e.dst} points the wrong way"
            )
    return depth


class _Builder:
    def __init__(self, schedule: Schedule, ids: list[str], instances: int, channels: str) -> None:
        self.schedule = schedule
        self.ids = ids
        self.rank = {v: i for i, v in enumerate(ids)}
        self.n = len(ids)
        self.instances = instances
        self.channels = channels
        self.ranks = [_Rank() for _ in ids]
        nodes = {n.id: n for n in schedule.topology.nodes}
        self.group = {v: nodes[v].group for v in nodes}

    def channel_type(self, path: list[str]) -> str:
        if self.channels == "port":
            return "port"
        groups = {self.group.get(v) for v in path}
        return "memory" if len(groups) == 1 and None not in groups else "port"

    def edge(self, u: int, v: int, ctype: str) -> _Edge:
        """A new channel pair between ranks u and v (both sides list it in the same global order,
        so the executor's per-peer tags pair them: executor.cc:268-284)."""
        cu, cv = self.ranks[u].channels[ctype], self.ranks[v].channels[ctype]
        cu.append(v)
        cv.append(u)
        return _Edge(ctype, len(cu) - 1, len(cv) - 1)


def _ops_signal(name: str, tb: _Tb, chans: list[tuple[str, int]]) -> list[dict]:
    """``name`` (signal/wait/rlxsignal/rlxwait) on channels, one op per type and 8 channels."""
    out = []
    for ctype in ("memory", "port"):
        ids = [tb.channel(ctype, f) for t, f in chans if t == ctype]
        for i in range(0, len(ids), MAX_CHANNEL_PER_OPERATION):
            out.append(
                {
                    "name": name,
                    "channel_ids": ids[i : i + MAX_CHANNEL_PER_OPERATION],
                    "channel_type": ctype,
                }
            )
    return out


def _local(btype: str, index: int, size: int) -> dict:
    return {"type": btype, "index": index, "size": size}


def build_plan(schedule: Schedule, options: PlanOptions = DEFAULT_PLAN_OPTIONS) -> dict:
    """The MSCCL++ execution plan of ``schedule`` as a JSON document (not yet checked).

    Parameters
    ----------
    schedule : Schedule
        An allgather, reduce-scatter or allreduce schedule (``solver.solve``'s result).
    options : PlanOptions
        Rank order, instances, channel choice, message-size range, name and the threadblocks
        that can be resident (default: the fabric's order, one instance, an A100's 108).

    Returns
    -------
    dict
        The plan document, as :func:`solver.mscclpp.plan_text` writes it.

    Raises
    ------
    MscclppError
        An option out of range, a rank order that is not the fabric's compute nodes, or a
        schedule whose plan cannot fit the executor (the message names the limit and its source).
    """
    options.check()
    instances, channels = options.instances, options.channels
    ids = rank_order(schedule, None if options.order is None else list(options.order))
    phases = _phases(schedule)
    compute = set(ids)
    C = 1
    for _, ph in phases:
        totals: dict[str, int] = defaultdict(int)
        for t in ph.trees:
            totals[t.root] += t.multiplicity
        for tot in totals.values():
            C = math.lcm(C, tot)
    Cp = C * instances
    n = len(ids)
    if n * Cp > UINT32_MAX:
        raise MscclppError(f"{n * Cp} chunks per buffer do not fit the plan's uint32 offsets")
    b = _Builder(schedule, ids, instances, channels)
    coll = schedule.collective
    resident = options.resident_threadblocks
    if resident < len(phases):
        raise MscclppError(f"--max-threadblocks {resident}: a plan needs at least {len(phases)}")
    budget = max(1, resident // len(phases))  # threadblocks per phase (all instances)
    # (instance, root rank) -> [(first, count, semaphore id)] released by reduce-scatter trees
    released: dict[tuple[int, int], list[tuple[int, int, int]]] = defaultdict(list)
    for kind, ph in phases:
        trees: list[list[_Tb]] = []  # per tree of the phase (all instances): its ops at every rank
        for inst in range(instances):
            used: dict[str, int] = defaultdict(int)
            totals = defaultdict(int)
            for t in ph.trees:
                totals[t.root] += t.multiplicity
            for tree in ph.trees:
                count = tree.multiplicity * C // totals[tree.root]
                first = used[tree.root]
                used[tree.root] += count
                depth = _check_tree(tree, kind, compute)
                local = inst * C + first
                r = b.rank[tree.root]
                g = r * Cp + local
                tbs = [_Tb() for _ in range(n)]
                if kind == "ag":
                    _allgather_tree(b, tree, depth, tbs, coll, local, g, count, released[(inst, r)])
                else:
                    _reduce_tree(b, tree, depth, tbs, coll, local, g, count, released[(inst, r)])
                trees.append(tbs)
        # the fewest trees per threadblock (they run one after another) that fit the budget
        few, many = -(-len(trees) // budget), len(trees)
        groups = _pack(trees, many, n)  # as few threadblocks as the per-threadblock limits allow
        if len(groups) <= budget:
            while few < many:
                mid = (few + many) // 2
                if len(_pack(trees, mid, n, count_only=True)) <= budget:
                    many = mid
                else:
                    few = mid + 1
            groups = _pack(trees, many, n)
        for group in groups:
            for rk in range(n):
                b.ranks[rk].tbs.append(group[rk])
    if len(b.ranks[0].tbs) > resident:
        raise MscclppError(
            f"the plan needs {len(b.ranks[0].tbs)} threadblocks per rank, more than can be resident at once "
            f"({resident}, --max-threadblocks; the kernel is __launch_bounds__(1024, 1)), because "
            f"trees do not fit {MAX_OPERATION} ops and {MAX_CHANNEL} channels per threadblock together: export "
            f"a schedule with fewer trees (--max-trees-per-root 1{'' if instances == 1 else ', fewer --instances'}) "
            "or, on a GPU with more SMs/CUs, raise --max-threadblocks"
        )
    return _document(b, coll, C, Cp, options.min_bytes, options.max_bytes_written, options.name)


def _pack(trees: list[list[_Tb]], per_tb: int, n: int, count_only: bool = False) -> list:
    """Threadblocks (one list over ranks each) running at most ``per_tb`` trees in file order,
    a new one when the next tree would pass a threadblock's limits at some rank. ``count_only``:
    the same grouping as lists of (ops, channel and buffer sets) per rank, without building ops."""
    groups: list = []
    in_group = 0
    for tbs in trees:
        if (
            not groups
            or in_group >= per_tb
            or not all(_fits(x, y) for x, y in zip(groups[-1], tbs))
        ):
            groups.append([_Count() if count_only else _Tb() for _ in range(n)])
            in_group = 0
        for x, y in zip(groups[-1], tbs):
            x.add(y) if count_only else _merge(x, y)
        in_group += 1
    return groups


class _Count:
    """What :func:`_fits` looks at of a threadblock, for counting groups quickly."""

    def __init__(self) -> None:
        self.ops: list = []
        self.chans = {"memory": set(), "port": set()}
        self.bufs = {"memory": set(), "port": set()}

    def add(self, tree: _Tb) -> None:
        self.ops.extend(tree.ops)
        for ctype in ("memory", "port"):
            self.chans[ctype].update(tree.chans[ctype])
            self.bufs[ctype].update(tree.bufs[ctype])


def _fits(group: _Tb, tree: _Tb) -> bool:
    """Whether one tree's ops at a rank can follow the group's in one threadblock."""
    if len(group.ops) + len(tree.ops) > MAX_OPERATION:
        return False
    for ctype in ("memory", "port"):
        if len(set(group.chans[ctype]) | set(tree.chans[ctype])) > MAX_CHANNEL:
            return False
        if len(set(group.bufs[ctype]) | set(tree.bufs[ctype])) > MAX_CHANNEL:
            return False
    return True


def _merge(group: _Tb, tree: _Tb) -> None:
    """Append a tree's ops to a threadblock, renumbering its channel and remote-buffer ids."""
    for op in tree.ops:
        op = {
            k: ([dict(x) for x in v] if k in ("src_buff", "dst_buff") else v) for k, v in op.items()
        }
        ctype = op.get("channel_type")
        if "channel_ids" in op:
            op["channel_ids"] = [
                group.channel(ctype, tree.chans[ctype][c]) for c in op["channel_ids"]
            ]
        for side in ("src_buff", "dst_buff"):
            for buff in op.get(side, []):
                if "buffer_id" in buff:
                    buff["buffer_id"] = group.buffer(ctype, tree.bufs[ctype][buff["buffer_id"]])
        group.ops.append(op)


def _allgather_tree(b: _Builder, tree: Tree, depth, tbs, coll, local, g, count, released) -> None:
    r = b.rank[tree.root]
    children: dict[int, list[tuple[int, str, _Edge]]] = defaultdict(list)
    parent: dict[int, _Edge] = {}
    for e in sorted(tree.edges, key=lambda e: (depth[e.dst], b.rank[e.dst])):
        u, v = b.rank[e.src], b.rank[e.dst]
        ed = b.edge(u, v, b.channel_type(list(e.path)))
        children[u].append((v, ed.ctype, ed))
        parent[v] = ed
    for v in range(b.n):
        tb = tbs[v]
        ops = tb.ops
        if v in parent:  # ready for the parent's data
            ops += _ops_signal("rlxsignal", tb, [(parent[v].ctype, parent[v].at_dst)])
        kids = children.get(v, [])
        if kids:
            ops += _ops_signal("rlxwait", tb, [(ed.ctype, ed.at_src) for _, _, ed in kids])
            ops.append({"name": "nop"})
        if v in parent:
            ops += _ops_signal("wait", tb, [(parent[v].ctype, parent[v].at_dst)])
            ops.append({"name": "nop"})
            src = _local("o", g, count)
        elif coll == "allreduce":
            sems = [
                s for first, cnt, s in released if first < local + count and local < first + cnt
            ]
            for i in range(0, len(sems), MAX_DEVICE_SEMAPHORES):
                ops.append(
                    {"name": "sem_acquire", "semaphore_ids": sems[i : i + MAX_DEVICE_SEMAPHORES]}
                )
            ops.append({"name": "nop"})
            src = _local("o", g, count)
        else:
            src = _local("i", local, count)
        _send(b, v, tb, src, [(c, ed) for c, _, ed in kids], "o", lambda c: g)
        if v == r and coll == "allgather":
            ops.append({"name": "copy", "src_buff": [src], "dst_buff": [_local("o", g, count)]})


def _send(b: _Builder, v: int, tb: _Tb, src: dict, dests: list, btype: str, index_of) -> None:
    """Data from ``src`` at rank v to each (rank, edge) of ``dests`` into its ``btype`` buffer at
    ``index_of(rank)``: memory channels put + nop + signal, port channels pwsf."""
    count = src["size"]
    for ctype in ("memory", "port"):
        group = [(c, ed) for c, ed in dests if ed.ctype == ctype]
        for i in range(0, len(group), MAX_CHANNEL_PER_OPERATION):
            part = group[i : i + MAX_CHANNEL_PER_OPERATION]
            op = {
                "name": "put" if ctype == "memory" else "pwsf",
                "src_buff": [dict(src) for _ in part],
                "dst_buff": [
                    {
                        "buffer_id": tb.buffer(ctype, b.ranks[v].remote_buffer(c, btype, ctype)),
                        "index": index_of(c),
                        "size": count,
                    }
                    for c, _ in part
                ],
            }
            if ctype == "port":
                op["channel_ids"] = [tb.channel("port", ed.at_src) for _, ed in part]
            op["channel_type"] = ctype
            tb.ops.append(op)
            if ctype == "memory":
                tb.ops.append({"name": "nop"})
                tb.ops += _ops_signal("signal", tb, [("memory", ed.at_src) for _, ed in part])


def _reduce_tree(b: _Builder, tree: Tree, depth, tbs, coll, local, g, count, released) -> None:
    r = b.rank[tree.root]
    kids: dict[int, list[tuple[int, _Edge, int]]] = defaultdict(list)  # v -> (child, edge, slot)
    up: dict[int, tuple[int, _Edge, int]] = {}  # child -> (parent, edge, slot at parent)
    for e in sorted(tree.edges, key=lambda e: (-depth[e.src], b.rank[e.src])):
        c, v = b.rank[e.src], b.rank[e.dst]
        ed = b.edge(c, v, b.channel_type(list(e.path)))
        slot = b.ranks[v].scratch
        b.ranks[v].scratch += count
        kids[v].append((c, ed, slot))
        up[c] = (v, ed, slot)
    for v in range(b.n):
        tb = tbs[v]
        ops = tb.ops
        mine = kids.get(v, [])
        if mine:  # ready for the children's partial sums
            ops += _ops_signal("rlxsignal", tb, [(ed.ctype, ed.at_dst) for _, ed, _ in mine])
        if v in up:
            ops += _ops_signal("rlxwait", tb, [(up[v][1].ctype, up[v][1].at_src)])
            ops.append({"name": "nop"})
        if v == r:
            acc = _local("o", local if coll == "reduce-scatter" else g, count)
        elif coll == "allreduce":
            acc = _local("o", g, count)
        elif mine:
            acc = _local("s", b.ranks[v].scratch, count)
            b.ranks[v].scratch += count
        else:
            acc = None
        if mine:
            ops += _ops_signal("wait", tb, [(ed.ctype, ed.at_dst) for _, ed, _ in mine])
            ops.append({"name": "nop"})
            first = _local("i", g, count)
            slots = [_local("s", slot, count) for _, _, slot in mine]
            step = MAX_BUFFERS_PER_OPERATION - 1
            for i in range(0, len(slots), step):
                ops.append(
                    {
                        "name": "re",
                        "src_buff": [first] + slots[i : i + step],
                        "dst_buff": [dict(acc)],
                        "reduce_op": "sum",
                    }
                )
                first = dict(acc)
            ops.append({"name": "nop"})
        if v in up:
            p, ed, slot = up[v]
            src = dict(acc) if mine else _local("i", g, count)
            _send(b, v, tb, src, [(p, ed)], "s", lambda _c, slot=slot: slot)
        if v == r and coll == "allreduce":
            sem = b.ranks[v].semaphores
            b.ranks[v].semaphores += 1
            released.append((local, count, sem))
            if not mine:
                ops.append(
                    {"name": "copy", "src_buff": [_local("i", g, count)], "dst_buff": [dict(acc)]}
                )
                ops.append({"name": "nop"})
            ops.append({"name": "sem_release", "semaphore_ids": [sem]})


def _document(b: _Builder, coll: str, C: int, Cp: int, lo: int, hi: int, name: str | None) -> dict:
    n = b.n
    chunks = {
        "allgather": (Cp, n * Cp),
        "reduce-scatter": (n * Cp, Cp),
        "allreduce": (n * Cp, n * Cp),
    }[coll]
    gpus = []
    for rk, st in enumerate(b.ranks):
        tbs = []
        for t, tb in enumerate(st.tbs):
            for ctype in ("memory", "port"):
                if len(tb.chans[ctype]) > MAX_CHANNEL or len(tb.bufs[ctype]) > MAX_CHANNEL:
                    raise MscclppError(
                        f"rank {rk} threadblock {t} needs {max(len(tb.chans[ctype]), len(tb.bufs[ctype]))} "
                        f"{ctype} channels, more than the device plan holds (MAX_CHANNEL {MAX_CHANNEL}, "
                        f"{cite(COMMON)}:15): a tree node has too many children; solve with fewer"
                    )
            if len(tb.ops) > MAX_OPERATION:
                raise MscclppError(
                    f"rank {rk} threadblock {t} needs {len(tb.ops)} operations, more than the device "
                    f"plan holds (MAX_OPERATION {MAX_OPERATION}, {cite(EXECUTOR)}:457-461)"
                )
            tbs.append(
                {
                    "id": t,
                    "ops": tb.ops,
                    "channels": [
                        {"channel_type": c, "channel_ids": tb.chans[c]}
                        for c in ("memory", "port")
                        if tb.chans[c]
                    ],
                    "remote_buffer_refs": [
                        {"access_channel_type": c, "remote_buffer_ids": tb.bufs[c]}
                        for c in ("memory", "port")
                        if tb.bufs[c]
                    ],
                }
            )
        remote = sorted(st.remote.items(), key=lambda kv: kv[1][0])
        gpus.append(
            {
                "id": rk,
                "input_chunks": chunks[0],
                "output_chunks": chunks[1],
                "scratch_chunks": st.scratch,
                "threadblocks": tbs,
                "channels": [
                    {"channel_type": c, "connected_to": st.channels[c]}
                    for c in ("memory", "port")
                    if st.channels[c]
                ],
                "remote_buffers": [
                    {"rank": owner, "type": btype, "access_channel_types": acc}
                    for (owner, btype), (_id, acc) in remote
                ],
                "semaphores": [{"init_value": 0} for _ in range(st.semaphores)],
            }
        )
    topo = b.schedule.topology.name
    return {
        "name": name or f"forestcoll_{COLLECTIVE_NAMES[coll]}_{n}r_k{C}",
        "collective": COLLECTIVE_NAMES[coll],
        "protocol": "Simple",
        "inplace": coll == "allreduce",
        "reuse_resources": False,
        "gpus": gpus,
        "num_threads_per_block": 1024,
        "use_double_scratch_buffer": False,
        "buffer_alignment": 16,
        "min_message_size": lo,
        "max_message_size": hi,
        "forestcoll": {
            "topology": topo,
            "ranks": b.ids,
            "chunks_per_shard": C,
            "instances": b.instances,
        },
    }
