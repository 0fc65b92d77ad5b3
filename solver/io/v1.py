"""Topology format v1 (``"format": "forestcoll-topology"``): the product's own JSON file.

Reading keeps bandwidths exact (numbers are parsed as decimals, never through binary floats) and
keeps unknown keys so that a round trip preserves them. Files of a newer major version are refused.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from typing import Any

from solver.io.untrusted import json_value, parse_json
from solver.model.errors import TopologyError
from solver.model.topology import (
    CAPABILITIES,
    Link,
    Node,
    Topology,
    fraction_to_json,
    to_fraction,
    validate_read,
)
from solver.model.values import MAX_ID_CHARS, bounded_float, identifier, text_value

FORMAT_NAME = "forestcoll-topology"
FORMAT_VERSION = 1
#: Minor version 1.1 adds a switch's ``"capabilities": ["reduce", "multicast"]`` (in-switch
#: reduction / multicast, e.g. NVLink SHARP). A file is written as 1.1 only when a switch has
#: capabilities, so every other file stays 1; a 1.0 reader keeps the key as an unknown one.
FORMAT_MINOR_CAPABILITIES = "1.1"

_NODE_KEYS = {"id", "kind", "role", "x", "y", "group", "capabilities"}
_LINK_KEYS = {"source", "target", "bandwidth", "latency", "directed"}
_TOP_KEYS = {"format", "version", "name", "nodes", "links"}


def parse_json_exact(text: str, where: str) -> Any:
    """JSON with floats kept as :class:`Decimal`, bounded numbers and nesting
    (:func:`solver.io.untrusted.parse_json`); syntax errors name line and column."""
    return parse_json(text, where)


def plain(value: Any) -> Any:
    """Turn Decimals (from :func:`parse_json_exact`) back into ints/floats, recursively."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _float_or_none(value: Any, what: str) -> float | None:
    if value is None:
        return None
    return bounded_float(value, what)


def kept(raw: dict, known: set[str], what: str) -> dict[str, Any]:
    """The unknown keys of an object, kept for the round trip (written back as read)."""
    return {k: json_value(v, f"{what}: {k}") for k, v in raw.items() if k not in known}


def label_text(value: Any, what: str) -> str:
    """A name, role or group read from a file (any JSON scalar, as text that can be written)."""
    return text_value(str(plain(value)), what, max_chars=MAX_ID_CHARS)


def read_capabilities(raw: dict, node_id: str, where: str) -> frozenset[str]:
    """A node's ``"capabilities"`` list (v1.1; absent: none), checked: a list of known names."""
    value = raw.get("capabilities")
    if value is None:
        return frozenset()
    what = f"{where}: node {node_id!r}: capabilities"
    if not isinstance(value, list) or len(value) > len(CAPABILITIES):
        raise TopologyError(f"{what} must be a list of {' and/or '.join(map(repr, CAPABILITIES))}")
    for item in value:
        if item not in CAPABILITIES:
            shown = str(plain(item))[:40]
            raise TopologyError(
                f"{what}: unknown capability {shown!r} (one of {', '.join(CAPABILITIES)})"
            )
    return frozenset(value)


def capabilities_json(n: Node) -> list[str]:
    """A node's capabilities as written (in :data:`CAPABILITIES` order)."""
    return [c for c in CAPABILITIES if c in n.capabilities]


def from_dict(data: Any, where: str = "<topology>", *, check: bool = True) -> Topology:
    """Build a :class:`Topology` from a parsed v1 document (numbers may be Decimal)."""
    if not isinstance(data, dict):
        raise TopologyError(f"{where}: expected a JSON object at the top level")
    fmt = data.get("format")
    if fmt != FORMAT_NAME:
        raise TopologyError(
            f"{where}: 'format' must be {FORMAT_NAME!r}, got {plain(fmt)!r}"
            if fmt is not None
            else f"{where}: missing 'format' (expected {FORMAT_NAME!r})"
        )
    if "version" not in data:
        raise TopologyError(f"{where}: missing 'version'")
    version = data["version"]
    try:
        major = int(str(version).split(".")[0])
    except ValueError:
        raise TopologyError(
            f"{where}: 'version' must be a number, got {plain(version)!r}"
        ) from None
    if major > FORMAT_VERSION:
        raise TopologyError(
            f"{where}: format version {plain(version)} is newer than this program reads "
            f"({FORMAT_VERSION}); update ForestColl Designer"
        )
    if major < 1:
        raise TopologyError(f"{where}: unsupported format version {plain(version)!r}")
    nodes_raw = data.get("nodes")
    links_raw = data.get("links")
    if not isinstance(nodes_raw, list):
        raise TopologyError(f"{where}: 'nodes' must be a list")
    if not isinstance(links_raw, list):
        raise TopologyError(f"{where}: 'links' must be a list")

    nodes = []
    for i, raw in enumerate(nodes_raw):
        if not isinstance(raw, dict):
            raise TopologyError(f"{where}: nodes[{i}] must be an object")
        node_id = raw.get("id")
        if not isinstance(node_id, str) or not node_id:
            raise TopologyError(f"{where}: nodes[{i}]: 'id' must be a non-empty string")
        identifier(node_id, f"{where}: nodes[{i}]: 'id'")
        kind = raw.get("kind")
        if kind not in ("compute", "switch"):
            raise TopologyError(
                f"{where}: node {node_id!r}: 'kind' must be 'compute' or 'switch', got {plain(kind)!r}"
            )
        group = raw.get("group")
        nodes.append(
            Node(
                id=node_id,
                kind=kind,
                role=label_text(raw.get("role", "") or "", f"{where}: node {node_id!r}: role"),
                x=_float_or_none(raw.get("x"), f"{where}: node {node_id!r}: x"),
                y=_float_or_none(raw.get("y"), f"{where}: node {node_id!r}: y"),
                group=None
                if group is None
                else label_text(group, f"{where}: node {node_id!r}: group"),
                extra=kept(raw, _NODE_KEYS, f"{where}: node {node_id!r}"),
                capabilities=read_capabilities(raw, node_id, where),
            )
        )

    links = []
    for i, raw in enumerate(links_raw):
        if not isinstance(raw, dict):
            raise TopologyError(f"{where}: links[{i}] must be an object")
        src, dst = raw.get("source"), raw.get("target")
        if not isinstance(src, str) or not isinstance(dst, str):
            raise TopologyError(f"{where}: links[{i}]: 'source' and 'target' must be node ids")
        arrow = "->" if raw.get("directed") is True else "<->"
        label = f"{where}: link {i} ({src}{arrow}{dst})"
        if "bandwidth" not in raw:
            raise TopologyError(f"{label}: missing 'bandwidth'")
        bw = to_fraction(raw["bandwidth"], f"{label}: bandwidth")
        lat = raw.get("latency")
        latency = None if lat is None else to_fraction(lat, f"{label}: latency")
        directed = raw.get("directed", False)
        if not isinstance(directed, bool):
            raise TopologyError(f"{label}: 'directed' must be true or false")
        links.append(
            Link(
                source=src,
                target=dst,
                bandwidth=bw,
                latency=latency,
                directed=directed,
                extra=kept(raw, _LINK_KEYS, label),
            )
        )
    name = data.get("name")
    topo = Topology(
        name=label_text(name, f"{where}: name") if name is not None else "untitled",
        nodes=tuple(nodes),
        links=tuple(links),
        extra=kept(data, _TOP_KEYS, where),
    )
    return validate_read(topo, where) if check else topo


def loads(text: str, where: str = "<string>", *, check: bool = True) -> Topology:
    """Parse v1 JSON text."""
    return from_dict(parse_json_exact(text, where), where, check=check)


def _num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def node_to_dict(n: Node) -> dict[str, Any]:
    """One node as a JSON object: the v1 keys, then its unknown keys (shared with node-link)."""
    d: dict[str, Any] = {"id": n.id, "kind": n.kind}
    if n.role:
        d["role"] = n.role
    if n.x is not None:
        d["x"] = _num(n.x)
    if n.y is not None:
        d["y"] = _num(n.y)
    if n.group is not None:
        d["group"] = n.group
    if n.capabilities:
        d["capabilities"] = capabilities_json(n)
    for k, v in n.extra.items():
        d.setdefault(k, v)
    return d


def to_dict(topo: Topology) -> dict[str, Any]:
    """The v1 document for ``topo`` (bandwidths written so they read back exactly)."""
    nodes = [node_to_dict(n) for n in topo.nodes]
    links = []
    for link in topo.links:
        d = {
            "source": link.source,
            "target": link.target,
            "bandwidth": fraction_to_json(link.bandwidth),
        }
        if link.latency is not None:
            d["latency"] = fraction_to_json(link.latency)
        if link.directed:
            d["directed"] = True
        d.update(link.extra)
        links.append(d)
    marked = any(n.capabilities for n in topo.nodes)
    version: Any = float(FORMAT_MINOR_CAPABILITIES) if marked else FORMAT_VERSION
    doc: dict[str, Any] = {"format": FORMAT_NAME, "version": version, "name": topo.name}
    doc.update(topo.extra)
    doc["nodes"] = nodes
    doc["links"] = links
    return doc


def dumps_one_per_line(doc: dict[str, Any], nodes_key: str, links_key: str) -> str:
    """JSON text of ``doc`` with one node or link object per line (easy to diff and edit).

    Shared by v1 and node-link: every other top-level key goes first, one per line.
    """
    lines = ["{"]
    for k, v in doc.items():
        if k not in (nodes_key, links_key):
            lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
    for key in (nodes_key, links_key):
        items = doc[key]
        lines.append(f'  "{key}": [')
        for j, item in enumerate(items):
            comma = "," if j < len(items) - 1 else ""
            lines.append(f"    {json.dumps(item)}{comma}")
        lines.append("  ]," if key == nodes_key else "  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def dumps(topo: Topology) -> str:
    """v1 JSON text: one node or link per line, easy to diff and edit by hand."""
    return dumps_one_per_line(to_dict(topo), "nodes", "links")


__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "Fraction", "dumps", "from_dict", "loads", "to_dict"]
