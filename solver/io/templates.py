"""Ready-made fabrics: DGX A100, MI250, DGX H100 (rail-optimized), GB200 NVL72-like rack, ring, torus, fat tree, full mesh.

Every template is a function returning a validated :class:`~solver.model.topology.Topology` whose nodes
carry ``x``/``y``/``group`` layout hints (scene units, about 100 per GPU column; ``y`` grows
downward: switches above, NICs and network switches below). Node ids follow one scheme:
``b<box>.gpu<j>``, ``b<box>.nvsw``, ``b<box>.nic<j>``, ``ib<i>``, ``rail<i>``...

The DGX A100 and MI250 fabrics are exactly the models of ``ALGORITHM.md`` (the published ForestColl
figures refer to them); a single box has no NICs or IB switch, because they cannot carry traffic.

:data:`TEMPLATES` describes each template (title, description, typed parameters with ranges) so
that a GUI can build a form and call ``spec.function(**values)``; :func:`make` does that with
range checks. :func:`default_topology` is the fabric a new document starts with (2x DGX A100).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from solver.model.errors import TopologyError
from solver.model.topology import (
    COMPUTE,
    NVLS_CAPABILITIES,
    SWITCH,
    Link,
    Node,
    Topology,
    fraction_to_json,
    to_fraction,
    validate,
)
from solver.model.values import MAX_NODES

# Layout constants (scene units).
_COL = 100.0  # distance between GPU columns
_BOX_GAP = 150.0  # horizontal gap between boxes
_ROW = 150.0  # vertical distance between layers

# MI250 xGMI link counts between the 16 GCDs of one box (ALGORITHM.md), symmetric.
MI250_XGMI = (
    (0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0),
    (4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0),
    (0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0),
    (0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0),
    (2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    (1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0),
    (0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0),
    (0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0),
    (0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2),
    (0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0),
)


# ----------------------------------------------------------------------------- helpers
class _Builder:
    """Collects nodes and links, then returns a validated Topology."""

    def __init__(self, name: str, **extra: Any) -> None:
        self.name = name
        self.extra = extra
        self.nodes: list[Node] = []
        self.links: list[Link] = []

    def node(
        self,
        node_id: str,
        kind: str,
        role: str,
        x: float,
        y: float,
        group: str,
        capabilities: frozenset[str] = frozenset(),
    ) -> str:
        self.nodes.append(
            Node(
                id=node_id,
                kind=kind,
                role=role,
                x=round(float(x), 1),
                y=round(float(y), 1),
                group=group,
                capabilities=capabilities,
            )
        )
        return node_id

    def link(self, a: str, b: str, bandwidth: Fraction, **extra: Any) -> None:
        self.links.append(Link(source=a, target=b, bandwidth=bandwidth, extra=extra))

    def build(self) -> Topology:
        topo = Topology(
            name=self.name, nodes=tuple(self.nodes), links=tuple(self.links), extra=dict(self.extra)
        )
        return validate(topo)


def _count(value: Any, what: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise TopologyError(f"{what} must be a whole number, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"between {low} and {high}"
        raise TopologyError(f"{what} must be {bound}, got {value}")
    return value


def _bandwidth(value: Any, what: str) -> Fraction:
    bw = to_fraction(value, what)
    if bw <= 0:
        raise TopologyError(f"{what} must be > 0, got {value!r}")
    return bw


def _params(**values: Any) -> dict[str, Any]:
    """Template arguments as JSON values (exact numbers stay exact), kept in ``Topology.extra``."""

    def plain(v: Any) -> Any:
        if isinstance(v, Fraction):
            return fraction_to_json(v)
        if isinstance(v, list | tuple):
            return [plain(x) for x in v]
        return v

    return {k: plain(v) for k, v in values.items()}


def _box_origin(box: int, n_boxes: int, box_width: float, box_height: float) -> tuple[float, float]:
    """Top-left corner of box ``box`` when ``n_boxes`` boxes are laid out in a near-square grid."""
    # Up to three boxes sit side by side (the network row below them, no link crosses a box);
    # more form a grid about as wide as a 16:9 screen.
    if n_boxes <= 3:
        cols = n_boxes
    else:
        cols = max(1, math.ceil(math.sqrt(n_boxes * box_height / box_width * 16 / 9)))
    cols = min(cols, n_boxes)
    row, col = divmod(box, cols)
    return col * (box_width + _BOX_GAP), row * (box_height + _ROW)


def _grid_size(n_boxes: int, box_width: float, box_height: float) -> tuple[float, float]:
    xs, ys = zip(*(_box_origin(b, n_boxes, box_width, box_height) for b in range(n_boxes)))
    return max(xs) + box_width, max(ys) + box_height


def _spread(count: int, width: float) -> list[float]:
    """``count`` x positions spread evenly over [0, width]."""
    if count == 1:
        return [width / 2]
    return [width * i / (count - 1) for i in range(count)]


def _nvswitch_boxes(
    b: _Builder,
    n: int,
    gpus: int,
    nvlink_bw: Fraction,
    nic_bw: Fraction | None,
    nvls: bool = False,
) -> tuple[list[list[str]], list[list[str]], float, float]:
    """Boxes of ``gpus`` GPUs on one NVSwitch node, optionally one NIC per GPU; ``nvls``: the
    NVSwitch reduces and multicasts (NVLink SHARP, third-generation NVSwitch and later).

    Returns (gpu ids per box, nic ids per box, grid width, grid height).
    """
    box_w = (gpus - 1) * _COL
    box_h = 2 * _ROW if nic_bw is not None else _ROW
    all_gpus, all_nics = [], []
    for box in range(n):
        ox, oy = _box_origin(box, n, box_w, box_h)
        group = f"b{box}"
        sw = b.node(
            f"{group}.nvsw",
            SWITCH,
            "nvswitch",
            ox + box_w / 2,
            oy,
            group,
            NVLS_CAPABILITIES if nvls else frozenset(),
        )
        gpu_ids, nic_ids = [], []
        for j in range(gpus):
            gpu = b.node(f"{group}.gpu{j}", COMPUTE, "gpu", ox + j * _COL, oy + _ROW, group)
            b.link(gpu, sw, nvlink_bw)
            gpu_ids.append(gpu)
            if nic_bw is not None:
                nic = b.node(f"{group}.nic{j}", SWITCH, "nic", ox + j * _COL, oy + 2 * _ROW, group)
                b.link(gpu, nic, nic_bw)
                nic_ids.append(nic)
        all_gpus.append(gpu_ids)
        all_nics.append(nic_ids)
    width, height = _grid_size(n, box_w, box_h)
    return all_gpus, all_nics, width, height


# ----------------------------------------------------------------------------- templates
def dgx_a100(n: int = 1, nvlink_bw: float = 300, nic_bw: float = 25) -> Topology:
    """``n`` DGX A100 boxes as modelled in ALGORITHM.md.

    Each box: 8 GPUs, each ``nvlink_bw`` GB/s to one NVSwitch node ``b<i>.nvsw``. For ``n > 1``
    each GPU also has its own NIC (``b<i>.nic<j>``, ``nic_bw`` GB/s), and the NICs of even / odd
    GPUs connect (``nic_bw``) to IB switch ``ib0`` / ``ib1``. One box has no NICs (optimum 2400/7).
    """
    n = _count(n, "number of boxes", 1)
    nvlink = _bandwidth(nvlink_bw, "NVLink bandwidth")
    nic = _bandwidth(nic_bw, "NIC bandwidth")
    b = _Builder(
        f"{n}x DGX A100",
        template="dgx_a100",
        template_params=_params(n=n, nvlink_bw=nvlink, nic_bw=nic),
    )
    _, nics, width, height = _nvswitch_boxes(b, n, 8, nvlink, nic if n > 1 else None)
    if n > 1:
        for i, x in enumerate(_spread(2, width)):
            b.node(f"ib{i}", SWITCH, "ib", x, height + _ROW, "network")
        for box_nics in nics:
            for j, nic_id in enumerate(box_nics):
                b.link(nic_id, f"ib{j % 2}", nic)
    return b.build()


def dgx_h100_rail(n: int = 2, nvlink_bw: float = 450, nic_bw: float = 50) -> Topology:
    """``n`` DGX H100 boxes, rail-optimized network.

    Each box: 8 GPUs, each ``nvlink_bw`` GB/s to NVSwitch node ``b<i>.nvsw``. For ``n > 1`` GPU j
    of every box has its own NIC (``nic_bw`` GB/s) linked (``nic_bw``) to rail switch ``rail<j>``.
    The NVSwitch reduces and multicasts (NVLS; H100/H200 NVSwitch, and B200 with nvlink_bw 900).
    """
    n = _count(n, "number of boxes", 1)
    nvlink = _bandwidth(nvlink_bw, "NVLink bandwidth")
    nic = _bandwidth(nic_bw, "NIC bandwidth")
    b = _Builder(
        f"{n}x DGX H100 rail",
        template="dgx_h100_rail",
        template_params=_params(n=n, nvlink_bw=nvlink, nic_bw=nic),
    )
    _, nics, width, height = _nvswitch_boxes(b, n, 8, nvlink, nic if n > 1 else None, nvls=True)
    if n > 1:
        for j, x in enumerate(_spread(8, width)):
            b.node(f"rail{j}", SWITCH, "ib", x, height + _ROW, "network")
        for box_nics in nics:
            for j, nic_id in enumerate(box_nics):
                b.link(nic_id, f"rail{j}", nic)
    return b.build()


#: DGX SuperPOD scalable unit: 32 DGX H100 nodes of 8 GPUs, one leaf switch per rail.
SU_NODES = 32
SU_RAILS = 8


def superpod(
    sus: int = 1,
    nvlink_bw: float = 450,
    nic_bw: float = 50,
    core_oversubscription: float = 1,
    nodes_per_su: int = SU_NODES,
) -> Topology:
    """A DGX SuperPOD-like rail-optimised InfiniBand fabric of ``sus`` scalable units (SUs).

    From NVIDIA's DGX SuperPOD reference architectures (H100: RA-11333-001 V11, 2023-09-22;
    B200: docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200,
    table "Larger DGX SuperPOD component counts"): an SU is 32 DGX nodes, each 8 GPUs on
    NVSwitch (``nvlink_bw`` GB/s per GPU; it reduces and multicasts, NVLS) and one 400 Gb/s NIC
    per GPU (``nic_bw`` = 50 GB/s).
    The NIC of GPU j of every node of SU s goes to that SU's rail-j leaf ``su<s>.leaf<j>``; every
    cable count is non-blocking (node-leaf = leaf-spine = spine-core = GPUs):

    - up to 8 SUs, two tiers: 4 spines per SU, every leaf linked to every spine (its 32 uplinks
      spread evenly: 2 SUs 8 spines, 4 SUs 16, 8 SUs 32, as the table);
    - from 16 SUs (a multiple of 8), three tiers: pods of 4 SUs (32 leaves) each with 32 spines
      ``pod<p>.spine<k>``, every leaf of the pod to every spine of it (one cable); 4 cores per SU
      (16 SUs: 128 spines, 64 cores, as the table), spine k of every pod linked to the ``sus/8``
      cores of core group k with its 32 uplinks spread evenly, divided by
      ``core_oversubscription`` (1 = non-blocking).

    Parallel cables between two switches are one link of their summed bandwidth. Beyond 64 SUs
    (16 384 GPUs, the table's largest) the same pattern is scaled; a real build of that size
    needs switches of higher radix. ``nodes_per_su`` below 32 gives a smaller model of the same
    wiring (for teaching and tests: every count above scales with it).
    """
    sus = _count(sus, "number of scalable units", 1)
    per_su = _count(nodes_per_su, "nodes per SU", 1, SU_NODES)
    nvlink = _bandwidth(nvlink_bw, "NVLink bandwidth")
    nic = _bandwidth(nic_bw, "NIC bandwidth")
    over = _bandwidth(core_oversubscription, "core oversubscription")
    three_tier = sus > 8
    if three_tier and sus % 8:
        raise TopologyError(
            f"a SuperPOD of more than 8 SUs has three tiers and takes a multiple of 8 SUs "
            f"(16, 24, 32, ...), got {sus}"
        )
    b = _Builder(
        f"DGX SuperPOD {sus} SU ({sus * per_su * SU_RAILS} GPUs)",
        template="superpod",
        template_params=_params(
            sus=sus,
            nvlink_bw=nvlink,
            nic_bw=nic,
            core_oversubscription=over,
            nodes_per_su=per_su,
        ),
    )
    _, nics, width, height = _nvswitch_boxes(b, sus * per_su, SU_RAILS, nvlink, nic, nvls=True)
    y = height + _ROW
    leaves = []
    for su, x_su in enumerate(_spread(sus, width)):
        row = []
        for j in range(SU_RAILS):
            x = x_su + (j - (SU_RAILS - 1) / 2) * _COL * 4
            row.append(b.node(f"su{su}.leaf{j}", SWITCH, "leaf", x, y, f"su{su}"))
        leaves.append(row)
        for box in range(su * per_su, (su + 1) * per_su):
            for j, nic_id in enumerate(nics[box]):
                b.link(nic_id, row[j], nic)
    uplink = per_su * nic  # a leaf's uplink bandwidth (non-blocking)
    if not three_tier:
        spines = [
            b.node(f"spine{k}", SWITCH, "spine", x, y + _ROW, "spines")
            for k, x in enumerate(_spread(4 * sus, width))
        ]
        for row in leaves:
            for leaf in row:
                for spine in spines:
                    b.link(leaf, spine, uplink / len(spines))
        return b.build()
    pods = sus // 4
    pod_spines = SU_NODES  # a pod's 32 leaves, each with one cable to each of its 32 spines
    group = sus // 8  # cores per core group: 4 cores per SU over 32 spine indices
    cores = [
        b.node(f"core{c}", SWITCH, "core", x, y + 2 * _ROW, "cores")
        for c, x in enumerate(_spread(4 * sus, width))
    ]
    for p, x_pod in enumerate(_spread(pods, width)):
        spines = [
            b.node(
                f"pod{p}.spine{k}",
                SWITCH,
                "spine",
                x_pod + (k - (pod_spines - 1) / 2) * _COL,
                y + _ROW,
                f"pod{p}",
            )
            for k in range(pod_spines)
        ]
        for su in range(4 * p, 4 * p + 4):
            for leaf in leaves[su]:
                for spine in spines:
                    b.link(leaf, spine, uplink / pod_spines)
        for k, spine in enumerate(spines):
            for c in range(k * group, (k + 1) * group):
                b.link(spine, cores[c], uplink / (group * over))
    return b.build()


def nvl72(gpus: int = 72, nvlink_bw: float = 900) -> Topology:
    """A GB200 NVL72-like rack: ``gpus`` Blackwell GPUs in one NVLink domain, each ``nvlink_bw``
    GB/s (18 NVLink5 links x 50 GB/s = 900) to the domain's NVSwitch fabric, drawn as one switch
    node ``nvsw`` that reduces and multicasts (NVLS). The rack's NICs are left out: inside one
    domain they carry no collective traffic."""
    gpus = _count(gpus, "number of GPUs", 2, 576)
    nvlink = _bandwidth(nvlink_bw, "NVLink bandwidth")
    b = _Builder(
        f"NVL{gpus} rack",
        template="nvl72",
        template_params=_params(gpus=gpus, nvlink_bw=nvlink),
    )
    per_row = 18  # one row per 18 GPUs (an NVL72 rack has 18 compute trays of 4 GPUs)
    width = (min(gpus, per_row) - 1) * _COL
    # one group: NCCL sees the whole NVLink domain as one node (one NVLS domain)
    sw = b.node("nvsw", SWITCH, "nvswitch", width / 2, 0.0, "rack", NVLS_CAPABILITIES)
    for j in range(gpus):
        row, col = divmod(j, per_row)
        gpu = b.node(f"gpu{j}", COMPUTE, "gpu", col * _COL, _ROW * (1 + row), "rack")
        b.link(gpu, sw, nvlink)
    return b.build()


#: GB200 NVL72 rack: 18 compute trays of 4 GPUs, one 400 Gb/s ConnectX-7 per GPU (compute fabric)
NVL72_TRAYS = 18
NVL72_TRAY_GPUS = 4
#: InfiniBand NDR switch (Quantum-2 QM9700): 64 ports of 400 Gb/s, half down and half up
IB_LEAF_DOWN = 32
IB_SWITCH_PORTS = 64


def _rack_leaf_trays(racks: int, trays: int = NVL72_TRAYS) -> int:
    """Trays of every rack whose rail-k NICs share one leaf: the largest divisor of ``trays``
    with ``racks`` x that <= 32 leaf downlinks."""
    return max(t for t in range(1, trays + 1) if trays % t == 0 and racks * t <= IB_LEAF_DOWN)


def nvl72_racks(
    racks: int = 16, nvlink_bw: float = 900, nic_bw: float = 50, trays: int = NVL72_TRAYS
) -> Topology:
    """``racks`` GB200 NVL72 racks joined by a rail-optimised, non-blocking 2-tier InfiniBand
    compute fabric.

    Sources: NVIDIA DGX SuperPOD reference architecture with DGX GB200 systems
    (docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-gb200, "Network
    Fabrics": a rack is 18 compute trays and 9 NVLink switch trays, every GPU one NVLink 5
    link to each of the 18 switch chips, 1.8 TB/s bidirectional = 900 GB/s each way; an SU is
    8 racks = 576 GPUs; NDR 400 Gb/s InfiniBand compute fabric, rail-optimised) and the DGX
    GB200 user guide ("Hardware": 4 GPUs and 4 single-port 400G ConnectX-7 NICs per tray).

    Each rack ``b<r>`` is one NVLink domain: its 72 GPUs at ``nvlink_bw`` GB/s to ``b<r>.nvsw``
    (reduces and multicasts, NVLS), GPU j with its own NIC ``b<r>.nic<j>`` (``nic_bw`` = 50 GB/s
    = 400 Gb/s; 100 for the 800 Gb/s ConnectX-8 of GB300). GPU j sits in tray j // 4 on rail
    j % 4. Leaves are 64-port NDR switches (QM9700), 32 ports down and 32 up: leaf
    ``rail<k>.leaf<m>`` takes the rail-k NICs of trays m*T .. m*T+T-1 of *every* rack, T the
    largest divisor of 18 with racks x T <= 32 (16 racks: T = 2, 36 leaves; 8 racks: T = 3,
    24 leaves); every leaf links to every one of the ceil(uplink ports / 64) spines with its
    uplink bandwidth (= its downlink bandwidth: non-blocking) spread evenly. The RA gives the
    SU and the switch model but no per-rack leaf table, so the leaf grouping is ours; it is
    wired so that moving every rack to the next fixes every switch (box symmetry applies).
    2 to 32 racks (2304 GPUs): more need a third tier. ``trays`` below 18 is a smaller model
    of the same wiring (for teaching and tests).
    """
    racks = _count(racks, "number of racks", 2, IB_LEAF_DOWN)
    n_trays = _count(trays, "compute trays per rack", 1, NVL72_TRAYS)
    nvlink = _bandwidth(nvlink_bw, "NVLink bandwidth")
    nic = _bandwidth(nic_bw, "NIC bandwidth")
    gpus = n_trays * NVL72_TRAY_GPUS
    b = _Builder(
        f"{racks}x GB200 NVL{gpus} ({racks * gpus} GPUs)",
        template="nvl72_racks",
        template_params=_params(racks=racks, nvlink_bw=nvlink, nic_bw=nic, trays=n_trays),
    )
    _, nics, width, height = _nvswitch_boxes(b, racks, gpus, nvlink, nic, nvls=True)
    trays = _rack_leaf_trays(racks, n_trays)
    per_rail = n_trays // trays
    y = height + _ROW
    leaf_ids = [
        b.node(f"rail{k}.leaf{m}", SWITCH, "leaf", x, y, "leaves")
        for (k, m), x in zip(
            itertools.product(range(NVL72_TRAY_GPUS), range(per_rail)),
            _spread(NVL72_TRAY_GPUS * per_rail, width),
            strict=True,
        )
    ]
    for box_nics in nics:
        for j, nic_id in enumerate(box_nics):
            rail, tray = j % NVL72_TRAY_GPUS, j // NVL72_TRAY_GPUS
            b.link(nic_id, leaf_ids[rail * per_rail + tray // trays], nic)
    down = racks * trays  # a leaf's NIC links
    spines = -(-len(leaf_ids) * down // IB_SWITCH_PORTS)
    spine_ids = [
        b.node(f"spine{s}", SWITCH, "spine", x, y + _ROW, "spines")
        for s, x in enumerate(_spread(spines, width))
    ]
    for leaf in leaf_ids:
        for spine in spine_ids:
            b.link(leaf, spine, down * nic / spines)
    return b.build()


#: Alibaba HPN segment: 8 rails, each with two ToRs (one per plane); 128 hosts
HPN_RAILS = 8
HPN_HOSTS = 128
HPN_SEGMENTS = 15  # a pod: 15 segments, 15 360 GPUs
HPN_AGGS = 60  # aggregation switches per plane (a ToR's 60 uplinks, one to each)


def hpn(
    segments: int = HPN_SEGMENTS,
    hosts: int = HPN_HOSTS,
    pods: int = 1,
    nvlink_bw: float = 400,
    port_bw: float = 25,
    aggs: int = HPN_AGGS,
    uplink_bw: float = 50,
    core_oversubscription: float = 15,
) -> Topology:
    """Alibaba HPN: dual-ToR, dual-plane, rail-optimised segments (Qian et al., "Alibaba HPN: A
    Data Center Network for Large Language Model Training", SIGCOMM 2024).

    From the paper: a host is 8 GPUs on NVSwitch (``nvlink_bw``, 400 GB/s for the H800 it
    describes) and 8 backend NICs, one per GPU, each with two 200 Gb/s ports (``port_bw`` =
    25 GB/s each; 400 Gb/s per GPU). A segment is ``hosts`` = 128 hosts (1024 GPUs): port 0 of
    the rail-j NIC of every host goes to ToR ``s<s>.tor<j>a`` (plane 0), port 1 to
    ``s<s>.tor<j>b`` (plane 1): dual ToR, 16 ToRs per segment, each 128 x 200G down and
    60 x 400G up (51.2 Tb/s chips; 128*200/(60*400) = 16/15, the paper's 1.067:1). Tier 2 is
    dual-plane: a plane-p ToR of every segment links once (``uplink_bw`` = 50 GB/s = 400 Gb/s)
    to each of the ``aggs`` = 60 aggregation switches ``pod<q>.p<p>.agg<k>`` of its plane
    only; a pod is
    ``segments`` = 15 segments (15 360 GPUs, "15K GPUs in a Pod"). Several ``pods`` are joined
    by tier 3, 15:1 oversubscribed at the aggregation switches (``core_oversubscription``):
    aggregation switch k of plane p of every pod links to core ``p<p>.core<k>`` (one core per
    aggregation index and plane is our choice; the paper gives the ratio, not the count).
    Backup hosts and the frontend network are left out. ``hosts`` below 128 is a smaller model
    of the same wiring: every uplink bandwidth scales with it (``uplink_bw`` x hosts / 128).
    """
    segments = _count(segments, "segments per pod", 1, HPN_SEGMENTS)
    hosts = _count(hosts, "hosts per segment", 1, HPN_HOSTS)
    pods = _count(pods, "pods", 1)
    aggs = _count(aggs, "aggregation switches per plane", 1, 128)
    nvlink = _bandwidth(nvlink_bw, "NVLink bandwidth")
    port = _bandwidth(port_bw, "NIC port bandwidth")
    uplink = _bandwidth(uplink_bw, "uplink bandwidth")
    core_over = _bandwidth(core_oversubscription, "core oversubscription")
    if segments * hosts * pods < 2:
        raise TopologyError("an HPN fabric needs at least two hosts")
    n_seg = pods * segments
    b = _Builder(
        f"Alibaba HPN {pods} pod x {segments} segments x {hosts} hosts "
        f"({n_seg * hosts * HPN_RAILS} GPUs)",
        template="hpn",
        template_params=_params(
            segments=segments,
            hosts=hosts,
            pods=pods,
            nvlink_bw=nvlink,
            port_bw=port,
            aggs=aggs,
            uplink_bw=uplink,
            core_oversubscription=core_over,
        ),
    )
    _, nics, width, height = _nvswitch_boxes(
        b, n_seg * hosts, HPN_RAILS, nvlink, 2 * port, nvls=True
    )
    y = height + _ROW
    tor_up = uplink * hosts / HPN_HOSTS  # one ToR-aggregation link (scaled for small models)
    seg_x = _spread(n_seg, width)
    for s in range(n_seg):
        for j in range(HPN_RAILS):
            for p, plane in enumerate("ab"):
                x = seg_x[s] + ((2 * j + p) - (2 * HPN_RAILS - 1) / 2) * _COL
                b.node(f"s{s}.tor{j}{plane}", SWITCH, "tor", x, y, f"s{s}")
        for h in range(s * hosts, (s + 1) * hosts):
            for j, nic_id in enumerate(nics[h]):
                for plane in "ab":
                    b.link(nic_id, f"s{s}.tor{j}{plane}", port)
    pod_x = _spread(pods, width)
    for pod in range(pods):
        for p, plane in enumerate("ab"):
            for k in range(aggs):
                x = pod_x[pod] + ((p * aggs + k) - (2 * aggs - 1) / 2) * _COL / 2
                agg = b.node(f"pod{pod}.p{p}.agg{k}", SWITCH, "agg", x, y + _ROW, f"pod{pod}")
                for s in range(pod * segments, (pod + 1) * segments):
                    for j in range(HPN_RAILS):
                        b.link(f"s{s}.tor{j}{plane}", agg, tor_up)
    if pods > 1:
        agg_up = segments * HPN_RAILS * tor_up / core_over
        for p in range(2):
            for k, x in enumerate(_spread(aggs, width)):
                core = b.node(
                    f"p{p}.core{k}", SWITCH, "core", x + p * _COL / 4, y + 2 * _ROW, "cores"
                )
                for pod in range(pods):
                    b.link(f"pod{pod}.p{p}.agg{k}", core, agg_up)
    return b.build()


#: Meta's RoCE AI zone (SIGCOMM 2024; the Llama 3 paper's 24K-GPU cluster)
META_ZONES = 8
META_RACKS = 192  # racks per AI zone (3072 GPUs)
META_HOSTS_PER_RACK = 2  # Grand Teton hosts of 8 H100 each
META_CTSWS = 16  # our choice: spines per zone (the paper gives no count)


def clos3(
    zones: int = META_ZONES,
    racks_per_zone: int = META_RACKS,
    nvlink_bw: float = 450,
    nic_bw: float = 50,
    ctsws: int = META_CTSWS,
    atsw_oversubscription: float = 7,
) -> Topology:
    """A 3-tier Clos with oversubscription: Meta's RoCE backend (Gangidi et al., "RDMA over
    Ethernet for Distributed AI Training at Meta Scale", SIGCOMM 2024; sizes from the Llama 3
    paper, "The Llama 3 Herd of Models", 2024, section 3.3.1).

    A rack is 2 hosts of 8 H100 GPUs on NVSwitch (``nvlink_bw``), each GPU one 400 Gb/s RoCE
    NIC (``nic_bw`` = 50 GB/s) to the rack's RTSW (rack training switch, the leaf)
    ``z<z>.r<r>.rtsw``; an AI zone is ``racks_per_zone`` = 192 racks (3072 GPUs), each RTSW linked
    to every one of the zone's ``ctsws`` CTSWs (cluster training switches, the spine)
    ``z<z>.ctsw<k>``, non-blocking inside the zone (the paper; the Llama 3 cluster even doubles
    the RTSW uplinks, which changes no cut through them). ``zones`` = 8 zones (24 576 GPUs)
    are joined by the ATSW (aggregator training switch) tier, oversubscribed by design,
    ``atsw_oversubscription`` = 7 (7:1, the Llama 3 paper): CTSW k of every zone links to
    ``atsw<k>`` with its downlink bandwidth / 7. One zone has no ATSW tier. The CTSW count
    (and so one ATSW per CTSW index) is our choice: the papers do not give it.
    """
    zones = _count(zones, "number of AI zones", 1)
    racks = _count(racks_per_zone, "racks per zone", 1)
    ctsws = _count(ctsws, "CTSWs per zone", 1, 256)
    nvlink = _bandwidth(nvlink_bw, "NVLink bandwidth")
    nic = _bandwidth(nic_bw, "NIC bandwidth")
    over = _bandwidth(atsw_oversubscription, "ATSW oversubscription")
    per_rack = META_HOSTS_PER_RACK * 8
    b = _Builder(
        f"3-tier Clos {zones} zones x {racks} racks ({zones * racks * per_rack} GPUs)",
        template="clos3",
        template_params=_params(
            zones=zones,
            racks_per_zone=racks,
            nvlink_bw=nvlink,
            nic_bw=nic,
            ctsws=ctsws,
            atsw_oversubscription=over,
        ),
    )
    hosts = zones * racks * META_HOSTS_PER_RACK
    _, nics, _, _ = _nvswitch_boxes(b, hosts, 8, nvlink, nic, nvls=True)
    # drawn zone by zone: each zone's hosts in a block, its RTSWs and CTSWs in rows beneath
    # it, the zones side by side (in a grid when many), the ATSWs in a row below them all
    per_zone = racks * META_HOSTS_PER_RACK
    box_w, box_h = 7 * _COL, 2 * _ROW
    zone_w, zone_h = _grid_size(per_zone, box_w, box_h)
    block_h = zone_h + 2 * _ROW
    zone_xy = [_box_origin(z, zones, zone_w, block_h) for z in range(zones)]
    move = {}
    for h in range(hosts):
        z, i = divmod(h, per_zone)
        old_x, old_y = _box_origin(h, hosts, box_w, box_h)
        new_x, new_y = _box_origin(i, per_zone, box_w, box_h)
        move[f"b{h}"] = (zone_xy[z][0] + new_x - old_x, zone_xy[z][1] + new_y - old_y)
    b.nodes = [
        replace(n, x=(n.x or 0.0) + move[n.group][0], y=(n.y or 0.0) + move[n.group][1])
        if n.group in move
        else n
        for n in b.nodes
    ]
    width = max(x for x, _ in zone_xy) + zone_w
    height = max(y for _, y in zone_xy) + block_h
    # a rack (its two hosts and its RTSW) is one group: moving every rack of a zone to the next
    # fixes the zone's CTSWs
    host_group = {}
    for z in range(zones):
        for r in range(racks):
            for h in range(META_HOSTS_PER_RACK):
                host_group[f"b{(z * racks + r) * META_HOSTS_PER_RACK + h}"] = f"z{z}.r{r}"
    b.nodes = [
        replace(n, group=host_group[n.group]) if n.group in host_group else n for n in b.nodes
    ]
    rack_x = _spread(racks, zone_w)
    ctsw_x = _spread(ctsws, zone_w)
    up = per_rack * nic / ctsws  # one RTSW-CTSW link (non-blocking)
    for z in range(zones):
        zx, zy = zone_xy[z]
        ctsw_ids = [
            b.node(f"z{z}.ctsw{k}", SWITCH, "ctsw", zx + ctsw_x[k], zy + zone_h + 2 * _ROW, f"z{z}")
            for k in range(ctsws)
        ]
        for r in range(racks):
            rtsw = b.node(
                f"z{z}.r{r}.rtsw", SWITCH, "rtsw", zx + rack_x[r], zy + zone_h + _ROW, f"z{z}.r{r}"
            )
            for h in range(META_HOSTS_PER_RACK):
                for nic_id in nics[(z * racks + r) * META_HOSTS_PER_RACK + h]:
                    b.link(nic_id, rtsw, nic)
            for c in ctsw_ids:
                b.link(rtsw, c, up)
    if zones > 1:
        for k, x in enumerate(_spread(ctsws, width)):
            atsw = b.node(f"atsw{k}", SWITCH, "atsw", x, height + 2 * _ROW, "atsws")
            for z in range(zones):
                b.link(f"z{z}.ctsw{k}", atsw, racks * up / over)
    return b.build()


#: The 16 GCDs of an MI250 box in order around a circle: the two GCDs of a package (4 links)
#: side by side, packages along the ring of the next-fastest links -- the order the designer's
#: structural layout gives (``fc_gui.model.structure_layout.circle_order``; a GUI test checks it).
MI250_CIRCLE = (1, 0, 4, 5, 6, 7, 3, 2, 10, 11, 15, 14, 13, 12, 8, 9)
_MI250_RADIUS = 16 * _COL / (2 * math.pi)
_PAIR_STEP = 0.55  # angular step between a package's two GCDs, relative to other neighbours


def _mi250_circle() -> dict[int, tuple[float, float]]:
    """GCD -> (x, y) on the circle of :data:`MI250_CIRCLE`, from the top, clockwise (y down),
    inside the square [0, 2r]^2."""
    steps = []
    for i, g in enumerate(MI250_CIRCLE):
        h = MI250_CIRCLE[(i + 1) % 16]
        steps.append(_PAIR_STEP if MI250_XGMI[g][h] == 4 else 1.0)
    total = sum(steps)
    r = _MI250_RADIUS
    out, angle = {}, -math.pi / 2
    for g, step in zip(MI250_CIRCLE, steps, strict=True):
        out[g] = (r + r * math.cos(angle), r + r * math.sin(angle))
        angle += 2 * math.pi * step / total
    return out


def mi250(n: int = 1, xgmi_bw: float = 50, ib_bw: float = 16) -> Topology:
    """``n`` AMD MI250 boxes as modelled in ALGORITHM.md.

    Each box: 16 GCDs joined by xGMI links (``xgmi_bw`` GB/s per link times the link count of
    :data:`MI250_XGMI`; a link records its ``count``). For ``n > 1`` every GCD also links
    (``ib_bw`` GB/s) to the single IB switch ``ib0``. One box has no IB switch.
    """
    n = _count(n, "number of boxes", 1)
    per_link = _bandwidth(xgmi_bw, "xGMI bandwidth")
    ib = _bandwidth(ib_bw, "IB bandwidth")
    b = _Builder(
        f"{n}x MI250", template="mi250", template_params=_params(n=n, xgmi_bw=per_link, ib_bw=ib)
    )
    # GCDs on a circle (see _mi250_circle): no xGMI link runs through a third GCD.
    circle = _mi250_circle()
    box_w = box_h = 2 * _MI250_RADIUS
    gcds = []
    for box in range(n):
        ox, oy = _box_origin(box, n, box_w, box_h)
        ids = []
        for j in range(16):
            x, y = circle[j]
            ids.append(b.node(f"b{box}.gcd{j}", COMPUTE, "gpu", ox + x, oy + y, f"b{box}"))
        for i, j in itertools.combinations(range(16), 2):
            count = MI250_XGMI[i][j]
            if count:
                b.link(ids[i], ids[j], per_link * count, count=count)
        gcds.append(ids)
    if n > 1:
        width, height = _grid_size(n, box_w, box_h)
        b.node("ib0", SWITCH, "ib", width / 2, height + _ROW, "network")
        for ids in gcds:
            for gcd in ids:
                b.link(gcd, "ib0", ib)
    return b.build()


def ring(n: int = 8, bandwidth: float = 100, directed: bool = False) -> Topology:
    """``n`` compute nodes ``gpu<i>`` on a ring, ``bandwidth`` GB/s per link (full duplex unless
    ``directed``: then only gpu<i> -> gpu<i+1>)."""
    n = _count(n, "ring size", 2)
    bw = _bandwidth(bandwidth, "bandwidth")
    b = _Builder(
        f"ring of {n}",
        template="ring",
        template_params=_params(n=n, bandwidth=bw, directed=bool(directed)),
    )
    radius = max(1.0, n * _COL / (2 * math.pi))
    ids = [
        b.node(
            f"gpu{i}",
            COMPUTE,
            "gpu",
            radius * math.sin(2 * math.pi * i / n),
            -radius * math.cos(2 * math.pi * i / n),
            "ring",
        )
        for i in range(n)
    ]
    pairs = [(i, (i + 1) % n) for i in range(n)] if n > 2 or directed else [(0, 1)]
    for i, j in pairs:
        b.links.append(Link(source=ids[i], target=ids[j], bandwidth=bw, directed=bool(directed)))
    return b.build()


def torus(shape: Sequence[int], bandwidths: Sequence[float]) -> Topology:
    """A 1-, 2- or 3-D torus of compute nodes ``gpu<i>_<j>[_<k>]``, one bandwidth per dimension.

    Neighbours along a dimension of size >= 3 are joined by a full-duplex link, with wrap-around;
    a dimension of size 2 has a single link per pair (the wrap-around would duplicate it).
    """
    shape = [_count(s, f"torus size in dimension {d}", 2, 64) for d, s in enumerate(shape)]
    if not 1 <= len(shape) <= 3:
        raise TopologyError(f"a torus has 1 to 3 dimensions, got {len(shape)}")
    if len(bandwidths) != len(shape):
        raise TopologyError(
            f"a torus needs one bandwidth per dimension: {len(shape)} sizes, {len(bandwidths)} bandwidths"
        )
    bws = [_bandwidth(v, f"bandwidth of dimension {d}") for d, v in enumerate(bandwidths)]
    label = "x".join(str(s) for s in shape)
    b = _Builder(
        f"{label} torus",
        template="torus",
        template_params=_params(shape=shape, bandwidths=bws),
    )
    coords = list(itertools.product(*(range(s) for s in shape)))

    def node_id(c: tuple[int, ...]) -> str:
        return "gpu" + "_".join(str(v) for v in c)

    for c in coords:
        x = c[0] * _COL
        y = c[1] * _COL if len(c) > 1 else 0.0
        group = "torus"
        if len(c) > 2:  # layers drawn side by side, shifted down a little for depth
            x += c[2] * (shape[0] * _COL + _BOX_GAP)
            y += c[2] * _COL / 3
            group = f"z{c[2]}"
        b.node(node_id(c), COMPUTE, "gpu", x, y, group)
    for c in coords:
        for d, size in enumerate(shape):
            if size == 2 and c[d] == 1:
                continue
            nxt = list(c)
            nxt[d] = (c[d] + 1) % size
            b.link(node_id(c), node_id(tuple(nxt)), bws[d], dim=d)
    return b.build()


def torus_2d(x: int = 4, y: int = 4, bw_x: float = 100, bw_y: float = 100) -> Topology:
    """An ``x`` by ``y`` 2-D torus with ``bw_x``/``bw_y`` GB/s per link along each dimension."""
    topo = torus((x, y), (bw_x, bw_y))
    params = _params(x=x, y=y, bw_x=bw_x, bw_y=bw_y)
    return replace(topo, extra={"template": "torus_2d", "template_params": params})


def torus_3d(
    x: int = 4, y: int = 4, z: int = 2, bw_x: float = 100, bw_y: float = 100, bw_z: float = 50
) -> Topology:
    """An ``x`` by ``y`` by ``z`` 3-D torus with one bandwidth per dimension."""
    topo = torus((x, y, z), (bw_x, bw_y, bw_z))
    params = _params(x=x, y=y, z=z, bw_x=bw_x, bw_y=bw_y, bw_z=bw_z)
    return replace(topo, extra={"template": "torus_3d", "template_params": params})


def fat_tree(
    leaves: int = 4,
    spines: int = 2,
    gpus_per_leaf: int = 4,
    gpu_bw: float = 50,
    oversubscription: float = 1,
) -> Topology:
    """A two-level fat tree (leaf-spine): every leaf switch links to every spine switch.

    GPU ``l<i>.gpu<j>`` links to leaf ``leaf<i>`` at ``gpu_bw`` GB/s. Each leaf-spine link gets
    ``gpus_per_leaf * gpu_bw / (spines * oversubscription)`` GB/s, so a leaf's uplink bandwidth is
    its downlink bandwidth divided by ``oversubscription`` (1 = non-blocking).
    """
    leaves = _count(leaves, "number of leaves", 1)
    spines = _count(spines, "number of spines", 1)
    per_leaf = _count(gpus_per_leaf, "GPUs per leaf", 1)
    gpu = _bandwidth(gpu_bw, "GPU bandwidth")
    over = _bandwidth(oversubscription, "oversubscription")
    if leaves * per_leaf < 2:
        raise TopologyError("a fat tree needs at least two GPUs")
    b = _Builder(
        f"fat tree {leaves} leaves x {per_leaf} GPUs, {spines} spines",
        template="fat_tree",
        template_params=_params(
            leaves=leaves, spines=spines, gpus_per_leaf=per_leaf, gpu_bw=gpu, oversubscription=over
        ),
    )
    width = (leaves * per_leaf - 1) * _COL
    uplink = per_leaf * gpu / (spines * over)
    for s, x in enumerate(_spread(spines, width)):
        b.node(f"spine{s}", SWITCH, "spine", x, 0, "spines")
    for i in range(leaves):
        leaf_x = (i * per_leaf + (per_leaf - 1) / 2) * _COL
        leaf = b.node(f"leaf{i}", SWITCH, "leaf", leaf_x, _ROW * 1.5, f"l{i}")
        for s in range(spines):
            b.link(leaf, f"spine{s}", uplink)
        for j in range(per_leaf):
            g = b.node(
                f"l{i}.gpu{j}", COMPUTE, "gpu", (i * per_leaf + j) * _COL, _ROW * 2.5, f"l{i}"
            )
            b.link(g, leaf, gpu)
    return b.build()


def fully_connected(n: int = 8, bandwidth: float = 50) -> Topology:
    """``n`` compute nodes ``gpu<i>`` with a direct full-duplex link between every pair."""
    n = _count(n, "number of nodes", 2)
    bw = _bandwidth(bandwidth, "bandwidth")
    b = _Builder(
        f"fully connected {n}",
        template="fully_connected",
        template_params=_params(n=n, bandwidth=bw),
    )
    radius = max(1.0, n * _COL / (2 * math.pi))
    ids = [
        b.node(
            f"gpu{i}",
            COMPUTE,
            "gpu",
            radius * math.sin(2 * math.pi * i / n),
            -radius * math.cos(2 * math.pi * i / n),
            "mesh",
        )
        for i in range(n)
    ]
    for i, j in itertools.combinations(range(n), 2):
        b.link(ids[i], ids[j], bw)
    return b.build()


# ----------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a template: ``type`` is ``int`` or ``float``; ``max`` None = unbounded."""

    name: str
    label: str
    type: type
    default: int | float
    min: int | float
    max: int | float | None = None


@dataclass(frozen=True)
class TemplateSpec:
    """A template for a gallery: call ``function(**values)`` with one value per parameter."""

    function: Callable[..., Topology]
    title: str
    description: str
    params: tuple[ParamSpec, ...]

    def defaults(self) -> dict[str, int | float]:
        return {p.name: p.default for p in self.params}


def _boxes(default: int) -> ParamSpec:
    return ParamSpec("n", "Boxes", int, default, 1, 512)


TEMPLATES: dict[str, TemplateSpec] = {
    "dgx_a100": TemplateSpec(
        dgx_a100,
        "DGX A100",
        "8 GPUs per box on one NVSwitch (300 GB/s); for several boxes one 25 GB/s NIC per GPU, "
        "even/odd NICs to two IB switches.",
        (
            _boxes(2),
            ParamSpec("nvlink_bw", "NVLink GB/s per GPU", float, 300, 1, 10_000),
            ParamSpec("nic_bw", "NIC GB/s", float, 25, 1, 10_000),
        ),
    ),
    "dgx_h100_rail": TemplateSpec(
        dgx_h100_rail,
        "DGX H100 (rail-optimized)",
        "8 GPUs per box on one NVSwitch (450 GB/s); one 50 GB/s NIC per GPU, GPU j of every box "
        "on rail switch j.",
        (
            _boxes(2),
            ParamSpec("nvlink_bw", "NVLink GB/s per GPU", float, 450, 1, 10_000),
            ParamSpec("nic_bw", "NIC GB/s", float, 50, 1, 10_000),
        ),
    ),
    "superpod": TemplateSpec(
        superpod,
        "DGX SuperPOD (rail-optimised, 2-3 tiers)",
        "Scalable units of 32 DGX H100 (8 GPUs on NVSwitch, one 50 GB/s NIC each), one leaf per "
        "rail per SU; 2 tiers up to 8 SUs, 3 tiers (pods of 4 SUs, cores) from 16, as NVIDIA's "
        "reference architecture.",
        (
            ParamSpec("sus", "Scalable units (32 nodes)", int, 1, 1, 512),
            ParamSpec("nvlink_bw", "NVLink GB/s per GPU", float, 450, 1, 10_000),
            ParamSpec("nic_bw", "NIC GB/s", float, 50, 1, 10_000),
            ParamSpec("core_oversubscription", "Core oversubscription", float, 1, 0.01, 1000),
            ParamSpec("nodes_per_su", "Nodes per SU", int, SU_NODES, 1, SU_NODES),
        ),
    ),
    "nvl72": TemplateSpec(
        nvl72,
        "GB200 NVL72-like rack",
        "Blackwell GPUs in one NVLink domain (72 in an NVL72 rack), each 900 GB/s to an "
        "NVSwitch fabric that reduces and multicasts (NVLS).",
        (
            ParamSpec("gpus", "GPUs", int, 72, 2, 576),
            ParamSpec("nvlink_bw", "NVLink GB/s per GPU", float, 900, 1, 10_000),
        ),
    ),
    "nvl72_racks": TemplateSpec(
        nvl72_racks,
        "GB200 NVL72 racks on InfiniBand",
        "Racks of 72 Blackwell GPUs on one NVLink domain (900 GB/s, NVLS), every GPU with a "
        "400 Gb/s NIC on a rail-optimised non-blocking leaf-spine InfiniBand fabric, as the "
        "DGX GB200 SuperPOD (an SU is 8 racks).",
        (
            ParamSpec("racks", "Racks (72 GPUs)", int, 2, 2, IB_LEAF_DOWN),
            ParamSpec("nvlink_bw", "NVLink GB/s per GPU", float, 900, 1, 10_000),
            ParamSpec("nic_bw", "NIC GB/s", float, 50, 1, 10_000),
            ParamSpec("trays", "Compute trays per rack (4 GPUs)", int, NVL72_TRAYS, 1, NVL72_TRAYS),
        ),
    ),
    "hpn": TemplateSpec(
        hpn,
        "Alibaba HPN (dual-ToR, dual-plane)",
        "Hosts of 8 GPUs, each GPU a NIC with two 200 Gb/s ports to the two ToRs of its rail; "
        "segments of 128 hosts, ToRs of plane a/b to that plane's 60 aggregation switches "
        "(15 segments a pod, 1.067:1), pods joined 15:1 (SIGCOMM 2024).",
        (
            # the gallery starts from one segment (1024 GPUs); the function's defaults are the
            # paper's pod (15 segments, 15 360 GPUs)
            ParamSpec("segments", "Segments per pod (128 hosts)", int, 1, 1, HPN_SEGMENTS),
            ParamSpec("hosts", "Hosts per segment", int, HPN_HOSTS, 1, HPN_HOSTS),
            ParamSpec("pods", "Pods", int, 1, 1, 64),
            ParamSpec("nvlink_bw", "NVLink GB/s per GPU", float, 400, 1, 10_000),
            ParamSpec("port_bw", "NIC port GB/s (2 per GPU)", float, 25, 1, 10_000),
            ParamSpec("aggs", "Aggregation switches per plane", int, HPN_AGGS, 1, 128),
            ParamSpec("uplink_bw", "ToR-aggregation GB/s (per 128 hosts)", float, 50, 1, 10_000),
            ParamSpec("core_oversubscription", "Core oversubscription", float, 15, 0.01, 1000),
        ),
    ),
    "clos3": TemplateSpec(
        clos3,
        "3-tier Clos (Meta RoCE AI zones)",
        "Racks of 2 hosts x 8 H100 (one 400 Gb/s NIC per GPU) on a rack switch (RTSW), "
        "non-blocking to the zone's CTSWs (192 racks a zone), zones joined by ATSWs 7:1 "
        "oversubscribed (SIGCOMM 2024, Llama 3; 8 zones = 24 576 GPUs).",
        (
            # the gallery starts from 2 zones of 16 racks (512 GPUs); the function's defaults are
            # the 24 576-GPU cluster (8 zones of 192 racks)
            ParamSpec("zones", "AI zones", int, 2, 1, 64),
            ParamSpec("racks_per_zone", "Racks per zone (16 GPUs)", int, 16, 1, 1024),
            ParamSpec("nvlink_bw", "NVLink GB/s per GPU", float, 450, 1, 10_000),
            ParamSpec("nic_bw", "NIC GB/s", float, 50, 1, 10_000),
            ParamSpec("ctsws", "CTSWs per zone", int, META_CTSWS, 1, 256),
            ParamSpec("atsw_oversubscription", "ATSW oversubscription", float, 7, 0.01, 1000),
        ),
    ),
    "mi250": TemplateSpec(
        mi250,
        "AMD MI250",
        "16 GCDs per box joined by xGMI (50 GB/s per link); for several boxes every GCD has "
        "16 GB/s to one IB switch.",
        (
            _boxes(1),
            ParamSpec("xgmi_bw", "xGMI GB/s per link", float, 50, 1, 10_000),
            ParamSpec("ib_bw", "IB GB/s per GCD", float, 16, 1, 10_000),
        ),
    ),
    "ring": TemplateSpec(
        ring,
        "Ring",
        "Compute nodes on a ring of full-duplex links.",
        (
            # a ring of n needs n trees of n-1 hops: n = 256 solves in ~30 s here, 512 in ~150 s
            ParamSpec("n", "Nodes", int, 8, 2, 256),
            ParamSpec("bandwidth", "GB/s per link", float, 100, 0.001, 100_000),
        ),
    ),
    "torus_2d": TemplateSpec(
        torus_2d,
        "2-D torus",
        "A wrap-around grid of compute nodes, one bandwidth per dimension.",
        (
            ParamSpec("x", "Size X", int, 4, 2, 64),
            ParamSpec("y", "Size Y", int, 4, 2, 64),
            ParamSpec("bw_x", "GB/s along X", float, 100, 0.001, 100_000),
            ParamSpec("bw_y", "GB/s along Y", float, 100, 0.001, 100_000),
        ),
    ),
    "torus_3d": TemplateSpec(
        torus_3d,
        "3-D torus",
        "A wrap-around 3-D grid of compute nodes, one bandwidth per dimension.",
        (
            ParamSpec("x", "Size X", int, 4, 2, 64),
            ParamSpec("y", "Size Y", int, 4, 2, 64),
            ParamSpec("z", "Size Z", int, 2, 2, 64),
            ParamSpec("bw_x", "GB/s along X", float, 100, 0.001, 100_000),
            ParamSpec("bw_y", "GB/s along Y", float, 100, 0.001, 100_000),
            ParamSpec("bw_z", "GB/s along Z", float, 50, 0.001, 100_000),
        ),
    ),
    "fat_tree": TemplateSpec(
        fat_tree,
        "Fat tree (leaf-spine)",
        "GPUs on leaf switches, every leaf linked to every spine; uplinks sized by the "
        "oversubscription ratio (1 = non-blocking).",
        (
            ParamSpec("leaves", "Leaf switches", int, 4, 1, 1024),
            ParamSpec("spines", "Spine switches", int, 2, 1, 256),
            ParamSpec("gpus_per_leaf", "GPUs per leaf", int, 4, 1, 256),
            ParamSpec("gpu_bw", "GB/s per GPU", float, 50, 0.001, 100_000),
            ParamSpec("oversubscription", "Oversubscription", float, 1, 0.01, 1000),
        ),
    ),
    "fully_connected": TemplateSpec(
        fully_connected,
        "Fully connected",
        "A direct full-duplex link between every pair of compute nodes.",
        (
            ParamSpec("n", "Nodes", int, 8, 2, 256),
            ParamSpec("bandwidth", "GB/s per link", float, 50, 0.001, 100_000),
        ),
    ),
}

DEFAULT_TEMPLATE = "dgx_a100"

#: Limits across parameters, checked from the parameters before anything is built (bounded time
#: and memory for hostile sizes), so that every template the command line accepts gives a file
#: the rest of the tool reads: 131 072 compute nodes (the largest cluster of the scale issue; a
#: rail-optimised fabric has about 2.2 nodes per GPU, under the model's 524 288 nodes,
#: MAX_NODES, also estimated up front) and the model's 1 048 576 links (MAX_LINKS). The
#: 131 072-GPU 3-tier Clos (287 232 nodes, 524 800 links) is a 69 MB v1 file and 128 MB of
#: GraphML, under the 512 MB file cap (solver.io.formats.MAX_FILE_BYTES) and the parse estimate.
MAX_TEMPLATE_COMPUTE = 131_072
MAX_TEMPLATE_LINKS = 1_048_576


def _template_nodes(name: str, a: dict[str, Any], compute: int) -> int:
    """Nodes of the cluster templates before they are built (0: bounded by their ranges)."""
    if name == "nvl72_racks":
        racks, trays = int(a["racks"]), int(a["trays"])
        leaves = NVL72_TRAY_GPUS * trays // _rack_leaf_trays(racks, trays)
        return 2 * compute + racks + leaves - (-compute // IB_SWITCH_PORTS)
    if name == "hpn":
        pods, aggs = int(a["pods"]), int(a["aggs"])
        tors = pods * int(a["segments"]) * 2 * HPN_RAILS
        return 2 * compute + compute // HPN_RAILS + tors + 2 * aggs * (pods + (pods > 1))
    if name == "clos3":
        zones, ctsws = int(a["zones"]), int(a["ctsws"])
        racks = zones * int(a["racks_per_zone"])
        return 2 * compute + compute // 8 + racks + ctsws * (zones + (zones > 1))
    if name == "superpod":
        sus = int(a["sus"])
        switches = 8 * sus + (4 * sus if sus <= 8 else 32 * sus // 4 + 4 * sus)
        return 2 * compute + compute // SU_RAILS + switches
    return 0


def _template_size(name: str, a: dict[str, Any]) -> tuple[int, int]:
    """(compute nodes, links) of a template before it is built (products of its parameters)."""
    if name == "torus_3d":
        n = int(a["x"]) * int(a["y"]) * int(a["z"])
        return n, 3 * n
    if name == "torus_2d":
        n = int(a["x"]) * int(a["y"])
        return n, 2 * n
    if name == "fat_tree":
        gpus = int(a["leaves"]) * int(a["gpus_per_leaf"])
        return gpus, gpus + int(a["leaves"]) * int(a["spines"])
    if name == "superpod":
        sus = int(a["sus"])
        gpus = sus * int(a["nodes_per_su"]) * SU_RAILS
        uplinks = 8 * sus * 4 * sus if sus <= 8 else 8 * sus * 32 + 4 * sus * 32
        return gpus, 3 * gpus + uplinks
    if name == "nvl72_racks":
        racks, trays = int(a["racks"]), int(a["trays"])
        leaves = NVL72_TRAY_GPUS * trays // _rack_leaf_trays(racks, trays)
        spines = -(-racks * trays * NVL72_TRAY_GPUS // IB_SWITCH_PORTS)
        gpus = racks * trays * NVL72_TRAY_GPUS
        return gpus, 3 * gpus + leaves * spines
    if name == "hpn":
        hosts = int(a["pods"]) * int(a["segments"]) * int(a["hosts"])
        tors = int(a["pods"]) * int(a["segments"]) * 2 * HPN_RAILS
        cores = 2 * int(a["aggs"]) * int(a["pods"]) if int(a["pods"]) > 1 else 0
        gpus = hosts * HPN_RAILS
        return gpus, 4 * gpus + tors * int(a["aggs"]) + cores
    if name == "clos3":
        zones, racks, ctsws = int(a["zones"]), int(a["racks_per_zone"]), int(a["ctsws"])
        gpus = zones * racks * META_HOSTS_PER_RACK * 8
        return gpus, 3 * gpus + zones * racks * ctsws + (zones * ctsws if zones > 1 else 0)
    if name == "fully_connected":
        n = int(a["n"])
        return n, n * (n - 1) // 2
    return 0, 0  # boxes and rings: the per-parameter ranges already bound them


def make(name: str, **values: Any) -> Topology:
    """Build template ``name`` with ``values`` (missing ones take their defaults), range-checked."""
    spec = TEMPLATES.get(name)
    if spec is None:
        raise TopologyError(f"unknown template {name!r} (known: {', '.join(TEMPLATES)})")
    known = {p.name: p for p in spec.params}
    for key in values:
        if key not in known:
            raise TopologyError(f"template {name!r} has no parameter {key!r}")
    args = spec.defaults()
    for key, value in values.items():
        p = known[key]
        if p.type is int:
            value = _count(value, p.label, int(p.min), None if p.max is None else int(p.max))
        else:
            num = to_fraction(value, p.label)
            if num < Fraction(p.min) or (p.max is not None and num > Fraction(p.max)):
                raise TopologyError(f"{p.label} must be between {p.min} and {p.max}, got {value!r}")
        args[key] = value
    compute, links = _template_size(name, args)
    if compute > MAX_TEMPLATE_COMPUTE:
        raise TopologyError(
            f"template {name!r} with these parameters has {compute} compute nodes; the limit is "
            f"{MAX_TEMPLATE_COMPUTE}"
        )
    if links > MAX_TEMPLATE_LINKS:
        raise TopologyError(
            f"template {name!r} with these parameters has {links} links; the limit is "
            f"{MAX_TEMPLATE_LINKS}"
        )
    nodes = _template_nodes(name, args, compute)
    if nodes > MAX_NODES:
        raise TopologyError(
            f"template {name!r} with these parameters has {nodes} nodes; the limit is {MAX_NODES}"
        )
    topo = spec.function(**args)
    if len(topo.compute_ids) > MAX_TEMPLATE_COMPUTE:  # box templates: 16 GCDs per MI250 box
        raise TopologyError(
            f"template {name!r} with these parameters has {len(topo.compute_ids)} compute nodes; "
            f"the limit is {MAX_TEMPLATE_COMPUTE}"
        )
    return topo


def default_topology() -> Topology:
    """The fabric a new document starts with: 2x DGX A100."""
    return dgx_a100(2)


# ----------------------------------------------------------------------------- samples
#: Sample files written by :func:`write_samples`: file name -> (template, parameters, description).
SAMPLES: dict[str, tuple[str, dict[str, Any], str]] = {
    "dgx_a100_1x.json": ("dgx_a100", {"n": 1}, "1 DGX A100 box: 8 GPUs on one NVSwitch"),
    "dgx_a100_2x.json": ("dgx_a100", {"n": 2}, "2 DGX A100 boxes, NICs to 2 IB switches"),
    "dgx_a100_4x.json": ("dgx_a100", {"n": 4}, "4 DGX A100 boxes, NICs to 2 IB switches"),
    "mi250_1x.json": ("mi250", {"n": 1}, "1 MI250 box: 16 GCDs on xGMI"),
    "mi250_2x.json": ("mi250", {"n": 2}, "2 MI250 boxes, every GCD 16 GB/s to one IB switch"),
    "dgx_h100_rail_2x.json": ("dgx_h100_rail", {"n": 2}, "2 DGX H100 boxes, 8 rail switches"),
    "torus_4x4.json": ("torus_2d", {"x": 4, "y": 4, "bw_x": 100, "bw_y": 50}, "4x4 2-D torus"),
    "torus_4x4x2.json": ("torus_3d", {}, "4x4x2 3-D torus"),
    "fat_tree_4x4.json": (
        "fat_tree",
        {"leaves": 4, "spines": 2, "gpus_per_leaf": 4, "oversubscription": 2},
        "leaf-spine fat tree, 2:1 oversubscribed",
    ),
    "ring_8.json": ("ring", {"n": 8}, "8 GPUs on a ring"),
}


def write_samples(folder: str | Path) -> list[Path]:
    """Write every :data:`SAMPLES` fabric as a v1 file into ``folder``; return the paths."""
    from solver.io.formats import save

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for file_name, (template, params, _) in SAMPLES.items():
        path = folder / file_name
        save(make(template, **params), path)
        paths.append(path)
    return paths


__all__ = [
    "DEFAULT_TEMPLATE",
    "MI250_XGMI",
    "SAMPLES",
    "TEMPLATES",
    "ParamSpec",
    "TemplateSpec",
    "default_topology",
    "dgx_a100",
    "dgx_h100_rail",
    "fat_tree",
    "fully_connected",
    "hpn",
    "clos3",
    "make",
    "mi250",
    "nvl72_racks",
    "ring",
    "superpod",
    "torus",
    "torus_2d",
    "torus_3d",
    "write_samples",
]
