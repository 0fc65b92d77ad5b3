"""solve(): published figures, fixed k, other collectives, unbalanced switches, cancel, progress."""

import os
import subprocess
import sys
import threading
from fractions import Fraction

import pytest

import solver
from solver.algorithm.fixed_k import fixed_k_capacity
from solver.algorithm.optimum import compute_optimum
from solver.algorithm.verify import verify_schedule
from solver.flow.csr import IndexedFabric
from solver.io import templates
from solver.model.errors import Cancelled, SolverError, TopologyError
from solver.model.topology import Link, Node, Topology

FIGURES = [
    ("dgx_a100", 1, Fraction(2400, 7), 1),
    ("dgx_a100", 2, Fraction(1040, 3), 13),
    ("mi250", 1, Fraction(2400, 7), 3),
    ("mi250", 2, Fraction(5312, 15), 83),
    ("dgx_a100", 4, Fraction(800, 3), 1),
    ("mi250", 4, Fraction(1024, 3), 8),
]


def _fabric(name, boxes):
    return getattr(templates, name)(boxes)


def _check_trees(s):
    """Structure independent of solver.algorithm.verify: spanning, BFS order, physical switch-only paths."""
    topo = s.topology
    links = topo.directed_bandwidths()
    kinds = {n.id: n.kind for n in topo.nodes}
    total = {}
    for t in s.trees:
        total[t.root] = total.get(t.root, 0) + t.weight
        assert t.weight == Fraction(t.multiplicity, s.k)
        depth = t.depth_of()
        assert set(depth) == set(topo.compute_ids)
        order = [max(depth[e.src], depth[e.dst]) for e in t.edges]
        assert order == sorted(order)
        for e in t.edges:
            assert (e.path[0], e.path[-1]) == (e.src, e.dst)
            assert all(kinds[x] == "switch" for x in e.path[1:-1])
            assert all(pair in links for pair in zip(e.path, e.path[1:]))
    assert total == {c: 1 for c in topo.compute_ids}
    assert max(ll.load for ll in s.link_load) == 1
    assert all(0 <= ll.load <= 1 for ll in s.link_load)


@pytest.mark.parametrize("name, boxes, algbw, k", FIGURES)
def test_allgather_reaches_the_published_optimum(name, boxes, algbw, k):
    s = solver.solve(_fabric(name, boxes))
    assert s.collective == "allgather"
    assert s.optimal_algbw_exact == algbw
    assert s.algbw_exact == algbw
    assert s.k == k
    assert set(s.timings) == {"optimum", "switch_removal", "trees", "paths"}
    _check_trees(s)
    verify_schedule(s)
    cut = s.bottleneck
    assert (
        Fraction(len(s.topology.compute_ids)) * cut.egress_bandwidth / cut.compute_nodes_inside
        == algbw
    )


@pytest.mark.parametrize(
    "name, boxes, K, algbw",
    [
        ("dgx_a100", 2, 1, Fraction(2400, 7)),
        ("mi250", 2, 1, Fraction(320)),
        ("mi250", 2, 2, Fraction(1024, 3)),
        ("dgx_a100", 1, 1, Fraction(2400, 7)),
    ],
)
def test_fixed_k_figures(name, boxes, K, algbw):
    s = solver.solve(_fabric(name, boxes), max_trees_per_root=K)
    assert s.algbw_exact == algbw
    assert s.k <= K
    assert s.max_trees_per_root == K
    _check_trees(s)
    verify_schedule(s)


def test_fixed_k_exactly_8_on_2x_mi250_matches_reference():
    fabric = IndexedFabric.from_topology(templates.mi250(2))
    opt = compute_optimum(fabric)
    U, _caps = fixed_k_capacity(fabric, 8, opt.rate)
    assert float(32 * 8 / U) == pytest.approx(345.95, abs=0.01)


def test_fixed_k_is_bounded_and_non_decreasing():
    topo = templates.mi250(2)
    opt = solver.solve(topo).optimal_algbw_exact
    last = Fraction(0)
    for K in (1, 2, 3, 5, 8):
        s = solver.solve(topo, max_trees_per_root=K)
        assert last <= s.algbw_exact <= opt
        verify_schedule(s)
        last = s.algbw_exact


@pytest.mark.parametrize("collective", ["reduce-scatter", "allreduce"])
@pytest.mark.parametrize("name, boxes", [("dgx_a100", 2), ("mi250", 2)])
def test_other_collectives(collective, name, boxes):
    topo = _fabric(name, boxes)
    ag = solver.solve(topo)
    s = solver.solve(topo, collective=collective)
    verify_schedule(s)
    if collective == "reduce-scatter":
        assert s.algbw_exact == s.optimal_algbw_exact == ag.optimal_algbw_exact
        for t in s.trees:  # aggregation trees: edges child -> parent
            depth = {t.root: 0}
            for e in t.edges:
                assert e.dst in depth and e.src not in depth
                depth[e.src] = depth[e.dst] + 1
    else:
        assert [p.collective for p in s.phases] == ["reduce-scatter", "allgather"]
        assert s.trees == ()
        assert s.algbw_exact == s.optimal_algbw_exact == ag.optimal_algbw_exact / 2


def test_reduce_scatter_on_a_directed_fabric_uses_the_reversed_graph():
    nodes = tuple(Node(f"g{i}", "compute") for i in range(4))
    links = tuple(
        Link(f"g{i}", f"g{(i + 1) % 4}", Fraction(10 + i), directed=True) for i in range(4)
    ) + (Link("g0", "g2", Fraction(5)),)
    topo = Topology("directed", nodes, links)
    for collective in ("allgather", "reduce-scatter", "allreduce"):
        s = solver.solve(topo, collective=collective)
        verify_schedule(s)
        assert s.algbw_exact == s.optimal_algbw_exact


def _unbalanced():
    nodes = tuple(Node(f"g{i}", "compute") for i in range(4)) + (Node("up", "switch"),)
    links = tuple(Link(f"g{i}", f"g{(i + 1) % 4}", Fraction(100)) for i in range(4))
    links += (
        Link("g0", "up", Fraction(50), directed=True),
        Link("g1", "up", Fraction(50), directed=True),
        Link("up", "g2", Fraction(50), directed=True),
    )
    return Topology("one-way uplinks", nodes, links)


def test_unbalanced_switch_that_still_splits_reaches_the_cut_bound():
    """Two one-way uplinks into a switch with one way out: the excess input is simply unused."""
    s = solver.solve(_unbalanced())
    assert len(s.warnings) == 1
    assert "'up'" in s.warnings[0] and "unbalanced" in s.warnings[0]
    assert s.algbw_exact == s.optimal_algbw_exact
    _check_trees(s)
    verify_schedule(s)
    # data in = data out of the switch, so at most 50 GB/s of its 100 GB/s input is used
    assert sum(ll.load * ll.bandwidth for ll in s.link_load if ll.target == "up") <= 50


def _broadcast_switch():
    """g0 -> bc -> {g1, g2}: the cut bound needs bc to copy g0's data, which switches cannot."""
    nodes = tuple(Node(f"g{i}", "compute") for i in range(3)) + (Node("bc", "switch"),)
    links = (
        Link("g0", "bc", Fraction(10), directed=True),
        Link("bc", "g1", Fraction(10), directed=True),
        Link("bc", "g2", Fraction(10), directed=True),
        Link("g1", "g0", Fraction(10), directed=True),
        Link("g2", "g0", Fraction(10), directed=True),
    )
    return Topology("broadcast switch", nodes, links)


def test_switch_that_would_need_to_replicate_is_trimmed_with_warnings():
    s = solver.solve(_broadcast_switch())
    verify_schedule(s)
    _check_trees(s)
    assert s.optimal_algbw_exact == 15  # the cut bound of the fabric as drawn
    # every unit of g0->bc serves one receiver: 4 x <= 10 per node, so 3 * 2.5 GB/s
    assert s.algbw_exact == Fraction(15, 2)
    assert "'bc'" in s.warnings[0] and "trimmed" in s.warnings[0]
    assert "cut bound" in s.warnings[-1]
    for K in (1, 2):
        fixed = solver.solve(_broadcast_switch(), max_trees_per_root=K)
        verify_schedule(fixed)
        assert fixed.algbw_exact <= s.optimal_algbw_exact


def test_fixed_k_on_a_switch_unbalanced_by_rounding():
    """In 3+3 and out 2+4 balance exactly, but ⌊U·b⌋ rounding can unbalance the switch."""
    nodes = tuple(Node(f"g{i}", "compute") for i in range(3)) + (Node("w", "switch"),)
    links = tuple(Link(f"g{i}", f"g{(i + 1) % 3}", Fraction(5)) for i in range(3))
    links += (
        Link("g0", "w", Fraction(3), directed=True),
        Link("g1", "w", Fraction(3), directed=True),
        Link("w", "g1", Fraction(2), directed=True),
        Link("w", "g2", Fraction(4), directed=True),
    )
    topo = Topology("rounding", nodes, links)
    best = solver.solve(topo)
    assert not best.warnings
    last = Fraction(0)
    for K in (1, 2, 3):
        s = solver.solve(topo, max_trees_per_root=K)
        verify_schedule(s)
        assert s.algbw_exact <= best.algbw_exact
        assert s.algbw_exact >= last
        last = s.algbw_exact


def test_switch_with_only_incoming_links():
    nodes = tuple(Node(f"g{i}", "compute") for i in range(3)) + (Node("sink", "switch"),)
    links = tuple(Link(f"g{i}", f"g{(i + 1) % 3}", Fraction(10)) for i in range(3))
    links += (Link("g0", "sink", Fraction(7), directed=True),)
    s = solver.solve(Topology("sink", nodes, links))
    assert s.warnings and "'sink'" in s.warnings[0]
    verify_schedule(s)


def test_unbalanced_switch_cycle_is_a_clear_error_or_a_valid_schedule():
    nodes = (Node("a", "compute"), Node("b", "compute"), Node("w1", "switch"), Node("w2", "switch"))
    links = (
        Link("a", "w1", Fraction(10)),
        Link("b", "w2", Fraction(10)),
        Link("w1", "w2", Fraction(10), directed=True),
        Link("w2", "w1", Fraction(5), directed=True),
    )
    try:
        s = solver.solve(Topology("cycle", nodes, links))
    except SolverError as exc:
        msg = str(exc)
        assert "\n" not in msg and ("'w1'" in msg or "'w2'" in msg)
    else:
        assert s.warnings
        verify_schedule(s)


def test_unbalanced_switch_cycle_falls_back_to_an_exact_flow_trim():
    """Directed links between two switches keep passing the imbalance around (proportional
    scaling never settles); the exact max-flow trim still gives a valid, warned schedule."""
    nodes = (Node("a", "compute"), Node("b", "compute"), Node("w1", "switch"), Node("w2", "switch"))
    links = (
        Link("a", "w1", Fraction(10)),
        Link("b", "w2", Fraction(10)),
        Link("a", "w2", Fraction(3)),
        Link("b", "w1", Fraction(3)),
        Link("w1", "w2", Fraction(10), directed=True),
        Link("w2", "w1", Fraction(5), directed=True),
    )
    s = solver.solve(Topology("cycle2", nodes, links))
    verify_schedule(s)
    assert any("'w1'" in w for w in s.warnings) and any("'w2'" in w for w in s.warnings)
    assert 0 < s.algbw_exact <= s.optimal_algbw_exact == 22


def test_cancel_event_and_callable():
    topo = templates.mi250(2)
    ev = threading.Event()
    ev.set()
    with pytest.raises(Cancelled):
        solver.solve(topo, cancel=ev)
    calls = []

    def cancel_after_start():
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(Cancelled):
        solver.solve(topo, cancel=cancel_after_start)


def test_progress_reports_every_phase_in_order():
    seen = []
    solver.solve(templates.dgx_a100(2), progress=lambda phase, f: seen.append((phase, f)))
    phases = list(dict.fromkeys(p for p, _ in seen))
    assert phases == ["optimum", "switch_removal", "trees", "paths"]
    assert all(0.0 <= f <= 1.0 for _, f in seen)


def test_deterministic():
    topo = templates.mi250(2)
    assert solver.solve(topo) == solver.solve(topo)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"collective": "broadcast"}, SolverError),
        ({"max_trees_per_root": 0}, SolverError),
        ({"max_trees_per_root": 1.5}, SolverError),
    ],
)
def test_bad_arguments(kwargs, error):
    with pytest.raises(error) as info:
        solver.solve(templates.dgx_a100(1), **kwargs)
    assert "\n" not in str(info.value)


def test_invalid_topology_is_a_topology_error():
    nodes = (Node("a", "compute"), Node("b", "compute"))
    with pytest.raises(TopologyError):
        solver.solve(Topology("disconnected", nodes, ()))


def test_tiny_solve_without_jit():
    code = (
        "import solver; from solver.io import templates; from solver.algorithm.verify import verify_schedule\n"
        "s = solver.solve(templates.dgx_a100(2)); verify_schedule(s)\n"
        "s = solver.solve(templates.mi250(1), collective='allreduce'); verify_schedule(s)\n"
        "print(s.algbw_exact)\n"
    )
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1200/7"


@pytest.mark.parametrize(
    "name, boxes, tallest",
    [
        ("dgx_a100", 1, 1),  # one NVSwitch: every tree is a star
        ("dgx_a100", 2, 3),  # greedy ring splitting gave heights 6..9
        ("dgx_a100", 4, 3),  # greedy: 10
        ("dgx_h100_rail", 2, 3),  # greedy: 8..10
    ],
)
def test_switched_fabrics_get_shallow_trees(name, boxes, tallest):
    s = solver.solve(_fabric(name, boxes))
    assert s.algbw_exact == s.optimal_algbw_exact
    assert max(t.height for t in s.trees) <= tallest
    _check_trees(s)


def test_the_shallower_of_spread_and_greedy_splitting_is_kept():
    # 2x MI250: the xGMI fabric dominates the heights, so spread splitting of the IB switch is
    # not automatically shallower; the pipeline packs both and keeps the shallower forest
    from solver.algorithm.balance import balance_switches
    from solver.algorithm.packing import pack_trees, shorten_trees
    from solver.algorithm.pipeline import _heights
    from solver.algorithm.splitting import split_switches

    fabric, _ = balance_switches(IndexedFabric.from_topology(templates.mi250(2)))
    opt = compute_optimum(fabric)
    rank = {v: i for i, v in enumerate(fabric.compute)}
    shapes = []
    for spread in (False, True):
        split = split_switches(fabric, dict(zip(fabric.edges, opt.caps)), opt.k, spread=spread)
        caps = {(rank[u], rank[v]): c for (u, v), c in split.caps.items()}
        packed = pack_trees(fabric.num_compute, caps, opt.k)[0]
        shapes.append(_heights(shorten_trees(packed, caps)))
    s = solver.solve(templates.mi250(2))
    assert max(t.height for t in s.trees) == min(shapes)[0] < 14  # greedy, unshortened: 14


def test_solve_pauses_the_garbage_collector_and_restores_it():
    import gc

    seen = []
    topo = templates.dgx_a100(2)
    assert gc.isenabled()
    s = solver.solve(topo, progress=lambda phase, f: seen.append(gc.isenabled()))
    assert seen and not any(seen)
    assert gc.isenabled()
    verify_schedule(s)
    assert gc.isenabled()
    gc.disable()
    try:
        solver.solve(topo)
        verify_schedule(s)
        assert not gc.isenabled()  # left off when it was off
    finally:
        gc.enable()
    # back on after a solve stopped halfway (cancelled at its first progress report)
    stop = []
    with pytest.raises(Cancelled):
        solver.solve(topo, progress=lambda phase, f: stop.append(phase), cancel=lambda: bool(stop))
    assert stop and gc.isenabled()
