"""Integer views of a :class:`~solver.model.topology.Topology` for the flow kernels.

:class:`IndexedFabric` numbers the nodes (topology order), lists the directed edges (parallel
links merged) with exact :class:`~fractions.Fraction` bandwidths, and scales the bandwidths to
integers by the lcm of their denominators. :func:`flow_network` builds the CSR max-flow network
"super source s -> every compute node" used by the optimum, fixed-k and splitting steps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from solver.flow.maxflow import FlowNetwork
from solver.model.topology import Topology


@dataclass(frozen=True)
class IndexedFabric:
    """Nodes by index and directed edges with exact and integer-scaled bandwidths."""

    names: tuple[str, ...]
    compute: tuple[int, ...]  # node indices of compute nodes, in rank order
    is_compute: tuple[bool, ...]
    edges: tuple[tuple[int, int], ...]
    bandwidth: tuple[Fraction, ...]  # GB/s per directed edge
    scale: int  # lcm of bandwidth denominators
    bw_int: tuple[int, ...]  # bandwidth * scale (integers)

    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def num_compute(self) -> int:
        return len(self.compute)

    @classmethod
    def from_topology(cls, topo: Topology) -> IndexedFabric:
        names = topo.node_ids
        index = {name: i for i, name in enumerate(names)}
        is_compute = tuple(n.is_compute for n in topo.nodes)
        compute = tuple(i for i, c in enumerate(is_compute) if c)
        bws = topo.directed_bandwidths()
        return cls.from_edges(
            names, is_compute, compute, {(index[u], index[v]): b for (u, v), b in bws.items()}
        )

    @classmethod
    def from_edges(
        cls,
        names: Sequence[str],
        is_compute: Sequence[bool],
        compute: Sequence[int],
        bws: Mapping[tuple[int, int], Fraction],
    ) -> IndexedFabric:
        edges = tuple(e for e, b in bws.items() if b > 0)
        bandwidth = tuple(Fraction(bws[e]) for e in edges)
        scale = 1
        for b in bandwidth:
            scale = scale * b.denominator // math.gcd(scale, b.denominator)
        bw_int = tuple(int(b * scale) for b in bandwidth)
        return cls(tuple(names), tuple(compute), tuple(is_compute), edges, bandwidth, scale, bw_int)

    def out_bandwidth(self, members: Sequence[bool]) -> Fraction:
        """Bandwidth of the edges leaving the node set ``members`` (a mask by node index)."""
        return sum(
            (b for (u, v), b in zip(self.edges, self.bandwidth) if members[u] and not members[v]),
            Fraction(0),
        )


def flow_network(
    fabric: IndexedFabric,
    edge_caps: Sequence[int],
    source_cap: int,
    extra: Sequence[tuple[int, int]] = (),
) -> FlowNetwork:
    """Flow network on the fabric's nodes plus a source ``s = fabric.n``.

    Edges: the fabric's edges with ``edge_caps`` (same order), then ``s -> v`` with ``source_cap``
    for every compute v (edge index ``len(edges) + rank``), then ``extra`` pairs with capacity 0.
    """
    s = fabric.n
    tails = [u for u, _ in fabric.edges] + [s] * fabric.num_compute + [u for u, _ in extra]
    heads = [v for _, v in fabric.edges] + list(fabric.compute) + [v for _, v in extra]
    caps = list(edge_caps) + [source_cap] * fabric.num_compute + [0] * len(extra)
    return FlowNetwork(fabric.n + 1, tails, heads, caps)
