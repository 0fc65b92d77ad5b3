"""The library (NCCL/RCCL tuner) model against real public logs, and its rules."""

from __future__ import annotations

from dataclasses import replace

import pytest

from solver.io import templates as T
from solver.simulate import calibration as C
from solver.simulate import library as L
from solver.simulate import sweep

GIB = 1 << 30


@pytest.mark.parametrize("log", C.LOGS, ids=lambda g: g.file)
def test_library_model_within_10_percent_at_1gib_and_above(log):
    points = [p for p in C.compare([log], GIB)]
    # every log has several sizes >= 1 GiB (SkyPilot's TCPX table, Lambda's and Crusoe's runs
    # stop at 2 GiB)
    short = log.busbw_table[0] or "lambda" in log.file or "crusoe" in log.file
    assert len(points) >= (2 if short else 3)
    if log.known_gap:  # reported in docs/simulation.md; still within 2x
        assert log.held_out and all(0.5 <= 1 + p.error <= 2.0 for p in points)
        return
    bad = [(p.size, round(p.error, 3)) for p in points if abs(p.error) > 0.10]
    assert not bad, bad


def test_a3_mega_runs_the_tree_gcp_imposes_and_pays_its_pipeline_fill():
    log = next(g for g in C.LOGS if g.file.startswith("nccl_allreduce_h100_a3mega"))
    tu = L.tuner(log.topology(), "allreduce")
    # NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple, NVLS off, tuner plugin: Tree at every size
    assert {c.label for c in tu.choices} == {"Tree/Simple"}
    tree = tu.choices[0]
    assert tree.chunk == (8 << 20) // 8  # NCCL_BUFFSIZE=8M over NCCL_STEPS=8
    # up to one chunk per channel (16 MiB here) the data crosses the 16 hops one after another;
    # beyond, only the first chunk pays the path: the time is affine in the size
    t = [tu.best(s)[1] for s in (16 << 20, 32 << 20, 64 << 20)]
    assert t[2] - t[1] == pytest.approx(2 * (t[1] - t[0]), rel=1e-9)
    small = [tu.best(s)[1] for s in (1 << 20, 2 << 20, 4 << 20)]
    assert small[2] - small[1] == pytest.approx(2 * (small[1] - small[0]), rel=1e-9)
    assert (small[1] - small[0]) / (1 << 20) > 4 * (t[2] - t[1]) / (32 << 20)
    # without the fill the model would be >= 10 % optimistic at 1 GiB
    stream = GIB / (tree.bw * 1e9) + tree.latency_us * 1e-6
    assert tu.best(GIB)[1] > 1.1 * stream


def test_calibration_fit_reproduces_the_constants():
    net, xgmi, worst = C.fit(steps=11)  # grid step 0.04
    assert abs(net - L.NET_EFFICIENCY) <= 0.04 + 1e-9
    assert abs(xgmi - L.XGMI_EFFICIENCY) <= 0.04 + 1e-9
    assert worst <= 0.07  # minimax over the calibration logs (0.057 on the fine grid)


def test_held_out_logs_are_not_used_by_the_fit():
    held = [g for g in C.LOGS if g.held_out]
    calib = [g for g in C.LOGS if not g.held_out]
    assert len(held) >= 4 and len(calib) >= 4
    assert {g.measurement().collective for g in held} == {"allgather", "allreduce"}
    # held out: NVIDIA and AMD, one to eight boxes
    assert {L.library_for(g.topology()).name for g in held} == {"nccl", "rccl"}
    assert {L.shape_of(g.topology()).boxes for g in held} == {1, 2, 4, 8}
    # the fit sees only the calibration logs: breaking every held-out log changes nothing
    before = C.fit(steps=6)
    saved = C.LOGS
    try:
        C.LOGS = tuple(replace(g, build=lambda: T.dgx_a100(2)) if g.held_out else g for g in saved)
        assert C.fit(steps=6) == before
    finally:
        C.LOGS = saved


def test_mid_sizes_within_2x_where_the_tuner_latencies_apply():
    """1-64 MiB: the tuner latencies (NCCL's, RCCL's for rccl) and the per-call cost across
    boxes put every log within 2x, except the 2-node MI300X calibration run, whose RCCL 2.22.3
    takes 218 us even for 8 bytes (5x the 40 us of the MI355X run with RCCL 2.26.6): a latency
    of that cluster the tuner's constants do not know."""
    for log in C.LOGS:
        mid = [p for p in C.compare([log]) if p.size <= 64 << 20]
        if log.file == "rccl_allreduce_mi300x_2node.log":
            assert max(p.error for p in mid) > 1.0  # reported in the README table, not hidden
            assert log.measurement().time_used[0] > 200e-6
            continue
        bad = [(p.size >> 20, round(p.error, 2)) for p in mid if not 0.5 <= 1 + p.error <= 2.0]
        assert not bad, (log.file, bad)


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

    # one DGX H100: NVLS reduces in the switch and beats the forward-only bound
    topo = T.dgx_h100_rail(1)
    sched = solve(topo, "allreduce")
    lib = L.library_for(topo)
    sw = sweep(
        topo, "allreduce", ["forestcoll", "nccl"], [1 << 20, GIB], schedule=sched, library=lib
    )
    nccl = sw.table("nccl")
    assert [r.choice for r in nccl] == ["Ring/LL", "NVLS/Simple"]
    fc = sw.table("forestcoll")[1]
    # ForestColl pays the same NVLink efficiency: below the line-rate bound
    assert fc.algbw < 0.92 * sched.optimal_algbw
    # NVLS reduces in the switch: the note says it beats the bound instead of hiding it
    assert nccl[1].algbw > sched.optimal_algbw
    assert "beats the ForestColl bound" in sw.in_switch_note()
    # ... and names the capability optimum it stays under (one DGX H100: 450, exact)
    assert "stays at or below the capability optimum 450.0 GB/s (exact" in sw.in_switch_note()
    # two boxes: NVLSTree, capped by its 8 heads x 57.7 GB/s (tuning.cc perChMaxNVLSTreeBws),
    # stays under the forward-only bound there, so no note
    topo = T.dgx_h100_rail(2)
    sched = solve(topo, "allreduce")
    sw = sweep(topo, "allreduce", ["forestcoll", "nccl"], [GIB], schedule=sched)
    (row,) = sw.table("nccl")
    assert row.choice == "NVLSTree/Simple" and row.algbw < sched.optimal_algbw
    assert not sw.in_switch_note()


def test_parse_library():
    assert L.parse_library("nccl:hopper:nvls") == L.Library("nccl", "hopper", True)
    assert L.parse_library("rccl") == L.Library("rccl", "cdna3", False)
    lib = L.parse_library("nccl:hopper:algo=Ring+Tree:proto=simple:buffsize=8M:allreduce=tree")
    assert lib.algos == ("Ring", "Tree") and lib.protos == ("Simple",)
    assert lib.buffsize == 8 << 20 and lib.forced == (("allreduce", "Tree"),)
    assert lib.allows("Tree", "Simple", "allreduce") and not lib.allows(
        "Ring", "Simple", "allreduce"
    )
    assert lib.allows("Ring", "Simple", "allgather") and not lib.allows("Ring", "LL", "allgather")
    with pytest.raises(Exception, match="bad library"):
        L.parse_library("mpi")
    for bad in ("nccl:hopper:algo=ringg", "nccl:hopper:buffsize=huge", "nccl:hopper:fast"):
        with pytest.raises(Exception, match="bad"):
            L.parse_library(bad)
