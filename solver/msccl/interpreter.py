"""Execute an MSCCL XML program on symbolic buffers and check it implements its collective.

Model (what the runtimes do, made symbolic):

- every chunk slot holds the *set of contributions* it carries: input chunk ``j`` of rank ``r``
  is ``{(r, j)}``; a reduction is the union of two disjoint sets (overlap = double counting,
  an error); an unwritten slot is ``None`` and reading it is an error;
- each threadblock runs its steps in order; a step waits for its dependency
  (``depid``/``deps``: that threadblock has completed a step with ``hasdep=1`` and ``s >= deps``,
  like the runtime's flags), a receive waits for a message, a send waits for room in the
  connection; nops carry extra dependencies;
- messages are FIFO per (sender, receiver, channel); a connection holds ``fifo_capacity``
  messages (default 1: stricter than the runtime's buffers, so a pass here is a pass there);
- step semantics: s send src; r dst = msg; rcs dst = msg and forward; rrs send src + msg;
  rrc dst = src + msg; rrcs dst = src + msg and forward; cpy dst = src; re dst = dst + src;
- races: vector clocks order the steps (program order, dependencies, messages); a step that reads
  a chunk whose last write is not ordered before it, or overwrites a chunk another threadblock may
  still read, is an error (the runtime gives no ordering there), whatever the interleaving;
- connections: every threadblock sending to a peer on a channel needs the peer's threadblock
  receiving on it (checked with the parser rules);
- in-place runs alias the input into the output (allgather: input = output block of the rank;
  reduce-scatter: output = input block of the rank; allreduce: input = output); the program is run
  once per mode it declares (``inplace`` / ``outofplace``).

Final check: allgather -> output chunk ``q*C + j`` of every rank is ``{(q, j)}``;
reduce-scatter -> output chunk ``j`` of rank ``r`` is ``{(q, r*C + j) for all q}``;
allreduce -> output chunk ``g`` of every rank is ``{(q, g) for all q}``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.msccl.program import Program, check_rules, parse_xml
from solver.msccl.runtimes import RECVS, SENDS, MscclError, runtime

MAX_REPORTED = 4


@dataclass
class CheckReport:
    collective: str
    ngpus: int
    nchannels: int
    threadblocks: int  # max per rank
    max_steps: int  # max per threadblock
    steps_executed: int
    modes: tuple[str, ...]
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"ok: {self.collective} on {self.ngpus} ranks ({'/'.join(self.modes)}): "
            f"{self.nchannels} channel(s), up to {self.threadblocks} threadblocks per rank and "
            f"{self.max_steps} steps per threadblock; {self.steps_executed} steps executed; "
            f"result verified"
        )


class _Fail(Exception):
    pass


def check_file(
    path: str | Path, runtime_name: str = "msccl-executor", fifo_capacity: int = 1
) -> CheckReport:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MscclError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MscclError(f"{p}: cannot read: {exc}") from None
    return check_xml(text, runtime_name, fifo_capacity, where=str(p))


def check_xml(
    text: str, runtime_name: str = "msccl-executor", fifo_capacity: int = 1, where: str = "<xml>"
) -> CheckReport:
    """Parse, check the parser rules of ``runtime_name``, execute and verify. Raises MscclError."""
    program = parse_xml(text, where)
    return check_program(program, runtime_name, fifo_capacity, where)


def check_program(
    program: Program,
    runtime_name: str = "msccl-executor",
    fifo_capacity: int = 1,
    where: str = "<xml>",
) -> CheckReport:
    rt = runtime(runtime_name)
    errors = check_rules(program, rt)
    if errors:
        more = f" (+{len(errors) - MAX_REPORTED} more)" if len(errors) > MAX_REPORTED else ""
        raise MscclError(
            f"{where}: breaks {rt.name} rules: " + "; ".join(errors[:MAX_REPORTED]) + more
        )
    collective = rt.collective_of(program.coll)
    n = program.ngpus
    if program.nchunksperloop % n and collective != "allreduce":
        raise MscclError(
            f"{where}: nchunksperloop {program.nchunksperloop} is not a multiple of ngpus {n}"
        )
    modes = tuple(
        m for m, on in (("out-of-place", program.outofplace), ("in-place", program.inplace)) if on
    )
    executed = 0
    for mode in modes:
        try:
            executed = _run(program, collective, mode == "in-place", fifo_capacity)
        except _Fail as exc:
            raise MscclError(f"{where}: {mode}: {exc}") from None
    return CheckReport(
        collective=collective,
        ngpus=n,
        nchannels=program.nchannels,
        threadblocks=program.num_threadblocks(),
        max_steps=program.max_steps(),
        steps_executed=executed,
        modes=modes,
    )


# ----------------------------------------------------------------------------- execution
def _expected_sizes(p: Program, collective: str) -> tuple[int, int, int]:
    """(input chunks, output chunks, chunks per rank block) the collective needs."""
    n, total = p.ngpus, p.nchunksperloop
    if collective == "allgather":
        return total // n, total, total // n
    if collective == "reduce-scatter":
        return total, total // n, total // n
    return total, total, total // n if total % n == 0 else 0


def _run(p: Program, collective: str, inplace: bool, capacity: int) -> int:
    n = p.ngpus
    n_in, n_out, block = _expected_sizes(p, collective)
    gpus = sorted(p.gpus, key=lambda g: g.id)
    for g in gpus:
        if g.o_chunks < n_out or (not inplace and g.i_chunks < n_in):
            raise _Fail(
                f"gpu {g.id}: {collective} with nchunksperloop={p.nchunksperloop} needs i_chunks >= {n_in} "
                f"and o_chunks >= {n_out}, got {g.i_chunks} and {g.o_chunks}"
            )

    # in-place runs alias one buffer into another: (rank, buffer) -> (buffer, offset added)
    def alias(rank: int, buf: str) -> tuple[str, int]:
        if inplace:
            if collective == "allgather" and buf == "i":
                return "o", rank * block
            if collective == "reduce-scatter" and buf == "o":
                return "i", rank * block
            if collective == "allreduce" and buf == "i":
                return "o", 0
        return buf, 0

    def canon(rank: int, buf: str, off: int) -> tuple[str, int]:
        target, add = alias(rank, buf)
        return target, add + off

    aliases = [{b: alias(r, b) for b in "ios"} for r in range(n)]
    # memory: per rank and buffer, a list of slots [value, writer event or None, reads since]
    # an event is (threadblock index, its clock count, rank, tb id, step)
    mem: list[dict[str, list]] = []
    for g in gpus:
        size = max(g.i_chunks, g.o_chunks, g.s_chunks, n_in, n_out, p.nchunksperloop)
        mem.append({"i": [None] * size, "o": [None] * size, "s": [None] * max(g.s_chunks, 1)})
    for r in range(n):
        for j in range(n_in):
            target, off = canon(r, "i", j)
            mem[r][target][off] = [frozenset({(r, j)}), None, []]

    def name(event) -> str:
        return f"rank {event[2]} tb {event[3]} step {event[4]}"

    def read(rank, buf, off, cnt, who, event, clock) -> list[frozenset]:
        target, add = aliases[rank][buf]
        arr = mem[rank][target]
        out = []
        for j in range(off, off + cnt):
            slot = arr[j + add]
            if slot is None:
                raise _Fail(f"{who()} reads {buf}[{j}] before anything was written there")
            w = slot[1]
            if w is not None and clock[w[0]] < w[1]:
                raise _Fail(
                    f"{who()} reads {buf}[{j}] written by {name(w)} with no dependency or message "
                    "ordering the two (a race: add a dependency)"
                )
            slot[2].append(event)
            out.append(slot[0])
        return out

    def write(rank, buf, off, values, who, event, clock) -> None:
        target, add = aliases[rank][buf]
        arr = mem[rank][target]
        for j, value in enumerate(values):
            slot = arr[off + j + add]
            if slot is not None:
                w = slot[1]
                if w is not None and clock[w[0]] < w[1]:
                    raise _Fail(
                        f"{who()} overwrites {buf}[{off + j}] written by {name(w)} without ordering (a race)"
                    )
                for other in slot[2]:
                    if other[0] != event[0] and clock[other[0]] < other[1]:
                        raise _Fail(
                            f"{who()} overwrites {buf}[{off + j}] while {name(other)} may still read it (a race)"
                        )
            arr[off + j + add] = [value, event, []]

    def reduce(a: list[frozenset], b: list[frozenset], who: str) -> list[frozenset]:
        out = []
        for x, y in zip(a, b):
            both = x & y
            if both:
                q, j = min(both)
                raise _Fail(f"{who()} adds the contribution of rank {q} chunk {j} twice")
            out.append(x | y)
        return out

    # threadblock state; vector clocks give the happens-before order of steps
    tbs = [(g.id, tb) for g in gpus for tb in sorted(g.tbs, key=lambda t: t.id)]
    clocks = [np.zeros(len(tbs), dtype=np.int64) for _ in tbs]
    snapshots: dict[tuple[int, int, int], np.ndarray] = {}  # (rank, tb, s) of hasdep steps
    pc = {(r, tb.id): 0 for r, tb in tbs}
    flag = {(r, tb.id): -1 for r, tb in tbs}
    fifos: dict[tuple[int, int, int], deque] = {}
    executed = 0

    def blocked_on(r: int, tb):
        """What the next step of ``tb`` waits for: None, or (kind, key) to be woken on."""
        st = tb.steps[pc[(r, tb.id)]]
        if st.depid >= 0 and flag[(r, st.depid)] < st.deps:
            return "flag", (r, st.depid)
        if st.type in RECVS and not fifos.get((tb.recv, r, tb.chan)):
            return "msg", (tb.recv, r, tb.chan)
        if st.type in SENDS:
            q = fifos.get((r, tb.send, tb.chan))
            if q is not None and len(q) >= capacity:
                return "room", (r, tb.send, tb.chan)
        return None

    def blocked_reason(r: int, tb) -> str | None:
        why = blocked_on(r, tb)
        if why is None:
            return None
        kind = why[0]
        st = tb.steps[pc[(r, tb.id)]]
        if kind == "flag":
            return f"waits for tb {st.depid} step {st.deps}"
        if kind == "msg":
            return f"waits for a message from rank {tb.recv} on channel {tb.chan}"
        return f"waits for rank {tb.send} to receive on channel {tb.chan}"

    # event-driven: a blocked threadblock sleeps on what it waits for and is woken when it changes
    waiting: dict[tuple, list[int]] = {}
    ready = deque(range(len(tbs)))
    queued = [True] * len(tbs)

    def wake(kind: str, key) -> None:
        for w in waiting.pop((kind, key), ()):
            if not queued[w]:
                queued[w] = True
                ready.append(w)

    while ready:
        me = ready.popleft()
        queued[me] = False
        r, tb = tbs[me]
        key = (r, tb.id)
        clock = clocks[me]
        while pc[key] < len(tb.steps):
            why = blocked_on(r, tb)
            if why is not None:
                waiting.setdefault(why, []).append(me)
                break
            st = tb.steps[pc[key]]

            def who(r=r, tb=tb, st=st) -> str:
                return f"rank {r} tb {tb.id} step {st.s} ({st.type})"

            if st.depid >= 0:
                np.maximum(clock, snapshots[(r, st.depid, st.deps)], out=clock)
            msg = None
            if st.type in RECVS:
                fkey = (tb.recv, r, tb.chan)
                sender_cnt, msg, msg_clock = fifos[fkey].popleft()
                wake("room", fkey)
                if sender_cnt != st.cnt:
                    raise _Fail(
                        f"{who()} receives cnt={st.cnt} but rank {tb.recv} sent cnt={sender_cnt}"
                    )
                np.maximum(clock, msg_clock, out=clock)
            clock[me] += 1
            ev = (me, int(clock[me]), r, tb.id, st.s)
            out = None
            t = st.type
            if t == "s":
                out = read(r, st.srcbuf, st.srcoff, st.cnt, who, ev, clock)
            elif t == "r":
                write(r, st.dstbuf, st.dstoff, msg, who, ev, clock)
            elif t == "rcs":
                write(r, st.dstbuf, st.dstoff, msg, who, ev, clock)
                out = msg
            elif t == "rrs":
                out = reduce(read(r, st.srcbuf, st.srcoff, st.cnt, who, ev, clock), msg, who)
            elif t == "rrc":
                total = reduce(read(r, st.srcbuf, st.srcoff, st.cnt, who, ev, clock), msg, who)
                write(r, st.dstbuf, st.dstoff, total, who, ev, clock)
            elif t == "rrcs":
                out = reduce(read(r, st.srcbuf, st.srcoff, st.cnt, who, ev, clock), msg, who)
                write(r, st.dstbuf, st.dstoff, out, who, ev, clock)
            elif t == "cpy":
                values = read(r, st.srcbuf, st.srcoff, st.cnt, who, ev, clock)
                for j, value in enumerate(values):
                    # in-place, a copy of a chunk onto itself is a no-op
                    if canon(r, st.srcbuf, st.srcoff + j) != canon(r, st.dstbuf, st.dstoff + j):
                        write(r, st.dstbuf, st.dstoff + j, [value], who, ev, clock)
            elif t == "re":
                src = read(r, st.srcbuf, st.srcoff, st.cnt, who, ev, clock)
                dst = read(r, st.dstbuf, st.dstoff, st.cnt, who, ev, clock)
                write(r, st.dstbuf, st.dstoff, reduce(dst, src, who), who, ev, clock)
            if out is not None:
                fkey = (r, tb.send, tb.chan)
                fifos.setdefault(fkey, deque()).append((st.cnt, out, clock.copy()))
                wake("msg", fkey)
            if st.hasdep:
                flag[key] = st.s
                snapshots[(r, tb.id, st.s)] = clock.copy()
                wake("flag", key)
            pc[key] += 1
            executed += 1

    stuck = [(r, tb) for r, tb in tbs if pc[(r, tb.id)] < len(tb.steps)]
    if stuck:
        parts = []
        for r, tb in stuck[:MAX_REPORTED]:
            st = tb.steps[pc[(r, tb.id)]]
            parts.append(f"rank {r} tb {tb.id} step {st.s} ({st.type}) {blocked_reason(r, tb)}")
        more = (
            f" (+{len(stuck) - MAX_REPORTED} more threadblocks)"
            if len(stuck) > MAX_REPORTED
            else ""
        )
        raise _Fail(f"deadlock after {executed} steps: " + "; ".join(parts) + more)
    for (src, dst, chan), q in fifos.items():
        if q:
            raise _Fail(
                f"rank {src} sent {len(q)} message(s) to rank {dst} on channel {chan} that were never received"
            )

    # verify the collective
    everyone = range(n)
    problems = []
    if collective == "allgather":
        same = [frozenset({(j // block, j % block)}) for j in range(n_out)]
    elif collective == "allreduce":
        same = [frozenset((q, j) for q in everyone) for j in range(n_out)]
    for r in everyone:
        for j in range(n_out):
            target, off = canon(r, "o", j)
            slot = mem[r][target][off]
            got = slot[0] if slot is not None else None
            if collective == "reduce-scatter":
                want = frozenset((q, r * block + j) for q in everyone)
            else:
                want = same[j]
            if got != want:
                problems.append(
                    f"rank {r} output chunk {j} holds {_show(got)}, {collective} needs {_show(want)}"
                )
                if len(problems) >= 2:
                    break
        if len(problems) >= 2:
            break
    if problems:
        raise _Fail("wrong result: " + "; ".join(problems))
    return executed


def _show(value: frozenset | None) -> str:
    if value is None:
        return "nothing"
    items = sorted(value)
    text = ", ".join(f"r{q}c{j}" for q, j in items[:4])
    if len(items) > 4:
        text += f", ... ({len(items)} contributions)"
    return "{" + text + "}"
