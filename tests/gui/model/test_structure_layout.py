"""The structural layout of imported dumps: package pairs together, distinct links distinct
lines, the host tree outside the GPU links."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from fc_gui.controllers.file_actions import read_fabric
from fc_gui.model.structure_layout import circle_order, structural
from solver.io.formats import load
from solver.io.templates import dgx_a100
from solver.model.topology import COMPUTE

REAL = Path(__file__).resolve().parents[2] / "data" / "real" / "topo"
MI250 = REAL / "rccl_topo_16p1h.xml"  # 16 MI250 GCDs: 8 packages of two, 144 GB/s inside


def _on_segment(p, a, b, tol=1.0) -> bool:
    """p lies on the segment a-b (within ``tol`` scene units), strictly between its ends."""
    (px, py), (ax, ay), (bx, by) = p, a, b
    length = math.dist(a, b)
    if length == 0:
        return False
    t = ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / length**2
    if not 0.0 < t < 1.0:
        return False
    return math.dist(p, (ax + t * (bx - ax), ay + t * (by - ay))) < tol


def test_mi250_packages_sit_together_and_no_gpu_link_runs_through_a_gpu():
    topo = load(MI250, check=False)
    pos = structural(topo)
    assert set(pos) == {n.id for n in topo.nodes}
    assert len({(round(x, 1), round(y, 1)) for x, y in pos.values()}) == len(pos)
    gpus = {n.id for n in topo.nodes if n.kind == COMPUTE}
    gpu_links = {
        frozenset((ln.source, ln.target)): float(ln.bandwidth)
        for ln in topo.links
        if ln.source in gpus and ln.target in gpus
    }
    pairs = [tuple(k) for k, bw in gpu_links.items() if bw == 200]  # 4 xGMI links x 50 GB/s
    assert len(pairs) == 8
    pair_dist = max(math.dist(pos[a], pos[b]) for a, b in pairs)
    others = min(
        math.dist(pos[a], pos[b])
        for a, b in itertools.combinations(sorted(gpus), 2)
        if frozenset((a, b)) not in {frozenset(p) for p in pairs}
    )
    assert pair_dist < others  # each package's two GCDs are nearer than any other two GPUs
    for link in gpu_links:
        a, b = tuple(link)
        for g in gpus - {a, b}:
            assert not _on_segment(pos[g], pos[a], pos[b]), (g, a, b)


def test_circle_order_keeps_a_ring_a_ring():
    # a ring 0-1-2-3-4-5 given in scrambled order comes out in ring order
    ring = ["g0", "g3", "g1", "g5", "g2", "g4"]
    adj = {g: {} for g in ring}
    for i in range(6):
        a, b = f"g{i}", f"g{(i + 1) % 6}"
        adj[a][b] = adj[b][a] = 50.0
    order = circle_order(ring, adj)
    for i in range(6):
        j = order.index(f"g{i}")
        assert order[(j + 1) % 6] in {f"g{(i + 1) % 6}", f"g{(i - 1) % 6}"}


def test_nvswitch_star_has_its_switch_inside_the_gpu_circle():
    topo = dgx_a100(1)
    pos = structural(topo)
    gpus = [n.id for n in topo.nodes if n.kind == COMPUTE]
    nvsw = [n.id for n in topo.nodes if n.role.startswith("nvswitch")]
    assert nvsw
    cx = sum(pos[g][0] for g in gpus) / len(gpus)
    cy = sum(pos[g][1] for g in gpus) / len(gpus)
    radius = min(math.dist(pos[g], (cx, cy)) for g in gpus)
    for s in nvsw:
        assert math.dist(pos[s], (cx, cy)) < radius


def test_imported_dump_is_laid_out_by_structure(qapp):
    topo, _ = read_fabric(MI250)
    want = structural(load(MI250, check=False))
    got = {n.id: (n.x, n.y) for n in topo.nodes}
    for nid, (x, y) in want.items():
        assert got[nid] == pytest.approx((x, y), abs=0.1)
    # the GPUs are not on one row (the old failure: every xGMI link drawn over the others)
    ys = {round(n.y) for n in topo.nodes if n.kind == COMPUTE}
    assert len(ys) > 3


def test_graphml_without_coordinates_gets_positions(tmp_path, qapp):
    import networkx as nx

    g = nx.Graph()
    for i in range(4):
        g.add_node(f"gpu{i}", kind="compute")
    g.add_node("sw", kind="switch")
    for i in range(4):
        g.add_edge(f"gpu{i}", "sw", bandwidth=100)
        g.add_edge(f"gpu{i}", f"gpu{(i + 1) % 4}", bandwidth=50)
    path = tmp_path / "ring.graphml"
    nx.write_graphml(g, path)
    topo, _ = read_fabric(path)
    assert all(n.x is not None and n.y is not None for n in topo.nodes)
    xy = [(n.x, n.y) for n in topo.nodes]
    assert len(set(xy)) == len(xy)


def _crosses(p, q, r, s) -> bool:
    def turn(a, b, c) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    return turn(p, q, r) * turn(p, q, s) < 0 and turn(r, s, p) * turn(r, s, q) < 0


@pytest.mark.parametrize("name", ["rccl_topo_8p_940.xml", "rccl_topo_8p_950.xml"])
def test_mi300x_host_tree_hangs_below_the_xgmi_mesh_and_crosses_none_of_it(name):
    topo = load(REAL / name, check=False)
    pos = structural(topo)
    gpus = {n.id for n in topo.nodes if n.kind == COMPUTE}
    xgmi = [(ln.source, ln.target) for ln in topo.links if ln.source in gpus and ln.target in gpus]
    host = [(ln.source, ln.target) for ln in topo.links if (ln.source, ln.target) not in xgmi]
    assert len(xgmi) == 28 and host
    for a, b in xgmi:
        for c, d in host:
            if not {a, b} & {c, d}:
                assert not _crosses(pos[a], pos[b], pos[c], pos[d]), ((a, b), (c, d))
    cpus = [n.id for n in topo.nodes if n.role == "cpu"]
    assert cpus and all(pos[c][1] > max(pos[g][1] for g in gpus) for c in cpus)  # CPUs below


def test_mi250_gcds_of_one_cpu_are_neighbours_on_the_arc():
    topo = load(MI250, check=False)
    pos = structural(topo)
    kind = {n.id: (n.kind, n.role) for n in topo.nodes}
    adj: dict[str, set[str]] = {n.id: set() for n in topo.nodes}
    for ln in topo.links:
        adj[ln.source].add(ln.target)
        adj[ln.target].add(ln.source)
    gpus = [n for n, (k, _) in kind.items() if k == COMPUTE]
    cx = sum(pos[g][0] for g in gpus) / len(gpus)
    cy = sum(pos[g][1] for g in gpus) / len(gpus)
    around = sorted(gpus, key=lambda g: math.atan2(pos[g][1] - cy, pos[g][0] - cx))
    under = {}
    for cpu in (n for n, (_, role) in kind.items() if role == "cpu"):
        seen, stack, mine = {cpu}, [cpu], set()
        while stack:  # down the PCIe tree, not through GPUs or other CPUs
            for v in adj[stack.pop()] - seen:
                seen.add(v)
                if kind[v][0] == COMPUTE:
                    mine.add(v)
                elif kind[v][1] != "cpu":
                    stack.append(v)
        under[cpu] = mine
    assert sorted(len(m) for m in under.values()) == [4, 4, 4, 4]
    for mine in under.values():
        runs = sum(1 for i in range(len(around)) if (around[i] in mine) != (around[i - 1] in mine))
        assert runs == 2, sorted(mine)  # one run around the circle: it enters once and leaves once


def test_a_dump_read_twice_draws_both_boxes_alike_side_by_side():
    topo, _ = read_fabric(REAL / "rccl_topo_4p3l_2h.xml", boxes=2)
    pos = {n.id: (n.x, n.y) for n in topo.nodes}
    names = [n.id.split(".", 1)[1] for n in topo.nodes if n.group == "b0"]
    assert len(names) == 21 and all(f"b1.{m}" in pos for m in names)
    dx = pos["b1.gpu0"][0] - pos["b0.gpu0"][0]
    assert dx > max(pos[f"b0.{m}"][0] for m in names) - min(pos[f"b0.{m}"][0] for m in names)
    for m in names:  # the second box is the first moved right past it
        assert pos[f"b1.{m}"] == pytest.approx((pos[f"b0.{m}"][0] + dx, pos[f"b0.{m}"][1]), abs=0.2)


def test_the_search_of_a_big_box_stops_at_its_budget(monkeypatch):
    """128 GPUs in one island with a host tree (3 links each, 4 CPUs): the crossing counts
    stop at the work budget (past it only the few counts that pick the final drawing), and every
    node still gets a place."""
    from fractions import Fraction

    from fc_gui.model import structure_layout as sl
    from solver.model.topology import SWITCH, Link, Node, Topology

    n, nodes, links = 128, [], []
    for i in range(n):
        nodes += [
            Node(id=f"b0.gpu{i}", kind=COMPUTE, role="gpu", group="b0"),
            Node(id=f"b0.pcie{i}", kind=SWITCH, role="pcie", group="b0"),
        ]
        links += [
            Link(source=f"b0.gpu{i}", target=f"b0.gpu{(i + 1) % n}", bandwidth=Fraction(50)),
            Link(source=f"b0.gpu{i}", target=f"b0.gpu{(i + 3) % n}", bandwidth=Fraction(50)),
            Link(source=f"b0.gpu{i}", target=f"b0.pcie{i}", bandwidth=Fraction(16)),
            Link(source=f"b0.pcie{i}", target=f"b0.cpu{i * 4 // n}", bandwidth=Fraction(16)),
        ]
    nodes += [Node(id=f"b0.cpu{c}", kind=SWITCH, role="cpu", group="b0") for c in range(4)]
    topo = Topology(name="big", nodes=tuple(nodes), links=tuple(links))
    counted = []
    call = sl._Badness.__call__

    def spy(self, pos, through=4):
        counted.append(self.work)
        return call(self, pos, through)

    monkeypatch.setattr(sl._Badness, "__call__", spy)
    pos = structural(topo)
    per_count = len(links) * (len(links) + len(nodes))
    assert counted and max(counted) <= sl._BUDGET + 4 * per_count
    assert max(counted) > sl._BUDGET - per_count  # the budget, not the search's end, stopped it
    assert len({(round(x, 1), round(y, 1)) for x, y in pos.values()}) == len(nodes)
