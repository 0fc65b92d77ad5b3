"""Execute an MSCCL++ execution plan symbolically and check that it implements its collective.

Every rank's threadblocks run their ops in order (:mod:`solver.mscclpp.plan` has the reader's
rules, applied first). The model is that of the pinned executor (mscclpp v0.10.0,
``src/core/include/execution_kernel.hpp``, ``src/core/executor/executor.cc``):

- Channels. A rank's ``channels`` are flattened per type in file order; the executor connects
  the i-th channel of rank r towards peer p with the i-th of p towards r, counting memory channels
  first, then port channels (per-peer tags, executor.cc:268-294). A ``signal`` on one side adds one
  to the other side's semaphore, a ``wait`` takes one (blocking until there is one). A signal
  whose partner is missing, or of another type, is refused. A threadblock's op ``channel_ids``
  index its own ``channels`` list (execution_plan.cc:394-410), ``buffer_id`` its
  ``remote_buffer_refs`` of the op's channel type (:423-443), which name the gpu's
  ``remote_buffers`` (owner rank and buffer; the access type must be listed, :354-358).
- Data and ordering. Buffers are symbolic: an input chunk is (rank, chunk); a reduction is the
  multiset of what it adds; output and scratch start undefined. Happens-before is tracked with
  vector clocks: program order in a threadblock, a ``signal`` (or the signal of ``pws``/``pwsf``)
  before the ``wait`` that takes it, a ``sem_release`` before its ``sem_acquire``. Relaxed
  ``rlxsignal``/``rlxwait`` order no data. A read of data written by another threadblock that is
  not ordered after the write, or a write not ordered after the previous reads and writes of the
  cell, is a race.
- Threads. ``wait``/``signal`` run on the first threads only, data ops on all threads, port puts
  on one thread per channel (execution_kernel.hpp:82-127, 147-187, 509-519), with no barrier
  between ops: a data op or a port put right after a wait, or a signal, port put or
  ``sem_release`` right after a data op, needs a ``nop`` (``__syncthreads``) between them.
- Calls. A plan runs once per collective call: a put into a peer's buffer must come after a
  signal from that peer in this call (else it can overwrite what the peer's previous call still
  reads), every signal and semaphore release must be taken by the end (else the next call's wait
  returns early), a port put must be flushed (``pwsf``) before its threadblock ends (else the
  kernel ends before the proxy has read the source), and everything written into a rank must be
  ordered before that rank's kernel ends.

A deadlock names the threadblocks that wait; a wrong result names the op that wrote the chunk.
Ops outside this model (packets, switch channels, pipelines, barriers, tbg_info) are refused with
a message saying so.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from dataclasses import dataclass, field

from solver.mscclpp.plan import (
    EXECUTOR,
    KERNEL,
    PLAN,
    MscclppError,
    cite,
    parse_plan,
    plan_stats,
    validate,
)

SIGNALS = {"signal": False, "rlxsignal": True}
WAITS = {"wait": False, "rlxwait": True}
DATA_OPS = ("copy", "re", "res", "rre", "rres", "get", "put", "pws", "pwsf")
MAX_FILE_BYTES = 64 * 2**20  # check-plan reads at most this much
MAX_CELLS = 2**24  # chunks over all ranks' buffers the symbolic execution holds
MAX_SEMAPHORE = 2**16  # a semaphore's initial value it models
SUPPORTED = (
    tuple(SIGNALS) + tuple(WAITS) + DATA_OPS + ("nop", "sem_acquire", "sem_release", "flush")
)


@dataclass
class PlanReport:
    """What a check found: sizes and time, for the CLI's one-line summary."""

    name: str
    collective: str
    ranks: int
    stats: dict
    ops_executed: int
    seconds: float
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        s = self.stats
        return (
            f"MSCCL++ plan {self.name!r}: {self.collective} on {self.ranks} ranks, "
            f"{s['max_threadblocks']} threadblocks per rank (at most {s['max_ops']} ops each), "
            f"{self.ops_executed} ops executed, result checked ({self.seconds:.2f} s)"
        )


@dataclass
class _Cell:
    value: tuple | None
    writer: tuple | None = None  # (tb global id, step, rank, tb, op index)
    readers: list = field(default_factory=list)  # (tb global id, step)


class _Tb:
    __slots__ = (
        "gid",
        "rank",
        "tid",
        "ops",
        "pc",
        "clock",
        "started",
        "after_wait",
        "after_write",
        "unflushed",
        "chans",
        "bufs",
    )

    def __init__(self, gid, rank, tid, ops, chans, bufs):
        self.gid, self.rank, self.tid, self.ops = gid, rank, tid, ops
        self.pc = 0
        self.clock: dict[int, int] = {gid: 0}
        self.started = {rank}
        self.after_wait = self.after_write = False
        self.unflushed: set[int] = set()
        self.chans, self.bufs = chans, bufs

    def where(self) -> str:
        op = self.ops[self.pc] if self.pc < len(self.ops) else None
        return f"rank {self.rank} tb {self.tid} op {self.pc}" + (
            f" ({op.get('name')})" if op else ""
        )


def check_plan_text(text: str, where: str = "<plan>", resident: int | None = None) -> PlanReport:
    return check_plan(parse_plan(text, where, resident), where, resident)


def check_plan_file(path, resident: int | None = None) -> PlanReport:
    from solver.io.files import read_text

    text = read_text(path, MAX_FILE_BYTES, "an MSCCL++ plan", MscclppError)
    return check_plan_text(text, str(path), resident)


def check_plan(doc: dict, where: str = "<plan>", resident: int | None = None) -> PlanReport:
    """Validate ``doc`` and execute it; raises :class:`MscclppError` naming the first problem.
    ``resident``: threadblocks per rank that can run at once (the GPU's SMs/CUs)."""
    t0 = time.perf_counter()
    validate(doc, where, resident)
    run = _Run(doc, where)
    executed = run.execute()
    run.check_result()
    return PlanReport(
        doc["name"],
        doc["collective"],
        len(doc["gpus"]),
        plan_stats(doc),
        executed,
        time.perf_counter() - t0,
        run.notes,
    )


class _Run:
    def __init__(self, doc: dict, where: str) -> None:
        self.doc, self.where = doc, where
        self.notes: list[str] = []
        gpus = doc["gpus"]
        self.n = n = len(gpus)
        self.coll = doc["collective"]
        self.inplace = doc["inplace"]
        if self.coll not in ("allgather", "reducescatter", "allreduce"):
            raise MscclppError(
                f"{where}: collective {self.coll!r}: this checker verifies allgather, "
                "reducescatter and allreduce"
            )
        if doc.get("reuse_resources", False):
            raise MscclppError(
                f"{where}: reuse_resources (scratch offsets wrap modulo a shared buffer, "
                f"{cite(KERNEL)}:59-67) is not executed by this checker"
            )
        ic = {g["input_chunks"] for g in gpus}
        oc = {g["output_chunks"] for g in gpus}
        if len(ic) != 1 or len(oc) != 1:
            raise MscclppError(f"{where}: ranks declare different input/output chunk counts")
        self.ic, self.oc = ic.pop(), oc.pop()
        want = {
            "allgather": (self.ic * n, self.oc),
            "reducescatter": (self.oc * n, self.ic),
            "allreduce": (self.ic, self.oc),
        }[self.coll]
        if want[0] != want[1]:
            raise MscclppError(
                f"{where}: {self.coll} with {self.ic} input and {self.oc} output chunks "
                f"per rank on {n} ranks: the buffers do not fit the collective"
            )
        cells = sum(g["input_chunks"] + g["output_chunks"] + g["scratch_chunks"] for g in gpus)
        if cells > MAX_CELLS:
            raise MscclppError(
                f"{where}: {cells} chunks over all buffers, more than the symbolic execution "
                f"holds ({MAX_CELLS})"
            )
        for r, g in enumerate(gpus):
            for s in g.get("semaphores", []):
                if not 0 <= s["init_value"] <= MAX_SEMAPHORE:
                    raise MscclppError(
                        f"{where}: rank {r} semaphore init_value {s['init_value']} (this checker "
                        f"models 0..{MAX_SEMAPHORE})"
                    )
        self._channels(gpus)
        self.tbs: list[_Tb] = []
        for r, g in enumerate(gpus):
            for t, tb in enumerate(g["threadblocks"]):
                chans = {"memory": [], "port": []}
                for ch in tb["channels"]:
                    if ch["channel_type"] not in chans:
                        raise MscclppError(
                            f"{where}: rank {r} tb {t}: {ch['channel_type']} channels are "
                            "not executed by this checker"
                        )
                    chans[ch["channel_type"]].extend(ch["channel_ids"])
                bufs = {"memory": [], "port": []}
                for ref in tb.get("remote_buffer_refs", []):
                    if ref["access_channel_type"] in bufs:
                        bufs[ref["access_channel_type"]].extend(ref["remote_buffer_ids"])
                self.tbs.append(_Tb(len(self.tbs), r, t, tb["ops"], chans, bufs))
        self.sizes = [
            {"i": g["input_chunks"], "o": g["output_chunks"], "s": g["scratch_chunks"]}
            for g in gpus
        ]
        self.cells: dict[tuple, _Cell] = {}
        for r in range(n):
            for j in range(self.ic):
                glob = r * self.ic + j if self.coll == "allgather" else j
                self.cells[self._key(r, "i", j)] = _Cell(((r, glob),))
        self.sem = [
            [deque([None] * max(0, s["init_value"])) for s in g.get("semaphores", [])] for g in gpus
        ]
        self.sem_init = [[s["init_value"] for s in g.get("semaphores", [])] for g in gpus]

    # ------------------------------------------------------------------ setup
    def _channels(self, gpus) -> None:
        """Flat channels per (rank, type) and the partner of each (executor.cc:268-294)."""
        self.flat: dict[tuple[int, str], list[int]] = {}
        tagged: dict[tuple[int, int, int], tuple[str, int]] = {}
        for r, g in enumerate(gpus):
            counters: dict[int, int] = defaultdict(int)
            for ctype in ("memory", "port"):
                peers = [
                    p
                    for ch in g["channels"]
                    if ch["channel_type"] == ctype
                    for p in ch["connected_to"]
                ]
                self.flat[(r, ctype)] = peers
                for i, p in enumerate(peers):
                    tagged[(r, p, counters[p])] = (ctype, i)
                    counters[p] += 1
        self.partner: dict[tuple[int, str, int], tuple[int, int]] = {}
        for (r, p, tag), (ctype, i) in tagged.items():
            other = tagged.get((p, r, tag))
            if other is None:
                raise MscclppError(
                    f"{self.where}: rank {r}'s {ctype} channel {i} to rank {p} has no counterpart on rank "
                    f"{p} (connection {tag} between them; {cite(EXECUTOR)}:268-294 pairs the i-th channel "
                    "of each side, memory channels first)"
                )
            if other[0] != ctype:
                raise MscclppError(
                    f"{self.where}: rank {r}'s {ctype} channel {i} to rank {p} is paired with rank {p}'s "
                    f"{other[0]} channel {other[1]} (connection {tag}; {cite(EXECUTOR)}:268-294)"
                )
            self.partner[(r, ctype, i)] = (p, other[1])
        self.inbox: dict[tuple[int, str, int], deque] = defaultdict(deque)

    def _key(self, rank: int, btype: str, index: int) -> tuple:
        """The cell a (rank, buffer, chunk) names: in-place plans alias input and output."""
        if self.inplace:
            if self.coll == "allreduce" and btype == "i":
                return (rank, "o", index)
            if self.coll == "allgather" and btype == "i":
                return (rank, "o", rank * self.ic + index)
            if self.coll == "reducescatter" and btype == "o":
                return (rank, "i", rank * self.oc + index)
        return (rank, btype, index)

    # ------------------------------------------------------------------ execution
    def execute(self) -> int:
        executed = 0
        active = deque(self.tbs)
        stalled = 0
        while active:
            tb = active.popleft()
            progressed = False
            while tb.pc < len(tb.ops):
                if not self._step(tb):
                    break
                tb.pc += 1
                tb.clock[tb.gid] = tb.pc
                executed += 1
                progressed = True
            if tb.pc < len(tb.ops):
                active.append(tb)
                stalled = 0 if progressed else stalled + 1
                if stalled > len(active):
                    self._deadlock(active)
            else:
                stalled = 0
                if tb.unflushed:
                    raise MscclppError(
                        f"{self.where}: rank {tb.rank} tb {tb.tid} ends with a port put not flushed: the "
                        "kernel can end before the proxy has read the source (use pwsf, as MSCCL++'s own "
                        "plans do; a flush op flushes only as many channels as it has dst_buff entries, "
                        f"{cite(KERNEL)}:120-127)"
                    )
        for (r, ctype, i), box in self.inbox.items():
            if box:
                raise MscclppError(
                    f"{self.where}: rank {r}'s {ctype} channel {i} ends with {len(box)} signal(s) nobody "
                    "waited for: the next call's wait on it returns before its data is there"
                )
        for r, sems in enumerate(self.sem):
            for s, q in enumerate(sems):
                if len(q) != max(0, self.sem_init[r][s]):
                    raise MscclppError(
                        f"{self.where}: rank {r} semaphore {s} ends at {len(q)}, not its initial value "
                        f"{self.sem_init[r][s]}: the next call starts with it out of step"
                    )
        return executed

    def _deadlock(self, active) -> None:
        parts = [tb.where() for tb in list(active)[:4]]
        more = f" and {len(active) - 4} more" if len(active) > 4 else ""
        raise MscclppError(
            f"{self.where}: deadlock: {'; '.join(parts)}{more} wait for signals that never come"
        )

    def _fail(self, tb: _Tb, message: str) -> None:
        raise MscclppError(f"{self.where}: {tb.where()}: {message}")

    def _chan(self, tb: _Tb, op: dict, k: int) -> int:
        ctype = op.get("channel_type")
        ids = tb.chans.get(ctype, [])
        cid = op["channel_ids"][k]
        if cid >= len(ids):
            self._fail(
                tb,
                f"channel id {cid} but the threadblock has {len(ids)} {ctype} channel(s) "
                f"({cite(PLAN)}:394-410)",
            )
        return ids[cid]

    def _step(self, tb: _Tb) -> bool:
        op = tb.ops[tb.pc]
        name = op["name"]
        if name not in SUPPORTED:
            self._fail(
                tb,
                f"operation {name!r} is not executed by this checker (it runs simple-protocol "
                "memory/port channel plans)",
            )
        if "tbg_info" in op:
            self._fail(
                tb, "tbg_info (a chunk split across threadblocks) is not executed by this checker"
            )
        if name == "nop":
            tb.after_wait = tb.after_write = False
            return True
        if name in WAITS:
            return self._wait(tb, op, WAITS[name])
        if name in SIGNALS:
            if not SIGNALS[name] and tb.after_write:
                self._fail(
                    tb,
                    "signals right after a data op: the other threads may still be writing; put a "
                    f"nop before it ({cite(KERNEL)}:82-99)",
                )
            self._signal(tb, op, SIGNALS[name])
            return True
        if name == "sem_acquire":
            sems = self.sem[tb.rank]
            if any(not sems[s] for s in op["semaphore_ids"]):
                return False
            for s in op["semaphore_ids"]:
                token = sems[s].popleft()
                if token is not None:
                    self._merge(tb, token[0])
                    tb.started |= token[1]
            tb.after_wait = True
            return True
        if name == "sem_release":
            if tb.after_write:
                self._fail(
                    tb,
                    f"sem_release right after a data op needs a nop before it ({cite(KERNEL)}:664-670)",
                )
            for s in op["semaphore_ids"]:
                self.sem[tb.rank][s].append((dict(tb.clock), set(tb.started)))
            return True
        if name == "flush":
            ids = op.get("channel_ids", [])[: len(op.get("dst_buff", []))]
            for k in range(len(ids)):
                tb.unflushed.discard(self._chan(tb, op, k))
            return True
        self._data(tb, op)
        return True

    def _merge(self, tb: _Tb, clock: dict[int, int]) -> None:
        mine = tb.clock
        for g, s in clock.items():
            if mine.get(g, -1) < s:
                mine[g] = s

    def _signal(self, tb: _Tb, op: dict, relaxed: bool, clock: dict | None = None) -> None:
        ctype = op.get("channel_type")
        if ctype not in ("memory", "port"):
            self._fail(tb, f"signal on channel type {ctype!r}")
        snap = None if relaxed else (clock if clock is not None else dict(tb.clock))
        for k in range(len(op.get("channel_ids", []))):
            flat = self._chan(tb, op, k)
            p, pi = self.partner[(tb.rank, ctype, flat)]
            self.inbox[(p, ctype, pi)].append((snap, set(tb.started)))

    def _wait(self, tb: _Tb, op: dict, relaxed: bool) -> bool:
        ctype = op.get("channel_type")
        if ctype not in ("memory", "port"):
            self._fail(tb, f"wait on channel type {ctype!r}")
        flats = [self._chan(tb, op, k) for k in range(len(op.get("channel_ids", [])))]
        if any(not self.inbox[(tb.rank, ctype, f)] for f in flats):
            return False
        for f in flats:
            snap, started = self.inbox[(tb.rank, ctype, f)].popleft()
            tb.started |= started
            if snap is not None and not relaxed:
                self._merge(tb, snap)
        tb.after_wait = True
        return True

    # ------------------------------------------------------------------ data
    def _remote(self, tb: _Tb, op: dict, buff: dict) -> tuple[int, str]:
        ctype = op.get("channel_type")
        refs = tb.bufs.get(ctype)
        if refs is None:
            self._fail(tb, f"a remote buffer through channel type {ctype!r}")
        if buff["buffer_id"] >= len(refs):
            self._fail(
                tb,
                f"buffer_id {buff['buffer_id']} but the threadblock refers to {len(refs)} "
                f"{ctype} remote buffer(s) ({cite(PLAN)}:423-443)",
            )
        rb = self.doc["gpus"][tb.rank]["remote_buffers"][refs[buff["buffer_id"]]]
        if ctype not in rb["access_channel_types"]:
            self._fail(
                tb,
                f"remote buffer {refs[buff['buffer_id']]} is not accessible through {ctype} "
                f"channels (access_channel_types {rb['access_channel_types']}, {cite(PLAN)}:354-358)",
            )
        if rb["rank"] == tb.rank:
            self._fail(tb, "a remote buffer of the rank itself")
        return rb["rank"], rb["type"]

    def _span(self, tb: _Tb, op: dict, buff: dict) -> tuple[int, str, int, int]:
        if "type" in buff and "buffer_id" not in buff:
            rank, btype = tb.rank, buff["type"]
        elif "buffer_id" in buff:
            rank, btype = self._remote(tb, op, buff)
        else:
            self._fail(tb, "switch-channel buffers are not executed by this checker")
        size = self.sizes[rank][btype]
        if buff["index"] + buff["size"] > size:
            self._fail(
                tb,
                f"chunks {buff['index']}..{buff['index'] + buff['size'] - 1} of rank {rank}'s "
                f"{btype} buffer, which has {size}",
            )
        return rank, btype, buff["index"], buff["size"]

    def _read(self, tb: _Tb, span) -> list:
        rank, btype, index, size = span
        out = []
        for j in range(index, index + size):
            key = self._key(rank, btype, j)
            cell = self.cells.get(key)
            if cell is None or cell.value is None:
                self._fail(
                    tb, f"reads chunk {j} of rank {rank}'s {btype} buffer before anything wrote it"
                )
            w = cell.writer
            if w is not None and w[0] != tb.gid and tb.clock.get(w[0], -1) < w[1]:
                self._fail(
                    tb,
                    f"reads chunk {j} of rank {rank}'s {btype} buffer, written by rank {w[2]} tb "
                    f"{w[3]} op {w[4]}, without waiting for that write's signal (a race)",
                )
            cell.readers.append((tb.gid, tb.pc))
            out.append(cell.value)
        return out

    def _write(self, tb: _Tb, span, values: list, remote: bool) -> None:
        rank, btype, index, size = span
        if remote and rank not in tb.started:
            self._fail(
                tb,
                f"writes into rank {rank}'s {btype} buffer before any signal from rank {rank} in this "
                "call: it can overwrite what rank's previous call still reads (signal 'ready' first, as "
                "MSCCL++'s own plans do)",
            )
        for j, value in zip(range(index, index + size), values):
            key = self._key(rank, btype, j)
            cell = self.cells.get(key)
            if cell is None:
                cell = self.cells[key] = _Cell(None)
            for g, s in ([cell.writer[:2]] if cell.writer else []) + cell.readers:
                if g != tb.gid and tb.clock.get(g, -1) < s:
                    self._fail(
                        tb,
                        f"writes chunk {j} of rank {rank}'s {btype} buffer while another threadblock "
                        "may still read or write it (a race)",
                    )
            cell.value = value
            cell.writer = (tb.gid, tb.pc + 1, tb.rank, tb.tid, tb.pc)
            cell.readers = []

    def _data(self, tb: _Tb, op: dict) -> None:
        name = op["name"]
        ctype = op.get("channel_type", "none")
        port = ctype == "port" and name in ("put", "pws", "pwsf")
        if tb.after_wait:
            self._fail(
                tb,
                f"{name} right after a wait: only the waiting threads have seen the signal; put a "
                f"nop between them ({cite(KERNEL)}:101-118)",
            )
        if port and tb.after_write:
            self._fail(
                tb,
                f"{name} on a port channel right after a data op: one thread hands the source to the "
                f"proxy while the others may still write it; put a nop before it ({cite(KERNEL)}:147-187)",
            )
        srcs = [self._span(tb, op, b) for b in op.get("src_buff", [])]
        dsts = [self._span(tb, op, b) for b in op.get("dst_buff", [])]
        if not srcs or not dsts:
            self._fail(tb, f"{name} needs src_buff and dst_buff")
        remote_src = [s[0] != tb.rank for s in srcs]
        remote_dst = [d[0] != tb.rank for d in dsts]
        if name in ("put", "pws", "pwsf", "copy", "get"):
            if len(srcs) != len(dsts):
                self._fail(tb, f"{name} with {len(srcs)} src_buff and {len(dsts)} dst_buff entries")
            want_remote = (False, name != "copy" and name != "get")
            if name == "get":
                want_remote = (True, False)
            for s, d, rs, rd in zip(srcs, dsts, remote_src, remote_dst):
                if (rs, rd) != want_remote or s[3] != d[3]:
                    self._fail(
                        tb,
                        f"{name} from {'remote' if rs else 'local'} to {'remote' if rd else 'local'} "
                        f"buffers of {s[3]} and {d[3]} chunks",
                    )
            if port:
                ids = op.get("channel_ids", [])
                if len(ids) != len(dsts):
                    self._fail(
                        tb,
                        f"{name} on port channels needs one channel id per dst_buff entry "
                        f"({cite(KERNEL)}:168-186)",
                    )
                for k, d in enumerate(dsts):
                    flat = self._chan(tb, op, k)
                    peer = self.flat[(tb.rank, "port")][flat]
                    if peer != d[0]:
                        self._fail(
                            tb,
                            f"puts into rank {d[0]}'s buffer through a port channel to rank {peer}",
                        )
            elif name in ("pws", "pwsf"):
                self._fail(
                    tb,
                    f"{name} on a {ctype} channel: put with signal is a port-channel op "
                    f"({cite(KERNEL)}:147-187)",
                )
            values = [self._read(tb, s) for s in srcs]
            for d, v, rd in zip(dsts, values, remote_dst):
                self._write(tb, d, v, rd)
            if port:
                for k in range(len(dsts)):
                    flat = self._chan(tb, op, k)
                    if name == "pwsf":
                        tb.unflushed.discard(flat)
                    else:
                        tb.unflushed.add(flat)
                if name in ("pws", "pwsf"):
                    after = dict(tb.clock)
                    after[tb.gid] = tb.pc + 1
                    self._signal(tb, op, False, after)
            else:
                tb.after_write = True
            return
        # reductions: re (local), res (+ remote dst), rre (+ remote src), rres (both)
        sizes = {s[3] for s in srcs} | {d[3] for d in dsts}
        if len(sizes) != 1:
            self._fail(tb, f"{name} over buffers of different sizes {sorted(sizes)}")
        if remote_src[0] or remote_dst[0]:
            self._fail(
                tb,
                f"{name}: the first src_buff and dst_buff entries are local ({cite(KERNEL)}:444-460)",
            )
        if any(remote_src[1:]) != (name in ("rre", "rres")) or not all(
            r == remote_src[1] for r in remote_src[1:]
        ):
            self._fail(tb, f"{name}: remote sources only in rre/rres, local ones only in re/res")
        if any(remote_dst[1:]) != (name in ("res", "rres")) or any(not r for r in remote_dst[1:]):
            self._fail(tb, f"{name}: extra dst_buff entries are remote, and only in res/rres")
        if (name in ("rre", "rres", "res")) and ctype != "memory":
            self._fail(tb, f"{name} reads or writes peers' memory directly: a memory-channel op")
        parts = [self._read(tb, s) for s in srcs]
        total = [tuple(sorted(sum((p[j] for p in parts), ()))) for j in range(srcs[0][3])]
        for d, rd in zip(dsts, remote_dst):
            self._write(tb, d, total, rd)
        tb.after_write = True

    # ------------------------------------------------------------------ result
    def check_result(self) -> None:
        n, ends = self.n, [dict() for _ in range(self.n)]
        for tb in self.tbs:
            for g, s in tb.clock.items():
                if ends[tb.rank].get(g, -1) < s:
                    ends[tb.rank][g] = s
        for r in range(n):
            for j in range(self.oc):
                if self.coll == "allgather":
                    want = ((j // self.ic, j),)
                elif self.coll == "reducescatter":
                    want = tuple((s, r * self.oc + j) for s in range(n))
                else:
                    want = tuple((s, j) for s in range(n))
                cell = self.cells.get(self._key(r, "o", j))
                got = None if cell is None else cell.value
                if got != want:
                    by = (
                        f", last written by rank {cell.writer[2]} tb {cell.writer[3]} op {cell.writer[4]}"
                        if cell and cell.writer
                        else ""
                    )
                    raise MscclppError(
                        f"{self.where}: rank {r} output chunk {j} ends as {_show(got)}, not {_show(want)}"
                        f"{_diff(got, want)}{by}"
                    )
                w = cell.writer
                if w is not None and w[2] != r and ends[r].get(w[0], -1) < w[1]:
                    raise MscclppError(
                        f"{self.where}: rank {r} output chunk {j} is written by rank {w[2]} tb {w[3]} op {w[4]}, "
                        f"which rank {r} never waits for: its kernel can end before the data is there"
                    )


def _show(value) -> str:
    if value is None:
        return "undefined"
    if len(value) <= 3:
        return "+".join(f"r{r}[{c}]" for r, c in value)
    return f"a sum of {len(value)} chunks"


def _diff(got, want) -> str:
    """What a wrong sum has too much and too little of (first three of each)."""
    if not got or not want or len(want) < 2:
        return ""
    from collections import Counter

    g, w = Counter(got), Counter(want)
    extra = [f"r{r}[{c}] x{g[(r, c)]}" for r, c in sorted(g - w)][:3]
    missing = [f"r{r}[{c}]" for r, c in sorted(w - g)][:3]
    parts = ([f"extra {', '.join(extra)}"] if extra else []) + (
        [f"missing {', '.join(missing)}"] if missing else []
    )
    return f" ({'; '.join(parts)})" if parts else ""
