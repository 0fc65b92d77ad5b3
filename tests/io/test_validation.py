"""Every kind of bad fabric file gets a one-line error naming the problem and where it is."""

from __future__ import annotations

import json
import os
import subprocess
from fractions import Fraction

import pytest

from solver.io.formats import MAX_FILE_BYTES, load
from solver.model.errors import ForestCollError, TopologyError

GOOD_NODES = [
    {"id": "a", "kind": "compute"},
    {"id": "b", "kind": "compute"},
    {"id": "s", "kind": "switch"},
]
GOOD_LINKS = [
    {"source": "a", "target": "s", "bandwidth": 10},
    {"source": "b", "target": "s", "bandwidth": 10},
]


def v1_doc(**changes):
    doc = {
        "format": "forestcoll-topology",
        "version": 1,
        "name": "t",
        "nodes": json.loads(json.dumps(GOOD_NODES)),
        "links": json.loads(json.dumps(GOOD_LINKS)),
    }
    doc.update(changes)
    return doc


def write(tmp_path, doc, name="f.json") -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


def expect_error(path, pattern):
    with pytest.raises(TopologyError) as info:
        load(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(path), message  # names the file
    assert pattern in message, message
    return message


def test_good_file_loads(tmp_path):
    topo = load(write(tmp_path, v1_doc()))
    assert topo.compute_ids == ("a", "b")


def test_invalid_json_names_line_and_column(tmp_path):
    path = write(tmp_path, '{"format": "forestcoll-topology",\n  "version": 1,\n  "nodes": [,]}')
    message = expect_error(path, "invalid JSON")
    assert f"{path}:3:" in message


def test_missing_or_wrong_format_and_version(tmp_path):
    doc = v1_doc()
    del doc["format"]
    expect_error(write(tmp_path, doc), "missing 'format'")
    expect_error(write(tmp_path, v1_doc(format="something-else")), "'format' must be")
    doc = v1_doc()
    del doc["version"]
    expect_error(write(tmp_path, doc), "missing 'version'")
    expect_error(write(tmp_path, v1_doc(version="one")), "'version' must be a number")
    expect_error(write(tmp_path, v1_doc(version=3)), "newer than this program reads")
    expect_error(write(tmp_path, "[1, 2]"), "expected a JSON object")


def test_duplicate_id(tmp_path):
    doc = v1_doc()
    doc["nodes"].append({"id": "a", "kind": "switch"})
    expect_error(write(tmp_path, doc), "duplicate node id 'a'")


def test_link_to_unknown_node(tmp_path):
    doc = v1_doc()
    doc["links"].append({"source": "a", "target": "ghost", "bandwidth": 1})
    expect_error(write(tmp_path, doc), "link 2 (a<->ghost): unknown node 'ghost'")


def test_self_loop(tmp_path):
    doc = v1_doc()
    doc["links"].append({"source": "s", "target": "s", "bandwidth": 1})
    expect_error(write(tmp_path, doc), "self-loop on node 's'")


@pytest.mark.parametrize(
    "raw, pattern",
    [
        ("0", "must be > 0"),
        ("-5", "must be > 0"),
        ("NaN", "must be finite"),
        ("Infinity", "must be finite"),
        ("-Infinity", "must be finite"),
        ('"NaN"', "must be finite"),
        ('"fast"', "must be a number"),
        ("true", "must be a number"),
        ("null", "must be a number"),
        ("[1]", "must be a number"),
    ],
)
def test_bad_bandwidths(tmp_path, raw, pattern):
    doc = json.dumps(v1_doc()).replace('"bandwidth": 10}, {', f'"bandwidth": {raw}}}, {{', 1)
    assert raw in doc
    message = expect_error(write(tmp_path, doc), pattern)
    assert "link 0 (a<->s)" in message and "bandwidth" in message


def test_missing_bandwidth_and_bad_latency(tmp_path):
    doc = v1_doc()
    del doc["links"][1]["bandwidth"]
    expect_error(write(tmp_path, doc), "link 1 (b<->s): missing 'bandwidth'")
    doc = v1_doc()
    doc["links"][0]["latency"] = -1
    expect_error(write(tmp_path, doc), "latency must be >= 0")


def test_bad_kind(tmp_path):
    doc = v1_doc()
    doc["nodes"][2]["kind"] = "router"
    expect_error(write(tmp_path, doc), "node 's': 'kind' must be 'compute' or 'switch'")


def test_fewer_than_two_compute_nodes(tmp_path):
    doc = v1_doc()
    doc["nodes"][1]["kind"] = "switch"
    expect_error(write(tmp_path, doc), "at least two compute nodes, this one has 1")


def test_compute_node_that_cannot_be_reached(tmp_path):
    doc = v1_doc()
    doc["nodes"].append({"id": "c", "kind": "compute"})
    doc["links"].append({"source": "c", "target": "s", "bandwidth": 5, "directed": True})
    expect_error(write(tmp_path, doc), "compute node 'c' cannot be reached from compute node 'a'")


def test_compute_node_that_cannot_reach(tmp_path):
    doc = v1_doc()
    doc["nodes"].append({"id": "c", "kind": "compute"})
    doc["links"].append({"source": "s", "target": "c", "bandwidth": 5, "directed": True})
    expect_error(write(tmp_path, doc), "compute node 'c' cannot reach compute node 'a'")


def test_isolated_compute_node(tmp_path):
    doc = v1_doc()
    doc["nodes"].append({"id": "lonely", "kind": "compute"})
    expect_error(write(tmp_path, doc), "'lonely' cannot be reached")


def test_file_over_512_mb_is_refused_before_reading(tmp_path):
    path = tmp_path / "huge.json"
    subprocess.run(["truncate", "-s", str(MAX_FILE_BYTES + 1), str(path)], check=True)
    assert os.stat(path).st_blocks == 0  # sparse: nothing was written
    expect_error(str(path), "larger than the 512 MB limit")


def test_missing_file_and_binary_file(tmp_path):
    expect_error(str(tmp_path / "nope.json"), "no such file")
    path = tmp_path / "bin.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    expect_error(str(path), "not UTF-8")


@pytest.mark.parametrize(
    "name, text, pattern",
    [
        ("g.nodelink.json", '{"nodes": [{"id": "a"}]}', "node 'a': needs 'kind'"),
        (
            "g.nodelink.json",
            (
                '{"nodes": [{"id": "a", "kind": "compute"}, {"id": "a", "kind": "compute"}],'
                ' "edges": []}'
            ),
            "duplicate node id 'a'",
        ),
        (
            "g.nodelink.json",
            (
                '{"nodes": [{"id": "a", "kind": "compute"}, {"id": "b", "kind": "compute"}],'
                ' "edges": [{"source": "a", "target": "b", "capacity": NaN}]}'
            ),
            "capacity must be finite",
        ),
        ("g.graphml", "<graphml><graph></graphml>", "invalid XML"),
        (
            "g.graphml",
            (
                '<graphml><key id="k" for="node" attr.name="kind"/><graph>'
                '<node id="a"><data key="k">compute</data></node></graph></graphml>'
            ),
            "at least two compute nodes",
        ),
        ("g.xml", "<system version='1'></system>", "no <cpu> element"),
    ],
)
def test_other_formats_report_errors_too(tmp_path, name, text, pattern):
    expect_error(write(tmp_path, text, name), pattern)


def test_errors_are_forestcoll_errors(tmp_path):
    with pytest.raises(ForestCollError):
        load(write(tmp_path, "{"))


def test_model_holds_max_nodes_and_refuses_one_more():
    from solver.model.topology import Link, Node, Topology, validate
    from solver.model.values import MAX_NODES

    nodes = [Node(f"n{i}", "compute") for i in range(MAX_NODES + 1)]
    links = (Link("n0", "n1", Fraction(1)),)
    with pytest.raises(TopologyError, match=f"number of nodes: {MAX_NODES + 1} is more than"):
        validate(Topology("big", tuple(nodes), links), check_connectivity=False)
    # at the limit the count passes (the lonely nodes fail only the connectivity check)
    with pytest.raises(TopologyError, match="cannot be reached"):
        validate(Topology("big", tuple(nodes[:MAX_NODES]), links))


def test_hostile_json_is_refused_from_its_parse_estimate(tmp_path):
    """A file under the size cap whose values would take more memory than MAX_PARSE_BYTES
    (32 million zeros in 64 MB) is one error before it is parsed."""
    from solver.io.formats import JSON_VALUE_BYTES, MAX_PARSE_BYTES

    count = MAX_PARSE_BYTES // JSON_VALUE_BYTES + 1
    path = tmp_path / "hostile.json"
    with open(path, "w") as fh:
        fh.write("[")
        fh.write("0," * (count - 1))
        fh.write("0]")
    assert path.stat().st_size < MAX_FILE_BYTES
    message = expect_error(str(path), "reading this file would take about 6.")
    assert "GiB of memory (estimated from its" in message and "the limit is 6 GiB" in message


def test_parse_estimate_counts_what_the_parser_builds():
    from solver.io.formats import JSON_OBJECT_BYTES, JSON_VALUE_BYTES, XML_TAG_BYTES, parse_estimate

    text = '{"a": [1, 2, {"b": 3}]}'
    assert parse_estimate(text, "v1") == JSON_VALUE_BYTES * 6 + JSON_OBJECT_BYTES * 2 + 2 * 23
    assert parse_estimate("<a><b/></a>", "graphml") == XML_TAG_BYTES * 3 + 2 * 11


def test_a_topology_is_checked_once_but_connectivity_is_not_skipped():
    from solver.model.topology import Link, Node, Topology, validate

    nodes = (Node("a", "compute"), Node("b", "compute"), Node("s", "switch"))
    apart = Topology("apart", nodes, (Link("a", "s", Fraction(10)),))
    assert validate(apart, check_connectivity=False) is apart
    with pytest.raises(TopologyError, match="'b' cannot be reached"):
        validate(apart)  # passed without the connectivity check: that check still runs
    joined = Topology("joined", nodes, (Link("a", "s", Fraction(10)), Link("b", "s", Fraction(10))))
    assert validate(joined) is joined and validate(joined) is joined
    looped = Topology("looped", nodes, (*joined.links, Link("s", "s", Fraction(1))))
    with pytest.raises(TopologyError, match="self-loop"):
        validate(looped)  # another object: checked in full
