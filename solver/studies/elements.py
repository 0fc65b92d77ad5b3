"""The elements a study changes: links, switches, NICs, compute nodes and classes of links.

An element has a stable text key: a node id, or ``"SRC--TGT"`` for a physical link (ids as in
the file; a second parallel link between the same nodes is ``"SRC--TGT#2"``, a third ``#3``...).
A link class (upgrade study ``--by class``) is ``"ROLE--ROLE@BW"``: every link with those end
roles (in either order for full-duplex links) and that bandwidth in GB/s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from solver.model.errors import TopologyError
from solver.model.topology import Link, Topology

LINK, SWITCH, NIC, COMPUTE, CLASS = "link", "switch", "nic", "compute", "class"
#: element kinds a failure study accepts in ``--elements`` (plural names as on the command line)
FAILURE_KINDS = {"links": LINK, "switches": SWITCH, "nics": NIC, "compute": COMPUTE}
DEFAULT_FAILURE_KINDS = ("links", "switches", "nics")


@dataclass(frozen=True)
class Element:
    """One thing a study removes or upgrades: ``links`` are indices into ``Topology.links``."""

    key: str
    kind: str  # LINK, SWITCH, NIC, COMPUTE or CLASS
    node: str | None = None  # the node id, for node elements
    links: tuple[int, ...] = ()  # link indices, for link and class elements


def link_keys(topo: Topology) -> list[str]:
    """The key of every physical link, in file order (``SRC--TGT``, ``#n`` for parallels)."""
    seen: dict[str, int] = {}
    keys = []
    for link in topo.links:
        base = f"{link.source}--{link.target}"
        seen[base] = seen.get(base, 0) + 1
        keys.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return keys


def node_kind(topo: Topology, node_id: str) -> str:
    """COMPUTE, NIC (a switch whose role names a NIC) or SWITCH."""
    node = topo.node(node_id)
    if node.is_compute:
        return COMPUTE
    return NIC if "nic" in node.role.lower() else SWITCH


def parse_failure_kinds(text: str) -> tuple[str, ...]:
    """``"links,switches"`` -> ("links", "switches"); raises TopologyError for unknown names."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not names:
        raise TopologyError("--elements needs at least one of " + ", ".join(FAILURE_KINDS))
    for name in names:
        if name not in FAILURE_KINDS:
            raise TopologyError(
                f"unknown element kind {name!r} (choose from {', '.join(FAILURE_KINDS)})"
            )
    return names


def failure_elements(topo: Topology, kinds: Iterable[str] = DEFAULT_FAILURE_KINDS) -> list[Element]:
    """Every element of the chosen kinds: nodes in file order, then links in file order."""
    wanted = {FAILURE_KINDS[k] for k in kinds}
    out = [
        Element(n.id, node_kind(topo, n.id), node=n.id)
        for n in topo.nodes
        if node_kind(topo, n.id) in wanted
    ]
    if LINK in wanted:
        out += [Element(key, LINK, links=(i,)) for i, key in enumerate(link_keys(topo))]
    return out


def class_key(topo: Topology, link: Link) -> str:
    """``ROLE--ROLE@BW``: end roles (sorted for a full-duplex link) and bandwidth in GB/s."""
    a = topo.node(link.source).role or topo.node(link.source).kind
    b = topo.node(link.target).role or topo.node(link.target).kind
    if not link.directed:
        a, b = sorted((a, b))
    arrow = "->" if link.directed else "--"
    bw = link.bandwidth
    text = str(bw.numerator) if bw.denominator == 1 else f"{float(bw):g}"
    return f"{a}{arrow}{b}@{text}"


def upgrade_elements(topo: Topology, by: str) -> list[Element]:
    """One element per physical link (``by="link"``) or per class of links (``by="class"``)."""
    if by == "link":
        return [Element(key, LINK, links=(i,)) for i, key in enumerate(link_keys(topo))]
    if by != "class":
        raise TopologyError(f"--by must be 'link' or 'class', got {by!r}")
    classes: dict[str, list[int]] = {}
    for i, link in enumerate(topo.links):
        classes.setdefault(class_key(topo, link), []).append(i)
    return [Element(key, CLASS, links=tuple(idx)) for key, idx in classes.items()]


def without_element(topo: Topology, element: Element) -> Topology:
    """The fabric with ``element`` removed (a node takes its links with it).

    The plain path: studies derive their fabrics from integer views
    (:func:`solver.studies.optimum.derive`); tests compare the two.
    """
    if element.node is not None:
        return topo.without(node_ids=[element.node])
    return topo.without(link_indices=element.links)


def upgraded(
    topo: Topology, links: Sequence[int], factor: Fraction | None, add: Fraction | None
) -> Topology:
    """The fabric with ``links`` (indices) at ``bandwidth * factor`` or ``bandwidth + add``
    (the plain path, as :func:`without_element`)."""
    chosen = set(links)
    new_links = tuple(
        replace(
            link, bandwidth=link.bandwidth * factor if factor is not None else link.bandwidth + add
        )
        if i in chosen
        else link
        for i, link in enumerate(topo.links)
    )
    return replace(topo, links=new_links)
