"""Sibling translations: nested boxes (a pod's scalable units, a unit's DGX nodes) that σ alone
does not move give orbits of a larger verified group, hence fewer max-flow sinks."""

import networkx as nx
import numpy as np
import pytest

from solver.algorithm import symmetry
from solver.algorithm.optimum import compute_optimum
from solver.algorithm.spare_trim import trim_shared_links
from solver.algorithm.symmetry import box_symmetry, refined_colours
from solver.flow.csr import IndexedFabric
from solver.io import templates


@pytest.fixture
def siblings_always(monkeypatch):
    monkeypatch.setattr(symmetry, "SIBLING_MIN_SINKS", 0)


def _superpod():
    # 16 SUs of one DGX node: 3 tiers, 4 pods; σ translates the pods only (the structural box
    # translation; box_symmetry itself finds the odometer of solver.algorithm.odometer)
    topo = templates.superpod(16, nodes_per_su=1)
    fabric = IndexedFabric.from_topology(topo)
    sym = symmetry.find_structural_box_symmetry(fabric)
    return topo, fabric, symmetry.with_sibling_orbits(fabric, sym)


def _flows_by_networkx(fabric, caps, k):
    g = nx.DiGraph()
    for (u, v), c in zip(fabric.edges, caps):
        if c:
            g.add_edge(u, v, capacity=c)
    for v in fabric.compute:
        g.add_edge("s", v, capacity=k)
    return {v: nx.maximum_flow_value(g, "s", v) for v in fabric.compute}


def test_sibling_orbits_are_the_rails(siblings_always):
    _topo, fabric, sym = _superpod()
    assert sym.boxes == 4 and len(sym.representatives(fabric)) == 32
    sinks = sym.sinks(fabric)
    assert len(sinks) == 8  # GPU j of every DGX node: one orbit per rail
    orbit = sym.orbit_of
    names = fabric.names
    for v in fabric.compute:
        assert names[v].split(".")[-1] == names[_sink_of(fabric, sinks, orbit, v)].split(".")[-1]


def _sink_of(fabric, sinks, orbit, v):
    return next(t for t in sinks if orbit[t] == orbit[v])


def test_orbits_never_join_nodes_refinement_tells_apart(siblings_always):
    _topo, fabric, sym = _superpod()
    colour = refined_colours(fabric)
    for o in np.unique(sym.orbit_of):
        members = np.flatnonzero(sym.orbit_of == o)
        assert len({colour[v] for v in members}) == 1


def test_one_flow_per_sibling_orbit_is_every_flow(siblings_always):
    """λ(s, v) on the optimum's and the trimmed capacities is the same for every v of an orbit
    (networkx, every compute node), so the sinks suffice; the optimum matches all sinks."""
    _topo, fabric, sym = _superpod()
    sinks = sym.sinks(fabric)
    opt = compute_optimum(fabric, sinks=sinks)
    assert opt.algbw == compute_optimum(fabric).algbw
    trimmed = trim_shared_links(fabric, list(opt.caps), opt.k, sym)
    assert trimmed != list(opt.caps)
    for caps in (list(opt.caps), trimmed):
        flows = _flows_by_networkx(fabric, caps, opt.k)
        for v in fabric.compute:
            assert flows[v] == flows[_sink_of(fabric, sinks, sym.orbit_of, v)]
        assert min(flows.values()) >= fabric.num_compute * opt.k


def test_few_representatives_keep_the_orbits_of_sigma():
    topo = templates.dgx_h100_rail(8)
    fabric = IndexedFabric.from_topology(topo)
    sym = box_symmetry(topo, fabric)
    assert sym.orbit_of is None
    assert sym.sinks(fabric) == sym.representatives(fabric)
