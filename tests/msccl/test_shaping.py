"""Schedules shaped to a runtime's threadblock limit (solver.msccl.shaping).

A wide switch becomes a circulant graph of at most P partners per GPU; the schedule solved on
it runs on the real fabric's paths, passes the verifier there, and its cost is exact.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from fractions import Fraction

import pytest

from solver import solve
from solver.algorithm.verify import verify_schedule
from solver.io.templates import dgx_h100_rail
from solver.model.errors import SolverError
from solver.msccl import build_program, check_program, shape
from solver.msccl.shaping import shaped_fabric


def partners(schedule) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for _, tree in schedule.all_trees():
        for e in tree.edges:
            out[e.src].add(e.dst)
            out[e.dst].add(e.src)
    return out


@pytest.fixture(scope="module")
def rail4():
    return solve(dgx_h100_rail(4), "allgather", max_trees_per_root=1)


def test_the_logical_fabric_is_a_circulant_graph_within_the_real_bandwidths():
    real = dgx_h100_rail(4)
    fabric, paths, switches = shaped_fabric(real, 2)
    # NVSwitches (8 GPUs) and rail switches (4 GPUs) are wider than 3: all shaped
    assert len(switches) == 4 + 8 and not set(switches) & set(fabric.node_ids)
    bw = fabric.directed_bandwidths()
    real_bw = real.directed_bandwidths()
    out: dict[str, Fraction] = defaultdict(Fraction)
    for (u, v), b in bw.items():
        out[u] += b
        path = paths[(u, v)]
        assert path[0] == u and path[-1] == v and all(hop in real_bw for hop in zip(path, path[1:]))
    # rail: a GPU's two partners at 25 GB/s = its 50 GB/s NIC; box: two at 225 = its 450 NVLink
    assert out["b0.gpu0"] == 450 + 50
    assert bw[("b0.gpu0", "b1.gpu0")] == 25 and bw[("b0.gpu0", "b0.gpu1")] == 225


def test_the_shaped_schedule_is_verified_on_the_real_fabric_and_its_cost_exact(rail4):
    shaped = shape(rail4, 2)
    s = shaped.schedule
    assert s.topology == rail4.topology
    verify_schedule(s)  # again, independently of shape()
    assert max(len(p) for p in partners(s).values()) <= 4  # 2 in the box, 2 on the rail
    assert max(len(p) for p in partners(rail4).values()) == 10  # 7 + 3 unshaped
    assert shaped.optimum == rail4.optimal_algbw_exact == Fraction(16000, 31)
    assert shaped.cost == 1 - s.algbw_exact / rail4.algbw_exact and s.algbw_exact == 400
    program = build_program(s, "rccl")
    assert program.num_threadblocks() < 10
    check_program(program, "rccl")


def test_a_forged_shaped_schedule_fails_the_verifier(rail4):
    s = shape(rail4, 2).schedule
    with pytest.raises(SolverError):
        verify_schedule(replace(s, algbw_exact=s.algbw_exact * 2))
    tree = s.trees[0]
    edge = next(e for e in tree.edges if len(e.path) == 5)  # a rail hop: gpu nic rail nic gpu
    cut = replace(edge, path=(edge.src, edge.dst))  # as if the logical link existed
    forged = replace(tree, edges=tuple(cut if e is edge else e for e in tree.edges))
    with pytest.raises(SolverError, match="not a directed link"):
        verify_schedule(replace(s, trees=(forged,) + s.trees[1:]))


def test_only_switches_wider_than_the_partners_are_shaped():
    fabric, _paths, switches = shaped_fabric(dgx_h100_rail(16), 13)
    assert switches == tuple(f"rail{j}" for j in range(8))
    deg = defaultdict(int)
    for link in fabric.links:
        if link.source.endswith("gpu0") and link.target.endswith("gpu0"):
            deg[link.source] += 1
            deg[link.target] += 1
    assert set(deg.values()) == {7}  # 16 GPUs, offsets 1, 2, 4, 8: i±1, i±2, i±4 and i+8 = i-8
