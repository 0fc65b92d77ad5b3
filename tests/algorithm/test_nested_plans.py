"""Compressed plans under an odometer σ: switches of nested tiers (a zone's spines) move too."""

from __future__ import annotations

import pytest

from solver.algorithm.compressed import divisibility_factor, solve_compressed
from solver.algorithm.optimum import compute_optimum
from solver.algorithm.orbit_plan import _LazyOrbitPacker, _OrbitSplitter, split_orbits
from solver.algorithm.plan_split import invariant_holds, split_by_plans
from solver.algorithm.spare_trim import trim_shared_links
from solver.algorithm.symmetry import PartsBelow, box_symmetry
from solver.algorithm.verify import verify_schedule
from solver.algorithm.verify_plan import verify_compressed, verify_sample
from solver.flow.csr import IndexedFabric
from solver.io import templates


def _setup(zones: int, racks: int, nested: bool = True):
    topo = templates.clos3(zones=zones, racks_per_zone=racks)
    fabric = IndexedFabric.from_topology(topo)
    sym = box_symmetry(topo, fabric, nested=nested)
    assert sym is not None
    opt = compute_optimum(fabric, sinks=sym.sinks(fabric))
    caps = trim_shared_links(fabric, list(opt.caps), opt.k, sym)
    return topo, fabric, sym, opt, dict(zip(fabric.edges, caps))


def _expanded(sym, rep_caps):
    """The full compute graph: every representative edge moved to every box."""
    full = {}
    for (x, y), c in rep_caps.items():
        for b in range(sym.boxes):
            full[(sym.translate(x, b), sym.translate(y, b))] = c
    return full


def test_parts_below_a_rack_switch_are_hosts():
    topo = templates.clos3(zones=1, racks_per_zone=2)
    fabric = IndexedFabric.from_topology(topo)
    parts = PartsBelow(fabric)
    index = {name: i for i, name in enumerate(fabric.names)}
    rtsw = index["z0.r0.rtsw"]
    below = parts(int(parts.hops[rtsw]))
    assert below[rtsw] == -1
    # the 8 GPUs of a host with its NVSwitch and NICs are one part, the other host another
    assert len({int(below[index[f"b0.gpu{i}"]]) for i in range(8)}) == 1
    assert below[index["b0.gpu0"]] == below[index["b0.nvsw"]] == below[index["b0.nic3"]]
    assert below[index["b0.gpu0"]] != below[index["b1.gpu0"]]
    # one tier up, the rack is one part
    ctsw = index["z0.ctsw0"]
    up = parts(int(parts.hops[ctsw]))
    assert up[index["b0.gpu0"]] == up[index["b1.gpu0"]] == up[rtsw]


def test_a_rack_switch_plan_keeps_the_splitting_invariant():
    # a rack of two hosts on one switch: a plan that sends units out of a host and back into it
    # through the rack switch starves the host's uplinks (this returned None before)
    _, fabric, sym, opt, caps = _setup(1, 4, nested=False)
    assert not sym.nested
    result = split_by_plans(fabric, caps, opt.k, sym)
    assert result is not None
    assert invariant_holds(fabric, result.caps, opt.k, list(fabric.compute))


@pytest.mark.parametrize(("zones", "racks"), [(2, 4), (4, 8)])
def test_nested_plans_keep_the_invariant(zones, racks):
    _, fabric, sym, opt, caps = _setup(zones, racks)
    assert sym.nested  # the zone spines move with period = zones
    split = split_orbits(fabric, caps, opt.k, sym)
    assert split is not None
    rep_caps, paths = split
    # every representative has its tail in box 0; its record holds physical paths
    links = set(fabric.edges)
    for (x, y), c in rep_caps.items():
        assert sym.box_of[x] == 0 and fabric.is_compute[y]
        assert sum(paths[(x, y)].values()) == c
        for path in paths[(x, y)]:
            assert path[0] == x and path[-1] == y
            assert all((a, b) in links for a, b in zip(path, path[1:]))
    full = _expanded(sym, rep_caps)
    assert invariant_holds(fabric, full, opt.k, list(fabric.compute))


def test_edge_representatives_put_the_longer_cycle_at_phase_zero():
    _, fabric, sym, opt, caps = _setup(2, 4)
    splitter = _OrbitSplitter(fabric, caps, opt.k, sym)
    index = {name: i for i, name in enumerate(fabric.names)}
    spine, core = index["z1.ctsw3"], index["atsw3"]
    assert sym.period[spine] == 2 and sym.period[core] == 1
    (a, b), shift = splitter.key(spine, core)
    assert (a, b) == (index["z0.ctsw3"], core) and shift == 1
    # a zone spine meets every rack of its zone: the phase-0 copy holds them all
    rtsws = {fabric.names[v] for v in splitter.graph.inn[index["z0.ctsw0"]]}
    assert rtsws == {f"z0.r{r}.rtsw" for r in range(4)} | {"atsw0"}


@pytest.mark.parametrize(("zones", "racks"), [(2, 4), (4, 8)])
def test_a_three_tier_clos_has_a_compressed_plan_at_the_optimum(zones, racks):
    topo = templates.clos3(zones=zones, racks_per_zone=racks)
    plan = solve_compressed(topo)
    fabric = IndexedFabric.from_topology(topo)
    assert plan.order == zones * racks  # one box per rack: the odometer σ
    assert plan.algbw_exact == compute_optimum(fabric).algbw
    verify_compressed(plan)
    assert len(verify_sample(plan, count=4, seed=1)) == 4
    if zones * racks <= 8:
        verify_schedule(plan.expand())  # every expanded tree and link load, from scratch


def test_a_superpod_plan_spreads_spine_units_with_a_larger_k():
    # SU leaves (period = SUs) see the spines (period = pods) as fixed: a spine's units must
    # reach every DGX node of the SU alike, which is not whole at the optimum's k
    topo = templates.superpod(sus=4, nodes_per_su=4)
    fabric = IndexedFabric.from_topology(topo)
    sym = box_symmetry(topo, fabric, nested=True)
    assert sym is not None and sym.nested and sym.boxes == 16
    opt = compute_optimum(fabric, sinks=sym.sinks(fabric))
    caps = trim_shared_links(fabric, list(opt.caps), opt.k, sym)
    m = divisibility_factor(fabric, sym, caps)
    assert m > 1
    assert split_orbits(fabric, dict(zip(fabric.edges, caps)), opt.k, sym) is None
    scaled = {e: c * m for e, c in zip(fabric.edges, caps)}
    assert split_orbits(fabric, scaled, opt.k * m, sym) is not None
    plan = solve_compressed(topo)
    assert plan.order == 16 and plan.base.k == opt.k * m
    assert plan.algbw_exact == opt.algbw
    verify_compressed(plan)


def test_only_tight_parts_are_entered_once():
    # a SuperPOD's DGX nodes and pods have no ingress to spare, its SUs do
    topo = templates.superpod(sus=16, nodes_per_su=4)
    fabric = IndexedFabric.from_topology(topo)
    sym = box_symmetry(topo, fabric, nested=True)
    opt = compute_optimum(fabric, sinks=sym.sinks(fabric))
    caps = trim_shared_links(fabric, list(opt.caps), opt.k, sym)
    m = divisibility_factor(fabric, sym, caps)
    rep_caps, _ = split_orbits(
        fabric, {e: c * m for e, c in zip(fabric.edges, caps)}, opt.k * m, sym
    )
    packer = _LazyOrbitPacker(fabric, sym, rep_caps, opt.k * m)
    comp = list(fabric.compute)
    assert [len(set(level[comp].tolist())) for level in packer.levels] == [64, 16, 4]
    assert packer.tight == [True, False, True]
