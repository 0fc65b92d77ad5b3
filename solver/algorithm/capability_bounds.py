"""Three figures for a fabric whose switches may reduce and multicast (NVLS, SHARP), exactly.

All figures are algorithm bandwidths (GB/s, ``M / time`` for an ``M``-byte collective, as
nccl-tests' algbw) and :class:`fractions.Fraction`, as the solver's optimum is. For one collective:

(a) ``forward_only``: ForestColl's optimum, switches only forwarding (what its schedules reach).
    Allgather: ``N · min_S B⁺(S) / |S∩Vc|``; reduce-scatter: the same on the reversed fabric;
    allreduce: reduce-scatter then allgather, ``1 / (1/RS + 1/AG)``.
(b) ``any_schedule``: an upper bound no schedule beats, whatever the switches do (forward,
    replicate, add, even code): a cut-set argument on the information that must cross each cut.
    - Allgather: the compute nodes outside a set S need every shard inside it, ``|S∩Vc| · M/N``
      bytes that nothing outside knows, so ``B⁺(S) · time ≥ |S∩Vc| · M/N`` for every S, whichever
      side each switch is on: exactly the forward-only bound. A multicasting switch saves the GPUs'
      sends, not cut bandwidth: (b) = (a), and ForestColl reaches it.
    - Reduce-scatter: the compute nodes outside S need, for each of their |Vc∖S| blocks, the sum
      of the inside contributions (M/N bytes each, unknown outside): ``B⁺(S) · time ≥ |Vc∖S| · M/N``.
      That is the allgather bound of the reversed fabric on the complement, i.e. (a) again: a
      reducing switch adds nothing a GPU could not add, (b) = (a).
    - Allreduce: for every S with compute nodes on both sides, the outside needs the inside's sum
      (M bytes) and the inside the outside's: ``time ≥ M / min(B⁺(S), B⁻(S))``. Since the
      complement of such an S is another such S, (b) = ``min over separating S of B⁺(S)`` =
      the least s–t max-flow between two compute nodes (in either direction).
(c) ``capability``: the best schedule we can construct with the marked capabilities, never above
    (b); ``exact`` when it meets (b) (then it is the optimum). Allgather and reduce-scatter: (a),
    exact. Allreduce: the larger of (a) and the hierarchical NVLS construction
    (:func:`hierarchical_allreduce`) when every compute node hangs off one switch that reduces
    and multicasts (its *domain*) and the domains are the same size.

The derivations are written out in ``docs/bounds.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from solver.algorithm.cost import MAX_FLOW_WORK, CostLimit, check_optimum, flow_work
from solver.algorithm.optimum import compute_optimum
from solver.algorithm.symmetry import box_symmetry
from solver.flow.csr import IndexedFabric
from solver.flow.maxflow import FlowNetwork
from solver.model.errors import ForestCollError, TopologyError
from solver.model.topology import Topology, validate

COLLECTIVES = ("allgather", "reduce-scatter", "allreduce")
#: compute nodes from which box symmetry is looked for (as the solver, pipeline.SYMMETRY_MIN_N)
SYMMETRY_MIN_N = 256


@dataclass(frozen=True)
class Hierarchical:
    """The hierarchical allreduce of :func:`hierarchical_allreduce`, or why it does not apply.

    Figures are seconds per byte of the message (``time / M``); ``algbw = 1 / time_per_byte``.
    ``intra``: the NVLS phases on the GPU–switch links (each carries M each way); ``inter``:
    the allreduce of each GPU's 1/p portion between domains; ``concurrent``: the index groups'
    sub-fabrics share no link (else they run one after another and their times add)."""

    applies: bool
    reason: str
    domains: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (switch, its GPUs in rank order)
    intra: Fraction = Fraction(0)
    inter: Fraction = Fraction(0)
    concurrent: bool = True

    @property
    def algbw(self) -> Fraction:
        t = max(self.intra, self.inter)
        return 1 / t if self.applies and t > 0 else Fraction(0)


@dataclass(frozen=True)
class CapabilityBounds:
    """The three figures of the module docstring for one collective (GB/s)."""

    collective: str
    forward_only: Fraction
    any_schedule: Fraction
    capability: Fraction
    exact: bool  # capability == any_schedule: the optimum given the capabilities is known
    construction: str  # how ``capability`` is reached, in words
    any_cut: tuple[str, ...]  # a node set S reaching ``any_schedule`` (its source side)
    switches: tuple[str, ...]  # the marked switches (reduce and/or multicast)
    hierarchical: Hierarchical | None = None

    @property
    def gap(self) -> Fraction:
        """How far ``capability`` is below ``any_schedule`` (0 when exact), a fraction of it."""
        return 1 - self.capability / self.any_schedule if self.any_schedule else Fraction(0)


def marked_switches(topo: Topology) -> tuple[str, ...]:
    return tuple(n.id for n in topo.nodes if n.capabilities)


def allgather_optimum(topo: Topology) -> tuple[Fraction, tuple[str, ...]]:
    """ForestColl's allgather optimum algbw and its bottleneck set (node ids); on identical boxes
    one max-flow per orbit of sinks, as the solver does; refused over the solver's cost limit."""
    fab = IndexedFabric.from_topology(topo)
    sinks = None
    if fab.num_compute >= SYMMETRY_MIN_N:
        sym = box_symmetry(topo, fab)
        sinks = None if sym is None else sym.sinks(fab)
    check_optimum(fab, sinks)
    opt = compute_optimum(fab, sinks=sinks)
    return opt.algbw, tuple(fab.names[i] for i, m in enumerate(opt.cut) if m)


def min_separating_cut(topo: Topology) -> tuple[Fraction, tuple[str, ...]]:
    """``min B⁺(S)`` over node sets S holding some but not all compute nodes, and one such S.

    Any such S holds a compute node u and misses one w; with ``c0`` the first compute node,
    either c0 ∈ S (S separates c0 from w) or not (S separates u from c0). So the least
    ``maxflow(c0→t)`` and ``maxflow(t→c0)`` over compute t is the minimum: 2(N−1) max-flows,
    each stopped once it reaches the best value so far (a flow that stops there cannot lower it).
    Refused over the solver's max-flow cost limit."""
    fab = IndexedFabric.from_topology(topo)
    # two max-flows per compute node, once (the optimum's limit is per Dinkelbach step)
    if flow_work(fab, 2 * fab.num_compute) > 2 * MAX_FLOW_WORK:
        raise CostLimit(
            f"the any-schedule bound needs {2 * (fab.num_compute - 1)} max-flows on "
            f"{fab.n} nodes (limit {2 * MAX_FLOW_WORK:.3g} units of work)"
        )
    tails = [u for u, _ in fab.edges]
    heads = [v for _, v in fab.edges]
    net = FlowNetwork(fab.n, tails, heads, list(fab.bw_int))
    c0 = fab.compute[0]
    best: tuple[int, tuple[str, ...]] | None = None
    for t in fab.compute[1:]:
        for s, d in ((c0, t), (t, c0)):
            value = net.max_flow(s, d, None if best is None else best[0])
            if best is None or value < best[0]:
                side = net.source_side(s)
                best = (value, tuple(fab.names[i] for i in range(fab.n) if side[i]))
    assert best is not None
    return Fraction(best[0], fab.scale), best[1]


def _directed(topo: Topology) -> dict[tuple[str, str], Fraction]:
    return topo.directed_bandwidths()


def nvls_domains(topo: Topology) -> tuple[list[tuple[str, tuple[str, ...]]], str]:
    """Switches that reduce and multicast, each with the compute nodes linked to it both ways
    (its domain, in rank order); '' or the reason the hierarchical construction does not apply."""
    bw = _directed(topo)
    compute = topo.compute_ids
    domains = []
    for n in topo.nodes:
        if n.reduces and n.multicasts:
            members = tuple(c for c in compute if (c, n.id) in bw and (n.id, c) in bw)
            if members:
                domains.append((n.id, members))
    if not domains:
        return [], "no switch both reduces and multicasts"
    seen: dict[str, str] = {}
    for sw, members in domains:
        for c in members:
            if c in seen:
                return domains, f"{c} is in two NVLS domains ({seen[c]}, {sw})"
            seen[c] = sw
    missing = [c for c in compute if c not in seen]
    if missing:
        return domains, f"{missing[0]} is in no NVLS domain"
    sizes = {len(m) for _, m in domains}
    if len(sizes) > 1:
        return domains, f"NVLS domains of different sizes ({', '.join(map(str, sorted(sizes)))})"
    return domains, ""


def index_fabric(
    topo: Topology, domains: Sequence[tuple[str, tuple[str, ...]]], j: int
) -> Topology:
    """The fabric the j-th GPUs of all domains use between domains: those GPUs, every switch but
    the domain switches, and the links among them; switches left with one neighbour (a dead end
    no flow needs, e.g. another GPU's NIC) are dropped, repeatedly."""
    keep_compute = {members[j] for _, members in domains}
    drop = {sw for sw, _ in domains}
    keep = {
        n.id
        for n in topo.nodes
        if (n.is_compute and n.id in keep_compute) or (not n.is_compute and n.id not in drop)
    }
    switch = {n.id for n in topo.nodes if not n.is_compute}
    while True:
        near: dict[str, set[str]] = {v: set() for v in keep}
        for link in topo.links:
            if link.source in keep and link.target in keep:
                near[link.source].add(link.target)
                near[link.target].add(link.source)
        dead = {v for v in keep if v in switch and len(near[v]) <= 1}
        if not dead:
            break
        keep -= dead
    return topo.without([n.id for n in topo.nodes if n.id not in keep])


def hierarchical_allreduce(topo: Topology) -> Hierarchical:
    """Allreduce with NVLS domains of p GPUs each (switch w, GPU v at b(v→w), b(w→v)):

    1. in-switch reduce-scatter: v sends w the (p−1)/p of its vector it does not own, w adds and
       returns to v the domain's partial sum of v's portion (M/p), v adds its own;
    2. between domains, the j-th GPUs of all domains allreduce their portions (M/p) with
       ForestColl's forward-only reduce-scatter + allgather on the fabric they share
       (:func:`index_fabric`);
    3. multicast allgather: v sends its final portion (M/p) once to w, which sends it to the
       other p−1.

    Each GPU–switch link carries (p−1)/p·M + M/p = M each way: phases 1 + 3 take
    ``M / min_v min(b(v→w), b(w→v))``. Phase 2 uses no GPU–switch link, so with the message cut
    into chunks all phases overlap and time = max(phase 1+3, phase 2) (steady state, as every
    ForestColl figure)."""
    domains, why = nvls_domains(topo)
    if why:
        return Hierarchical(False, why, tuple(domains))
    bw = _directed(topo)
    slowest = min(min(bw[(c, sw)], bw[(sw, c)]) for sw, members in domains for c in members)
    intra = 1 / slowest
    p = len(domains[0][1])
    if len(domains) == 1:
        return Hierarchical(True, "one NVLS domain", tuple(domains), intra, Fraction(0))
    times = []
    used: list[set[tuple[str, str]]] = []
    for j in range(p):
        sub = index_fabric(topo, domains, j)
        try:
            validate(sub)
        except TopologyError as exc:
            return Hierarchical(
                False,
                f"the GPUs of index {j} cannot reach each other outside their NVLS domains ({exc})",
                tuple(domains),
            )
        try:
            ag, _ = allgather_optimum(sub)
            rs, _ = allgather_optimum(sub.reversed())
        except ForestCollError as exc:
            return Hierarchical(False, f"index {j}: {exc}", tuple(domains))
        times.append((1 / rs + 1 / ag) / p)
        used.append(set(sub.directed_bandwidths()))
    concurrent = all(not (used[a] & used[b]) for a in range(p) for b in range(a + 1, p))
    inter = max(times) if concurrent else sum(times, Fraction(0))
    return Hierarchical(True, "NVLS domains", tuple(domains), intra, inter, concurrent)


def capability_bounds(topo: Topology, collective: str) -> CapabilityBounds:
    """(a), (b) and (c) of the module docstring for ``collective`` on ``topo``."""
    if collective not in COLLECTIVES:
        raise ForestCollError(f"unknown collective {collective!r}")
    switches = marked_switches(topo)
    ag, ag_cut = allgather_optimum(topo)
    if collective == "allgather":
        return CapabilityBounds(
            collective,
            ag,
            ag,
            ag,
            True,
            "ForestColl's trees (multicast cannot beat the cut bound)",
            ag_cut,
            switches,
        )
    rs, rs_cut = allgather_optimum(topo.reversed())
    if collective == "reduce-scatter":
        return CapabilityBounds(
            collective,
            rs,
            rs,
            rs,
            True,
            "ForestColl's aggregation trees (in-switch reduction cannot beat the cut bound)",
            rs_cut,
            switches,
        )
    forward = 1 / (1 / rs + 1 / ag)
    any_bw, any_cut = min_separating_cut(topo)
    hier = hierarchical_allreduce(topo)
    if hier.applies and hier.algbw > forward:
        capability = hier.algbw
        if len(hier.domains) == 1:
            how = "in-switch reduce-scatter + multicast allgather in one NVLS domain"
        else:
            how = (
                f"hierarchical: in-switch reduce-scatter in {len(hier.domains)} NVLS domains, "
                "ForestColl between them on each GPU's portion"
                + ("" if hier.concurrent else " (index groups one after another)")
                + ", multicast allgather"
            )
    else:
        capability = forward
        how = "ForestColl reduce-scatter + allgather (switches forwarding)"
        if switches and not hier.applies:
            how += f"; no NVLS construction: {hier.reason}"
    if capability > any_bw:  # a construction above a proven bound is a bug, never a figure
        raise ForestCollError(
            f"internal error: constructed allreduce {float(capability):.6g} GB/s above the "
            f"any-schedule bound {float(any_bw):.6g}"
        )
    return CapabilityBounds(
        collective, forward, any_bw, capability, capability == any_bw, how, any_cut, switches, hier
    )


def _percent(x: Fraction) -> str:
    """A gap for people: one decimal, more digits when that would read 0.0 %."""
    pct = 100 * float(x)
    return f"{pct:.1f} %" if pct >= 0.05 else f"{pct:.2g} %"


def describe(b: CapabilityBounds) -> list[str]:
    """Lines for the command line: the three figures, which is exact, and the gap."""
    lines = [
        f"forward-only optimum (switches forward, ForestColl's schedules): "
        f"{float(b.forward_only):.2f} GB/s",
        f"any-schedule bound (whatever switches do): {float(b.any_schedule):.2f} GB/s",
    ]
    state = (
        "exact, meets the any-schedule bound"
        if b.exact
        else (f"constructed, {_percent(b.gap)} below the any-schedule bound")
    )
    lines.append(
        f"with the marked capabilities: {float(b.capability):.2f} GB/s ({state}; {b.construction})"
    )
    return lines
