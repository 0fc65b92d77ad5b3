"""Fixed k: the best schedule with exactly k trees per root (k = 1 is what MSCCL/RCCL want).

With k fixed, capacities are ``⌊U·b(e)⌋`` and we need the smallest U for which
``λ(s, v) >= N·k`` (s -> every compute node with capacity k). Starting from the fractional bound
``U0 = k / x*``, each round finds violated s-t cuts S (``Σ_{δ+(S)} ⌊U·b⌋ < k·|S∩Vc|``) and raises U
to the smallest value satisfying the worst of them (a step function with steps at
``integer / b(e)``). U only increases and every value tried is a lower bound, so the first
feasible U is optimal; the rate is ``k/U`` and the algbw ``N·k/U``. If rounding unbalances a
switch (in- and out-links of different bandwidths), splitting drops the unusable excess; only if
that fails is the larger side trimmed first (``balance=True``). On small fabrics the trim is then
found by an exhaustive search (:mod:`solver.algorithm.trim_search`), stepping U through the
breakpoints of ``⌊U·b(e)⌋``, so U is the proven minimum for k; on larger ones (more than
:data:`EXACT_MAX_EDGES` switch links or :data:`EXACT_MAX_EXCESS` units of imbalance) a greedy
trim is used and U is the smallest found, not proven minimal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

from solver.algorithm.balance import balance_capacities
from solver.algorithm.cost import CostLimit, check_fixed_k
from solver.algorithm.trim_search import SearchLimit, exact_fixed_k, excess
from solver.flow.csr import IndexedFabric, flow_network
from solver.flow.maxflow import MAX_CAPACITY
from solver.model.errors import SolverError

EXACT_MAX_EDGES = 64  # switch-incident directed links up to which trims are searched exhaustively
EXACT_MAX_EXCESS = 16  # units of switch imbalance (Σ|in - out|) up to which the same holds


def _floor_caps(bandwidth: Sequence[Fraction], U: Fraction) -> list[int]:
    return [math.floor(U * b) for b in bandwidth]


def _smallest_U(bws: list[Fraction], target: int, start: Fraction) -> Fraction:
    """Smallest U >= start with Σ ⌊U·b⌋ >= target."""
    total = sum(bws, Fraction(0))
    U = max(start, Fraction(target) / total)
    while True:
        have = sum(math.floor(U * b) for b in bws)
        if have >= target:
            return U
        U = min(Fraction(math.floor(U * b) + 1) / b for b in bws)


def fixed_k_capacity(
    fabric: IndexedFabric,
    k: int,
    rate: Fraction,
    check: Callable[[], None] | None = None,
    balance: bool = False,
) -> tuple[Fraction, list[int]]:
    """Smallest U (and the capacities ``⌊U·b(e)⌋``) admitting ``k`` trees per root.

    With ``balance`` the rounded capacities of every switch are first trimmed to in = out, for
    when splitting the plain floors fails: by the exhaustive search of :func:`exact_capacity` on
    small fabrics (U is then the proven minimum), else greedily
    (:func:`solver.algorithm.balance.balance_capacities`).
    """
    if k < 1:
        raise SolverError(f"max_trees_per_root must be >= 1, got {k}")
    if balance:
        try:
            return exact_capacity(fabric, k, rate, check)
        except SearchLimit:
            pass  # a larger fabric: trim greedily below
    return _search(fabric, k, rate, check, balance)


def exact_capacity(
    fabric: IndexedFabric, k: int, rate: Fraction, check: Callable[[], None] | None = None
) -> tuple[Fraction, list[int]]:
    """The proven smallest U (and trimmed balanced capacities) for ``k`` trees per root with
    switches; :class:`~solver.algorithm.trim_search.SearchLimit` on fabrics too large to search."""
    U0, floors = _search(fabric, k, rate, check, False)
    switch_links = sum(
        1 for u, v in fabric.edges if not (fabric.is_compute[u] and fabric.is_compute[v])
    )
    if (
        switch_links > EXACT_MAX_EDGES
        or sum(map(abs, excess(fabric, floors).values())) > EXACT_MAX_EXCESS
    ):
        raise SearchLimit(
            "too many switch links or too much imbalance for the exhaustive trim search"
        )
    return exact_fixed_k(fabric, k, U0, check)


def best_exact_algbw(
    fabric: IndexedFabric, K: int, rate: Fraction, check: Callable[[], None] | None = None
) -> Fraction | None:
    """The optimum algbw with at most ``K`` trees per root (best k in (K/2, K]), proven by the
    exhaustive trim search, or ``None`` when the fabric or K is too large for it."""
    try:
        check_fixed_k(fabric, K)
    except CostLimit:
        return None
    best = None
    for k in range(K // 2 + 1, K + 1):
        try:
            U, _ = exact_capacity(fabric, k, rate, check)
        except SearchLimit:
            return None
        algbw = fabric.num_compute * Fraction(k) / U
        best = algbw if best is None else max(best, algbw)
    return best


def gap_note(
    fabric: IndexedFabric,
    K: int,
    rate: Fraction,
    algbw: Fraction,
    check: Callable[[], None] | None = None,
) -> str:
    """What the exhaustive trim search says about a fixed-K schedule below its cut bound."""
    best = best_exact_algbw(fabric, K, rate, check)
    if best is None:
        return (
            "; not proven optimal under that limit (the exhaustive switch-trim search is "
            "limited to small fabrics)"
        )
    if best == algbw:
        return (
            f"; an exhaustive search of switch trims shows no schedule with at most {K} trees "
            f"per root does better: {float(algbw):.6g} GB/s is the optimum under that limit"
        )
    return (
        f"; the optimum with at most {K} trees per root is {float(best):.6g} GB/s (exhaustive "
        "search of switch trims)"
    )


def _search(
    fabric: IndexedFabric, k: int, rate: Fraction, check, balance: bool
) -> tuple[Fraction, list[int]]:
    N = fabric.num_compute
    s = fabric.n
    U = Fraction(k) / rate
    net = None
    need = N * k
    for _ in range(10_000):
        floors = _floor_caps(fabric.bandwidth, U)
        caps = balance_capacities(fabric, floors) if balance else floors
        if max(caps) >= MAX_CAPACITY:
            raise SolverError("too many trees per root for int64 arithmetic")
        if net is None:
            net = flow_network(fabric, caps, k)
        else:
            net.cap[net.edge_arc[: len(caps)]] = caps
        new_U = U
        feasible = True
        for t in fabric.compute:
            if check is not None:
                check()
            f = net.max_flow(s, t, cutoff=need)
            if f < need:
                feasible = False
                side = net.source_side(s)
                inside = sum(1 for v in fabric.compute if side[v])
                bws = [
                    b
                    for (u, v), b in zip(fabric.edges, fabric.bandwidth)
                    if side[u] and not side[v]
                ]
                if not bws:
                    raise SolverError("compute nodes are not strongly connected")
                new_U = max(new_U, _smallest_U(bws, k * inside, U))
        if new_U == U:
            if feasible:
                return U, caps
            # only the switch balancing made it infeasible: try the next step of ⌊U·b⌋
            new_U = min(Fraction(c + 1) / b for c, b in zip(floors, fabric.bandwidth))
        U = new_U
    raise SolverError("internal error: fixed-k search did not converge")
