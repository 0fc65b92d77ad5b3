"""solver.model.schedule: tree depths, walking allreduce phases, the JSON document."""

import json
import random
from fractions import Fraction

import pytest

from solver.model.schedule import BottleneckCut, LinkLoad, Schedule, Tree, TreeEdge
from solver.model.topology import Link, Node, Topology

TOPO = Topology(
    "three",
    (Node("a", "compute"), Node("b", "compute"), Node("c", "compute"), Node("sw", "switch")),
    (Link("a", "b", Fraction(10)), Link("b", "sw", Fraction(5)), Link("sw", "c", Fraction(5))),
)


def _tree(root="a", mult=1, weight=Fraction(1, 2)) -> Tree:
    # a -> b directly, b -> c through the switch: depths a 0, b 1, c 2
    return Tree(
        root, mult, weight, (TreeEdge("a", "b", ("a", "b")), TreeEdge("b", "c", ("b", "sw", "c")))
    )


def _schedule(collective="allgather", trees=(), phases=()) -> Schedule:
    return Schedule(
        topology=TOPO,
        collective=collective,
        k=2,
        max_trees_per_root=None,
        optimal_algbw_exact=Fraction(15, 2),
        algbw_exact=Fraction(15, 2),
        bottleneck=BottleneckCut(("a", "b"), 2, Fraction(5), (("b", "sw", Fraction(5)),)),
        trees=tuple(trees),
        link_load=(
            LinkLoad("b", "sw", Fraction(5), Fraction(1)),
            LinkLoad("a", "b", Fraction(10), Fraction(1, 3)),
        ),
        timings={"paths": 0.5},
        warnings=("trimmed",),
        phases=tuple(phases),
    )


def test_depths_count_logical_edges_not_switch_hops():
    tree = _tree()
    assert tree.depth_of() == {"a": 0, "b": 1, "c": 2}
    assert tree.height == 2


def test_height_is_the_deepest_depth_in_any_edge_order():
    """Parent-first edges take the quick way, any other order the general one: same heights."""
    rng = random.Random(7)
    for trial in range(200):
        n = rng.randrange(2, 30)
        names = [f"v{i}" for i in range(n)]
        parent = {names[i]: names[rng.randrange(i)] for i in range(1, n)}
        edges = [TreeEdge(parent[v], v, (parent[v], v)) for v in names[1:]]
        if trial % 2:
            rng.shuffle(edges)
        tree = Tree("v0", 1, Fraction(1), tuple(edges))
        assert tree.height == max(tree.depth_of().values())
        reversed_edges = tuple(TreeEdge(e.dst, e.src, e.path[::-1]) for e in edges)
        assert Tree("v0", 1, Fraction(1), reversed_edges).height == tree.height


def _aggregation_tree() -> Tree:
    # reduce-scatter: edges go child -> parent, listed from the root outwards
    return Tree(
        "c", 1, Fraction(1), (TreeEdge("b", "c", ("b", "sw", "c")), TreeEdge("a", "b", ("a", "b")))
    )


def test_depths_of_an_aggregation_tree_edge_pointing_at_the_root():
    assert _aggregation_tree().depth_of() == {"c": 0, "b": 1, "a": 2}


def test_all_trees_walks_into_allreduce_phases():
    rs = _schedule("reduce-scatter", [_aggregation_tree()])
    ag = _schedule("allgather", [_tree("a"), _tree("a", mult=2)])
    allreduce = _schedule("allreduce", phases=[rs, ag])
    assert [(coll, t.root) for coll, t in allreduce.all_trees()] == [
        ("reduce-scatter", "c"),
        ("allgather", "a"),
        ("allgather", "a"),
    ]
    assert [coll for coll, _t in ag.all_trees()] == ["allgather", "allgather"]


def test_rates_and_counts():
    s = _schedule(trees=[_tree()])
    assert s.algbw == pytest.approx(7.5) and s.optimal_algbw == pytest.approx(7.5)
    assert s.num_compute_nodes == 3  # the switch is not a rank


def test_to_dict_is_the_documented_json():
    doc = _schedule(trees=[_tree(mult=3, weight=Fraction(3, 2))]).to_dict()
    json.dumps(doc)  # plain JSON types only
    assert doc["collective"] == "allgather" and doc["num_compute_nodes"] == 3
    assert doc["optimal_algbw_exact"] == "15/2" and doc["algbw"] == 7.5
    assert doc["num_trees"] == 1 and doc["k"] == 2 and doc["max_trees_per_root"] is None
    (tree,) = doc["trees"]
    assert tree == {
        "root": "a",
        "weight": 1.5,
        "weight_exact": "3/2",
        "multiplicity": 3,
        "height": 2,
        "edges": [
            {"src": "a", "dst": "b", "path": ["a", "b"]},
            {"src": "b", "dst": "c", "path": ["b", "sw", "c"]},
        ],
    }
    assert doc["bottleneck"] == {
        "nodes": ["a", "b"],
        "compute_nodes_inside": 2,
        "egress_bandwidth": 5.0,
        "egress_bandwidth_exact": "5",
        "links": [{"source": "b", "target": "sw", "bandwidth": 5}],
    }
    assert doc["link_load"][1] == {"source": "a", "target": "b", "load": pytest.approx(1 / 3)}
    assert doc["timings"] == {"paths": 0.5} and doc["warnings"] == ["trimmed"]


def test_to_dict_labels_allreduce_trees_with_their_phase():
    rs = _schedule("reduce-scatter", [_aggregation_tree()])
    ag = _schedule("allgather", [_tree("a")])
    doc = _schedule("allreduce", phases=[rs, ag]).to_dict()
    assert [(t["phase"], t["root"]) for t in doc["trees"]] == [
        ("reduce-scatter", "c"),
        ("allgather", "a"),
    ]
    assert doc["num_trees"] == 2
    assert "phase" not in ag.to_dict()["trees"][0]


def test_timings_do_not_take_part_in_equality():
    a, b = _schedule(trees=[_tree()]), _schedule(trees=[_tree()])
    object.__setattr__(b, "timings", {"paths": 99.0})
    assert a == b
