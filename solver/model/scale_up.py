"""Does every box have a GPU-to-GPU (scale-up) fabric, or do its GPUs meet only over PCIe/CPU?

A topology dump that lost its NVLink/xGMI links still imports and solves -- to a number many
times too small. :func:`scale_up_warnings` names each box (node ``group``) whose compute nodes
reach each other only through host devices, so ``info``, ``solve`` and the GUI can say so.

A *scale-up path* between two compute nodes of a box uses only links that are not host or network
links (``link_class`` pcie, sys, loc, c2c, net) and passes only through compute nodes and switches
whose role is not a host or network role (cpu, pcie, nic / ib, leaf, spine, rail, ...). GPUs that
are joined through host devices but by no scale-up path are what a truncated dump looks like;
GPUs that meet only through the scale-out network (a fat tree's leaf) are a design, not a warning.
"""

from __future__ import annotations

from solver.model.topology import Topology

#: Link classes (``Link.extra["link_class"]``, set by the NCCL/RCCL importer) that are host or
#: network links, not GPU-to-GPU fabric.
HOST_LINK_CLASSES = frozenset({"pcie", "sys", "loc", "c2c", "net"})

#: Switch roles that are host devices or the scale-out network.
HOST_ROLES = frozenset({"cpu", "pcie", "pci", "nic", "root", "host"})
NETWORK_ROLES = frozenset(
    {
        "ib",
        "leaf",
        "spine",
        "rail",
        "eth",
        "ethernet",
        "network",
        "tor",
        "agg",
        "core",
        "rtsw",
        "ctsw",
        "atsw",  # Meta's rack / cluster / aggregator training switches (clos3)
    }
)


def _box_label(group: str | None) -> str:
    return f"box {group}" if group else "the fabric"


def _labels(adjacency: dict[str, set[str]]) -> dict[str, int]:
    """Connected-component number of every node of ``adjacency`` (one pass, O(V + E))."""
    label: dict[str, int] = {}
    for start in adjacency:
        if start in label:
            continue
        idx = len(label)  # any number unused so far
        label[start] = idx
        stack = [start]
        while stack:
            u = stack.pop()
            for v in adjacency[u]:
                if v not in label:
                    label[v] = idx
                    stack.append(v)
    return label


def _components(members: list[str], label: dict[str, int]) -> list[list[str]]:
    """Groups of ``members`` in one component of ``label`` (members kept in their order; the
    groups in the order of their first member)."""
    comps: dict[object, list[str]] = {}
    for m in members:
        comps.setdefault(label.get(m, ("alone", m)), []).append(m)
    return list(comps.values())


def _short(ids: list[str]) -> str:
    names = [i.rsplit(".", 1)[-1] for i in ids]
    return ", ".join(names) if len(names) <= 4 else f"{names[0]} .. {names[-1]} ({len(names)})"


def _adjacency(topo: Topology, host_too: bool) -> dict[str, set[str]]:
    """Scale-up links (or, with ``host_too``, every link but the scale-out network's)."""
    nodes = {n.id: n for n in topo.nodes}

    def passable(nid: str) -> bool:
        n = nodes[nid]
        role = (n.role or "").lower()
        if n.is_compute:
            return True
        return role not in NETWORK_ROLES and (host_too or role not in HOST_ROLES)

    adjacency: dict[str, set[str]] = {}
    for link in topo.links:
        cls = link.extra.get("link_class")
        if cls == "net" or (cls in HOST_LINK_CLASSES and not host_too):
            continue
        a, b = link.source, link.target
        if passable(a) and passable(b):
            adjacency.setdefault(a, set()).add(b)
            adjacency.setdefault(b, set()).add(a)
    return adjacency


def scale_up_warnings(topo: Topology) -> list[str]:
    """One warning per box whose compute nodes reach each other only through PCIe/CPU.

    Boxes are the nodes' ``group`` values (a fabric without groups is one box). GPUs of a box
    that meet through host devices (PCIe switches, CPUs) but not through a scale-up path are
    reported; GPUs that meet only through the scale-out network (a fat tree's leaf) are not,
    and neither is a box with one compute node. Returns ``[]`` when nothing is to be said.
    Linear in the fabric (components are labelled once for all boxes).
    """
    # components of the whole fabric once: a box's GPUs may meet through other boxes' nodes
    strict = _labels(_adjacency(topo, host_too=False))
    relaxed = _labels(_adjacency(topo, host_too=True))
    boxes: dict[str | None, list[str]] = {}
    for n in topo.nodes:
        if n.is_compute:
            boxes.setdefault(n.group, []).append(n.id)
    warnings = []
    for group, members in boxes.items():
        if len(members) < 2:
            continue
        split = []  # scale-up groups of each host-connected group that falls apart
        for host_group in _components(members, relaxed):
            comps = _components(host_group, strict)
            if len(comps) > 1:
                split.append(comps)
        if not split:
            continue
        where = _box_label(group)
        comps = [c for s in split for c in s]
        if len(split) == 1 and len(comps) == len(members):
            warnings.append(
                f"no NVLink/xGMI links found in {where} — its {len(members)} GPUs reach each "
                "other only through PCIe/CPU; is this dump complete?"
            )
        else:
            parts = " | ".join(_short(c) for c in comps)
            warnings.append(
                f"{where}: {len(comps)} groups of GPUs reach each other only through PCIe/CPU "
                f"({parts})"
            )
    return warnings


__all__ = ["HOST_LINK_CLASSES", "HOST_ROLES", "NETWORK_ROLES", "scale_up_warnings"]
