"""Execute an MSCCL XML program on symbolic buffers and check it implements its collective.

Steps:

1. :func:`solver.msccl.program.parse_xml` reads the file (bounded: at most ``MAX_FILE_BYTES``);
2. :func:`solver.msccl.rules.check_rules` applies the runtime's own checks, each citing its source;
3. every threadblock's steps are lowered into the runtime's transmissions
   (:mod:`solver.msccl.lowering`: nops carry dependencies, consecutive ``re`` steps fuse);
4. the transmissions run on symbolic buffers (:mod:`solver.msccl.collectives`) in one run, with
   one memory per mode the algorithm declares (in-place, out-of-place);
5. the output buffers are compared with the collective's postcondition.

Execution model (what the kernel does, made symbolic):

- a threadblock runs its transmissions in order; one waits until each dependency's flag has
  reached its step (the flag is the kernel's step counter, published by ``hasdep``
  transmissions), a receive waits for a message, a send for room in the connection;
- messages are FIFO per (sender, receiver, channel). A connection buffers NCCL_STEPS = 8 steps
  (device.h:32) and one piece of a transmission fills MSCCL_CHUNKSTEPS = 4 of them with the
  Simple protocol, whatever the collective (:func:`connection_pieces`): 2 pieces; 8 for LL and
  LL128 (msccl_setup.cc:52). A
  transmission of ``cnt`` chunks is ceil(``cnt`` / maxAllowedCount) kernel calls (pieces), and
  maxAllowedCount is 1 when the message is large (msccl_setup.cc:60; :func:`max_allowed_count`
  takes it at the file's maxBytes). The kernel streams the pieces: each waits for room (a send)
  or data (a receive) on its own (msccl_kernel_impl.h:290-303, prims_simple.h:112-127), so a
  ``cnt=3`` send on a 2-piece connection puts two pieces and waits for the receiver before the
  third, exactly like three ``cnt=1`` sends (:func:`solver.msccl.lowering.split_pieces`).
  ``fifo_capacity`` overrides the number of pieces a connection holds;
- ``s`` sends src; ``r`` dst = message; ``rcs`` dst = message, forwarded; ``rrs`` sends src +
  message; ``rrc`` dst = src + message; ``rrcs`` dst = src + message, forwarded; ``cpy`` dst =
  src; ``re`` dst = dst + every fused source. A transmission with ``cnt`` 0 moves nothing;
- program order, flags and messages order the transmissions: reading a chunk whose last write is
  not ordered before the read, or overwriting one another threadblock may still read, is a race
  (the runtime gives no ordering there), whatever the interleaving. Memory is a rank's own, so
  races are between threadblocks of one rank: each threadblock keeps a vector clock over its own
  rank's threadblocks (program order and dependencies), and an ordering those clocks do not show
  is looked for in the graph of executed steps (messages included: a chunk sent away and its
  reduced result received back), then remembered in the clock. The cost is linear in the program
  (steps x threadblocks of one rank), not in steps x all threadblocks;
- the schedule (which threadblock may run next) depends on flags and connections only, so both
  modes (in-place, out-of-place) are executed in one run, each on its own memory;
- a reduction adding a contribution twice, or reading a chunk nothing wrote, is an error.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.algorithm.pipeline import paused_gc as gc_paused
from solver.io.files import read_bytes
from solver.msccl import collectives as colls
from solver.msccl import reader
from solver.msccl.lowering import Transmission, lower, split_pieces
from solver.msccl.program import BUFFERS, Program, parse_xml
from solver.msccl.rules import check_rules
from solver.msccl.runtimes import (
    DEFAULT_RUNTIME,
    INT16_MAX,
    RECVS,
    SENDS,
    MscclError,
    Runtime,
)

MAX_REPORTED = 4
MAX_FILE_BYTES = (
    256 * 2**20
)  # check-xml reads at most this much (a 1024-rank allgather is 245 MiB; checked in 2.7 GB)
WORK_BUDGET = 30_000_000  # chunk x contribution operations one check may do
# Vector clocks are kept per rank: a threadblock's clock has one int32 per threadblock of its own
# rank (races are between steps of one rank: memory is a rank's own), and every published flag
# (``hasdep``) keeps a copy for the dependencies that wait on it; every transmission updates one
# clock (its rank's threadblocks operations). Orderings through other ranks' messages are found by
# searching the event graph (``_Machine._reaches``), at most SEARCH_BUDGET events per check.
CLOCK_BYTES = 2 * 2**30  # memory the clocks may take
CLOCK_OPS = 4_000_000_000  # transmissions x threadblocks-per-rank clock-entry operations
SEARCH_BUDGET = 20_000_000  # events visited deciding orderings through other ranks


def clock_cost(steps: int, tbs: int, widest: int, flags: int = 0) -> tuple[int, int]:
    """(bytes, operations) the clocks of one run take: ``4 * widest * (tbs + flags)`` and
    ``steps * widest``, ``widest`` = the most threadblocks of one rank. A lower bound with
    ``flags = 0`` (before the program is built). Linear in the program's size for a bounded
    number of threadblocks per rank (every runtime bounds it: 64 to 1024)."""
    return 4 * widest * (tbs + flags), steps * widest


def clock_limit_text() -> str:
    return f"{CLOCK_BYTES // 2**20} MiB of clocks and {CLOCK_OPS:.0e} clock operations"


@dataclass
class CheckReport:
    collective: str
    ngpus: int
    nchannels: int
    threadblocks: int  # max per rank
    max_steps: int  # max per threadblock
    steps_executed: int
    modes: tuple[str, ...]
    notes: list[str] = field(default_factory=list)  # warnings: the runtime loads it, but...
    verified: bool = True

    def summary(self) -> str:
        result = "result verified" if self.verified else "result not verified (run-time sizes)"
        return (
            f"ok: {self.collective} on {self.ngpus} ranks ({'/'.join(self.modes)}): "
            f"{self.nchannels} channel(s), up to {self.threadblocks} threadblocks per rank and "
            f"{self.max_steps} steps per threadblock; {self.steps_executed} steps executed; "
            f"{result}"
        )


def read_text(path: str | Path) -> str:
    """The text of an MSCCL XML file: a regular file of at most ``MAX_FILE_BYTES`` (refused by
    its size before reading), UTF-8 without a byte-order mark (the runtimes' reader expects ``<``
    as the first non-blank byte, msccl_parser.cc:107-113)."""
    data = read_bytes(path, MAX_FILE_BYTES, "an MSCCL XML file", MscclError)
    if data.startswith(b"\xef\xbb\xbf"):
        raise MscclError(
            f"{path}: line 1: starts with a UTF-8 byte-order mark, which the runtimes' reader "
            f"refuses (it expects '<') [reader rule text: msccl_parser.cc:107-113 @ {reader.SOURCE}]"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise MscclError(
            f"{path}: line {line}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None


NCCL_STEPS = 8  # src/include/device.h:32
MSCCL_CHUNKSTEPS = NCCL_STEPS // 2  # msccl_struct.h:24


def connection_pieces(proto: str) -> int:
    """Kernel calls a connection buffers before a send waits: NCCL_STEPS steps, of which a call
    takes MSCCL_CHUNKSTEPS with Simple (the kernel's ProtoSimple<2, 2>, msccl_kernel_impl.h:407,
    uses every slice of a call even when it is small, prims_simple.h:362-380), one with LL and
    LL128 (msccl_setup.cc:52)."""
    return NCCL_STEPS // MSCCL_CHUNKSTEPS if proto == "Simple" else NCCL_STEPS


def max_allowed_count(rt, p: Program, collective: str) -> int:
    """The kernel's maxAllowedCount at the largest message the runtime picks ``p`` for: how many
    chunks one kernel call moves (msccl_setup.cc:49-67). It is smallest at the largest size, and
    the smaller it is the more calls, so the more a connection can fill: checking there covers
    every size. With no upper limit (maxBytes 0) it is 1.

    chunkEffectiveSize = buffer / NCCL_STEPS x chunkSteps (4, or 1 for broadcast and reduce,
    collectives.h:16-24, msccl_parser.cc:335-342; 1 step for LL/LL128), halved for LL, 15/16 (7/8
    on RCCL) for LL128; maxAllowedCount = max(1, chunkEffectiveSize / ceil(maxBytes /
    nchunksperloop)), at most MSCCL_MAX_COUNT - 1. Buffers are the runtime's defaults
    (NCCL_BUFFSIZE... can change them at run time)."""
    max_bytes = p.max_bytes
    if rt.legacy and max_bytes is None:
        max_bytes = 2**27  # topo.cc:805
    if not max_bytes or max_bytes < 0 or p.proto not in rt.buffsize or p.nchunksperloop < 1:
        return 1
    steps = 1 if p.proto != "Simple" or collective in ("broadcast", "reduce") else MSCCL_CHUNKSTEPS
    chunk = rt.buffsize[p.proto] // NCCL_STEPS * steps
    if p.proto == "LL":
        chunk //= 2
    elif p.proto == "LL128":
        chunk = chunk // rt.ll128_line_elems * (rt.ll128_line_elems - 1)
    per_chunk = -(-max_bytes // p.nchunksperloop)
    return max(1, min(chunk // per_chunk, rt.max_count - 1))


def check_file(
    path: str | Path, runtime: Runtime = DEFAULT_RUNTIME, fifo_capacity: int | None = None
) -> CheckReport:
    return check_xml(read_text(path), runtime, fifo_capacity, where=str(path))


def check_xml(
    text: str,
    runtime: Runtime = DEFAULT_RUNTIME,
    fifo_capacity: int | None = None,
    where: str = "<xml>",
) -> CheckReport:
    """Parse, check the rules of ``runtime``, execute and verify. Raises MscclError."""
    with gc_paused():
        program = parse_xml(text, where)
        return check_program(program, runtime, fifo_capacity, where)


def check_program(
    program: Program,
    runtime: Runtime = DEFAULT_RUNTIME,
    fifo_capacity: int | None = None,
    where: str = "<xml>",
) -> CheckReport:
    with gc_paused():
        return _check_program(program, runtime, fifo_capacity, where)


def _check_program(
    program: Program, rt: Runtime, fifo_capacity: int | None, where: str
) -> CheckReport:
    findings = check_rules(program, rt)
    if findings.errors:
        errors = findings.errors
        more = f" (+{len(errors) - MAX_REPORTED} more)" if len(errors) > MAX_REPORTED else ""
        raise MscclError(
            f"{where}: breaks {rt.name} rules: " + "; ".join(errors[:MAX_REPORTED]) + more
        )
    collective = rt.collective_of(program.coll)
    _check_shape(program, collective, where)
    if rt.legacy:  # the legacy runtime reads only 'inplace' (src/graph/tuning.cc:356)
        modes = ("in-place",) if program.inplace else ("out-of-place",)
    else:
        modes = tuple(
            m
            for m, on in (("out-of-place", program.outofplace), ("in-place", program.inplace))
            if on
        )
    capacity = fifo_capacity or connection_pieces(program.proto)
    per_call = max_allowed_count(rt, program, collective)
    verified = colls.postcondition(collective, program.ngpus, program.nchunksperloop) is not None
    machine = _Machine(
        program,
        collective,
        tuple(m == "in-place" for m in modes),
        capacity,
        findings.lowered,
        per_call,
    )
    try:
        executed = machine.run()
        for mem in machine.memories:
            if mem.mode in machine.failures:
                raise machine.failures[mem.mode]
            if verified:
                mem.verify(collective, program.nchunksperloop)
    except _ModeFail as exc:
        raise MscclError(f"{where}: {modes[exc.mode]}: {exc}") from None
    except _Fail as exc:  # the schedule itself (deadlock, sizes): the first mode still running
        first = min((m.mode for m in machine.live), default=0)
        raise MscclError(f"{where}: {modes[first]}: {exc}") from None
    return CheckReport(
        collective=collective,
        ngpus=program.ngpus,
        nchannels=program.nchannels,
        threadblocks=program.num_threadblocks(),
        max_steps=program.max_steps(),
        steps_executed=executed,
        modes=modes,
        notes=list(findings.warnings),
        verified=verified,
    )


def _check_shape(p: Program, collective: str, where: str) -> None:
    """Sizes the execution needs, checked before anything is allocated."""
    n, C = p.ngpus, p.nchunksperloop
    if colls.needs_blocks(collective) and C % n:
        raise MscclError(
            f"{where}: nchunksperloop {C} is not a multiple of ngpus {n}, which {collective} needs "
            "(its chunks are split into one block per rank, msccl_parser.cc:348-367)"
        )
    lay = colls.layout(collective, n, C)
    addressable = INT16_MAX + 71  # last offset + largest cnt (msccl_struct.h:19, 44-45)
    if lay is not None and max(lay.n_in, lay.n_out) > addressable:
        raise MscclError(
            f"{where}: {collective} with nchunksperloop {C} on {n} ranks needs buffers of "
            f"{max(lay.n_in, lay.n_out)} chunks; offsets are int16 (msccl_struct.h:44-45), so at most "
            f"{addressable} chunks can be reached"
        )
    steps = sum(len(tb.steps) for g in p.gpus for tb in g.tbs)
    tbs = sum(len(g.tbs) for g in p.gpus)
    width = n if colls.reduces(collective) else 1
    work = sum(st.cnt for g in p.gpus for tb in g.tbs for st in tb.steps) * width
    flags = sum(1 for g in p.gpus for tb in g.tbs for st in tb.steps if st.hasdep)
    widest = max((len(g.tbs) for g in p.gpus), default=0)
    clock_bytes, clock_ops = clock_cost(steps, tbs, widest, flags)
    if work > WORK_BUDGET or clock_bytes > CLOCK_BYTES or clock_ops > CLOCK_OPS:
        raise MscclError(
            f"{where}: too large to execute here ({steps} steps on {tbs} threadblocks moving "
            f"{work} chunk contributions, {clock_bytes // 2**20} MiB of clocks, "
            f"{clock_ops:.1e} clock operations; check-xml's limits are {WORK_BUDGET} contributions, "
            f"{clock_limit_text()})"
        )


# ----------------------------------------------------------------------------- execution
@dataclass(eq=False)
class _Block:
    index: int
    rank: int
    id: int
    send: int
    recv: int
    chan: int
    txs: list[Transmission]
    local: int = 0  # position among its rank's threadblocks: its entry in that rank's clocks
    pc: int = 0
    flag: int = -1
    last: int = -1  # its latest event
    snapshots: list = field(
        default_factory=list
    )  # (flag, clock, event) of each hasdep transmission


class _Slot:
    __slots__ = ("value", "writer", "readers")

    def __init__(self, value, writer):
        self.value = value
        self.writer = writer  # event (block, clock count, tx, event id) or None (the input)
        self.readers: list = []


def _transmissions(tb, lowered: dict, per_call: int) -> list[Transmission]:
    """The threadblock's transmissions, connection ones split into the kernel calls that stream
    them, ``per_call`` chunks each (a fresh list: runs must not share state)."""
    low = lowered.get(id(tb)) or lower(tb)
    return [piece for tx in low.transmissions for piece in split_pieces(tx, per_call)]


def _whole_cnt(tx: Transmission) -> int:
    """The ``cnt`` of the transmission ``tx`` is a piece of (a receive must match its send)."""
    return tx.whole.cnt if tx.whole is not None else tx.cnt


class _Fail(Exception):
    pass


class _ModeFail(_Fail):
    """A wrong result, race or bad access in one mode's memory (``mode`` names it)."""

    def __init__(self, mode: int, message: str):
        super().__init__(message)
        self.mode = mode


class _Machine:
    """One run of a program: the threadblocks are scheduled once (what may run next depends on
    flags and connections only, never on data) and every step acts on one memory per mode."""

    def __init__(
        self,
        p: Program,
        collective: str,
        modes: tuple[bool, ...],
        capacity: int,
        lowered: dict,
        per_call: int = 1,
    ):
        self.p, self.collective, self.capacity = p, collective, capacity
        self.n = p.ngpus
        self.lay = colls.layout(collective, self.n, p.nchunksperloop)
        gpus = sorted(p.gpus, key=lambda g: g.id)
        self.blocks: list[_Block] = []
        self.clocks: list[np.ndarray] = []
        for g in gpus:
            tbs = sorted(g.tbs, key=lambda t: t.id)
            for local, tb in enumerate(tbs):
                b = _Block(
                    len(self.blocks),
                    g.id,
                    tb.id,
                    tb.send,
                    tb.recv,
                    tb.chan,
                    _transmissions(tb, lowered, per_call),
                    local,
                )
                self.blocks.append(b)
                self.clocks.append(np.zeros(len(tbs), dtype=np.int32))
        self.by_id = {(b.rank, b.id): b for b in self.blocks}
        self.fifos: dict[tuple[int, int, int], deque] = {}
        self.memories = [_Memory(self, inplace, m, gpus) for m, inplace in enumerate(modes)]
        self.live = list(self.memories)
        self.failures: dict[int, _ModeFail] = {}
        self.executed = 0
        # the event graph, for orderings the rank's own clocks do not show (see _ordered)
        self.ev_block = array("i")
        self.ev_prev = array("i")
        self.ev_msg = array("i")
        self.ev_deps: dict[int, list[int]] = {}
        self.searched = 0

    # ------------------------------------------------------------------ ordering
    def _ordered(self, b: _Block, w) -> bool:
        """Whether event ``w`` (of a threadblock of ``b``'s rank) happens before the step ``b``
        is executing. Its rank's clocks answer when a path of program order and dependencies
        inside the rank orders them; otherwise the event graph is searched backwards from the
        step for ``w``, through messages of other ranks too (what is found is added to the clock,
        so each such ordering is searched once per threadblock)."""
        wb, count, _tx, event = w
        clock = self.clocks[b.index]
        if clock[wb.local] >= count:
            return True
        if not self._reaches(event, wb.index, len(self.ev_block) - 1):
            return False
        clock[wb.local] = count
        return True

    def _reaches(self, target: int, block: int, start: int) -> bool:
        """Whether event ``target`` (of ``block``) is an ancestor of event ``start``. Events are
        numbered in execution order, so none before ``target`` can descend from it."""
        ev_block, ev_prev, ev_msg, ev_deps = self.ev_block, self.ev_prev, self.ev_msg, self.ev_deps
        seen = set()
        stack = [start]
        found = False
        while stack:
            x = stack.pop()
            if x < target or x in seen:
                continue
            if ev_block[x] == block:
                found = True
                break
            seen.add(x)
            stack.append(ev_prev[x])
            stack.append(ev_msg[x])
            stack.extend(ev_deps.get(x, ()))
        self.searched += len(seen)
        if self.searched > SEARCH_BUDGET:
            raise _Fail(
                f"deciding which steps other ranks' messages order took more than {SEARCH_BUDGET} "
                "events of search: too costly to check here"
            )
        return found

    # ------------------------------------------------------------------ scheduling
    def _blocked_on(self, b: _Block):
        """What the next transmission of ``b`` waits for: None, or a key to be woken on."""
        tx = b.txs[b.pc]
        for bid, step in tx.deps:
            target = self.by_id.get((b.rank, bid))
            # a flag counts only once published in this run (the kernel compares the work index
            # too, msccl_kernel_impl.h:279), so deps < 0 waits for the first hasdep step
            if target is None or not target.snapshots or target.flag < step:
                return ("flag", b.rank, bid)
        if tx.cnt and tx.type in RECVS and not self.fifos.get((b.recv, b.rank, b.chan)):
            return ("msg", b.recv, b.rank, b.chan)
        if tx.cnt and tx.type in SENDS:
            q = self.fifos.get((b.rank, b.send, b.chan))
            if q and len(q) >= self.capacity:  # one entry per piece
                return ("room", b.rank, b.send, b.chan)
        return None

    def run(self) -> int:
        waiting: dict[tuple, list[_Block]] = {}
        ready = deque(self.blocks)
        queued = {b.index for b in self.blocks}
        while ready:
            b = ready.popleft()
            queued.discard(b.index)
            while b.pc < len(b.txs):
                why = self._blocked_on(b)
                if why is not None:
                    waiting.setdefault(why, []).append(b)
                    break
                for key in self._execute(b, b.txs[b.pc]):
                    for w in waiting.pop(key, ()):
                        if w.index not in queued:
                            queued.add(w.index)
                            ready.append(w)
                if b.txs[b.pc].piece == b.txs[b.pc].pieces - 1:
                    self.executed += 1
                b.pc += 1
        self._check_finished()
        return self.executed

    def _execute(self, b: _Block, tx: Transmission) -> list[tuple]:
        """Run one transmission; returns the wait keys it may have released."""
        clock = self.clocks[b.index]
        woken = []
        event = len(self.ev_block)
        self.ev_block.append(b.index)
        self.ev_prev.append(b.last)
        b.last = event
        if tx.deps:
            deps = []
            for bid, step in tx.deps:
                target = self.by_id[(b.rank, bid)]
                flags = [f for f, _, _ in target.snapshots]
                _, snap, published = target.snapshots[bisect_left(flags, step)]
                np.maximum(clock, snap, out=clock)
                deps.append(published)
            self.ev_deps[event] = deps
        msgs = None
        if tx.cnt and tx.type in RECVS:
            key = (b.recv, b.rank, b.chan)
            sent_cnt, msgs, sent_event = self.fifos[key].popleft()
            woken.append(("room",) + key)
            if sent_cnt != _whole_cnt(tx):
                raise _Fail(
                    f"{self._who(b, tx)} receives cnt={_whole_cnt(tx)} but rank {b.recv} sent cnt={sent_cnt}"
                )
            self.ev_msg.append(sent_event)
        else:
            self.ev_msg.append(-1)
        clock[b.local] += 1
        w = (b, int(clock[b.local]), tx, event)
        if tx.cnt:
            outs = []
            for mem in self.live:
                try:
                    outs.append(mem.apply(b, tx, msgs[mem.mode] if msgs else None, w))
                except _ModeFail as exc:
                    self._failed(exc)
                    outs.append(None)
            if tx.type in SENDS:
                out = [None] * len(self.memories)
                for mem, value in zip(self.live, outs):
                    out[mem.mode] = value
                key = (b.rank, b.send, b.chan)
                self.fifos.setdefault(key, deque()).append((_whole_cnt(tx), out, event))
                woken.append(("msg",) + key)
            self.live = [m for m in self.live if m.mode not in self.failures]
        if tx.hasdep:
            b.flag = tx.flag
            b.snapshots.append((tx.flag, clock.copy(), event))
            woken.append(("flag", b.rank, b.id))
        return woken

    def _failed(self, exc: _ModeFail) -> None:
        """A mode failed: the first mode's failure ends the run (it is the one reported)."""
        self.failures[exc.mode] = exc
        if exc.mode == min(m.mode for m in self.live):
            raise exc

    def _check_finished(self) -> None:
        stuck = [b for b in self.blocks if b.pc < len(b.txs)]
        if stuck:
            cycle = self._wait_cycle(stuck)
            first = cycle + [b for b in stuck if b not in set(cycle)]
            parts = [self._stuck_reason(b) for b in first[:MAX_REPORTED]]
            more = (
                f" (+{len(stuck) - MAX_REPORTED} more threadblocks)"
                if len(stuck) > MAX_REPORTED
                else ""
            )
            raise _Fail(f"deadlock after {self.executed} steps: " + "; ".join(parts) + more)
        for (src, dst, chan), q in self.fifos.items():
            if q:
                raise _Fail(
                    f"rank {src} sent {len(q)} chunk(s) to rank {dst} on channel {chan} that were never received"
                )

    def _waits_for(self, b: _Block, senders: dict, receivers: dict) -> _Block | None:
        """The threadblock ``b`` is blocked on (None when it is not one threadblock)."""
        why = self._blocked_on(b)
        if why[0] == "flag":
            return self.by_id.get((b.rank, why[2]))
        if why[0] == "msg":
            return senders.get(why[1:])
        return receivers.get(why[1:])

    def _wait_cycle(self, stuck: list[_Block]) -> list[_Block]:
        """A cycle of threadblocks each waiting for the next, if there is one."""
        senders: dict[tuple, _Block] = {}
        receivers: dict[tuple, _Block] = {}
        for other in self.blocks:
            senders.setdefault((other.rank, other.send, other.chan), other)
            receivers.setdefault((other.recv, other.rank, other.chan), other)
        target = {b.index: self._waits_for(b, senders, receivers) for b in stuck}
        done: set[int] = set()
        for start in stuck:
            path: list[_Block] = []
            on_path: set[int] = set()
            b = start
            while (
                b is not None
                and b.index in target
                and b.index not in on_path
                and b.index not in done
            ):
                path.append(b)
                on_path.add(b.index)
                b = target[b.index]
            if b is not None and b.index in on_path:
                return path[path.index(b) :]
            done.update(on_path)
        return []

    def _stuck_reason(self, b: _Block) -> str:
        tx = b.txs[b.pc]
        why = self._blocked_on(b)
        if why[0] == "flag":
            step = next(s for bid, s in tx.deps if bid == why[2])
            have = "" if (b.rank, why[2]) in self.by_id else f", which rank {b.rank} does not have"
            reason = f"waits for tb {why[2]} step {step}{have}"
        elif why[0] == "msg":
            reason = f"waits for a message from rank {b.recv} on channel {b.chan}"
        else:
            reason = f"waits for rank {b.send} to receive on channel {b.chan}"
        piece = f" at piece {tx.piece + 1} of {tx.pieces}" if tx.pieces > 1 else ""
        return f"{_who(b, tx)}{piece} {reason}"


def _who(b: _Block, tx: Transmission) -> str:
    return f"rank {b.rank} tb {b.id} step {tx.first.s} ({tx.type})"


class _Memory:
    """The buffers of every rank in one mode (in-place: input and output share memory)."""

    def __init__(self, machine: _Machine, inplace: bool, mode: int, gpus):
        self.m, self.inplace, self.mode = machine, inplace, mode
        self.lay, self.n = machine.lay, machine.n
        self.sizes = [self._sizes(g) for g in gpus]
        self.mem: list[dict[str, dict[int, _Slot]]] = [{"i": {}, "o": {}, "s": {}} for _ in gpus]
        self.aliases = [{buf: self._alias(r, buf) for buf in BUFFERS} for r in range(len(gpus))]
        self._fill_inputs()

    def fail(self, message: str) -> _ModeFail:
        return _ModeFail(self.mode, message)

    # ------------------------------------------------------------------ buffers
    def _sizes(self, g) -> dict[str, int]:
        if self.lay is None:  # sizes known at run time only: trust the declaration
            return {"i": g.i_chunks, "o": g.o_chunks, "s": g.s_chunks}
        return {"i": self.lay.n_in, "o": self.lay.n_out, "s": g.s_chunks}

    def _alias(self, rank: int, buf: str) -> tuple[str, int]:
        """Where ``buf`` of ``rank`` lives: in place, input and output share memory."""
        if not self.inplace or buf == "s":
            return buf, 0
        shift = self.lay.inplace_shift if self.lay is not None else ""
        if shift == "" and buf == "i":
            return "o", 0
        if shift == "i" and buf == "i":
            return "o", rank * self.lay.block
        if shift == "o" and buf == "o":
            return "i", rank * self.lay.block
        return buf, 0

    def _fill_inputs(self) -> None:
        for r in range(self.n):
            target, add = self._alias(r, "i")
            for j in range(self.sizes[r]["i"]):
                self.mem[r][target][j + add] = _Slot(frozenset({(r, j)}), None)

    def _slots(self, b: _Block, tx: Transmission, buf: str, off: int) -> tuple[dict, int]:
        size = self.sizes[b.rank][buf]
        if off < 0 or off + tx.cnt > size:
            raise self.fail(
                f"{_who(b, tx)} uses {buf}[{off}..{off + tx.cnt - 1}], outside the {size} chunks "
                f"of buffer {buf!r} in this collective"
            )
        target, add = self.aliases[b.rank].get(buf) or self._alias(b.rank, buf)
        return self.mem[b.rank][target], add

    def _read(self, b: _Block, tx: Transmission, buf: str, off: int, event) -> list:
        arr, add = self._slots(b, tx, buf, off)
        out = []
        for j in range(off, off + tx.cnt):
            slot = arr.get(j + add)
            if slot is None:
                raise self.fail(f"{_who(b, tx)} reads {buf}[{j}] before anything was written there")
            w = slot.writer
            if w is not None and w[0] is not b and not self.m._ordered(b, w):
                raise self.fail(
                    f"{_who(b, tx)} reads {buf}[{j}] written by {_who(w[0], w[2])} with no dependency or "
                    "message ordering the two (a race: add a dependency)"
                )
            slot.readers.append(event)
            out.append(slot.value)
        return out

    def _write(self, b: _Block, tx: Transmission, buf: str, off: int, values: list, event) -> None:
        arr, add = self._slots(b, tx, buf, off)
        for j, value in enumerate(values):
            slot = arr.get(off + j + add)
            if slot is not None:
                self._check_overwrite(b, tx, slot, f"{buf}[{off + j}]")
            arr[off + j + add] = _Slot(value, event)

    def _check_overwrite(self, b, tx, slot: _Slot, what: str) -> None:
        w = slot.writer
        if w is not None and w[0] is not b and not self.m._ordered(b, w):
            raise self.fail(
                f"{_who(b, tx)} overwrites {what} written by {_who(w[0], w[2])} without "
                "ordering (a race)"
            )
        for other in slot.readers:
            if other[0] is not b and not self.m._ordered(b, other):
                raise self.fail(
                    f"{_who(b, tx)} overwrites {what} while {_who(other[0], other[2])} may "
                    "still read it (a race)"
                )

    def _reduce(self, b, tx, a: list, c: list) -> list:
        out = []
        for x, y in zip(a, c):
            both = x & y
            if both:
                q, j = min(both)
                raise self.fail(f"{_who(b, tx)} adds the contribution of rank {q} chunk {j} twice")
            out.append(x | y)
        return out

    def apply(self, b: _Block, tx: Transmission, msg, event):
        """The data movement of ``tx``; returns what it sends (or None)."""
        t = tx.type
        src = lambda: self._read(b, tx, tx.srcbuf, tx.srcoff, event)  # noqa: E731
        if t == "s":
            return src()
        if t in ("r", "rcs"):
            self._write(b, tx, tx.dstbuf, tx.dstoff, msg, event)
            return msg if t == "rcs" else None
        if t in ("rrs", "rrc", "rrcs"):
            total = self._reduce(b, tx, src(), msg)
            if t != "rrs":
                self._write(b, tx, tx.dstbuf, tx.dstoff, total, event)
            return total if t != "rrc" else None
        if t == "cpy":
            self._copy(b, tx, src(), event)
            return None
        # re (and legacy ra): dst += every fused source
        total = self._read(b, tx, tx.dstbuf, tx.dstoff, event)
        for off in tx.reductions or [tx.srcoff]:
            total = self._reduce(b, tx, total, self._read(b, tx, tx.srcbuf, off, event))
        self._write(b, tx, tx.dstbuf, tx.dstoff, total, event)
        return None

    def _copy(self, b: _Block, tx: Transmission, values: list, event) -> None:
        # in place, a copy of a range onto itself moves nothing
        src, dst = self._alias(b.rank, tx.srcbuf), self._alias(b.rank, tx.dstbuf)
        if src[0] == dst[0] and src[1] + tx.srcoff == dst[1] + tx.dstoff:
            return
        self._write(b, tx, tx.dstbuf, tx.dstoff, values, event)

    # ------------------------------------------------------------------ result
    def verify(self, collective: str, C: int) -> None:
        want, rooted = colls.postcondition(collective, self.n, C)
        root = self._find_root(collective, want) if rooted else 0
        problems = []
        for r in range(self.n):
            for j in range(self.lay.n_out):
                need = want(r, j, root)
                if need is None:
                    continue
                slot = self._output_slot(r, j)
                got = None if slot is None else slot.value
                if got != need:
                    problems.append(
                        f"rank {r} output chunk {j} holds {colls.show(got)}, {collective} "
                        f"needs {colls.show(need)} ({self._provenance(slot)})"
                    )
                    if len(problems) >= 2:
                        raise self.fail("wrong result: " + "; ".join(problems))
        if problems:
            raise self.fail("wrong result: " + "; ".join(problems))

    def _output_slot(self, r: int, j: int) -> _Slot | None:
        target, add = self._alias(r, "o")
        return self.mem[r][target].get(j + add)

    def _output(self, r: int, j: int):
        slot = self._output_slot(r, j)
        return None if slot is None else slot.value

    @staticmethod
    def _provenance(slot: _Slot | None) -> str:
        if slot is None:
            return "no step writes it"
        if slot.writer is None:
            return "no step writes it; it still holds the input"
        return f"last written by {_who(slot.writer[0], slot.writer[2])}"

    def _find_root(self, collective: str, want) -> int:
        for root in range(self.n):
            probe = colls.probe_rank(collective, root)
            if self._output(probe, 0) == want(probe, 0, root):
                return root
        return 0
