"""Orbit-level splitting and packing equal the full σ-equivariant ones, restricted to box 0."""

from __future__ import annotations

import pytest

from solver.algorithm.optimum import compute_optimum
from solver.algorithm.orbit_packing import pack_by_orbits
from solver.algorithm.orbit_plan import pack_orbits, split_orbits
from solver.algorithm.plan_split import split_by_plans
from solver.algorithm.symmetry import box_symmetry
from solver.flow.csr import IndexedFabric
from solver.io import templates

FABRICS = {
    "3x H100 rail": lambda: templates.dgx_h100_rail(3),
    "4x H100 rail": lambda: templates.dgx_h100_rail(4),
    "2x A100": lambda: templates.dgx_a100(2),
    "4x A100": lambda: templates.dgx_a100(4),
    "4x MI250": lambda: templates.mi250(4),
}


@pytest.mark.parametrize("name", list(FABRICS))
def test_orbit_split_and_packing_match_the_full_ones(name):
    topo = FABRICS[name]()
    fabric = IndexedFabric.from_topology(topo)
    sym = box_symmetry(topo, fabric, structural=False)
    assert sym is not None
    opt = compute_optimum(fabric, sinks=sym.representatives(fabric))
    caps = dict(zip(fabric.edges, opt.caps))
    full = split_by_plans(fabric, caps, opt.k, sym)
    orbit = split_orbits(fabric, caps, opt.k, sym)
    assert full is not None and orbit is not None
    rep_caps, paths = orbit
    box0 = {e: c for e, c in full.caps.items() if sym.box_of[e[0]] == 0}
    assert rep_caps == box0
    # the records hold the same physical paths in the same order (routing consumes them in order)
    for e in box0:
        assert list(paths[e].items()) == list(full.paths[e].items())
    assert pack_orbits(fabric, sym, rep_caps, opt.k) == pack_by_orbits(
        fabric, sym, full.caps, opt.k
    )
