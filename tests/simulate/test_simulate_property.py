"""Properties of the simulator on random small fabrics (hypothesis, see tests/strategies.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from strategies import fabrics

from solver import solve
from solver.simulate import sweep

GIB = 1 << 30
BASELINES = ["ring", "ring1", "tree", "direct", "blink"]


@given(fabrics(max_compute=5, max_switches=2), st.sampled_from(["allgather", "allreduce"]))
def test_nothing_beats_the_bound_and_forestcoll_approaches_it(topo, collective):
    sched = solve(topo, collective)  # balanced random fabrics always solve (test_properties)
    algorithms = ["forestcoll", *BASELINES]
    sw = sweep(topo, collective, algorithms, [1 << 12, GIB], schedule=sched)
    for row in sw.rows:
        # the links cannot carry more: never faster than the route's own link bound, and for
        # allgather never faster than the fabric's bound. (The allreduce "optimum" is
        # M / (T_rs + T_ag); overlapping the two phases per root may beat it when their
        # bottleneck links differ, e.g. on one-way links, so it is not asserted.)
        if collective == "allgather":
            assert row.algbw <= sched.optimal_algbw * (1 + 1e-9), (row.algorithm, row.size)
        assert row.time >= row.route_bound_time * (1 - 1e-9)
        assert 0 < row.max_busy <= 1 + 1e-9
        # every message pays at least one hop of latency (1 us)
        assert row.time >= 1e-6
    fc = {r.size: r for r in sw.rows if r.algorithm == "forestcoll"}
    assert fc[GIB].algbw >= 0.85 * sched.optimal_algbw
