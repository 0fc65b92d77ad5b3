"""GraphML (``.graphml``), both ways, with exact bandwidths.

Reading: ``<key>`` declarations give attribute names, types and defaults; nodes need ``kind``
(``compute``/``switch``) or a boolean ``compute``; edges need ``bandwidth`` (or ``capacity``) in
GB/s, optional ``latency`` (us). An edge is one-way when its ``directed`` attribute says so or, if
it has none, when the graph's ``edgedefault`` is ``directed``. Bandwidth and latency are read from
the attribute *text* as exact decimals (or ``"p/q"``), whatever the declared type, so nothing is
lost through binary floats. Other attributes are kept (typed by their declaration).

Writing: bandwidth is declared ``double`` when every value is a short decimal (so networkx, yEd and
Gephi read numbers), otherwise ``string`` holding exact values such as ``"1/3"``. A fabric with
one-way links gets ``edgedefault="directed"`` and an explicit ``directed`` attribute on every edge.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from solver.io.untrusted import parse_xml
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
from solver.model.values import MAX_NUMBER_CHARS, bounded_float, bounded_int, text_value

NS = "http://graphml.graphdrawing.org/xmlns"
_Q = "{" + NS + "}"

_NODE_KEYS = {"kind", "compute", "role", "x", "y", "group"}
_EDGE_KEYS = {"bandwidth", "capacity", "latency"}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(elem: ET.Element, name: str) -> list[ET.Element]:
    return [c for c in elem if _local(c.tag) == name]


def _typed(text: str, typ: str, what: str) -> Any:
    typ = typ.lower()
    if typ in ("int", "long"):
        return bounded_int(text, what)
    if typ in ("float", "double"):
        try:
            number = float(text.strip()) if len(text) <= MAX_NUMBER_CHARS else None
        except ValueError:
            number = None
        if number is None or number != number or abs(number) == float("inf"):
            raise TopologyError(f"{what}: {text[:40]!r} is not a finite {typ}")
        return number
    if typ == "boolean":
        low = text.strip().lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise TopologyError(f"{what}: {text!r} is not a boolean")
    return text


class _Keys:
    """The ``<key>`` declarations for one domain (node, edge or graph)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # key id -> attribute name
        self.types: dict[str, str] = {}  # attribute name -> type
        self.defaults: dict[str, str] = {}  # attribute name -> default text

    def values(self, elem: ET.Element, what: str) -> dict[str, str]:
        """Raw attribute texts of ``elem`` (defaults filled in), by attribute name."""
        raw = dict(self.defaults)
        for data in _children(elem, "data"):
            key = data.get("key")
            if len(data):  # structured data (yEd graphics...): not a fabric attribute
                continue
            if key not in self.names:
                raise TopologyError(f"{what}: <data key={key!r}> has no <key> declaration")
            raw[self.names[key]] = data.text or ""
        return raw


def loads(text: str, where: str = "<string>") -> Topology:
    """Parse GraphML text into a Topology (not validated; :func:`solver.io.formats.load` does that)."""
    root = parse_xml(text, where)
    if _local(root.tag) != "graphml":
        raise TopologyError(f"{where}: not GraphML (root element is <{_local(root.tag)}>)")
    domains = _read_keys(root, where)
    graph, edge_default = _the_graph(root, where)
    nodes = [
        _read_node(elem, i, domains["node"], where)
        for i, elem in enumerate(_children(graph, "node"))
    ]
    links = [
        _read_link(elem, i, domains["edge"], edge_default, where)
        for i, elem in enumerate(_children(graph, "edge"))
    ]
    graph_raw = domains["graph"].values(graph, f"{where}: graph")
    name = graph_raw.pop("name", None) or graph.get("id") or "untitled"
    types = domains["graph"].types
    extra = {
        k: _typed(v, types.get(k, "string"), f"{where}: graph {k}") for k, v in graph_raw.items()
    }
    return Topology(name=name, nodes=tuple(nodes), links=tuple(links), extra=extra)


def _read_keys(root, where: str) -> dict[str, _Keys]:
    """The <key> declarations of each domain (node, edge, graph; ``for="all"`` goes to all)."""
    domains = {"node": _Keys(), "edge": _Keys(), "graph": _Keys()}
    for key in _children(root, "key"):
        kid = key.get("id")
        name = key.get("attr.name") or kid
        if not kid:
            raise TopologyError(f"{where}: a <key> has no 'id'")
        domain = key.get("for", "all")
        targets = list(domains.values()) if domain == "all" else [domains.get(domain)]
        for keys in targets:
            if keys is None:
                continue
            keys.names[kid] = name
            keys.types[name] = key.get("attr.type", "string")
            default = _children(key, "default")
            if default:
                keys.defaults[name] = default[0].text or ""
    return domains


def _the_graph(root, where: str):
    """The file's one <graph> element and its edge default ('directed' or 'undirected')."""
    graphs = _children(root, "graph")
    if not graphs:
        raise TopologyError(f"{where}: no <graph> element")
    if len(graphs) > 1:
        raise TopologyError(f"{where}: {len(graphs)} <graph> elements; one fabric per file")
    graph = graphs[0]
    edge_default = graph.get("edgedefault", "undirected")
    if edge_default not in ("directed", "undirected"):
        raise TopologyError(f"{where}: edgedefault must be 'directed' or 'undirected'")
    return graph, edge_default


def _read_node(elem, i: int, keys: _Keys, where: str) -> Node:
    node_id = elem.get("id")
    if not node_id:
        raise TopologyError(f"{where}: node {i} has no 'id'")
    if _children(elem, "graph"):
        raise TopologyError(f"{where}: node {node_id!r}: nested graphs are not supported")
    what = f"{where}: node {node_id!r}"
    raw = keys.values(elem, what)
    if "kind" in raw:
        kind = raw["kind"].strip()
        if kind not in (COMPUTE, SWITCH):
            raise TopologyError(f"{what}: kind must be 'compute' or 'switch', got {kind!r}")
    elif "compute" in raw:
        kind = COMPUTE if _typed(raw["compute"], "boolean", f"{what}: compute") else SWITCH
    else:
        raise TopologyError(
            f"{what}: needs a 'kind' attribute ('compute' or 'switch') or a boolean 'compute'"
        )
    coords = {}
    for axis in ("x", "y"):
        coord = raw.get(axis)
        coords[axis] = None if coord in (None, "") else bounded_float(coord, f"{what}: {axis}")
    return Node(
        id=node_id,
        kind=kind,
        role=raw.get("role", "") or "",
        x=coords["x"],
        y=coords["y"],
        group=raw.get("group") or None,
        extra={
            k: _typed(v, keys.types.get(k, "string"), f"{what}: {k}")
            for k, v in raw.items()
            if k not in _NODE_KEYS
        },
    )


def _read_link(elem, i: int, keys: _Keys, edge_default: str, where: str) -> Link:
    src, dst = elem.get("source"), elem.get("target")
    if not src or not dst:
        raise TopologyError(f"{where}: edge {i} needs 'source' and 'target'")
    flag = elem.get("directed")
    if flag is None:
        directed = edge_default == "directed"
    elif flag in ("true", "false"):
        directed = flag == "true"
    else:
        raise TopologyError(f"{where}: edge {i}: directed must be 'true' or 'false'")
    what = f"{where}: edge {elem.get('id') or i} ({src}{'->' if directed else '<->'}{dst})"
    raw = keys.values(elem, what)
    if "bandwidth" in raw:
        bw = to_fraction(raw["bandwidth"], f"{what}: bandwidth")
    elif "capacity" in raw:
        bw = to_fraction(raw["capacity"], f"{what}: capacity")
    else:
        raise TopologyError(f"{what}: missing 'bandwidth' (or 'capacity')")
    lat = raw.get("latency")
    extra = {
        k: _typed(v, keys.types.get(k, "string"), f"{what}: {k}")
        for k, v in raw.items()
        if k not in _EDGE_KEYS
    }
    if "bandwidth" in raw and "capacity" in raw:
        extra["capacity"] = raw["capacity"]
    return Link(
        source=src,
        target=dst,
        bandwidth=bw,
        latency=None if lat in (None, "") else to_fraction(lat, f"{what}: latency"),
        directed=directed,
        extra=extra,
    )


def _type_of(values: list[Any]) -> str:
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "long"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "double"
    return "string"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value or abs(value) == float("inf"):
            raise TopologyError(f"cannot write {value} to GraphML (not a finite number)")
        return repr(value)
    return str(value)


def _writable(text: str, what: str) -> str:
    """``text`` if an XML 1.0 file can hold it and give it back; else one-line TopologyError."""
    return text_value(text, f"cannot write GraphML: {what} {text[:40]!r}", max_chars=len(text) + 1)


def dumps(topo: Topology) -> str:
    """GraphML text for ``topo`` (see module docstring for how exactness is kept)."""
    directed = any(link.directed for link in topo.links)

    def exact_values(values):
        return [fraction_to_json(v) for v in values]

    bws = exact_values(link.bandwidth for link in topo.links)
    lats = exact_values(link.latency for link in topo.links if link.latency is not None)
    node_cols: dict[str, list[Any]] = {}
    for n in topo.nodes:
        for k, v in n.extra.items():
            if k not in _NODE_KEYS and v is not None and not isinstance(v, dict | list):
                node_cols.setdefault(k, []).append(v)
    edge_cols: dict[str, list[Any]] = {}
    for link in topo.links:
        for k, v in link.extra.items():
            if k not in _EDGE_KEYS and v is not None and not isinstance(v, dict | list):
                edge_cols.setdefault(k, []).append(v)
    graph_cols = {
        k: [v] for k, v in topo.extra.items() if v is not None and not isinstance(v, dict | list)
    }

    root = ET.Element("graphml", {"xmlns": NS})
    ids: dict[tuple[str, str], str] = {}

    def declare(domain: str, name: str, typ: str) -> None:
        kid = f"{domain[0]}_{name}"
        ids[(domain, name)] = kid
        ET.SubElement(root, "key", {"id": kid, "for": domain, "attr.name": name, "attr.type": typ})

    declare("graph", "name", "string")
    for k, vals in graph_cols.items():
        declare("graph", k, _type_of(vals))
    for k, typ in (
        ("kind", "string"),
        ("role", "string"),
        ("x", "double"),
        ("y", "double"),
        ("group", "string"),
    ):
        declare("node", k, typ)
    for k, vals in node_cols.items():
        declare("node", k, _type_of(vals))
    declare("edge", "bandwidth", "string" if any(isinstance(v, str) for v in bws) else "double")
    if lats:
        declare("edge", "latency", "string" if any(isinstance(v, str) for v in lats) else "double")
    for k, vals in edge_cols.items():
        declare("edge", k, _type_of(vals))

    graph = ET.SubElement(
        root, "graph", {"id": "G", "edgedefault": "directed" if directed else "undirected"}
    )

    def data(parent: ET.Element, domain: str, name: str, value: Any) -> None:
        d = ET.SubElement(parent, "data", {"key": ids[(domain, name)]})
        d.text = _writable(_text(value), f"{domain} attribute {name!r}")

    data(graph, "graph", "name", topo.name)
    for k in graph_cols:
        data(graph, "graph", k, topo.extra[k])
    for n in topo.nodes:
        elem = ET.SubElement(graph, "node", {"id": _writable(n.id, "node id")})
        data(elem, "node", "kind", n.kind)
        if n.role:
            data(elem, "node", "role", n.role)
        if n.x is not None:
            data(elem, "node", "x", n.x)
        if n.y is not None:
            data(elem, "node", "y", n.y)
        if n.group is not None:
            data(elem, "node", "group", n.group)
        for k, v in n.extra.items():
            if k in node_cols and v is not None and not isinstance(v, dict | list):
                data(elem, "node", k, v)
    for i, link in enumerate(topo.links):
        attrs = {"id": f"e{i}", "source": link.source, "target": link.target}
        if directed:
            attrs["directed"] = "true" if link.directed else "false"
        elem = ET.SubElement(graph, "edge", attrs)
        data(elem, "edge", "bandwidth", bws[i])
        if link.latency is not None:
            data(elem, "edge", "latency", fraction_to_json(link.latency))
        for k, v in link.extra.items():
            if k in edge_cols and v is not None and not isinstance(v, dict | list):
                data(elem, "edge", k, v)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


__all__ = ["dumps", "loads"]
