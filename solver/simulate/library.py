"""What NCCL / RCCL would do on a fabric: their tuner's own performance model.

NCCL does not simulate: at communicator set-up it computes, for every collective, algorithm
(Ring, Tree, NVLS, NVLSTree, CollNet, PAT) and protocol (LL, LL128, Simple), a bandwidth and a
latency, and at each call it runs the pair with the smallest ``latency + bytes / bandwidth``. This
module evaluates the same formulas on our :class:`~solver.model.topology.Topology`, so that the
"nccl" baseline is the algorithm the library would pick, at the speed the library would reach,
instead of a ring we built ourselves. Sources (NVIDIA/nccl at commit 5067397c, June 2026):

- ``src/graph/tuning.cc:139-144`` NVLS efficiency per generation; ``:149-176`` base and hardware
  latencies (us) per algorithm/protocol for NVLink, PCI and network hops; ``:177-212`` per-channel
  caps (llMaxBws, perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws,
  perChMaxNVLSTreeBws).
- ``tuning.cc:292-298`` which algorithms exist per collective (PAT only for allgather/reduce-scatter,
  Tree/NVLSTree only for allreduce); ``:308-323`` NVLS/NVLSTree bandwidth (x2 for allreduce,
  x2 inter-node on 2 nodes for NVLSTree); ``:324-337`` protocol refinements (LL x0.5, LL128 x0.92,
  Tree x0.92, Tree LL x1/3.8, PAT x0.75); ``:376-381`` bus -> algorithm bandwidth ratio
  (nRanks/nsteps for Ring/NVLS, 0.5 for Tree); ``:384-437`` latency per algorithm (ring steps,
  tree depth log2(nNodes), NVLS); ``:228-233`` network overhead per ring step (x3 for Simple);
  ``:623-655`` tree correction factors by size and ``time = lat + bytes / (1000 * bw)``, with the
  x1.4 "plateau" latency of multi-node Simple rings; ``:643-646`` the same factors for NVLSTree
  allreduce on Blackwell (sm >= 100) with x86 hosts only (``host=arm``: Grace, no correction).
- an ``rccl`` library takes RCCL's own base and hardware latencies instead (ROCm/rccl @0cbce2a7
  ``src/graph/tuning.cc:57-60,74-82``, :mod:`solver.simulate.rccl_tuning`).
- ``src/graph/topo.h:21-24`` NCCL's own per-link NVLink bandwidths: 20.0 GB/s (sm80), 20.6
  (sm90), 40.1 (sm100) per link, i.e. 80-82 % of the 25 / 25 / 50 GB/s line rate. This is the
  "370 of 450 GB/s" an H100 reaches with Simple: we model it as an NVLink efficiency and apply
  it to *every* algorithm, ForestColl included (:func:`derated`).

What NCCL's graph search (``search.cc``) would find is replaced by the physical totals it aims for:
``intra`` = the GPU's NVLink/xGMI bandwidth inside its box (least over GPUs), ``net`` = the box's
bandwidth to the outside (least over boxes). With ``ppn`` GPUs per box, ring channels leave each
box through a different GPU (one NIC per channel, PXN otherwise), so a GPU forwards on its
NVLink/xGMI in ``ppn - 1`` of every ``ppn`` ring hops: ring bus bandwidth =
``min(intra * ppn / (ppn - 1), net)`` across boxes, ``intra`` inside one box. A tree on two
boxes is rated by ``intra`` as NCCL does (tuning.cc:306), capped at twice the NICs (each box sends
every byte once over them).

Beyond NCCL's formula, one term it does not have: Tree/Simple moves each channel's share in
chunks of one NCCL step (``NCCL_BUFFSIZE / NCCL_STEPS``, enqueue.cc:2222-2223), and a hop
forwards a chunk only once it holds all of it, so the first chunk pays the whole up-and-down path
(:meth:`Choice.fill`). With GCP's 8 MiB buffers on A3 Mega that is ~0.7 ms, seen in the real log.
A run's settings (``NCCL_ALGO``, ``NCCL_PROTO``, ``NCCL_BUFFSIZE``, a tuner plugin forcing an
algorithm, ``NCCL_MAX/MIN_NCHANNELS``, a GPUDirect-TCPX network) are part of :class:`Library`:
a channel cap scales NCCL's ``nChannels * bw`` (:func:`channel_bandwidths`), TCPX moves each
channel's steps with a calibrated per-step cost (:func:`tcpx_net_bandwidth`,
:func:`tcpx_ring_time`), and :func:`library_from_settings` reads them off a log.

Two efficiencies are *calibrated* on real logs (tests/data/real/logs, see
:mod:`solver.simulate.calibration`): the network's (RoCE/IB/TCPXO payload rate over line rate)
and xGMI's (RCCL has no per-link constant like NCCL's NVLink one).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from fractions import Fraction

from solver.model.errors import ForestCollError
from solver.model.topology import Link, Topology
from solver.simulate import rccl_tuning as RT

# ----------------------------------------------------------------------------- constants
ALGOS = ("Ring", "Tree", "NVLS", "NVLSTree", "PAT")
PROTOS = ("LL", "LL128", "Simple")

#: tuning.cc:149-155 baseLatencies (us) [algorithm][protocol]
BASE_LAT = {
    "Tree": (6.8, 14.0, 8.4),
    "Ring": (6.6, 14.0, 8.4),
    "NVLS": (0.0, 0.0, 0.0),
    "NVLSTree": (0.0, 0.0, 0.0),
    "PAT": (8.0, 8.0, 8.0),
}
#: tuning.cc:156-176 hwLatencies (us) [hw][algorithm][protocol]
HW_LAT = {
    "nvlink": {
        "Tree": (0.6, 1.25, 4.0),
        "Ring": (0.6, 1.9, 3.4),
        "NVLS": (0, 0, 25),
        "NVLSTree": (0, 0, 25),
        "PAT": (0, 0, 4.0),
    },
    "pci": {
        "Tree": (1.0, 1.9, 4.0),
        "Ring": (1.0, 2.5, 5.7),
        "NVLS": (0, 0, 0),
        "NVLSTree": (0, 0, 0),
        "PAT": (0, 0, 4.0),
    },
    "net": {
        "Tree": (5.0, 8.5, 14),
        "Ring": (2.7, 4.0, 14.0),
        "NVLS": (0, 0, 18),
        "NVLSTree": (0, 0, 20.9),
        "PAT": (0, 0, 14),
    },
}
_GEN_INDEX = {"volta": 0, "ampere": 1, "hopper": 2, "blackwell": 3}
#: tuning.cc:177-183 llMaxBws [index1][nodes index]; index1 = generation (1 node) or CPU (0 Intel)
LL_MAX_BW = ((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0), (282.0, 90.0, 70.0))
#: tuning.cc:184-190, 191-197, 198-204, 205-211 per-channel caps [generation][nodes index]
RING_LL128_BW = ((20.0,) * 3, (20.0,) * 3, (36.7,) * 3, (40.0,) * 3)
TREE_LL128_BW = ((20.0,) * 3, (20.0,) * 3, (36.7, 36.7, 29.0), (55.6, 31.67, 20.0))
TREE_BW = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0), (70.0, 42.8, 24.0))
NVLS_TREE_BW = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5), (0.0, 96.0, 80.0))
#: tuning.cc:139-144
NVLS_EFFICIENCY = (0.0, 0.0, 0.85, 0.74)
#: NVLS allreduce, calibrated (solver.simulate.calibration.NVLS_FIGURES): in one NVLS domain
#: of p GPUs each GPU moves (p+1)/p of the message each way over its NVLink (it scatters all p
#: portions into the switch's buffers and gathers all p results, own portion included:
#: src/device/all_reduce.h:390-455, scatter / multimem reduce+broadcast / gather, NVIDIA/nccl
#: @5067397c), at this fraction of its line rate. Hopper: fitted on the one maintainer figure
#: (275 GB/s algbw on 8x H100, nccl-tests#212) -> 275 * 9/8 / 450; Blackwell: Hopper's value
#: times NCCL's own Blackwell/Hopper ratio of nvlsEfficiency (0.74 / 0.85), nothing fitted.
NVLS_LINK_EFFICIENCY = {"hopper": 275.0 * 9 / 8 / 450}
NVLS_LINK_EFFICIENCY["blackwell"] = NVLS_LINK_EFFICIENCY["hopper"] * 0.74 / 0.85


def nvls_allreduce_algbw(gpu_bw: float, p: int, generation: str) -> float:
    """Algorithm bandwidth (GB/s) of NVLS allreduce inside one domain of ``p`` GPUs, each
    ``gpu_bw`` GB/s (line rate) to the switch: ``gpu_bw * eff * p / (p + 1)``."""
    eff = NVLS_LINK_EFFICIENCY.get(generation, NVLS_LINK_EFFICIENCY["hopper"])
    return gpu_bw * eff * p / (p + 1)


def nsteps_of(collective: str, ranks: int) -> int:
    """NCCL's ring step count (tuning.cc:376-381), bus = algbw * nsteps / ranks."""
    return 2 * (ranks - 1) if collective == "allreduce" else ranks - 1


#: tuning.cc:623-627 treeCorrectionFactor [protocol][log2(bytes / 64)]
TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    + (1.0,) * 5,
    (1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9)
    + (0.9, 0.9, 0.9, 1.0, 1.0, 1.0),
    (0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8)
    + (0.7, 0.7, 0.8, 0.9, 0.9, 0.9),
)
#: topo.h:21-24 NVLink GB/s per link that NCCL assumes / line rate per link and direction.
NVLINK_EFFICIENCY = {
    "volta": 20.0 / 25,
    "ampere": 20.0 / 25,
    "hopper": 20.6 / 25,
    "blackwell": 40.1 / 50,
}
#: Calibrated on the logs marked "calibration" in solver.simulate.calibration (see there).
NET_EFFICIENCY = 0.87
XGMI_EFFICIENCY = 0.67
#: Channels assumed for the per-channel caps (NCCL runs 16-32 on 8-GPU NVSwitch/xGMI boxes).
CHANNELS = 16
#: getNetOverhead, tuning.cc:228-233 (us per ring step, Intel host; AMD hosts 2.0).
NET_OVERHEAD_US = 1.0
#: NCCL_BUFFSIZE default, src/init.cc:813 (4 MiB), cut into NCCL_STEPS = 8 steps
#: (src/include/device.h:26). Tree/Simple moves one step per chunk (enqueue.cc:2222-2223, chunkSteps
#: is 1 for every algorithm but Ring); NCCL splits the message evenly over its channels.
DEFAULT_BUFFSIZE = 1 << 22
NCCL_STEPS = 8
#: src/include/device.h:91 MAXCHANNELS: the most NCCL_MAX_NCHANNELS / NCCL_MIN_NCHANNELS can ask for
#: (src/graph/connect.cc:338-357 clamps both to it, and a maximum below 1 to 1).
MAX_CHANNELS = 64
#: Networks without GPUDirect RDMA (``net=`` of :class:`Library`): "tcpx" = GPUDirect-TCPX
#: (GCP A3 High/Edge): a CPU thread per socket moves each NCCL step over TCP and the receiver's
#: kernel unpacks it (an NCCL_NET_DEVICE_UNPACK plugin, google/nccl-plugin-gpudirecttcpx
#: src/devcomm/); see :func:`tcpx_net_bandwidth`.
NETS = ("rdma", "tcpx")
#: The hosts' CPU architecture (``host=`` of :class:`Library`): NCCL applies the tree correction
#: factors to NVLSTree only on x86 hosts of Blackwell GPUs (tuning.cc:643-646); Grace (arm) hosts
#: of GB200/GB300 NVL72 systems do not get it.
HOSTS = ("x86", "arm")
#: Effective cost (us) a GPUDirect-TCPX step pays besides its wire time, one channel's steps one
#: after another. Calibrated on the one TCPX log of the calibration set (SkyPilot's A3 High
#: allreduce table, tests/data/real/logs; see solver.simulate.calibration.fit_tcpx_step).
TCPX_STEP_US = 42.8
#: What every NCCL call across boxes pays besides NCCL's tuner latency (us), over GPUDirect RDMA
#: or TCPXO (``net="rdma"``): fitted on the NCCL calibration logs' 1-64 MiB sizes
#: (solver.simulate.calibration.fit_call_cost). See :meth:`Tuner.call_cost`.
CALL_COST_US = 37.5


@dataclass(frozen=True)
class Library:
    """The library and hardware generation whose tuner is modelled, and the run's settings.

    ``name``: "nccl" or "rccl"; ``generation``: volta/ampere/hopper/blackwell (NVIDIA) or
    cdna2/cdna3/cdna4 (AMD; NCCL's Ampere/Hopper/Blackwell bandwidth caps, as RCCL derives from
    them, and RCCL's own latencies, :mod:`solver.simulate.rccl_tuning`); ``nvls``: NVSwitch with in-switch reduction (NVLink SHARP, Hopper and later).
    The environment a site may impose: ``algos`` (``NCCL_ALGO``; empty = all), ``protos``
    (``NCCL_PROTO``; empty = the default set), ``buffsize`` (``NCCL_BUFFSIZE``, bytes) and
    ``forced``: (collective, algorithm) pairs a tuner plugin imposes at every size.
    """

    name: str = "nccl"
    generation: str = "ampere"
    nvls: bool = False
    algos: tuple[str, ...] = ()
    protos: tuple[str, ...] = ()
    buffsize: int = DEFAULT_BUFFSIZE
    forced: tuple[tuple[str, str], ...] = ()
    #: NCCL_MAX_NCHANNELS / NCCL_MIN_NCHANNELS (0 = not set), see :func:`channel_count`
    max_channels: int = 0
    min_channels: int = 0
    #: the network transport: "rdma" (GPUDirect RDMA or TCPXO, the calibrated default) or "tcpx"
    net: str = "rdma"
    #: the hosts' CPU architecture, see :data:`HOSTS`
    host: str = "x86"

    @property
    def gen_index(self) -> int:
        amd = {"cdna2": 1, "cdna3": 2, "cdna4": 3}
        return amd.get(self.generation, _GEN_INDEX.get(self.generation, 1))

    @property
    def intra_efficiency(self) -> float:
        if self.name == "rccl":
            return XGMI_EFFICIENCY
        return NVLINK_EFFICIENCY.get(self.generation, 0.8)

    @property
    def ll128(self) -> bool:
        """Whether LL128 may run. NCCL (tuning.cc:517-533 @5067397c) enables it by default on every
        GPU from sm 70 on whose rings stay on NVLink inside the box (``typeIntra <= PATH_NVB``)
        and reach the NIC through PCIe switches (``typeInter <= PATH_PXB``; up to PXN on
        Hopper/Blackwell): the NVLink condition is applied per fabric in :func:`tuner`, the NIC
        placement is assumed (a NIC beside each GPU pair, as on rail fabrics). Older models of
        this module had it on Hopper/Blackwell only. RCCL enables it on gfx94x/95x."""
        if self.protos:
            return "LL128" in self.protos
        if self.name == "nccl":
            return self.generation in _GEN_INDEX
        return self.generation in ("cdna3", "cdna4")

    def allows(self, algo: str, proto: str, collective: str) -> bool:
        """Whether the run's settings let the tuner pick (algo, proto) for ``collective``."""
        forced = dict(self.forced).get(collective)
        if forced is not None and algo != forced:
            return False
        if self.algos and algo not in self.algos:
            return False
        if self.protos and proto not in self.protos:
            return False
        return proto != "LL128" or self.ll128

    @property
    def label(self) -> str:
        parts = [f"{self.name} {self.generation}"]
        if self.nvls:
            parts.append("with NVLS")
        if self.algos:
            parts.append("algo " + ",".join(self.algos))
        if self.protos:
            parts.append("proto " + ",".join(self.protos))
        if self.buffsize != DEFAULT_BUFFSIZE:
            parts.append(f"buffsize {self.buffsize >> 20} MiB")
        parts += [f"{c} forced to {a}" for c, a in self.forced]
        if self.max_channels:
            parts.append(f"max {self.max_channels} channels")
        if self.min_channels:
            parts.append(f"min {self.min_channels} channels")
        if self.net != "rdma":
            parts.append(f"net {self.net}")
        if self.host != "x86":
            parts.append(f"host {self.host}")
        return " ".join(parts)

    @property
    def nvls_tree_corrected(self) -> bool:
        """Whether NCCL scales NVLSTree allreduce by the tree correction factors
        (tuning.cc:643-646: ``minCompCap >= 100`` and an x86 CPU)."""
        return self.name == "nccl" and self.generation == "blackwell" and self.host == "x86"


#: Library per template (``Topology.extra["template"]``); other fabrics get ``Library()``.
TEMPLATE_LIBRARY = {
    "dgx_a100": Library("nccl", "ampere", False),
    "dgx_h100_rail": Library("nccl", "hopper", True),
    "superpod": Library("nccl", "hopper", True),  # DGX H100 nodes
    "nvl72": Library("nccl", "blackwell", True, host="arm"),  # GB200: Grace hosts
    "nvl72_racks": Library("nccl", "blackwell", True, host="arm"),
    "hpn": Library("nccl", "hopper", True),  # H800 hosts
    "clos3": Library("nccl", "hopper", True),  # H100 (Grand Teton) hosts
    "mi250": Library("rccl", "cdna2", False),
}


#: RCCL architecture (``gcn`` attribute, numeric gcnArch mapped as RCCL maps it) -> generation;
#: gfx906/gfx908 (MI50/MI100) have no tables of their own here: CDNA2's, said in the reason
AMD_GENERATION = {
    "gfx906": "cdna2",
    "gfx908": "cdna2",
    "gfx90a": "cdna2",
    "gfx940": "cdna3",
    "gfx941": "cdna3",
    "gfx942": "cdna3",
    "gfx950": "cdna4",
}
#: ``--intra`` preset GPU -> library
INTRA_LIBRARY = {
    "a100": Library("nccl", "ampere", False),
    "h100": Library("nccl", "hopper", True),
    "b200": Library("nccl", "blackwell", True),
    "mi300x": Library("rccl", "cdna3", False),
}


def _nvidia_generation(sm: int) -> str:
    """NCCL's compute-capability bands (sm 70 Volta, 80/86/89 Ampere tables, 90 Hopper,
    100+ Blackwell: tuning.cc picks its tables by ``compCap``)."""
    if sm >= 100:
        return "blackwell"
    if sm >= 90:
        return "hopper"
    if sm >= 80:
        return "ampere"
    return "volta"


def pick_library(topo: Topology) -> tuple[Library, str]:
    """The library and generation the fabric's hardware runs, and why, in words.

    In order: the file's own ``extra["library"]`` ("nccl:hopper:nvls"); the GPUs of an imported
    dump (``gcn`` -> RCCL CDNA2/3/4; else ``sm`` -> NCCL Volta/Ampere/Hopper/Blackwell, with NVLS
    when sm >= 90 GPUs share an NVSwitch); the ``--intra`` preset a skeleton dump was imported
    with; the template; else NCCL's Ampere tables (said so: choose with ``--library``)."""
    spec = topo.extra.get("library") if topo.extra else None
    if isinstance(spec, str) and spec:
        return parse_library(spec), f"the file sets library {spec!r}"
    gpus = [n for n in topo.nodes if n.is_compute]
    gcn = sorted({str(n.extra["gcn"]) for n in gpus if n.extra and n.extra.get("gcn")})
    if gcn:
        from solver.io.nccl.rates import gcn_arch_name

        arch = gcn_arch_name(gcn[0])
        gen = AMD_GENERATION.get(arch.split(":")[0], "cdna3")
        known = arch.split(":")[0] in AMD_GENERATION and arch.split(":")[0] not in (
            "gfx906",
            "gfx908",
        )
        how = "" if known else f" (no tables for {arch}: {gen.upper()}'s)"
        named = arch if arch == gcn[0] else f"{gcn[0]} = {arch}"
        return Library("rccl", gen, False), f"AMD GPUs (gcn {named}){how}"
    sms = sorted(
        {int(n.extra["sm"]) for n in gpus if n.extra and str(n.extra.get("sm", "")).isdigit()}
    )
    if sms:
        gen = _nvidia_generation(sms[0])
        nvswitch = any(n.role == "nvswitch" for n in topo.nodes)
        nvls = gen in ("hopper", "blackwell") and nvswitch
        why = f"NVIDIA GPUs (sm {sms[0]})" + (" on an NVSwitch: NVLS" if nvls else "")
        # NVLink-C2C between GPU and CPU exists only on Grace (arm) superchips (GH200/GB200/GB300)
        c2c = any((link.extra or {}).get("link_class") == "c2c" for link in topo.links)
        host = "arm" if c2c else "x86"
        if c2c:
            why += "; C2C links to the CPU: Grace (arm) hosts"
        return Library("nccl", gen, nvls, host=host), why
    preset = str(topo.extra.get("intra_hardware", "")) if topo.extra else ""
    if preset in INTRA_LIBRARY:
        return INTRA_LIBRARY[preset], f"--intra preset {preset}"
    template = str(topo.extra.get("template", "")) if topo.extra else ""
    if template in TEMPLATE_LIBRARY:
        lib = TEMPLATE_LIBRARY[template]
        arm = " (Grace hosts: host=arm)" if lib.host == "arm" else ""
        return lib, f"template {template}{arm}"
    return Library(), "no GPU model in the file: NCCL's Ampere tables (choose with --library)"


def library_for(topo: Topology) -> Library:
    """The library a fabric's hardware runs (:func:`pick_library`)."""
    return pick_library(topo)[0]


def library_reason(topo: Topology) -> str:
    """Why :func:`library_for` picked what it did, in words."""
    return pick_library(topo)[1]


def parse_library(spec: str) -> Library:
    """``nccl:hopper``, ``nccl:hopper:nvls``, ``rccl:cdna3`` ... followed by optional settings:
    ``algo=ring+tree`` (NCCL_ALGO), ``proto=simple`` (NCCL_PROTO), ``buffsize=8M``
    (NCCL_BUFFSIZE), ``allreduce=tree`` (a tuner plugin forcing one algorithm), ``channels=2``
    (NCCL_MAX_NCHANNELS; ``maxchannels=`` is the same), ``minchannels=8`` (NCCL_MIN_NCHANNELS)
    ``net=tcpx`` (GPUDirect-TCPX, no GPUDirect RDMA; ``net=rdma`` is the default) and
    ``host=arm`` (Grace hosts; ``host=x86`` is the default)."""
    parts = [p.strip() for p in spec.split(":") if p.strip()]
    if not parts or parts[0].lower() not in ("nccl", "rccl"):
        raise ForestCollError(f"bad library {spec!r} (use e.g. nccl:hopper:nvls or rccl:cdna3)")
    name = parts[0].lower()
    gen = parts[1].lower() if len(parts) > 1 else ("cdna3" if name == "rccl" else "ampere")
    known = set(_GEN_INDEX) | {"cdna2", "cdna3", "cdna4"}
    if gen not in known:
        raise ForestCollError(
            f"bad generation {gen!r} in {spec!r} (one of {', '.join(sorted(known))})"
        )
    lib = Library(name, gen, False)
    for opt in parts[2:]:
        lib = _apply_option(lib, opt, spec)
    return lib


_ALGO_NAMES = {a.lower(): a for a in ALGOS}
_PROTO_NAMES = {p.lower(): p for p in PROTOS}
_COLLECTIVES = ("allgather", "reduce-scatter", "allreduce")


def _names(value: str, table: dict, what: str, spec: str) -> tuple[str, ...]:
    out = []
    for v in value.replace(",", "+").split("+"):
        if v.strip().lower() not in table:
            raise ForestCollError(
                f"bad {what} {v!r} in library {spec!r} (one of {', '.join(table.values())})"
            )
        out.append(table[v.strip().lower()])
    return tuple(out)


def _apply_option(lib: Library, opt: str, spec: str) -> Library:
    key, _, value = opt.partition("=")
    key = key.strip().lower()
    if key == "nvls" and not value:
        return replace(lib, nvls=True)
    if key == "algo":
        return replace(lib, algos=_names(value, _ALGO_NAMES, "algorithm", spec))
    if key == "proto":
        return replace(lib, protos=_names(value, _PROTO_NAMES, "protocol", spec))
    if key == "buffsize":
        m = re.fullmatch(r"(\d{1,12})([KMG]?)", value.strip().upper())
        size = int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)] if m else 0
        if size < NCCL_STEPS:
            raise ForestCollError(f"bad buffsize {value!r} in library {spec!r} (e.g. buffsize=8M)")
        return replace(lib, buffsize=size)
    if key in _COLLECTIVES and value:
        (algo,) = _names(value, _ALGO_NAMES, "algorithm", spec)[:1]
        return replace(lib, forced=lib.forced + ((key, algo),))
    if key in ("channels", "maxchannels", "minchannels"):
        v = value.strip()
        if not (v.isdigit() and len(v) <= 3 and 1 <= int(v) <= MAX_CHANNELS):
            raise ForestCollError(
                f"bad {key} {value!r} in library {spec!r} (a channel count 1..{MAX_CHANNELS})"
            )
        if key == "minchannels":
            return replace(lib, min_channels=int(v))
        return replace(lib, max_channels=int(v))
    if key == "net":
        v = value.strip().lower()
        if v not in NETS:
            raise ForestCollError(
                f"bad net {value!r} in library {spec!r} (one of {', '.join(NETS)})"
            )
        return replace(lib, net=v)
    if key == "host":
        v = value.strip().lower()
        if v not in HOSTS:
            raise ForestCollError(
                f"bad host {value!r} in library {spec!r} (one of {', '.join(HOSTS)})"
            )
        return replace(lib, host=v)
    raise ForestCollError(
        f"bad library setting {opt!r} in {spec!r} (nvls, algo=, proto=, buffsize=, allreduce=ALGO, "
        "channels=, minchannels=, net= or host=)"
    )


# ----------------------------------------------------------------------------- fabric shape
@dataclass(frozen=True)
class Shape:
    """What the library's graph search sees: boxes, GPUs per box, bandwidths (GB/s, nominal)."""

    ranks: int
    boxes: int
    ppn: int  # GPUs per box (the smallest box)
    intra: float  # least over GPUs of NVLink/xGMI bandwidth to the rest of the box (no PCIe)
    net: float  # least over boxes of bandwidth leaving the box (0 for one box)
    nvswitch: bool  # every box has an NVSwitch
    gpu_fabric: bool = True  # every GPU has NVLink/xGMI links (else ``intra`` is its PCIe)
    nics: int = 0  # NICs per box (least over boxes; nodes of role "nic"), 0 when none are drawn


def _is_net_link(link: Link, group: dict, role: dict) -> bool:
    gs, gt = group.get(link.source), group.get(link.target)
    return gs != gt or role.get(link.source) == "nic" or role.get(link.target) == "nic"


#: link classes of an imported dump that are not the GPU fabric (NVLink/xGMI): a GPU's PCIe link
#: to its switch or CPU carries the NIC traffic and host copies, not NCCL's intra-node rings
#: (ncclTopoCompute searches NVLink/xGMI paths first and falls back to PCIe only without them)
HOST_LINK_CLASSES = ("pcie", "pci", "sys", "net")
HOST_ROLES = ("cpu", "pcie", "nic")


def _is_gpu_fabric_link(link: Link, role: dict) -> bool:
    cls = (link.extra or {}).get("link_class")
    if cls in HOST_LINK_CLASSES:
        return False
    return role.get(link.source) not in HOST_ROLES and role.get(link.target) not in HOST_ROLES


def shape_of(topo: Topology) -> Shape:
    """Boxes are the compute nodes' ``group`` (none: one box)."""
    group = {n.id: n.group for n in topo.nodes}
    role = {n.id: n.role for n in topo.nodes}
    compute = topo.compute_ids
    boxes: dict = {}
    for c in compute:
        boxes.setdefault(group[c], []).append(c)
    intra = {c: 0.0 for c in compute}
    host = {c: 0.0 for c in compute}  # PCIe: NCCL's rings use it only without NVLink/xGMI
    out = {b: 0.0 for b in boxes}
    for link in topo.links:
        ends = [(link.source, link.target)] + (
            [] if link.directed else [(link.target, link.source)]
        )
        for u, v in ends:
            if _is_net_link(link, group, role):
                if group.get(u) in out and group.get(v) != group.get(u):
                    out[group[u]] += float(link.bandwidth)
            elif u in intra:
                into = intra if _is_gpu_fabric_link(link, role) else host
                into[u] += float(link.bandwidth)
    nvsw = {group[n.id] for n in topo.nodes if n.role == "nvswitch"}
    nic_count = {b: 0 for b in boxes}
    for n in topo.nodes:
        if n.role == "nic" and n.group in nic_count:
            nic_count[n.group] += 1
    gpu_fabric = all(v > 0 for v in intra.values())
    if not gpu_fabric:
        intra = {c: intra[c] or host[c] for c in compute}
    return Shape(
        ranks=len(compute),
        boxes=len(boxes),
        ppn=min(len(v) for v in boxes.values()),
        intra=min(intra.values()),
        net=min(out.values()) if len(boxes) > 1 else 0.0,
        nvswitch=all(b in nvsw for b in boxes),
        gpu_fabric=gpu_fabric,
        nics=min(nic_count.values()) if nic_count else 0,
    )


# ----------------------------------------------------------------------------- the tuner
@dataclass(frozen=True)
class Choice:
    """One (algorithm, protocol) with NCCL's model numbers: ``bw`` algorithm bandwidth GB/s.

    ``chunk`` > 0 marks a store-and-forward pipeline (Tree/Simple): each of ``channels`` channels
    moves its share of the message in chunks of ``chunk`` bytes, and a chunk needs ``path``
    seconds per byte to cross every hop of the tree (see :func:`_tree_path`)."""

    algorithm: str
    protocol: str
    bw: float
    latency_us: float
    chunk: int = 0
    channels: int = CHANNELS
    path: float = 0.0
    capped: bool = False  # bw lowered to the forward-only bound (see :func:`tuner`)
    #: GPUDirect-TCPX ring: (ranks, nsteps, channels, step bytes, wire share bytes/s), see
    #: :func:`tcpx_ring_time`; empty for every other choice
    tcpx: tuple = ()
    #: NVLSTree scaled by the tree correction factors (Blackwell on x86, tuning.cc:643-646)
    corrected: bool = False

    def time(self, size: int, collective: str, ranks: int) -> float:
        """Seconds for ``size`` bytes: ``lat + bytes / bw`` (tuning.cc:630-655), plus the
        pipeline fill of a chunked tree (:meth:`fill`)."""
        bw = self.bw
        log_size = int(math.log2(size >> 6)) if size >= 64 else -1
        proto = PROTOS.index(self.protocol)
        if self.chunk:
            return self.latency_us * 1e-6 + self.fill(size)
        if self.tcpx:
            ranks, nsteps, channels, step, share = self.tcpx
            net = tcpx_ring_time(size, ranks, nsteps, channels, step, share)
            return self.latency_us * 1e-6 + max(net, size / (1e9 * bw))
        if self.algorithm == "Tree" and collective == "allreduce" and 0 <= log_size < 23:
            bw *= TREE_CORRECTION[proto][log_size]
        if self.corrected and collective == "allreduce" and 0 <= log_size < 24:
            bw *= TREE_CORRECTION[proto][log_size]  # NVLSTree, tuning.cc:643-646
        lat = self.latency_us
        return (lat + size / (1000.0 * bw)) * 1e-6

    def fill(self, size: int) -> float:
        """Seconds of a chunked tree for ``size`` bytes, latency excluded.

        Each channel carries ``size / channels`` bytes. Up to one chunk per channel, the data
        crosses the tree hop after hop (a hop forwards a chunk once it has all of it):
        ``per_channel * path``. Beyond, chunks stream at the algorithm bandwidth and only the
        first one pays the path: ``size / bw + chunk * (path - channels / bw)``."""
        per_channel = size / self.channels
        if per_channel <= self.chunk:
            return per_channel * self.path
        slot = self.channels / (self.bw * 1e9)
        return size / (self.bw * 1e9) + self.chunk * max(self.path - slot, 0.0)

    @property
    def label(self) -> str:
        return f"{self.algorithm}/{self.protocol}"


@dataclass(frozen=True)
class Tuner:
    """All (algorithm, protocol) pairs the library would consider for one collective."""

    collective: str
    library: Library
    shape: Shape
    choices: tuple[Choice, ...]

    def best(self, size: int) -> tuple[Choice, float]:
        """The pair the library runs for ``size`` bytes and its time (s)."""
        timed = [(self.time(c, size), c) for c in self.choices]
        t, c = min(timed, key=lambda tc: tc[0])
        return c, t

    @property
    def call_cost(self) -> float:
        """Seconds every call pays besides the tuner's latencies: :data:`CALL_COST_US` for NCCL
        across boxes over RDMA/TCPXO, else 0.

        NCCL's latencies (tuning.cc:149-176) are per hop; with them alone the model is up to
        +71 % fast at 1 MiB on the NCCL calibration logs across boxes, and +109 % on a held-out
        one: those runs pay a floor per call that the tuner has no term for (its parts, e.g.
        the proxy thread's network posts and the NICs' completions, are not separated by
        the logs). It is the same for every algorithm, so it changes no choice. Not added within
        one box (no network proxy), over GPUDirect-TCPX (its per-step cost is
        :data:`TCPX_STEP_US`), nor for RCCL (its own latencies, :mod:`solver.simulate.rccl_tuning`;
        no RCCL log across boxes to fit it on besides the 2x MI300X one, whose floor is 5x the
        MI355X run's)."""
        if self.library.name != "nccl" or self.library.net != "rdma" or self.shape.boxes < 2:
            return 0.0
        return CALL_COST_US * 1e-6

    def time(self, c: Choice, size: int) -> float:
        """Seconds of choice ``c`` for ``size`` bytes, with the x1.4 latency "plateau" of
        multi-node Simple ring allreduce (tuning.cc:647-650, sm80 and later) and the per-call
        cost across boxes (:attr:`call_cost`)."""
        t = c.time(size, self.collective, self.shape.ranks) + self.call_cost
        if (
            self.library.name != "rccl"  # RCCL's HIP build has no plateau (rccl_tuning)
            and c.algorithm == "Ring"
            and c.protocol == "Simple"
            and self.collective == "allreduce"
            and self.shape.boxes > 1
            and size / (CHANNELS * self.shape.ranks) >= 64
        ):
            t += 0.4 * c.latency_us * 1e-6
        return t


#: algorithms whose switches reduce in the network: only they may beat the forward-only bound
IN_SWITCH = ("NVLS", "NVLSTree")


def tuner(
    topo: Topology,
    collective: str,
    library: Library | None = None,
    bound_algbw: float | None = None,
) -> Tuner:
    """NCCL's bandwidth/latency table for ``collective`` on ``topo`` (see the module docstring).

    ``bound_algbw``: the fabric's forward-only optimum at line rate (GB/s). No schedule that only
    forwards (Ring, Tree, PAT) can beat it, so their bandwidth is capped there; a capped choice
    is marked (``Choice.capped``). Only in-switch reduction (:data:`IN_SWITCH`) may exceed it."""
    if collective not in ("allgather", "reduce-scatter", "allreduce"):
        raise ForestCollError(f"unknown collective {collective!r}")
    lib = library or library_for(topo)
    sh = shape_of(topo)
    if sh.ranks < 2:
        raise ForestCollError("the library model needs at least two compute nodes")
    n, nodes, ppn = sh.ranks, sh.boxes, sh.ppn
    gi = lib.gen_index
    ni = 0 if nodes == 1 else (1 if nodes == 2 else 2)
    intra_full = sh.intra * lib.intra_efficiency
    net_full = sh.net * NET_EFFICIENCY
    nch = channel_count(lib, sh)
    intra, net = channel_bandwidths(lib, sh, intra_full, net_full)
    if nodes == 1:
        ring_bus = intra
    else:
        ring_bus = min(intra * ppn / max(ppn - 1, 1) if ppn > 1 else math.inf, net)
    # tuning.cc:306: NCCL rates a tree on <= 2 nodes by its intra-node graph bandwidth; on two
    # nodes each box also sends the message once over its NICs (half of it per tree), so the NICs
    # cap it at twice their bandwidth in bus terms (algbw = bus / 2, tuning.cc:380).
    if nodes == 1:
        tree_total = intra
    elif nodes == 2:
        tree_total = min(intra, 2 * net)
    else:
        tree_total = min(intra, net)
    nsteps = 2 * (n - 1) if collective == "allreduce" else n - 1
    ll_max = LL_MAX_BW[gi if nodes == 1 else 0][ni]
    choices = []
    intra_hw = "nvlink" if sh.gpu_fabric else "pci"
    rccl = lib.name == "rccl"
    for algo in ALGOS:
        if collective == "allreduce" and algo == "PAT":
            continue
        if collective != "allreduce" and algo in ("Tree", "NVLSTree"):
            continue
        if algo in ("NVLS", "NVLSTree") and not (
            lib.nvls and sh.nvswitch and NVLS_EFFICIENCY[gi] > 0
        ):
            continue
        if algo == "NVLS" and (nodes > 1 or collective != "allreduce" and ppn < 2):
            continue  # multi-node NVLS needs CollNet (tuning.cc:354-372)
        if algo == "NVLSTree" and nodes == 1:
            continue
        if algo == "PAT" and ppn != 1:
            continue  # PAT runs with one GPU per node only
        for pi, proto in enumerate(PROTOS):
            if algo in ("NVLS", "NVLSTree", "PAT") and proto != "Simple":
                continue
            if not lib.allows(algo, proto, collective):
                continue
            if proto == "LL128" and not lib.protos and not rccl and not sh.gpu_fabric:
                continue  # tuning.cc:530: no LL128 by default off NVLink (typeIntra > NVB)
            if rccl and algo == "Tree" and proto == "Simple":
                if RT.skips_tree_simple(lib.generation, nodes):
                    continue
            bus = _bus_bandwidth(
                algo, proto, collective, lib, sh, ring_bus, tree_total, ll_max, gi, ni
            )
            if bus <= 0:
                continue
            if algo == "Tree":
                alg_bw = bus * 0.5
            elif algo == "PAT" and collective != "allreduce":
                alg_bw = bus  # tuning.cc:377: no ratio for non-ring allgather/reduce-scatter
            else:
                alg_bw = bus * n / nsteps
            capped = bool(bound_algbw) and algo not in IN_SWITCH and alg_bw > bound_algbw
            if capped:
                alg_bw = bound_algbw
            lat = _latency(algo, pi, collective, sh, intra_hw, nsteps, rccl)
            if algo == "Tree" and proto == "Simple":
                chunk = lib.buffsize // NCCL_STEPS
                path = _tree_path(sh, intra_full, net_full)
                choices.append(Choice(algo, proto, alg_bw, lat, chunk, nch, path, capped))
            elif algo == "Ring" and lib.net == "tcpx" and nodes > 1:
                # the network part is tcpx_ring_time; alg_bw (at most the TCPX network's own
                # large-size limit) still bounds it, and the latency is NCCL's intra-node part
                tcpx = (n, nsteps, nch, lib.buffsize / NCCL_STEPS, sh.net / nch * 1e9)
                lat_intra = _latency(
                    algo, pi, collective, replace(sh, boxes=1), intra_hw, nsteps, rccl
                )
                choices.append(Choice(algo, proto, alg_bw, lat_intra, capped=capped, tcpx=tcpx))
            else:
                corrected = algo == "NVLSTree" and lib.nvls_tree_corrected
                choices.append(Choice(algo, proto, alg_bw, lat, capped=capped, corrected=corrected))
    if not choices:
        raise ForestCollError("no algorithm of the library applies to this fabric")
    return Tuner(collective, lib, sh, tuple(choices))


def default_channels(lib: Library, sh: Shape) -> int:
    """The channels NCCL runs without NCCL_MAX/MIN_NCHANNELS: the model's :data:`CHANNELS`; on an
    unpack network (GPUDirect-TCPX) across boxes, one ring per NIC (the NIC's 25 GB/s is below
    the next search speed, sm90SpeedArrayInter, src/graph/search.cc:1058) doubled
    (src/graph/connect.cc:486-490: "Double the number of channels when using unpack networking",
    not past 16)."""
    if lib.net == "tcpx" and sh.boxes > 1 and sh.nics:
        return 2 * sh.nics if sh.nics < 16 else sh.nics
    return CHANNELS


def channel_count(lib: Library, sh: Shape) -> int:
    """Channels of the run: NCCL_MAX_NCHANNELS caps the default, then NCCL_MIN_NCHANNELS copies
    channels up to its value (src/graph/connect.cc:503-505, both clamped to 1..MAXCHANNELS,
    :340-357)."""
    n = default_channels(lib, sh)
    if lib.max_channels:
        n = min(n, lib.max_channels)
    if lib.min_channels:
        n = max(n, lib.min_channels)
    return max(1, min(n, MAX_CHANNELS))


def channel_bandwidths(lib: Library, sh: Shape, intra: float, net: float) -> tuple[float, float]:
    """(intra, net) bus bandwidths (GB/s) the run's channels can carry.

    NCCL's bus bandwidth is ``nChannels * bw`` with ``bw`` the per-channel bandwidth of its graph
    search (src/graph/tuning.cc:324): each channel is one ring/tree with its own share of the
    links. So a cap to ``c`` of the ``C`` channels the search fills the links with leaves
    ``c / C`` of the bandwidth (NCCL_MAX_NCHANNELS, applied after the search,
    src/graph/connect.cc:503); channels copied past ``C`` by NCCL_MIN_NCHANNELS (copyChannels)
    share the same links and add nothing. GPUDirect-TCPX's network is limited by its steps
    instead (:func:`tcpx_net_bandwidth`). NVLS has channels of its own and is not capped here."""
    c = channel_count(lib, sh)
    full = CHANNELS
    scale = min(c, full) / full
    intra = intra * scale
    if lib.net == "tcpx":
        net = tcpx_net_bandwidth(lib, sh, c)
    else:
        net = net * scale
    return intra, net


def tcpx_net_bandwidth(lib: Library, sh: Shape, channels: int | None = None) -> float:
    """GB/s one box sends over GPUDirect-TCPX with ``channels`` channels.

    Each channel leaves the box through one NIC (channels spread evenly over the box's NICs, so a
    channel's wire share is ``net / channels``) and moves its data in NCCL steps of
    ``NCCL_BUFFSIZE / NCCL_STEPS`` bytes (src/include/device.h:26). Over TCPX a step is sent
    by a CPU thread and unpacked by the receiver's kernel; one channel's steps are taken as one
    after another, each paying :data:`TCPX_STEP_US` besides its wire time:
    ``per channel = step / (TCPX_STEP_US + step / share)``. The wire is at line rate (the step
    cost stands for TCP's overhead; :data:`NET_EFFICIENCY` is the RDMA/TCPXO figure)."""
    if sh.boxes < 2 or sh.net <= 0:
        return 0.0
    c = channels or channel_count(lib, sh)
    step = lib.buffsize / NCCL_STEPS
    share = sh.net / c * 1e9  # bytes/s
    per = step / (TCPX_STEP_US * 1e-6 + step / share)
    return c * per / 1e9


def tcpx_ring_time(
    size: int, ranks: int, nsteps: int, channels: int, step: float, share: float
) -> float:
    """Seconds of a ring over GPUDirect-TCPX across boxes, network part.

    Each of the ``nsteps`` ring steps moves ``size / (ranks * channels)`` bytes per channel,
    in TCPX steps of at most ``step`` bytes, one after another on the channel's network hop, each
    paying :data:`TCPX_STEP_US` besides its wire time at ``share`` bytes/s (see
    :func:`tcpx_net_bandwidth`, of which this is the large-size limit). Small messages thus pay
    ``nsteps`` step costs: NCCL's tuner has no such term (its net latency, tuning.cc:156-176, is
    per network hop), but the TCPX calibration log shows it (1 MiB allreduce on 16 ranks:
    1.48 ms, about 30 ring steps x 43 us)."""
    chunk = size / (ranks * channels)
    pieces = max(1, math.ceil(chunk / step))
    return nsteps * (pieces * TCPX_STEP_US * 1e-6 + chunk / share)


def _tree_path(sh: Shape, intra: float, net: float) -> float:
    """Seconds per byte for one channel's chunk to go up and down NCCL's tree: ``ppn - 1`` chain
    hops inside each box and ``log2(boxes)`` network hops, each way (the depths of
    tuning.cc:416), every hop at its link's bandwidth shared by the ``CHANNELS`` channels."""
    hops_in = 2 * (sh.ppn - 1)
    hops_net = 2 * (math.log2(sh.boxes) if sh.boxes > 1 else 0)
    per = 0.0
    if hops_in:
        per += hops_in / max(intra, 1e-9)
    if hops_net:
        per += hops_net / max(net, 1e-9)
    return per * CHANNELS / 1e9


def _bus_bandwidth(algo, proto, collective, lib, sh, ring_bus, tree_total, ll_max, gi, ni) -> float:
    """Bus bandwidth (GB/s) with the protocol refinements of tuning.cc:308-337."""
    if algo == "Ring":
        bus = ring_bus
        if proto == "LL":
            bus = min(ll_max, bus * 0.5)
        elif proto == "LL128":
            bus = min(bus * 0.92, CHANNELS * RING_LL128_BW[gi][ni])
        return bus
    if algo == "Tree":
        # tuning.cc:330-331 derates the tree by 0.92. Not on two boxes: there the bound is the
        # NVLink/NIC rate we already derate (with it, the A3 Mega log ends 7 % low and the refit
        # of the two efficiencies drifts to net 0.98 / xGMI 0.66; without it 0.91 / 0.70).
        derate = 1.0 if sh.boxes == 2 else 0.92
        bus = min(tree_total * derate, CHANNELS * TREE_BW[gi][ni])
        if proto == "LL":
            bus = min(bus / 3.8, ll_max)
        elif proto == "LL128":
            bus = min(
                bus * (7.0 / 9.0 if sh.boxes == 1 else 120.0 / 128.0),
                CHANNELS * TREE_LL128_BW[gi][ni],
            )
        return bus
    if algo in ("NVLS", "NVLSTree"):
        if collective == "allreduce":
            intra = (
                nvls_allreduce_algbw(sh.intra, sh.ppn, lib.generation)
                * nsteps_of(collective, sh.ranks)
                / sh.ranks
            )
        else:  # NCCL's own formula (tuning.cc:311-316), not calibrated: no public figure
            intra = (
                sh.intra * lib.intra_efficiency * NVLS_EFFICIENCY[gi] * (CHANNELS - 1) / CHANNELS
            )
            intra *= (sh.ppn - 1) / sh.ppn
        if algo == "NVLS":
            return intra
        inter = sh.net * NET_EFFICIENCY * (2 if sh.boxes <= 2 else 1)
        return min(intra, inter, nvls_heads(sh) * NVLS_TREE_BW[gi][ni])
    if algo == "PAT":
        return ring_bus * 0.75
    return 0.0


def nvls_heads(sh: Shape) -> int:
    """Channels of NCCL's NVLS graph across boxes: one per NVLS "head", a GPU with its own NIC
    (src/graph/search.cc @5067397c: ``maxChannels = min(NCCL_MAX_NVLS_ARITY, GPUs)`` at
    :1125-1127, and the search pairs each NIC with its local GPU, a GPU with several NICs once,
    :754-770). NVLSTree's bus bandwidth is this count times the per-channel rate, capped by
    ``perChMaxNVLSTreeBws`` (tuning.cc:308-323), so 8 heads cap an H100 pair of boxes at
    8 x 57.7 GB/s. The fabric's NICs per box, at most its GPUs (no NICs drawn: its GPUs)."""
    return max(1, min(sh.nics or sh.ppn, sh.ppn))


def _latency(
    algo: str, pi: int, collective: str, sh: Shape, intra_hw: str, nsteps: int, rccl: bool = False
) -> float:
    """Latency (us) of tuning.cc:384-437; with ``rccl``, RCCL's own base and hardware latencies
    and its count of a ring's network steps (:mod:`solver.simulate.rccl_tuning`)."""
    nodes, ppn = sh.boxes, sh.ppn
    base, hw = (RT.BASE_LAT, RT.HW_LAT) if rccl else (BASE_LAT, HW_LAT)
    intra_lat = hw[intra_hw][algo][pi]
    inter_lat = hw["net"]["Tree" if ppn == 1 else algo][pi]
    lat = base[algo][pi]
    log_nodes = int(math.log2(nodes)) if nodes > 0 else 0
    if algo == "Ring":
        if nodes > 1:
            overhead = NET_OVERHEAD_US * (3 if PROTOS[pi] == "Simple" else 1)
            intra_lat = max(intra_lat, overhead)
        if rccl:
            inter_steps = RT.ring_inter_steps(collective, nodes)
        else:
            inter_steps = (
                0 if nodes == 1 else (2 * (nodes - 1) if collective == "allreduce" else nodes - 1)
            )
        return lat + (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat
    if algo == "Tree":
        return lat + 2 * ((ppn - 1) * intra_lat + log_nodes * inter_lat)
    if algo == "NVLS":
        return intra_lat + (inter_lat if nodes > 1 else 0.0)
    if algo == "NVLSTree":
        return lat + intra_lat + 2 * log_nodes * inter_lat
    # PAT
    return lat + log_nodes * (inter_lat / 3.5) + sh.ranks * 2.8


# ----------------------------------------------------------------------------- efficiency
def link_efficiency(topo: Topology, library: Library | None = None) -> list[float]:
    """Per link of ``topo``: the fraction of its bandwidth the library's transfers reach
    (network links: :data:`NET_EFFICIENCY`, over GPUDirect-TCPX :func:`tcpx_efficiency`;
    NVLink/xGMI: the library's intra efficiency). A channel cap is not applied here: it limits
    NCCL's own rings, not the links."""
    lib = library or library_for(topo)
    group = {n.id: n.group for n in topo.nodes}
    role = {n.id: n.role for n in topo.nodes}
    net_eff = tcpx_efficiency(topo, lib) if lib.net == "tcpx" else NET_EFFICIENCY
    return [
        net_eff if _is_net_link(link, group, role) else lib.intra_efficiency for link in topo.links
    ]


def tcpx_efficiency(topo: Topology, lib: Library) -> float:
    """The fraction of its NICs' line rate a box reaches over GPUDirect-TCPX with the run's
    channels and buffers (:func:`tcpx_net_bandwidth` / line rate): what a schedule run by the
    same NCCL transport (ForestColl through MSCCL) pays on the network links too."""
    sh = shape_of(topo)
    if sh.boxes < 2 or sh.net <= 0:
        return NET_EFFICIENCY
    return min(1.0, tcpx_net_bandwidth(lib, sh) / sh.net)


def derated(topo: Topology, library: Library | None = None) -> Topology:
    """``topo`` with every link at the bandwidth the library reaches on it (the same derating
    the library baseline gets, so that ForestColl run by MSCCL pays it too)."""
    eff = link_efficiency(topo, library)
    links = tuple(
        replace(link, bandwidth=link.bandwidth * Fraction(e).limit_denominator(10_000))
        for link, e in zip(topo.links, eff)
    )
    return replace(topo, links=links)


# ----------------------------------------------------------------------------- a run's settings
def library_spec(lib: Library) -> str:
    """The ``--library`` text that :func:`parse_library` reads back as ``lib``."""
    parts = [lib.name, lib.generation]
    if lib.nvls:
        parts.append("nvls")
    if lib.algos:
        parts.append("algo=" + "+".join(a.lower() for a in lib.algos))
    if lib.protos:
        parts.append("proto=" + "+".join(p.lower() for p in lib.protos))
    if lib.buffsize != DEFAULT_BUFFSIZE:
        size = lib.buffsize
        unit = next((u for u, sh in (("G", 30), ("M", 20), ("K", 10)) if size % (1 << sh) == 0), "")
        parts.append(f"buffsize={size >> {'G': 30, 'M': 20, 'K': 10, '': 0}[unit]}{unit}")
    parts += [f"{c}={a.lower()}" for c, a in lib.forced]
    if lib.max_channels:
        parts.append(f"channels={lib.max_channels}")
    if lib.min_channels:
        parts.append(f"minchannels={lib.min_channels}")
    if lib.net != "rdma":
        parts.append(f"net={lib.net}")
    if lib.host != "x86":
        parts.append(f"host={lib.host}")
    return ":".join(parts)


def _setting_names(value: str, table: dict) -> tuple[str, ...] | None:
    """An NCCL_ALGO / NCCL_PROTO value as names of ``table``: a plain list ("Ring,Tree"), or an
    exclusion ("^LL128": every other one); None for what the model cannot express (per-collective
    parts "allreduce:tree;...", unknown names)."""
    v = value.strip().lower().replace(" ", "")
    if not v or ";" in v or ":" in v:
        return None
    exclude = v.startswith("^")
    names = [x for x in v.lstrip("^").split(",") if x]
    if not names or any(x not in table for x in names):
        return None
    if exclude:
        return tuple(n for k, n in table.items() if k not in names)
    return tuple(table[x] for x in names)


def library_from_settings(settings: dict, base: Library) -> tuple[Library, list[str], list[str]]:
    """``base`` with the run settings a log shows (``Measurement.settings``: NCCL_ALGO,
    NCCL_PROTO, NCCL_BUFFSIZE, NCCL_MAX/MIN_NCHANNELS and their old names NCCL_MAX/MIN_NRINGS
    (src/graph/connect.cc:326-351), NCCL_NVLS_ENABLE=0, NCCL_GPUDIRECTTCPX_* variables = the TCPX
    plugin ran). Returns (library, settings used, settings left out and why)."""
    lib, used, left = base, [], []

    def take(key: str) -> str | None:
        value = settings.get(key)
        if value is None:
            return None
        if " | " in value:
            left.append(f"{key} (two values in the log: {value})")
            return None
        return value.strip()

    for key, known, field, listed in (
        ("NCCL_ALGO", _ALGO_NAMES, "algos", ALGOS),
        ("NCCL_PROTO", _PROTO_NAMES, "protos", PROTOS),
    ):
        value = take(key)
        if value is None:
            continue
        names = _setting_names(value, known)
        if names is None:
            left.append(f"{key}={value} (not a plain list of {', '.join(listed)})")
        else:
            lib = replace(lib, **{field: names})
            used.append(key)
    value = take("NCCL_BUFFSIZE")
    if value is not None:
        if value.isdigit() and NCCL_STEPS <= int(value) < 1 << 40:
            lib = replace(lib, buffsize=int(value))
            used.append("NCCL_BUFFSIZE")
        else:
            left.append(f"NCCL_BUFFSIZE={value} (not a byte count)")
    for field_name, keys in (
        ("max_channels", ("NCCL_MAX_NRINGS", "NCCL_MAX_NCHANNELS")),
        ("min_channels", ("NCCL_MIN_NRINGS", "NCCL_MIN_NCHANNELS")),
    ):
        for key in keys:  # the new name wins, as in connect.cc
            value = take(key)
            if value is None:
                continue
            n = int(value) if value.lstrip("-").isdigit() and len(value) < 7 else None
            if n is None:
                left.append(f"{key}={value} (not a number)")
                continue
            n = (
                max(1, min(n, MAX_CHANNELS))
                if field_name == "max_channels"
                else min(n, MAX_CHANNELS)
            )
            if n > 0:
                lib = replace(lib, **{field_name: n})
            used.append(key)
    value = take("NCCL_NVLS_ENABLE")
    if value == "0" and lib.nvls:
        lib = replace(lib, nvls=False)
        used.append("NCCL_NVLS_ENABLE")
    if any(k.startswith("NCCL_GPUDIRECTTCPX_") for k in settings):
        lib = replace(lib, net="tcpx")
        used.append("NCCL_GPUDIRECTTCPX_*")
    return lib, used, left
