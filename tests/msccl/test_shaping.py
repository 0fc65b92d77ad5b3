"""Schedules shaped to a runtime's threadblock limit (solver.msccl.shaping).

A wide switch becomes a grid of smaller switches (at most P partners per GPU); the schedule
solved on it runs on the real fabric's paths, passes the verifier there, and its cost is exact.
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
from solver.msccl import MscclError, build_program, check_program, shape
from solver.msccl.shaping import grid, shaped_fabric


def partners(schedule) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for _, tree in schedule.all_trees():
        for e in tree.edges:
            out[e.src].add(e.dst)
            out[e.dst].add(e.src)
    return out


@pytest.fixture(scope="module")
def rail8():
    return solve(dgx_h100_rail(8), "allgather", max_trees_per_root=1)


def test_grids():
    assert grid(128, 16) == (3, 6)  # 3 lines of up to 6 GPUs through each GPU: 15 partners
    assert grid(128, 22) == (2, 12)
    assert grid(128, 7) == (7, 2)  # a hypercube
    assert grid(128, 6) is None


def test_the_logical_fabric_splits_each_wide_switch_within_its_bandwidth():
    real = dgx_h100_rail(16)
    fabric, back, switches = shaped_fabric(real, 7)
    assert switches == tuple(f"rail{j}" for j in range(8))  # 16 GPUs each; NVSwitches have 8
    lines = [n.id for n in fabric.nodes if n.id.startswith("rail0~")]
    assert len(lines) == 8 and all(back["switch"][x] == "rail0" for x in lines)  # 2 dims x 4 lines
    bw = fabric.directed_bandwidths()
    gpu0 = {v: b for (u, v), b in bw.items() if u == "b0.gpu0"}
    assert gpu0 == {"b0.nvsw": 450, "rail0~0:0": 25, "rail0~1:0": 25}  # its NIC's 50 in halves
    assert back["chain"][("rail0", "b0.gpu0")] == ("b0.gpu0", "b0.nic0", "rail0")
    with pytest.raises(MscclError, match="nothing to shape"):
        shaped_fabric(real, 22)


def test_the_shaped_schedule_is_verified_on_the_real_fabric_and_its_cost_exact(rail8):
    shaped = shape(rail8, 3)
    s = shaped.schedule
    assert s.topology == rail8.topology and len(shaped.switches) == 16
    verify_schedule(s)  # again, independently of shape()
    assert max(len(p) for p in partners(rail8).values()) == 14  # 7 in the box + 7 on the rail
    assert max(len(p) for p in partners(s).values()) <= 6  # 3 + 3 (hypercubes of 8)
    assert shaped.optimum == shaped.shaped_optimum == rail8.optimal_algbw_exact == Fraction(3200, 7)
    assert s.algbw_exact == Fraction(3200, 9) and shaped.cost == Fraction(2, 9)
    program = build_program(s, "rccl")
    assert program.num_threadblocks() <= 8
    check_program(program, "rccl")


def test_a_forged_shaped_schedule_fails_the_verifier(rail8):
    s = shape(rail8, 3).schedule
    with pytest.raises(SolverError):
        verify_schedule(replace(s, algbw_exact=s.algbw_exact * 2))
    tree = s.trees[0]
    edge = next(e for e in tree.edges if len(e.path) == 5)  # a rail hop: gpu nic rail nic gpu
    cut = replace(edge, path=(edge.src, "rail0~0:0", edge.dst))  # a logical switch
    forged = replace(tree, edges=tuple(cut if e is edge else e for e in tree.edges))
    with pytest.raises(SolverError, match="unknown node|not a directed link"):
        verify_schedule(replace(s, trees=(forged,) + s.trees[1:]))
