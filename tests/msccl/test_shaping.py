"""Schedules shaped to a runtime's threadblock limit (solver.msccl.shaping).

A wide switch becomes window switches (at most P partners per GPU); the schedule
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
from solver.msccl import ExportOptions, MscclError, build_program, check_program, shape
from solver.msccl.runtimes import RUNTIMES
from solver.msccl.shaping import shaped_fabric, window


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


def test_windows():
    assert window(128, 16) == 9  # each GPU on 9 windows: 8 neighbours each way, 16 partners
    assert window(16, 7) == 4
    assert window(4, 2) == 2 and window(3, 100) == 3


def test_the_logical_fabric_splits_each_wide_switch_within_its_bandwidth():
    real = dgx_h100_rail(16)
    fabric, back, switches = shaped_fabric(real, 7)
    assert switches == tuple(f"rail{j}" for j in range(8))  # 16 GPUs each; NVSwitches have 8
    windows = [n for n in fabric.nodes if n.id.startswith("rail0~")]
    assert len(windows) == 16 and all(back["switch"][n.id] == "rail0" for n in windows)
    assert {n.group for n in windows} == {f"b{i}" for i in range(16)}  # window i in box i
    bw = fabric.directed_bandwidths()
    gpu0 = {v: b for (u, v), b in bw.items() if u == "b0.gpu0"}
    quarter = Fraction(25, 2)  # its NIC's 50 GB/s over 4 windows: 0, 13, 14, 15
    assert gpu0 == {
        "b0.nvsw": 450,
        "rail0~w0": quarter,
        "rail0~w13": quarter,
        "rail0~w14": quarter,
        "rail0~w15": quarter,
    }
    assert back["chain"][("rail0", "b0.gpu0")] == ("b0.gpu0", "b0.nic0", "rail0")
    with pytest.raises(MscclError, match="nothing to shape"):
        shaped_fabric(real, 22)


def test_the_shaped_schedule_is_verified_on_the_real_fabric_and_its_cost_exact(rail8):
    shaped = shape(rail8, 3)
    s = shaped.schedule
    assert s.topology == rail8.topology and len(shaped.switches) == 16  # NVSwitches and rails
    verify_schedule(s)  # again, independently of shape()
    assert max(len(p) for p in partners(rail8).values()) == 14  # 7 in the box + 7 on the rail
    assert max(len(p) for p in partners(s).values()) <= 4  # windows of 2: 2 + 2
    assert shaped.optimum == shaped.shaped_optimum == rail8.optimal_algbw_exact == Fraction(3200, 7)
    assert s.algbw_exact == 400 and shaped.cost == Fraction(1, 8)
    program = build_program(s, ExportOptions(RUNTIMES["rccl"]))
    assert program.num_threadblocks() <= 6
    check_program(program, RUNTIMES["rccl"])


def test_a_forged_shaped_schedule_fails_the_verifier(rail8):
    s = shape(rail8, 3).schedule
    with pytest.raises(SolverError):
        verify_schedule(replace(s, algbw_exact=s.algbw_exact * 2))
    tree = s.trees[0]
    edge = next(e for e in tree.edges if len(e.path) == 5)  # a rail hop: gpu nic rail nic gpu
    cut = replace(edge, path=(edge.src, "rail0~w0", edge.dst))  # a logical switch
    forged = replace(tree, edges=tuple(cut if e is edge else e for e in tree.edges))
    with pytest.raises(SolverError, match="unknown node|not a directed link"):
        verify_schedule(replace(s, trees=(forged,) + s.trees[1:]))
