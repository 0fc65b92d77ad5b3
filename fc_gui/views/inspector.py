"""The inspector panel: edit the selected node, the selected link(s), or the fabric itself.

Edits are validated in place: a bad value is refused with a one-line message under the form and
the field turns red; nothing reaches the document. Accepted edits are undoable commands. With
several links selected, a field shows the common value (or is blank with "mixed") and an edit
applies to all of them in one command.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from fc_gui.model.commands import SetLinkPropsCommand, SetNameCommand, SetNodePropsCommand
from fc_gui.model.document import TopologyDocument
from fc_gui.model.result_text import fabric_counts, plural
from fc_gui.views import style
from solver.model.errors import ForestCollError
from solver.model.topology import COMPUTE, MULTICAST, NODE_KINDS, REDUCE, SWITCH, to_fraction

_BAD = "QLineEdit { border: 2px solid #d32f2f; background: #fff0f0; }"


def _fmt(value) -> str:
    """A Fraction as the short text a user would type (exact when possible)."""
    if value is None:
        return ""
    f = float(value)
    if value.denominator == 1:
        return str(value.numerator)
    if to_fraction(repr(f), "x") == value:
        return repr(f)
    return f"{value.numerator}/{value.denominator}"


class Inspector(QWidget):
    """Property editor for the document's selection; ``edit_done`` fires after Return in a
    field whose value was accepted (the window gives the keyboard back to the canvas, so the
    next tool key is not typed into the field)."""

    edit_done = Signal()

    def __init__(self, document: TopologyDocument, undo_stack: QUndoStack, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Inspector")
        self.doc, self.undo_stack = document, undo_stack
        self._refreshing = False
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold;")
        self.stack = QStackedWidget()
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #c62828;")
        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addWidget(self.stack)
        lay.addWidget(self.message)
        lay.addStretch(1)

        self._build_fabric_page()
        self._build_node_page()
        self._build_link_page()
        self._build_multi_page()

        for page in (self.fabric_page, self.node_page, self.link_page, self.multi_page):
            self.stack.addWidget(page)
            for edit in page.findChildren(QLineEdit):
                edit.returnPressed.connect(self._after_return)
            for label in page.findChildren(QLabel):  # long texts wrap in a narrow dock
                label.setWordWrap(True)
        document.selection_changed.connect(self.refresh)
        document.changed.connect(self.refresh)
        self.refresh()

    def _build_fabric_page(self) -> None:
        """The fabric's name and contents."""
        self.fabric_page = QWidget()
        f = QFormLayout(self.fabric_page)
        self.fabric_name = QLineEdit()
        self.fabric_counts = QLabel()
        f.addRow("Name", self.fabric_name)
        f.addRow("Contents", self.fabric_counts)
        self.fabric_name.editingFinished.connect(self._apply_name)

    def _build_node_page(self) -> None:
        """One node: id, kind, role, group; position and links shown."""
        self.node_page = QWidget()
        f = QFormLayout(self.node_page)
        self.node_id = QLineEdit()
        self.node_kind = QComboBox()
        self.node_kind.addItems(list(NODE_KINDS))
        self.node_role = QComboBox()
        self.node_role.setEditable(True)
        self.node_group = QLineEdit()
        self.node_group.setPlaceholderText("(none)")
        self.node_pos = QLabel()
        self.node_links = QLabel()
        # what a switch does beyond forwarding (NVLink SHARP / SHARP): changes the bounds shown
        self.node_reduce = QCheckBox("reduces")
        self.node_multicast = QCheckBox("multicasts")
        for box, what in (
            (self.node_reduce, "adds the data it receives (in-switch reduction)"),
            (self.node_multicast, "sends what it receives once out on several links"),
        ):
            box.setToolTip(
                f"The switch {what}, as NVLink SHARP (NVLS) or InfiniBand SHARP do. "
                "Changes the allreduce bounds, not allgather's; ForestColl's own "
                "schedules still only forward."
            )
            box.clicked.connect(lambda *_: self._apply_capabilities())
        caps = QWidget()
        caps_row = QHBoxLayout(caps)
        caps_row.setContentsMargins(0, 0, 0, 0)
        caps_row.addWidget(self.node_reduce)
        caps_row.addWidget(self.node_multicast)
        caps_row.addStretch(1)
        f.addRow("Id", self.node_id)
        f.addRow("Kind", self.node_kind)
        f.addRow("Role", self.node_role)
        f.addRow("Group", self.node_group)
        f.addRow("Switch", caps)
        f.addRow("Position", self.node_pos)
        f.addRow("Links", self.node_links)
        self.node_id.editingFinished.connect(self._apply_node_id)
        self.node_kind.activated.connect(
            lambda *_: self._apply_node(kind=self.node_kind.currentText())
        )
        self.node_role.lineEdit().editingFinished.connect(
            lambda: self._apply_node(role=self.node_role.currentText().strip())
        )
        self.node_role.activated.connect(
            lambda *_: self._apply_node(role=self.node_role.currentText().strip())
        )
        self.node_group.editingFinished.connect(
            lambda: self._apply_node(group=self.node_group.text().strip() or None)
        )

    def _build_link_page(self) -> None:
        """One or several links: bandwidth, latency, direction."""
        self.link_page = QWidget()
        f = QFormLayout(self.link_page)
        self.link_ends = QLabel()
        self.link_bw = QLineEdit()
        self.link_bw.setToolTip("GB/s per direction, > 0; decimals and ratios (1/3) stay exact")
        self.link_lat = QLineEdit()
        self.link_lat.setToolTip("microseconds, >= 0; empty = unknown")
        self.link_directed = QCheckBox("one-way (source -> target only)")
        f.addRow("Link", self.link_ends)
        f.addRow("Bandwidth (GB/s)", self.link_bw)
        f.addRow("Latency (µs)", self.link_lat)
        f.addRow("Direction", self.link_directed)
        self.link_bw.editingFinished.connect(self._apply_bandwidth)
        self.link_lat.editingFinished.connect(self._apply_latency)
        self.link_directed.clicked.connect(self._apply_directed)

    def _build_multi_page(self) -> None:
        """Several nodes: role and group of all at once."""
        self.multi_page = QWidget()
        v = QVBoxLayout(self.multi_page)
        self.multi_text = QLabel()
        self.multi_text.setWordWrap(True)
        self.links_only_button = QPushButton("Edit these links together")
        self.links_only_button.clicked.connect(
            lambda: self.doc.set_selection((), self.doc.selected_links)
        )
        form = QFormLayout()
        self.multi_role = QComboBox()
        self.multi_role.setEditable(True)
        self.multi_role.addItems(sorted(set(style.COMPUTE_ROLES) | set(style.SWITCH_ROLES)))
        self.multi_role.setToolTip("Set the role of every selected node (one undo step)")
        self.multi_group = QLineEdit()
        self.multi_group.setToolTip("Set the group of every selected node; empty = no group")
        form.addRow("Role of all", self.multi_role)
        form.addRow("Group of all", self.multi_group)
        self.multi_role.lineEdit().editingFinished.connect(
            lambda: self._apply_many(role=self.multi_role.currentText().strip())
        )
        self.multi_role.activated.connect(
            lambda *_: self._apply_many(role=self.multi_role.currentText().strip())
        )
        self.multi_group.editingFinished.connect(
            lambda: self._apply_many(group=self.multi_group.text().strip() or None)
        )
        v.addWidget(self.multi_text)
        v.addLayout(form)
        v.addWidget(self.links_only_button)
        v.addStretch(1)

    # ------------------------------------------------------------------ display
    def refresh(self) -> None:
        self._refreshing = True
        try:
            self._refresh()
        finally:
            self._refreshing = False

    def _refresh(self) -> None:
        doc = self.doc
        chosen_nodes, chosen_links = doc.selected_nodes, doc.selected_links  # once: big fabrics
        nodes = [n for n in doc.nodes if n in chosen_nodes] if chosen_nodes else []
        links = [u for u in doc.links if u in chosen_links] if chosen_links else []
        if len(nodes) == 1 and not links:
            self.stack.setCurrentWidget(self.node_page)
            n = doc.nodes[nodes[0]]
            self.title.setText(f"Node {n.id}")
            self.node_id.setText(n.id)
            self.node_kind.setCurrentText(n.kind)
            roles = style.COMPUTE_ROLES if n.kind == COMPUTE else style.SWITCH_ROLES
            self.node_role.clear()
            self.node_role.addItems(list(roles))
            self.node_role.setCurrentText(n.role)
            self.node_group.setText(n.group or "")
            self.node_reduce.setChecked(n.reduces)
            self.node_multicast.setChecked(n.multicasts)
            for box in (self.node_reduce, self.node_multicast):
                box.setEnabled(n.kind == SWITCH)
            self.node_pos.setText(f"{n.x or 0:g}, {n.y or 0:g}")
            deg = len(doc.links_of([n.id]))
            off = " — disabled (what-if)" if n.id in doc.disabled_nodes else ""
            self.node_links.setText(f"{deg}{off}")
            for w in (self.node_id, self.node_group):
                w.setStyleSheet("")
        elif links and not nodes:
            self.stack.setCurrentWidget(self.link_page)
            objs = [doc.links[u] for u in links]
            if len(objs) == 1:
                ln = objs[0]
                off = " (disabled)" if doc.is_link_disabled(links[0]) else ""
                self.title.setText(f"Link {ln.label}{off}")
                self.link_ends.setText(f"{ln.source} — {ln.target}")
            else:
                self.title.setText(f"{len(objs)} links")
                self.link_ends.setText(f"{len(objs)} links selected; edits apply to all")
            self._show_common(self.link_bw, {ln.bandwidth for ln in objs})
            self._show_common(self.link_lat, {ln.latency for ln in objs})
            directed = {ln.directed for ln in objs}
            self.link_directed.setTristate(len(directed) > 1)
            if len(directed) > 1:
                self.link_directed.setCheckState(Qt.CheckState.PartiallyChecked)
            else:
                self.link_directed.setChecked(directed.pop())
            for w in (self.link_bw, self.link_lat):
                w.setStyleSheet("")
        elif nodes or links:
            self.stack.setCurrentWidget(self.multi_page)
            self.title.setText("Selection")
            kinds = [doc.nodes[i].kind for i in nodes]
            self.multi_text.setText(
                f"{plural(kinds.count(COMPUTE), 'compute node')}, "
                f"{plural(kinds.count(SWITCH), 'switch')}, {plural(len(links), 'link')} selected."
            )
            self.links_only_button.setVisible(bool(links))
            objs = [doc.nodes[i] for i in nodes]
            roles = {n.role for n in objs}
            groups = {n.group for n in objs}
            self.multi_role.setEditText(roles.pop() if len(roles) == 1 else "")
            self.multi_role.lineEdit().setPlaceholderText("mixed")
            self.multi_group.setText((groups.pop() or "") if len(groups) == 1 else "")
            self.multi_group.setPlaceholderText("mixed" if len(groups) > 1 else "(none)")
            for w in (self.multi_role, self.multi_group):
                w.setEnabled(bool(nodes))
            self.links_only_button.setText(
                "Edit this link" if len(links) == 1 else f"Edit the {len(links)} links together"
            )
        else:
            self.stack.setCurrentWidget(self.fabric_page)
            self.title.setText("Fabric")
            self.fabric_name.setText(doc.name)
            c, s, m = doc.counts()
            self.fabric_counts.setText(fabric_counts(c, s, m))

    @staticmethod
    def _show_common(edit: QLineEdit, values: set) -> None:
        if len(values) == 1:
            edit.setText(_fmt(next(iter(values))))
            edit.setPlaceholderText("(none)")
        else:
            edit.setText("")
            edit.setPlaceholderText("mixed")

    def _after_return(self) -> None:
        # after the field's own editingFinished handler: leave only an accepted value
        QTimer.singleShot(0, lambda: None if self.message.text() else self.edit_done.emit())

    # ------------------------------------------------------------------ validation
    def _refuse(self, widget: QWidget | None, message: str) -> None:
        self.message.setText(message)
        if isinstance(widget, QLineEdit):
            widget.setStyleSheet(_BAD)

    def _accept(self, widget: QWidget | None = None) -> None:
        self.message.setText("")
        if isinstance(widget, QLineEdit):
            widget.setStyleSheet("")

    # ------------------------------------------------------------------ edits
    def _apply_name(self) -> None:
        if self._refreshing:
            return
        name = self.fabric_name.text().strip()
        if not name:
            self._refuse(self.fabric_name, "The fabric name cannot be empty.")
            return
        self._accept(self.fabric_name)
        if name != self.doc.name:
            self.undo_stack.push(SetNameCommand(self.doc, name))

    def _selected_node(self):
        sel = [n for n in self.doc.nodes if n in self.doc.selected_nodes]
        return self.doc.nodes[sel[0]] if len(sel) == 1 else None

    def _apply_node_id(self) -> None:
        if self._refreshing:
            return
        node = self._selected_node()
        if node is None:
            return
        new_id = self.node_id.text().strip()
        if new_id == node.id:
            self._accept(self.node_id)
            return
        if not new_id:
            self._refuse(self.node_id, "A node id cannot be empty.")
            return
        if self.doc.has_node(new_id):
            self._refuse(self.node_id, f"Node id {new_id!r} is already used.")
            return
        self._accept(self.node_id)
        self.undo_stack.push(SetNodePropsCommand(self.doc, node.id, replace(node, id=new_id)))

    def _apply_node(self, **changes) -> None:
        if self._refreshing:
            return
        node = self._selected_node()
        if node is None:
            return
        if "kind" in changes and changes["kind"] not in NODE_KINDS:
            self._refuse(None, f"Kind must be one of {', '.join(NODE_KINDS)}.")
            return
        if changes.get("kind") == COMPUTE:
            changes["capabilities"] = frozenset()  # only a switch reduces or multicasts
        new = replace(node, **changes)
        if new == node and new.group == node.group:
            return
        self._accept()
        self.undo_stack.push(SetNodePropsCommand(self.doc, node.id, new))

    def _apply_capabilities(self) -> None:
        """The two check boxes -> the selected switch's ``capabilities`` (one undo step)."""
        caps = {REDUCE} if self.node_reduce.isChecked() else set()
        if self.node_multicast.isChecked():
            caps.add(MULTICAST)
        self._apply_node(capabilities=frozenset(caps))

    def _apply_many(self, **changes) -> None:
        """Set role/group on every selected node in one undo step (a blank "mixed" role is
        left alone)."""
        if self._refreshing:
            return
        ids = [n for n in self.doc.nodes if n in self.doc.selected_nodes]
        mixed_roles = len({self.doc.nodes[i].role for i in ids}) > 1
        if "role" in changes and not changes["role"] and mixed_roles:
            return
        edits = [
            (i, replace(self.doc.nodes[i], **changes))
            for i in ids
            if any(getattr(self.doc.nodes[i], k) != v for k, v in changes.items())
        ]
        if not edits:
            return
        self._accept()
        self.undo_stack.beginMacro(f"Edit {len(edits)} nodes")
        try:
            for node_id, node in edits:
                self.undo_stack.push(SetNodePropsCommand(self.doc, node_id, node))
        finally:
            self.undo_stack.endMacro()

    def _selected_links(self) -> list[int]:
        return [u for u in self.doc.links if u in self.doc.selected_links]

    def _apply_links(self, make) -> None:
        uids = self._selected_links()
        new = {u: make(self.doc.links[u]) for u in uids}
        new = {
            u: ln
            for u, ln in new.items()
            if ln != self.doc.links[u]
            or (ln.latency, ln.directed) != (self.doc.links[u].latency, self.doc.links[u].directed)
        }
        if new:
            self.undo_stack.push(SetLinkPropsCommand(self.doc, new))

    def _apply_bandwidth(self) -> None:
        if self._refreshing:
            return
        text = self.link_bw.text().strip()
        if not text:  # "mixed" left alone
            if len({self.doc.links[u].bandwidth for u in self._selected_links()}) == 1:
                self._refuse(self.link_bw, "Bandwidth is required (GB/s, > 0).")
            return
        try:
            bw = to_fraction(text, "bandwidth")
        except ForestCollError as exc:
            self._refuse(self.link_bw, f"{exc}.")
            return
        if bw <= 0:
            self._refuse(self.link_bw, f"Bandwidth must be > 0 GB/s, got {text}.")
            return
        if bw > 10**9:
            self._refuse(self.link_bw, f"Bandwidth {text} GB/s is not plausible (max 1e9).")
            return
        self._accept(self.link_bw)
        self._apply_links(lambda ln: replace(ln, bandwidth=bw))

    def _apply_latency(self) -> None:
        if self._refreshing:
            return
        text = self.link_lat.text().strip()
        if not text:
            lat = None
            if len({self.doc.links[u].latency for u in self._selected_links()}) > 1:
                return  # "mixed" left alone
        else:
            try:
                lat = to_fraction(text, "latency")
            except ForestCollError as exc:
                self._refuse(self.link_lat, f"{exc}.")
                return
            if lat < 0:
                self._refuse(self.link_lat, f"Latency must be >= 0 µs, got {text}.")
                return
        self._accept(self.link_lat)
        self._apply_links(lambda ln: replace(ln, latency=lat))

    def _apply_directed(self) -> None:
        if self._refreshing:
            return
        on = self.link_directed.checkState() != Qt.CheckState.Unchecked
        self.link_directed.setTristate(False)
        self._accept()
        self._apply_links(lambda ln: replace(ln, directed=on))
