"""The hierarchical NVLS allreduce (:mod:`solver.algorithm.hierarchical`) as a simulated line.

The schedule has two parts that use disjoint links (``verify_hierarchical`` checks it):

- inside each NVLS domain, the in-switch reduce-scatter and the multicast allgather: every
  GPU–switch link carries exactly M each way. The simulator has no in-switch reduction, so this
  part is timed as the library's NVLS is (:func:`solver.simulate.library.nvls_allreduce_algbw`,
  calibrated on public figures): the link moves its M at
  :data:`~solver.simulate.library.NVLS_LINK_EFFICIENCY` of its line rate (1 with ``line_rate``),
  plus NCCL's NVLS latency (tuning.cc:384-437, ``HW_LAT["nvlink"]["NVLS"]`` Simple);
- between domains, for every index j, ForestColl's own allreduce trees on the index fabric,
  carrying the 1/p portion: simulated by the chunk-level (or flow-level) engine like the
  ``forestcoll`` line, on the same derated links. Index groups that share no link run at once
  (the slowest counts); otherwise one after another (their times add).

With the message in chunks the two parts overlap (the steady state every ForestColl figure
states): ``time = max(domain part, between-domain part) + NVLS latency``. On one domain there is
no between-domain part. Its bound is the capability optimum
(:func:`solver.algorithm.capability_bounds.capability_bounds`), which the line never exceeds:
the domain part alone needs M / b and the between-domain part at least its forward-only optimum.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from solver.algorithm.capability_bounds import hierarchical_allreduce, index_fabric
from solver.algorithm.hierarchical import HierarchicalSchedule, build_hierarchical
from solver.model.errors import Cancelled
from solver.model.topology import Topology
from solver.simulate import library as _library
from solver.simulate.engine import fits_chunk_level, prepare, simulate_prepared
from solver.simulate.estimate import PreparedModel
from solver.simulate.flowlevel import simulate_flows
from solver.simulate.routes import from_schedule

#: the algorithm name of the line (``forestcoll simulate --algorithms``)
NAME = "forestcoll-nvls"
#: NCCL's NVLS latency on NVLink, Simple protocol (us), tuning.cc:384-437 as library.HW_LAT
NVLS_LATENCY_US = _library.HW_LAT["nvlink"]["NVLS"][_library.PROTOS.index("Simple")]


def why_not(topo: Topology, collective: str) -> str:
    """'' when the line applies to ``collective`` on ``topo``, else the reason."""
    if collective != "allreduce":
        return (
            f"the hierarchical NVLS schedule is an allreduce; for {collective} a reducing or "
            "multicasting switch does not beat the cut bound (docs/bounds.md)"
        )
    plan = hierarchical_allreduce(topo)
    return "" if plan.applies else f"no hierarchical NVLS schedule: {plan.reason}"


@dataclass(frozen=True)
class NvlsRun:
    """One size: seconds of each part and the total."""

    size: int
    domain: float  # the NVLS part on the GPU–switch links (bandwidth term)
    between: float  # the index groups' ForestColl allreduce of their portions (simulated)
    time: float


class NvlsModel:
    """The line for one fabric: the concrete schedule and the prepared sub-simulations."""

    def __init__(
        self,
        topo: Topology,
        links: Topology,
        generation: str,
        line_rate: bool,
        latency_us: float,
        schedule: HierarchicalSchedule | None = None,
    ) -> None:
        """``topo``: the fabric at line rate; ``links``: the same fabric at the bandwidths the
        simulated algorithms get (derated, or ``topo`` itself); ``generation``: for the NVLS
        link efficiency."""
        self.schedule = schedule or build_hierarchical(topo)
        self.forward_only = None  # the fabric's forward-only allreduce optimum, if known
        plan = self.schedule.plan
        self.efficiency = (
            1.0
            if line_rate
            else _library.NVLS_LINK_EFFICIENCY.get(
                generation, _library.NVLS_LINK_EFFICIENCY["hopper"]
            )
        )
        self.generation = generation
        bw = topo.directed_bandwidths()
        self.slowest = float(
            min(min(bw[(c, w)], bw[(w, c)]) for w, members in plan.domains for c in members)
        )
        self.p = len(plan.domains[0][1])
        self.concurrent = plan.concurrent
        self._parts = []
        for j, sched in enumerate(self.schedule.schedules):
            sub_links = index_fabric(links, plan.domains, j)
            prep = prepare(from_schedule(sched), latency_us, sub_links)
            self._parts.append((prep, PreparedModel(prep)))

    def run(
        self,
        size: int,
        chunk: float,
        min_chunks: int,
        model: str = "auto",
        cancel: Callable[[], bool] | None = None,
    ) -> NvlsRun:
        domain = size / (self.slowest * self.efficiency * 1e9)
        portion = max(1, size // self.p)
        times = []
        for prep, estimate in self._parts:
            if cancel is not None and cancel():
                raise Cancelled("cancelled")
            flow = model == "flow" or (
                model == "auto" and not fits_chunk_level(prep, portion, chunk, min_chunks)
            )
            if flow:
                run = simulate_flows(estimate, portion, chunk, min_chunks, cancel=cancel)
                times.append(run.time)
            else:
                watch = None if cancel is None else (lambda _f: cancel())
                times.append(simulate_prepared(prep, portion, chunk, min_chunks, watch=watch).time)
        between = 0.0 if not times else (max(times) if self.concurrent else sum(times))
        return NvlsRun(size, domain, between, max(domain, between) + NVLS_LATENCY_US * 1e-6)

    def notes(self) -> tuple[str, ...]:
        plan = self.schedule.plan
        switches = ", ".join(w for w, _ in plan.domains[:4]) + (
            f" and {len(plan.domains) - 4} more" if len(plan.domains) > 4 else ""
        )
        out = [
            f"hierarchical NVLS allreduce: in-switch reduce-scatter and multicast allgather "
            f"on {switches} ({self.p} GPUs each; each GPU link moves M each way at "
            f"{100 * self.efficiency:.1f} % of {self.slowest:g} GB/s"
            + ("" if self.efficiency == 1 else f", the {self.generation} NVLS efficiency")
            + f", + {NVLS_LATENCY_US:g} us)"
        ]
        if self._parts:
            out.append(
                f"between domains: ForestColl allreduce of each GPU's 1/{self.p} portion in "
                f"{len(self._parts)} index groups, simulated"
                + ("" if self.concurrent else ", one after another (they share links)")
            )
        out.append(
            "bound: the capability optimum (in-switch reduction and multicast), not the "
            "forward-only one"
        )
        if self.forward_only is not None and plan.algbw < self.forward_only:
            out.append(
                f"slower than forwarding here: the construction reaches "
                f"{float(plan.algbw):.2f} GB/s at line rate, ForestColl's forward-only "
                f"optimum {float(self.forward_only):.2f}"
            )
        return tuple(out)
