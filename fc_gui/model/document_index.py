"""A Qt-free index of the document the canvas draws: node rows and positions, link rows and their
end rows, lookups by endpoint, and the hit-testing geometry (numpy only).

Nodes and links are numbered in document order (*rows*); :attr:`DocumentIndex.pos` is an
``(n, 2)`` array of node positions and :attr:`DocumentIndex.ends` an ``(m, 2)`` array of the
end rows of each link. Every drawing layer of the canvas reads its coordinates from here, and
hit-testing works on data coordinates with the view's pixel size given, so everything here can
be tested without a canvas (``tests/gui/model/test_document_index.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from fc_gui.model.lanes import segment_distance_px
from fc_gui.model.parallel_links import parallel_slots, shift_segments
from solver.model.topology import Link, Node

Position = tuple[float, float]


def typical_spacing(pos: np.ndarray, fallback: float) -> float:
    """Median distance from a node to its nearest neighbour (on a sample of ~120 nodes).

    Parameters
    ----------
    pos : (n, 2) array of node positions.
    fallback : returned when fewer than two nodes stand apart.

    Notes
    -----
    O(120 n) distances: bounded work however large the fabric.
    """
    if len(pos) < 2:
        return fallback
    sample = pos[:: max(1, len(pos) // 120)]
    d = np.hypot(sample[:, None, 0] - pos[None, :, 0], sample[:, None, 1] - pos[None, :, 1])
    d[d == 0] = np.inf
    nearest = d.min(axis=1)
    nearest = nearest[np.isfinite(nearest)]
    return float(np.median(nearest)) if len(nearest) else fallback


class DocumentIndex:
    """Rows, positions and geometry of one document's nodes and links (see module docstring).

    :meth:`load` fills it from the document's nodes and links (after a structural change);
    :meth:`move` updates positions in place. The layers of the canvas keep one instance.
    """

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.row: dict[str, int] = {}
        self.pos = np.zeros((0, 2))
        self.groups: list[tuple[str, np.ndarray]] = []  # (group name, node rows), first seen order
        self.link_uids: list[int] = []
        self.link_row: dict[int, int] = {}
        self.ends = np.zeros((0, 2), dtype=np.int64)
        self.slots = np.zeros(0)  # side-by-side slot of each link (0: no parallel link)
        self._links_at: dict[str, list[int]] = {}
        self.unit = 1.0  # a third of the median link length: margins, frame padding
        self.spacing = 1.0  # median nearest-neighbour distance of the nodes

    # ------------------------------------------------------------------ building
    def load(self, nodes: Iterable[Node], links: Mapping[int, Link]) -> None:
        """Index ``nodes`` (document order) and ``links`` (``{uid: Link}``, document order).

        Notes
        -----
        O(n + m), plus :func:`typical_spacing`.
        """
        nodes = list(nodes)
        self.ids = [n.id for n in nodes]
        self.row = {n: i for i, n in enumerate(self.ids)}
        self.pos = np.array([[n.x or 0.0, n.y or 0.0] for n in nodes], dtype=float).reshape(-1, 2)
        groups: dict[str, list[int]] = {}
        for i, n in enumerate(nodes):
            if n.group:
                groups.setdefault(n.group, []).append(i)
        self.groups = [(g, np.array(rows, dtype=np.int64)) for g, rows in groups.items()]
        self.link_uids = list(links)
        self.link_row = {u: i for i, u in enumerate(self.link_uids)}
        pairs = [(links[u].source, links[u].target) for u in self.link_uids]
        self.ends = np.array(
            [[self.row[s], self.row[t]] for s, t in pairs], dtype=np.int64
        ).reshape(-1, 2)
        self.slots = parallel_slots(pairs)
        self._links_at = {}
        for u, (s, t) in zip(self.link_uids, pairs):
            self._links_at.setdefault(s, []).append(u)
            if t != s:
                self._links_at.setdefault(t, []).append(u)
        lengths = self.link_lengths()
        lengths = lengths[lengths > 0]
        self.unit = float(np.median(lengths)) * 0.3 if len(lengths) else 1.0
        self.spacing = typical_spacing(self.pos, self.unit)

    def move(self, positions: Mapping[str, tuple[float | None, float | None]]) -> np.ndarray:
        """New positions ``{node id: (x, y)}`` (None coordinates count as 0); returns their rows."""
        rows = np.array([self.row[i] for i in positions], dtype=np.int64)
        for r, (x, y) in zip(rows, positions.values()):
            self.pos[r] = (x or 0.0, y or 0.0)
        return rows

    # ------------------------------------------------------------------ lookups
    def positions(self) -> dict[str, Position]:
        """``{node id: (x, y)}`` in data coordinates."""
        return {i: (float(p[0]), float(p[1])) for i, p in zip(self.ids, self.pos)}

    def links_at(self, node_id: str) -> list[int]:
        """Uids of the links with ``node_id`` at one end (document order)."""
        return list(self._links_at.get(node_id, ()))

    def links_among(self, node_ids: Iterable[str]) -> list[int]:
        """Uids of the links with both ends in ``node_ids`` (document order)."""
        rows = [self.row[i] for i in set(node_ids) if i in self.row]
        if not len(self.ends) or not rows:
            return []
        inside = np.zeros(len(self.ids), dtype=bool)
        inside[rows] = True
        both = inside[self.ends[:, 0]] & inside[self.ends[:, 1]]
        return [self.link_uids[i] for i in np.nonzero(both)[0]]

    def link_lengths(self) -> np.ndarray:
        """Length of every link between its nodes' centres (row order)."""
        if not len(self.ends):
            return np.zeros(0)
        return np.hypot(*(self.pos[self.ends[:, 1]] - self.pos[self.ends[:, 0]]).T)

    # ------------------------------------------------------------------ geometry
    def segment_ends(self) -> tuple[np.ndarray, np.ndarray]:
        """Start and end points of every link as drawn (parallel links moved apart)."""
        if not len(self.ends):
            return np.zeros((0, 2)), np.zeros((0, 2))
        return shift_segments(self.pos[self.ends[:, 0]], self.pos[self.ends[:, 1]], self.slots)

    def rows_in_rect(self, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
        """Rows of the nodes inside the rectangle (edges included; corners in any order)."""
        (left, right), (top, bottom) = sorted((x0, x1)), sorted((y0, y1))
        p = self.pos
        inside = (p[:, 0] >= left) & (p[:, 0] <= right) & (p[:, 1] >= top) & (p[:, 1] <= bottom)
        return np.nonzero(inside)[0]

    def nodes_in_rect(self, x0: float, y0: float, x1: float, y1: float) -> list[str]:
        """Ids of the nodes inside the rectangle (document order)."""
        return [self.ids[i] for i in self.rows_in_rect(x0, y0, x1, y1)]

    def node_at(
        self,
        x: float,
        y: float,
        pixel: tuple[float, float],
        radii_px: np.ndarray,
        tolerance_px: float = 4.0,
    ) -> str | None:
        """The node nearest to (x, y) if it is within its drawn radius plus ``tolerance_px``.

        Parameters
        ----------
        x, y : the point, data coordinates.
        pixel : data units per screen pixel along x and y.
        radii_px : (n,) drawn radius of each node symbol, in pixels.
        tolerance_px : how far outside a symbol still counts as on it.
        """
        if len(self.pos) == 0:
            return None
        px, py = pixel
        d = np.hypot((self.pos[:, 0] - x) / px, (self.pos[:, 1] - y) / py)
        i = int(np.argmin(d))
        return self.ids[i] if d[i] <= radii_px[i] + tolerance_px else None

    def link_at(
        self, x: float, y: float, pixel: tuple[float, float], tolerance_px: float = 5.0
    ) -> int | None:
        """The uid of the drawn link nearest to (x, y) if it is within ``tolerance_px``."""
        if len(self.ends) == 0:
            return None
        seg = np.stack(self.segment_ends(), axis=1)
        d = segment_distance_px(seg, x, y, pixel)
        i = int(np.argmin(d))
        return self.link_uids[i] if d[i] <= tolerance_px else None

    def group_boxes(self, pad: float) -> list[tuple[str, tuple[float, float, float, float]]]:
        """``(group, (left, top, width, height))`` of each group's frame: its nodes' bounding box
        grown by ``pad`` on every side."""
        boxes = []
        for name, rows in self.groups:
            p = self.pos[rows]
            lo, hi = p.min(axis=0), p.max(axis=0)
            left, top = float(lo[0] - pad), float(lo[1] - pad)
            width, height = float(hi[0] - lo[0] + 2 * pad), float(hi[1] - lo[1] + 2 * pad)
            boxes.append((name, (left, top, width, height)))
        return boxes

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lowest and highest x and y over the nodes (call with at least one node)."""
        return self.pos.min(axis=0), self.pos.max(axis=0)
