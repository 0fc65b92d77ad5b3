"""Imported dumps as they look in the designer: a shared NVLink domain above the boxes it
joins, links drawn around nodes rather than through them, and labels that never overwrite each
other."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

from PySide6.QtGui import QUndoStack

from fc_gui.controllers.file_actions import read_fabric
from fc_gui.model.document import TopologyDocument
from fc_gui.model.structure_layout import SPACING
from fc_gui.views.canvas import FabricCanvas
from solver.io.templates import mi250
from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology

REAL = Path(__file__).resolve().parents[2] / "data" / "real" / "topo"
GB300 = REAL / "nccl_ebpf_gb300_mnnvl_topo_2tray_0405.xml"  # 2 trays of 4 GPUs, one NVLink domain


def _crosses_node(a, b, p, tol=10.0) -> bool:
    (ax, ay), (bx, by), (px, py) = a, b, p
    length2 = (bx - ax) ** 2 + (by - ay) ** 2
    t = ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / length2
    return 0 < t < 1 and math.dist(p, (ax + t * (bx - ax), ay + t * (by - ay))) < tol


def test_shared_nvlink_domain_sits_above_the_boxes_and_its_links_cross_no_node():
    topo = read_fabric(GB300)[0]
    pos = {n.id: (n.x, n.y) for n in topo.nodes}
    stars = [
        n.id for n in topo.nodes if n.role.startswith("nvswitch") and not n.group.startswith("b")
    ]
    assert stars
    boxed = [n for n in topo.nodes if n.group in ("b0", "b1")]
    top = min(n.y for n in boxed)
    for s in stars:
        assert pos[s][1] < top  # above every box
    nvlinks = [ln for ln in topo.links if ln.source in stars or ln.target in stars]
    assert len(nvlinks) == 8
    for ln in nvlinks:
        for n in topo.nodes:
            if n.id not in (ln.source, ln.target):
                assert not _crosses_node(pos[ln.source], pos[ln.target], pos[n.id]), (ln, n.id)
    # the network switch of the NICs stays below
    ib = [n for n in topo.nodes if n.role == "ib"]
    assert ib and all(n.y > max(b.y for b in boxed) for n in ib)


def _canvas(qtbot, topo, width=900, height=300) -> FabricCanvas:
    c = FabricCanvas(TopologyDocument(topo), QUndoStack())
    qtbot.addWidget(c)
    c.resize(width, height)
    c.show()
    qtbot.waitExposed(c)
    c.fit_view()
    c.layers.settle()
    c.grab()  # paint
    return c


def test_overlapping_labels_move_above_or_leave_out_the_less_important_one(qtbot):
    close = [
        Node(id=f"pcie_switch_{i}_next_to_it", kind=SWITCH, role="pcie", x=8.0 * (i + 1), y=0.0)
        for i in range(2)
    ]
    gpus = [
        Node(id=f"gpu{i}_with_a_long_name", kind=COMPUTE, role="gpu", x=200.0 * i, y=0.0)
        for i in range(4)
    ]
    links = [Link(source=c.id, target=gpus[0].id, bandwidth=Fraction(16)) for c in close]
    links += [
        Link(source=a.id, target=b.id, bandwidth=Fraction(16)) for a, b in itertools.pairwise(gpus)
    ]
    # the PCIe switches come first in the file: the GPUs' labels still win
    topo = Topology(name="labels", nodes=(*close, *gpus), links=tuple(links))
    c = _canvas(qtbot, topo)
    assert set(c.labels.names.texts()) == {n.id for n in topo.nodes}  # every label asked for ...
    drawn = c.labels.names.drawn
    assert {g.id for g in gpus} <= set(drawn)  # ... the GPUs' shown, under their nodes
    assert drawn.count("pcie_switch_0_next_to_it") + drawn.count("pcie_switch_1_next_to_it") == 1
    # one switch's label went above the nodes; the other had no free place and is left out


def test_package_pairs_of_the_mi250_template_both_keep_their_labels(qtbot):
    topo = mi250(1)
    c = _canvas(qtbot, topo, 900, 800)
    assert sorted(c.labels.names.drawn) == sorted(n.id for n in topo.nodes)  # all 16 GCDs


def _pass_throughs(topo) -> list[tuple[str, str, str]]:
    """(link source, link target, node) for every link drawn through a node not its end."""
    pos = {n.id: (n.x, n.y) for n in topo.nodes}
    return [
        (ln.source, ln.target, n)
        for ln in topo.links
        for n in pos
        if n not in (ln.source, ln.target)
        and _crosses_node(pos[ln.source], pos[ln.target], pos[n], 8.0)
    ]


def _crossings(topo) -> int:
    """Pairs of links (without a common end) whose straight lines cross."""
    pos = {n.id: (n.x, n.y) for n in topo.nodes}
    segs = sorted({tuple(sorted((ln.source, ln.target))) for ln in topo.links})

    def turn(a, b, c) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    count = 0
    for (a, b), (c, d) in itertools.combinations(segs, 2):
        if {a, b} & {c, d}:
            continue
        p, q, r, t = pos[a], pos[b], pos[c], pos[d]
        if turn(p, q, r) * turn(p, q, t) < 0 and turn(r, t, p) * turn(r, t, q) < 0:
            count += 1
    return count


def test_crossings_counts_crossing_links_only():
    nodes = [
        Node(id=i, kind=COMPUTE, role="gpu", x=x, y=y)
        for i, x, y in (("a", 0, 0), ("b", 10, 10), ("c", 0, 10), ("d", 10, 0), ("e", 20, 0))
    ]
    bw = Fraction(1)
    links = (
        Link(source="a", target="b", bandwidth=bw),
        Link(source="c", target="d", bandwidth=bw),
        Link(source="d", target="e", bandwidth=bw),
        Link(source="a", target="d", bandwidth=bw),
    )
    assert _crossings(Topology(name="x", nodes=tuple(nodes), links=links)) == 1  # a-b x c-d


def test_real_dumps_draw_their_links_around_nodes_not_through_them():
    options = json.loads((REAL / "import_options.json").read_text(encoding="utf-8"))
    crossings = 0
    for path in sorted(REAL.glob("*.xml")):
        topo = read_fabric(path, **options.get(path.name, {}))[0]
        through = _pass_throughs(topo)
        assert through == [], (path.name, through)
        crossings += _crossings(topo)
        pts = [(n.x, n.y) for n in topo.nodes]
        closest = min(math.dist(p, q) for i, p in enumerate(pts) for q in pts[i + 1 :])
        assert closest >= 0.5 * SPACING, path.name  # stepping aside never piles nodes up
    # over 68 dumps: links through nodes 158 before nodes stepped aside, 29 before host trees
    # hung on bowls below their GPU islands and packages and host devices moved while that
    # lowered the crossings (docs/designer.md, layout of imported dumps), none since; crossings 2164 then
    assert crossings <= 1278
