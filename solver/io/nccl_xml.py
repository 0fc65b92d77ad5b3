"""Import NCCL topology dumps (the XML that ``NCCL_TOPO_DUMP_FILE`` writes), one box per file.

What becomes what (node ids are prefixed with ``b<box>.``):

- ``<gpu>`` -> compute node ``gpu<i>`` (i = position in rank order; ``dev``/``rank``/``busid`` kept);
- ``<nvlink tclass="0x068000">`` (to an NVSwitch) -> all NVSwitches of the box are one switch node
  ``nvsw``; the GPU's link to it is ``count`` x the per-link NVLink rate of its generation
  (``sm``: 20 GB/s before Volta, 25 GB/s Volta/Ampere/Hopper, 14.0625 GB/s sm86, 50 GB/s
  Blackwell, each direction). NVLinks between GPUs (``tclass`` 0x03...) link the two GPUs directly
  (full duplex when both sides agree, else one-way per side); ``tclass`` 0x068001 (POWER9) links
  to the GPU's CPU;
- ``<cpu>`` -> switch ``cpu<numaid>``; CPUs are joined by an inter-socket link with NCCL's figure
  for the architecture (Intel QPI 6, Skylake+ UPI 10, AMD 16, POWER9 32, ARM 6 GB/s);
- ``<pci>`` bridges (class 0x060400) -> switch ``pcie<k>``; every ``<pci>`` element links to its
  parent at NCCL's PCIe rate: ``link_width`` x per-lane rate / 80 GB/s, per lane 15/30/60/120/240/
  480 (x100 Mb/s) for 2.5/5/8/16/32/64 GT/s (width 0 -> 16, unknown speed -> 60, as NCCL does);
  bridges with no GPU or NIC below them are dropped;
- ``<net>`` (inside ``<nic>``) -> switch ``nic<k>`` whose network link has the net's ``speed``
  (Mb/s / 8000 = GB/s).

``boxes`` > 1 replicates the box and joins the NICs to the network: ``fabric="ib"`` one IB switch
``ib0`` for every NIC, ``fabric="rail"`` one switch ``rail<k>`` per NIC index k (rail-optimized).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from solver.io.untrusted import bounded_int, parse_xml
from solver.model.errors import TopologyError
from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology

FABRICS = ("ib", "rail")
MAX_BOXES = 4096

# NCCL's per-lane PCIe rates in units of 100 Mb/s (bandwidth GB/s = width * rate / 80).
PCI_LANE_RATE = {
    "2.5 GT/s": 15,
    "5 GT/s": 30,
    "8 GT/s": 60,
    "16 GT/s": 120,
    "32 GT/s": 240,
    "2.5 GT/s PCIe": 15,
    "5.0 GT/s PCIe": 30,
    "8.0 GT/s PCIe": 60,
    "16.0 GT/s PCIe": 120,
    "32.0 GT/s PCIe": 240,
    "64.0 GT/s PCIe": 480,
}
PCI_LANE_RATE_DEFAULT = 60
NVSWITCH_CLASS = "0x068000"
CPU_CLASS = "0x068001"
BRIDGE_CLASS = "0x060400"

MAX_PCI_WIDTH = 64  # lanes; PCIe links have at most 32
MAX_NVLINK_COUNT = 1024  # links to one peer (NVSwitch systems have 18)
MAX_NET_MBPS = 10**9  # 1 Pb/s per NIC

_COL = 100.0
_ROW = 120.0


def pci_bandwidth(link_speed: str | None, link_width: str | None, what: str) -> Fraction:
    """NCCL's bandwidth (GB/s) of a PCIe link from its ``link_speed``/``link_width`` attributes."""
    width = (
        bounded_int(link_width, f"{what}: link_width", minimum=0, maximum=MAX_PCI_WIDTH)
        if link_width not in (None, "")
        else 0
    )
    if width == 0:
        width = 16
    rate = PCI_LANE_RATE.get((link_speed or "").strip(), PCI_LANE_RATE_DEFAULT)
    return Fraction(width * rate, 80)


def nvlink_bandwidth(sm: int) -> Fraction:
    """Per-link, per-direction NVLink bandwidth (GB/s) for a GPU of compute capability ``sm``."""
    if sm < 70:
        return Fraction(20)
    if sm == 86:
        return Fraction(225, 16)
    if sm >= 100:
        return Fraction(50)
    return Fraction(25)


def cpu_link_bandwidth(attrs: dict[str, str]) -> Fraction:
    """NCCL's figure (GB/s) for the link between two CPU sockets of this kind."""
    arch = attrs.get("arch", "").lower()
    vendor = attrs.get("vendor", "")
    if arch == "ppc64":
        return Fraction(32)
    if arch == "arm64":
        return Fraction(6)
    if vendor == "AuthenticAMD":
        return Fraction(16)
    if vendor == "GenuineIntel":
        try:
            family = int(attrs.get("familyid", "0"), 0)
            model = int(attrs.get("modelid", "0"), 0)
        except ValueError:
            family = model = 0
        return Fraction(10) if family == 6 and model >= 0x55 else Fraction(6)
    return Fraction(6)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


@dataclass
class _Box:
    """One box being built: local node ids, kinds, links, tree for the layout."""

    where: str
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> attrs
    links: list[tuple[str, str, Fraction, bool, dict]] = field(default_factory=list)
    children: dict[str, list[str]] = field(default_factory=dict)  # layout tree
    gpu_busid: dict[str, str] = field(default_factory=dict)  # pci busid -> gpu id
    gpu_cpu: dict[str, str] = field(default_factory=dict)
    nvlinks: list[tuple[str, str, str, int, ET.Element]] = field(default_factory=list)
    nets: list[tuple[str, Fraction]] = field(default_factory=list)  # nic id, net speed
    cpus: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    counter: dict[str, int] = field(default_factory=dict)

    def new_id(self, prefix: str) -> str:
        k = self.counter.get(prefix, 0)
        self.counter[prefix] = k + 1
        return f"{prefix}{k}"

    def add(self, node_id: str, kind: str, role: str, parent: str | None, **extra: Any) -> str:
        if node_id in self.nodes:
            raise TopologyError(f"{self.where}: duplicate {role} {node_id!r}")
        self.nodes[node_id] = {"kind": kind, "role": role, "extra": extra}
        self.children.setdefault(node_id, [])
        if parent is not None:
            self.children.setdefault(parent, []).append(node_id)
        return node_id


def _walk(box: _Box, elem: ET.Element, parent: str, cpu: str) -> None:
    """Add the devices below ``elem`` (a <pci>, <nic> or <cpu> child) under node ``parent``."""
    tag = _local(elem.tag)
    if tag == "pci":
        busid = (elem.get("busid") or "").lower()
        what = f"{box.where}: <pci busid={busid!r}>"
        cls = (elem.get("class") or "").lower()
        if cls == NVSWITCH_CLASS:
            return  # NVSwitches are reached through the GPUs' <nvlink> entries
        bw = pci_bandwidth(elem.get("link_speed"), elem.get("link_width"), what)
        gpus = [c for c in elem if _local(c.tag) == "gpu"]
        nics = [c for c in elem if _local(c.tag) == "nic"]
        subs = [c for c in elem if _local(c.tag) == "pci"]
        if gpus:
            _add_gpu(box, gpus[0], parent, cpu, bw, busid)
        elif nics:
            nets = [n for nic in nics for n in nic if _local(n.tag) == "net"]
            if len(nets) == 1:
                _add_net(box, nets[0], parent, bw, busid)
            elif nets:  # a multi-port NIC: its ports share the PCIe link
                dev = box.add(box.new_id("pcie"), SWITCH, "pcie", parent, busid=busid)
                box.links.append((dev, parent, bw, False, {}))
                for net in nets:
                    _add_net(box, net, dev, None, busid)
        elif subs:
            bridge = box.add(box.new_id("pcie"), SWITCH, "pcie", parent, busid=busid)
            box.links.append((bridge, parent, bw, False, {}))
            for sub in subs:
                _walk(box, sub, bridge, cpu)
    elif tag == "nic":  # a NIC without PCI information, directly under a CPU
        for net in elem:
            if _local(net.tag) == "net":
                _add_net(box, net, parent, None, "")


def _add_gpu(box: _Box, elem: ET.Element, parent: str, cpu: str, bw: Fraction, busid: str) -> None:
    what = f"{box.where}: <gpu> at busid {busid!r}"
    attrs = {}
    for key in ("dev", "rank", "sm"):
        value = elem.get(key)
        if value is None:
            if key == "rank":
                continue
            raise TopologyError(f"{what}: missing '{key}'")
        attrs[key] = bounded_int(value, f"{what}: '{key}'", minimum=0, maximum=10**6)
    gpu = box.add(f"gpu@{busid or attrs['dev']}", COMPUTE, "gpu", parent, busid=busid, **attrs)
    box.links.append((gpu, parent, bw, False, {}))
    if busid:
        box.gpu_busid[busid] = gpu
    box.gpu_cpu[gpu] = cpu
    for nv in elem:
        if _local(nv.tag) != "nvlink":
            continue
        target = (nv.get("target") or "").lower()
        tclass = (nv.get("tclass") or "").lower()
        count = bounded_int(
            nv.get("count", "1"), f"{what}: <nvlink target={target!r}> count",
            minimum=1, maximum=MAX_NVLINK_COUNT,
        )
        box.nvlinks.append((gpu, target, tclass, count, nv))


def _add_net(box: _Box, net: ET.Element, parent: str, bw: Fraction | None, busid: str) -> None:
    name = net.get("name") or f"net{len(box.nets)}"
    what = f"{box.where}: <net name={name!r}>"
    speed_text = net.get("speed")
    if speed_text is None:
        raise TopologyError(f"{what}: missing 'speed' (Mb/s)")
    speed = Fraction(
        bounded_int(speed_text, f"{what}: speed (Mb/s)", minimum=1, maximum=MAX_NET_MBPS), 8000
    )
    nic = box.add(box.new_id("nic"), SWITCH, "nic", parent, name=name, busid=busid)
    box.links.append((nic, parent, speed if bw is None else bw, False, {}))
    box.nets.append((nic, speed))


def _parse_box(text: str, where: str) -> _Box:
    root = parse_xml(text, where)
    if _local(root.tag) != "system":
        raise TopologyError(
            f"{where}: not an NCCL topology dump (root element <{_local(root.tag)}>, expected <system>)"
        )
    box = _Box(where=where)
    cpus = [c for c in root if _local(c.tag) == "cpu"]
    if not cpus:
        raise TopologyError(f"{where}: no <cpu> element in <system>")
    for i, cpu_elem in enumerate(cpus):
        numa = cpu_elem.get("numaid", str(i))
        cpu = box.add(f"cpu{numa}", SWITCH, "cpu", None, numaid=numa)
        box.cpus.append((cpu, dict(cpu_elem.attrib)))
        for child in cpu_elem:
            _walk(box, child, cpu, cpu)
    gpus = [nid for nid, a in box.nodes.items() if a["kind"] == COMPUTE]
    if not gpus:
        raise TopologyError(f"{where}: no <gpu> element found")
    _add_nvlinks(box)
    _prune(box)
    _add_cpu_links(box)
    _rename(box)
    return box


def _add_nvlinks(box: _Box) -> None:
    to_nvsw: dict[str, Fraction] = {}
    gpu_pairs: dict[tuple[str, str], Fraction] = {}
    for gpu, target, tclass, count, _ in box.nvlinks:
        bw = count * nvlink_bandwidth(box.nodes[gpu]["extra"]["sm"])
        what = f"{box.where}: <gpu> at busid {box.nodes[gpu]['extra']['busid']!r}"
        if tclass == NVSWITCH_CLASS:
            to_nvsw[gpu] = to_nvsw.get(gpu, Fraction(0)) + bw
        elif tclass == CPU_CLASS:
            pair = (gpu, box.gpu_cpu[gpu])
            gpu_pairs[pair] = gpu_pairs.get(pair, Fraction(0)) + bw
            gpu_pairs[pair[::-1]] = gpu_pairs.get(pair[::-1], Fraction(0)) + bw
        elif tclass.startswith("0x03"):
            other = box.gpu_busid.get(target)
            if other is None:
                raise TopologyError(f"{what}: <nvlink target={target!r}>: no GPU with that busid")
            if other == gpu:
                raise TopologyError(f"{what}: <nvlink> to itself")
            pair = (gpu, other)
            gpu_pairs[pair] = gpu_pairs.get(pair, Fraction(0)) + bw
        else:
            raise TopologyError(
                f"{what}: <nvlink target={target!r}> has unsupported tclass {tclass!r}"
            )
    if to_nvsw:
        box.add("nvsw", SWITCH, "nvswitch", None)
        for gpu, bw in to_nvsw.items():
            box.links.append((gpu, "nvsw", bw, False, {"nvlink": True}))
    done: set[tuple[str, str]] = set()
    for (a, b), bw in gpu_pairs.items():
        if (a, b) in done:
            continue
        back = gpu_pairs.get((b, a))
        if back == bw:
            box.links.append((a, b, bw, False, {"nvlink": True}))
            done.add((b, a))
        else:
            box.links.append((a, b, bw, True, {"nvlink": True}))
        done.add((a, b))


def _prune(box: _Box) -> None:
    """Drop PCIe bridges and CPUs that lead to no GPU or NIC (dead ends)."""
    while True:
        degree: dict[str, int] = {nid: 0 for nid in box.nodes}
        for a, b, *_ in box.links:
            degree[a] += 1
            degree[b] += 1
        dead = {
            nid
            for nid, attrs in box.nodes.items()
            if attrs["role"] in ("pcie", "cpu")
            and degree[nid] <= (1 if attrs["role"] == "pcie" else 0)
        }
        if not dead:
            return
        for nid in dead:
            del box.nodes[nid]
        box.links = [link for link in box.links if link[0] not in dead and link[1] not in dead]
        box.cpus = [c for c in box.cpus if c[0] not in dead]
        for kids in box.children.values():
            kids[:] = [k for k in kids if k not in dead]


def _add_cpu_links(box: _Box) -> None:
    for i, (a, attrs_a) in enumerate(box.cpus):
        for b, attrs_b in box.cpus[i + 1 :]:
            bw = min(cpu_link_bandwidth(attrs_a), cpu_link_bandwidth(attrs_b))
            box.links.append((a, b, bw, False, {}))


def _rename(box: _Box) -> None:
    """Number the GPUs ``gpu0..`` in rank order (then dev, then file order)."""
    gpus = [nid for nid, a in box.nodes.items() if a["kind"] == COMPUTE]

    def order(nid: str) -> tuple[int, int]:
        extra = box.nodes[nid]["extra"]
        return (extra.get("rank", extra["dev"]), extra["dev"])

    gpus.sort(key=order)
    names = {old: f"gpu{i}" for i, old in enumerate(gpus)}
    if len(names) != len(gpus):  # pragma: no cover - ids are unique by construction
        raise TopologyError(f"{box.where}: GPU numbering failed")
    ranked = iter(gpus)  # GPU slots in file order receive the GPUs in rank order
    old_nodes = box.nodes
    box.nodes = {}
    for k, v in old_nodes.items():
        if v["kind"] == COMPUTE:
            k = next(ranked)
            v = old_nodes[k]
        box.nodes[names.get(k, k)] = v
    box.links = [(names.get(a, a), names.get(b, b), bw, d, e) for a, b, bw, d, e in box.links]
    box.children = {names.get(k, k): [names.get(c, c) for c in v] for k, v in box.children.items()}


def _layout(box: _Box) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Tree layout of one box: CPUs on top row 1, devices below, leaves in file order."""
    pos: dict[str, tuple[float, float]] = {}
    next_x = [0.0]

    def place(nid: str, depth: int) -> float:
        kids = [k for k in box.children.get(nid, []) if k in box.nodes]
        if not kids:
            x = next_x[0]
            next_x[0] += _COL
        else:
            xs = [place(k, depth + 1) for k in kids]
            x = (min(xs) + max(xs)) / 2
        pos[nid] = (x, (depth + 1) * _ROW)
        return x

    for cpu, _ in box.cpus:
        place(cpu, 0)
    for nid in box.nodes:  # anything outside the tree (e.g. the NVSwitch)
        if nid not in pos and nid != "nvsw":
            place(nid, 0)
    width = max(next_x[0] - _COL, 0.0)
    if "nvsw" in box.nodes:
        pos["nvsw"] = (width / 2, 0.0)
    height = max(y for _, y in pos.values())
    return pos, width, height


def loads(text: str, where: str = "<string>", boxes: int = 1, fabric: str = "ib") -> Topology:
    """Read an NCCL topology dump; ``boxes`` copies joined by ``fabric`` ('ib' or 'rail').

    The result is not validated here; :func:`solver.io.formats.load` validates it.
    """
    if isinstance(boxes, bool) or not isinstance(boxes, int) or not 1 <= boxes <= MAX_BOXES:
        raise TopologyError(f"--boxes must be a whole number from 1 to {MAX_BOXES}, got {boxes!r}")
    if fabric not in FABRICS:
        raise TopologyError(f"--fabric must be one of {', '.join(FABRICS)}, got {fabric!r}")
    box = _parse_box(text, where)
    if boxes > 1 and not box.nets:
        raise TopologyError(
            f"{where}: the box has no <net> (NIC), so {boxes} boxes cannot be connected"
        )
    pos, width, height = _layout(box)
    nodes: list[Node] = []
    links: list[Link] = []
    box_gap = width + 2 * _COL
    for b in range(boxes):
        prefix = f"b{b}."
        for nid, attrs in box.nodes.items():
            x, y = pos[nid]
            nodes.append(
                Node(
                    id=prefix + nid,
                    kind=attrs["kind"],
                    role=attrs["role"],
                    x=round(x + b * box_gap, 1),
                    y=round(y, 1),
                    group=f"b{b}",
                    extra={k: v for k, v in attrs["extra"].items() if v not in ("", None)},
                )
            )
        for a, c, bw, directed, extra in box.links:
            links.append(Link(prefix + a, prefix + c, bw, directed=directed, extra=dict(extra)))
    if boxes > 1:
        total = boxes * box_gap - 2 * _COL
        if fabric == "ib":
            nodes.append(
                Node(
                    "ib0", SWITCH, "ib", x=round(total / 2, 1), y=height + 2 * _ROW, group="network"
                )
            )
            for b in range(boxes):
                for nic, speed in box.nets:
                    links.append(Link(f"b{b}.{nic}", "ib0", speed))
        else:
            rails = len(box.nets)
            for k in range(rails):
                x = total * (k + 0.5) / rails
                nodes.append(
                    Node(
                        f"rail{k}",
                        SWITCH,
                        "ib",
                        x=round(x, 1),
                        y=height + 2 * _ROW,
                        group="network",
                    )
                )
            for b in range(boxes):
                for k, (nic, speed) in enumerate(box.nets):
                    links.append(Link(f"b{b}.{nic}", f"rail{k}", speed))
    stem = (
        Path(where).name.split(".")[0] if where and not where.startswith("<") else "NCCL topology"
    )
    n_gpus = sum(1 for a in box.nodes.values() if a["kind"] == COMPUTE)
    name = f"{stem} ({n_gpus} GPUs)" if boxes == 1 else f"{boxes}x {stem} ({n_gpus} GPUs each)"
    extra: dict[str, Any] = {"imported_from": "nccl-xml", "boxes": boxes}
    if boxes > 1:
        extra["fabric"] = fabric
    return Topology(
        name=name,
        nodes=tuple(nodes),
        links=tuple(links),
        extra=extra,
    )


__all__ = ["FABRICS", "cpu_link_bandwidth", "loads", "nvlink_bandwidth", "pci_bandwidth"]
