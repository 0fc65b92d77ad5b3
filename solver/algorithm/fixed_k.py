"""Fixed k: the best schedule with exactly k trees per root (k = 1 is what MSCCL/RCCL want).

With k fixed, capacities are ``⌊U·b(e)⌋`` and we need the smallest U for which
``λ(s, v) >= N·k`` (s -> every compute node with capacity k). Starting from the fractional bound
``U0 = k / x*``, each round finds violated s-t cuts S (``Σ_{δ+(S)} ⌊U·b⌋ < k·|S∩Vc|``) and raises U
to the smallest value satisfying the worst of them (a step function with steps at
``integer / b(e)``). U only increases and every value tried is a lower bound, so the first
feasible U is optimal; the rate is ``k/U`` and the algbw ``N·k/U``. If rounding unbalances a
switch (in- and out-links of different bandwidths), splitting drops the unusable excess; only if
that fails is the larger side trimmed first (``balance=True``), and U is then the smallest found,
not proven minimal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

from solver.algorithm.balance import balance_capacities
from solver.flow.csr import IndexedFabric, flow_network
from solver.model.errors import SolverError
from solver.flow.maxflow import MAX_CAPACITY


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

    With ``balance`` the rounded capacities of every switch are first trimmed to in = out
    (:func:`solver.algorithm.balance.balance_capacities`), for when splitting the plain floors fails.
    """
    if k < 1:
        raise SolverError(f"max_trees_per_root must be >= 1, got {k}")
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
                bws = [b for (u, v), b in zip(fabric.edges, fabric.bandwidth)
                       if side[u] and not side[v]]
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
