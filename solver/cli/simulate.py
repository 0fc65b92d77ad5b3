"""``forestcoll simulate TOPO``: simulate ForestColl and baselines over a range of message sizes."""

from __future__ import annotations

import os
import signal
import sys

from solver.cli._common import ProgressBar, add_command, add_fabric_options, load_fabric
from solver.io import strict_json
from solver.model.errors import ForestCollError, SolverError
from solver.model.units import format_size

COLLECTIVES = ("allgather", "reduce-scatter", "allreduce")


def register(subparsers):
    p = add_command(
        subparsers,
        "simulate",
        "simulate ForestColl and baselines (ring, tree, direct, blink) on a fabric",
        "Solve the fabric with ForestColl, build the baselines on the same fabric and run them all\n"
        "through a chunk-level discrete-event simulator (hop = latency + chunk/bandwidth, switches\n"
        "cut through, compute nodes store and forward, links shared chunk by chunk in proportion to\n"
        "each tree's weight). Prints, per size and algorithm: simulated time, algbw and busbw\n"
        "(nccl-tests formulas), the ratio to the bound M/optimal_algbw and an alpha-aware estimate.\n"
        "Algorithms: forestcoll, nccl (what NCCL/RCCL would pick and reach: their tuner's model,\n"
        "calibrated on real nccl-tests/rccl-tests logs), ring (NCCL-style multi-channel rings),\n"
        "ring1 (one ring), tree (double binary tree, allreduce only), direct (everyone to\n"
        "everyone), blink (one greedy spanning tree per root).\n"
        "Links run at the efficiency the library reaches (NVLink ~82 %, network ~91 %) for every\n"
        "algorithm, ForestColl included; --line-rate simulates at nominal bandwidth.\n"
        "TOPO may be a results .h5 that holds a schedule: it is simulated without solving again.",
        "forestcoll simulate sample_topologies/mi250_2x.json --sizes 1M:4G:4 --algorithms forestcoll,ring",
    )
    _add_run_arguments(p)
    _add_output_arguments(p)
    p.set_defaults(func=run)
    return p


def _add_run_arguments(p) -> None:
    """What to simulate: the fabric, the collective, the algorithms, sizes and chunking."""
    from solver.simulate import (
        ALGORITHMS,
        DEFAULT_CHUNK,
        DEFAULT_LATENCY_US,
        DEFAULT_MIN_CHUNKS,
        DEFAULT_SIZES,
    )

    p.add_argument(
        "topology",
        metavar="TOPO",
        help="fabric file (.json, .graphml, NCCL .xml ...) or a results .h5 holding a schedule",
    )
    add_fabric_options(p)
    p.add_argument(
        "--collective",
        "-c",
        choices=COLLECTIVES,
        default="allgather",
        help="collective to simulate (default allgather)",
    )
    p.add_argument(
        "--algorithms",
        "-a",
        default=",".join(ALGORITHMS),
        help=f"comma list among {','.join(ALGORITHMS)} (default: all)",
    )
    p.add_argument(
        "--sizes",
        "-s",
        default=DEFAULT_SIZES,
        help="message sizes: MIN:MAX[:FACTOR] (factor 2 by default) or a comma list, "
        f"units K/M/G (binary) (default {DEFAULT_SIZES})",
    )
    p.add_argument(
        "--chunk",
        default=format_size(DEFAULT_CHUNK),
        help=f"chunk size for pipelining (default {format_size(DEFAULT_CHUNK)})",
    )
    p.add_argument(
        "--min-chunks",
        type=int,
        default=DEFAULT_MIN_CHUNKS,
        metavar="N",
        help="cut every flow into at least N slices of >= 4 KiB when it is big enough "
        f"(pipelining of mid-size messages; default {DEFAULT_MIN_CHUNKS}, 1 = off)",
    )
    p.add_argument(
        "--latency",
        type=float,
        default=DEFAULT_LATENCY_US,
        metavar="US",
        help=f"per-hop latency in microseconds for links without one "
        f"(default {DEFAULT_LATENCY_US:g})",
    )
    p.add_argument(
        "--max-trees-per-root",
        "-k",
        type=int,
        default=None,
        metavar="K",
        help="simulate the ForestColl schedule with at most K trees per root",
    )


def _add_output_arguments(p) -> None:
    """Options of the model (library, chunk or flow level) and of what is printed or stored."""
    p.add_argument(
        "--links",
        type=int,
        default=0,
        metavar="N",
        help="also show each algorithm's N busiest links (busy fraction) at the largest "
        "size; with --json every row gets the busy fraction of every used link",
    )
    p.add_argument(
        "--library",
        metavar="LIB",
        help="library of the nccl baseline and of the link efficiencies: nccl:GEN[:nvls] or "
        "rccl:GEN (GEN volta/ampere/hopper/blackwell/cdna2/cdna3/cdna4; default from the "
        "fabric's template, else nccl:ampere), then the run's settings if any: algo=ring+tree "
        "(NCCL_ALGO), proto=simple (NCCL_PROTO), buffsize=8M (NCCL_BUFFSIZE), allreduce=tree "
        "(a tuner plugin's pick), channels=2 (NCCL_MAX_NCHANNELS), minchannels=8 "
        "(NCCL_MIN_NCHANNELS), net=tcpx (GPUDirect-TCPX, no GPUDirect RDMA), host=arm (Grace "
        "hosts: no NVLSTree size correction on Blackwell), e.g. GCP A3 Mega: "
        "nccl:hopper:algo=ring+tree:proto=simple:buffsize=8M:allreduce=tree; A3 High: "
        "nccl:hopper:algo=ring:proto=simple:buffsize=8M:channels=8:minchannels=8:net=tcpx",
    )
    p.add_argument(
        "--model",
        choices=("auto", "chunk", "flow"),
        default="auto",
        help="chunk: discrete events per chunk; flow: max-min fair rates per tree (fast at any "
        "scale); auto (default): chunk-level while it fits in 4 M chunk transmissions, else flow",
    )
    p.add_argument(
        "--line-rate",
        action="store_true",
        help="simulate at the links' nominal bandwidth (no library efficiency)",
    )
    p.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    p.add_argument(
        "-o",
        "--output",
        metavar="RESULTS.h5",
        help="also store the schedule and the simulated tables in an HDF5 results file",
    )


def run(args) -> int:
    from solver.simulate.library import library_for, parse_library

    topo, stored = _fabric_and_schedule(args)
    library = parse_library(args.library) if args.library else library_for(topo)
    algorithms, sizes, chunk = _checked_options(args)
    schedule, sw = _simulate(args, topo, stored, library, algorithms, sizes, chunk)
    if args.output:
        _write_results(args.output, schedule, sw)
    pairs = list(topo.directed_bandwidths())
    if args.json:
        _print_json(topo, schedule, sw, pairs)
        return 0
    _print_table(args, topo, schedule, sw, sizes)
    if args.links > 0:
        _print_busiest_links(sw, max(sizes), args.links, pairs)
    if args.output:
        sys.stdout.write(f"wrote {args.output}\n")
    return 0


def _checked_options(args):
    """(algorithms, sizes, chunk) from the arguments; one-line errors for bad values."""
    from solver.simulate import parse_size, parse_sizes

    algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    if not algorithms:
        raise ForestCollError("--algorithms is empty")
    sizes = parse_sizes(args.sizes)
    chunk = parse_size(args.chunk)
    if args.links < 0:
        raise ForestCollError(f"--links must be >= 0, got {args.links}")
    if args.min_chunks < 1:
        raise ForestCollError(f"--min-chunks must be >= 1, got {args.min_chunks}")
    if args.latency < 0:
        raise ForestCollError(f"--latency must be >= 0, got {args.latency:g}")
    if args.max_trees_per_root is not None and args.max_trees_per_root < 1:
        raise ForestCollError("--max-trees-per-root must be >= 1")
    return algorithms, sizes, chunk


def _simulate(args, topo, stored, library, algorithms, sizes, chunk):
    """Solve (unless the schedule was stored) and run the sweep, with a progress bar and Ctrl-C.
    Returns (schedule or None, sweep)."""
    from solver.algorithm.pipeline import solve
    from solver.simulate import sweep

    bar = ProgressBar()
    try:
        try:
            schedule = stored or solve(topo, args.collective, args.max_trees_per_root, progress=bar)
        except SolverError as exc:
            if "forestcoll" in algorithms or args.output:
                raise
            print(
                f"warning: no ForestColl bound ({exc}); simulating baselines only", file=sys.stderr
            )
            schedule = None
        with _Interrupt() as interrupted:
            sw = sweep(
                topo,
                args.collective,
                algorithms,
                sizes,
                chunk,
                args.latency,
                schedule,
                progress=bar,
                cancel=interrupted,
                min_chunks=args.min_chunks,
                keep_link_busy=args.links > 0,
                library=library,
                model=args.model,
                line_rate=args.line_rate,
            )
    finally:
        bar.close()
    return schedule, sw


def _write_results(path: str, schedule, sw) -> None:
    if not path.endswith((".h5", ".hdf5")):
        raise ForestCollError(f"{path}: results files end in .h5")
    from solver.io.hdf5 import results as h5
    from solver.simulate import result_tables
    from solver.simulate.estimate import model_tables

    name = h5.write_schedule(path, schedule, tables=model_tables)
    for tname, table in result_tables(sw, name).items():
        h5.write_results(path, tname, table)


def _print_json(topo, schedule, sw, pairs) -> None:
    doc = {
        "topology": topo.name,
        "collective": sw.collective,
        "num_compute_nodes": len(topo.compute_ids),
        "optimal_algbw": sw.optimal_algbw,
        "schedule_algbw": schedule.algbw if schedule is not None else None,
        "chunk": sw.chunk,
        "min_chunks": sw.min_chunks,
        "default_latency_us": sw.latency_us,
        "notes": {k: list(v) for k, v in sw.notes.items()},
        "library": None if sw.library is None else sw.library.__dict__,
        "in_switch_reduction": sw.in_switch_note(),
        "rows": [_row_json(r, sw, pairs) for r in sw.rows],
    }
    strict_json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")


def _print_table(args, topo, schedule, sw, sizes) -> None:
    """The header lines, one row per (size, algorithm), and the notes under the table."""
    out = sys.stdout
    from solver.simulate.library import library_reason

    out.write(
        f"{topo.name}: {sw.collective}, {len(topo.compute_ids)} compute nodes, optimum "
        f"{sw.optimal_algbw:.3f} GB/s "
        + (
            f"(schedule {schedule.algbw:.3f} GB/s, k={schedule.k}), "
            if schedule
            else "(no schedule), "
        )
        + f"chunk {format_size(sw.chunk)} (>= {sw.min_chunks} slices per flow), "
        f"default hop latency {sw.latency_us:g} us\n"
    )
    raised = sorted({(r.size, r.chunk) for r in sw.rows if r.chunk > sw.chunk})
    if raised:
        out.write(
            "  chunk raised to keep the run small: "
            + ", ".join(f"{format_size(sz)}: {format_size(int(c))}" for sz, c in raised[:6])
            + (" ..." if len(raised) > 6 else "")
            + "\n"
        )
    for name, notes in sw.notes.items():
        if notes:
            out.write(f"  {name}: {'; '.join(notes)}\n")
    width = max([10] + [len(r.algorithm) for r in sw.rows])
    out.write(
        f"{'size':>6} {'algorithm':<{width}} {'time(us)':>11} {'algbw':>8} {'busbw':>8} "
        f"{'%bound':>7} {'est.algbw':>9} {'linkbusy':>8}  choice\n"
    )
    by_size: dict[int, list] = {}
    for r in sw.rows:
        by_size.setdefault(r.size, []).append(r)
    for size in sizes:
        for r in by_size.get(size, []):
            pct = 100 * r.ratio_to_bound if r.bound_time == r.bound_time else float("nan")
            out.write(
                f"{format_size(size):>6} {r.algorithm:<{width}} {r.time * 1e6:>11.2f} "
                f"{r.algbw:>8.2f} "
                f"{r.busbw:>8.2f} {pct:>6.1f}% {size / r.estimate_time / 1e9:>9.2f} "
                f"{r.max_busy:>8.2f}  {r.choice or ('flow-level' if r.model == 'flow' else '')}\n"
            )
    out.write(
        f"bound algbw = {sw.optimal_algbw:.3f} GB/s at every size, at line rate, for algorithms "
        "whose switches only forward\n"
    )
    nvls = sw.table("forestcoll-nvls")
    if nvls:
        out.write(
            f"forestcoll-nvls: %bound of the capability optimum "
            f"{nvls[0].size / nvls[0].bound_time / 1e9:.3f} GB/s (in-switch reduction and "
            "multicast; docs/bounds.md)\n"
        )
    note = sw.in_switch_note()
    if note:
        out.write(f"note: {note}\n")
    if sw.library is not None:
        lib = sw.library
        why = "--library" if args.library else library_reason(topo)
        out.write(f"library: {lib.label} ({why})\n")
        if sw.line_rate:
            out.write(
                "links at line rate (--line-rate); the library row keeps its own efficiency\n"
            )
        else:
            out.write(
                f"links at the efficiency {lib.name} reaches on them ({lib.generation}); "
                "--line-rate for nominal bandwidth\n"
            )


def _print_busiest_links(sw, size: int, count: int, pairs) -> None:
    """Each algorithm's ``count`` busiest links at ``size``."""
    for name in dict.fromkeys(r.algorithm for r in sw.rows):
        busy = sw.link_busy.get((name, size))
        if busy is None:
            continue
        top = sorted(range(len(busy)), key=lambda i: (-busy[i], i))[:count]
        cells = ", ".join(f"{pairs[i][0]}->{pairs[i][1]} {busy[i]:.2f}" for i in top)
        sys.stdout.write(f"busiest links, {name} at {format_size(size)}: {cells}\n")


class _Interrupt:
    """Ctrl-C while a simulation kernel runs. The kernel holds no GIL, and a KeyboardInterrupt
    raised inside numba's call machinery crashes it; so SIGINT gets a handler that only records
    it, and the C signal handler's write to a wake-up pipe is what this callable (polled by the
    simulator's watcher thread) reads: the kernel stops within ~10 ms, ``simulate`` exits 130."""

    def __enter__(self) -> _Interrupt:
        self._hit = False
        self._old = self._old_handler = None
        self._r = self._w = -1
        try:
            self._r, self._w = os.pipe()
            os.set_blocking(self._r, False)
            os.set_blocking(self._w, False)
            self._old = signal.set_wakeup_fd(self._w)
            self._old_handler = signal.signal(signal.SIGINT, self._record)
        except (ValueError, OSError):  # not the main thread: Ctrl-C then waits for the kernel
            if self._old is not None:
                signal.set_wakeup_fd(self._old)
                self._old = None
            self._close()
        return self

    def _record(self, signum, frame) -> None:
        self._hit = True

    def __call__(self) -> bool:
        if not self._hit and self._r >= 0:
            try:
                self._hit = bool(os.read(self._r, 64))
            except BlockingIOError:
                pass
        return self._hit

    def __exit__(self, *exc) -> None:
        if self._old_handler is not None:
            signal.signal(signal.SIGINT, self._old_handler)
        if self._old is not None:
            signal.set_wakeup_fd(self._old)
        self._close()

    def _close(self) -> None:
        for fd in (self._r, self._w):
            if fd >= 0:
                os.close(fd)
        self._r = self._w = -1


def _fabric_and_schedule(args):
    """The fabric of ``args.topology``, and the stored schedule when it is a results .h5 file."""
    if not str(args.topology).endswith((".h5", ".hdf5")):
        return load_fabric(args.topology, args), None
    from solver.algorithm.verify_stored import verify_stored
    from solver.io.hdf5 import results as h5

    topo = h5.read_topology(args.topology)
    for name, s in h5.read_schedules(args.topology).items():
        if s.collective == args.collective and s.max_trees_per_root == args.max_trees_per_root:
            verify_stored(s, args.topology, name)
            return topo, s
    raise ForestCollError(
        f"{args.topology} holds no {args.collective} schedule"
        + (f" with K={args.max_trees_per_root}" if args.max_trees_per_root else "")
        + "; solve it first (forestcoll solve ... -o FILE.h5) or pass the fabric file"
    )


def _row_json(row, sw, pairs) -> dict:
    d = row.to_dict()
    busy = sw.link_busy.get((row.algorithm, row.size))
    if busy is not None:
        d["link_busy"] = [
            {"source": pairs[i][0], "target": pairs[i][1], "busy": float(b)}
            for i, b in enumerate(busy)
            if b > 0
        ]
    return d
