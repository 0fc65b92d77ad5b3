"""Inspector: edits become undoable commands; bad values are refused in place."""

from fractions import Fraction

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack

from fc_gui.model.document import TopologyDocument
from fc_gui.views.inspector import Inspector
from solver.io.templates import dgx_a100


@pytest.fixture
def env(qtbot):
    doc = TopologyDocument(dgx_a100(2))
    stack = QUndoStack()
    ins = Inspector(doc, stack)
    qtbot.addWidget(ins)
    ins.show()
    return doc, stack, ins


def link_between(doc, a, b):
    return next(u for u, ln in doc.links.items() if {ln.source, ln.target} == {a, b})


def type_into(qtbot, edit, text):
    edit.setFocus()
    edit.selectAll()
    edit.setText(text)
    edit.editingFinished.emit()


def test_link_bandwidth_validation(qtbot, env):
    doc, stack, ins = env
    uid = link_between(doc, "b0.gpu0", "b0.nvsw")
    doc.set_selection((), [uid])
    assert ins.stack.currentWidget() is ins.link_page
    assert ins.link_bw.text() == "300"
    for bad, words in (
        ("-5", "> 0"),
        ("0", "> 0"),
        ("abc", "number"),
        ("nan", "finite"),
        ("", "required"),
    ):
        type_into(qtbot, ins.link_bw, bad)
        assert words in ins.message.text(), bad
        assert "d32f2f" in ins.link_bw.styleSheet()
        assert doc.links[uid].bandwidth == 300 and stack.count() == 0
    type_into(qtbot, ins.link_bw, "12.5")
    assert doc.links[uid].bandwidth == Fraction(25, 2)
    assert ins.message.text() == "" and ins.link_bw.styleSheet() == ""
    assert stack.count() == 1
    type_into(qtbot, ins.link_bw, "1/3")
    assert doc.links[uid].bandwidth == Fraction(1, 3)
    assert ins.link_bw.text() == "1/3"
    stack.undo()
    stack.undo()
    assert doc.links[uid].bandwidth == 300
    assert ins.link_bw.text() == "300"


def test_latency_and_direction(qtbot, env):
    doc, stack, ins = env
    uid = link_between(doc, "b0.gpu1", "b0.nic1")
    doc.set_selection((), [uid])
    type_into(qtbot, ins.link_lat, "-1")
    assert "latency" in ins.message.text().lower() and doc.links[uid].latency is None
    type_into(qtbot, ins.link_lat, "0.7")
    assert doc.links[uid].latency == Fraction(7, 10)
    type_into(qtbot, ins.link_lat, "")
    assert doc.links[uid].latency is None
    ins.link_directed.click()
    assert doc.links[uid].directed
    assert stack.count() == 3


def test_several_links_edited_at_once(qtbot, env):
    doc, stack, ins = env
    uids = [
        link_between(doc, "b0.gpu0", "b0.nvsw"),
        link_between(doc, "b0.gpu0", "b0.nic0"),
        link_between(doc, "b1.gpu0", "b1.nic0"),
    ]
    doc.set_selection((), uids)
    assert ins.link_bw.text() == "" and ins.link_bw.placeholderText() == "mixed"
    assert "3 links" in ins.title.text()
    type_into(qtbot, ins.link_bw, "")  # leaving "mixed" alone is no edit
    assert stack.count() == 0 and ins.message.text() == ""
    type_into(qtbot, ins.link_bw, "40")
    assert [doc.links[u].bandwidth for u in uids] == [40, 40, 40]
    assert stack.count() == 1
    stack.undo()
    assert [doc.links[u].bandwidth for u in uids] == [300, 25, 25]
    doc.set_selection((), uids[:1] + [link_between(doc, "ib0", "b0.nic0")])
    from dataclasses import replace

    # one directed + one not: tri-state box

    doc.replace_links({uids[0]: replace(doc.links[uids[0]], directed=True)})
    assert ins.link_directed.checkState() == Qt.CheckState.PartiallyChecked


def test_node_id_kind_role_group(qtbot, env):
    doc, stack, ins = env
    doc.set_selection(["b0.gpu5"])
    assert ins.stack.currentWidget() is ins.node_page
    type_into(qtbot, ins.node_id, "b0.gpu6")
    assert "already used" in ins.message.text() and "b0.gpu5" in doc.nodes
    type_into(qtbot, ins.node_id, "   ")
    assert "empty" in ins.message.text()
    type_into(qtbot, ins.node_id, "gpu-five")
    assert "gpu-five" in doc.nodes and "b0.gpu5" not in doc.nodes
    assert any(ln.source == "gpu-five" or ln.target == "gpu-five" for ln in doc.links.values())
    assert doc.selected_nodes == {"gpu-five"}
    ins.node_kind.setCurrentText("switch")
    ins.node_kind.activated.emit(ins.node_kind.currentIndex())
    assert doc.nodes["gpu-five"].kind == "switch"
    ins.node_role.setEditText("nic")
    ins.node_role.lineEdit().editingFinished.emit()
    assert doc.nodes["gpu-five"].role == "nic"
    type_into(qtbot, ins.node_group, "b9")
    assert doc.nodes["gpu-five"].group == "b9"
    assert stack.count() == 4
    while stack.canUndo():
        stack.undo()
    assert doc.nodes["b0.gpu5"].kind == "compute" and doc.nodes["b0.gpu5"].group == "b0"


def test_fabric_page_when_nothing_selected(qtbot, env):
    doc, _stack, ins = env
    doc.set_selection()
    assert ins.stack.currentWidget() is ins.fabric_page
    assert "16 compute nodes" in ins.fabric_counts.text()
    type_into(qtbot, ins.fabric_name, "")
    assert "empty" in ins.message.text() and doc.name == "2x DGX A100"
    type_into(qtbot, ins.fabric_name, "lab cluster")
    assert doc.name == "lab cluster"
    doc.set_selection(["b0.gpu0", "ib0"], [0])
    assert ins.stack.currentWidget() is ins.multi_page
    assert "1 compute node, 1 switch, 1 link selected" in ins.multi_text.text()
    ins.links_only_button.click()
    assert doc.selected_nodes == frozenset() and doc.selected_links == {0}
    assert ins.stack.currentWidget() is ins.link_page


def test_role_and_group_of_several_nodes_in_one_step(qtbot, env):
    doc, stack, ins = env
    nics = [f"b0.nic{i}" for i in range(4)]
    doc.set_selection(nics + ["b0.gpu0"])
    assert ins.stack.currentWidget() is ins.multi_page
    assert ins.multi_role.currentText() == ""  # nic and gpu: mixed
    ins.multi_role.setEditText("pcie")
    ins.multi_role.lineEdit().editingFinished.emit()
    assert {doc.nodes[i].role for i in [*nics, "b0.gpu0"]} == {"pcie"}
    type_into(qtbot, ins.multi_group, "rack7")
    assert {doc.nodes[i].group for i in nics} == {"rack7"}
    assert stack.count() == 2  # one undo step per field, not per node
    stack.undo()
    stack.undo()
    assert doc.nodes["b0.nic0"].role == "nic" and doc.nodes["b0.gpu0"].role == "gpu"
    assert doc.nodes["b0.nic3"].group == "b0"


def click_box(qtbot, box):
    """Click a check box on its indicator (the middle of a wide box is empty space)."""
    from PySide6.QtCore import QPoint

    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))


def test_switch_capabilities_are_check_boxes_and_undoable(qtbot, env):
    doc, stack, ins = env
    doc.set_selection(["b0.nvsw"])
    assert ins.node_reduce.isEnabled() and not ins.node_reduce.isChecked()
    click_box(qtbot, ins.node_reduce)
    click_box(qtbot, ins.node_multicast)
    assert doc.nodes["b0.nvsw"].capabilities == frozenset({"reduce", "multicast"})
    from solver.io import v1

    back = v1.loads(v1.dumps(doc.to_topology()))  # written as 1.1, read back
    assert back.node("b0.nvsw").capabilities == frozenset({"reduce", "multicast"})
    stack.undo()
    assert doc.nodes["b0.nvsw"].capabilities == frozenset({"reduce"})
    stack.undo()
    assert doc.nodes["b0.nvsw"].capabilities == frozenset()
    # a GPU cannot reduce: the boxes are off for it
    doc.set_selection(["b0.gpu0"])
    assert not ins.node_reduce.isEnabled() and not ins.node_multicast.isEnabled()


def test_a_switch_made_compute_drops_its_capabilities(qtbot, env):
    doc, stack, ins = env
    doc.set_selection(["b0.nvsw"])
    click_box(qtbot, ins.node_reduce)
    ins.node_kind.setCurrentText("compute")
    ins.node_kind.activated.emit(ins.node_kind.currentIndex())
    assert doc.nodes["b0.nvsw"].kind == "compute"
    assert doc.nodes["b0.nvsw"].capabilities == frozenset()


def test_return_gives_the_keyboard_back_to_the_canvas(qtbot, tmp_path):
    """Issue 26: after Return in the name field the focus stayed there, so the next tool key
    ("L" for a link) was typed into the name. An accepted value hands focus to the canvas; a
    refused one keeps it in the field to be fixed. Long rows wrap instead of being cut."""
    from PySide6.QtCore import QSettings
    from PySide6.QtTest import QTest

    from fc_gui.main_window import MainWindow

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(dgx_a100(1), settings=settings, state_dir=tmp_path, install_results=False)
    w.show()
    w.activateWindow()
    qtbot.waitActive(w)
    try:
        ins = w.inspector
        w.document.set_selection(["b0.gpu0"])
        edit = ins.node_id
        edit.setFocus()
        qtbot.waitUntil(edit.hasFocus)
        edit.selectAll()
        QTest.keyClicks(edit, "b0.gpu0")  # the id it already has: accepted
        QTest.keyClick(edit, Qt.Key.Key_Return)
        qtbot.waitUntil(w.canvas.hasFocus, timeout=2000)
        edit.setFocus()
        qtbot.waitUntil(edit.hasFocus)
        edit.selectAll()
        QTest.keyClicks(edit, "b0.gpu1")  # taken: refused, the focus stays
        QTest.keyClick(edit, Qt.Key.Key_Return)
        qtbot.wait(50)
        assert "already used" in ins.message.text() and edit.hasFocus()
        assert all(lbl.wordWrap() for lbl in (ins.node_links, ins.link_ends, ins.fabric_counts))
    finally:
        w.undo_stack.setClean()
        w.close()
