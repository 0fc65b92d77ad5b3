"""The MI250 template (and its sample files) are drawn with the structural layout: its GCDs on
the circle the designer would lay them out on, so distinct xGMI links are distinct lines."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from pathlib import Path

import pytest

from fc_gui.model.structure_layout import circle_order, structural
from solver.io.formats import load
from solver.io.templates import MI250_CIRCLE, mi250
from solver.model.topology import COMPUTE

SAMPLES = Path(__file__).resolve().parents[3] / "sample_topologies"


def _relative(points: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    x0 = min(x for x, _ in points.values())
    y0 = min(y for _, y in points.values())
    return {k: (x - x0, y - y0) for k, (x, y) in points.items()}


def _through_a_third_node(pos, a, b, tol=12.0) -> list[str]:
    """Nodes other than a, b lying on the segment a-b (within ``tol`` scene units)."""
    (ax, ay), (bx, by) = pos[a], pos[b]
    length2 = (bx - ax) ** 2 + (by - ay) ** 2
    hits = []
    for n, (px, py) in pos.items():
        if n in (a, b):
            continue
        t = ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / length2
        if 0 < t < 1 and math.dist((px, py), (ax + t * (bx - ax), ay + t * (by - ay))) < tol:
            hits.append(n)
    return hits


def test_mi250_circle_is_the_structural_circle_order():
    topo = mi250(1)
    adj: dict[str, dict[str, float]] = defaultdict(dict)
    for ln in topo.links:
        adj[ln.source][ln.target] = adj[ln.target][ln.source] = float(ln.bandwidth)
    order = circle_order([n.id for n in topo.nodes], adj)
    assert tuple(int(g.rsplit("gcd", 1)[1]) for g in order) == MI250_CIRCLE


@pytest.mark.parametrize("boxes", [1, 2, 5])
def test_mi250_template_positions_are_the_structural_layout(boxes):
    topo = mi250(boxes)
    laid = structural(topo)
    for b in range(boxes):
        members = [n for n in topo.nodes if n.group == f"b{b}"]
        assert len(members) == 16
        mine = _relative({n.id: (n.x, n.y) for n in members})
        theirs = _relative({n.id: laid[n.id] for n in members})
        for nid, (x, y) in mine.items():
            assert math.dist((x, y), theirs[nid]) < 0.2, nid


@pytest.mark.parametrize("name", ["mi250_1x.json", "mi250_2x.json"])
def test_mi250_samples_draw_every_xgmi_link_as_its_own_line(name):
    topo = load(SAMPLES / name)
    pos = {n.id: (n.x, n.y) for n in topo.nodes}
    gpus = {n.id for n in topo.nodes if n.kind == COMPUTE}
    xgmi = [(ln.source, ln.target) for ln in topo.links if ln.source in gpus and ln.target in gpus]
    assert len(xgmi) == 28 * (len(gpus) // 16)
    for a, b in xgmi:
        assert _through_a_third_node(pos, a, b) == [], (a, b)
    # no two xGMI links on the same line (collinear overlaps)
    for (a, b), (c, d) in itertools.combinations(xgmi, 2):
        if {a, b} & {c, d}:
            continue
        assert not (
            _through_a_third_node({a: pos[a], b: pos[b], c: pos[c]}, a, b)
            and _through_a_third_node({a: pos[a], b: pos[b], d: pos[d]}, a, b)
        )
    # the two GCDs of a package sit next to each other
    packages = [(ln.source, ln.target) for ln in topo.links if ln.extra.get("count") == 4]
    assert len(packages) == 8 * (len(gpus) // 16)
    near = max(math.dist(pos[a], pos[b]) for a, b in packages)
    box0 = sorted(g for g in gpus if g.startswith("b0."))
    others = min(
        math.dist(pos[a], pos[b])
        for a, b in itertools.combinations(box0, 2)
        if (a, b) not in packages and (b, a) not in packages
    )
    assert near < others
