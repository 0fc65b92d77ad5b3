"""Baselines (rings, double binary tree, direct, Blink-style) on the simulator: known ratios."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from solver import solve
from solver.io.templates import dgx_a100, fully_connected, mi250, ring
from solver.model.errors import ForestCollError
from solver.simulate import baselines as B
from solver.simulate import sweep
from solver.simulate.engine import simulate_routes
from solver.simulate.routes import BCAST, REDUCE, LinkTable, bandwidth_bound_time, link_bytes

GIB = 1 << 30
ROOT = Path(__file__).resolve().parents[2]


def algbw(rs, size=GIB, chunk=1 << 18):
    return size / simulate_routes(rs, size, chunk).time / 1e9


def bound_algbw(rs, size=GIB):
    return size / bandwidth_bound_time(rs, size) / 1e9


def spans(flow, nodes):
    reached = {flow.root}
    for src, dst, _ in flow.edges:
        reached.add(dst if flow.kind == BCAST else src)
    return reached == set(nodes)


@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter"])
@pytest.mark.parametrize("name", ["ring", "ring1"])
def test_ring_on_one_way_ring_reaches_the_bound(name, collective):
    topo = ring(8, 100, directed=True)
    opt = float(solve(topo, collective).optimal_algbw_exact)
    rs = B.build(name, topo, collective)
    assert bound_algbw(rs) == pytest.approx(opt, rel=1e-12)
    assert 0.97 * opt <= algbw(rs) <= opt * (1 + 1e-9)


def test_single_ring_on_full_duplex_ring_reaches_half():
    topo = ring(8, 100)
    opt = float(solve(topo, "allgather").optimal_algbw_exact)
    rs = B.build("ring1", topo, "allgather")
    assert bound_algbw(rs) == pytest.approx(opt / 2, rel=1e-12)
    assert algbw(rs) == pytest.approx(opt / 2, rel=0.03)
    # multi-channel rings use both directions (channels balanced on link load)
    multi = B.build("ring", topo, "allgather")
    assert bound_algbw(multi) == pytest.approx(opt, rel=1e-12)


def test_rings_are_hamiltonian_and_rotate_nics_on_dgx():
    topo = dgx_a100(2)
    routing = B.Routing(topo)
    orders = B.ring_orders(topo, routing=routing)
    assert len(orders) == 8
    gpus = set(topo.compute_ids)
    for order in orders:
        assert set(order) == gpus and len(order) == len(gpus)
    rs = B.build("ring", topo, "allgather", routing)
    table = LinkTable.of(topo)
    load = link_bytes(rs, GIB, table)
    for box in (0, 1):
        for j in range(8):
            out = table.index[(f"b{box}.gpu{j}", f"b{box}.nic{j}")]
            inn = table.index[(f"b{box}.nic{j}", f"b{box}.gpu{j}")]
            assert load[out] > 0 and load[inn] > 0  # every NIC carries traffic both ways
    # NIC-limited: each NIC carries one channel's share -> 25 GB/s * 8 * 16/15
    assert bound_algbw(rs) == pytest.approx(25 * 8 * 16 / 15, rel=1e-9)
    assert algbw(rs) >= 0.95 * bound_algbw(rs)


def test_ring_allreduce_busbw_matches_nccl_formula():
    topo = ring(8, 100, directed=True)
    sw = sweep(topo, "allreduce", ["ring"], [GIB])
    row = sw.rows[0]
    assert row.busbw == pytest.approx(row.algbw * 2 * 7 / 8)
    # ring allreduce moves 2(n-1)/n of the buffer over every link: busbw ~ link bandwidth
    assert 0.95 * 100 <= row.busbw <= 100 * (1 + 1e-9)


def test_direct_on_full_mesh_reaches_the_bound():
    topo = fully_connected(6, 50)
    opt = float(solve(topo, "allgather").optimal_algbw_exact)
    rs = B.build("direct", topo, "allgather")
    assert bound_algbw(rs) == pytest.approx(opt, rel=1e-12)
    assert algbw(rs) >= 0.97 * opt
    assert all(len(f.edges) == 5 for f in rs.flows)


def test_direct_relays_when_no_switch_path_exists():
    topo = dgx_a100(2)  # gpu0 (ib0) cannot reach gpu1 of the other box through switches only
    routing = B.Routing(topo)
    assert ("b0.gpu0", "b1.gpu1") in routing.relayed
    path = routing.route("b0.gpu0", "b1.gpu1")
    assert path[0] == "b0.gpu0" and path[-1] == "b1.gpu1" and len(path) > 4
    assert ("b0.gpu0", "b1.gpu0") not in routing.relayed
    rs = B.build("direct", topo, "allgather", routing)
    assert algbw(rs, 1 << 26) > 0


def test_double_binary_tree():
    topo = dgx_a100(2)
    rs = B.build("tree", topo, "allreduce")
    reduces = [f for f in rs.flows if f.kind == REDUCE]
    bcasts = [f for f in rs.flows if f.kind == BCAST]
    assert len(reduces) == len(bcasts) == 16  # 8 channels x 2 trees
    assert sum(f.share for f in reduces) == pytest.approx(1.0)
    for f in rs.flows:
        assert spans(f, topo.compute_ids)
    # the two trees of a channel have different roots
    assert reduces[0].root != reduces[1].root
    opt = float(solve(topo, "allreduce").optimal_algbw_exact)
    assert algbw(rs) <= opt * (1 + 1e-9)
    with pytest.raises(ForestCollError, match="allreduce only"):
        B.build("tree", topo, "allgather")


def test_blink_one_spanning_tree_per_root_and_deterministic():
    topo = mi250(1)
    a = B.build("blink", topo, "allgather")
    b = B.build("blink", topo, "allgather")
    assert a.flows == b.flows
    assert len(a.flows) == 16
    for f in a.flows:
        assert len(f.edges) == 15 and spans(f, topo.compute_ids)
    rs = B.build("blink", topo, "reduce-scatter")
    for f in rs.flows:
        assert f.kind == REDUCE and spans(f, topo.compute_ids)


def test_unknown_baseline():
    with pytest.raises(ForestCollError, match="unknown baseline"):
        B.build("hypercube", ring(4), "allgather")


def test_forestcoll_beats_rings_on_2x_mi250():
    topo = mi250(2)
    sched = solve(topo, "allgather")
    sw = sweep(topo, "allgather", ["forestcoll", "ring", "blink"], [GIB], schedule=sched)
    by = {r.algorithm: r for r in sw.rows}
    assert by["forestcoll"].algbw > 1.25 * by["ring"].algbw
    assert by["forestcoll"].algbw > by["blink"].algbw
    # rings are limited by the 16 GB/s NICs at best: 16 channels x 16 GB/s x 32/31
    assert by["ring"].algbw <= 16 * 16 * 32 / 31 * (1 + 1e-9)


@pytest.mark.parametrize(
    "path", sorted((ROOT / "sample_topologies").glob("*.json")), ids=lambda p: p.stem
)
def test_no_baseline_beats_the_optimum(path):
    from solver.io.formats import load

    topo = load(path)
    for coll in ("allgather", "allreduce"):
        sched = solve(topo, coll)
        sw = sweep(
            topo, coll, ["ring", "ring1", "tree", "direct", "blink"], [1 << 26], schedule=sched
        )
        for row in sw.rows:
            assert row.algbw <= sched.optimal_algbw * (1 + 1e-9), (coll, row.algorithm)
            assert row.time >= row.route_bound_time * (1 - 1e-9)
            assert np.isfinite(row.estimate_time)


# ----------------------------------------------------------------------------- progress, cancel
def test_builders_report_progress_in_order():
    for name in ("ring", "tree", "blink"):
        seen: list[float] = []
        B.build(name, mi250(2), "allreduce", check=seen.append)
        assert seen and seen[0] == 0.0 and all(0 <= f < 1 for f in seen), name
        assert seen == sorted(seen), name
    seen = []
    B.ring_orders(dgx_a100(2), check=seen.append)
    assert len(seen) >= 2 * 8  # one call per placed segment (8 channels x 2 boxes, then passes)


def test_a_build_stops_when_its_check_raises():
    from solver.model.errors import Cancelled

    def stop_half_way(fraction: float) -> None:
        if fraction >= 0.5:
            raise Cancelled("stop")

    for name in ("ring", "blink"):
        with pytest.raises(Cancelled):
            B.build(name, mi250(2), "allreduce", check=stop_half_way)


def test_sweep_cancels_while_building_routes_before_any_run():
    from solver.model.errors import Cancelled

    seen: list[str] = []
    with pytest.raises(Cancelled, match="building routes"):
        sweep(
            dgx_a100(2),
            "allgather",
            ["ring"],
            [1 << 20],
            progress=lambda text, _f: seen.append(text),
            cancel=lambda: bool(seen),
        )
    assert seen == ["build routes 0 %"]  # reported at once, stopped at the next check


def test_ring_chains_are_the_rotations_of_each_channel():
    # slow twin: root i's broadcast chain walks order[i] -> order[i+1] -> ... (n-1 hops); the
    # reduce-scatter chain ending at order[i] starts at order[i+1]
    topo = mi250(2)
    rs = B.ring(topo, "allreduce")
    routing = B.Routing(topo)
    flows = iter(rs.flows)
    reduce_flows = [f for f in rs.flows if f.kind == REDUCE]
    bcast_flows = [f for f in rs.flows if f.kind == BCAST]
    k = 0
    for order in rs.extra["orders"]:
        n = len(order)
        for i in range(n):
            step = [(order[(i + j) % n], order[(i + j + 1) % n]) for j in range(n - 1)]
            assert bcast_flows[k].edges == tuple((u, v, routing.route(u, v)) for u, v in step)
            step = [(order[(i + 1 + j) % n], order[(i + 2 + j) % n]) for j in range(n - 1)]
            assert reduce_flows[k].edges == tuple((u, v, routing.route(u, v)) for u, v in step)
            k += 1
    assert next(flows) is rs.flows[0] and k == len(bcast_flows) == len(reduce_flows)
