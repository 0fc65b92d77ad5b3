"""Step 1: the exact optimal allgather rate and the bottleneck cut (Dinkelbach on the cut ratio).

The optimum per-node rate is ``x* = min_S B+(S) / |S ∩ Vc|`` over vertex sets S holding at least
one compute node but not all of them. Starting from ``S0 = V \\ {t}``, each iteration writes the
current ratio ``|S∩Vc| / B+(S) = p/q`` and solves, for every compute node t, an s-t max-flow on
capacities ``p·b(e)`` plus ``q`` from a super source to every compute node: ``q·N - flow`` is
``max_{S ∌ t} q|S∩Vc| - p·B+(S)``. A positive value yields a set with a larger ratio; when none is
positive the current set is the bottleneck cut and the ratio is exact (no float search).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from solver.flow.csr import IndexedFabric, flow_network
from solver.flow.maxflow import MAX_CAPACITY
from solver.flow.sinks import flows_to_sinks
from solver.model.errors import SolverError


@dataclass(frozen=True)
class Optimum:
    """The exact optimum of an allgather on a fabric and the integers for tree packing.

    ``rate`` = x* (GB/s per compute node), ``algbw`` = N·x*. With ``U`` and ``k``: each directed
    edge gets integer capacity ``caps[i] = U·b(e)`` and every root ``k`` trees (``k/U = x*``).
    """

    rate: Fraction
    algbw: Fraction
    cut: tuple[bool, ...]  # mask by node index: the bottleneck set S*
    cut_compute: int
    cut_bandwidth: Fraction
    k: int
    U: Fraction
    caps: tuple[int, ...]
    iterations: int


def _lcm_fraction(a: Fraction, b: Fraction) -> Fraction:
    """Least common positive multiple of two positive rationals."""
    num = a.numerator * b.numerator // math.gcd(a.numerator, b.numerator)
    return Fraction(num, math.gcd(a.denominator, b.denominator))


def packing_integers(fabric: IndexedFabric, inv_rate: Fraction) -> tuple[int, Fraction]:
    """Smallest ``k`` (trees per root) and ``U`` with ``U/k = inv_rate`` and ``U·b(e)`` integral."""
    P, Q = inv_rate.numerator, inv_rate.denominator
    j = Fraction(1, Q)
    for b in set(fabric.bandwidth):
        j = _lcm_fraction(j, 1 / (P * b))
    k = Q * j
    U = P * j
    if k.denominator != 1:
        raise SolverError("internal error: non-integer tree count")
    return int(k), U


def cut_ratio(fabric: IndexedFabric, mask: Sequence[bool]) -> tuple[int, int]:
    """(|S∩Vc|, scaled B+(S)) for the node mask S."""
    inside = sum(1 for v in fabric.compute if mask[v])
    out = sum(b for (u, v), b in zip(fabric.edges, fabric.bw_int) if mask[u] and not mask[v])
    return inside, out


def compute_optimum(
    fabric: IndexedFabric,
    check: Callable[[], None] | None = None,
    start: Sequence[Sequence[bool]] = (),
    sinks: Sequence[int] | None = None,
    progress: Callable[[float], None] | None = None,
) -> Optimum:
    """Exact optimum, bottleneck cut, ``k`` and ``U`` (see module docstring).

    ``check`` is called between max-flows (cancellation). ``start`` offers extra starting sets
    (node masks, e.g. the bottleneck cut of a similar fabric): the search starts from the one
    with the largest ratio. Any start is exact, since the search only stops when no max-flow
    finds a better set; a good one saves iterations. ``sinks``: the compute nodes to run
    max-flows to, one per orbit of an automorphism group of the fabric (default: all of them);
    the flow values of a node and of its images are equal, so the result is the same.
    ``progress(fraction)`` is told after every Dinkelbach step (the number of steps is not known
    in advance: step i ends at ``1 - 2**-i``).
    Raises :class:`SolverError` when the compute nodes are not strongly connected or the numbers
    overflow int64.
    """
    n = fabric.n
    N = fabric.num_compute
    s = n
    sinks = fabric.compute if sinks is None else sinks
    # start: the compute node with the smallest in-bandwidth (S = V minus that node)
    into = [0] * n
    for (_, v), b in zip(fabric.edges, fabric.bw_int):
        into[v] += b
    best = None
    for t in fabric.compute:
        if into[t] == 0:
            raise SolverError(f"compute node {fabric.names[t]!r} receives no bandwidth")
        if best is None or Fraction(N - 1, into[t]) > best[0]:
            mask = [True] * n
            mask[t] = False
            best = (Fraction(N - 1, into[t]), mask)
    for mask in start:
        inside, out = cut_ratio(fabric, mask)
        if 0 < inside < N and out > 0 and Fraction(inside, out) > best[0]:
            best = (Fraction(inside, out), list(mask))
    ratio, mask = best
    net = None
    iterations = 0
    while True:
        iterations += 1
        p, q = ratio.numerator, ratio.denominator
        caps = [p * b for b in fabric.bw_int]
        if max(caps) >= MAX_CAPACITY or q * N >= MAX_CAPACITY:
            raise SolverError("bandwidth values too large or too fine-grained for int64 arithmetic")
        if net is None:
            net = flow_network(fabric, caps, q)
        else:
            net.cap[net.edge_arc[: len(caps)]] = caps
            net.cap[net.edge_arc[len(caps) :]] = q
        target = q * N
        best_value = 0
        best_mask = None
        # one flow per sink, in threads; the first sink with the largest shortfall wins
        for flow, side in flows_to_sinks(net, s, sinks, target, short_side=True, check=check):
            if target - flow > best_value:
                best_value = target - flow
                best_mask = [bool(x) for x in side[:n]]
        if progress is not None:
            progress(1 - 0.5**iterations)
        if best_mask is None:
            break
        inside, out = cut_ratio(fabric, best_mask)
        if out == 0:
            raise SolverError("compute nodes are not strongly connected")
        new_ratio = Fraction(inside, out)
        if new_ratio <= ratio:  # cannot happen in exact arithmetic; guard against loops
            raise SolverError("internal error: optimum search did not improve")
        ratio, mask = new_ratio, best_mask
    inside, out = cut_ratio(fabric, mask)
    cut_bw = Fraction(out, fabric.scale)
    rate = cut_bw / inside
    k, U = packing_integers(fabric, 1 / rate)
    caps = []
    for b in fabric.bandwidth:
        c = U * b
        if c.denominator != 1:
            raise SolverError("internal error: non-integer capacity")
        caps.append(int(c))
    if max(caps) * N >= MAX_CAPACITY or k * N * N >= MAX_CAPACITY:
        raise SolverError("schedule needs too many trees for int64 arithmetic")
    return Optimum(rate, rate * N, tuple(mask), inside, cut_bw, k, U, tuple(caps), iterations)
