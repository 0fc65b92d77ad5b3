"""The hierarchical NVLS allreduce built out: its transfers, exact link loads, and their check.

:func:`solver.algorithm.capability_bounds.hierarchical_allreduce` gives the construction's time
from two formulas. Here the schedule is made concrete, so the figure can be checked link by link:

- inside each NVLS domain (switch w, p GPUs) the in-switch reduce-scatter and the multicast
  allgather as transfers of portions (:data:`Transfer`: bytes per byte of the message M);
- between domains, for each index j, ForestColl's own allreduce schedule (reduce-scatter trees then
  allgather trees) on :func:`~solver.algorithm.capability_bounds.index_fabric`, carrying the 1/p
  portion: every tree edge moves ``weight · (1/p) / k`` along every hop of its path (k domains).

:func:`verify_hierarchical` re-derives everything from the transfers and trees: the index groups
partition the compute nodes with one GPU per domain, every sub-schedule passes
:func:`solver.algorithm.verify.verify_schedule`, every hop is a link of the fabric, each
GPU–switch link carries exactly M each way, and the time from the summed loads
(``max load / bandwidth``, all groups and phases pipelined at once) is at most the construction's
figure (which runs each group's reduce-scatter and allgather one after the other, and groups that
share a link one after another).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from solver.algorithm.capability_bounds import Hierarchical, hierarchical_allreduce, index_fabric
from solver.algorithm.verify import verify_schedule
from solver.model.errors import SolverError
from solver.model.schedule import Schedule
from solver.model.topology import Topology


@dataclass(frozen=True)
class Transfer:
    """``amount`` bytes per byte of M from ``source`` to ``target`` (one directed link);
    ``what`` says which step it is."""

    source: str
    target: str
    amount: Fraction
    what: str


@dataclass(frozen=True)
class HierarchicalSchedule:
    """The concrete hierarchical allreduce on ``topology``."""

    topology: Topology
    plan: Hierarchical  # the construction's figures
    transfers: tuple[Transfer, ...]  # inside the NVLS domains
    groups: tuple[tuple[str, ...], ...]  # index j -> its GPUs, one per domain
    schedules: tuple[Schedule, ...]  # index j -> ForestColl allreduce on index_fabric(j)

    def loads(self) -> dict[tuple[str, str], Fraction]:
        """Bytes per byte of M on every directed link: domain transfers plus the trees of every
        index group (each carrying a 1/p portion)."""
        out: dict[tuple[str, str], Fraction] = {}

        def add(u: str, v: str, amount: Fraction) -> None:
            out[(u, v)] = out.get((u, v), Fraction(0)) + amount

        for t in self.transfers:
            add(t.source, t.target, t.amount)
        p = len(self.groups)
        for sched in self.schedules:
            k = len(sched.topology.compute_ids)
            for phase in sched.phases:
                for tree in phase.trees:
                    share = tree.weight / (p * k)
                    for edge in tree.edges:
                        for u, v in zip(edge.path, edge.path[1:]):
                            add(u, v, share)
        return out

    def time_per_byte(self) -> Fraction:
        """max over directed links of load / bandwidth (every step pipelined at once)."""
        bw = self.topology.directed_bandwidths()
        return max(load / bw[e] for e, load in self.loads().items())


def build_hierarchical(
    topo: Topology, solve: Callable[[Topology, str], Schedule] | None = None
) -> HierarchicalSchedule:
    """The concrete schedule; raises :class:`SolverError` when the construction does not apply."""
    plan = hierarchical_allreduce(topo)
    if not plan.applies:
        raise SolverError(f"no hierarchical NVLS schedule: {plan.reason}")
    if solve is None:
        from solver.algorithm.pipeline import solve as pipeline_solve

        solve = pipeline_solve
    p = len(plan.domains[0][1])
    portion = Fraction(1, p)
    transfers = []
    for w, members in plan.domains:
        for v in members:
            for u in members:
                if u != v:
                    transfers.append(Transfer(v, w, portion, f"{v}'s part of {u}'s portion up"))
            transfers.append(Transfer(w, v, portion, f"domain sum of {v}'s portion down"))
            transfers.append(Transfer(v, w, portion, f"{v}'s result up once"))
            for u in members:
                if u != v:
                    transfers.append(Transfer(w, u, portion, f"{v}'s result multicast to {u}"))
    groups = tuple(tuple(members[j] for _, members in plan.domains) for j in range(p))
    schedules = ()
    if len(plan.domains) > 1:
        schedules = tuple(solve(index_fabric(topo, plan.domains, j), "allreduce") for j in range(p))
    return HierarchicalSchedule(topo, plan, tuple(transfers), groups, schedules)


def verify_hierarchical(h: HierarchicalSchedule) -> None:
    """Check every claim of ``h`` (module docstring); raise :class:`SolverError` on the first."""
    topo = h.topology
    bw = topo.directed_bandwidths()
    compute = topo.compute_ids
    seen = [c for g in h.groups for c in g]
    if sorted(seen) != sorted(compute):
        raise SolverError("the index groups do not partition the compute nodes")
    domain_of = {c: w for w, members in h.plan.domains for c in members}
    for j, g in enumerate(h.groups):
        if len({domain_of[c] for c in g}) != len(g) or len(g) != len(h.plan.domains):
            raise SolverError(f"index group {j} does not hold one GPU per domain")
    for t in h.transfers:
        if (t.source, t.target) not in bw:
            raise SolverError(f"transfer {t.what!r} uses no link {t.source}->{t.target}")
    up: dict[str, Fraction] = {}
    down: dict[str, Fraction] = {}
    for t in h.transfers:
        if t.source in domain_of:
            up[t.source] = up.get(t.source, Fraction(0)) + t.amount
        else:
            down[t.target] = down.get(t.target, Fraction(0)) + t.amount
    for c in compute:
        if up.get(c) != 1 or down.get(c) != 1:
            raise SolverError(
                f"{c}: its NVLS link carries {up.get(c)} up and {down.get(c)} down, not M each way"
            )
    # the multicast copies of each result reach every other member of its domain exactly once
    for _w, members in h.plan.domains:
        for v in members:
            got = sorted(
                t.target for t in h.transfers if t.what == f"{v}'s result multicast to {t.target}"
            )
            if got != sorted(u for u in members if u != v):
                raise SolverError(f"{v}'s result does not reach its domain exactly once")
    for j, sched in enumerate(h.schedules):
        if sched.collective != "allreduce":
            raise SolverError(f"index {j}: the sub-schedule is {sched.collective}, not allreduce")
        if set(sched.topology.compute_ids) != set(h.groups[j]):
            raise SolverError(f"index {j}: the sub-schedule's GPUs are not the index group")
        verify_schedule(sched)
        for phase in sched.phases:
            for tree in phase.trees:
                for edge in tree.edges:
                    for u, v in zip(edge.path, edge.path[1:]):
                        if (u, v) not in bw:
                            raise SolverError(
                                f"index {j}: hop {u}->{v} is not a link of the fabric"
                            )
                        if u in domain_of.values() or v in domain_of.values():
                            raise SolverError(f"index {j}: hop {u}->{v} uses an NVLS switch")
    claimed = max(h.plan.intra, h.plan.inter)
    measured = h.time_per_byte()
    if measured > claimed:
        raise SolverError(f"the loads need {measured} s per byte, more than the claimed {claimed}")
