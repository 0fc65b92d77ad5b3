"""Fewer trees per root at the same optimum: the smallest admissible divisor of k.

The optimum (:mod:`solver.algorithm.optimum`) gives the smallest ``k`` and ``U`` with
``U/k = 1/x*`` and every ``U·b(e)`` an integer. That ``k`` can be large only because some link
has an awkward bandwidth: on 16 GB200 NVL72 racks the leaf-spine links carry 800/9 GB/s, so
``k = 171`` although the bottleneck (every GPU's NVLink + NIC ingress, 950 GB/s) alone needs 19.
If such a link is not tight, rounding its capacity down loses nothing.

For a divisor ``k'`` of ``k`` take ``U' = U·k'/k`` (the same rate ``k'/U' = x*``) and the
capacities ``⌊U'·b(e)⌋``. They are *admissible* when every switch stays balanced and the
splitting invariant ``λ(s, v) >= N·k'`` holds for every compute node v (Edmonds: then ``k'``
trees per root fit, and the trees carry ``1/(N·k')`` of the data each within ``⌊U'·b(e)⌋ <=
U'·b(e)``, so the rate is still x*). :func:`fewest_trees` returns the smallest admissible
``k'``; ``k`` itself always is. With a box symmetry the check needs one max-flow per orbit of
compute nodes. Fewer trees mean less packing, fewer and larger chunks in a runtime, and shorter
outputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

from solver.algorithm.optimum import Optimum
from solver.flow.csr import IndexedFabric, flow_network
from solver.flow.sinks import flows_to_sinks

MAX_TRIES = 12  # divisors tried below k (each costs one max-flow per sink)


def divisors(k: int) -> list[int]:
    """The positive divisors of ``k``, ascending."""
    small, large = [], []
    d = 1
    while d * d <= k:
        if k % d == 0:
            small.append(d)
            if d * d != k:
                large.append(k // d)
        d += 1
    return small + large[::-1]


def fewest_trees(
    fabric: IndexedFabric,
    opt: Optimum,
    sinks: Sequence[int],
    check: Callable[[], None] | None = None,
) -> tuple[int, list[int]]:
    """``(k', capacities)``: the smallest admissible divisor ``k'`` of ``opt.k`` (at most
    :data:`MAX_TRIES` are tried below ``opt.k``) and its capacities in ``fabric.edges`` order;
    ``(opt.k, opt.caps)`` when no smaller one is admissible."""
    N = fabric.num_compute
    for kk in divisors(opt.k)[:-1][:MAX_TRIES]:
        caps = floor_capacities(fabric.bandwidth, opt.U * Fraction(kk, opt.k))
        if not _balanced(fabric, caps) or not _enough_ingress(fabric, caps, N * kk - kk):
            continue
        net = flow_network(fabric, caps, kk)
        flows = flows_to_sinks(net, fabric.n, sinks, N * kk, check=check)
        if all(flow >= N * kk for flow, _ in flows):
            return kk, caps
    return opt.k, list(opt.caps)


def floor_capacities(bandwidth: Sequence[Fraction], U: Fraction) -> list[int]:
    """``⌊U·b(e)⌋`` per edge."""
    return [math.floor(U * b) for b in bandwidth]


def _balanced(fabric: IndexedFabric, caps: Sequence[int]) -> bool:
    """Whether every switch has in-capacity = out-capacity, or was so before rounding."""
    into = [0] * fabric.n
    out = [0] * fabric.n
    bin_ = [Fraction(0)] * fabric.n
    bout = [Fraction(0)] * fabric.n
    for (u, v), c, b in zip(fabric.edges, caps, fabric.bandwidth, strict=True):
        out[u] += c
        into[v] += c
        bout[u] += b
        bin_[v] += b
    return all(
        fabric.is_compute[w] or into[w] == out[w] or bin_[w] != bout[w] for w in range(fabric.n)
    )


def _enough_ingress(fabric: IndexedFabric, caps: Sequence[int], need: int) -> bool:
    """Necessary condition: every compute node can receive ``(N-1)·k'`` units."""
    into = [0] * fabric.n
    for (_, v), c in zip(fabric.edges, caps, strict=True):
        into[v] += c
    return all(into[v] >= need for v in fabric.compute)
