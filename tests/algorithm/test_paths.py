"""solver.algorithm.paths: logical tree edges back onto physical paths, refining tree classes."""

import random
from collections import Counter

import pytest
from naive import map_paths

from solver.algorithm.packing import TreeClass
from solver.algorithm.paths import route_classes


def test_one_edge_on_two_paths_splits_the_class():
    paths = {(10, 11): {(10, 5, 11): 2, (10, 6, 11): 1}}
    out = route_classes([TreeClass(root=0, mult=3, edges=[(0, 1)])], paths, rank_node=[10, 11])
    assert out == [(10, 2, [(10, 11, (10, 5, 11))]), (10, 1, [(10, 11, (10, 6, 11))])]
    assert paths == {(10, 11): {}}  # consumed


def test_two_edges_refine_into_every_boundary():
    # edge A: p p q, edge B: r s s  ->  (p, r), (p, s), (q, s), one tree each
    p, q = (0, 9, 1), (0, 8, 1)
    r, s = (1, 9, 2), (1, 7, 2)
    paths = {(0, 1): {p: 2, q: 1}, (1, 2): {r: 1, s: 2}}
    out = route_classes([TreeClass(0, 3, [(0, 1), (1, 2)])], paths, rank_node=[0, 1, 2])
    assert out == [
        (0, 1, [(0, 1, p), (1, 2, r)]),
        (0, 1, [(0, 1, p), (1, 2, s)]),
        (0, 1, [(0, 1, q), (1, 2, s)]),
    ]


def test_classes_take_units_from_the_front_in_turn():
    direct, via = (0, 1), (0, 2, 1)
    paths = {(0, 1): {direct: 1, via: 3}}
    classes = [TreeClass(0, 2, [(0, 1)]), TreeClass(0, 2, [(0, 1)])]
    out = route_classes(classes, paths, rank_node=[0, 1])
    assert out == [(0, 1, [(0, 1, direct)]), (0, 1, [(0, 1, via)]), (0, 2, [(0, 1, via)])]
    assert paths == {(0, 1): {}}


def test_leftover_units_stay_in_the_record():
    paths = {(0, 1): {(0, 1): 5}}
    route_classes([TreeClass(0, 3, [(0, 1)])], paths, rank_node=[0, 1])
    assert paths == {(0, 1): {(0, 1): 2}}


def _usage(routed) -> Counter:
    """Units per (logical edge, physical path) and per root: what any correct routing preserves."""
    use: Counter = Counter()
    for root, mult, edges in routed:
        use[("root", root)] += mult
        for edge in edges:
            key = edge if len(edge) == 3 else (*edge[0], edge[1])
            use[key] += mult
    return use


@pytest.mark.parametrize("seed", range(8))
def test_random_records_match_the_naive_twin(seed):
    """Same unit totals per (edge, path) and per root as tests/naive.py's map_paths.

    The twin takes units from the other end of each record, so the pairing of paths into trees
    may differ; what is routed where may not.
    """
    rng = random.Random(seed)
    n = 5
    classes, demand = [], Counter()
    for _ in range(rng.randint(1, 4)):
        root = rng.randrange(n)
        order = [root] + rng.sample([v for v in range(n) if v != root], n - 1)
        edges = [(order[rng.randrange(i)], order[i]) for i in range(1, n)]
        mult = rng.randint(1, 4)
        classes.append(TreeClass(root, mult, edges))
        for e in edges:
            demand[e] += mult
    records = {}
    for (u, v), units in demand.items():
        record, left = {}, units
        while left:
            via = (u, 100 + rng.randrange(3), v) if record else (u, v)
            take = rng.randint(1, left)
            record[via] = record.get(via, 0) + take
            left -= take
        records[(u, v)] = record
    fast = route_classes(classes, {e: dict(r) for e, r in records.items()}, list(range(n)))
    twin = map_paths(
        [(c.root, c.mult, list(c.edges)) for c in classes],
        {e: list(r.items()) for e, r in records.items()},
    )
    assert _usage(fast) == _usage(twin)
    routed = {key: units for key, units in _usage(fast).items() if key[0] != "root"}
    assert routed == {(*e, path): units for e, r in records.items() for path, units in r.items()}
    for _root, mult, edges in fast:
        assert mult >= 1 and len(edges) == n - 1  # one path per logical edge
        assert all(path[0] == u and path[-1] == v for u, v, path in edges)
