"""The hand-made schedules of tests/bfs_schedules.py (used by the export tests) are valid."""

from bfs_schedules import bfs_schedule

from solver.io.templates import dgx_a100, ring


def test_bfs_schedule_spans_every_compute_node():
    topo = dgx_a100(2)
    s = bfs_schedule(topo)
    assert len(s.trees) == 16
    for t in s.trees:
        assert {e.dst for e in t.edges} | {t.root} == set(topo.compute_ids)
        for e in t.edges:
            assert e.path[0] == e.src and e.path[-1] == e.dst
            assert all(topo.node(v).kind == "switch" for v in e.path[1:-1])


def test_bfs_schedule_reduce_scatter_edges_point_to_root():
    s = bfs_schedule(ring(4), "reduce-scatter")
    for t in s.trees:
        assert t.root not in {e.src for e in t.edges}
        assert {e.src for e in t.edges} == set(s.topology.compute_ids) - {t.root}
