"""The MSCCL XML program: <algo> / <gpu> / <tb> / <step>, written and parsed with the parser rules.

:func:`to_xml` writes what the runtimes load; :func:`parse_xml` reads an XML back and enforces
the rules the runtimes' parsers enforce (see :mod:`solver.msccl.runtimes`), naming the element
at fault.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from solver.msccl.runtimes import PROTOCOLS, RECVS, SENDS, STEP_TYPES, MscclError, Runtime

BUFFERS = ("i", "o", "s")


@dataclass
class Step:
    s: int
    type: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    depid: int = -1
    deps: int = -1
    hasdep: int = 0


@dataclass
class Threadblock:
    id: int
    send: int
    recv: int
    chan: int
    steps: list[Step] = field(default_factory=list)


@dataclass
class Gpu:
    id: int
    i_chunks: int
    o_chunks: int
    s_chunks: int
    tbs: list[Threadblock] = field(default_factory=list)


@dataclass
class Program:
    name: str
    proto: str
    nchannels: int
    nchunksperloop: int
    ngpus: int
    coll: str
    inplace: int
    outofplace: int
    min_bytes: int
    max_bytes: int
    gpus: list[Gpu] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ statistics
    def num_threadblocks(self) -> int:
        return max((len(g.tbs) for g in self.gpus), default=0)

    def max_steps(self) -> int:
        return max((len(tb.steps) for g in self.gpus for tb in g.tbs), default=0)

    def num_steps(self) -> int:
        return sum(len(tb.steps) for g in self.gpus for tb in g.tbs)


# ---------------------------------------------------------------------------- writing
def to_xml(program: Program) -> str:
    """The XML text of ``program`` (attribute order as the MSCCL tools write it)."""
    algo = ET.Element(
        "algo",
        {
            "name": program.name,
            "proto": program.proto,
            "nchannels": str(program.nchannels),
            "nchunksperloop": str(program.nchunksperloop),
            "ngpus": str(program.ngpus),
            "coll": program.coll,
            "inplace": str(program.inplace),
            "outofplace": str(program.outofplace),
            "minBytes": str(program.min_bytes),
            "maxBytes": str(program.max_bytes),
        },
    )
    for text in program.comments:
        algo.append(ET.Comment(f" {text.replace('--', '-')} "))
    for g in program.gpus:
        ge = ET.SubElement(
            algo,
            "gpu",
            {
                "id": str(g.id),
                "i_chunks": str(g.i_chunks),
                "o_chunks": str(g.o_chunks),
                "s_chunks": str(g.s_chunks),
            },
        )
        for tb in g.tbs:
            te = ET.SubElement(
                ge,
                "tb",
                {
                    "id": str(tb.id),
                    "send": str(tb.send),
                    "recv": str(tb.recv),
                    "chan": str(tb.chan),
                },
            )
            for st in tb.steps:
                ET.SubElement(
                    te,
                    "step",
                    {
                        "s": str(st.s),
                        "type": st.type,
                        "srcbuf": st.srcbuf,
                        "srcoff": str(st.srcoff),
                        "dstbuf": st.dstbuf,
                        "dstoff": str(st.dstoff),
                        "cnt": str(st.cnt),
                        "depid": str(st.depid),
                        "deps": str(st.deps),
                        "hasdep": str(st.hasdep),
                    },
                )
    ET.indent(algo, space="  ")
    return ET.tostring(algo, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------- parsing
def _int(el: ET.Element, name: str, where: str) -> int:
    value = el.get(name)
    if value is None:
        raise MscclError(f"{where}: missing attribute {name!r}")
    try:
        return int(value.strip())
    except ValueError:
        raise MscclError(f"{where}: attribute {name}={value!r} is not an integer") from None


def _str(el: ET.Element, name: str, where: str) -> str:
    value = el.get(name)
    if value is None:
        raise MscclError(f"{where}: missing attribute {name!r}")
    return value


def parse_xml(text: str, where: str = "<xml>") -> Program:
    """Parse MSCCL XML into a :class:`Program` (structure and attribute types only)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise MscclError(f"{where}: not well-formed XML ({exc})") from None
    if root.tag != "algo":
        raise MscclError(f"{where}: the top element must be <algo>, got <{root.tag}>")
    p = Program(
        name=_str(root, "name", "algo"),
        proto=_str(root, "proto", "algo"),
        nchannels=_int(root, "nchannels", "algo"),
        nchunksperloop=_int(root, "nchunksperloop", "algo"),
        ngpus=_int(root, "ngpus", "algo"),
        coll=_str(root, "coll", "algo"),
        inplace=_int(root, "inplace", "algo"),
        outofplace=_int(root, "outofplace", "algo"),
        min_bytes=_int(root, "minBytes", "algo"),
        max_bytes=_int(root, "maxBytes", "algo"),
    )
    for ge in root.findall("gpu"):
        gw = f"gpu {ge.get('id', '?')}"
        g = Gpu(
            id=_int(ge, "id", gw),
            i_chunks=_int(ge, "i_chunks", gw),
            o_chunks=_int(ge, "o_chunks", gw),
            s_chunks=_int(ge, "s_chunks", gw),
        )
        for te in ge.findall("tb"):
            tw = f"{gw} tb {te.get('id', '?')}"
            tb = Threadblock(
                id=_int(te, "id", tw),
                send=_int(te, "send", tw),
                recv=_int(te, "recv", tw),
                chan=_int(te, "chan", tw),
            )
            for se in te.findall("step"):
                sw = f"{tw} step {se.get('s', '?')}"
                tb.steps.append(
                    Step(
                        s=_int(se, "s", sw),
                        type=_str(se, "type", sw),
                        srcbuf=_str(se, "srcbuf", sw),
                        srcoff=_int(se, "srcoff", sw),
                        dstbuf=_str(se, "dstbuf", sw),
                        dstoff=_int(se, "dstoff", sw),
                        cnt=_int(se, "cnt", sw),
                        depid=_int(se, "depid", sw),
                        deps=_int(se, "deps", sw),
                        hasdep=_int(se, "hasdep", sw),
                    )
                )
            g.tbs.append(tb)
        p.gpus.append(g)
    return p


# ---------------------------------------------------------------------------- parser rules
def check_rules(p: Program, rt: Runtime) -> list[str]:
    """Every rule of ``rt``'s parser that ``p`` breaks, as messages naming the element."""
    errors: list[str] = []
    if p.proto not in PROTOCOLS:
        errors.append(f"algo: proto {p.proto!r} is not one of {', '.join(PROTOCOLS)}")
    if rt.collective_of(p.coll) is None:
        known = ", ".join(theirs for _, theirs in rt.coll_names)
        errors.append(f"algo: coll {p.coll!r} is not a {rt.name} collective ({known})")
    if p.inplace not in (0, 1) or p.outofplace not in (0, 1) or not (p.inplace or p.outofplace):
        errors.append("algo: inplace/outofplace must be 0 or 1 and at least one of them 1")
    if p.min_bytes < 0 or p.max_bytes < 0 or p.min_bytes > p.max_bytes:
        errors.append(
            f"algo: minBytes {p.min_bytes} / maxBytes {p.max_bytes} must be 0 <= min <= max"
        )
    if p.ngpus < 1:
        errors.append(f"algo: ngpus {p.ngpus} must be >= 1")
    if p.nchunksperloop < 1:
        errors.append(f"algo: nchunksperloop {p.nchunksperloop} must be >= 1")
    if not 1 <= p.nchannels <= rt.max_channels:
        errors.append(f"algo: nchannels {p.nchannels} must be between 1 and {rt.max_channels}")
    ids = sorted(g.id for g in p.gpus)
    if ids != list(range(p.ngpus)):
        errors.append(
            f"algo: <gpu> ids must be 0..{p.ngpus - 1} once each, got {ids[:8]}{'...' if len(ids) > 8 else ''}"
        )
    for g in p.gpus:
        errors.extend(_check_gpu(p, g, rt))
        if len(errors) > 20:
            break
    if not errors:
        errors.extend(_check_connections(p))
    return errors


def _check_connections(p: Program) -> list[str]:
    """Every send connection (rank, peer, channel) needs the matching receive on the peer."""
    sends = {(g.id, tb.send, tb.chan): tb.id for g in p.gpus for tb in g.tbs if tb.send >= 0}
    recvs = {(tb.recv, g.id, tb.chan): tb.id for g in p.gpus for tb in g.tbs if tb.recv >= 0}
    errors = []
    for (src, dst, chan), tb in sorted(sends.items()):
        if (src, dst, chan) not in recvs:
            errors.append(
                f"gpu {src} tb {tb} sends to {dst} on channel {chan} but gpu {dst} has no threadblock "
                f"receiving from {src} on that channel"
            )
    for (src, dst, chan), tb in sorted(recvs.items()):
        if (src, dst, chan) not in sends:
            errors.append(
                f"gpu {dst} tb {tb} receives from {src} on channel {chan} but gpu {src} has no threadblock "
                f"sending to {dst} on that channel"
            )
    return errors


def _check_gpu(p: Program, g: Gpu, rt: Runtime) -> list[str]:
    errors: list[str] = []
    gw = f"gpu {g.id}"
    sizes = {"i": g.i_chunks, "o": g.o_chunks, "s": g.s_chunks}
    if min(sizes.values()) < 0:
        errors.append(f"{gw}: i_chunks/o_chunks/s_chunks must not be negative")
    nodes = 2 + len(g.tbs) + sum(len(tb.steps) for tb in g.tbs)
    if nodes > rt.max_xml_nodes:
        errors.append(
            f"{gw}: {nodes} XML elements for this rank, more than the {rt.name} reader keeps "
            f"({rt.max_xml_nodes})"
        )
    coll = rt.collective_of(p.coll)
    n = p.ngpus
    need_i = {"allgather": p.nchunksperloop // n, "reduce-scatter": p.nchunksperloop}.get(
        coll, p.nchunksperloop
    )
    need_o = {"reduce-scatter": p.nchunksperloop // n}.get(coll, p.nchunksperloop)
    if (
        coll is not None
        and n > 0
        and ((g.i_chunks and g.i_chunks != need_i) or (g.o_chunks and g.o_chunks != need_o))
    ):
        errors.append(
            f"{gw}: i_chunks/o_chunks {g.i_chunks}/{g.o_chunks} do not match nchunksperloop "
            f"{p.nchunksperloop} for {p.coll} on {n} ranks (expected {need_i}/{need_o})"
        )
    tb_ids = sorted(tb.id for tb in g.tbs)
    if tb_ids != list(range(len(g.tbs))):
        errors.append(
            f"{gw}: threadblock ids must be 0..{len(g.tbs) - 1} without gaps or duplicates"
        )
    if len(g.tbs) > rt.max_threadblocks:
        errors.append(
            f"{gw}: {len(g.tbs)} threadblocks, more than the {rt.name} limit {rt.max_threadblocks}"
        )
    by_id = {tb.id: tb for tb in g.tbs}
    send_keys: dict[tuple[int, int], int] = {}
    recv_keys: dict[tuple[int, int], int] = {}
    per_chan_send: dict[int, int] = {}
    per_chan_recv: dict[int, int] = {}
    per_chan_all: dict[int, int] = {}
    for tb in g.tbs:
        tw = f"{gw} tb {tb.id}"
        for role, peer in (("send", tb.send), ("recv", tb.recv)):
            if peer == g.id:
                errors.append(f"{tw}: {role} peer is the rank itself ({peer})")
            elif not -1 <= peer < p.ngpus:
                errors.append(f"{tw}: {role} peer {peer} must be -1 or a rank 0..{p.ngpus - 1}")
        if not 0 <= tb.chan < rt.max_channels:
            errors.append(f"{tw}: chan {tb.chan} must be between 0 and {rt.max_channels - 1}")
        elif tb.chan >= p.nchannels:
            errors.append(f"{tw}: chan {tb.chan} but the algo declares nchannels={p.nchannels}")
        if tb.send >= 0:
            key = (tb.send, tb.chan)
            if key in send_keys:
                errors.append(
                    f"{tw}: a second threadblock (after tb {send_keys[key]}) sends to {tb.send} on channel {tb.chan}"
                )
            send_keys[key] = tb.id
            per_chan_send[tb.chan] = per_chan_send.get(tb.chan, 0) + 1
        if tb.recv >= 0:
            key = (tb.recv, tb.chan)
            if key in recv_keys:
                errors.append(
                    f"{tw}: a second threadblock (after tb {recv_keys[key]}) receives from {tb.recv} on channel {tb.chan}"
                )
            recv_keys[key] = tb.id
            per_chan_recv[tb.chan] = per_chan_recv.get(tb.chan, 0) + 1
        per_chan_all[tb.chan] = per_chan_all.get(tb.chan, 0) + 1
        if len(tb.steps) > rt.max_steps:
            errors.append(
                f"{tw}: {len(tb.steps)} steps, more than the {rt.name} limit {rt.max_steps}"
            )
        pending_deps = 0
        for i, st in enumerate(tb.steps):
            sw = f"{tw} step {st.s}"
            if st.s != i:
                errors.append(f"{sw}: steps must be numbered 0, 1, 2... in order (expected s={i})")
            if st.type not in STEP_TYPES:
                errors.append(f"{sw}: unknown type {st.type!r}")
                continue
            if st.depid >= 0:
                target = by_id.get(st.depid)
                if target is None:
                    errors.append(
                        f"{sw}: depends on threadblock {st.depid}, which rank {g.id} does not have"
                    )
                elif st.depid == tb.id and st.deps >= i:
                    errors.append(
                        f"{sw}: depends on step {st.deps} of its own threadblock, which runs later"
                    )
                elif not 0 <= st.deps < len(target.steps):
                    errors.append(
                        f"{sw}: depends on step {st.deps} of tb {st.depid}, which has {len(target.steps)} steps"
                    )
                elif target.steps[st.deps].hasdep != 1:
                    errors.append(
                        f"{sw}: depends on tb {st.depid} step {st.deps}, which has hasdep=0 (the runtime never signals it)"
                    )
            elif st.depid != -1:
                errors.append(f"{sw}: depid {st.depid} must be -1 or a threadblock id")
            if st.hasdep not in (0, 1):
                errors.append(f"{sw}: hasdep must be 0 or 1")
            if st.type == "nop":
                if st.depid >= 0:
                    pending_deps += 1
                continue
            if pending_deps and st.depid < 0:
                errors.append(
                    f"{sw}: follows nop dependencies but has no depid itself (the runtime rejects this)"
                )
            pending_deps = 0
            if not 0 < st.cnt < rt.max_count:
                errors.append(f"{sw}: cnt {st.cnt} must be between 1 and {rt.max_count - 1}")
            if st.type in SENDS and tb.send < 0:
                errors.append(f"{sw}: type {st.type!r} sends but the threadblock has no send peer")
            if st.type in RECVS and tb.recv < 0:
                errors.append(
                    f"{sw}: type {st.type!r} receives but the threadblock has no recv peer"
                )
            for which, buf, off in (("src", st.srcbuf, st.srcoff), ("dst", st.dstbuf, st.dstoff)):
                if not _uses(st.type, which):
                    continue
                if buf not in BUFFERS:
                    errors.append(f"{sw}: {which}buf {buf!r} must be i, o or s")
                elif not (0 <= off and off + st.cnt <= sizes[buf]):
                    errors.append(
                        f"{sw}: {which} chunks {off}..{off + st.cnt - 1} outside buffer {buf!r} of {sizes[buf]} chunks"
                    )
    for chan, n in per_chan_send.items():
        if n > rt.max_peers_per_channel:
            errors.append(
                f"{gw}: {n} send peers on channel {chan}, more than {rt.max_peers_per_channel}"
            )
    for chan, n in per_chan_recv.items():
        if n > rt.max_peers_per_channel:
            errors.append(
                f"{gw}: {n} receive peers on channel {chan}, more than {rt.max_peers_per_channel}"
            )
    if rt.legacy:
        for chan, n in per_chan_all.items():
            if chan >= 0 and n > rt.max_peers_per_channel:
                errors.append(
                    f"{gw}: {n} threadblocks on channel {chan}, more than {rt.max_peers_per_channel}"
                )
    return errors


def _uses(step_type: str, which: str) -> bool:
    """Whether a step of this type reads (src) or writes (dst) local memory."""
    if which == "src":
        return step_type in ("s", "rrs", "rrc", "rrcs", "cpy", "re")
    return step_type in ("r", "rcs", "rrc", "rrcs", "cpy", "re")
