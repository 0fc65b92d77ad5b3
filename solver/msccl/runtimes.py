"""What each MSCCL runtime accepts: collective names and the limits its XML parser enforces.

Facts from the runtimes' parsers (msccl-executor-nccl and RCCL ``src/misc/msccl/msccl_parser.cc``,
``msccl_struct.h``; legacy microsoft/msccl ``graph/topo.cc``):

- every <step> ``s`` must be < MSCCL_MAX_NUM_STEPS (64 in msccl-executor-nccl and RCCL, 256 in
  the legacy runtime); ``cnt`` must be < MSCCL_MAX_COUNT = 72;
- at most 32 thread blocks with a send peer and 32 with a receive peer per channel
  (MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL; the legacy runtime counts every block of the channel);
- ``chan`` in [0, MAXCHANNELS = 32);
- the XML reader keeps at most MAX_NODES = 4096 elements per rank (<algo>, its <gpu>, <tb>s and
  <step>s) in msccl-executor-nccl/RCCL; for the legacy runtime we assume 1024 (conservative);
- legacy: i_chunks x N (allgather) / o_chunks x N (reduce_scatter) must equal nchunksperloop;
- reduce-scatter is ``reducescatter`` for msccl-executor-nccl/RCCL, ``reduce_scatter`` legacy.

Thread blocks of one rank spin-wait on each other, so they must all be resident at once: we
keep them within one block per compute unit of the target (A100: 108 SMs; MI250 GCD: 104 CUs)
for the executors, and within the legacy parser's limit (2 x 108).
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.model.errors import ForestCollError


class MscclError(ForestCollError):
    """An MSCCL XML cannot be produced, parsed or checked (one-line message)."""


@dataclass(frozen=True)
class Runtime:
    name: str
    max_steps: int  # steps per thread block
    max_threadblocks: int  # per rank
    max_channels: int = 32
    max_peers_per_channel: int = 32
    max_count: int = 72  # cnt must be < this
    max_xml_nodes: int = 4096  # <algo> + <gpu> + <tb> + <step> elements the parser loads per rank
    legacy: bool = False
    coll_names: tuple[tuple[str, str], ...] = (
        ("allgather", "allgather"),
        ("reduce-scatter", "reducescatter"),
        ("allreduce", "allreduce"),
    )

    def coll_name(self, collective: str) -> str:
        return dict(self.coll_names)[collective]

    def collective_of(self, coll: str) -> str | None:
        for ours, theirs in self.coll_names:
            if theirs == coll:
                return ours
        return None


RUNTIMES: dict[str, Runtime] = {
    "msccl-executor": Runtime("msccl-executor", max_steps=64, max_threadblocks=108),
    "rccl": Runtime("rccl", max_steps=64, max_threadblocks=104),
    "msccl-legacy": Runtime(
        "msccl-legacy",
        max_steps=256,
        max_threadblocks=216,
        max_xml_nodes=1024,
        legacy=True,
        coll_names=(
            ("allgather", "allgather"),
            ("reduce-scatter", "reduce_scatter"),
            ("allreduce", "allreduce"),
        ),
    ),
}

PROTOCOLS = ("Simple", "LL", "LL128")

STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop")
SENDS = {"s", "rcs", "rrs", "rrcs"}
RECVS = {"r", "rcs", "rrs", "rrc", "rrcs"}


def runtime(name: str) -> Runtime:
    try:
        return RUNTIMES[name]
    except KeyError:
        raise MscclError(f"unknown runtime {name!r} (choose {', '.join(RUNTIMES)})") from None
