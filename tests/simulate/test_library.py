"""The library (NCCL/RCCL tuner) model against real public logs, and its rules."""

from __future__ import annotations

import pytest

from solver.io import templates as T
from solver.simulate import calibration as C
from solver.simulate import library as L
from solver.simulate import sweep

GIB = 1 << 30


@pytest.mark.parametrize("log", C.LOGS, ids=lambda g: g.file)
def test_library_model_within_10_percent_at_1gib_and_above(log):
    points = [p for p in C.compare([log], GIB)]
    assert len(points) >= 3, "each real log has several sizes >= 1 GiB"
    if log.file.startswith("nccl_allreduce_h100_a3mega"):
        # Held out. GPUDirect-TCPXO ramps up more slowly than NCCL's model: +22 % at 1 GiB,
        # +11 % at 4 GiB; within 10 % only from 8 GiB (reported in README, not hidden).
        big = [p for p in points if p.size >= 8 * GIB]
        assert big and all(abs(p.error) <= 0.10 for p in big), [(p.size, p.error) for p in big]
        assert all(p.error > 0 for p in points)  # the model is optimistic here, never pessimistic
        return
    bad = [(p.size, round(p.error, 3)) for p in points if abs(p.error) > 0.10]
    assert not bad, bad


def test_calibration_fit_reproduces_the_constants():
    net, xgmi, worst = C.fit(steps=11)  # grid step 0.04
    assert abs(net - L.NET_EFFICIENCY) <= 0.04 + 1e-9
    assert abs(xgmi - L.XGMI_EFFICIENCY) <= 0.04 + 1e-9
    assert worst <= 0.05


def test_held_out_logs_are_not_used_by_the_fit():
    held = [g for g in C.LOGS if g.held_out]
    calib = [g for g in C.LOGS if not g.held_out]
    assert len(held) >= 2 and len(calib) >= 3
    assert {g.measurement().tool for g in held} == {"nccl-tests", "rccl-tests"}


def test_log_fabrics_have_the_published_shape():
    sh = L.shape_of(C.LOGS[1].topology())  # 2x MI300X
    assert (sh.ranks, sh.boxes, sh.ppn, sh.intra, sh.net) == (16, 2, 8, 7 * 64, 8 * 50)
    sh = L.shape_of(T.dgx_h100_rail(2))
    assert (sh.boxes, sh.ppn, sh.intra, sh.net, sh.nvswitch) == (2, 8, 450, 400, True)
    sh = L.shape_of(T.dgx_a100(1))
    assert (sh.boxes, sh.net, sh.intra) == (1, 0.0, 300)


def test_tuner_picks_like_nccl():
    # NVLS only where the fabric has NVSwitch and the library can use it (Hopper+)
    h100 = L.tuner(T.dgx_h100_rail(2), "allreduce")
    assert h100.best(GIB)[0].label == "NVLSTree/Simple"
    a100 = L.tuner(T.dgx_a100(2), "allreduce")
    assert {c.algorithm for c in a100.choices} == {"Ring", "Tree"}
    # small messages use a low-latency protocol, large ones Simple
    assert a100.best(4096)[0].protocol == "LL"
    assert a100.best(4 * GIB)[0].protocol == "Simple"
    # allgather has no Tree; PAT only with one GPU per box
    ag = L.tuner(T.dgx_a100(2), "allgather")
    assert {c.algorithm for c in ag.choices} == {"Ring"}
    # ring bus bandwidth: min(NVLink * 8/7, NICs) across boxes; at 4 GiB ~ the bandwidth term
    ring = next(c for c in ag.choices if c.label == "Ring/Simple")
    bus = min(300 * L.NVLINK_EFFICIENCY["ampere"] * 8 / 7, 8 * 25 * L.NET_EFFICIENCY)
    assert ring.bw == pytest.approx(bus * 16 / 15)


def test_latency_follows_tuning_cc_ring_formula():
    tu = L.tuner(T.dgx_a100(1), "allreduce")
    ll = next(c for c in tu.choices if c.label == "Ring/LL")
    # tuning.cc: baseLat 6.6 + nsteps (2 * 7) x NVLink Ring LL 0.6 us
    assert ll.latency_us == pytest.approx(6.6 + 14 * 0.6)


def test_library_efficiency_derates_links_for_every_algorithm():
    topo = T.dgx_a100(2)
    d = L.derated(topo)
    eff = L.link_efficiency(topo)
    for a, b, e in zip(topo.links, d.links, eff):
        assert float(b.bandwidth) == pytest.approx(float(a.bandwidth) * e, rel=1e-3)
    assert set(eff) == {L.NVLINK_EFFICIENCY["ampere"], L.NET_EFFICIENCY}


def test_sweep_reports_nccl_choice_and_in_switch_note():
    from solver import solve

    topo = T.dgx_h100_rail(2)
    sched = solve(topo, "allreduce")
    lib = L.library_for(topo)
    sw = sweep(topo, "allreduce", ["forestcoll", "nccl"], [1 << 20, GIB], schedule=sched, library=lib)
    nccl = sw.table("nccl")
    assert [r.choice for r in nccl] == ["Tree/LL128", "NVLSTree/Simple"]
    fc = sw.table("forestcoll")[1]
    # ForestColl pays the same NVLink/NIC efficiency: below the line-rate bound
    assert fc.algbw < 0.92 * sched.optimal_algbw
    # NVLS reduces in the switch: the note says it beats the bound instead of hiding it
    assert nccl[1].algbw > sched.optimal_algbw
    assert "beats the ForestColl bound" in sw.in_switch_note()


def test_parse_library():
    assert L.parse_library("nccl:hopper:nvls") == L.Library("nccl", "hopper", True)
    assert L.parse_library("rccl") == L.Library("rccl", "cdna3", False)
    with pytest.raises(Exception, match="bad library"):
        L.parse_library("mpi")
