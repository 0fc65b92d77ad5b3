"""Turn a :class:`solver.model.schedule.Schedule` into an MSCCL XML :class:`Program`.

Chunks. Each rank's shard is split into ``shard_chunks`` = C chunks, the lcm of the
trees-per-root counts of the phases (= k for allgather and reduce-scatter); a tree of
multiplicity ``m`` (out of ``k``) carries ``m*C/k`` consecutive chunks of its root's shard, sent as
one step (split into steps of at most 71 chunks: ``cnt < 72``, MSCCL_MAX_COUNT). ``--instances N``
repeats the program on fresh channels with N times as many chunks.

Buffers (``block_chunks`` = B = C x instances, rank r's block = chunks r*B .. r*B+B-1):
allgather: input B chunks, output N*B (rank r's chunk j at r*B+j);
reduce-scatter: input N*B, output B, partial sums in scratch;
allreduce: input = output = N*B chunks; partial sums accumulate in the output.

Steps. Allgather (out-trees): the root sends its chunks from the input to its children (and copies
them into its output); every other node receives them into its output and forwards them to its
children once received. Reduce-scatter (in-trees): a leaf sends its input chunks to its parent;
an inner node receives each child's partial sum with ``rrc`` (first child: input + message,
later ones: accumulator + message, each after the previous), then sends the accumulator on; the
root accumulates straight into its output. Allreduce = reduce-scatter then allgather, the
allgather root sending once its reduction finished and every other rank receiving a chunk only
after its own send of that chunk's partial sum (a dependency inside the rank: the order through
the other ranks holds too, but a checker would have to search the whole program to see it).

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
from collections.abc import Sequence
from dataclasses import dataclass, field

from solver.algorithm.pipeline import paused_gc as gc_paused
from solver.model.schedule import Schedule, Tree
from solver.msccl.limits import check_fits
from solver.msccl.options import DEFAULT_OPTIONS, ExportOptions
from solver.msccl.program import Gpu, Move, Program, Step, Threadblock
from solver.msccl.runtimes import INT8_MAX, INT16_MAX, MscclError, PeersLimit, Runtime


@dataclass(eq=False, slots=True, kw_only=True)
class _Op(Move):
    """A planned step: its move, the rank that runs it and where it goes in the program."""

    rank: int
    peer: int  # -1 for local ops
    role: str  # "send", "recv", "local"
    key: tuple
    deps: list[_Op] = field(default_factory=list)
    channel_class: tuple = ()
    channel: int = 0
    hasdep: bool = False
    tb: int = -1
    s: int = -1  # step index of the op itself (after its nops)
    follows: _Op | None = None  # a local op run in the threadblock of this receive, after it
    after: list[_Op] = field(default_factory=list)  # the ops that follow this receive


@dataclass(eq=False, slots=True)
class _Transfer:
    send: _Op
    recv: _Op
    src: int
    dst: int
    base: int
    key: tuple


def rank_order(schedule: Schedule, order: Sequence[str] | None = None) -> list[str]:
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


def _chunk_ranges(phase: Schedule, shard_chunks: int) -> list[tuple[int, int]]:
    """(first chunk, count) of each tree of ``phase`` within its root's shard of chunks."""
    totals: dict[str, int] = defaultdict(int)
    for t in phase.trees:
        totals[t.root] += t.multiplicity
    used: dict[str, int] = defaultdict(int)
    out = []
    for t in phase.trees:
        n = t.multiplicity * shard_chunks // totals[t.root]
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


@dataclass
class _Builder:
    """Everything one export works on: the schedule, the options and the ops made so far."""

    schedule: Schedule
    options: ExportOptions
    ids: list[str]  # compute node ids by rank
    shard_chunks: int  # chunks per rank shard
    ops: list[_Op] = field(default_factory=list)
    transfers: list[_Transfer] = field(default_factory=list)
    scratch_chunks: list[int] = field(default_factory=list)  # per rank, used so far
    first_hops: dict[str, list[str]] = field(default_factory=dict)

    @property
    def rt(self) -> Runtime:
        return self.options.runtime

    @property
    def nranks(self) -> int:
        return len(self.ids)

    @property
    def block_chunks(self) -> int:
        """Chunks of one rank's block in a full buffer: its shard once per instance."""
        return self.shard_chunks * self.options.instances

    rank: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.rank = {v: i for i, v in enumerate(self.ids)}

    @property
    def k_hint(self) -> str:
        if self.shard_chunks > 1:
            return (
                "export a schedule with fewer trees (--max-trees-per-root 1; this one has "
                f"k={self.shard_chunks})"
            )
        return "this fabric needs too many peers per rank for this runtime"

    def add_transfer(self, u, v, path, key, sides, deps) -> _Transfer:
        """A send at ``u`` and its receive at ``v``; ``sides``/``deps`` are (send, recv) pairs."""
        rank = self.rank
        ru, rv = rank[u], rank[v]
        s_op = _Op(rank=ru, peer=rv, role="send", key=key, deps=list(deps[0]), **sides[0])
        r_op = _Op(rank=rv, peer=ru, role="recv", key=key, deps=list(deps[1]), **sides[1])
        self.ops.extend((s_op, r_op))
        src, first = path[0], path[1]
        hops = self.first_hops[src]
        base = hops.index(first) if first in hops else 0
        tr = _Transfer(s_op, r_op, ru, rv, base, key)
        self.transfers.append(tr)
        return tr


@dataclass(frozen=True)
class _Piece:
    """A run of at most 71 consecutive chunks of one tree, the unit of one step."""

    tree: Tree
    depth: dict
    prefix: tuple  # (instance, phase index)
    t_index: int
    piece: int
    cnt: int
    local: int  # offset inside a rank's block
    g: int  # offset of the root's chunk in a full buffer


def build_program(schedule: Schedule, options: ExportOptions = DEFAULT_OPTIONS) -> Program:
    """The MSCCL program of ``schedule``; raises :class:`MscclError` if it cannot fit
    ``options.runtime`` or an option is out of range (:meth:`ExportOptions.check`)."""
    options.check()
    ids = rank_order(schedule, options.order)
    check_fits(schedule, options.runtime, ids)  # decided by the trees, before minutes of building
    rank = {v: i for i, v in enumerate(ids)}
    phases = _phases(schedule)
    shard_chunks = 1
    for _, ph in phases:
        _check_trees(ph, rank)
        totals: dict[str, int] = defaultdict(int)
        for t in ph.trees:
            totals[t.root] += t.multiplicity
        for tot in totals.values():
            shard_chunks = math.lcm(shard_chunks, tot)
    builder = _Builder(
        schedule,
        options,
        ids,
        shard_chunks,
        scratch_chunks=[0] * len(ids),
        first_hops=_first_hops(schedule),
    )
    loop_chunks = builder.block_chunks * builder.nranks
    if loop_chunks > INT16_MAX:
        raise MscclError(
            f"the schedule needs {loop_chunks} chunks per loop, more than the runtimes' int16 offsets "
            f"reach (msccl_struct.h:44-45); export with a smaller --max-trees-per-root (k={shard_chunks})"
        )
    with gc_paused():
        _emit_ops(builder, phases)
        return _assemble(builder)


def _emit_ops(builder: _Builder, phases: list[tuple[str, Schedule]]) -> None:
    """The sends, receives and copies of every piece of every tree, phase and instance."""
    max_piece = builder.rt.max_count - 1
    rank = builder.rank
    for inst in range(builder.options.instances):
        # reduction results (allreduce): (root rank, chunk) -> op that completes it; and
        # (rank, chunk) -> the send of that rank's partial sum, which the allgather's receive
        # into the same chunk must follow
        done: dict[tuple[int, int], _Op] = {}
        sent: dict[tuple[int, int], _Op] = {}
        for ph_index, (kind, ph) in enumerate(phases):
            ranges = _chunk_ranges(ph, builder.shard_chunks)
            for t_index, (tree, (first, count)) in enumerate(zip(ph.trees, ranges)):
                r = rank[tree.root]
                depth = tree.depth_of()
                for piece, a in enumerate(range(first, first + count, max_piece)):
                    local = inst * builder.shard_chunks + a
                    pc = _Piece(
                        tree,
                        depth,
                        (inst, ph_index),
                        t_index,
                        piece,
                        min(max_piece, first + count - a),
                        local,
                        r * builder.block_chunks + local,
                    )
                    if kind == "ag":
                        _allgather_piece(builder, pc, done, sent)
                    else:
                        _reduce_piece(builder, pc, done, sent)


def _check_trees(phase: Schedule, rank: dict[str, int]) -> None:
    compute = set(rank)
    for t in phase.trees:
        if t.multiplicity < 1:
            raise MscclError(f"tree of root {t.root!r} has multiplicity {t.multiplicity}")
        nodes = {t.root} | {e.src for e in t.edges} | {e.dst for e in t.edges}
        depth = t.depth_of()
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


def _allgather_piece(builder: _Builder, pc: _Piece, done: dict, sent: dict) -> None:
    rank, coll, tree = builder.rank, builder.schedule.collective, pc.tree
    r = rank[tree.root]
    received: dict[str, _Op] = {}
    if coll == "allgather":
        key = (-1,) + pc.prefix + (pc.t_index, pc.piece)
        builder.ops.append(
            _Op("cpy", "i", pc.local, "o", pc.g, pc.cnt, rank=r, peer=-1, role="local", key=key)
        )
        root_src: tuple[str, int] = ("i", pc.local)
        root_deps: list[_Op] = []
    else:  # allreduce: the root's reduced chunks are in its output
        root_src = ("o", pc.g)
        root_deps = list(dict.fromkeys(done[(r, pc.g + j)] for j in range(pc.cnt)))
    for e in sorted(tree.edges, key=lambda e: pc.depth[e.dst]):  # parents before children
        parent, child = e.src, e.dst
        key = pc.prefix + (pc.depth[child], pc.t_index, pc.piece, 0, rank[parent])
        if parent == tree.root:
            (srcbuf, srcoff), deps = root_src, root_deps
        else:
            (srcbuf, srcoff), deps = ("o", pc.g), [received[parent]]
        side = {"srcbuf": srcbuf, "srcoff": srcoff, "dstbuf": "o", "dstoff": pc.g, "cnt": pc.cnt}
        # allreduce: the child sent its partial sum of these chunks from the same place; the
        # receive waits for that send in the rank itself (not only through the other ranks)
        rc = rank[child]
        after = (
            []
            if not sent
            else list(
                dict.fromkeys(sent[(rc, pc.g + j)] for j in range(pc.cnt) if (rc, pc.g + j) in sent)
            )
        )
        tr = builder.add_transfer(
            parent,
            child,
            e.path,
            key,
            ({"type": "s", **side}, {"type": "r", **side}),
            (deps, after),
        )
        received[child] = tr.recv


def _reduce_piece(builder: _Builder, pc: _Piece, done: dict, sent: dict) -> None:
    rank, coll, tree = builder.rank, builder.schedule.collective, pc.tree
    children: dict[str, list] = defaultdict(list)
    for e in tree.edges:
        children[e.dst].append(e)
    last: dict[str, _Op] = {}  # node -> op that completed its partial sum (an rrc at that node)
    acc: dict[str, tuple[str, int]] = {}

    def accumulator(v: str) -> tuple[str, int]:
        if v not in acc:
            if v == tree.root:
                acc[v] = ("o", pc.local if coll == "reduce-scatter" else pc.g)
            elif coll == "allreduce":
                acc[v] = ("o", pc.g)
            else:
                acc[v] = ("s", builder.scratch_chunks[rank[v]])
                builder.scratch_chunks[rank[v]] += pc.cnt
        return acc[v]

    # a node's children must all have their sums before it sends: walk parents deepest first
    for v in sorted(children, key=lambda v: -pc.depth[v]):
        prev = None
        for j, e in enumerate(children[v]):
            child = e.src
            key = pc.prefix + (-pc.depth[child], pc.t_index, pc.piece, j, rank[child])
            dbuf, doff = accumulator(v)
            sbuf, soff = ("i", pc.g) if j == 0 else (dbuf, doff)
            cs_buf, cs_off = acc[child] if child in last else ("i", pc.g)
            send = {"type": "s", "srcbuf": cs_buf, "srcoff": cs_off, "dstbuf": dbuf, "dstoff": doff}
            recv = {"type": "rrc", "srcbuf": sbuf, "srcoff": soff, "dstbuf": dbuf, "dstoff": doff}
            deps = ([last[child]] if child in last else [], [prev] if prev is not None else [])
            if not builder.rt.full_ops_at_launch:  # receive into scratch, then reduce locally
                recv = {"type": "r", "srcbuf": "s", "srcoff": 0, "dstbuf": "s", "dstoff": 0}
                deps = (deps[0], [])
            tr = builder.add_transfer(
                child, v, e.path, key, ({**send, "cnt": pc.cnt}, {**recv, "cnt": pc.cnt}), deps
            )
            if coll == "allreduce":
                for c in range(pc.cnt):
                    sent[(rank[child], pc.g + c)] = tr.send
            prev = (
                tr.recv
                if builder.rt.full_ops_at_launch
                else _reduce_after(builder, tr.recv, j, (sbuf, soff), (dbuf, doff), prev)
            )
        if prev is not None:
            last[v] = prev
    if coll == "allreduce":
        for j in range(pc.cnt):
            done[(rank[tree.root], pc.g + j)] = last[tree.root]


def _reduce_after(builder: _Builder, recv: _Op, j: int, first_src, acc, prev: _Op | None) -> _Op:
    """Without "full ops" (RCCL refuses rrc at launch, msccl_setup.cc:430-437): the receive
    lands in fresh scratch, the first child's sum starts as a copy of the node's input, and a
    ``re`` adds the received chunks to the accumulator, after the previous child's."""
    r, cnt = recv.rank, recv.cnt
    recv.dstoff = builder.scratch_chunks[r]
    builder.scratch_chunks[r] += cnt
    if builder.scratch_chunks[r] > INT16_MAX:
        raise MscclError(
            f"rank {r} needs {builder.scratch_chunks[r]} scratch chunks, more than int16 offsets reach "
            f"(msccl_struct.h:44-45); {builder.k_hint}"
        )
    ops = []
    if j == 0:
        ops.append(
            _Op(
                "cpy",
                *first_src,
                *acc,
                cnt,
                rank=r,
                peer=recv.peer,
                role="recv",
                key=recv.key + (1,),
            )
        )
    ops.append(
        _Op(
            "re",
            "s",
            recv.dstoff,
            *acc,
            cnt,
            rank=r,
            peer=recv.peer,
            role="recv",
            key=recv.key + (2,),
            deps=[prev] if prev is not None else [],
        )
    )
    for op in ops:
        op.follows = recv
    recv.after = ops
    builder.ops.extend(ops)
    return ops[-1]


def _weight(op: _Op) -> int:
    """Steps an op takes: itself and a nop for each dependency beyond the first."""
    return 1 + max(0, len(op.deps) - 1)


def _assemble(builder: _Builder) -> Program:
    groups = _assign_lanes(builder)
    nchannels = _assign_channels(builder, groups)
    blocks = _threadblocks(builder)
    placed = _place_steps(builder, blocks)
    return _program(builder, nchannels, blocks, placed)


def _assign_lanes(builder: _Builder) -> dict[tuple[int, int, int], list[_Transfer]]:
    """Split connections whose steps would pass half the step limit into lanes."""
    half = builder.rt.max_steps // 2
    groups: dict[tuple[int, int, int], list[_Transfer]] = defaultdict(list)
    for tr in builder.transfers:
        groups[(tr.src, tr.dst, tr.base)].append(tr)
    for (_src, _dst, base), trs in groups.items():
        trs.sort(key=lambda t: t.key)
        lane = ws = wr = 0
        for tr in trs:
            a = _weight(tr.send)
            c = _weight(tr.recv) + sum(_weight(op) for op in tr.recv.after)
            if ws + a > half or wr + c > half:
                lane += 1
                ws = wr = 0
            ws += a
            wr += c
            tr.send.channel_class = tr.recv.channel_class = (tr.key[0], lane, base)
    return groups


def _assign_channels(builder: _Builder, groups: dict) -> int:
    """Channels per class, keeping a rank's peers per channel below the runtime's limit."""
    limit = builder.rt.max_peers_per_channel - 1  # room for the local block on channel 0
    class_channels: dict[tuple, list[dict[int, set[int]]]] = defaultdict(list)
    assignment: dict[tuple[int, int, tuple], int] = {}
    for (src, dst, _base), trs in sorted(groups.items()):
        for tr in trs:
            cls = tr.send.channel_class
            pair = (min(src, dst), max(src, dst), cls)
            if pair not in assignment:
                assignment[pair] = _free_channel(class_channels[cls], src, dst, limit)
            tr.send.channel_class = tr.recv.channel_class = cls + (assignment[pair],)
    for op in builder.ops:
        if op.follows is not None:
            op.channel_class = op.follows.channel_class
    classes = sorted({op.channel_class for op in builder.ops if op.role != "local"})
    channel_id = {cls: i for i, cls in enumerate(classes)}
    nchannels = max(1, len(classes))
    if nchannels > builder.rt.max_channels:
        raise MscclError(
            f"the schedule needs {nchannels} channels, more than the {builder.rt.name} limit "
            f"{builder.rt.max_channels} (MAXCHANNELS, {builder.rt.where('max_channels')}); {builder.k_hint}"
        )
    for op in builder.ops:
        op.channel = channel_id[op.channel_class] if op.role != "local" else 0
    return nchannels


def _free_channel(chans: list[dict[int, set[int]]], src: int, dst: int, limit: int) -> int:
    """The first channel of a class where both ranks have room for the other as a peer."""
    for i, peers in enumerate(chans):
        ok_src = dst in peers.get(src, set()) or len(peers.get(src, set())) < limit
        ok_dst = src in peers.get(dst, set()) or len(peers.get(dst, set())) < limit
        if ok_src and ok_dst:
            break
    else:
        chans.append({})
        i = len(chans) - 1
    chans[i].setdefault(src, set()).add(dst)
    chans[i].setdefault(dst, set()).add(src)
    return i


def _threadblocks(builder: _Builder) -> list[list[tuple[Threadblock, list[_Op]]]]:
    """Per rank: one threadblock per (channel, peer), split by direction when too long."""
    rt = builder.rt
    per_rank: list[dict[tuple, list[_Op]]] = [defaultdict(list) for _ in range(builder.nranks)]
    for op in builder.ops:
        key = ("local",) if op.role == "local" else (op.channel, op.peer)
        per_rank[op.rank][key].append(op)
    targets = {id(d) for op in builder.ops for d in op.deps}
    out = []
    for r in range(builder.nranks):
        blocks: list[tuple[int, int, int, list[_Op]]] = []  # (send, recv, chan, ops)
        for key in sorted(k for k in per_rank[r] if k != ("local",)):
            chan, peer = key
            group = sorted(per_rank[r][key], key=lambda o: o.key)
            sends = [o for o in group if o.role == "send"]
            recvs = [o for o in group if o.role == "recv"]
            if sum(_weight(o) for o in group) <= rt.max_steps or not sends or not recvs:
                blocks.append((peer if sends else -1, peer if recvs else -1, chan, group))
            else:
                blocks.append((peer, -1, chan, sends))
                blocks.append((-1, peer, chan, recvs))
        if ("local",) in per_rank[r]:
            blocks.append((-1, -1, 0, sorted(per_rank[r][("local",)], key=lambda o: o.key)))
        blocks = _targets_first(builder, r, blocks, targets)
        if len(blocks) > rt.max_threadblocks:
            raise PeersLimit(
                f"rank {r} needs {len(blocks)} threadblocks, more than the {rt.name} limit "
                f"{rt.max_threadblocks} (MSCCL_MAX_NUM_THREAD_BLOCKS, {rt.where('max_threadblocks')}); "
                f"{builder.k_hint}"
            )
        rank_blocks = []
        for tb_id, (send, recv, chan, group) in enumerate(blocks):
            for op in group:
                op.tb = tb_id
            rank_blocks.append((Threadblock(tb_id, send, recv, chan), group))
        out.append(rank_blocks)
    return out


def _targets_first(
    builder: _Builder, r: int, blocks: list[tuple], targets: set[int]
) -> list[tuple]:
    """Blocks others wait on get ids the int8 ``dependentBid`` can hold (msccl_struct.h:58)."""
    is_target = [any(id(op) in targets for op in blk[3]) for blk in blocks]
    if not any(t and i > INT8_MAX for i, t in enumerate(is_target)):
        return blocks
    ordered = [blk for blk, t in zip(blocks, is_target) if t]
    if len(ordered) > INT8_MAX + 1:
        raise MscclError(
            f"rank {r} has {len(ordered)} threadblocks other threadblocks wait on; dependentBid is an "
            f"int8 (msccl_struct.h:58), so at most {INT8_MAX + 1}; {builder.k_hint}"
        )
    return ordered + [blk for blk, t in zip(blocks, is_target) if not t]


def _place_steps(builder: _Builder, blocks) -> list[list[list[tuple]]]:
    """Per rank and threadblock, the step sequence: (kind, op, dependency) with nops for extra
    dependencies; marks the ops others depend on (hasdep)."""
    placed = [[[] for _ in rank_blocks] for rank_blocks in blocks]
    for op in builder.ops:
        # a dependency on an earlier step of the same threadblock holds by program order
        op.deps = [d for d in op.deps if d.tb != op.tb]
    for op in sorted(builder.ops, key=lambda o: o.key):
        seq = placed[op.rank][op.tb]
        for dep in op.deps[:-1]:
            seq.append(("nop", None, dep))
        op.s = len(seq)
        seq.append(("op", op, op.deps[-1] if op.deps else None))
    for op in builder.ops:
        for dep in op.deps:
            if dep.rank != op.rank:
                raise MscclError("internal error: a dependency crosses ranks")
            dep.hasdep = True
    return placed


def _program(builder: _Builder, nchannels: int, blocks, placed) -> Program:
    rt, coll, n, block = (
        builder.rt,
        builder.schedule.collective,
        builder.nranks,
        builder.block_chunks,
    )
    i_chunks = {"allgather": block, "reduce-scatter": n * block, "allreduce": n * block}[coll]
    o_chunks = {"allgather": n * block, "reduce-scatter": block, "allreduce": n * block}[coll]
    options = builder.options
    program = Program(
        name=options.name
        or f"forestcoll {coll} {builder.schedule.topology.name} k={builder.shard_chunks}",
        proto=options.proto,
        nchannels=nchannels,
        nchunksperloop=n * block,
        ngpus=n,
        coll=rt.coll_name(coll),
        inplace=1,
        outofplace=1,
        min_bytes=options.min_bytes,
        max_bytes=options.max_bytes_written,
        comments=_comments(
            builder.schedule, rt, builder.shard_chunks, options.instances, builder.ids
        ),
    )
    for r in range(n):
        g = Gpu(r, i_chunks, o_chunks, builder.scratch_chunks[r])
        for (tb, _group), seq in zip(blocks[r], placed[r]):
            if len(seq) > rt.max_steps:
                raise MscclError(
                    f"rank {r} threadblock {tb.id} needs {len(seq)} steps, more than the {rt.name} "
                    f"limit {rt.max_steps} (MSCCL_MAX_NUM_STEPS, {rt.where('max_steps')}); {builder.k_hint}"
                )
            tb.steps.extend(_step(s, kind, op, dep) for s, (kind, op, dep) in enumerate(seq))
            g.tbs.append(tb)
        program.gpus.append(g)
    for g in program.gpus:
        nodes = 1 + n + len(g.tbs) + sum(len(tb.steps) for tb in g.tbs)
        if nodes >= rt.max_nodes:
            raise MscclError(
                f"rank {g.id} needs {nodes} XML elements, more than the {rt.name} reader keeps "
                f"({rt.max_nodes - 1}; MAX_NODES, {rt.where('max_nodes')}); {builder.k_hint}"
            )
    return program


def _step(s: int, kind: str, op: _Op | None, dep: _Op | None) -> Step:
    depid, deps = (dep.tb, dep.s) if dep is not None else (-1, -1)
    if kind == "nop":
        return Step("nop", "i", -1, "o", -1, 0, s=s, depid=depid, deps=deps)
    return Step(
        op.type,
        op.srcbuf,
        op.srcoff,
        op.dstbuf,
        op.dstoff,
        op.cnt,
        s=s,
        depid=depid,
        deps=deps,
        hasdep=int(op.hasdep),
    )


def _comments(
    schedule: Schedule, rt: Runtime, shard_chunks: int, instances: int, ids: list[str]
) -> list[str]:
    from solver._version import __version__

    return [
        (
            f"ForestColl Designer {__version__}: {schedule.collective} on {schedule.topology.name!r}, "
            f"{shard_chunks} chunk(s) per rank shard, {instances} instance(s), runtime {rt.name}"
        ),
        (
            f"schedule algbw {float(schedule.algbw_exact):.6g} GB/s "
            f"(optimum {float(schedule.optimal_algbw_exact):.6g} GB/s), k={schedule.k}"
        ),
        "ranks: " + ", ".join(f"{i}={v}" for i, v in enumerate(ids)),
    ]
