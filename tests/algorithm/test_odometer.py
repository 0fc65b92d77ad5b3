"""The odometer σ of nested sibling shifts: one automorphism of a 3-tier fabric that moves every
box (racks, DGX nodes) around one cycle, the switches of the tiers in between with their periods."""

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from solver.algorithm.odometer import find_odometer
from solver.algorithm.symmetry import box_symmetry, is_automorphism
from solver.flow.csr import IndexedFabric
from solver.io import templates
from solver.model.topology import Topology


def _periods_by_role(topo, sym):
    out: dict[str, set[int]] = {}
    for node, p in zip(topo.nodes, sym.period.tolist()):
        out.setdefault(node.role, set()).add(p)
    return out


def _check_cycles(fabric, sym):
    n = fabric.n
    assert is_automorphism(fabric, sym.shift)
    assert np.array_equal(sym.power(1), sym.shift)
    assert np.array_equal(sym.power(sym.boxes), np.arange(n))
    assert np.array_equal(sym.power(-1)[sym.shift], np.arange(n))
    for v in range(n):
        p = int(sym.period[v])
        assert sym.boxes % p == 0
        w, length = v, 0
        while True:  # the stored period is the cycle length of σ
            w = int(sym.shift[w])
            length += 1
            if w == v:
                break
        assert length == p
        assert sym.translate(v, 3) == int(sym.power(3)[v])
        assert sym.translate(sym.representative(v), int(sym.phase[v])) == v
    compute = list(fabric.compute)
    assert set(sym.period[compute].tolist()) == {sym.boxes}
    assert np.all(sym.phase[sym.node_at[0]] == 0)
    for b in range(sym.boxes):  # box b is σ^b of box 0, position by position
        assert np.array_equal(sym.node_at[b], sym.power(b)[sym.node_at[0]])


def test_clos3_racks_move_zones_carry():
    topo = templates.clos3(zones=3, racks_per_zone=4, ctsws=4)
    fabric = IndexedFabric.from_topology(topo)
    sym = box_symmetry(topo, fabric, nested=True)
    assert sym is not None and sym.nested
    assert sym.boxes == 12 and sym.size == 35  # a rack: 2 hosts of 17 nodes and its RTSW
    assert _periods_by_role(topo, sym) == {
        "gpu": {12},
        "nic": {12},
        "nvswitch": {12},
        "rtsw": {12},
        "ctsw": {3},  # a zone's CTSWs move with the zone
        "atsw": {1},
    }
    _check_cycles(fabric, sym)
    names = fabric.names
    # the top index is least significant: σ moves rack r of zone z to zone z + 1, the last zone's
    # racks to zone 0, one rack on
    first = names[sym.node_at[0, 0]].split(".")[0]
    for b in range(sym.boxes):
        rack = names[sym.node_at[b, 0]]
        assert rack.split(".")[0] != first or b % 3 == 0


def test_superpod_dgx_nodes_are_boxes():
    topo = templates.superpod(16, nodes_per_su=2)
    fabric = IndexedFabric.from_topology(topo)
    sym = box_symmetry(topo, fabric, nested=True)
    assert sym is not None and sym.boxes == 32 and sym.size == 17
    assert _periods_by_role(topo, sym) == {
        "gpu": {32},
        "nic": {32},
        "nvswitch": {32},
        "leaf": {16},  # an SU's leaves: 4 pods x 4 SUs
        "spine": {4},  # a pod's spines
        "core": {1},
    }
    _check_cycles(fabric, sym)


def test_without_groups_the_nvswitch_box_stops_the_descent():
    topo = templates.clos3(zones=2, racks_per_zone=2, ctsws=2)
    plain = replace(topo, nodes=tuple(replace(n, group=None) for n in topo.nodes))
    fabric = IndexedFabric.from_topology(plain)
    sym = find_odometer(plain, fabric, None)
    assert sym is not None
    # boxes are hosts (an NVSwitch of their own), not single GPUs: RTSWs move with period 4
    assert sym.boxes == 8 and sym.size == 17
    assert _periods_by_role(plain, sym)["rtsw"] == {4}
    _check_cycles(fabric, sym)


def test_broken_sibling_gives_no_odometer():
    topo = templates.clos3(zones=2, racks_per_zone=3, ctsws=2)
    # one RTSW uplink of zone 1 slower: the racks of zone 1 are not all alike, the zones neither
    target = next(
        i
        for i, link in enumerate(topo.links)
        if "z1.r2.rtsw" in (link.source, link.target) and "ctsw" in link.source + link.target
    )
    links = list(topo.links)
    links[target] = replace(links[target], bandwidth=Fraction(links[target].bandwidth) / 2)
    broken = replace(topo, links=tuple(links))
    fabric = IndexedFabric.from_topology(broken)
    sym = find_odometer(broken, fabric, [n.group for n in broken.nodes])
    assert sym is None or not sym.nested


@pytest.mark.parametrize("zones,racks", [(2, 2), (4, 3)])
def test_orbit_of_every_compute_node_is_all_boxes(zones, racks):
    topo = templates.clos3(zones=zones, racks_per_zone=racks, ctsws=2)
    fabric = IndexedFabric.from_topology(topo)
    sym = box_symmetry(topo, fabric, nested=True)
    seen = set()
    for v in sym.node_at[0].tolist():
        if fabric.is_compute[v]:
            orbit = {int(w) for w in sym.node_at[:, sym.pos_of[v]]}
            assert len(orbit) == zones * racks
            assert not orbit & seen
            seen |= orbit
    assert seen == set(fabric.compute)
    assert isinstance(topo, Topology)
