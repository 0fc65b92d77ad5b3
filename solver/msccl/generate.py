"""Turn a :class:`solver.model.schedule.Schedule` into an MSCCL XML :class:`Program`.

Chunks. Each rank's shard is split into ``C`` chunks, ``C`` = the lcm of the trees-per-root counts
of the phases (= k for allgather and reduce-scatter); a tree of multiplicity ``m`` (out of ``k``)
carries ``m*C/k`` consecutive chunks of its root's shard, sent as one step (split into steps of
at most 71 chunks: ``cnt < 72``). ``--instances N`` repeats the program on fresh channels with
N times as many chunks.

Buffers (C' = C x instances, rank r's block = chunks r*C' .. r*C'+C'-1):
allgather: input C' chunks, output N*C' (rank r's chunk j at r*C'+j);
reduce-scatter: input N*C', output C', partial sums in scratch;
allreduce: input = output = N*C' chunks; partial sums accumulate in the output.

Steps. Allgather (out-trees): the root sends its chunks from the input to its children (and copies
them into its output); every other node receives them into its output and forwards them to its
children once received. Reduce-scatter (in-trees): a leaf sends its input chunks to its parent;
an inner node receives each child's partial sum with ``rrc`` (first child: input + message,
later ones: accumulator + message, each after the previous), then sends the accumulator on; the
root accumulates straight into its output. Allreduce = reduce-scatter then allgather, the
allgather root sending once its reduction finished.

Threadblocks: one per (rank, peer, channel), holding the sends to and the receives from that
peer (or one for each direction when together they would pass the step limit), plus one local
block for copies. Channels: a logical edge's channel is chosen by its first hop (0 for a direct
link or the first switch/NIC of the rank, 1 for the second...), with extra channels when a peer
set passes 31 per channel or a connection passes half the step limit.

Deadlock freedom: every step has a key (phase, tree level, tree, piece, sibling, sender); steps in
each threadblock run in key order and every dependency points to a strictly smaller key, so the
pending step with the smallest key and its partner can always run, even with no buffering.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from solver.model.schedule import Schedule, Tree
from solver.msccl.program import Gpu, Program, Step, Threadblock
from solver.msccl.runtimes import PROTOCOLS, MscclError, Runtime, runtime


@dataclass(eq=False)
class _Op:
    rank: int
    peer: int  # -1 for local ops
    role: str  # "send", "recv", "local"
    type: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    key: tuple
    deps: list[_Op] = field(default_factory=list)
    channel_class: tuple = ()
    channel: int = 0
    hasdep: bool = False
    tb: int = -1
    s: int = -1  # step index of the op itself (after its nops)


@dataclass(eq=False)
class _Transfer:
    send: _Op
    recv: _Op
    src: int
    dst: int
    base: int
    key: tuple


def rank_order(schedule: Schedule, order: list[str] | None = None) -> list[str]:
    """Compute node ids by rank: the fabric's compute order, or ``order`` (checked)."""
    compute = list(schedule.topology.compute_ids)
    if order is None:
        return compute
    if len(set(order)) != len(order):
        dup = next(x for x in order if order.count(x) > 1)
        raise MscclError(f"rank order lists {dup!r} twice")
    missing = set(compute) - set(order)
    extra = set(order) - set(compute)
    if extra:
        raise MscclError(
            f"rank order names {min(extra)!r}, which is not a compute node of the fabric"
        )
    if missing:
        raise MscclError(f"rank order misses compute node {min(missing)!r}")
    return list(order)


def _phases(schedule: Schedule) -> list[tuple[str, Schedule]]:
    if schedule.collective == "allreduce":
        if len(schedule.phases) != 2:
            raise MscclError("an allreduce schedule needs its reduce-scatter and allgather phases")
        kinds = [p.collective for p in schedule.phases]
        if kinds != ["reduce-scatter", "allgather"]:
            raise MscclError(f"allreduce phases must be reduce-scatter then allgather, got {kinds}")
        return [("rs", schedule.phases[0]), ("ag", schedule.phases[1])]
    if schedule.collective == "allgather":
        return [("ag", schedule)]
    if schedule.collective == "reduce-scatter":
        return [("rs", schedule)]
    raise MscclError(f"cannot export collective {schedule.collective!r}")


def _chunk_ranges(phase: Schedule, C: int) -> list[tuple[int, int]]:
    """(first chunk, count) of each tree of ``phase`` within its root's shard of C chunks."""
    totals: dict[str, int] = defaultdict(int)
    for t in phase.trees:
        totals[t.root] += t.multiplicity
    used: dict[str, int] = defaultdict(int)
    out = []
    for t in phase.trees:
        n = t.multiplicity * C // totals[t.root]
        out.append((used[t.root], n))
        used[t.root] += n
    return out


def _first_hops(schedule: Schedule) -> dict[str, list[str]]:
    """Per compute node, its switch neighbours in fabric order (channel base = index + ...)."""
    topo = schedule.topology
    kinds = {n.id: n.kind for n in topo.nodes}
    hops: dict[str, list[str]] = defaultdict(list)
    for u, v in topo.directed_bandwidths():
        if kinds.get(v) == "switch" and v not in hops[u]:
            hops[u].append(v)
    return hops


def build_program(
    schedule: Schedule,
    runtime_name: str = "msccl-executor",
    proto: str = "Simple",
    instances: int = 1,
    order: list[str] | None = None,
    min_bytes: int = 0,
    max_bytes: int = 2**40,
    name: str | None = None,
) -> Program:
    """The MSCCL program of ``schedule``; raises :class:`MscclError` if it cannot fit ``runtime``."""
    rt = runtime(runtime_name)
    if proto not in PROTOCOLS:
        raise MscclError(f"unknown protocol {proto!r} (choose {', '.join(PROTOCOLS)})")
    if instances < 1:
        raise MscclError(f"--instances must be >= 1, got {instances}")
    ids = rank_order(schedule, order)
    rank = {v: i for i, v in enumerate(ids)}
    n = len(ids)
    phases = _phases(schedule)
    for _, ph in phases:
        _check_trees(ph, rank)
    C = 1
    for _, ph in phases:
        totals: dict[str, int] = defaultdict(int)
        for t in ph.trees:
            totals[t.root] += t.multiplicity
        for tot in totals.values():
            C = math.lcm(C, tot)
    Cp = C * instances
    max_piece = rt.max_count - 1
    if Cp * n > 32767:
        raise MscclError(
            f"the schedule needs {Cp * n} chunks per loop, more than the runtimes' 16-bit offsets allow; "
            f"export with a smaller --max-trees-per-root (k={C})"
        )
    hops = _first_hops(schedule)
    coll = schedule.collective

    ops: list[_Op] = []
    transfers: list[_Transfer] = []
    s_chunks = [0] * n

    def base_channel(edge_path: tuple[str, ...]) -> int:
        src, first = edge_path[0], edge_path[1]
        if first in hops[src]:
            return hops[src].index(first)
        return 0  # a direct link between compute nodes

    def add_transfer(u, v, path, key, send_kw, recv_kw, send_deps, recv_deps) -> _Transfer:
        ru, rv = rank[u], rank[v]
        s_op = _Op(ru, rv, "send", key=key, deps=list(send_deps), **send_kw)
        r_op = _Op(rv, ru, "recv", key=key, deps=list(recv_deps), **recv_kw)
        ops.extend((s_op, r_op))
        tr = _Transfer(s_op, r_op, ru, rv, base_channel(path), key)
        transfers.append(tr)
        return tr

    for inst in range(instances):
        # reduction results (allreduce): (root rank, chunk) -> op that completes it
        done: dict[tuple[int, int], _Op] = {}
        for ph_index, (kind, ph) in enumerate(phases):
            ranges = _chunk_ranges(ph, C)
            for t_index, (tree, (first, count)) in enumerate(zip(ph.trees, ranges)):
                r = rank[tree.root]
                depth = _depths(tree)
                for piece, a in enumerate(range(first, first + count, max_piece)):
                    cnt = min(max_piece, first + count - a)
                    local = inst * C + a  # offset inside a rank's block
                    g = r * Cp + local  # offset of the root's chunk in a full buffer
                    prefix = (inst, ph_index)
                    if kind == "ag":
                        _allgather_piece(
                            tree,
                            depth,
                            rank,
                            prefix,
                            t_index,
                            piece,
                            cnt,
                            local,
                            g,
                            coll,
                            done,
                            ops,
                            add_transfer,
                        )
                    else:
                        _reduce_piece(
                            tree,
                            depth,
                            rank,
                            prefix,
                            t_index,
                            piece,
                            cnt,
                            local,
                            g,
                            coll,
                            done,
                            s_chunks,
                            add_transfer,
                        )
    program = _assemble(
        schedule,
        rt,
        proto,
        instances,
        n,
        C,
        Cp,
        ops,
        transfers,
        s_chunks,
        min_bytes,
        max_bytes,
        name,
        ids,
    )
    return program


def _depths(tree: Tree) -> dict[str, int]:
    """Depth of every node from the root, whatever the order of the edges."""
    adjacent: dict[str, list[str]] = defaultdict(list)
    for e in tree.edges:
        adjacent[e.src].append(e.dst)
        adjacent[e.dst].append(e.src)
    depth = {tree.root: 0}
    frontier = [tree.root]
    while frontier:
        nxt = []
        for u in frontier:
            for v in adjacent[u]:
                if v not in depth:
                    depth[v] = depth[u] + 1
                    nxt.append(v)
        frontier = nxt
    return depth


def _check_trees(phase: Schedule, rank: dict[str, int]) -> None:
    compute = set(rank)
    for t in phase.trees:
        if t.multiplicity < 1:
            raise MscclError(f"tree of root {t.root!r} has multiplicity {t.multiplicity}")
        nodes = {t.root} | {e.src for e in t.edges} | {e.dst for e in t.edges}
        depth = _depths(t)
        if nodes != compute or len(t.edges) != len(compute) - 1 or len(depth) != len(compute):
            raise MscclError(
                f"tree of root {t.root!r} does not span the compute nodes exactly once"
            )
        for e in t.edges:
            down = depth[e.dst] == depth[e.src] + 1
            if down != (phase.collective == "allgather"):
                raise MscclError(
                    f"{phase.collective} tree of root {t.root!r}: edge {e.src}->{e.dst} points the wrong "
                    "way (allgather edges go away from the root, reduce-scatter edges toward it)"
                )
            if len(e.path) < 2 or e.path[0] != e.src or e.path[-1] != e.dst:
                raise MscclError(
                    f"tree of root {t.root!r}: edge {e.src}->{e.dst} has path {e.path}"
                )


def _allgather_piece(
    tree: Tree, depth, rank, prefix, t_index, piece, cnt, local, g, coll, done, ops, add_transfer
):
    r = rank[tree.root]
    received: dict[str, _Op] = {}
    if coll == "allgather":
        ops.append(
            _Op(
                r,
                -1,
                "local",
                "cpy",
                "i",
                local,
                "o",
                g,
                cnt,
                key=(-1,) + prefix + (t_index, piece),
            )
        )
        root_src = ("i", local)
        root_deps: list[_Op] = []
    else:  # allreduce: the root's reduced chunks are in its output
        root_src = ("o", g)
        root_deps = list(dict.fromkeys(done[(r, g + j)] for j in range(cnt)))
    for e in sorted(tree.edges, key=lambda e: depth[e.dst]):  # parents before children
        parent, child = e.src, e.dst
        key = prefix + (depth[child], t_index, piece, 0, rank[parent])
        if parent == tree.root:
            srcbuf, srcoff = root_src
            deps = root_deps
        else:
            srcbuf, srcoff = "o", g
            deps = [received[parent]]
        tr = add_transfer(
            parent,
            child,
            e.path,
            key,
            {
                "type": "s",
                "srcbuf": srcbuf,
                "srcoff": srcoff,
                "dstbuf": "o",
                "dstoff": g,
                "cnt": cnt,
            },
            {
                "type": "r",
                "srcbuf": srcbuf,
                "srcoff": srcoff,
                "dstbuf": "o",
                "dstoff": g,
                "cnt": cnt,
            },
            deps,
            [],
        )
        received[child] = tr.recv


def _reduce_piece(
    tree: Tree,
    depth,
    rank,
    prefix,
    t_index,
    piece,
    cnt,
    local,
    g,
    coll,
    done,
    s_chunks,
    add_transfer,
):
    r = rank[tree.root]
    children: dict[str, list] = defaultdict(list)
    for e in tree.edges:
        children[e.dst].append(e)
    last: dict[str, _Op] = {}  # node -> op that completed its partial sum (an rrc at that node)
    acc: dict[str, tuple[str, int]] = {}

    def accumulator(v: str) -> tuple[str, int]:
        if v not in acc:
            rv = rank[v]
            if v == tree.root:
                acc[v] = ("o", local if coll == "reduce-scatter" else g)
            elif coll == "allreduce":
                acc[v] = ("o", g)
            else:
                acc[v] = ("s", s_chunks[rv])
                s_chunks[rv] += cnt
        return acc[v]

    def receive_children(v: str) -> None:
        prev = None
        for j, e in enumerate(children.get(v, [])):
            child = e.src
            key = prefix + (-depth[child], t_index, piece, j, rank[child])
            dbuf, doff = accumulator(v)
            sbuf, soff = ("i", g) if j == 0 else (dbuf, doff)
            if child in last:
                cs_buf, cs_off = acc[child]
                send_deps = [last[child]]
            else:
                cs_buf, cs_off = "i", g
                send_deps = []
            tr = add_transfer(
                child,
                v,
                e.path,
                key,
                {
                    "type": "s",
                    "srcbuf": cs_buf,
                    "srcoff": cs_off,
                    "dstbuf": dbuf,
                    "dstoff": doff,
                    "cnt": cnt,
                },
                {
                    "type": "rrc",
                    "srcbuf": sbuf,
                    "srcoff": soff,
                    "dstbuf": dbuf,
                    "dstoff": doff,
                    "cnt": cnt,
                },
                send_deps,
                [prev] if prev is not None else [],
            )
            prev = tr.recv
        if prev is not None:
            last[v] = prev

    # a node's children must all have their sums before it sends: walk parents deepest first
    parents = sorted(children, key=lambda v: -depth[v])
    for v in parents:
        receive_children(v)
    if coll == "allreduce":
        for j in range(cnt):
            done[(r, g + j)] = last[tree.root]


def _assemble(
    schedule,
    rt: Runtime,
    proto,
    instances,
    n,
    C,
    Cp,
    ops,
    transfers,
    s_chunks,
    min_bytes,
    max_bytes,
    name,
    ids,
):
    half = rt.max_steps // 2
    k_hint = (
        f"export a schedule with fewer trees (--max-trees-per-root 1; this one has k={C})"
        if C > 1
        else "this fabric needs too many peers per rank for this runtime"
    )

    def weight(op: _Op) -> int:
        return 1 + max(0, len(op.deps) - 1)

    # lanes: split connections whose steps would pass half the step limit
    groups: dict[tuple[int, int, int], list[_Transfer]] = defaultdict(list)
    for tr in transfers:
        groups[(tr.src, tr.dst, tr.base)].append(tr)
    for (src, dst, base), trs in groups.items():
        trs.sort(key=lambda t: t.key)
        lane = 0
        ws = wr = 0
        for tr in trs:
            a, b = weight(tr.send), weight(tr.recv)
            if ws + a > half or wr + b > half:
                lane += 1
                ws = wr = 0
            ws += a
            wr += b
            inst = tr.key[0]
            tr.send.channel_class = tr.recv.channel_class = (inst, lane, base)

    # channels: per class, a list of channels; a rank's peers per channel stay below the limit
    limit = rt.max_peers_per_channel - 1  # room for the local block on channel 0
    class_channels: dict[tuple, list[dict[int, set[int]]]] = defaultdict(list)
    assignment: dict[tuple[int, int, tuple], int] = {}
    for (src, dst, _base), trs in sorted(groups.items()):
        for tr in trs:
            cls = tr.send.channel_class
            pair = (min(src, dst), max(src, dst), cls)
            if pair in assignment:
                idx = assignment[pair]
            else:
                chans = class_channels[cls]
                idx = None
                for i, peers in enumerate(chans):
                    ok_src = dst in peers.get(src, set()) or len(peers.get(src, set())) < limit
                    ok_dst = src in peers.get(dst, set()) or len(peers.get(dst, set())) < limit
                    if ok_src and ok_dst:
                        idx = i
                        break
                if idx is None:
                    chans.append({})
                    idx = len(chans) - 1
                peers = chans[idx]
                peers.setdefault(src, set()).add(dst)
                peers.setdefault(dst, set()).add(src)
                assignment[pair] = idx
            tr.send.channel_class = tr.recv.channel_class = cls + (idx,)
    classes = sorted(
        {op.channel_class for op in ops if op.role != "local"},
        key=lambda c: (c[0], c[1], c[2], c[3]),
    )
    channel_id = {cls: i for i, cls in enumerate(classes)}
    nchannels = max(1, len(classes))
    if nchannels > rt.max_channels:
        raise MscclError(
            f"the schedule needs {nchannels} channels, more than the {rt.name} limit {rt.max_channels}; {k_hint}"
        )
    for op in ops:
        op.channel = channel_id[op.channel_class] if op.role != "local" else 0

    # threadblocks per rank
    per_rank: list[dict[tuple, list[_Op]]] = [defaultdict(list) for _ in range(n)]
    for op in ops:
        if op.role == "local":
            per_rank[op.rank][("local",)].append(op)
        else:
            per_rank[op.rank][(op.channel, op.peer)].append(op)
    gpus = []
    for r in range(n):
        blocks: list[tuple[int, int, int, list[_Op]]] = []  # (send, recv, chan, ops)
        for key in sorted(k for k in per_rank[r] if k != ("local",)):
            chan, peer = key
            group = sorted(per_rank[r][key], key=lambda o: o.key)
            total = sum(weight(o) for o in group)
            sends = [o for o in group if o.role == "send"]
            recvs = [o for o in group if o.role == "recv"]
            if total <= rt.max_steps or not sends or not recvs:
                blocks.append((peer if sends else -1, peer if recvs else -1, chan, group))
            else:
                blocks.append((peer, -1, chan, sends))
                blocks.append((-1, peer, chan, recvs))
        if ("local",) in per_rank[r]:
            blocks.append((-1, -1, 0, sorted(per_rank[r][("local",)], key=lambda o: o.key)))
        if len(blocks) > rt.max_threadblocks:
            raise MscclError(
                f"rank {r} needs {len(blocks)} threadblocks, more than the {rt.name} limit {rt.max_threadblocks}; {k_hint}"
            )
        tbs = []
        for tb_id, (send, recv, chan, group) in enumerate(blocks):
            for op in group:
                op.tb = tb_id
            tbs.append(Threadblock(tb_id, send, recv, chan))
        gpus.append(tbs)

    # steps: nops for extra dependencies; then resolve (tb, s) of each dependency
    placed: list[
        list[list[tuple[str, _Op | None, _Op | None]]]
    ] = []  # per rank, per tb: (kind, op, dep)
    for r in range(n):
        rank_tbs = []
        for tb in gpus[r]:
            rank_tbs.append([])
        placed.append(rank_tbs)
    for op in ops:
        # a dependency on an earlier step of the same threadblock holds by program order
        op.deps = [d for d in op.deps if d.tb != op.tb]
    for op in sorted(ops, key=lambda o: o.key):
        seq = placed[op.rank][op.tb]
        for dep in op.deps[:-1]:
            seq.append(("nop", None, dep))
        op.s = len(seq)
        seq.append(("op", op, op.deps[-1] if op.deps else None))
    for op in ops:
        for dep in op.deps:
            if dep.rank != op.rank:
                raise MscclError("internal error: a dependency crosses ranks")
            dep.hasdep = True

    i_chunks = {"allgather": Cp, "reduce-scatter": n * Cp, "allreduce": n * Cp}[schedule.collective]
    o_chunks = {"allgather": n * Cp, "reduce-scatter": Cp, "allreduce": n * Cp}[schedule.collective]
    program = Program(
        name=name or f"forestcoll {schedule.collective} {schedule.topology.name} k={C}",
        proto=proto,
        nchannels=nchannels,
        nchunksperloop=n * Cp,
        ngpus=n,
        coll=rt.coll_name(schedule.collective),
        inplace=1,
        outofplace=1,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        comments=_comments(schedule, rt, C, instances, ids),
    )
    for r in range(n):
        g = Gpu(r, i_chunks, o_chunks, s_chunks[r])
        for tb, seq in zip(gpus[r], placed[r]):
            if len(seq) > rt.max_steps:
                raise MscclError(
                    f"rank {r} threadblock {tb.id} needs {len(seq)} steps, more than the {rt.name} limit "
                    f"{rt.max_steps}; {k_hint}"
                )
            for s, (kind, op, dep) in enumerate(seq):
                depid, deps = (dep.tb, dep.s) if dep is not None else (-1, -1)
                if kind == "nop":
                    tb.steps.append(Step(s, "nop", "i", -1, "o", -1, 0, depid, deps, 0))
                else:
                    tb.steps.append(
                        Step(
                            s,
                            op.type,
                            op.srcbuf,
                            op.srcoff,
                            op.dstbuf,
                            op.dstoff,
                            op.cnt,
                            depid,
                            deps,
                            int(op.hasdep),
                        )
                    )
            g.tbs.append(tb)
        nodes = 2 + len(g.tbs) + sum(len(tb.steps) for tb in g.tbs)
        if nodes > rt.max_xml_nodes:
            raise MscclError(
                f"rank {r} needs {nodes} XML elements, more than the {rt.name} reader keeps "
                f"({rt.max_xml_nodes}); {k_hint}"
            )
        program.gpus.append(g)
    return program


def _comments(schedule: Schedule, rt: Runtime, C: int, instances: int, ids: list[str]) -> list[str]:
    from solver._version import __version__

    return [
        (
            f"ForestColl Designer {__version__}: {schedule.collective} on {schedule.topology.name!r}, "
            f"{C} chunk(s) per rank shard, {instances} instance(s), runtime {rt.name}"
        ),
        (
            f"schedule algbw {float(schedule.algbw_exact):.6g} GB/s "
            f"(optimum {float(schedule.optimal_algbw_exact):.6g} GB/s), k={schedule.k}"
        ),
        "ranks: " + ", ".join(f"{i}={v}" for i, v in enumerate(ids)),
    ]
