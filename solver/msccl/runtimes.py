"""What each MSCCL runtime accepts: its collectives and the constants its loader and kernel use.

Every number here is a constant of the runtime's source, cited as ``file:line`` of these commits
(read with ``git show COMMIT:FILE``):

- ``rccl``: ROCm/rccl 0cbce2a7571c907554199fad7e905f16ec0a565c (2024-10-24);
- ``msccl-executor``: Azure/msccl-executor-nccl c6f6b36d1a4c7ae44916fcc5c8e32c95cce2ae54
  (2024-12-13); its ``src/misc/msccl/msccl_parser.cc`` is RCCL's file with the same line numbers up
  to line 710 (only line 576, RCCL's ``typeMask``, differs);
- ``msccl-legacy``: microsoft/msccl b23e9cd5dd63f82ee1c5aae7e0a2042079be903a (2023-09-20), whose
  MSCCL loader is ``src/graph/topo.cc`` and XML reader ``src/graph/xml.cc``.

The rules that use these constants, one per check of the source, are in
:mod:`solver.msccl.rules`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from solver.model.errors import ForestCollError


class MscclError(ForestCollError):
    """An MSCCL XML cannot be produced, parsed or checked (one-line message)."""


class PeersLimit(MscclError):
    """A schedule needs more threadblocks per rank than the runtime has: each GPU exchanges data
    with too many partners (a shaped schedule, :mod:`solver.msccl.shape`, can fit)."""


# collective kinds this package interprets (the keys of solver.msccl.collectives.COLLECTIVES)
OURS_BY_XML_RCCL = {
    # msccl_parser.cc:335-373 (RCCL and msccl-executor): every name the parser accepts
    "reduce": "reduce",
    "broadcast": "broadcast",
    "allreduce": "allreduce",
    "reducescatter": "reduce-scatter",
    "allgather": "allgather",
    "send": "send",
    "recv": "recv",
    "gather": "gather",
    "scatter": "scatter",
    "alltoall": "alltoall",
    "alltoallv": "alltoallv",
}
OURS_BY_XML_LEGACY = {
    # microsoft/msccl src/graph/topo.cc:826-845
    "allreduce": "allreduce",
    "allgather": "allgather",
    "reduce": "reduce",
    "broadcast": "broadcast",
    "alltoall": "alltoall",
    "reduce_scatter": "reduce-scatter",
    "custom": "custom",
}


@dataclass(frozen=True)
class Runtime:
    """One runtime's constants; ``cite`` maps each constant's name to where it is defined."""

    name: str
    source: str  # repository@commit
    max_steps: int  # MSCCL_MAX_NUM_STEPS: <step s> must be < this
    max_threadblocks: int  # MSCCL_MAX_NUM_THREAD_BLOCKS: <tb id> must be < this
    max_channels: int  # MAXCHANNELS: size of mscclChannels[]
    max_peers_per_channel: int  # MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL
    max_count: int  # MSCCL_MAX_COUNT: cnt must be < this
    max_nodes: int  # MAX_NODES of the XML reader
    max_subs: int  # MAX_SUBS: children per XML element
    max_str_len: int  # MAX_STR_LEN: attribute value buffer
    xml_colls: dict[str, str]
    step_types: tuple[str, ...]
    # default connection buffer bytes per protocol (NCCL_BUFFSIZE / _LL_ / _LL128_ defaults) and
    # LL128's line length in 8-byte elements: they size the pieces the kernel streams
    buffsize: dict[str, int] = field(default_factory=dict)
    ll128_line_elems: int = 16
    legacy: bool = False
    full_ops_at_launch: bool = True  # whether rcs/rrs/rrc/rrcs kernels are built
    cite: dict[str, str] = field(default_factory=dict)

    def coll_name(self, collective: str) -> str:
        """The XML ``coll`` name of one of our collectives for this runtime."""
        for theirs, ours in self.xml_colls.items():
            if ours == collective:
                return theirs
        raise MscclError(f"{self.name} has no collective {collective!r}")

    def collective_of(self, coll: str) -> str | None:
        return self.xml_colls.get(coll)

    def where(self, constant: str) -> str:
        return f"{self.cite[constant]}"


_STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop")

RUNTIMES: dict[str, Runtime] = {
    "msccl-executor": Runtime(
        "msccl-executor",
        source="Azure/msccl-executor-nccl@c6f6b36d",
        max_steps=64,
        max_threadblocks=32 * 32,
        max_channels=32,
        max_peers_per_channel=32,
        max_count=72,
        max_nodes=4096,
        max_subs=1024,
        max_str_len=255,
        xml_colls=OURS_BY_XML_RCCL,
        step_types=_STEP_TYPES,
        buffsize={"Simple": 1 << 22, "LL": 8 * 512 * 8 * 16, "LL128": 120 * 640 * 8 * 8},
        cite={
            "buffsize": "src/init.cc:614-616, src/include/device.h:67-89 (LL 512 threads, LL128 "
            "120 elements x 640 threads, 128-byte lines)",
            "max_steps": "makefiles/common.mk:19 (MSCCL_MAX_NUM_STEPS ?= 64)",
            "max_threadblocks": "src/include/msccl/msccl_struct.h:18 (MSCCL_MAX_NUM_THREAD_BLOCKS "
            "= 32 per channel x MAXCHANNELS 32, src/include/device.h:65)",
            "max_channels": "src/include/device.h:65 (MAXCHANNELS 32)",
            "max_peers_per_channel": "src/include/msccl/msccl_struct.h:17",
            "max_count": "src/include/msccl/msccl_struct.h:19",
            "max_nodes": "src/include/msccl/msccl_parser.h:23",
            "max_subs": "src/include/msccl/msccl_parser.h:22",
            "max_str_len": "src/include/msccl/msccl_parser.h:20",
        },
    ),
    "rccl": Runtime(
        "rccl",
        source="ROCm/rccl@0cbce2a7",
        max_steps=64,
        max_threadblocks=64,
        max_channels=128,
        max_peers_per_channel=32,
        max_count=72,
        max_nodes=4096,
        max_subs=1024,
        max_str_len=255,
        xml_colls=OURS_BY_XML_RCCL,
        step_types=_STEP_TYPES,
        buffsize={"Simple": 1 << 22, "LL": 8 * 256 * 8 * 16, "LL128": 28 * 256 * 8 * 8},
        ll128_line_elems=8,
        full_ops_at_launch=False,
        cite={
            "max_steps": "src/include/msccl/msccl_struct.h:16 (MSCCL_MAX_NUM_STEPS 64)",
            "max_threadblocks": "src/include/msccl/msccl_struct.h:18 (MSCCL_MAX_NUM_THREAD_BLOCKS 64)",
            "max_channels": "src/include/device.h:65 (MAXCHANNELS 128)",
            "max_peers_per_channel": "src/include/msccl/msccl_struct.h:17",
            "max_count": "src/include/msccl/msccl_struct.h:19",
            "max_nodes": "src/include/msccl/msccl_parser.h:23",
            "max_subs": "src/include/msccl/msccl_parser.h:22",
            "max_str_len": "src/include/msccl/msccl_parser.h:20",
            "full_ops": "src/misc/msccl/msccl_setup.cc:430-437",
            "buffsize": "src/init.cc:837-839 (DEFAULT_LL_BUFFSIZE, DEFAULT_LL128_BUFFSIZE, "
            "DEFAULT_BUFFSIZE), src/include/device.h:68-88 (256 threads, LL128 28 elements per "
            "thread, 64-byte lines)",
        },
    ),
    "msccl-legacy": Runtime(
        "msccl-legacy",
        source="microsoft/msccl@b23e9cd5",
        max_steps=256,
        max_threadblocks=216,
        max_channels=32,
        max_peers_per_channel=32,
        max_count=72,
        max_nodes=4096,
        max_subs=1024,
        max_str_len=255,
        xml_colls=OURS_BY_XML_LEGACY,
        step_types=_STEP_TYPES + ("ra",),
        buffsize={"Simple": 1 << 22, "LL": 8 * 512 * 8 * 16, "LL128": 120 * 640 * 8 * 8},
        legacy=True,
        cite={
            "buffsize": "src/init.cc:451-453, src/include/devcomm.h:52-72",
            "max_steps": "src/include/msccl.h:6 (MSCCL_MAX_NUM_STEPS 256)",
            "max_threadblocks": "src/include/msccl.h:8 (MSCCL_MAX_NUM_THREAD_BLOCKS 108*2)",
            "max_channels": "src/include/devcomm.h:51 (MAXCHANNELS 32)",
            "max_peers_per_channel": "src/include/msccl.h:7",
            "max_count": "src/include/msccl.h:10",
            "max_nodes": "src/graph/xml.h:19 (MAX_NODES 1<<12)",
            "max_subs": "src/graph/xml.h:18",
            "max_str_len": "src/graph/xml.h (MAX_STR_LEN 255)",
        },
    ),
}

PROTOCOLS = ("Simple", "LL", "LL128")  # msccl_parser.cc:290-301

SENDS = {"s", "rcs", "rrs", "rrcs"}  # hasSend, msccl_parser.cc:499-537
RECVS = {"r", "rcs", "rrs", "rrc", "rrcs"}  # hasRecv
FULL_OPS = {"rcs", "rrs", "rrc", "rrcs"}  # fullOpMask, RCCL msccl_setup.cc:430-433
# which local buffers a step reads (checkSrc) and writes (checkDst), msccl_parser.cc:494-537;
# rrc reads and writes memory but the parser checks neither of its offsets
READS = {"s", "rrs", "rrc", "rrcs", "cpy", "re", "ra"}
WRITES = {"r", "rcs", "rrc", "rrcs", "cpy", "re", "ra"}
CHECK_SRC = {"s", "rrs", "rrcs", "cpy", "re", "ra"}
CHECK_DST = {"r", "rcs", "rrcs", "cpy", "re", "ra"}

# 16-bit fields of struct mscclTransmission / mscclThreadBlock (msccl_struct.h:44-45, 58-60)
INT16_MAX = 2**15 - 1
INT8_MAX = 2**7 - 1
INT32 = (
    -(2**31),
    2**31 - 1,
)  # mscclXmlGetAttrInt stores strtol() into an int (msccl_parser.h:75-80)
INT64 = (-(2**63), 2**63 - 1)  # mscclXmlGetAttrInt64: strtoll() (msccl_parser.h:82-87)


DEFAULT_RUNTIME = RUNTIMES["msccl-executor"]


def runtime_named(name: str) -> Runtime:
    """The runtime called ``name``, as the CLI and GUI resolve their runtime choice (once)."""
    try:
        return RUNTIMES[name]
    except KeyError:
        raise MscclError(f"unknown runtime {name!r} (choose {', '.join(RUNTIMES)})") from None
