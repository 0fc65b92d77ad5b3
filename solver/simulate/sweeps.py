"""Running a sweep: route sets for the algorithms (:func:`route_sets`), then every algorithm at
every size (:func:`sweep`), chunk-level or flow-level, with progress and cancel; the library
tuner's rows; :func:`warm_up` compiles the kernels."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

from solver.model.errors import Cancelled, ForestCollError
from solver.model.schedule import Schedule
from solver.model.topology import Topology
from solver.model.units import format_size
from solver.simulate import baselines
from solver.simulate import library as _library
from solver.simulate.engine import (
    DEFAULT_MIN_CHUNKS,
    fits_chunk_level,
    prepare,
    simulate_prepared,
)
from solver.simulate.estimate import DEFAULT_CHUNK, PreparedModel
from solver.simulate.flowlevel import simulate_flows
from solver.simulate.routes import (
    DEFAULT_LATENCY_US,
    RouteSet,
    from_schedule,
)
from solver.simulate.rows import ALGORITHMS, LIBRARY, NVLS, Sweep, SweepRow, busbw_factor
from solver.simulate.sizes import DEFAULT_SIZES, parse_sizes


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
        if name in (LIBRARY, NVLS):
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
            routing = baselines.Routing(
                topo, None if check is None else (lambda f: check("routes", f))
            )
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
    """Simulate every algorithm at every size.

    Parameters
    ----------
    topo : Topology
        The fabric.
    collective : {"allgather", "reduce-scatter", "allreduce"}
    algorithms : sequence of str
        Rows to simulate, from :data:`ALGORITHMS` (``forestcoll``, the baselines, ``nccl``).
    sizes : iterable of int
        Message sizes in bytes; empty: :data:`DEFAULT_SIZES`.
    chunk : int
        Chunk size in bytes (> 0) of the chunk-level simulation.
    latency_us : float
        Per-hop latency (alpha) in microseconds.
    schedule : Schedule, optional
        The ForestColl schedule the ``forestcoll`` row runs; None: that row is skipped.
    progress : callable(text, fraction), optional
        Called every ~0.1 s, also during one long run.
    cancel : threading.Event-like or zero-argument callable, optional
        Stops a running simulation within ~10 ms (:class:`Cancelled`).
    keep_link_busy : bool
        Keep each run's busy fraction per link in ``Sweep.link_busy`` (for the heat map).
    min_chunks : int
        Every flow is cut into at least this many slices when it holds enough data (never
        below 4 KiB a slice), so schedules with many small trees still pipeline.
    library : Library, optional
        The library the ``nccl`` row models (None: the one the fabric's hardware runs,
        :func:`solver.simulate.library.library_for`); when given, the simulated algorithms run
        on links derated to what its transfers reach (:func:`solver.simulate.library.derated`),
        as the ``nccl`` row is, unless ``line_rate``.
    model : {"auto", "chunk", "flow"}
        "chunk": discrete events (chunks coarsened past 4 M transmissions); "flow":
        :mod:`solver.simulate.flowlevel`; "auto": chunk-level while the requested chunking
        fits, flow-level beyond (where chunk events explode).
    line_rate : bool
        Run the simulated algorithms at line rate even when ``library`` is given.

    Returns
    -------
    Sweep
        One :class:`SweepRow` per (algorithm, size), a note per algorithm skipped (and why),
        and the schedule's optimum (NaN without ``schedule``).

    Raises
    ------
    ForestCollError
        An unknown model or algorithm, a chunk <= 0, or a ``schedule`` of another collective.
    Cancelled
        ``cancel`` was set.

    Examples
    --------
    >>> from solver.io.templates import ring
    >>> from solver.simulate import sweep
    >>> result = sweep(ring(4), algorithms=["ring"], sizes=[2**20])
    >>> [(row.algorithm, row.size) for row in result.rows]
    [('ring', 1048576)]
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
        topo,
        collective,
        int(chunk),
        float(latency_us),
        opt,
        min_chunks=min_chunks,
        library=library,
        line_rate=line_rate,
    )
    for name, why in skipped.items():
        result.notes[name] = (f"skipped: {why}",)
    n = len(topo.compute_ids)
    factor = busbw_factor(collective, n)
    with_library = LIBRARY in algorithms
    with_nvls = NVLS in algorithms and any(n.capabilities for n in topo.nodes)
    total = max(1, (len(built) + with_nvls + with_library) * len(sizes))
    done = 0
    link_topo = _library.derated(topo, library) if library is not None and not line_rate else topo
    if with_library:
        # no forward-only schedule beats the optimum of the links it runs on: at line rate the
        # schedule's own optimum, on derated links that of the derated fabric
        cap = (
            opt
            if link_topo is topo or math.isnan(opt)
            else forward_only_bound(link_topo, collective)
        )
        done = _library_rows(result, sizes, factor, opt, cap)
        if progress is not None:
            progress("library model", done / total)
    if with_nvls:
        done = _nvls_rows(
            result,
            sizes,
            factor,
            link_topo,
            library,
            line_rate,
            model,
            cancel,
            progress,
            done,
            total,
        )
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


def _nvls_rows(
    sw: Sweep,
    sizes: list[int],
    factor: float,
    link_topo: Topology,
    library: _library.Library | None,
    line_rate: bool,
    model: str,
    cancel,
    progress,
    done: int,
    total: int,
) -> int:
    """Append the ``forestcoll-nvls`` rows (:mod:`.hierarchical_nvls`) when the hierarchical
    schedule applies, else a ``skipped`` note; returns ``done`` counted on."""
    from solver.algorithm.capability_bounds import capability_bounds
    from solver.simulate.hierarchical_nvls import NvlsModel, why_not

    topo = sw.topology
    try:
        why = why_not(topo, sw.collective)
        if not why:
            lib = library or _library.library_for(topo)
            nvls = NvlsModel(
                topo, link_topo, lib.generation, line_rate or library is None, sw.latency_us
            )
            bounds = capability_bounds(topo, "allreduce")
            cap = float(bounds.capability)
            nvls.forward_only = bounds.forward_only
    except Cancelled:
        raise
    except ForestCollError as exc:  # over a cost limit, an index fabric the solver refuses
        why = f"no hierarchical NVLS schedule: {exc}"
    if why:
        sw.notes[NVLS] = (f"skipped: {why}",)
        return done + len(sizes)  # counted as done: the progress still ends at 100 %
    for size in sizes:
        if _cancelled(cancel):
            raise Cancelled("cancelled")
        t0 = time.perf_counter()
        run = nvls.run(size, sw.chunk, sw.min_chunks, model, _cancel_fn(cancel))
        algbw = size / run.time / 1e9
        sw.rows.append(
            SweepRow(
                algorithm=NVLS,
                collective=sw.collective,
                size=size,
                time=run.time,
                algbw=algbw,
                busbw=algbw * factor,
                bound_time=size / (cap * 1e9),
                route_bound_time=float("nan"),
                estimate_time=run.time,
                max_busy=float("nan"),
                events=0,
                wall=time.perf_counter() - t0,
                choice="NVLS domain" if run.domain >= run.between else "between domains",
                model="nvls",
            )
        )
        done += 1
        if progress is not None:
            progress(f"simulate {NVLS}", done / total)
    sw.notes[NVLS] = nvls.notes()
    return done


def _library_rows(sw: Sweep, sizes: list[int], factor: float, opt: float, cap: float) -> int:
    """Append the ``nccl`` rows (the library tuner's pick and time per size, forward-only
    choices at most ``cap`` GB/s); returns the count."""
    tuner = _library.tuner(
        sw.topology, sw.collective, sw.library, bound_algbw=None if math.isnan(cap) else cap
    )
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
