"""solver.algorithm.balance: switches forward what enters them, so in = out is enforced."""

from fractions import Fraction

import pytest

from solver.algorithm import balance
from solver.algorithm.balance import balance_capacities, balance_switches
from solver.flow.csr import IndexedFabric
from solver.model.errors import SolverError


def _fabric(names, switches, bws) -> IndexedFabric:
    is_compute = [name not in switches for name in names]
    index = {name: i for i, name in enumerate(names)}
    compute = [i for i, c in enumerate(is_compute) if c]
    edges = {(index[u], index[v]): Fraction(b) for (u, v), b in bws.items()}
    return IndexedFabric.from_edges(names, is_compute, compute, edges)


def _switch_sums(fab: IndexedFabric, w: int) -> tuple[Fraction, Fraction]:
    bw = dict(zip(fab.edges, fab.bandwidth))
    return (
        sum((b for (u, v), b in bw.items() if v == w), Fraction(0)),
        sum((b for (u, v), b in bw.items() if u == w), Fraction(0)),
    )


def test_balanced_fabric_is_returned_unchanged():
    fab = _fabric(
        ["a", "b", "w"], {"w"}, {("a", "w"): 2, ("w", "a"): 2, ("b", "w"): 2, ("w", "b"): 2}
    )
    out, warnings = balance_switches(fab)
    assert out is fab and warnings == []


def test_larger_side_is_scaled_down_to_the_smaller():
    # switch w: in 20 + 10 = 30, out 10 + 10 = 20 -> the in-links are scaled by 2/3
    fab = _fabric(
        ["a", "b", "w"],
        {"w"},
        {
            ("a", "w"): 20,
            ("w", "a"): 10,
            ("b", "w"): 10,
            ("w", "b"): 10,
            ("a", "b"): 1,
            ("b", "a"): 1,
        },
    )
    out, warnings = balance_switches(fab)
    bw = dict(zip(out.edges, out.bandwidth))
    assert bw[(0, 2)] == Fraction(40, 3) and bw[(1, 2)] == Fraction(20, 3)
    assert bw[(2, 0)] == 10 and bw[(2, 1)] == 10 and bw[(0, 1)] == 1  # untouched
    assert _switch_sums(out, 2) == (20, 20)
    assert out.scale == 3 and out.bw_int == tuple(int(b * 3) for b in out.bandwidth)
    assert len(warnings) == 1
    assert warnings[0].startswith(
        "switch 'w' is unbalanced (in 30 GB/s, out 20 GB/s): trimmed to 20"
    )


def test_trimming_one_switch_can_unbalance_its_neighbour():
    # a -> w1 -> w2 -> b one way (10 each), but w1 only has 4 out: w2 then receives less than it sends
    fab = _fabric(
        ["a", "b", "w1", "w2"],
        {"w1", "w2"},
        {("a", "w1"): 10, ("w1", "w2"): 4, ("w2", "b"): 10, ("b", "a"): 10},
    )
    out, warnings = balance_switches(fab)
    assert _switch_sums(out, 2) == (4, 4) and _switch_sums(out, 3) == (4, 4)
    assert [w.split(" (")[0] for w in warnings] == [
        "switch 'w1' is unbalanced",
        "switch 'w2' is unbalanced",
    ]


def test_flow_fallback_balances_every_switch(monkeypatch):
    """When proportional rounds do not settle, a max flow through the switches decides."""
    monkeypatch.setattr(balance, "_ROUNDS", 1)
    calls = []
    flow_balance = balance._flow_balance
    monkeypatch.setattr(balance, "_flow_balance", lambda *a: calls.append(a) or flow_balance(*a))
    fab = _fabric(
        ["a", "b", "w1", "w2"],
        {"w1", "w2"},
        {("a", "w1"): 10, ("w1", "w2"): 4, ("w2", "b"): 10, ("b", "a"): 10, ("w2", "a"): 3},
    )
    out, warnings = balance_switches(fab)
    orig = dict(zip(fab.edges, fab.bandwidth))
    for (u, v), b in zip(out.edges, out.bandwidth):
        assert 0 < b <= orig[(u, v)]
    assert _switch_sums(out, 2)[0] == _switch_sums(out, 2)[1]
    assert _switch_sums(out, 3)[0] == _switch_sums(out, 3)[1]
    assert _switch_sums(out, 2)[1] == 4  # w1 -> w2 is the only way through: all of it is used
    assert len(warnings) == 2 and len(calls) == 1


def test_trimming_that_cuts_off_a_compute_node_is_an_error():
    # b is reached only through w, which has nothing coming in
    fab = _fabric(["a", "b", "w"], {"w"}, {("w", "b"): 5, ("b", "a"): 5})
    with pytest.raises(SolverError, match="compute node 'b' is cut off from 'a'"):
        balance_switches(fab)


def test_balance_capacities_trims_the_largest_edge_first():
    # w: in caps [5, 5] = 10, out [3, 4] = 7 -> take 3 units, always from the largest in-edge
    fab = _fabric(
        ["a", "b", "w"], {"w"}, {("a", "w"): 1, ("b", "w"): 1, ("w", "a"): 1, ("w", "b"): 1}
    )
    order = [fab.edges.index(e) for e in [(0, 2), (1, 2), (2, 0), (2, 1)]]
    caps = [0] * 4
    for i, c in zip(order, [5, 5, 3, 4]):
        caps[i] = c
    before = list(caps)
    out = balance_capacities(fab, caps)
    # 5,5 -> 4,5 -> 4,4 -> 3,4: ties lose from the lower edge index
    low, high = sorted(order[:2])
    assert (out[low], out[high]) == (3, 4)
    assert [out[i] for i in order[2:]] == [3, 4]  # the smaller side is kept
    assert caps == before  # the input list is not modified
    assert balance_capacities(fab, out) == out
