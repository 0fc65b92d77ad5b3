"""Parallel links (several between the same two nodes) are drawn side by side -- on the canvas
and in the SVG figure -- instead of on top of each other."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET
from fractions import Fraction

import numpy as np
import pytest
from PySide6.QtGui import QUndoStack

from fc_gui.model.document import TopologyDocument
from fc_gui.model.parallel_links import PARALLEL_GAP, parallel_slots, shift_segments
from fc_gui.views.canvas import FabricCanvas
from fc_gui.views.figure_svg import FigureData, build_svg
from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology

SVG = "{http://www.w3.org/2000/svg}"


def _fabric() -> Topology:
    """a-b: two full-duplex links and one one-way link b->a; b-c: a single link; a-s-c: a switch."""
    nodes = (
        Node(id="a", kind=COMPUTE, role="gpu", x=0.0, y=0.0),
        Node(id="b", kind=COMPUTE, role="gpu", x=300.0, y=0.0),
        Node(id="c", kind=COMPUTE, role="gpu", x=300.0, y=300.0),
        Node(id="s", kind=SWITCH, role="ib", x=0.0, y=300.0),
    )
    links = (
        Link(source="a", target="b", bandwidth=Fraction(100)),
        Link(source="a", target="b", bandwidth=Fraction(50)),
        Link(source="b", target="a", bandwidth=Fraction(25), directed=True),
        Link(source="b", target="c", bandwidth=Fraction(100)),
        Link(source="a", target="s", bandwidth=Fraction(100)),
        Link(source="s", target="c", bandwidth=Fraction(100)),
    )
    return Topology(name="parallel", nodes=nodes, links=links)


def _line_distance(p, q) -> float:
    """Distance between two parallel segments p and q ((x0, y0), (x1, y1)): of their midpoints."""
    pm = ((p[0][0] + p[1][0]) / 2, (p[0][1] + p[1][1]) / 2)
    qm = ((q[0][0] + q[1][0]) / 2, (q[0][1] + q[1][1]) / 2)
    return math.dist(pm, qm)


def test_slots_put_each_parallel_link_on_its_own_line_whatever_its_direction():
    pairs = [("a", "b"), ("a", "b"), ("b", "a"), ("b", "c")]
    slots = parallel_slots(pairs)
    assert slots[3] == 0  # alone between its nodes: not moved
    a = np.array([[0.0, 0.0], [0.0, 0.0], [300.0, 0.0], [300.0, 0.0]])
    b = np.array([[300.0, 0.0], [300.0, 0.0], [0.0, 0.0], [300.0, 300.0]])
    sa, sb = shift_segments(a, b, slots)
    drawn = [((sa[i][0], sa[i][1]), (sb[i][0], sb[i][1])) for i in range(3)]
    for p, q in itertools.combinations(drawn, 2):
        assert _line_distance(p, q) >= PARALLEL_GAP - 1e-9
    assert np.allclose(sa[3], a[3]) and np.allclose(sb[3], b[3])
    # the three lines are centred on the pair's own line
    assert abs(sum(p[0][1] for p in drawn) / 3) < 1e-9


@pytest.fixture
def canvas(qtbot):
    c = FabricCanvas(TopologyDocument(_fabric()), QUndoStack())
    qtbot.addWidget(c)
    c.resize(700, 600)
    c.show()
    qtbot.waitExposed(c)
    c.fit_view()
    qtbot.wait(30)
    return c


def _drawn_segments(canvas) -> set[tuple[float, ...]]:
    out = set()
    for item, _ in canvas.links.groups:
        x, y = item.getData()
        for i in range(0, len(x), 2):
            out.add(tuple(round(float(v), 3) for v in (x[i], y[i], x[i + 1], y[i + 1])))
    return out


def test_canvas_draws_parallel_links_apart_and_picks_each(canvas):
    uids = list(canvas.doc.links)
    assert len(_drawn_segments(canvas)) == 6  # six distinct lines, none drawn over another
    a, b = canvas.index.segment_ends()
    rows = [canvas.index.link_row[u] for u in uids[:3]]  # the three a-b links
    lines = [((a[r][0], a[r][1]), (b[r][0], b[r][1])) for r in rows]
    for p, q in itertools.combinations(lines, 2):
        assert _line_distance(p, q) >= PARALLEL_GAP - 1e-6
    # hovering/clicking the middle of each drawn line finds that very link
    for uid, ((x0, y0), (x1, y1)) in zip(uids[:3], lines, strict=True):
        assert canvas.link_at((x0 + x1) / 2, (y0 + y1) / 2, tolerance_px=2.0) == uid
    # the b-c link (alone) runs exactly between its nodes
    r = canvas.index.link_row[uids[3]]
    assert np.allclose(a[r], canvas.index.pos[canvas.index.row["b"]])
    assert np.allclose(b[r], canvas.index.pos[canvas.index.row["c"]])


def test_canvas_keeps_them_apart_after_a_move(canvas):
    canvas.doc.move_nodes({"b": (300.0, 200.0)})
    a, b = canvas.index.segment_ends()
    rows = [canvas.index.link_row[u] for u in list(canvas.doc.links)[:3]]
    lines = [((a[r][0], a[r][1]), (b[r][0], b[r][1])) for r in rows]
    for p, q in itertools.combinations(lines, 2):
        assert _line_distance(p, q) >= PARALLEL_GAP - 1e-6


def test_svg_figure_draws_parallel_links_apart():
    topo = _fabric()
    data = FigureData(
        title="parallel",
        nodes=[(n.id, n.kind, n.role, n.x, n.y, n.group) for n in topo.nodes],
        links=[(ln.source, ln.target, float(ln.bandwidth)) for ln in topo.links],
    )
    root = ET.fromstring(build_svg(data, width=900))
    group = next(g for g in root.iter(f"{SVG}g") if g.get("id") == "links")
    lines = [
        ((float(e.get("x1")), float(e.get("y1"))), (float(e.get("x2")), float(e.get("y2"))))
        for e in group.iter(f"{SVG}line")
    ]
    assert len(lines) == 6 and len(set(lines)) == 6
    for p, q in itertools.combinations(lines[:3], 2):
        assert _line_distance(p, q) >= 4.0  # pixels apart at this width
    # a single link still joins its nodes' centres: same as the node shapes' positions
    nodes = {e.get("data-node"): e for e in root.iter() if e.get("data-node")}
    b = nodes["b"]
    assert (float(b.get("cx")), float(b.get("cy"))) == lines[3][0]
