"""Import NCCL/RCCL topology dumps (``NCCL_TOPO_DUMP_FILE``) the way the runtimes read them.

Bandwidths follow :mod:`solver.io.nccl.rates` (NCCL's rules, or RCCL's for AMD dumps); node ids
are prefixed with ``b<box>.`` and every node carries its box as ``group`` and a ``role``:

- ``<gpu>`` -> compute node ``gpu<i>`` (role ``gpu``; i = rank order within the box; ``dev``,
  ``rank``, ``sm``, ``gcn``, ``busid`` kept); a ``<pci>`` holding no ``<gpu>`` is not a GPU for the
  runtime (it has no rank) unless the whole dump is a skeleton (below);
- ``<nvlink>`` / ``<xgmi>`` (NCCL topo.cc:811-871; RCCL ncclTopoAddXGMI, which reads no
  ``<nvlink>``: an RCCL dump's are skipped): to a GPU (``tclass`` 0x03..., or 0x120000 for RCCL)
  one way, ``count`` x the per-link figure; to the CPU
  (0x068001) both ways; anything else (0x068000 NVSwitch, or the bridge class a VM shows for an
  invisible switch) both ways to the box's one NVSwitch node ``nvsw`` -- the runtime keeps a single
  NVS node per system (topo.cc:849-853), so in a multi-host (multi-node NVLink) dump all hosts share
  it; targets that name no GPU of the host, and a GPU's link to itself, are skipped as the runtime
  skips them and reported in ``extra["import_notes"]``;
- ``<c2c bw count>`` -> GPU<->CPU link of ``bw*count/1000`` GB/s (topo.cc:905-956);
- ``<cpu>`` -> switch ``cpu<numaid>`` (role ``cpu``); CPUs of one host are joined pairwise
  (SYS, topo.cc:270-283), each direction at the sending CPU's figure;
- ``<pci>`` bridges -> switch ``pcie<k>`` (role ``pcie``); every device links to its parent at
  ``link_width`` x lane rate / 80 GB/s; Broadcom PEX switches shown as two levels are flattened
  into one (ncclTopoFlattenBcmSwitches, NCCL topo.cc:204-265); ``<pcilink>`` joins two switches
  one way at LOC_BW (topo.cc:873-892); bridges with no GPU or NIC below them are dropped, as are
  CPUs with nothing attached;
- ``<net>`` -> switch ``nic<k>`` (role ``nic``); its network link has ``speed`` Mb/s / 8000; a
  ``<net>`` without ``dev`` (and for NCCL one with ``net="0"``) is no network device and skipped.

Hosts: ``<cpu>`` elements are grouped by ``host_hash`` (NCCL topo.cc:713-723; missing = 0), one box
per host. ``boxes`` > 1 repeats the whole dump. Several boxes are joined through their NICs:
``fabric="ib"`` one switch ``ib0``, ``fabric="rail"`` one switch ``rail<k>`` per NIC index.

Skeleton dumps (PCI devices only, e.g. cloud images' ``NCCL_TOPO_FILE``): GPUs and NICs are taken
from the PCI class (0x03... / 0x02...), in file order, and the GPU-to-GPU fabric must be given
(``intra``, see :mod:`solver.io.nccl.options`); NIC speeds come from ``bandwidth={"net": ...}``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from solver.io.nccl import rates
from solver.io.nccl.options import IntraFabric, parse_intra, parse_overrides
from solver.io.untrusted import parse_xml
from solver.model.errors import TopologyError
from solver.model.topology import COMPUTE, NVLS_CAPABILITIES, SWITCH, Link, Node, Topology
from solver.model.values import bounded_int

# Re-exported: the rules live in solver.io.nccl.rates.
cpu_link_bandwidth = rates.cpu_link_bandwidth
nvlink_bandwidth = rates.nvlink_bandwidth
pci_bandwidth = rates.pci_bandwidth

FABRICS = ("ib", "rail")
MAX_BOXES = 4096

_COL = 100.0
_ROW = 120.0


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


@dataclass
class _Box:
    """One host being built: local node ids, links, the tree for the layout."""

    where: str
    runtime: str
    overrides: dict[str, Fraction]
    skeleton: bool
    notes: list[str]
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> attrs
    links: list[tuple[str, str, Fraction, bool, str]] = field(default_factory=list)
    children: dict[str, list[str]] = field(default_factory=dict)  # layout tree
    gpu_busid: dict[str, str] = field(default_factory=dict)  # pci busid -> gpu id
    gpu_cpu: dict[str, str] = field(default_factory=dict)
    nvlinks: list[tuple[str, str, str, int, str]] = field(default_factory=list)
    c2c: list[tuple[str, Fraction]] = field(default_factory=list)
    nets: list[tuple[str, Fraction | None]] = field(default_factory=list)  # nic id, speed
    cpus: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    bridge_ids: dict[str, int] = field(default_factory=dict)  # bridge node -> PCI device id
    pcilinks: list[tuple[str, str]] = field(default_factory=list)  # bridge node, target busid
    counter: dict[str, int] = field(default_factory=dict)
    nvswitch: bool = False

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

    def pci_bw(self, elem: ET.Element, what: str) -> Fraction:
        bw = rates.pci_bandwidth(elem.get("link_speed"), elem.get("link_width"), what)
        return self.overrides.get("pcie", bw)


def _walk(box: _Box, elem: ET.Element, parent: str, cpu: str) -> None:
    """Add the devices below ``elem`` (a <pci> or <nic> of a CPU or bridge) under ``parent``."""
    tag = _local(elem.tag)
    if tag == "nic":  # a NIC without PCI information, directly under a CPU (LOC_BW link)
        for net in _nets(box, [elem]):
            _add_net(box, net, parent, rates.LOC_BW, "", "loc")
        return
    if tag != "pci":
        return
    busid = (elem.get("busid") or "").lower()
    what = f"{box.where}: <pci busid={busid!r}>"
    gpus = [c for c in elem if _local(c.tag) == "gpu"]
    nics = [c for c in elem if _local(c.tag) == "nic"]
    subs = [c for c in elem if _local(c.tag) == "pci"]
    pcilinks = [c for c in elem if _local(c.tag) == "pcilink"]
    kind = rates.pci_class_type(elem.get("class"), box.runtime)
    if gpus:
        if len(gpus) > 1:
            raise TopologyError(_several_gpus(what, gpus))
        _add_gpu(box, gpus[0], parent, cpu, box.pci_bw(elem, what), busid)
    elif nics:
        nets = _nets(box, nics)
        bw = box.pci_bw(elem, what)
        if len(nets) == 1:
            _add_net(box, nets[0], parent, bw, busid, "pcie")
        elif nets:  # a multi-port NIC: its ports share the PCIe link (topo.cc:674-683)
            dev = box.add(box.new_id("pcie"), SWITCH, "pcie", parent, busid=busid)
            box.links.append((dev, parent, bw, False, "pcie"))
            for net in nets:
                _add_net(box, net, dev, None, busid, "loc")
    elif box.skeleton and kind == rates.GPU and not subs:
        gpu = box.add(box.new_id("skelgpu"), COMPUTE, "gpu", parent, busid=busid)
        box.links.append((gpu, parent, box.pci_bw(elem, what), False, "pcie"))
        box.gpu_busid[busid] = gpu
        box.gpu_cpu[gpu] = cpu
    elif box.skeleton and kind == rates.NIC and not subs:
        nic = box.add(box.new_id("nic"), SWITCH, "nic", parent, busid=busid)
        box.links.append((nic, parent, box.pci_bw(elem, what), False, "pcie"))
        box.nets.append((nic, box.overrides.get("net")))
    elif kind == rates.PCI and (subs or pcilinks):
        bridge = box.add(box.new_id("pcie"), SWITCH, "pcie", parent, busid=busid)
        box.links.append((bridge, parent, box.pci_bw(elem, what), False, "pcie"))
        box.bridge_ids[bridge] = rates.pci_device_id(elem.attrib)
        for link in pcilinks:
            box.pcilinks.append((bridge, (link.get("target") or "").lower()))
        for sub in subs:
            _walk(box, sub, bridge, cpu)
    # anything else (an NVSwitch's own PCI function, a GPU without rank, a drive) is no node


def _nets(box: _Box, nics: list[ET.Element]) -> list[ET.Element]:
    """The <net> elements of these <nic>s the runtime makes network devices of (others noted)."""
    out = []
    for nic in nics:
        for net in nic:
            if _local(net.tag) != "net":
                continue
            if rates.net_counts(net.attrib, box.runtime):
                out.append(net)
                continue
            why = (
                "no 'dev' attribute"
                if "dev" not in net.attrib
                else f"net={net.get('net')!r} (a GIN/RMA-only device)"
            )
            box.notes.append(
                f"{box.where}: <net name={net.get('name')!r}> has {why}, so {box.runtime.upper()} "
                "makes no network device of it; skipped"
            )
    return out


def _several_gpus(what: str, gpus: list[ET.Element]) -> str:
    """Why a PCI device holding several <gpu> elements is refused (one line).

    NCCL (NVIDIA/nccl @5067397c) reads every <gpu> of one <pci> (src/graph/topo.cc:660-667).
    With ``mlopart=`` they are the uGPU partitions of one GPU under an MLOPart MPS server: each
    becomes its own DEV node joined to its sibling at MLOPART_LOC_BW (topo.h:18, topo.cc:590-623),
    splits the GPU's NVLinks (topo.cc:827-843) and shares its C2C through a bridge node
    (topo.cc:925-941). Without ``mlopart`` they are several ranks on one device. Neither is a
    GPU of its own in this model, and no public dump exists to check such a model against.
    """
    if any(g.get("mlopart") is not None for g in gpus):
        return (
            f"{what}: {len(gpus)} <gpu> elements with mlopart= are uGPU partitions of one GPU "
            "(NCCL MLOPart, src/graph/topo.cc:590-623), which this importer does not model; dump "
            "the topology without the MLOPart MPS server (one <gpu> per device)"
        )
    return (
        f"{what}: {len(gpus)} <gpu> elements in one PCI device are several ranks on one GPU "
        "(NCCL src/graph/topo.cc:660-667), which this importer does not model; dump the topology "
        "with one rank per GPU"
    )


MAX_ATTR_INT = 2**31 - 1  # dev, rank, sm, link counts: read as C ints by the runtimes


def _int(elem: ET.Element, key: str, what: str) -> int | None:
    value = elem.get(key)
    if value is None:
        return None
    return bounded_int(value, f"{what}: '{key}'", base=0, maximum=MAX_ATTR_INT)


def _add_gpu(box: _Box, elem: ET.Element, parent: str, cpu: str, bw: Fraction, busid: str) -> None:
    what = f"{box.where}: <gpu> at busid {busid!r}"
    attrs: dict[str, Any] = {}
    for key in ("dev", "rank", "sm"):
        value = _int(elem, key, what)
        if value is None and key == "dev":
            raise TopologyError(f"{what}: missing 'dev'")
        if value is not None:
            attrs[key] = value
    if "rank" not in attrs:  # the runtime skips such a GPU (topo.cc:664-665)
        box.notes.append(f"{what}: no 'rank', so the runtime does not use it; skipped")
        return
    if elem.get("gcn"):
        attrs["gcn"] = elem.get("gcn")
    gpu = box.add(f"gpu@{busid or attrs['dev']}", COMPUTE, "gpu", parent, busid=busid, **attrs)
    box.links.append((gpu, parent, bw, False, "pcie"))
    if busid:
        box.gpu_busid[busid] = gpu
    box.gpu_cpu[gpu] = cpu
    for sub in elem:
        tag = _local(sub.tag)
        if tag == "nvlink" and box.runtime == rates.RCCL:
            # RCCL's AMD build reads only <xgmi> (ncclTopoAddXGMI; ncclTopoAddNvLinks is CUDA-only)
            box.notes.append(f"{what}: <nvlink> in an RCCL dump, which RCCL does not read; skipped")
        elif tag in ("nvlink", "xgmi"):
            target = (sub.get("target") or "").lower()
            count = _int(sub, "count", f"{what}: <{tag} target={target!r}>")
            if count is None or count <= 0:
                raise TopologyError(f"{what}: <{tag} target={target!r}> count must be > 0")
            box.nvlinks.append((gpu, target, (sub.get("tclass") or "").lower(), count, tag))
        elif tag == "c2c":
            bw_c2c = rates.c2c_bandwidth(sub.get("bw"), sub.get("count"), what)
            box.c2c.append((gpu, box.overrides.get("c2c", bw_c2c)))


def _add_net(
    box: _Box, net: ET.Element, parent: str, bw: Fraction | None, busid: str, cls: str
) -> None:
    name = net.get("name") or f"net{len(box.nets)}"
    what = f"{box.where}: <net name={name!r}>"
    speed = box.overrides.get("net", rates.net_bandwidth(net.get("speed"), what))
    nic = box.add(box.new_id("nic"), SWITCH, "nic", parent, name=name, busid=busid)
    box.links.append((nic, parent, speed if bw is None else bw, False, cls))
    box.nets.append((nic, speed))


def _link_rate(box: _Box, gpu: str, tag: str) -> Fraction:
    """Per-link line rate of a GPU's <nvlink>/<xgmi> (or the user's override, taken as given).

    The runtime's own figure (:func:`_rated_link_rate`) is kept on the GPU as ``rated_link_bw``;
    where the GPU has no known line rate (sm 86, gfx906/gfx908) the runtime's figure is used
    and the import notes say so."""
    if tag in box.overrides:
        return box.overrides[tag]
    rated = _rated_link_rate(box, gpu, tag)
    extra = box.nodes[gpu]["extra"]
    line = (
        rates.xgmi_line_rate(extra["gcn"]) if tag == "xgmi" else rates.nvlink_line_rate(extra["sm"])
    )
    extra["rated_link_bw"] = str(rated)
    if line is None:
        box.notes.append(
            f"{tag} links of {rates.gcn_arch_name(extra['gcn']) if tag == 'xgmi' else 'sm ' + str(extra['sm'])} "
            f"GPUs at the runtime's rated {float(rated):g} GB/s: no line rate known"
        )
        return rated
    return line


def _rated_link_rate(box: _Box, gpu: str, tag: str) -> Fraction:
    """The runtime's per-link figure for a GPU's <nvlink>/<xgmi>."""
    extra = box.nodes[gpu]["extra"]
    if tag == "xgmi":
        if "gcn" not in extra:
            raise TopologyError(
                f"{box.where}: <gpu> at busid {extra['busid']!r} has <xgmi> links but no 'gcn' "
                "attribute to pick the xGMI speed; give it with --xgmi-bw"
            )
        return rates.xgmi_bandwidth(extra["gcn"])
    if "sm" not in extra:
        raise TopologyError(
            f"{box.where}: <gpu> at busid {extra['busid']!r} has <nvlink> links but no 'sm' "
            "attribute to pick the NVLink speed; give it with --nvlink-bw"
        )
    return rates.nvlink_bandwidth(extra["sm"])


def _add_nvlinks(box: _Box) -> None:
    to_nvsw: dict[str, Fraction] = {}
    pairs: dict[tuple[str, str], Fraction] = {}
    classes: dict[tuple[str, str], str] = {}
    for gpu, target, tclass, count, tag in box.nvlinks:
        bw = count * _link_rate(box, gpu, tag)
        what = f"{box.where}: <gpu> at busid {box.nodes[gpu]['extra']['busid']!r}"
        kind = rates.pci_class_type(tclass, box.runtime)
        if kind == rates.GPU:
            other = box.gpu_busid.get(target)
            if other is None:
                box.notes.append(f"{what}: <{tag} target={target!r}> names no GPU; skipped")
                continue
            if other == gpu:
                box.notes.append(f"{what}: <{tag}> to itself; skipped")
                continue
            ends = [(gpu, other)]  # one way: the other GPU lists its own links
        elif kind == rates.CPU:
            cpu = box.gpu_cpu[gpu]
            ends = [(gpu, cpu), (cpu, gpu)]
        else:
            to_nvsw[gpu] = to_nvsw.get(gpu, Fraction(0)) + bw
            classes[(gpu, "nvsw")] = tag
            continue
        for pair in ends:
            pairs[pair] = pairs.get(pair, Fraction(0)) + bw
            classes[pair] = tag
    if to_nvsw:
        box.nvswitch = True
        for gpu, bw in to_nvsw.items():
            box.links.append((gpu, "nvsw", bw, False, classes[(gpu, "nvsw")]))
    for gpu, bw in box.c2c:
        cpu = box.gpu_cpu[gpu]
        for pair in ((gpu, cpu), (cpu, gpu)):
            pairs[pair] = pairs.get(pair, Fraction(0)) + bw
            classes[pair] = "c2c"
    _add_pairs(box, pairs, classes)


def _add_pairs(
    box: _Box, pairs: dict[tuple[str, str], Fraction], classes: dict[tuple[str, str], str]
) -> None:
    """One full-duplex link where both directions agree, one-way links otherwise."""
    done: set[tuple[str, str]] = set()
    for (a, b), bw in pairs.items():
        if (a, b) in done:
            continue
        if pairs.get((b, a)) == bw:
            box.links.append((a, b, bw, False, classes[(a, b)]))
            done.add((b, a))
        else:
            box.links.append((a, b, bw, True, classes[(a, b)]))
        done.add((a, b))


def _add_pcilinks(box: _Box) -> None:
    """``<pcilink target>``: one way from a PCI switch to another at LOC_BW (NCCL topo.cc:873-892,
    RCCL ncclTopoAddPciLinks); a target that is no PCI switch of the host is skipped."""
    by_busid = {box.nodes[b]["extra"]["busid"]: b for b in box.bridge_ids}
    for bridge, target in box.pcilinks:
        other = by_busid.get(target)
        if other is None or other == bridge:
            box.notes.append(
                f"{box.where}: <pcilink target={target!r}> names no other PCI switch; skipped"
            )
            continue
        box.links.append((bridge, other, rates.LOC_BW, True, "loc"))


def _flatten_bcm(box: _Box) -> None:
    """Broadcom PEX switches shown as two levels are made one, as the runtimes do.

    ncclTopoFlattenBcmSwitches (NCCL topo.cc:204-265, RCCL topo.cc the same), run on the PCI
    switches in the order they were made: a switch whose id is a BCM Gen4/Gen5 one
    (:func:`solver.io.nccl.rates.bcm_switch_gen`, level 0) takes over every sub switch it links to whose
    id is of the same generation at level 1: the link to the sub switch goes, the sub switch's
    other links are moved to it (same bandwidth), the sub switch is removed. Each switch is
    flattened once (NCCL marks it by setting its subsystem device to 0xffff)."""
    done: set[str] = set()
    while True:
        top = next(
            (
                b
                for b, dev in box.bridge_ids.items()
                if b not in done and rates.bcm_switch_gen(dev, 0)
            ),
            None,
        )
        if top is None:
            return
        done.add(top)
        gen = rates.bcm_switch_gen(box.bridge_ids[top], 0)
        subs = [
            b
            for b in box.bridge_ids
            if b in _links_out(box, top) and rates.bcm_switch_gen(box.bridge_ids[b], 1) == gen
        ]
        for sub in subs:
            back = _links_out(box, sub)  # what the sub switch links to keeps its link, now to top
            moved = []
            for a, b, bw, directed, cls in box.links:
                if {a, b} == {sub, top}:
                    continue  # the link between the two levels goes
                if directed and b == sub and a not in back:
                    continue  # a one-way link into the removed switch goes with it
                moved.append((top if a == sub else a, top if b == sub else b, bw, directed, cls))
            box.links = moved
            kids = box.children.pop(sub, [])
            for siblings in box.children.values():  # the sub switch's devices take its place
                if sub in siblings:
                    at = siblings.index(sub)
                    siblings[at : at + 1] = kids
            del box.nodes[sub]
            del box.bridge_ids[sub]
        if subs:
            box.notes.append(
                f"{box.where}: Broadcom PCIe Gen{gen} switch {box.nodes[top]['extra']['busid']!r} "
                f"flattened with its {len(subs)} sub switch(es), as NCCL/RCCL do"
            )


def _links_out(box: _Box, node: str) -> set[str]:
    """The nodes ``node`` has a link to (both ways, or one way from it)."""
    out = set()
    for a, b, _bw, directed, _cls in box.links:
        if a == node:
            out.add(b)
        elif b == node and not directed:
            out.add(a)
    return out


def _prune(box: _Box) -> None:
    """Drop PCIe bridges and CPUs that lead to no GPU or NIC (dead ends)."""
    while True:
        degree: dict[str, int] = {nid: 0 for nid in box.nodes}
        degree["nvsw"] = 0
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
    pairs: dict[tuple[str, str], Fraction] = {}
    for a, attrs_a in box.cpus:
        bw = box.overrides.get("sys", rates.cpu_link_bandwidth(attrs_a))
        for b, _ in box.cpus:
            if a != b:
                pairs[(a, b)] = bw
    _add_pairs(box, pairs, {pair: "sys" for pair in pairs})


def _add_intra(box: _Box, intra: IntraFabric) -> None:
    gpus = [nid for nid, a in box.nodes.items() if a["kind"] == COMPUTE]
    if intra.kind == "nvswitch":
        box.nvswitch = True
        for gpu in gpus:
            box.links.append((gpu, "nvsw", intra.bandwidth, False, "intra"))
    elif intra.kind == "mesh":
        for i, a in enumerate(gpus):
            for b in gpus[i + 1 :]:
                box.links.append((a, b, intra.bandwidth, False, "intra"))


def _rename(box: _Box) -> None:
    """Number the GPUs ``gpu0..`` in rank order (then dev, then file order)."""
    gpus = [nid for nid, a in box.nodes.items() if a["kind"] == COMPUTE]

    def order(nid: str) -> tuple[int, int]:
        extra = box.nodes[nid]["extra"]
        return (extra.get("rank", extra.get("dev", 0)), extra.get("dev", 0))

    ranked = sorted(gpus, key=order)  # stable: file order breaks ties (skeleton GPUs)
    names = {old: f"gpu{i}" for i, old in enumerate(ranked)}
    slots = iter(ranked)  # GPU slots in file order receive the GPUs in rank order
    old_nodes = box.nodes
    box.nodes = {}
    for k, v in old_nodes.items():
        if v["kind"] == COMPUTE:
            k = next(slots)
            v = old_nodes[k]
        box.nodes[names.get(k, k)] = v
    box.links = [(names.get(a, a), names.get(b, b), bw, d, c) for a, b, bw, d, c in box.links]
    box.children = {names.get(k, k): [names.get(c, c) for c in v] for k, v in box.children.items()}


def _host_groups(root: ET.Element, where: str, notes: list[str]) -> list[list[ET.Element]]:
    """The <cpu> elements grouped by host_hash (NCCL topo.cc:713-723), in order of appearance.

    NCCL reads the hash as hexadecimal (missing = 0). Published dumps often redact it
    (``0xHOSTHASH_A``); such values are told apart by their text, with a note.
    """
    cpus = [c for c in root if _local(c.tag) == "cpu"]
    if not cpus:
        raise TopologyError(f"{where}: no <cpu> element in <system>")
    hosts: dict[object, list[ET.Element]] = {}
    for cpu in cpus:
        text = (cpu.get("host_hash") or "0").strip()
        digits = text[2:] if text.lower().startswith("0x") else text
        try:
            key: object = int(digits, 16)
        except ValueError:
            key = text
            notes.append(
                f"{where}: host_hash {text!r} is not hexadecimal (redacted?); hosts are told "
                "apart by its text"
            )
        hosts.setdefault(key, []).append(cpu)
    return list(hosts.values())


def _parse_root(text: str, where: str) -> ET.Element:
    root = parse_xml(text, where)  # bounded depth, no entity declarations
    if _local(root.tag) == "graphs":
        raise TopologyError(
            f"{where}: an NCCL graph dump (NCCL_GRAPH_DUMP_FILE, <graphs>), not a topology dump "
            "(NCCL_TOPO_DUMP_FILE, <system>)"
        )
    if _local(root.tag) != "system":
        raise TopologyError(
            f"{where}: not an NCCL topology dump "
            f"(root element <{_local(root.tag)}>, expected <system>)"
        )
    return root


def _runtime(root: ET.Element) -> str:
    """RCCL's rules for AMD dumps (a ``gcn`` attribute or ``<xgmi>`` links), NCCL's otherwise."""
    for elem in root.iter():
        tag = _local(elem.tag)
        if tag == "xgmi" or (tag == "gpu" and elem.get("gcn") is not None):
            return rates.RCCL
    return rates.NCCL


def _is_skeleton(root: ET.Element, runtime: str) -> bool:
    """No <gpu> element, but PCI devices whose class says GPU."""
    if any(_local(e.tag) == "gpu" for e in root.iter()):
        return False
    return any(
        _local(e.tag) == "pci" and rates.pci_class_type(e.get("class"), runtime) == rates.GPU
        for e in root.iter()
    )


@dataclass
class _Parsed:
    boxes: list[_Box]
    runtime: str
    skeleton: bool
    notes: list[str]


def _parse(
    text: str, where: str, overrides: dict[str, Fraction], intra: IntraFabric | None
) -> _Parsed:
    root = _parse_root(text, where)
    runtime = _runtime(root)
    skeleton = _is_skeleton(root, runtime)
    if skeleton and intra is None:
        n = sum(
            1
            for e in root.iter()
            if _local(e.tag) == "pci" and rates.pci_class_type(e.get("class"), runtime) == rates.GPU
        )
        raise TopologyError(
            f"{where}: skeleton dump ({n} GPUs by PCI class, no <gpu>/<nvlink> elements): the "
            "GPU-to-GPU fabric is missing; give it with --intra nvswitch:GBPS, mesh:GBPS or none"
        )
    if intra is not None and not skeleton:
        raise TopologyError(
            f"{where}: --intra applies to skeleton dumps only; this dump lists its <gpu> links"
        )
    notes: list[str] = []
    hosts = _host_groups(root, where, notes)
    boxes = []
    for h, cpus in enumerate(hosts):
        label = where if len(hosts) == 1 else f"{where} (host {h})"
        box = _Box(
            where=label, runtime=runtime, overrides=overrides, skeleton=skeleton, notes=notes
        )
        for i, cpu_elem in enumerate(cpus):
            numa = cpu_elem.get("numaid", str(i))
            cpu = box.add(f"cpu{numa}", SWITCH, "cpu", None, numaid=numa)
            box.cpus.append((cpu, dict(cpu_elem.attrib)))
            for child in cpu_elem:
                _walk(box, child, cpu, cpu)
        if not any(a["kind"] == COMPUTE for a in box.nodes.values()):
            raise TopologyError(f"{label}: no <gpu> element found")
        _add_nvlinks(box)
        _add_pcilinks(box)
        _flatten_bcm(box)
        if intra is not None:
            _add_intra(box, intra)
        _prune(box)
        _add_cpu_links(box)
        _rename(box)
        boxes.append(box)
    return _Parsed(boxes, runtime, skeleton, notes)


def _layout(box: _Box) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Tree layout of one box: NVSwitch on top, CPUs below, devices below them, file order."""
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
    for nid in box.nodes:
        if nid not in pos:
            place(nid, 0)
    width = max(next_x[0] - _COL, 0.0)
    _arc_gpus(box, pos, width)
    height = max(y for _, y in pos.values())
    return pos, width, height


def _arc_gpus(box: _Box, pos: dict[str, tuple[float, float]], width: float) -> None:
    """GPUs joined directly (xGMI/NVLink meshes) go on one parabola below the tree.

    On a strictly convex curve no three GPUs are collinear, so no GPU-to-GPU link is drawn
    through another GPU or over another link (on one row, a mesh's links all overlap).
    """
    gpus = {nid for nid, a in box.nodes.items() if a["kind"] == COMPUTE}
    if not any(a in gpus and b in gpus for a, b, *_ in box.links) or width <= 0:
        return
    base = max(pos[g][1] for g in gpus)
    half = width / 2
    for g in gpus:
        x = pos[g][0]
        u = (x - half) / half  # -1 .. 1 across the box
        pos[g] = (x, base + max(1.5 * _ROW, 0.4 * width) * (1 - u * u))


def _check_options(boxes: int, fabric: str) -> None:
    if isinstance(boxes, bool) or not isinstance(boxes, int) or not 1 <= boxes <= MAX_BOXES:
        raise TopologyError(f"--boxes must be a whole number from 1 to {MAX_BOXES}, got {boxes!r}")
    if fabric not in FABRICS:
        raise TopologyError(f"--fabric must be one of {', '.join(FABRICS)}, got {fabric!r}")


def loads(
    text: str,
    where: str = "<string>",
    boxes: int = 1,
    fabric: str = "ib",
    intra: str | IntraFabric | None = None,
    bandwidth: Mapping[str, object] | None = None,
) -> Topology:
    """Read an NCCL/RCCL topology dump.

    Parameters
    ----------
    text, where
        The XML and where it came from (for messages and the fabric's name).
    boxes
        Copies of the dump (each host of the dump is one box per copy).
    fabric
        How several boxes are joined through their NICs: ``'ib'`` or ``'rail'``.
    intra
        Skeleton dumps only: the GPU-to-GPU fabric (``'nvswitch:450'``, ``'mesh:48'``, ``'none'``).
    bandwidth
        Per-class overrides in GB/s (``{"xgmi": 50}``), see :data:`solver.io.nccl.options.OVERRIDE_CLASSES`.

    The result is not validated here; :func:`solver.io.formats.load` validates it.
    """
    _check_options(boxes, fabric)
    parsed = _parse(text, where, parse_overrides(bandwidth), parse_intra(intra))
    hosts = parsed.boxes
    total = boxes * len(hosts)
    shared_nvsw = len(hosts) > 1 and any(h.nvswitch for h in hosts)
    if total > 1:
        _check_joinable(hosts, total, shared_nvsw, where)
    placed = _place_boxes(hosts, boxes, shared_nvsw)
    if total > 1 and any(placed.nets):
        _join_network(placed, fabric)
    stem = (
        Path(where).name.split(".")[0] if where and not where.startswith("<") else "NCCL topology"
    )
    n_gpus = sum(1 for n in placed.nodes if n.kind == COMPUTE) // boxes
    name = f"{stem} ({n_gpus} GPUs)" if boxes == 1 else f"{boxes}x {stem} ({n_gpus} GPUs each)"
    extra: dict[str, Any] = {
        "imported_from": "nccl-xml",
        "runtime": parsed.runtime,
        "boxes": total,
        "hosts": len(hosts),
    }
    if total > 1:
        extra["fabric"] = fabric
    if parsed.skeleton:
        extra["skeleton"] = True
    given = parse_intra(intra)
    if given is not None and given.hardware:
        extra["intra_hardware"] = given.hardware  # the library model follows it
    if parsed.notes:
        extra["import_notes"] = list(dict.fromkeys(parsed.notes))
    hardware = given.hardware if given is not None else ""
    nodes = _mark_nvls(placed.nodes, placed.links, hardware)
    return Topology(name=name, nodes=tuple(nodes), links=tuple(placed.links), extra=extra)


#: ``--intra`` presets whose NVSwitch has NVLink SHARP (Hopper and later)
NVLS_PRESETS = ("h100", "b200")


def _mark_nvls(nodes: list[Node], links: list[Link], hardware: str) -> list[Node]:
    """An NVSwitch whose GPUs are sm >= 90 (Hopper, Blackwell: third-generation NVSwitch and
    later) does NVLink SHARP: it is marked ``reduce`` and ``multicast``. NCCL enables NVLS on
    exactly that hardware (tuning.cc:139-144 nvlsEfficiency is 0 below Hopper; NVIDIA/nccl
    @5067397c). AMD GPUs (``gcn``) never are, whatever their ``sm``. A skeleton dump
    without ``sm`` follows its ``--intra`` preset (h100, b200)."""
    sm = {n.id: n.extra.get("sm") for n in nodes if n.kind == COMPUTE and not n.extra.get("gcn")}
    hopper = {i for i, v in sm.items() if str(v).isdigit() and int(v) >= 90}
    if hardware in NVLS_PRESETS:
        hopper = set(sm)
    marked = set()
    for link in links:
        for a, b in ((link.source, link.target), (link.target, link.source)):
            if a in hopper:
                marked.add(b)
    return [
        replace(n, capabilities=NVLS_CAPABILITIES) if n.role == "nvswitch" and n.id in marked else n
        for n in nodes
    ]


def _check_joinable(hosts: list[_Box], total: int, shared_nvsw: bool, where: str) -> None:
    """Several boxes need NICs with a speed (or one shared NVSwitch) to be joined."""
    for box in hosts:
        if not box.nets and not shared_nvsw:
            raise TopologyError(
                f"{box.where}: the box has no <net> (NIC), so {total} boxes cannot be connected"
            )
        if any(speed is None for _, speed in box.nets):
            raise TopologyError(
                f"{where}: the skeleton's NICs have no speed; give it with --net-bw GBPS"
            )


@dataclass
class _Placed:
    """Boxes laid side by side: nodes, links, each box's NICs, the row width and depth."""

    nodes: list[Node] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    nets: list[list[tuple[str, Fraction]]] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0


def _place_boxes(hosts: list[_Box], copies: int, shared_nvsw: bool) -> _Placed:
    out = _Placed()
    x0 = 0.0
    for copy in range(copies):
        for h, box in enumerate(hosts):
            b = copy * len(hosts) + h
            prefix = f"b{b}."
            pos, width, box_height = _layout(box)
            out.height = max(out.height, box_height)
            for nid, attrs in box.nodes.items():
                x, y = pos[nid]
                out.nodes.append(
                    Node(
                        id=prefix + nid,
                        kind=attrs["kind"],
                        role=attrs["role"],
                        x=round(x0 + x, 1),
                        y=round(y + _ROW, 1),
                        group=f"b{b}",
                        extra={k: v for k, v in attrs["extra"].items() if v not in ("", None)},
                    )
                )
            nvsw = "nvsw" if shared_nvsw else prefix + "nvsw"
            if box.nvswitch and not shared_nvsw:
                out.nodes.append(
                    Node(nvsw, SWITCH, "nvswitch", x=round(x0 + width / 2, 1), y=0.0, group=f"b{b}")
                )
            for a, c, bw, directed, cls in box.links:
                a = nvsw if a == "nvsw" else prefix + a
                c = nvsw if c == "nvsw" else prefix + c
                out.links.append(Link(a, c, bw, directed=directed, extra={"link_class": cls}))
            out.nets.append([(prefix + nic, speed) for nic, speed in box.nets])
            x0 += width + 2 * _COL
    out.width = max(x0 - 2 * _COL, 0.0)
    if shared_nvsw:  # one NVLink domain over all hosts, drawn above them
        out.nodes.append(
            Node(
                "nvsw",
                SWITCH,
                "nvswitch",
                x=round(out.width / 2, 1),
                y=-_ROW,
                group="nvlink-domain",
            )
        )
    return out


def _join_network(placed: _Placed, fabric: str) -> None:
    """One IB switch for every NIC (``ib``) or one switch per NIC index (``rail``)."""
    net_y = placed.height + 3 * _ROW
    if fabric == "ib":
        placed.nodes.append(
            Node("ib0", SWITCH, "ib", x=round(placed.width / 2, 1), y=net_y, group="network")
        )
        for nets in placed.nets:
            for nic, speed in nets:
                placed.links.append(Link(nic, "ib0", speed, extra={"link_class": "net"}))
        return
    rails = max(len(nets) for nets in placed.nets)
    for k in range(rails):
        x = placed.width * (k + 0.5) / rails
        placed.nodes.append(Node(f"rail{k}", SWITCH, "ib", x=round(x, 1), y=net_y, group="network"))
    for nets in placed.nets:
        for k, (nic, speed) in enumerate(nets):
            placed.links.append(Link(nic, f"rail{k}", speed, extra={"link_class": "net"}))


__all__ = ["FABRICS", "cpu_link_bandwidth", "loads", "nvlink_bandwidth", "pci_bandwidth"]
