"""Schedules shaped to a runtime's threadblock limit: each GPU exchanges data with few partners.

A ``<tb>`` has one send peer and one receive peer, so a rank needs at least as many threadblocks
as partners (:mod:`solver.msccl.limits`). A switch joining ``m`` GPUs lets switch splitting pair
any two of them: on 128x DGX H100 rail every GPU gets 127 rail partners and 7 in its box, 134,
against RCCL's MSCCL_MAX_NUM_THREAD_BLOCKS 64 (``src/include/msccl/msccl_struct.h:18`` @ ROCm/rccl
0cbce2a7).

Shaping replaces every *wide* switch (more attached GPUs than ``partners + 1``; a GPU attached
directly or through a NIC node of its own) by *windows*: with its ``m`` GPUs in link order (box
order on a rail), window switch ``i`` joins GPUs ``i .. i + w - 1`` (mod ``m``), each GPU is on
``w`` windows with ``1/w`` of its bandwidth on each, ``2 (w - 1) <= partners`` partners. Window
``i`` belongs to GPU ``i``'s box, so the box translation stays an automorphism and ForestColl
solves the logical fabric with its box symmetry, as fast as the real one. Whatever is scheduled
on it runs on the real fabric: the logical path u -> window -> v is the real path
u -> (NIC) -> switch -> (NIC) -> v, and u's real links to the switch carry the sum of its ``w``
logical links, at most its bandwidth (the real switch is non-blocking). The trees are put back on
real paths and the schedule is verified against the real fabric
(:func:`solver.algorithm.verify.verify_schedule`) with the real fabric's optimum and
bottleneck, so ``algbw / optimum`` is exactly what the shaping costs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from solver.algorithm.cost import CostLimit
from solver.algorithm.verify import link_data, recompute_algbw, verify_schedule
from solver.model.schedule import LinkLoad, Schedule, Tree, TreeEdge
from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology
from solver.msccl.runtimes import MscclError


@dataclass(frozen=True)
class Shaped:
    """A shaped schedule on the real fabric, with what it costs against the unconstrained one."""

    schedule: Schedule  # on the real fabric, verified
    partners: int  # logical partners per GPU on each wide switch
    switches: tuple[str, ...]  # the switches shaped
    optimum: Fraction  # the real fabric's optimum (GB/s)
    shaped_optimum: Fraction  # the logical fabric's optimum: the best any shaped schedule gets
    unconstrained: Fraction  # algbw of the schedule it replaces

    @property
    def cost(self) -> Fraction:
        """Throughput given up against the schedule it replaces: 1 - shaped / unconstrained."""
        return 1 - self.schedule.algbw_exact / self.unconstrained

    def summary(self) -> str:
        s = self.schedule
        return (
            f"shaped: {len(self.switches)} switch(es) ({', '.join(self.switches[:3])}"
            f"{', ...' if len(self.switches) > 3 else ''}) as windows, at most "
            f"{self.partners} partners per GPU on each: "
            f"algbw {float(s.algbw_exact):.6g} GB/s (exact {s.algbw_exact}) against "
            f"{float(self.unconstrained):.6g} GB/s unshaped (exact {self.unconstrained}), "
            f"{float(self.cost) * 100:.3g}% less; optimum of the shaped fabric "
            f"{float(self.shaped_optimum):.6g} GB/s, of the real one {float(self.optimum):.6g} GB/s"
        )


def _attachments(topo: Topology, switch: str) -> list[tuple[str, tuple[str, ...], Fraction]] | None:
    """The GPUs of ``switch`` in link order: (gpu, chain gpu..switch, bandwidth), or None when a
    neighbour is neither a GPU nor a NIC node joining it to exactly one GPU."""
    kinds = {n.id: n.kind for n in topo.nodes}
    bw = topo.directed_bandwidths()
    neighbours: dict[str, list[str]] = {}
    for u, v in bw:
        neighbours.setdefault(u, [])
        if v not in neighbours[u]:
            neighbours[u].append(v)
    out = []
    for nb in neighbours.get(switch, []):
        if kinds[nb] == COMPUTE:
            chain = (nb, switch)
        elif kinds[nb] == SWITCH:
            others = [x for x in neighbours.get(nb, []) if x != switch]
            if len(others) != 1 or kinds[others[0]] != COMPUTE:
                return None
            chain = (others[0], nb, switch)
        else:
            return None
        hops = list(zip(chain, chain[1:]))
        if any((a, b) not in bw or (b, a) not in bw for a, b in hops):
            return None
        out.append((chain[0], chain, min(min(bw[(a, b)], bw[(b, a)]) for a, b in hops)))
    if len({g for g, _, _ in out}) != len(out):
        return None
    return out


def window(m: int, partners: int) -> int:
    """GPUs per window: ``w`` consecutive GPUs share a window switch, so each GPU, on ``w``
    windows, has ``2 (w - 1)`` partners (at most ``partners``)."""
    return max(2, min(m, partners // 2 + 1))


def shaped_fabric(topo: Topology, partners: int) -> tuple[Topology, dict, tuple[str, ...]]:
    """The logical fabric, the way back (``switch``: logical switch -> real one; ``chain``:
    (real switch, GPU) -> the GPU's nodes up to it) and the switches replaced. Every wide switch
    (more than ``partners + 1`` GPUs attached directly or through a NIC of their own, taken in link
    order) becomes ``m`` window switches: window ``i`` joins GPUs ``i .. i + w - 1`` (mod ``m``),
    each GPU is on ``w`` windows with ``1/w`` of its bandwidth on each. Window ``i`` belongs to
    GPU ``i``'s box (its node group), so moving every box to the next one is still an
    automorphism and the solver's box symmetry still applies. Raises MscclError when no switch is
    wide."""
    if partners < 2:
        raise MscclError(f"shaping needs at least 2 partners per GPU, got {partners}")
    drop: set[str] = set()
    chains: dict[tuple[str, str], tuple[str, ...]] = {}  # (switch, GPU) -> GPU ... switch
    real_of: dict[str, str] = {}  # logical switch -> real switch
    nodes: list[Node] = []
    logical: list[Link] = []
    shaped = []
    for sw in topo.switch_ids:
        att = _attachments(topo, sw)
        if att is None or len(att) <= partners + 1:
            continue
        m = len(att)
        w = window(m, partners)
        for i in range(m):
            name = f"{sw}~w{i}"
            nodes.append(Node(name, SWITCH, "shaped", group=topo.node(att[i][0]).group))
            real_of[name] = sw
            for j in range(i, i + w):
                gpu, _, b = att[j % m]
                logical.append(Link(gpu, name, b / w))
        for gpu, chain, _ in att:
            chains[(sw, gpu)] = chain
        drop.add(sw)
        drop.update(chain[1] for _, chain, _ in att if len(chain) == 3)
        shaped.append(sw)
    if not shaped:
        raise MscclError(
            f"no switch of {topo.name!r} joins more than {partners + 1} GPUs: nothing to shape"
        )
    base = topo.without(drop)
    fabric = replace(
        base,
        name=f"{topo.name} (shaped: {partners} partners)",
        nodes=base.nodes + tuple(nodes),
        links=base.links + tuple(logical),
    )
    return fabric, {"switch": real_of, "chain": chains}, tuple(shaped)


def _on_real(s: Schedule, real: Schedule, topo: Topology, paths: dict) -> Schedule:
    """``s`` (solved on the logical fabric) on the real fabric's paths, with the real optimum."""

    switch, chain = paths["switch"], paths["chain"]

    def real_path(path: tuple[str, ...]) -> tuple[str, ...]:
        # a logical switch joins GPUs only: its paths are gpu, switch, gpu
        if len(path) == 3 and path[1] in switch:
            u, sw, v = path[0], switch[path[1]], path[2]
            return chain[(sw, u)] + tuple(reversed(chain[(sw, v)][:-1]))
        return path

    cache: dict[int, TreeEdge] = {}

    def edge(e: TreeEdge) -> TreeEdge:
        if id(e) not in cache:
            cache[id(e)] = TreeEdge(e.src, e.dst, real_path(e.path))
        return cache[id(e)]

    trees = tuple(
        Tree(t.root, t.multiplicity, t.weight, tuple(edge(e) for e in t.edges)) for t in s.trees
    )
    phases = tuple(_on_real(p, rp, topo, paths) for p, rp in zip(s.phases, real.phases))
    out = replace(
        s,
        topology=topo,
        trees=trees,
        phases=phases,
        optimal_algbw_exact=real.optimal_algbw_exact,
        bottleneck=real.bottleneck,
        link_load=(),
    )
    # a link's load is its share of the time: data / (bandwidth x time), time = 1 / algbw
    algbw = recompute_algbw(out)
    bw = topo.directed_bandwidths()
    link_load = tuple(
        LinkLoad(u, v, bw[(u, v)], data * algbw / bw[(u, v)])
        for (u, v), data in sorted(link_data(out).items())
        if data
    )
    return replace(out, link_load=link_load, algbw_exact=algbw)


def shape(real: Schedule, partners: int, max_trees_per_root: int | None = 1) -> Shaped:
    """A schedule of ``real``'s collective on ``real``'s fabric whose GPUs have at most
    ``partners`` partners on each wide switch, verified; see the module docstring."""
    from solver.algorithm.pipeline import solve

    topo = real.topology
    fabric, paths, switches = shaped_fabric(topo, partners)
    try:
        logical = solve(fabric, collective=real.collective, max_trees_per_root=max_trees_per_root)
    except CostLimit as exc:
        raise MscclError(
            f"a schedule shaped to {partners} partners per GPU on {len(switches)} switch(es) cannot be "
            f"solved here: {exc}"
        ) from None
    schedule = _on_real(logical, real, topo, paths)
    schedule = replace(
        schedule,
        warnings=schedule.warnings
        + (f"shaped to {partners} partners per GPU on {len(switches)} switch(es)",),
    )
    verify_schedule(schedule)
    return Shaped(
        schedule,
        partners,
        switches,
        real.optimal_algbw_exact,
        logical.optimal_algbw_exact,
        real.algbw_exact,
    )


__all__ = ["Shaped", "shape", "shaped_fabric"]
