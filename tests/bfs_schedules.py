"""Hand-made schedules for the export tests (no solver needed), checked in
tests/msccl/test_bfs_schedules.py.

``bfs_schedule(topology, collective)`` builds one breadth-first tree per root over the compute
nodes (each logical edge routed on a shortest switch-only path). It is not optimal; it is a valid
schedule of the shape solver.solve() produces, which is all the exporters need.
"""

from __future__ import annotations

from collections import deque
from fractions import Fraction

from solver.model.schedule import BottleneckCut, LinkLoad, Schedule, Tree, TreeEdge


def _switch_paths(topo, start):
    """Shortest paths from compute node ``start`` to every compute node through switches only."""
    out: dict[str, list[str]] = {}
    for u, v in topo.directed_bandwidths():
        out.setdefault(u, []).append(v)
    compute = set(topo.compute_ids)
    prev = {start: None}
    queue = deque([start])
    found = {}
    while queue:
        u = queue.popleft()
        for v in out.get(u, []):
            if v in prev:
                continue
            prev[v] = u
            if v in compute:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                found[v] = tuple(reversed(path))
            else:
                queue.append(v)
    return found


def _out_tree(topo, root, paths):
    seen = {root}
    queue = deque([root])
    edges = []
    while queue:
        u = queue.popleft()
        for v, path in sorted(paths[u].items()):
            if v not in seen:
                seen.add(v)
                edges.append(TreeEdge(u, v, path))
                queue.append(v)
    return edges


def _phase(topo, collective, multiplicity=1):
    # reduce-scatter: in-trees = out-trees of the reversed fabric, turned around
    search = topo.reversed() if collective == "reduce-scatter" else topo
    paths = {c: _switch_paths(search, c) for c in topo.compute_ids}
    trees = []
    for root in topo.compute_ids:
        edges = _out_tree(search, root, paths)
        if collective == "reduce-scatter":
            edges = [TreeEdge(e.dst, e.src, tuple(reversed(e.path))) for e in edges]
        # split into `multiplicity` identical copies is expressed as one tree of that multiplicity
        trees.append(Tree(root, multiplicity, Fraction(1), tuple(edges)))
    load = {}
    for t in trees:
        for e in t.edges:
            for u, v in zip(e.path, e.path[1:]):
                load[(u, v)] = load.get((u, v), 0) + 1
    caps = topo.directed_bandwidths()
    n = len(topo.compute_ids)
    # time of a unit-size shard per link: load / bw; algbw = N / max(load/bw)
    worst = max(Fraction(c) / caps[e] for e, c in load.items())
    algbw = Fraction(n) / worst
    link_load = tuple(
        LinkLoad(u, v, caps[(u, v)], Fraction(load.get((u, v), 0)) / caps[(u, v)] / worst)
        for (u, v) in caps
    )
    cut = BottleneckCut((topo.compute_ids[0],), 1, Fraction(1), ())
    return Schedule(
        topology=topo,
        collective=collective,
        k=multiplicity,
        max_trees_per_root=1,
        optimal_algbw_exact=algbw,
        algbw_exact=algbw,
        bottleneck=cut,
        trees=tuple(trees),
        link_load=link_load,
        timings={"optimum": 0.01, "trees": 0.02},
        warnings=("hand-made BFS schedule",),
    )


def bfs_schedule(topo, collective="allgather", multiplicity=1):
    if collective == "allreduce":
        rs = _phase(topo, "reduce-scatter", multiplicity)
        ag = _phase(topo, "allgather", multiplicity)
        algbw = 1 / (1 / rs.algbw_exact + 1 / ag.algbw_exact)
        return Schedule(
            topology=topo,
            collective="allreduce",
            k=multiplicity,
            max_trees_per_root=1,
            optimal_algbw_exact=algbw,
            algbw_exact=algbw,
            bottleneck=rs.bottleneck,
            trees=(),
            link_load=ag.link_load,
            phases=(rs, ag),
        )
    return _phase(topo, collective, multiplicity)
