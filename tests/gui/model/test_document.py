"""TopologyDocument: conversion, primitive edits and the signals views rely on (no widgets)."""

from fractions import Fraction

import pytest

from fc_gui.model.document import TopologyDocument, make_link, make_node
from solver.io import v1
from solver.io.templates import dgx_a100, ring
from solver.model.errors import TopologyError
from solver.model.topology import validate


@pytest.fixture
def doc(qapp):
    return TopologyDocument(dgx_a100(2))


def test_round_trip_keeps_nodes_links_and_order(doc):
    topo = dgx_a100(2)
    out = doc.to_topology()
    assert out.node_ids == topo.node_ids
    assert out.links == topo.links
    assert v1.dumps(out) == v1.dumps(topo)
    validate(out)


def test_disabled_items_are_left_out_of_the_solver_view(doc):
    uid = next(iter(doc.links))
    doc.set_disabled(["ib0"], [uid], True)
    topo = doc.to_topology()
    assert "ib0" not in topo.node_ids
    assert all("ib0" not in (ln.source, ln.target) for ln in topo.links)
    assert len(topo.links) == len(doc.links) - len(doc.links_of(["ib0"])) - 1
    full = doc.to_topology(include_disabled=True)
    assert len(full.links) == len(doc.links)
    doc.set_disabled(["ib0"], [uid], False)
    assert doc.to_topology().links == full.links


def test_rename_carries_into_links_and_keeps_order(doc):
    old_order = list(doc.nodes)
    node = doc.node("b0.gpu3")
    from dataclasses import replace

    doc.replace_node("b0.gpu3", replace(node, id="gpu-x"))
    assert list(doc.nodes)[old_order.index("b0.gpu3")] == "gpu-x"
    assert not any("b0.gpu3" in (ln.source, ln.target) for ln in doc.links.values())
    assert any("gpu-x" in (ln.source, ln.target) for ln in doc.links.values())
    with pytest.raises(TopologyError, match="already used"):
        doc.replace_node("gpu-x", replace(node, id="b0.gpu4"))


def test_remove_then_insert_restores_order_uids_and_disabled(doc):
    before = doc.snapshot()
    uids = doc.links_of(["b0.gpu2"])
    doc.set_disabled([], uids[:1], True)
    order = list(doc.nodes)
    nodes, links, dn, dl = doc.remove_items(["b0.gpu2"])
    assert set(links) == set(uids) and dl == {uids[0]}
    assert "b0.gpu2" not in doc.nodes
    doc.insert_items(nodes, links, order=order, disabled_nodes=dn, disabled_links=dl)
    assert list(doc.nodes) == list(before["nodes"])
    assert list(doc.links) == list(before["links"])
    assert doc.disabled_links == {uids[0]}


def test_insert_refuses_duplicates_and_dangling_links(doc):
    with pytest.raises(TopologyError, match="duplicate node id"):
        doc.insert_items([make_node("b0.gpu0", "compute")])
    with pytest.raises(TopologyError, match="unknown node"):
        doc.insert_items([], {doc.new_link_uid(): make_link("b0.gpu0", "nowhere", 10)})


def test_move_is_not_a_topology_change(doc, qtbot):
    seen = []
    doc.topology_changed.connect(lambda: seen.append("topo"))
    with qtbot.waitSignal(doc.positions_changed) as blocker:
        doc.move_nodes({"b0.gpu0": (5.5, -2.0)})
    assert blocker.args == [["b0.gpu0"]]
    assert doc.position("b0.gpu0") == (5.5, -2.0)
    assert seen == []
    doc.set_disabled(["b0.gpu0"], [], True)
    assert seen == ["topo"]


def test_make_link_validates_values():
    assert make_link("a", "b", "12.5").bandwidth == Fraction(25, 2)
    assert make_link("a", "b", "1/3").bandwidth == Fraction(1, 3)
    for bad in ("0", "-3", "abc", "nan", "inf"):
        with pytest.raises(TopologyError):
            make_link("a", "b", bad)
    with pytest.raises(TopologyError, match="itself"):
        make_link("a", "a", 5)
    with pytest.raises(TopologyError, match="latency"):
        make_link("a", "b", 5, latency=-1)


def test_selection_is_filtered_and_signalled(qapp, qtbot):
    doc = TopologyDocument(ring(4))
    with qtbot.waitSignal(doc.selection_changed):
        doc.set_selection(["gpu0", "nope"], [0, 999])
    assert doc.selected_nodes == {"gpu0"}
    assert doc.selected_links == {0}
    doc.select_all()
    assert doc.selected_nodes == set(doc.nodes)
