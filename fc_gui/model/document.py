"""The editable fabric model of the designer: nodes, links, positions and what-if switches.

:class:`TopologyDocument` is the single source of truth the canvas, the inspector and the solve
side read. It holds :class:`solver.model.topology.Node` / :class:`~solver.model.topology.Link` values (exact
``Fraction`` bandwidths) and never touches a widget. Every user edit goes through an undoable
command (``fc_gui.model.commands``) that calls the primitive mutators below; views redraw from signals.

Template metadata (``extra["template"]``, ``extra["template_params"]``: what
``solver.io.templates`` built the fabric as, which also picks its library) holds only while the
fabric is that template: once nodes, links, roles, groups or bandwidths differ from the fabric
as it was opened, :meth:`TopologyDocument.to_topology` leaves it out (so a fabric drawn after
Select all + Delete is not simulated as a DGX A100); undoing back to it brings it back. Moves
and what-if switches keep it.

Links are addressed by a document-wide integer *uid* (stable across undo/redo, unlike list
positions); :meth:`TopologyDocument.to_topology` writes them in uid order, so a loaded file keeps
its link order on a round trip.

Signals
-------
``changed``            any change at all (drives autosave and the modified marker helpers).
``topology_changed``   a change the solver can see (nodes, links, properties, disabled items);
                       NOT emitted for pure moves. Solve results go stale on this one.
``structure_changed``  nodes or links added/removed/edited: views rebuild.
``positions_changed``  ``list[str]`` of moved node ids: views update geometry only.
``disabled_changed``   the what-if set of disabled nodes/links changed.
``selection_changed``  the selection (node ids, link uids) changed; selection is not undoable.
``name_changed``       the fabric name changed.
``replaced``           the whole fabric was replaced (open, import, new from template, recovery, or
                       the undo/redo of one): results of the old fabric no longer apply at all.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from fractions import Fraction

from PySide6.QtCore import QObject, Signal

from solver.model.errors import TopologyError
from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology

Position = tuple[float, float]

#: ``Topology.extra`` keys that describe the template the fabric was built as.
TEMPLATE_KEYS = ("template", "template_params")


class _TemplateFabric:
    """What the solver sees of the fabric a template built (positions aside), to tell whether
    the document still is it: the same nodes (id, kind, role, group) and the same multiset of
    links. Links are compared by identity first (an undo puts the very same objects back),
    by value only when some differ."""

    def __init__(self, nodes: Iterable[Node], links: Iterable[Link]) -> None:
        self._nodes = tuple(nodes)  # the keys are made on the first comparison (big fabrics)
        self.links = tuple(links)  # kept alive: their ids stay theirs
        self._keys: frozenset | None = None

    @property
    def nodes(self) -> frozenset:
        if self._keys is None:
            self._keys = frozenset(_node_key(n) for n in self._nodes)
        return self._keys

    def matches(self, nodes: Iterable[Node], links: Iterable[Link]) -> bool:
        links = list(links)
        if len(links) != len(self.links) or frozenset(map(_node_key, nodes)) != self.nodes:
            return False
        if all(map(operator.is_, links, self.links)):  # the very links, in order
            return True
        ids = set(map(id, links))
        if len(ids) == len(links) and ids == set(map(id, self.links)):
            return True
        return Counter(map(_link_key, links)) == Counter(map(_link_key, self.links))


def _node_key(n: Node) -> tuple:
    return (n.id, n.kind, n.role, n.group)


def _link_key(ln: Link) -> tuple:
    return (ln.source, ln.target, ln.bandwidth, ln.latency, ln.directed)


class TopologyDocument(QObject):
    """The editable fabric (see module docstring)."""

    changed = Signal()
    topology_changed = Signal()
    structure_changed = Signal()
    positions_changed = Signal(list)
    disabled_changed = Signal()
    selection_changed = Signal()
    name_changed = Signal(str)
    replaced = Signal()

    def __init__(self, topology: Topology | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._name = "untitled"
        self._extra: Mapping = {}
        self._nodes: dict[str, Node] = {}
        self._links: dict[int, Link] = {}
        self._next_uid = 0
        self._disabled_nodes: set[str] = set()
        self._disabled_links: set[int] = set()
        self._selected_nodes: set[str] = set()
        self._selected_links: set[int] = set()
        self._template: _TemplateFabric | None = None  # the template's fabric, when from one
        self._revision = 0  # counts structural changes (caches what depends on them)
        self._template_check: tuple[int, bool] = (-1, False)
        self._counted: tuple[tuple, int] = ((), 0)  # (revision key, compute nodes)
        if topology is not None:
            self.load_topology(topology)

    # ------------------------------------------------------------------ reading
    @property
    def name(self) -> str:
        return self._name

    @property
    def nodes(self) -> Mapping[str, Node]:
        """Node id -> Node, in document order (read-only view; mutate through commands)."""
        return self._nodes

    @property
    def links(self) -> Mapping[int, Link]:
        """Link uid -> Link, in document order."""
        return self._links

    def node(self, node_id: str) -> Node:
        try:
            return self._nodes[node_id]
        except KeyError:
            raise TopologyError(f"unknown node {node_id!r}") from None

    def link(self, uid: int) -> Link:
        try:
            return self._links[uid]
        except KeyError:
            raise TopologyError(f"unknown link #{uid}") from None

    def has_node(self, node_id: str) -> bool:
        return node_id in self._nodes

    def links_of(self, node_ids: Iterable[str]) -> list[int]:
        """Uids of links touching any of ``node_ids``."""
        ids = set(node_ids)
        return [uid for uid, ln in self._links.items() if ln.source in ids or ln.target in ids]

    def position(self, node_id: str) -> Position:
        n = self.node(node_id)
        return (n.x or 0.0, n.y or 0.0)

    def counts(self) -> tuple[int, int, int]:
        """(compute nodes, switches, links) of the whole document."""
        key = (self._revision, id(self._nodes), len(self._nodes))
        if self._counted[0] != key:  # cached: the window asks on every change
            compute = sum(1 for n in self._nodes.values() if n.kind == COMPUTE)
            self._counted = (key, compute)
        compute = self._counted[1]
        return compute, len(self._nodes) - compute, len(self._links)

    def unique_id(self, stem: str) -> str:
        """The first node id ``stem0``, ``stem1``, ... not used yet (numbered from 0 like the
        templates' ``gpu0``, so drawn nodes read gpu0, gpu1, gpu2...)."""
        i = 0
        while f"{stem}{i}" in self._nodes:
            i += 1
        return f"{stem}{i}"

    @property
    def disabled_nodes(self) -> frozenset[str]:
        return frozenset(self._disabled_nodes)

    @property
    def disabled_links(self) -> frozenset[int]:
        return frozenset(self._disabled_links)

    def is_link_disabled(self, uid: int) -> bool:
        """A link is out of service when it, or one of its end nodes, is disabled."""
        ln = self._links[uid]
        return (
            uid in self._disabled_links
            or ln.source in self._disabled_nodes
            or ln.target in self._disabled_nodes
        )

    # ------------------------------------------------------------------ conversion
    def to_topology(self, *, include_disabled: bool = False) -> Topology:
        """The fabric as an immutable :class:`solver.Topology` (not validated).

        Disabled nodes (and their links) and disabled links are left out unless
        ``include_disabled`` (saving a file keeps everything; solving does not).
        """
        if include_disabled:
            nodes = tuple(self._nodes.values())
            links = tuple(self._links.values())
        else:
            nodes = tuple(n for n in self._nodes.values() if n.id not in self._disabled_nodes)
            links = tuple(ln for uid, ln in self._links.items() if not self.is_link_disabled(uid))
        extra = dict(self._extra)
        if not self.is_template():
            for key in TEMPLATE_KEYS:
                extra.pop(key, None)
        return Topology(name=self._name, nodes=nodes, links=links, extra=extra)

    def is_template(self) -> bool:
        """True while the fabric is the template it was opened as (see module docstring)."""
        if self._template is None:
            return False
        revision, same = self._template_check
        if revision != self._revision:
            same = self._template.matches(self._nodes.values(), self._links.values())
            self._template_check = (self._revision, same)
        return same

    def load_topology(self, topology: Topology) -> None:
        """Replace everything with ``topology`` (used by ReplaceTopology and on open)."""
        self._name = topology.name
        self._extra = dict(topology.extra)
        self._nodes = {n.id: n for n in topology.nodes}
        start, count = self._next_uid, len(topology.links)
        self._links = dict(zip(range(start, start + count), topology.links))
        self._next_uid = start + count
        self._disabled_nodes.clear()
        self._disabled_links.clear()
        self._template = (
            _TemplateFabric(topology.nodes, topology.links)
            if any(k in self._extra for k in TEMPLATE_KEYS)
            else None
        )
        self._replaced()

    def snapshot(self) -> dict:
        """Everything needed to restore the document exactly (uids included)."""
        return {
            "name": self._name,
            "extra": dict(self._extra),
            "nodes": dict(self._nodes),
            "links": dict(self._links),
            "disabled_nodes": set(self._disabled_nodes),
            "disabled_links": set(self._disabled_links),
            "template": self._template,
        }

    def restore(self, snap: dict) -> None:
        """Undo a :meth:`load_topology` with a :meth:`snapshot` taken before it."""
        self._name = snap["name"]
        self._extra = dict(snap["extra"])
        self._nodes = dict(snap["nodes"])
        self._links = dict(snap["links"])
        if self._links:
            self._next_uid = max(self._next_uid, max(self._links) + 1)
        self._disabled_nodes = set(snap["disabled_nodes"])
        self._disabled_links = set(snap["disabled_links"])
        self._template = snap["template"]
        self._replaced()

    def _replaced(self) -> None:
        """After the whole content changed: clear the selection and tell every view."""
        self._revision += 1  # before anyone reads a cache keyed by it
        self._selected_nodes.clear()
        self._selected_links.clear()
        self.replaced.emit()
        self.name_changed.emit(self._name)
        self._structure()
        self.disabled_changed.emit()
        self.selection_changed.emit()

    # ------------------------------------------------------------------ primitive mutators
    # (called by fc_gui.model.commands; each emits the signals views need)
    def _structure(self) -> None:
        self._revision += 1
        self.structure_changed.emit()
        self.topology_changed.emit()
        self.changed.emit()

    def set_name(self, name: str) -> None:
        self._name = name
        self.name_changed.emit(name)
        self.topology_changed.emit()
        self.changed.emit()

    def insert_items(
        self,
        nodes: Iterable[Node],
        links: Mapping[int, Link] | None = None,
        *,
        order: Iterable[str] | None = None,
        disabled_nodes: Iterable[str] = (),
        disabled_links: Iterable[int] = (),
    ) -> list[int]:
        """Add nodes, then links (keyed by uid, kept on undo/redo); returns the link uids.

        ``order`` (a node id order saved before a removal) puts re-inserted nodes back where they
        were, so the compute-node rank order survives undo. Raises TopologyError for a duplicate
        node id or a link to an unknown node.
        """
        nodes = list(nodes)
        new_ids = set()
        for n in nodes:
            if n.id in self._nodes or n.id in new_ids:
                raise TopologyError(f"duplicate node id {n.id!r}")
            if not n.id:
                raise TopologyError("node id must be a non-empty string")
            new_ids.add(n.id)
        links = dict(links or {})
        for ln in links.values():
            for end in (ln.source, ln.target):
                if end not in self._nodes and end not in new_ids:
                    raise TopologyError(f"link {ln.label}: unknown node {end!r}")
        for n in nodes:
            self._nodes[n.id] = n
        uids = []
        for uid, ln in sorted(links.items()):
            self._links[uid] = ln
            self._next_uid = max(self._next_uid, uid + 1)
            uids.append(uid)
        if any(u < max(self._links, default=-1) for u in uids):
            self._links = dict(sorted(self._links.items()))
        if order is not None:
            rank = {node_id: i for i, node_id in enumerate(order)}
            big = len(rank)
            keys = sorted(self._nodes, key=lambda k: rank.get(k, big))
            self._nodes = {k: self._nodes[k] for k in keys}
        dn = set(disabled_nodes) & set(self._nodes)
        dl = set(disabled_links) & set(self._links)
        self._disabled_nodes |= dn
        self._disabled_links |= dl
        self._structure()
        if dn or dl:
            self.disabled_changed.emit()
        return uids

    def new_link_uid(self) -> int:
        """Reserve a fresh link uid (commands keep it so redo re-creates the same link)."""
        uid = self._next_uid
        self._next_uid += 1
        return uid

    def remove_items(
        self, node_ids: Iterable[str] = (), link_uids: Iterable[int] = ()
    ) -> tuple[list[Node], dict[int, Link], set[str], set[int]]:
        """Remove nodes (with their links) and links; return what was removed for undo.

        Returns (nodes, links by uid, disabled node ids among them, disabled link uids).
        """
        ids = [i for i in node_ids if i in self._nodes]
        idset = set(ids)
        uids = {u for u in link_uids if u in self._links} | set(self.links_of(idset))
        nodes = [self._nodes.pop(i) for i in ids]
        links = {u: self._links.pop(u) for u in sorted(uids)}
        dis_n = self._disabled_nodes & idset
        dis_l = self._disabled_links & uids
        self._disabled_nodes -= dis_n
        self._disabled_links -= dis_l
        sel_changed = bool(self._selected_nodes & idset or self._selected_links & uids)
        self._selected_nodes -= idset
        self._selected_links -= uids
        self._structure()
        if dis_n or dis_l:
            self.disabled_changed.emit()
        if sel_changed:
            self.selection_changed.emit()
        return nodes, links, dis_n, dis_l

    def replace_node(self, old_id: str, node: Node) -> None:
        """Replace a node's properties; a new id is carried into its links (keeps order)."""
        if old_id not in self._nodes:
            raise TopologyError(f"unknown node {old_id!r}")
        if node.id != old_id:
            if not node.id:
                raise TopologyError("node id must be a non-empty string")
            if node.id in self._nodes:
                raise TopologyError(f"node id {node.id!r} is already used")
            self._nodes = {(node.id if k == old_id else k): v for k, v in self._nodes.items()}
            for uid, ln in list(self._links.items()):
                if old_id in (ln.source, ln.target):
                    self._links[uid] = replace(
                        ln,
                        source=node.id if ln.source == old_id else ln.source,
                        target=node.id if ln.target == old_id else ln.target,
                    )
            for s in (self._disabled_nodes, self._selected_nodes):
                if old_id in s:
                    s.discard(old_id)
                    s.add(node.id)
        self._nodes[node.id] = node
        self._structure()

    def replace_links(self, links: Mapping[int, Link]) -> None:
        """Replace the properties of several links (by uid) at once."""
        for uid in links:
            if uid not in self._links:
                raise TopologyError(f"unknown link #{uid}")
        self._links.update(links)
        self._structure()

    def move_nodes(self, positions: Mapping[str, Position]) -> None:
        """Set node positions (does not change what the solver sees)."""
        for node_id, (x, y) in positions.items():
            self._nodes[node_id] = replace(self._nodes[node_id], x=float(x), y=float(y))
        self.positions_changed.emit(list(positions))
        self.changed.emit()

    def set_disabled(
        self, node_ids: Iterable[str], link_uids: Iterable[int], disabled: bool
    ) -> None:
        """Take nodes/links out of (or back into) service for a what-if solve."""
        nodes = set(node_ids) & set(self._nodes)
        links = set(link_uids) & set(self._links)
        if disabled:
            self._disabled_nodes |= nodes
            self._disabled_links |= links
        else:
            self._disabled_nodes -= nodes
            self._disabled_links -= links
        self.disabled_changed.emit()
        self.topology_changed.emit()
        self.changed.emit()

    # ------------------------------------------------------------------ selection (not undoable)
    @property
    def selected_nodes(self) -> frozenset[str]:
        return frozenset(self._selected_nodes)

    @property
    def selected_links(self) -> frozenset[int]:
        return frozenset(self._selected_links)

    def set_selection(self, node_ids: Iterable[str] = (), link_uids: Iterable[int] = ()) -> None:
        nodes = set(node_ids) & set(self._nodes)
        links = set(link_uids) & set(self._links)
        if nodes == self._selected_nodes and links == self._selected_links:
            return
        self._selected_nodes = nodes
        self._selected_links = links
        self.selection_changed.emit()

    def select_all(self) -> None:
        self.set_selection(self._nodes, self._links)


def make_node(
    node_id: str,
    kind: str,
    role: str = "",
    x: float = 0.0,
    y: float = 0.0,
    group: str | None = None,
) -> Node:
    """A new node (validating the kind)."""
    if kind not in (COMPUTE, SWITCH):
        raise TopologyError(f"kind must be 'compute' or 'switch', got {kind!r}")
    return Node(id=node_id, kind=kind, role=role, x=float(x), y=float(y), group=group)


def make_link(
    source: str, target: str, bandwidth: Fraction | int | str, latency=None, directed: bool = False
) -> Link:
    """A new link with an exact bandwidth (> 0)."""
    from solver.model.topology import to_fraction

    bw = to_fraction(bandwidth, "bandwidth")
    if bw <= 0:
        raise TopologyError(f"bandwidth must be > 0, got {bandwidth}")
    lat = None if latency is None else to_fraction(latency, "latency")
    if lat is not None and lat < 0:
        raise TopologyError(f"latency must be >= 0, got {latency}")
    if source == target:
        raise TopologyError(f"a link cannot join node {source!r} to itself")
    return Link(source=source, target=target, bandwidth=bw, latency=lat, directed=directed)
