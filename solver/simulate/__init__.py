"""Chunk-level network simulation of collective schedules and baselines.

- :mod:`.routes`: route sets (flows over trees) built from a ForestColl :class:`Schedule` or a
  baseline; link-load bound and alpha-aware estimate.
- :mod:`.engine`: the discrete-event simulator (model in its docstring).
- :mod:`.baselines`: NCCL-style rings, double binary tree, direct, Blink-style trees.
- :mod:`.library`: what NCCL/RCCL would run (their tuner's model): the ``nccl`` baseline.
- :mod:`.calibration`: real logs, their fabrics, and the library model's error on them.
- :mod:`.nccl_tests`: importers of nccl-tests / rccl-tests logs.

:func:`sweep` runs several algorithms over a range of sizes and returns :class:`SweepRow` rows;
:func:`result_tables` turns them into :class:`~solver.model.results.ResultTable` objects for HDF5.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from solver.model.errors import Cancelled, ForestCollError
from solver.model.results import ResultTable
from solver.model.schedule import Schedule
from solver.model.topology import Topology
from solver.model.units import format_size
from solver.simulate import baselines
from solver.simulate import library as _library
from solver.simulate.engine import (
    DEFAULT_MIN_CHUNKS,
    SimRun,
    fits_chunk_level,
    prepare,
    simulate_prepared,
    simulate_routes,
)
from solver.simulate.estimate import DEFAULT_CHUNK, PreparedModel
from solver.simulate.flowlevel import simulate_flows
from solver.simulate.routes import (
    DEFAULT_LATENCY_US,
    RouteSet,
    from_schedule,
)

DEFAULT_SIZES = "1K:4G"
#: ``nccl``: the library's own choice (see :mod:`solver.simulate.library`), not a simulated route set.
LIBRARY = "nccl"
ALGORITHMS = ("forestcoll", LIBRARY) + baselines.ALGORITHMS

MAX_SIZE = 1 << 48  # bytes per message (256 TiB): far beyond any run, far below int64
MAX_SIZES = 1000  # sizes in one sweep

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str | int) -> int:
    """Bytes from ``512``, ``1K``, ``4M``, ``1G``, ``1KiB``, ``2GB`` (binary units)."""
    if isinstance(text, int):
        size = text
    else:
        m = re.fullmatch(
            r"\s*(\d{1,20}(?:\.\d{1,20})?)\s*([KMGT]?)(?:i?B)?\s*", str(text)[:80], re.IGNORECASE
        )
        if not m or len(str(text)) > 80:
            raise ForestCollError(f"bad size {str(text)[:40]!r} (use e.g. 512, 64K, 1M, 4G)")
        size = int(Fraction(m.group(1)) * _UNITS[m.group(2).upper()])
    if size <= 0:
        raise ForestCollError(f"size must be > 0 bytes, got {str(text)[:40]!r}")
    if size > MAX_SIZE:
        raise ForestCollError(f"size {str(text)[:40]!r} is larger than the 256 TiB limit")
    return size


def parse_sizes(spec: str) -> list[int]:
    """``MIN:MAX`` (factor 2), ``MIN:MAX:FACTOR`` or a comma list ``1K,1M,1G``."""
    spec = spec.strip()
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise ForestCollError(f"bad size range {spec!r} (use MIN:MAX or MIN:MAX:FACTOR)")
        lo, hi = parse_size(parts[0]), parse_size(parts[1])
        factor = 2
        if len(parts) == 3:
            try:
                factor = int(parts[2]) if len(parts[2]) <= 20 else -1
            except ValueError:
                raise ForestCollError(f"bad factor {parts[2]!r} in {spec!r}") from None
            if factor < 2:
                raise ForestCollError(f"factor must be >= 2 in {spec!r}")
        if hi < lo:
            raise ForestCollError(f"size range {spec!r} ends below its start")
        sizes = []
        s = lo
        while s <= hi:
            sizes.append(s)
            s *= factor
        return sizes
    items = [x for x in spec.split(",") if x.strip()]
    if len(items) > MAX_SIZES:
        raise ForestCollError(f"{len(items)} sizes given; at most {MAX_SIZES}")
    sizes = [parse_size(x) for x in items]
    if not sizes:
        raise ForestCollError("no sizes given")
    return sizes


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


def route_sets(
    topo: Topology,
    collective: str,
    algorithms: Sequence[str],
    schedule: Schedule | None = None,
    check: Callable[[str, float], None] | None = None,
) -> tuple[dict[str, RouteSet], dict[str, str]]:
    """Route sets for ``algorithms``; returns (built, skipped-with-reason).

    ``check(name, fraction)`` is called every few milliseconds while baseline ``name`` is being
    built (routing, ring placement, Blink's trees); it may raise Cancelled to stop."""
    built: dict[str, RouteSet] = {}
    skipped: dict[str, str] = {}
    routing = None
    for name in algorithms:
        if name not in ALGORITHMS:
            raise ForestCollError(
                f"unknown algorithm {name!r} (choose from {', '.join(ALGORITHMS)})"
            )
        if name == LIBRARY:
            continue
        if name == "forestcoll":
            if schedule is None:
                skipped[name] = "no schedule"
                continue
            if schedule.collective != collective:
                raise ForestCollError(f"schedule is for {schedule.collective}, not {collective}")
            built[name] = from_schedule(schedule)
            continue
        if name == "tree" and collective != "allreduce":
            skipped[name] = "NCCL's tree exists for allreduce only"
            continue
        hook = None if check is None else (lambda f, name=name: check(name, f))
        if routing is None:
            routing = baselines.Routing(topo, None if check is None else (lambda f: check("routes", f)))
        built[name] = baselines.build(name, topo, collective, routing, hook)
    return built, skipped


def _build_check(progress, cancel) -> Callable[[str, float], None] | None:
    """The ``check`` of :func:`route_sets` for a sweep: raises Cancelled once ``cancel`` is set,
    reports "build ring 40 %" through ``progress`` at most every 0.1 s."""
    if progress is None and cancel is None:
        return None
    last = [0.0]

    def check(name: str, fraction: float) -> None:
        if _cancelled(cancel):
            raise Cancelled("cancelled while building routes")
        now = time.monotonic()
        if progress is not None and now - last[0] >= 0.1:
            last[0] = now
            progress(f"build {name} {100 * fraction:.0f} %", 0.0)

    return check


def forward_only_bound(topo: Topology, collective: str) -> float:
    """The exact forward-only optimum algbw (GB/s) of ``collective`` on ``topo`` (allgather; the
    reversed fabric for reduce-scatter; both in series for allreduce), without building trees."""
    from solver.algorithm.optimum import compute_optimum
    from solver.flow.csr import IndexedFabric

    def allgather(t: Topology) -> Fraction:
        return compute_optimum(IndexedFabric.from_topology(t)).algbw

    if collective == "allgather":
        return float(allgather(topo))
    rs = allgather(topo.reversed())
    if collective == "reduce-scatter":
        return float(rs)
    return float(1 / (1 / rs + 1 / allgather(topo)))


def sweep(
    topo: Topology,
    collective: str = "allgather",
    algorithms: Sequence[str] = ALGORITHMS,
    sizes: Iterable[int] = (),
    chunk: int = DEFAULT_CHUNK,
    latency_us: float = DEFAULT_LATENCY_US,
    schedule: Schedule | None = None,
    progress: Callable[[str, float], None] | None = None,
    cancel: Any = None,
    keep_link_busy: bool = False,
    min_chunks: int = DEFAULT_MIN_CHUNKS,
    library: _library.Library | None = None,
    model: str = "auto",
    line_rate: bool = False,
) -> Sweep:
    """Simulate every algorithm at every size (``schedule``: the ForestColl schedule to use).

    ``library``: the library the ``nccl`` row models (None: the one the fabric's hardware runs,
    :func:`solver.simulate.library.library_for`); when given, the simulated algorithms run on links
    derated to what its transfers reach (:func:`solver.simulate.library.derated`), as the ``nccl``
    row is, unless ``line_rate``. The two choices are independent.
    ``progress(text, fraction)`` is called every ~0.1 s, also during one long run; ``cancel``
    (an Event or a callable) stops a running simulation within ~10 ms (:class:`Cancelled`).
    ``model``: "chunk" (discrete events, chunks coarsened past 4 M transmissions), "flow"
    (:mod:`solver.simulate.flowlevel`), or "auto": chunk-level while the requested chunking fits,
    flow-level beyond (where chunk events explode).
    """
    if model not in ("auto", "chunk", "flow"):
        raise ForestCollError(f"unknown simulation model {model!r} (auto, chunk, flow)")
    sizes = list(sizes) or parse_sizes(DEFAULT_SIZES)
    if chunk <= 0:
        raise ForestCollError(f"chunk must be > 0 bytes, got {chunk}")
    built, skipped = route_sets(
        topo, collective, algorithms, schedule, _build_check(progress, cancel)
    )
    opt = float(schedule.optimal_algbw_exact) if schedule is not None else float("nan")
    result = Sweep(
        topo, collective, int(chunk), float(latency_us), opt, min_chunks=min_chunks,
        library=library, line_rate=line_rate,
    )
    for name, why in skipped.items():
        result.notes[name] = (f"skipped: {why}",)
    n = len(topo.compute_ids)
    factor = busbw_factor(collective, n)
    with_library = LIBRARY in algorithms
    total = max(1, len(built) * len(sizes) + (len(sizes) if with_library else 0))
    done = 0
    link_topo = _library.derated(topo, library) if library is not None and not line_rate else topo
    if with_library:
        # no forward-only schedule beats the optimum of the links it runs on: at line rate the
        # schedule's own optimum, on derated links that of the derated fabric
        cap = opt if link_topo is topo or math.isnan(opt) else forward_only_bound(link_topo, collective)
        done = _library_rows(result, sizes, factor, opt, cap)
        if progress is not None:
            progress("library model", done / total)
    for name, rs in built.items():
        result.notes[name] = rs.notes
        prep = prepare(rs, latency_us, link_topo)
        estimate = PreparedModel(prep)
        for size in sizes:
            if _cancelled(cancel):
                raise Cancelled("cancelled")
            flow_level = model == "flow" or (
                model == "auto" and not fits_chunk_level(prep, size, chunk, min_chunks)
            )
            if flow_level:
                run = simulate_flows(estimate, size, chunk, min_chunks, cancel=_cancel_fn(cancel))
            else:
                watch = _watch(progress, cancel, name, size, done, total)
                run = simulate_prepared(prep, size, chunk, min_chunks, watch=watch)
            bound = float("nan") if math.isnan(opt) else size / (opt * 1e9)
            result.rows.append(
                SweepRow(
                    algorithm=name,
                    collective=collective,
                    size=size,
                    time=run.time,
                    algbw=run.algbw,
                    busbw=run.algbw * factor,
                    bound_time=bound,
                    route_bound_time=estimate.link_bound_time(size),
                    estimate_time=estimate.estimate_time(size, run.chunk, min_chunks),
                    max_busy=float(run.busy_fraction.max()) if run.busy_fraction.size else 0.0,
                    events=run.events,
                    wall=run.wall,
                    chunk=run.chunk,
                    model="flow" if flow_level else "chunk",
                )
            )
            if keep_link_busy:
                result.link_busy[(name, size)] = run.busy_fraction
            done += 1
            if progress is not None:
                progress(f"simulate {name}", done / total)
    return result


def _cancel_fn(cancel: Any):
    return None if cancel is None else (lambda: _cancelled(cancel))


def _cancelled(cancel: Any) -> bool:
    return cancel is not None and bool(cancel() if callable(cancel) else cancel.is_set())


def _watch(progress, cancel, name: str, size: int, done: int, total: int):
    """The kernel watcher of one (algorithm, size) run: reports progress within the run and
    answers True (stop) once ``cancel`` is set; None when nobody listens."""
    if progress is None and cancel is None:
        return None

    def watch(fraction: float) -> bool:
        if progress is not None:
            progress(f"simulate {name} {format_size(size)}", (done + fraction) / total)
        return _cancelled(cancel)

    return watch


def _library_rows(sw: Sweep, sizes: list[int], factor: float, opt: float, cap: float) -> int:
    """Append the ``nccl`` rows (the library tuner's pick and time per size, forward-only
    choices at most ``cap`` GB/s); returns the count."""
    tuner = _library.tuner(sw.topology, sw.collective, sw.library,
                           bound_algbw=None if math.isnan(cap) else cap)
    lib = tuner.library
    notes = [f"{lib.label} tuner model"]  # name, generation, NVLS and the run's settings
    if sw.library is None:
        notes.append(f"library from the hardware: {_library.library_reason(sw.topology)}")
    picks: dict[str, list[int]] = {}
    for size in sizes:
        choice, t = tuner.best(size)
        picks.setdefault(choice.label, []).append(size)
        sw.rows.append(
            SweepRow(
                algorithm=LIBRARY,
                collective=sw.collective,
                size=size,
                time=t,
                algbw=size / t / 1e9,
                busbw=size / t / 1e9 * factor,
                bound_time=float("nan") if math.isnan(opt) else size / (opt * 1e9),
                route_bound_time=float("nan"),
                estimate_time=t,
                max_busy=float("nan"),
                events=0,
                wall=0.0,
                choice=choice.label,
                model="tuner",
            )
        )
    for label, at in picks.items():
        notes.append(f"{label} at {format_size(min(at))}..{format_size(max(at))}")
    capped = sorted({c.label for c in tuner.choices if c.capped})
    if capped:
        notes.append(
            f"{', '.join(capped)} capped at the forward-only bound {cap:.1f} GB/s of the links "
            f"{'at line rate' if cap == opt else 'at the library efficiency'}: the tuner's "
            "figures for this fabric are above what any schedule that only forwards can reach"
        )
    sw.notes[LIBRARY] = tuple(notes)
    return len(sizes)


def warm_up() -> float:
    """Compile (or load from the numba cache) the simulator kernels on a tiny fabric; seconds taken.

    Call it once in a worker thread at start-up so that the first real sweep does not pay the
    JIT compile (about 15 s cold on 2 cores, well under 1 s with a warm cache).
    """
    import time

    from solver.io.templates import ring

    t0 = time.perf_counter()
    sweep(ring(3), "allreduce", ["ring", "blink"], [1 << 16])
    return time.perf_counter() - t0


def result_tables(sw: Sweep, schedule_name: str = "") -> dict[str, ResultTable]:
    """``/results`` tables: ``sim_<collective>_<algorithm>`` per algorithm (source simulator).

    The ``nccl`` table's attrs also name the library, its pick at each size (``choice``) and the
    in-switch reduction note (:meth:`Sweep.in_switch_note`), so a results file shows what
    ``simulate`` printed.
    """
    tables: dict[str, ResultTable] = {}
    for name in dict.fromkeys(r.algorithm for r in sw.rows):
        rows = sw.table(name)
        size = np.array([r.size for r in rows], np.int64)
        t = np.array([r.time for r in rows], np.float64)
        tables[f"sim_{sw.collective.replace('-', '_')}_{name}"] = ResultTable(
            collective=sw.collective,
            algorithm=name,
            source="simulator",
            size_bytes=size,
            predicted_time=t,
            predicted_algbw=size / t / 1e9,
            measured_time=ResultTable.empty_measured(len(rows)),
            measured_algbw=ResultTable.empty_measured(len(rows)),
            schedule=schedule_name if name == "forestcoll" else "",
            attrs={
                "chunk_bytes": sw.chunk,
                "min_chunks": sw.min_chunks,
                "default_latency_us": sw.latency_us,
                "bound_time_s": _json_floats(r.bound_time for r in rows),
                "estimate_time_s": _json_floats(r.estimate_time for r in rows),
                "route_bound_time_s": _json_floats(r.route_bound_time for r in rows),
                "model": "chunk-level discrete events; see solver/simulate/engine.py",
                **(_library_attrs(sw, rows) if name == LIBRARY else {}),
            },
        )
    return tables


def _json_floats(values: Iterable[float]) -> list[float | None]:
    """Floats for a table's JSON attrs: NaN (unknown, e.g. the library's route bound) as null,
    which the results file reads back (it refuses NaN)."""
    return [None if math.isnan(v) else float(v) for v in values]


def _library_attrs(sw: Sweep, rows: list[SweepRow]) -> dict[str, Any]:
    """What the ``nccl`` table adds: the library, its pick per size, and the in-switch note."""
    lib = sw.library or _library.library_for(sw.topology)
    return {
        "model": "the library tuner's own model; see solver/simulate/library.py",
        "library": lib.name,
        "generation": lib.generation,
        "spec": _library.library_spec(lib),
        "choice": [r.choice for r in rows],
        "in_switch_note": sw.in_switch_note(),
    }


__all__ = [
    "ALGORITHMS",
    "DEFAULT_CHUNK",
    "DEFAULT_MIN_CHUNKS",
    "DEFAULT_LATENCY_US",
    "LIBRARY",
    "RouteSet",
    "SimRun",
    "Sweep",
    "SweepRow",
    "busbw_factor",
    "format_size",
    "from_schedule",
    "parse_size",
    "parse_sizes",
    "result_tables",
    "route_sets",
    "simulate_routes",
    "sweep",
    "warm_up",
]
