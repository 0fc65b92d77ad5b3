"""The hierarchical NVLS allreduce as a simulated line (``forestcoll-nvls``): at or below the
capability optimum, above the library's own NVLS line at large sizes (it moves M per GPU link
each way where NCCL's NVLS moves (p+1)/p·M, at the same calibrated efficiency), and only on
fabrics whose switches reduce and multicast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import solver
from solver.algorithm.capability_bounds import capability_bounds, index_fabric
from solver.cli import main
from solver.io import templates as T
from solver.simulate import NVLS, forward_only_bound, sweep
from solver.simulate import library as L
from solver.simulate.hierarchical_nvls import NVLS_LATENCY_US, NvlsModel

GIB = 1 << 30
SIZES = [1 << 20, 64 << 20, GIB]


@pytest.fixture(scope="module")
def one_box():
    topo = T.make("dgx_h100_rail", n=1)
    return topo, sweep(topo, "allreduce", [NVLS, "nccl"], SIZES, library=L.library_for(topo))


@pytest.fixture(scope="module")
def two_boxes():
    topo = T.make("dgx_h100_rail", n=2)
    return topo, sweep(topo, "allreduce", [NVLS, "nccl"], SIZES, library=L.library_for(topo))


def _algbw(sw, name, size):
    return next(r.algbw for r in sw.table(name) if r.size == size)


@pytest.mark.parametrize("which", ["one_box", "two_boxes"])
def test_at_or_below_the_capability_optimum_and_above_forwarding(which, request):
    topo, sw = request.getfixturevalue(which)
    cap = float(capability_bounds(topo, "allreduce").capability)
    rows = sw.table(NVLS)
    assert [r.size for r in rows] == SIZES
    for r in rows:
        assert r.algbw <= cap
        assert r.size / r.bound_time / 1e9 == pytest.approx(cap)  # its bound is the capability one
    # at 1 GiB the in-switch schedule beats every forward-only schedule on these links
    assert _algbw(sw, NVLS, GIB) > forward_only_bound(topo, "allreduce")


def test_one_box_is_the_library_nvls_with_m_instead_of_p_plus_1_over_p(one_box):
    topo, sw = one_box
    lib = next(r for r in sw.table("nccl") if r.size == GIB)
    assert lib.choice == "NVLS/Simple"
    ours = _algbw(sw, NVLS, GIB)
    # same efficiency and latency: the time ratio is below (p+1)/p = 9/8 only by the latency
    assert 1.0 < ours / lib.algbw <= 9 / 8
    eff = L.NVLS_LINK_EFFICIENCY["hopper"]
    assert GIB / ours / 1e9 == pytest.approx(GIB / (450e9 * eff) + NVLS_LATENCY_US * 1e-6)


def test_two_boxes_beat_the_library_nvls_tree_and_simulate_the_rails(two_boxes):
    topo, sw = two_boxes
    lib = next(r for r in sw.table("nccl") if r.size == GIB)
    assert lib.choice.startswith("NVLSTree")
    assert _algbw(sw, NVLS, GIB) > lib.algbw
    model = NvlsModel(topo, L.derated(topo, L.library_for(topo)), "hopper", False, 1.0)
    assert len(model.schedule.schedules) == 8 and model.concurrent
    run = model.run(GIB, sw.chunk, sw.min_chunks)
    # the rails' part is simulated: never faster than its own forward-only optimum on its links
    sub = index_fabric(L.derated(topo, L.library_for(topo)), model.schedule.plan.domains, 0)
    assert run.between >= (GIB / 8) / (forward_only_bound(sub, "allreduce") * 1e9)
    assert run.time == pytest.approx(max(run.domain, run.between) + NVLS_LATENCY_US * 1e-6)


def test_line_rate_on_one_box_approaches_m_over_b():
    topo = T.make("dgx_h100_rail", n=1)
    sw = sweep(topo, "allreduce", [NVLS], [4 * GIB])
    assert 0.99 * 450 < sw.rows[0].algbw <= 450


def test_left_out_without_marked_switches_and_said_for_allgather():
    a100 = T.make("dgx_a100", n=1)
    sw = sweep(a100, "allreduce", [NVLS, "nccl"], [1 << 20])
    assert not sw.table(NVLS) and NVLS not in sw.notes
    h100 = T.make("dgx_h100_rail", n=1)
    sw = sweep(h100, "allgather", [NVLS, "nccl"], [1 << 20])
    assert not sw.table(NVLS)
    assert "skipped" in sw.notes[NVLS][0] and "cut bound" in sw.notes[NVLS][0]


def test_cli_simulate_prints_the_line(capsys):
    sample = Path(solver.__file__).parents[1] / "sample_topologies" / "dgx_h100_rail_2x.json"
    code = main(
        [
            "simulate",
            str(sample),
            "--collective",
            "allreduce",
            "--sizes",
            "1G",
            "--algorithms",
            f"{NVLS},nccl",
            "--json",
        ]
    )
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    rows = [r for r in doc["rows"] if r["algorithm"] == NVLS]
    assert len(rows) == 1 and 270 < rows[0]["algbw"] <= 400
    assert rows[0]["bound_algbw"] == pytest.approx(400)
    assert any("hierarchical NVLS" in n for n in doc["notes"][NVLS])


def test_a_schedule_that_cannot_be_built_is_a_note_not_a_failed_sweep(monkeypatch):
    from solver.model.errors import SolverError
    from solver.simulate import hierarchical_nvls

    def refuse(topo, solve=None):
        raise SolverError("index 3: over the cost limit")

    monkeypatch.setattr(hierarchical_nvls, "build_hierarchical", refuse)
    sw = sweep(T.make("dgx_h100_rail", n=2), "allreduce", [NVLS, "nccl"], [1 << 20])
    assert not sw.table(NVLS) and sw.table("nccl")
    assert sw.notes[NVLS] == (
        "skipped: no hierarchical NVLS schedule: index 3: over the cost limit",
    )
