"""Schedules shaped to a runtime's threadblock limit: each GPU exchanges data with few partners.

A ``<tb>`` has one send peer and one receive peer, so a rank needs at least as many threadblocks
as partners (:mod:`solver.msccl.limits`). A switch joining ``m`` GPUs lets switch splitting pair
any two of them: on 128x DGX H100 rail every GPU gets 127 rail partners and 7 in its box, 134,
against RCCL's MSCCL_MAX_NUM_THREAD_BLOCKS 64 (``src/include/msccl/msccl_struct.h:18`` @ ROCm/rccl
0cbce2a7).

Shaping replaces every *wide* switch (more attached GPUs than ``partners + 1``; a GPU attached
directly or through a NIC node of its own) by a grid of smaller switches: its ``m`` GPUs get
coordinates in base ``f`` with ``d`` digits, one logical switch joins the GPUs of each line of the
grid and each GPU is on ``d`` lines with ``1/d`` of its bandwidth on each (``d (f - 1)`` partners:
128 GPUs as 2 x 12 lines gives 22, 7 dimensions of 2 give 7). The logical fabric keeps switches,
so ForestColl solves it as fast as the real one. Whatever is scheduled on it runs on the real
fabric: the logical path u -> line switch -> v is the real path u -> (NIC) -> switch -> (NIC) -> v,
and u's real links to the switch carry the sum of its ``d`` logical links, at most its bandwidth
(the real switch is non-blocking). ForestColl solves the logical fabric; its trees are put back on
real paths and the schedule is verified against the real fabric
(:func:`solver.algorithm.verify.verify_schedule`) with the real fabric's optimum and
bottleneck, so ``algbw / optimum`` is exactly what the shaping costs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

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
            f"{', ...' if len(self.switches) > 3 else ''}) as grids of smaller switches, at most "
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


def grid(m: int, partners: int) -> tuple[int, int] | None:
    """(dimensions d, side f) of the smallest grid whose GPUs have at most ``partners`` partners:
    the ``m`` GPUs get coordinates in base f with d digits, one group per line of the grid
    (d (f - 1) partners). None when even a hypercube (f = 2) has too many."""
    for d in range(2, m.bit_length() + 1):
        f = 2
        while f**d < m:
            f += 1
        if d * (f - 1) <= partners:
            return d, f
    return None


def shaped_fabric(topo: Topology, partners: int) -> tuple[Topology, dict, tuple[str, ...]]:
    """The logical fabric, the way back (``switch``: logical switch -> real one; ``chain``:
    (real switch, GPU) -> the GPU's nodes up to it) and the switches replaced. Every wide switch (more than ``partners + 1`` GPUs attached directly or through a
    NIC of their own) becomes a grid of smaller switches: GPU ``i``'s coordinates in base ``f``
    (``d`` digits), one switch per line of the grid, the GPU on the ``d`` lines through it with
    ``1/d`` of its bandwidth on each. Raises MscclError when no switch is wide or one cannot be
    shaped."""
    if partners < 1:
        raise MscclError(f"shaping needs at least 1 partner per GPU, got {partners}")
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
        shape_ = grid(m, partners)
        if shape_ is None:
            raise MscclError(f"shaping {sw}: {m} GPUs cannot have at most {partners} partners each")
        d, f = shape_
        lines: dict[tuple[int, tuple[int, ...]], list[int]] = {}
        for i in range(m):
            digits = tuple((i // f**t) % f for t in range(d))
            for t in range(d):
                lines.setdefault((t, digits[:t] + digits[t + 1:]), []).append(i)
        for (t, rest), members in sorted(lines.items()):
            if len(members) < 2:
                continue
            name = f"{sw}~{t}:{'.'.join(map(str, rest))}"
            nodes.append(Node(name, SWITCH, "shaped", group=topo.node(sw).group))
            real_of[name] = sw
            for i in members:
                gpu, _, b = att[i]
                logical.append(Link(gpu, name, b / d))
        for gpu, chain, _ in att:
            chains[(sw, gpu)] = chain
        drop.add(sw)
        drop.update(chain[1] for _, chain, _ in att if len(chain) == 3)
        shaped.append(sw)
    if not shaped:
        raise MscclError(f"no switch of {topo.name!r} joins more than {partners + 1} GPUs: nothing to shape")
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
    logical = solve(fabric, collective=real.collective, max_trees_per_root=max_trees_per_root)
    schedule = _on_real(logical, real, topo, paths)
    schedule = replace(
        schedule,
        warnings=schedule.warnings
        + (f"shaped to {partners} partners per GPU on {len(switches)} switch(es)",),
    )
    verify_schedule(schedule)
    return Shaped(
        schedule, partners, switches, real.optimal_algbw_exact, logical.optimal_algbw_exact, real.algbw_exact
    )


__all__ = ["Shaped", "shape", "shaped_fabric"]
