"""What a sweep produces: one :class:`SweepRow` per (algorithm, size), gathered in a :class:`Sweep`
(with the algorithms a sweep knows, :data:`ALGORITHMS`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solver.model.errors import ForestCollError
from solver.model.topology import Topology
from solver.model.units import format_size
from solver.simulate import baselines
from solver.simulate import library as _library
from solver.simulate.engine import (
    DEFAULT_MIN_CHUNKS,
)

#: ``nccl``: the library's own choice (see :mod:`solver.simulate.library`), not a simulated route set.
LIBRARY = "nccl"


#: the hierarchical NVLS allreduce (:mod:`.hierarchical_nvls`), on fabrics whose switches reduce
#: and multicast only (elsewhere it is left out without a word)
NVLS = "forestcoll-nvls"
ALGORITHMS = ("forestcoll", NVLS, LIBRARY) + baselines.ALGORITHMS


def busbw_factor(collective: str, n: int) -> float:
    """nccl-tests bus bandwidth factor: (n-1)/n for allgather/reduce-scatter, 2(n-1)/n allreduce."""
    if collective == "allreduce":
        return 2.0 * (n - 1) / n
    return (n - 1) / n


@dataclass(frozen=True)
class SweepRow:
    """One (algorithm, size) point. Times in seconds, bandwidths in GB/s."""

    algorithm: str
    collective: str
    size: int
    time: float  # simulated
    algbw: float
    busbw: float
    bound_time: float  # M / optimal algbw of the fabric (NaN if unknown)
    route_bound_time: float  # this algorithm's own link-load limit
    estimate_time: float  # alpha-aware estimate for this algorithm
    max_busy: float  # busiest link's busy fraction
    events: int
    wall: float
    chunk: float = 0.0  # chunk size used (raised above the requested one for huge runs)
    choice: str = ""  # nccl: the library's algorithm/protocol at this size
    model: str = "chunk"  # "chunk" (discrete events), "flow" (max-min fair rates), "tuner"

    @property
    def ratio_to_bound(self) -> float:
        return self.bound_time / self.time if self.time > 0 else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "algorithm": self.algorithm,
            "collective": self.collective,
            "size": self.size,
            "time_s": self.time,
            "algbw": self.algbw,
            "busbw": self.busbw,
            "bound_time_s": self.bound_time,
            "bound_algbw": self.size / self.bound_time / 1e9 if self.bound_time > 0 else None,
            "ratio_to_bound": self.ratio_to_bound,
            "route_bound_time_s": self.route_bound_time,
            "estimate_time_s": self.estimate_time,
            "estimate_algbw": self.size / self.estimate_time / 1e9,
            "max_link_busy": self.max_busy,
            "events": self.events,
            "chunk": self.chunk,
            "choice": self.choice,
            "model": self.model,
        }


@dataclass
class Sweep:
    """Rows of a sweep plus what produced them."""

    topology: Topology
    collective: str
    chunk: int
    latency_us: float
    optimal_algbw: float  # GB/s, NaN if no schedule
    min_chunks: int = DEFAULT_MIN_CHUNKS
    rows: list[SweepRow] = field(default_factory=list)
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    link_busy: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    library: _library.Library | None = None  # the library modelled (None: the fabric's own)
    line_rate: bool = False  # simulated algorithms at line rate, not derated to the library

    def table(self, algorithm: str) -> list[SweepRow]:
        return [r for r in self.rows if r.algorithm == algorithm]

    def in_switch_note(self) -> str:
        """A sentence when the library's in-switch reduction (NVLS) beats the ForestColl bound,
        which assumes switches only forward; '' otherwise."""
        rows = [r for r in self.table(LIBRARY) if r.choice.startswith("NVLS")]
        over = [r for r in rows if r.algbw > self.optimal_algbw * (1 + 1e-9)]
        if not over:
            return ""
        best = max(over, key=lambda r: r.algbw)
        note = (
            f"{best.choice} reduces inside the NVSwitch: {best.algbw:.1f} GB/s at "
            f"{format_size(best.size)} beats the ForestColl bound {self.optimal_algbw:.1f} GB/s, "
            "which assumes switches only forward"
        )
        if self.collective != "allreduce" or len(self.topology.compute_ids) < 2:
            return note
        from solver.algorithm.capability_bounds import capability_bounds

        try:
            cap = capability_bounds(self.topology, "allreduce")
        except ForestCollError:  # over a cost limit: the note without the capability figure
            return note
        kind = "exact" if cap.exact else "constructed"
        where = "at or below" if best.algbw <= float(cap.capability) * (1 + 1e-9) else "ABOVE"
        return (
            f"{note}; it stays {where} the capability optimum {float(cap.capability):.1f} GB/s "
            f"({kind}: in-switch reduction + multicast; any-schedule bound "
            f"{float(cap.any_schedule):.1f} GB/s)"
        )
