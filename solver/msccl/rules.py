"""The runtimes' own checks of an MSCCL XML, one rule per check of their source.

Each finding names the element at fault and ends with ``[file:line]`` of the check it mirrors
(paths of the runtime's repository at the commit given in :mod:`solver.msccl.runtimes`; lines of
``msccl_parser.cc`` are the same in RCCL and msccl-executor-nccl; the legacy runtime's loader is
``src/graph/topo.cc``). Two kinds of findings:

- **errors**: the runtime refuses the file (its loader returns an error), or loads it into a state
  that cannot work (an index past one of its fixed-size arrays, a field that cannot hold the
  value, a connection its setup never makes). Marked "semantic" when the runtime has no explicit
  check and the rule follows from what its code then does;
- **warnings**: the file loads, but the runtime will never pick it or will refuse it at launch
  (min/max bytes that select no size, neither in-place nor out-of-place, RCCL's build without
  "full ops" kernels).

What happens when the program runs (deadlocks, races, results) is checked by executing it
(:mod:`solver.msccl.interpreter`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from solver.msccl.lowering import Lowered, lower
from solver.msccl.program import Gpu, Program, Threadblock
from solver.msccl.runtimes import (
    CHECK_DST,
    CHECK_SRC,
    FULL_OPS,
    INT8_MAX,
    INT16_MAX,
    PROTOCOLS,
    RECVS,
    SENDS,
    Runtime,
)

BUFFERS = ("i", "o", "s")
MAX_ERRORS = 200  # stop looking after this many


@dataclass
class Findings:
    _failed: dict[str, list] = field(default_factory=dict)  # rule -> [first message, count]
    _warned: dict[str, list] = field(default_factory=dict)
    lowered: dict[int, Lowered] = field(default_factory=dict)  # id(threadblock) -> transmissions

    def error(self, where: str, message: str, cite: str) -> None:
        """One error per rule (its first occurrence), with how often it applies."""
        seen = self._failed.setdefault(cite, [f"{where}: {message} [{cite}]", 0])
        seen[1] += 1

    @property
    def errors(self) -> list[str]:
        return _grouped(self._failed)

    def warn(self, where: str, message: str, cite: str) -> None:
        """One warning per rule (its first occurrence), with how often it applies."""
        seen = self._warned.setdefault(cite, [f"{where}: {message} [{cite}]", 0])
        seen[1] += 1

    @property
    def warnings(self) -> list[str]:
        return _grouped(self._warned)

    def full(self) -> bool:
        return sum(n for _, n in self._failed.values()) > MAX_ERRORS


def _grouped(found: dict[str, list]) -> list[str]:
    return [text if n == 1 else f"{text} (and {n - 1} more like it)" for text, n in found.values()]


def check_rules(p: Program, rt: Runtime) -> Findings:
    """Every rule of ``rt`` that ``p`` breaks (errors) or trips (warnings)."""
    f = Findings()
    _check_algo(p, rt, f)
    if f.errors:
        return f
    _check_gpu_ids(p, rt, f)
    for g in p.gpus:
        _check_gpu(p, g, rt, f)
        if f.full():
            return f
    if not f.errors:
        _check_connections(p, f)
    return f


# ------------------------------------------------------------------------------------ <algo>
_REQUIRED = {
    # attribute: line of msccl_parser.cc reading it with mscclXmlGetAttr*, which fails when it
    # is missing (msccl_parser.h:69-72)
    "nchunksperloop": 315,
    "nchannels": 319,
    "ngpus": 323,
    "proto": 327,
    "coll": 334,
    "min_bytes": 376,
    "max_bytes": 380,
    "inplace": 384,
    "outofplace": 388,
}
_REQUIRED_LEGACY = {
    "name": 771,
    "ngpus": 775,
    "nchunksperloop": 782,
    "nchannels": 784,
    "proto": 787,
    "coll": 823,
    "inplace": 848,
}
_XML_NAME = {"min_bytes": "minBytes", "max_bytes": "maxBytes"}


def _check_algo(p: Program, rt: Runtime, f: Findings) -> None:
    required = _REQUIRED_LEGACY if rt.legacy else _REQUIRED
    loader = "src/graph/topo.cc" if rt.legacy else "src/misc/msccl/msccl_parser.cc"
    for attr, line in required.items():
        if getattr(p, attr) is None:
            f.error("algo", f"missing attribute {_XML_NAME.get(attr, attr)!r}", f"{loader}:{line}")
    if f.errors:
        return
    if p.proto not in PROTOCOLS:
        f.error(
            "algo",
            f"proto {p.proto!r} is not one of {', '.join(PROTOCOLS)}",
            "msccl_parser.cc:290-301",
        )
    if rt.collective_of(p.coll) is None:
        cite = "src/graph/topo.cc:826-845" if rt.legacy else "msccl_parser.cc:335-373"
        f.error(
            "algo",
            f"coll {p.coll!r} is not a {rt.name} collective ({', '.join(rt.xml_colls)})",
            cite,
        )
    if p.nchunksperloop < 1:
        f.error(
            "algo",
            f"nchunksperloop {p.nchunksperloop} must be >= 1 (the runtime divides by it)",
            "msccl_lifecycle.cc:333, msccl_setup.cc:22",
        )
    if not 1 <= p.ngpus <= rt.max_subs:
        f.error(
            "algo",
            f"ngpus {p.ngpus} must be between 1 and {rt.max_subs}: every <gpu> is a child of <algo> "
            f"and the reader keeps at most MAX_SUBS children",
            f"{rt.where('max_subs')}, msccl_parser.cc:195",
        )
    if p.nchannels > rt.max_channels:
        f.error(
            "algo",
            f"nchannels {p.nchannels} is more than {rt.name}'s MAXCHANNELS {rt.max_channels}: the "
            "algorithm is never loaded",
            f"{rt.where('max_channels')}, msccl_lifecycle.cc:129-133, msccl_setup.cc:91",
        )
    _check_sizes(p, rt, f)


def _check_sizes(p: Program, rt: Runtime, f: Findings) -> None:
    if rt.legacy:
        _check_sizes_legacy(p, f)
        return
    if p.max_bytes != 0 and (p.max_bytes < p.min_bytes or p.max_bytes < 0):
        f.warn(
            "algo",
            f"minBytes {p.min_bytes} / maxBytes {p.max_bytes}: no message size is in range, the "
            "runtime never picks this algorithm (maxBytes 0 would mean no upper limit)",
            "msccl_lifecycle.cc:332-334",
        )
    if not p.inplace and not p.outofplace:
        f.warn(
            "algo",
            "inplace and outofplace are both 0: the runtime never picks this algorithm",
            "msccl_lifecycle.cc:338",
        )


def _check_sizes_legacy(p: Program, f: Findings) -> None:
    lo = 0 if p.min_bytes is None else p.min_bytes
    hi = 2**27 if p.max_bytes is None else p.max_bytes  # topo.cc:805 when maxBytes is absent
    if lo > hi:
        f.error("algo", f"minBytes {lo} is greater than maxBytes {hi}", "src/graph/topo.cc:807")
    if lo < 0:
        f.error("algo", f"minBytes {lo} is negative", "src/graph/topo.cc:811")
    if hi < 0:
        f.error("algo", f"maxBytes {hi} is negative", "src/graph/topo.cc:815")
    if hi == 0:
        f.warn(
            "algo",
            "maxBytes 0: the legacy runtime needs size < maxBytes, so it never picks this algorithm",
            "src/graph/tuning.cc:369",
        )


def _check_gpu_ids(p: Program, rt: Runtime, f: Findings) -> None:
    counts = Counter(g.id for g in p.gpus)
    missing = [r for r in range(p.ngpus) if r not in counts]
    twice = sorted(r for r, c in counts.items() if c > 1)
    outside = sorted(r for r in counts if not 0 <= r < p.ngpus)
    if missing:
        f.error(
            "algo",
            f"no <gpu> for rank {missing[0]}{' (and others)' if len(missing) > 1 else ''}: that rank "
            "loads an algorithm without threadblocks (semantic)",
            "msccl_parser.cc:400",
        )
    if twice:
        f.error(
            "algo",
            f'two <gpu id="{twice[0]}">: the rank loads both and finds duplicate threadblock ids',
            "msccl_parser.cc:400, 425",
        )
    if outside:
        f.error(
            "algo",
            f'<gpu id="{outside[0]}"> is not a rank 0..{p.ngpus - 1} (semantic)',
            "msccl_parser.cc:400",
        )
    for g in p.gpus:
        nodes = 1 + len(p.gpus) + len(g.tbs) + sum(len(tb.steps) for tb in g.tbs)
        if nodes >= rt.max_nodes:
            f.error(
                f"gpu {g.id}",
                f"rank {g.id} makes the reader keep {nodes} XML elements (<algo>, every <gpu>, its "
                f"<tb>s and <step>s); its limit is {rt.max_nodes - 1} (it fails when the count reaches "
                f"MAX_NODES {rt.max_nodes})",
                f"{rt.where('max_nodes')}, msccl_parser.cc:169",
            )


# ------------------------------------------------------------------------------------ <gpu>
def _check_gpu(p: Program, g: Gpu, rt: Runtime, f: Findings) -> None:
    gw = f"gpu {g.id}"
    if g.s_chunks < 0:
        f.error(gw, f"s_chunks {g.s_chunks} must not be negative", "msccl_parser.cc:404")
    if rt.legacy:
        _check_legacy_chunks(p, g, rt, f)
    ids = Counter(tb.id for tb in g.tbs)
    for tb in g.tbs:
        _check_tb(p, g, tb, rt, f)
        if f.full():
            return
    for bid, n in ids.items():
        if n > 1:
            f.error(gw, f"duplicate threadblock id {bid}", "msccl_parser.cc:425")
    present = set(ids)
    for bid in sorted(present):
        if bid > 0 and bid - 1 not in present and 0 <= bid < rt.max_threadblocks:
            f.error(
                gw,
                f"threadblock {bid - 1} is missing (ids must be 0, 1, 2...)",
                "msccl_parser.cc:684-696",
            )
            break
    _check_channel_peers(g, rt, f)


def _check_legacy_chunks(p: Program, g: Gpu, rt: Runtime, f: Findings) -> None:
    coll = rt.collective_of(p.coll)
    i_mult = p.ngpus if coll == "allgather" else 1
    o_mult = p.ngpus if coll == "reduce-scatter" else 1
    if (g.i_chunks > 0 and g.i_chunks * i_mult != p.nchunksperloop) or (
        g.o_chunks > 0 and g.o_chunks * o_mult != p.nchunksperloop
    ):
        f.error(
            f"gpu {g.id}",
            f"i_chunks/o_chunks {g.i_chunks}/{g.o_chunks} do not match nchunksperloop "
            f"{p.nchunksperloop} for {p.coll} on {p.ngpus} ranks",
            "src/graph/topo.cc:886",
        )


def _check_channel_peers(g: Gpu, rt: Runtime, f: Findings) -> None:
    sends: dict[int, int] = defaultdict(int)
    recvs: dict[int, int] = defaultdict(int)
    send_keys: dict[tuple[int, int], int] = {}
    recv_keys: dict[tuple[int, int], int] = {}
    limit = rt.max_peers_per_channel
    for tb in sorted(g.tbs, key=lambda t: t.id):
        tw = f"gpu {g.id} tb {tb.id}"
        for role, peer, count, keys, line in (
            ("sends to", tb.send, sends, send_keys, 589),
            ("receives from", tb.recv, recvs, recv_keys, 602),
        ):
            if peer < 0:
                continue
            count[tb.chan] += 1
            if count[tb.chan] == limit + 1:
                f.error(
                    tw,
                    f"more than {limit} threadblocks with a {role.split()[0][:-1]} peer on channel {tb.chan}",
                    f"{rt.where('max_peers_per_channel')}, msccl_parser.cc:{line}",
                )
            key = (peer, tb.chan)
            if key in keys:
                f.error(
                    tw,
                    f"a second threadblock (after tb {keys[key]}) {role} {peer} on channel {tb.chan}: "
                    "both would drive the one connection the runtime makes per channel and peer "
                    "(semantic)",
                    "msccl_setup.cc:97-111",
                )
            keys[key] = tb.id


# ------------------------------------------------------------------------------------ <tb>
def _check_tb(p: Program, g: Gpu, tb: Threadblock, rt: Runtime, f: Findings) -> None:
    tw = f"gpu {g.id} tb {tb.id}"
    if tb.id < 0:
        f.error(tw, f"threadblock id {tb.id} must not be negative", "msccl_parser.cc:417")
    if tb.id >= rt.max_threadblocks:
        f.error(
            tw,
            f"threadblock id {tb.id}: {rt.name} allows at most {rt.max_threadblocks} threadblocks per rank",
            f"{rt.where('max_threadblocks')}, msccl_parser.cc:421",
        )
    for role, peer in (("send", tb.send), ("recv", tb.recv)):
        if peer == g.id:
            f.error(tw, f"{role} peer is the rank itself ({peer})", "msccl_parser.cc:431")
        elif peer < -1:
            f.error(tw, f"{role} peer {peer} must be -1 or a rank", "msccl_parser.cc:437")
        elif peer >= p.ngpus:
            cite = "src/graph/topo.cc:929" if rt.legacy else "msccl_setup.cc:110 (semantic)"
            f.error(tw, f"{role} peer {peer} is not a rank 0..{p.ngpus - 1}", cite)
    if not 0 <= tb.chan < rt.max_channels:
        f.error(
            tw,
            f"chan {tb.chan} must be between 0 and {rt.max_channels - 1} (the parser lets "
            f"{rt.max_channels} through, one past mscclChannels[MAXCHANNELS])",
            f"msccl_parser.cc:449, msccl_struct.h:134, {rt.where('max_channels')}",
        )
    elif (tb.send >= 0 or tb.recv >= 0) and tb.chan >= p.nchannels:
        f.error(
            tw,
            f"chan {tb.chan} but the algo declares nchannels={p.nchannels}: the runtime connects "
            "channels 0..nchannels-1 only (semantic)",
            "msccl_setup.cc:97-111",
        )
    _check_steps(p, g, tb, rt, f)


def _check_steps(p: Program, g: Gpu, tb: Threadblock, rt: Runtime, f: Findings) -> None:
    tw = f"gpu {g.id} tb {tb.id}"
    declared = {"i": g.i_chunks, "o": g.o_chunks, "s": g.s_chunks}
    for pos, st in enumerate(tb.steps):
        sw = f"{tw} step {st.s}"
        if not 0 <= st.s < rt.max_steps:
            f.error(
                sw,
                f"s={st.s} must be between 0 and {rt.max_steps - 1} (MSCCL_MAX_NUM_STEPS {rt.max_steps})",
                f"{rt.where('max_steps')}, msccl_parser.cc:485-492",
            )
        elif st.s != pos:
            f.warn(
                sw,
                f"at position {pos}: the kernel numbers steps by position, so depid/deps naming this "
                f"step mean step {pos}",
                "msccl_kernel_impl.h:266-379",
            )
        if st.type not in rt.step_types:
            f.error(sw, f"unknown type {st.type!r}", "msccl_parser.cc:499-543")
            continue
        for which, buf in (("srcbuf", st.srcbuf), ("dstbuf", st.dstbuf)):
            if buf not in BUFFERS:
                f.error(
                    sw, f"{which} {buf!r} must be i, o or s", "msccl_parser.cc:256-268, 551-554"
                )
        if st.depid > INT8_MAX or st.deps > INT16_MAX:
            f.error(
                sw,
                f"depid {st.depid} / deps {st.deps} do not fit the int8/int16 fields dependentBid/dependentStep",
                "msccl_struct.h:58-59",
            )
        if st.type != "nop":
            _check_transfer(st, sw, tb, declared, rt, f)
    _check_lowered(tb, tw, rt, f)


def _check_transfer(st, sw: str, tb: Threadblock, declared: dict, rt: Runtime, f: Findings) -> None:
    if not 0 <= st.cnt < rt.max_count:
        f.error(
            sw,
            f"cnt {st.cnt} must be between 0 and {rt.max_count - 1}",
            f"{rt.where('max_count')}, msccl_parser.cc:577",
        )
    if st.type in SENDS and tb.send < 0:
        f.error(
            sw,
            f"type {st.type!r} sends but the threadblock has no send peer",
            "msccl_parser.cc:585",
        )
    if st.type in RECVS and tb.recv < 0:
        f.error(
            sw,
            f"type {st.type!r} receives but the threadblock has no recv peer",
            "msccl_parser.cc:598",
        )
    for which, checked, buf, off in (
        ("src", CHECK_SRC, st.srcbuf, st.srcoff),
        ("dst", CHECK_DST, st.dstbuf, st.dstoff),
    ):
        if st.type in checked and buf in declared and not -1 <= off < declared[buf]:
            f.error(
                sw,
                f"{which}off {off} outside buffer {buf!r}, which declares {declared[buf]} chunks",
                "msccl_parser.cc:270-288, 610-611",
            )
        if abs(off) > INT16_MAX:
            f.error(sw, f"{which}off {off} does not fit the int16 field", "msccl_struct.h:44-45")
    if st.hasdep not in (0, 1):
        f.error(sw, f"hasdep must be 0 or 1, got {st.hasdep}", "msccl_parser.cc:647")
    if st.type in FULL_OPS and not rt.full_ops_at_launch:
        f.warn(
            sw,
            f"type {st.type!r} is a 'full op': this RCCL build refuses such algorithms when "
            "launching them ('this version of MSCCL build doesn't support full Ops')",
            rt.where("full_ops"),
        )


def _check_lowered(tb: Threadblock, tw: str, rt: Runtime, f: Findings) -> None:
    """The loader's own refusals while lowering, and the sizes of the arrays it fills."""
    low = f.lowered[id(tb)] = lower(tb)
    for st, message in low.errors:
        f.error(f"{tw} step {st.s}", message, "msccl_parser.cc:616")
    for what, n in (
        ("transmissions", len(low.transmissions)),
        ("dependencies", low.dependencies),
        ("fused reductions", low.reductions),
    ):
        if n > rt.max_steps:
            f.error(
                tw,
                f"{n} {what}, more than the {rt.max_steps} entries of the threadblock's arrays",
                f"msccl_struct.h:57-60, {rt.where('max_steps')}",
            )


# ------------------------------------------------------------------------------------ pairs
def _check_connections(p: Program, f: Findings) -> None:
    """Every send connection (rank, peer, channel) needs the matching receive on the peer."""
    sends = {(g.id, tb.send, tb.chan): tb.id for g in p.gpus for tb in g.tbs if tb.send >= 0}
    recvs = {(tb.recv, g.id, tb.chan): tb.id for g in p.gpus for tb in g.tbs if tb.recv >= 0}
    for (src, dst, chan), tb in sorted(sends.items()):
        if (src, dst, chan) not in recvs:
            f.error(
                f"gpu {src} tb {tb}",
                f"sends to {dst} on channel {chan} but gpu {dst} has no threadblock receiving from "
                f"{src} on that channel (semantic: the two sides of a connection are set up together)",
                "msccl_setup.cc:110-117",
            )
    for (src, dst, chan), tb in sorted(recvs.items()):
        if (src, dst, chan) not in sends:
            f.error(
                f"gpu {dst} tb {tb}",
                f"receives from {src} on channel {chan} but gpu {src} has no threadblock sending to "
                f"{dst} on that channel (semantic: the two sides of a connection are set up together)",
                "msccl_setup.cc:110-117",
            )
