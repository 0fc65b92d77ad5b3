"""Undo commands: build a fabric through commands, undo it all back, redo it all again."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtGui import QUndoStack

from fc_gui.model.commands import (
    AddLinkCommand,
    AddNodeCommand,
    ApplyLayoutCommand,
    DeleteCommand,
    MoveNodesCommand,
    PasteCommand,
    ReplaceTopologyCommand,
    SetDisabledCommand,
    SetLinkPropsCommand,
    SetNameCommand,
    SetNodePropsCommand,
    renamed_copies,
)
from fc_gui.model.document import TopologyDocument, make_link, make_node
from fc_gui.model.layouts import compute_layout
from solver.io import v1
from solver.io.templates import dgx_a100, ring
from solver.model.topology import validate


def state(doc: TopologyDocument):
    """Everything observable about a document (text of the full fabric + what-if sets)."""
    return (
        v1.dumps(doc.to_topology(include_disabled=True)),
        tuple(doc.links),
        doc.disabled_nodes,
        doc.disabled_links,
    )


@pytest.fixture
def stack(qapp):
    return QUndoStack()


def test_build_a_fabric_then_undo_and_redo_everything(qapp, stack):
    from solver.model.topology import Topology

    doc = TopologyDocument(Topology("empty", (), ()))
    empty = state(doc)
    stack.push(AddNodeCommand(doc, make_node("sw", "switch", "nvswitch", 0, 0)))
    for i in range(4):
        stack.push(AddNodeCommand(doc, make_node(f"g{i}", "compute", "gpu", 100 * i, 100)))
        stack.push(AddLinkCommand(doc, make_link(f"g{i}", "sw", 300)))
    stack.push(AddLinkCommand(doc, make_link("g0", "g1", "12.5", directed=True)))
    stack.push(MoveNodesCommand(doc, {"g0": (0, 100)}, {"g0": (-50, 120)}))
    stack.push(SetNodePropsCommand(doc, "g3", make_node("gpu3", "compute", "gpu", 300, 100)))
    uids = list(doc.links)
    stack.push(
        SetLinkPropsCommand(
            doc, {u: make_link(doc.links[u].source, doc.links[u].target, 150) for u in uids[:2]}
        )
    )
    stack.push(SetDisabledCommand(doc, [], [uids[-1]], True))
    stack.push(SetNameCommand(doc, "hand-made"))
    built = state(doc)
    topo = validate(doc.to_topology())
    assert topo.name == "hand-made"
    assert len(topo.compute_ids) == 4 and len(topo.links) == 4  # the one-way link is disabled
    assert doc.links[uids[0]].bandwidth == 150
    assert "gpu3" in doc.nodes and doc.position("g0") == (-50.0, 120.0)

    while stack.canUndo():
        stack.undo()
    assert state(doc) == empty
    while stack.canRedo():
        stack.redo()
    assert state(doc) == built


def test_delete_restores_nodes_links_order_and_uids(qapp, stack):
    doc = TopologyDocument(dgx_a100(2))
    before = state(doc)
    some_link = list(doc.links)[3]
    stack.push(SetDisabledCommand(doc, ["b1.gpu0"], [], True))
    stack.push(DeleteCommand(doc, ["b0.gpu2", "b1.gpu0", "ib1"], [some_link]))
    assert "ib1" not in doc.nodes and some_link not in doc.links
    assert doc.disabled_nodes == frozenset()
    stack.undo()
    assert doc.disabled_nodes == {"b1.gpu0"}
    stack.undo()
    assert state(doc) == before


def test_a_drag_is_one_command_but_two_drags_are_two(qapp, stack):
    doc = TopologyDocument(ring(4))
    start = doc.position("gpu0")
    for step in range(1, 6):
        stack.push(
            MoveNodesCommand(
                doc,
                {"gpu0": doc.position("gpu0")},
                {"gpu0": (start[0] + step, start[1])},
                drag_id=1,
            )
        )
    assert stack.count() == 1
    stack.push(MoveNodesCommand(doc, {"gpu0": doc.position("gpu0")}, {"gpu0": (0, 0)}, drag_id=2))
    assert stack.count() == 2
    stack.undo()
    assert doc.position("gpu0") == (start[0] + 5, start[1])
    stack.undo()
    assert doc.position("gpu0") == start


def test_replace_topology_then_later_commands_replay_exactly(qapp, stack):
    doc = TopologyDocument(ring(4))
    original = state(doc)
    stack.push(ReplaceTopologyCommand(doc, dgx_a100(1)))
    stack.push(AddLinkCommand(doc, make_link("b0.gpu0", "b0.gpu1", 50)))
    uid = list(doc.links)[-1]
    stack.push(SetLinkPropsCommand(doc, {uid: make_link("b0.gpu0", "b0.gpu1", 75)}))
    final = state(doc)
    for _ in range(3):
        stack.undo()
    assert state(doc) == original
    for _ in range(3):
        stack.redo()
    assert state(doc) == final
    assert doc.links[uid].bandwidth == 75


def test_paste_copies_only_inner_links_with_fresh_ids(qapp, stack):
    doc = TopologyDocument(dgx_a100(1))
    picked = [doc.nodes[i] for i in ("b0.gpu0", "b0.gpu1", "b0.nvsw")]
    inner = [
        ln
        for ln in doc.links.values()
        if {ln.source, ln.target} <= {"b0.gpu0", "b0.gpu1", "b0.nvsw"}
    ]
    nodes, links = renamed_copies(doc, picked, doc.links.values(), (40, 40))
    assert [n.id for n in nodes] == ["b0.gpu0_copy", "b0.gpu1_copy", "b0.nvsw_copy"]
    assert len(links) == len(inner) == 2
    assert nodes[0].x == picked[0].x + 40
    before = state(doc)
    stack.push(PasteCommand(doc, nodes, links))
    assert doc.selected_nodes == {n.id for n in nodes}
    nodes2, _ = renamed_copies(doc, picked, (), (80, 80))
    assert nodes2[0].id == "b0.gpu0_copy2"
    stack.undo()
    assert state(doc) == before


@pytest.mark.parametrize("key", ["structural", "layered", "spring", "circular"])
def test_layouts_are_one_undoable_command(qapp, stack, key):
    doc = TopologyDocument(dgx_a100(2))
    before = state(doc)
    pos = compute_layout(doc.to_topology(), key)
    assert set(pos) == set(doc.nodes)
    assert len({(round(x, 3), round(y, 3)) for x, y in pos.values()}) == len(pos)  # no overlaps
    stack.push(ApplyLayoutCommand(doc, pos, key))
    assert stack.count() == 1
    assert doc.position("b1.gpu5") == pytest.approx(pos["b1.gpu5"])
    stack.undo()
    assert state(doc) == before


# ---- property: any sequence of edits undoes back to the start and redoes to the end
ops = st.lists(
    st.one_of(
        st.tuples(st.just("node"), st.sampled_from(["compute", "switch"])),
        st.tuples(
            st.just("link"),
            st.integers(0, 50),
            st.integers(0, 50),
            st.fractions(min_value=Fraction(1, 8), max_value=400),
            st.booleans(),
        ),
        st.tuples(st.just("del_node"), st.integers(0, 50)),
        st.tuples(st.just("del_link"), st.integers(0, 50)),
        st.tuples(
            st.just("move"),
            st.integers(0, 50),
            st.integers(0, 50),
            st.floats(-500, 500),
            st.floats(-500, 500),
        ),
        st.tuples(st.just("bw"), st.integers(0, 50), st.fractions(min_value=1, max_value=99)),
        st.tuples(st.just("disable"), st.integers(0, 50), st.booleans()),
        st.tuples(st.just("rename"), st.integers(0, 50)),
    ),
    max_size=25,
)


@given(ops)
def test_any_edit_sequence_undoes_and_redoes_exactly(qapp, sequence):
    doc = TopologyDocument(ring(4))
    stack = QUndoStack()
    start = state(doc)
    counter = [0]
    for op in sequence:
        ids, uids = list(doc.nodes), list(doc.links)
        kind = op[0]
        if kind == "node":
            counter[0] += 1
            stack.push(AddNodeCommand(doc, make_node(f"n{counter[0]}", op[1])))
        elif kind == "link" and len(ids) >= 2:
            a, b = ids[op[1] % len(ids)], ids[op[2] % len(ids)]
            if a != b:
                stack.push(AddLinkCommand(doc, make_link(a, b, op[3], directed=op[4])))
        elif kind == "del_node" and ids:
            stack.push(DeleteCommand(doc, [ids[op[1] % len(ids)]]))
        elif kind == "del_link" and uids:
            stack.push(DeleteCommand(doc, [], [uids[op[1] % len(uids)]]))
        elif kind == "move" and ids:
            nid = ids[op[1] % len(ids)]
            stack.push(
                MoveNodesCommand(
                    doc, {nid: doc.position(nid)}, {nid: (op[3], op[4])}, drag_id=op[2] % 3
                )
            )
        elif kind == "bw" and uids:
            u = uids[op[1] % len(uids)]
            from dataclasses import replace

            stack.push(SetLinkPropsCommand(doc, {u: replace(doc.links[u], bandwidth=op[2])}))
        elif kind == "disable" and uids:
            stack.push(SetDisabledCommand(doc, [], [uids[op[1] % len(uids)]], op[2]))
        elif kind == "rename" and ids:
            from dataclasses import replace

            nid = ids[op[1] % len(ids)]
            counter[0] += 1
            stack.push(SetNodePropsCommand(doc, nid, replace(doc.nodes[nid], id=f"r{counter[0]}")))
    end = state(doc)
    while stack.canUndo():
        stack.undo()
    assert state(doc) == start
    while stack.canRedo():
        stack.redo()
    assert state(doc) == end


def test_spring_layout_of_a_big_fabric_goes_box_by_box():
    from fc_gui.model.layouts import SPRING_DIRECT_LIMIT, spring

    topo = dgx_a100(30)
    assert len(topo.nodes) > SPRING_DIRECT_LIMIT
    pos = spring(topo)
    assert set(pos) == set(topo.node_ids)
    assert len({(round(x), round(y)) for x, y in pos.values()}) == len(pos)
    # the nodes of one box stay together: its extent is small next to the whole drawing
    box = [pos[f"b3.gpu{i}"] for i in range(8)] + [pos["b3.nvsw"]]
    span = max(x for x, _ in pos.values()) - min(x for x, _ in pos.values())
    box_span = max(x for x, _ in box) - min(x for x, _ in box)
    assert box_span < span / 4
