"""v1, node-link and GraphML: exact round trips, what networkx writes and reads, extension dispatch."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from fractions import Fraction

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.io import graphml, nodelink, v1
from solver.io import templates as T
from solver.io.formats import dumps, format_for, load, save
from solver.model.errors import TopologyError
from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology, validate


def same_fabric(a: Topology, b: Topology) -> None:
    assert a.name == b.name
    assert [(n.id, n.kind, n.role, n.x, n.y, n.group) for n in a.nodes] == [
        (n.id, n.kind, n.role, n.x, n.y, n.group) for n in b.nodes
    ]
    assert a.directed_bandwidths() == b.directed_bandwidths()
    assert a.directed_latencies() == b.directed_latencies()


def odd_fabric() -> Topology:
    """Exact values that binary floats cannot hold, a one-way link, parallel links, latencies."""
    nodes = (
        Node("g0", COMPUTE, "gpu", 0.0, 0.0, "a"),
        Node("g1", COMPUTE, "gpu", 100.0, 0.0, "a"),
        Node("g2", COMPUTE, "gpu", 50.5, 80.0, None),
        Node("sw", SWITCH, "pcie", 50.0, -80.0, "a", extra={"busid": "0000:01:00.0"}),
    )
    links = (
        Link("g0", "sw", Fraction(1, 3), latency=Fraction(7, 10)),
        Link("g1", "sw", Fraction(16, 5)),
        Link("g2", "sw", Fraction(25, 2), extra={"cable": "copper", "count": 3}),
        Link("g2", "sw", Fraction(1, 10)),  # parallel
        Link("g0", "g1", Fraction(123456789, 1000), directed=True),
        Link("g1", "g0", Fraction(7), directed=True),
    )
    return validate(Topology("odd one", nodes, links, extra={"site": "lab 2"}))


# ----------------------------------------------------------------------------- v1
def test_v1_reads_decimals_exactly_and_keeps_unknown_keys(tmp_path):
    text = json.dumps(
        {
            "format": "forestcoll-topology",
            "version": 1,
            "name": "t",
            "owner": "me",
            "nodes": [
                {"id": "a", "kind": "compute", "colour": "red"},
                {"id": "b", "kind": "compute"},
            ],
            "links": [{"source": "a", "target": "b", "bandwidth": "1/3", "note": "x"}],
        }
    ).replace('"1/3"', '"1/3"')
    path = tmp_path / "t.json"
    path.write_text(text.replace('"bandwidth": "1/3"', '"bandwidth": 3.2'))
    topo = load(path)
    assert topo.links[0].bandwidth == Fraction(16, 5)
    out = json.loads(v1.dumps(topo))
    assert out["owner"] == "me" and out["nodes"][0]["colour"] == "red"
    assert out["links"][0]["note"] == "x" and out["links"][0]["bandwidth"] == 3.2


def test_v1_round_trip_of_odd_values(tmp_path):
    topo = odd_fabric()
    save(topo, tmp_path / "odd.json")
    back = load(tmp_path / "odd.json")
    same_fabric(topo, back)
    assert back.extra == {"site": "lab 2"}
    assert back.links[2].extra == {"cable": "copper", "count": 3}


def test_v1_refuses_newer_major_version(tmp_path):
    path = tmp_path / "new.json"
    path.write_text('{"format": "forestcoll-topology", "version": 2, "nodes": [], "links": []}')
    with pytest.raises(TopologyError, match="version 2 is newer"):
        load(path)


# ----------------------------------------------------------------------------- node-link
def test_nodelink_accepts_links_or_edges_capacity_and_compute_flags(tmp_path):
    doc = {
        "directed": False,
        "multigraph": False,
        "graph": {"name": "from nx"},
        "nodes": [
            {"id": 0, "compute": True},
            {"id": 1, "compute": True},
            {"id": "s", "compute": False},
        ],
        "links": [
            {"source": 0, "target": "s", "capacity": 12.5},
            {"source": 1, "target": "s", "bandwidth": 0.1},
        ],
    }
    path = tmp_path / "g.nodelink.json"
    path.write_text(json.dumps(doc))
    topo = load(path)
    assert topo.name == "from nx"
    assert topo.compute_ids == ("0", "1") and topo.switch_ids == ("s",)
    caps = topo.directed_bandwidths()
    assert caps[("0", "s")] == caps[("s", "0")] == Fraction(25, 2)
    assert caps[("1", "s")] == Fraction(1, 10)
    doc["edges"] = doc.pop("links")
    path.write_text(json.dumps(doc))
    assert load(path).directed_bandwidths() == caps


def test_nodelink_directed_graph_means_one_way_edges():
    doc = {
        "directed": True,
        "nodes": [{"id": "a", "kind": "compute"}, {"id": "b", "kind": "compute"}],
        "edges": [
            {"source": "a", "target": "b", "bandwidth": 5},
            {"source": "b", "target": "a", "bandwidth": 3},
        ],
    }
    topo = nodelink.from_data(doc, "x")
    assert topo.directed_bandwidths() == {("a", "b"): 5, ("b", "a"): 3}


def test_plain_json_from_networkx_is_read_as_nodelink(tmp_path):
    g = nx.Graph(name="nx graph")
    g.add_node("a", kind="compute")
    g.add_node("b", kind="compute")
    g.add_node("s", kind="switch")
    g.add_edge("a", "s", bandwidth=25)
    g.add_edge("b", "s", bandwidth=25)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(nx.node_link_data(g, edges="edges")))
    topo = load(path)
    assert topo.name == "nx graph" and len(topo.links) == 2


def test_nodelink_output_is_read_by_networkx():
    topo = T.dgx_a100(2)
    g = nx.node_link_graph(json.loads(nodelink.dumps(topo)), edges="edges")
    assert not g.is_directed()
    assert g.number_of_nodes() == len(topo.nodes) and g.number_of_edges() == len(topo.links)
    assert g.nodes["b0.gpu0"]["kind"] == "compute"
    directed = nx.node_link_graph(json.loads(nodelink.dumps(odd_fabric())), edges="edges")
    assert directed.is_directed() and directed.is_multigraph()


def test_nodelink_errors_name_the_problem():
    base = {"directed": False, "nodes": [{"id": "a"}], "edges": []}
    with pytest.raises(TopologyError, match="node 'a': needs 'kind'"):
        nodelink.from_data(base, "f")
    with pytest.raises(TopologyError, match=r"edge 0 \(a<->b\): missing 'bandwidth'"):
        nodelink.from_data(
            {"nodes": [{"id": "a", "kind": "compute"}], "edges": [{"source": "a", "target": "b"}]},
            "f",
        )
    with pytest.raises(TopologyError, match="both 'edges' and 'links'"):
        nodelink.from_data({"nodes": [], "edges": [], "links": []}, "f")


# ----------------------------------------------------------------------------- GraphML
def test_graphml_round_trip_keeps_exact_values_and_direction():
    topo = odd_fabric()
    text = graphml.dumps(topo)
    assert 'attr.name="bandwidth" attr.type="string"' in text  # 1/3 cannot be a double
    back = graphml.loads(text, "x")
    same_fabric(topo, back)
    assert [link.directed for link in back.links] == [link.directed for link in topo.links]
    assert back.links[2].extra == {"cable": "copper", "count": 3}
    assert back.nodes[3].extra == {"busid": "0000:01:00.0"}
    assert back.extra == {"site": "lab 2"}


def test_graphml_uses_doubles_when_exact_and_networkx_reads_it():
    topo = T.fat_tree(oversubscription=1)
    text = graphml.dumps(topo)
    assert 'attr.name="bandwidth" attr.type="double"' in text
    g = nx.read_graphml(io.StringIO(text))
    assert g.number_of_edges() == len(topo.links)
    assert g.edges["l0.gpu0", "leaf0"]["bandwidth"] == 50.0


def test_graphml_written_by_networkx_is_read(tmp_path):
    g = nx.DiGraph(name="nxg")
    g.add_node("a", kind="compute", x=1.5)
    g.add_node("b", compute=True)
    g.add_edge("a", "b", capacity=0.3, latency=2)
    g.add_edge("b", "a", capacity=1.1)
    path = tmp_path / "g.graphml"
    nx.write_graphml(g, path)
    topo = load(path)
    assert topo.directed_bandwidths() == {("a", "b"): Fraction(3, 10), ("b", "a"): Fraction(11, 10)}
    assert topo.links[0].latency == 2 and topo.nodes[0].x == 1.5


def test_graphml_errors_name_line_and_node():
    with pytest.raises(TopologyError, match=r"f:3:\d+: invalid XML"):
        graphml.loads(
            '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n<graph>\n<node', "f"
        )
    with pytest.raises(TopologyError, match="not GraphML"):
        graphml.loads("<system/>", "f")
    doc = (
        '<graphml><key id="k" for="edge" attr.name="bandwidth" attr.type="double"/>'
        '<graph edgedefault="undirected"><node id="a"/></graph></graphml>'
    )
    with pytest.raises(TopologyError, match="node 'a': needs a 'kind'"):
        graphml.loads(doc, "f")
    doc = (
        '<graphml><key id="k" for="node" attr.name="kind"/>'
        '<key id="b" for="edge" attr.name="bandwidth"/><graph>'
        '<node id="a"><data key="k">compute</data></node>'
        '<node id="c"><data key="k">compute</data></node>'
        '<edge source="a" target="c"><data key="b">NaN</data></edge></graph></graphml>'
    )
    with pytest.raises(TopologyError, match=r"edge 0 \(a<->c\): bandwidth must be finite"):
        graphml.loads(doc, "f")


# ----------------------------------------------------------------------------- all formats
@pytest.mark.parametrize("name", ["dgx_a100_2x", "mi250_2x", "fat_tree_4x4", "torus_4x4x2"])
def test_v1_nodelink_graphml_chain_is_lossless(tmp_path, name):
    topo = load(f"sample_topologies/{name}.json")
    save(topo, tmp_path / "a.nodelink.json")
    a = load(tmp_path / "a.nodelink.json")
    save(a, tmp_path / "b.graphml")
    b = load(tmp_path / "b.graphml")
    save(b, tmp_path / "c.json")
    c = load(tmp_path / "c.json")
    for other in (a, b, c):
        same_fabric(topo, other)
        assert len(other.links) == len(topo.links)


exact_bw = st.one_of(
    st.fractions(min_value=Fraction(1, 97), max_value=1000, max_denominator=97),
    st.decimals(min_value="0.001", max_value="10000", places=3).map(Fraction),
).filter(lambda f: f > 0)


@st.composite
def fabrics(draw):
    n_compute = draw(st.integers(2, 5))
    n_switch = draw(st.integers(0, 3))
    ids = [f"c{i}" for i in range(n_compute)] + [f"s{i}" for i in range(n_switch)]
    nodes = tuple(
        Node(i, COMPUTE if i.startswith("c") else SWITCH, x=float(k), y=float(k % 3))
        for k, i in enumerate(ids)
    )
    links = []
    for i in range(1, len(ids)):  # a spanning chain keeps it connected
        links.append(Link(ids[i - 1], ids[i], draw(exact_bw)))
    for _ in range(draw(st.integers(0, 4))):
        a, b = draw(st.sampled_from(ids)), draw(st.sampled_from(ids))
        if a != b:
            latency = draw(st.none() | exact_bw)
            links.append(Link(a, b, draw(exact_bw), latency=latency, directed=draw(st.booleans())))
    return validate(Topology("random", nodes, tuple(links)))


@given(fabrics())
def test_random_fabrics_round_trip_exactly_in_every_format(topo):
    for fmt, module in (("v1", v1), ("nodelink", nodelink), ("graphml", graphml)):
        text = dumps(topo, fmt)
        back = module.loads(text, "x") if fmt != "v1" else v1.loads(text, "x")
        same_fabric(topo, back)


def test_format_is_picked_by_extension():
    assert format_for("a.json") == "v1"
    assert format_for("a.NODELINK.json") == "nodelink"
    assert format_for("dir.x/a.graphml") == "graphml"
    assert format_for("topo.xml") == "nccl-xml"
    with pytest.raises(TopologyError, match="unknown file type"):
        format_for("a.yaml")
    with pytest.raises(TopologyError, match="import-only"):
        dumps(T.ring(3), "nccl-xml")


def test_save_is_atomic_on_failure(tmp_path):
    path = tmp_path / "keep.json"
    save(T.ring(3), path)
    before = path.read_text()
    bad = replace(T.ring(3), links=(Link("gpu0", "gpu1", Fraction(1), extra={"x": object()}),))
    with pytest.raises(TypeError):
        save(bad, path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.json"]


def test_yed_style_graphml_with_defaults_and_graphics():
    from pathlib import Path

    topo = load(Path(__file__).resolve().parents[1] / "data" / "yed_like.graphml")
    assert topo.compute_ids == ("n0", "n1")  # <default>compute</default> applies
    assert topo.node("n0").extra == {}  # yEd graphics are not kept as attributes
    assert topo.directed_bandwidths()[("n1", "n0")] == Fraction(1, 10)
    assert all(link.directed for link in topo.links)  # edgedefault="directed"
