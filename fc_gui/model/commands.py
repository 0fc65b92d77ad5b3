"""Undoable edits of a :class:`~fc_gui.model.document.TopologyDocument` (Qt's QUndoCommand).

Every user edit is one command pushed on the window's ``QUndoStack``. Commands change the
document only (never graphics items); views redraw from the document's signals. Commands that
create links reserve their uids once, so redo after undo re-creates exactly the same items and
later commands on the stack still refer to the right links.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from PySide6.QtGui import QUndoCommand

from fc_gui.model.document import Position, TopologyDocument
from solver.model.topology import Link, Node, Topology

_MOVE_ID = 1001


class AddNodeCommand(QUndoCommand):
    """Add one node."""

    def __init__(self, doc: TopologyDocument, node: Node) -> None:
        super().__init__(f"Add {node.kind} {node.id}")
        self.doc, self.node = doc, node

    def redo(self) -> None:
        self.doc.insert_items([self.node])
        self.doc.set_selection([self.node.id])

    def undo(self) -> None:
        self.doc.remove_items([self.node.id])


class AddLinkCommand(QUndoCommand):
    """Add one link between existing nodes."""

    def __init__(self, doc: TopologyDocument, link: Link) -> None:
        super().__init__(f"Add link {link.label}")
        self.doc, self.link = doc, link
        self.uid = doc.new_link_uid()

    def redo(self) -> None:
        self.doc.insert_items([], {self.uid: self.link})
        self.doc.set_selection((), [self.uid])

    def undo(self) -> None:
        self.doc.remove_items(link_uids=[self.uid])


class DeleteCommand(QUndoCommand):
    """Delete nodes (with their links) and links; undo puts everything back in place."""

    def __init__(
        self, doc: TopologyDocument, node_ids: Iterable[str] = (), link_uids: Iterable[int] = ()
    ) -> None:
        self.doc = doc
        self.node_ids = [n for n in node_ids if doc.has_node(n)]
        self.link_uids = [u for u in link_uids if u in doc.links]
        super().__init__(f"Delete {_describe(doc, self.node_ids, self.link_uids)}")
        self._removed = None
        self._order: list[str] = []

    def redo(self) -> None:
        self._order = list(self.doc.nodes)
        self._removed = self.doc.remove_items(self.node_ids, self.link_uids)

    def undo(self) -> None:
        nodes, links, dis_n, dis_l = self._removed
        self.doc.insert_items(
            nodes, links, order=self._order, disabled_nodes=dis_n, disabled_links=dis_l
        )
        self.doc.set_selection([n.id for n in nodes], links)


class MoveNodesCommand(QUndoCommand):
    """Move nodes. Commands of one drag (same ``drag_id``) merge into one undo step."""

    def __init__(
        self,
        doc: TopologyDocument,
        old: Mapping[str, Position],
        new: Mapping[str, Position],
        drag_id: int | None = None,
    ) -> None:
        super().__init__(f"Move {len(new)} node(s)")
        self.doc, self.old, self.new, self.drag_id = doc, dict(old), dict(new), drag_id

    def id(self) -> int:
        return _MOVE_ID if self.drag_id is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, MoveNodesCommand) or other.drag_id != self.drag_id:
            return False
        for k, v in other.old.items():
            self.old.setdefault(k, v)
        self.new.update(other.new)
        self.setText(f"Move {len(self.new)} node(s)")
        return True

    def redo(self) -> None:
        self.doc.move_nodes(self.new)

    def undo(self) -> None:
        self.doc.move_nodes(self.old)


class SetNodePropsCommand(QUndoCommand):
    """Change one node's id/kind/role/group (a new id is carried into its links)."""

    def __init__(self, doc: TopologyDocument, old_id: str, node: Node) -> None:
        super().__init__(f"Edit node {old_id}")
        self.doc, self.old_node, self.node = doc, doc.node(old_id), node

    def redo(self) -> None:
        self.doc.replace_node(self.old_node.id, self.node)

    def undo(self) -> None:
        self.doc.replace_node(self.node.id, self.old_node)


class SetLinkPropsCommand(QUndoCommand):
    """Change bandwidth/latency/direction of one or several links at once."""

    def __init__(self, doc: TopologyDocument, links: Mapping[int, Link]) -> None:
        super().__init__(f"Edit {len(links)} link(s)")
        self.doc = doc
        self.new = dict(links)
        self.old = {uid: doc.link(uid) for uid in links}

    def redo(self) -> None:
        self.doc.replace_links(self.new)

    def undo(self) -> None:
        self.doc.replace_links(self.old)


class PasteCommand(QUndoCommand):
    """Insert copied nodes and the links among them (already renamed and offset)."""

    def __init__(self, doc: TopologyDocument, nodes: Iterable[Node], links: Iterable[Link]) -> None:
        self.nodes = list(nodes)
        self.links = {doc.new_link_uid(): ln for ln in links}
        super().__init__(f"Paste {len(self.nodes)} node(s), {len(self.links)} link(s)")
        self.doc = doc

    def redo(self) -> None:
        self.doc.insert_items(self.nodes, self.links)
        self.doc.set_selection([n.id for n in self.nodes], self.links)

    def undo(self) -> None:
        self.doc.remove_items([n.id for n in self.nodes], self.links)


class ApplyLayoutCommand(QUndoCommand):
    """Move many nodes at once to the positions an auto-layout computed."""

    def __init__(self, doc: TopologyDocument, positions: Mapping[str, Position], name: str) -> None:
        super().__init__(f"{name} layout")
        self.doc = doc
        self.new = dict(positions)
        self.old = {k: doc.position(k) for k in positions}

    def redo(self) -> None:
        self.doc.move_nodes(self.new)

    def undo(self) -> None:
        self.doc.move_nodes(self.old)


class SetDisabledCommand(QUndoCommand):
    """Take nodes/links out of service (what-if) or back in; only real changes are undone."""

    def __init__(
        self,
        doc: TopologyDocument,
        node_ids: Iterable[str] = (),
        link_uids: Iterable[int] = (),
        disabled: bool = True,
    ) -> None:
        self.doc, self.disabled = doc, disabled
        self.nodes = [n for n in node_ids if (n in doc.disabled_nodes) != disabled]
        self.links = [u for u in link_uids if (u in doc.disabled_links) != disabled]
        verb = "Disable" if disabled else "Enable"
        super().__init__(f"{verb} {_describe(doc, self.nodes, self.links)}")

    def redo(self) -> None:
        self.doc.set_disabled(self.nodes, self.links, self.disabled)

    def undo(self) -> None:
        self.doc.set_disabled(self.nodes, self.links, not self.disabled)


class ReplaceTopologyCommand(QUndoCommand):
    """Replace the whole fabric (new from template, import); undo brings the old one back."""

    def __init__(self, doc: TopologyDocument, topology: Topology, text: str = "") -> None:
        super().__init__(text or f"Replace fabric with {topology.name}")
        self.doc, self.topology = doc, topology
        self._before = None
        self._after = None

    def redo(self) -> None:
        if self._before is None:
            self._before = self.doc.snapshot()
        if self._after is None:
            self.doc.load_topology(self.topology)
            self._after = self.doc.snapshot()
        else:
            self.doc.restore(self._after)

    def undo(self) -> None:
        self.doc.restore(self._before)


class SetNameCommand(QUndoCommand):
    """Rename the fabric."""

    def __init__(self, doc: TopologyDocument, name: str) -> None:
        super().__init__(f"Rename fabric to {name}")
        self.doc, self.old, self.new = doc, doc.name, name

    def redo(self) -> None:
        self.doc.set_name(self.new)

    def undo(self) -> None:
        self.doc.set_name(self.old)


def _describe(doc: TopologyDocument, node_ids, link_uids) -> str:
    """'node b0.gpu1', 'link a<->b', or '3 nodes, 2 links' for undo menu texts."""
    node_ids, link_uids = list(node_ids), list(link_uids)
    parts = []
    if len(node_ids) == 1:
        parts.append(f"node {node_ids[0]}")
    elif node_ids:
        parts.append(f"{len(node_ids)} nodes")
    if len(link_uids) == 1 and link_uids[0] in doc.links:
        parts.append(f"link {doc.links[link_uids[0]].label}")
    elif link_uids:
        parts.append(f"{len(link_uids)} links")
    return ", ".join(parts) or "nothing"


def renamed_copies(
    doc: TopologyDocument, nodes: Iterable[Node], links: Iterable[Link], offset: Position
) -> tuple[list[Node], list[Link]]:
    """Copies of ``nodes`` with fresh ids (``gpu0`` -> ``gpu0_copy``...) shifted by ``offset``,
    and the ``links`` among them re-pointed at the copies (links leaving the set are dropped)."""
    nodes = list(nodes)
    mapping: dict[str, str] = {}
    taken = set(doc.nodes)
    for n in nodes:
        stem = f"{n.id}_copy"
        new_id, i = stem, 1
        while new_id in taken:
            i += 1
            new_id = f"{stem}{i}"
        taken.add(new_id)
        mapping[n.id] = new_id
    dx, dy = offset
    new_nodes = [
        replace(n, id=mapping[n.id], x=(n.x or 0.0) + dx, y=(n.y or 0.0) + dy) for n in nodes
    ]
    new_links = [
        replace(ln, source=mapping[ln.source], target=mapping[ln.target])
        for ln in links
        if ln.source in mapping and ln.target in mapping
    ]
    return new_nodes, new_links
