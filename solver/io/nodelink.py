"""networkx node-link JSON (``networkx.node_link_data`` / ``node_link_graph``), both ways.

Reading accepts what networkx and other tools write:

- edges under ``"edges"`` (networkx >= 3.4) or ``"links"`` (older networkx, d3);
- edge bandwidth under ``bandwidth`` or ``capacity`` (GB/s), optional ``latency`` (us);
- node kind as ``kind`` (``"compute"``/``"switch"``) or ``compute: true/false``;
- a graph with ``"directed": true`` has one-way edges, otherwise every edge is full duplex;
- a multigraph's parallel edges add up (they stay separate links).

Node ids that are numbers become strings. Numbers are read exactly (the caller parses the JSON
with :func:`solver.io.v1.parse_json_exact`). Writing produces ``"edges"`` with ``bandwidth``
and ``kind``; exact bandwidths that are not short decimals are written as ``"p/q"`` strings. A
fabric with one-way links is written as a directed graph, its full-duplex links as two edges.
"""

from __future__ import annotations

from typing import Any

from solver.io.untrusted import json_value
from solver.io.v1 import (
    dumps_one_per_line,
    kept,
    label_text,
    node_to_dict,
    parse_json_exact,
    plain,
    read_capabilities,
)
from solver.model.errors import TopologyError
from solver.model.topology import (
    COMPUTE,
    SWITCH,
    Link,
    Node,
    Topology,
    fraction_to_json,
    to_fraction,
)
from solver.model.values import bounded_float, identifier

_NODE_KEYS = {"id", "kind", "compute", "role", "x", "y", "group", "capabilities"}
_EDGE_KEYS = {"source", "target", "bandwidth", "capacity", "latency", "key"}
_TOP_KEYS = {"directed", "multigraph", "graph", "nodes", "links", "edges"}


def _node_id(value: Any, what: str) -> str:
    if isinstance(value, bool) or value is None:
        raise TopologyError(f"{what}: node id must be a string or a number, got {plain(value)!r}")
    if isinstance(value, str | int):
        text = str(value)
    else:
        value = plain(value)
        if isinstance(value, float) and value.is_integer():
            text = str(int(value))
        elif isinstance(value, float):
            text = repr(value)
        else:
            raise TopologyError(f"{what}: node id must be a string or a number, got {value!r}")
    if not text:
        raise TopologyError(f"{what}: node id must not be empty")
    return identifier(text, f"{what}: node id")


def _kind(raw: dict, node_id: str, where: str) -> str:
    if "kind" in raw:
        kind = raw["kind"]
        if kind not in (COMPUTE, SWITCH):
            raise TopologyError(
                f"{where}: node {node_id!r}: 'kind' must be 'compute' or 'switch', got {plain(kind)!r}"
            )
        return kind
    if "compute" in raw:
        flag = raw["compute"]
        if not isinstance(flag, bool):
            raise TopologyError(f"{where}: node {node_id!r}: 'compute' must be true or false")
        return COMPUTE if flag else SWITCH
    raise TopologyError(
        f"{where}: node {node_id!r}: needs 'kind' ('compute' or 'switch') or 'compute': true/false"
    )


def _coord(raw: dict, key: str, node_id: str, where: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    return bounded_float(value, f"{where}: node {node_id!r}: {key}")


def from_data(data: Any, where: str = "<node-link>") -> Topology:
    """Build a Topology from parsed node-link JSON (``where`` names the source in errors).

    The result is not validated here; :func:`solver.io.formats.load` validates it.
    """
    if not isinstance(data, dict):
        raise TopologyError(f"{where}: expected a JSON object at the top level (node-link graph)")
    if "nodes" not in data:
        raise TopologyError(
            f"{where}: not a fabric file: neither 'format': 'forestcoll-topology' (v1) "
            "nor a node-link graph with 'nodes'"
        )
    nodes_raw = data["nodes"]
    if "edges" in data and "links" in data:
        raise TopologyError(f"{where}: has both 'edges' and 'links'; keep one")
    edges_raw = data.get("edges", data.get("links", []))
    if not isinstance(nodes_raw, list):
        raise TopologyError(f"{where}: 'nodes' must be a list")
    if not isinstance(edges_raw, list):
        raise TopologyError(f"{where}: 'edges' must be a list")
    directed = data.get("directed", False)
    if not isinstance(directed, bool):
        raise TopologyError(f"{where}: 'directed' must be true or false")
    graph = data.get("graph", {})
    if not isinstance(graph, dict):
        raise TopologyError(f"{where}: 'graph' must be an object")

    nodes = []
    for i, raw in enumerate(nodes_raw):
        if not isinstance(raw, dict):
            raise TopologyError(f"{where}: nodes[{i}] must be an object")
        if "id" not in raw:
            raise TopologyError(f"{where}: nodes[{i}]: missing 'id'")
        node_id = _node_id(raw["id"], f"{where}: nodes[{i}]")
        group = raw.get("group")
        nodes.append(
            Node(
                id=node_id,
                kind=_kind(raw, node_id, where),
                role=label_text(raw.get("role", "") or "", f"{where}: node {node_id!r}: role"),
                x=_coord(raw, "x", node_id, where),
                y=_coord(raw, "y", node_id, where),
                group=None
                if group is None
                else label_text(group, f"{where}: node {node_id!r}: group"),
                extra=kept(raw, _NODE_KEYS, f"{where}: node {node_id!r}"),
                capabilities=read_capabilities(raw, node_id, where),
            )
        )

    links = []
    for i, raw in enumerate(edges_raw):
        if not isinstance(raw, dict):
            raise TopologyError(f"{where}: edges[{i}] must be an object")
        for end in ("source", "target"):
            if end not in raw:
                raise TopologyError(f"{where}: edges[{i}]: missing {end!r}")
        src = _node_id(raw["source"], f"{where}: edges[{i}] source")
        dst = _node_id(raw["target"], f"{where}: edges[{i}] target")
        label = f"{where}: edge {i} ({src}{'->' if directed else '<->'}{dst})"
        if "bandwidth" in raw:
            bw = to_fraction(raw["bandwidth"], f"{label}: bandwidth")
        elif "capacity" in raw:
            bw = to_fraction(raw["capacity"], f"{label}: capacity")
        else:
            raise TopologyError(f"{label}: missing 'bandwidth' (or 'capacity')")
        lat = raw.get("latency")
        extra = kept(raw, _EDGE_KEYS, label)
        if "bandwidth" in raw and "capacity" in raw:
            extra["capacity"] = json_value(raw["capacity"], f"{label}: capacity")
        links.append(
            Link(
                source=src,
                target=dst,
                bandwidth=bw,
                latency=None if lat is None else to_fraction(lat, f"{label}: latency"),
                directed=directed,
                extra=extra,
            )
        )
    name = graph.get("name", data.get("name"))
    extra = kept(data, _TOP_KEYS | {"name"}, where)
    graph_extra = kept(graph, {"name"}, f"{where}: graph")
    if graph_extra:
        extra["graph"] = graph_extra
    return Topology(
        name=label_text(name, f"{where}: name") if name is not None else "untitled",
        nodes=tuple(nodes),
        links=tuple(links),
        extra=extra,
    )


def loads(text: str, where: str = "<string>") -> Topology:
    """Parse node-link JSON text (not validated; see :func:`from_data`)."""
    return from_data(parse_json_exact(text, where), where)


def to_data(topo: Topology) -> dict[str, Any]:
    """The node-link document for ``topo`` (readable by ``networkx.node_link_graph``)."""
    directed = any(link.directed for link in topo.links)
    nodes = [node_to_dict(n) for n in topo.nodes]
    edges = []
    seen_pairs: set[tuple[str, str]] = set()
    multigraph = False
    for link in topo.links:
        ends = [(link.source, link.target)]
        if directed and not link.directed:
            ends.append((link.target, link.source))
        for src, dst in ends:
            pair = (src, dst) if directed else tuple(sorted((src, dst)))
            multigraph |= pair in seen_pairs
            seen_pairs.add(pair)
            d = {"source": src, "target": dst, "bandwidth": fraction_to_json(link.bandwidth)}
            if link.latency is not None:
                d["latency"] = fraction_to_json(link.latency)
            for k, v in link.extra.items():
                d.setdefault(k, v)
            edges.append(d)
    graph = dict(topo.extra.get("graph", {})) if isinstance(topo.extra.get("graph"), dict) else {}
    graph["name"] = topo.name
    doc: dict[str, Any] = {"directed": directed, "multigraph": multigraph, "graph": graph}
    for k, v in topo.extra.items():
        if k != "graph" and k not in _TOP_KEYS:
            doc.setdefault(k, v)
    doc["nodes"] = nodes
    doc["edges"] = edges
    return doc


def dumps(topo: Topology) -> str:
    """Node-link JSON text for ``topo``: one node or edge per line."""
    return dumps_one_per_line(to_data(topo), "nodes", "edges")


__all__ = ["dumps", "from_data", "loads", "to_data"]
