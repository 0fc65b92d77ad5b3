"""MSCCL export and check-xml speed: our exports on template fabrics, and the XMLs RCCL ships.

Usage: python benchmarks/msccl.py [--fabrics 2xa100,2xmi250] [--repeat 3] [--no-real]
                                 [--rail-boxes 16,128]

Part 1, one row per (fabric, collective, runtime): the schedule (k = 1, solved once, not timed),
the XML's size, threadblocks and steps per rank, and the best of ``--repeat`` wall times to build the
program (export without check) and to check it (parse, rules, execution, result).
Part 2, one row per file of tests/data/real/msccl/: collective, ranks, steps, the check-xml
verdict (ok / warnings) and its wall time with ``--runtime rccl``.
Part 3 (``--rail-boxes``), one row per (boxes of DGX H100 rail, collective, runtime): the reader
scan, the check (rules, both modes executed, result) and the process's peak memory growth, or the
one-line refusal (before the program is built) for sizes past the checker's limits.
Part 4 (``--scale``), one row per case, each in a child process (its own peak RSS): fabric,
GPUs, collective, runtime, steps, threadblocks (all ranks), XML size, solve s, generate s (shaping
included when the runtime needs it), check s (parse, rules, execution, result) - wall and CPU -, peak RSS, and for
shaped schedules the exact algbw against the unshaped one. Cases: ``rail16``/``rail128``
(16x / 128x DGX H100 rail), ``mi300x16``/``mi300x128`` (MI300X-like: 8 GPUs per box fully
connected by 64 GB/s xGMI links, a 50 GB/s NIC per GPU on rail switch j), with ``:collective:runtime``,
e.g. ``--scale rail128:allgather:msccl-executor,rail128:allgather:rccl``.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver import solve  # noqa: E402
from solver.io import templates as T  # noqa: E402
from solver.msccl import (  # noqa: E402
    ExportOptions,
    MscclError,
    build_program,
    check_file,
    check_xml,
    export_xml,
    runtime_named,
    to_xml,
)
from solver.msccl.reader import scan  # noqa: E402

FABRICS = {
    "2xa100": lambda: T.dgx_a100(2),
    "4xa100": lambda: T.dgx_a100(4),
    "2xmi250": lambda: T.mi250(2),
    "2xh100": lambda: T.dgx_h100_rail(2),
}
COLLECTIVES = ("allgather", "reduce-scatter", "allreduce")
RUNTIMES = ("msccl-executor", "rccl")


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def ours(fabrics: list[str], repeat: int) -> None:
    print(
        f"{'fabric':<9} {'collective':<15} {'runtime':<15} {'KB':>6} {'tbs':>4} {'steps':>6} "
        f"{'export s':>9} {'check s':>8}"
    )
    for fab in fabrics:
        topo = FABRICS[fab]()
        for coll in COLLECTIVES:
            schedule = solve(topo, collective=coll, max_trees_per_root=1)
            for rt in RUNTIMES:
                runtime = runtime_named(rt)
                t_export, text = best(
                    partial(export_xml, schedule, ExportOptions(runtime), check=False), repeat
                )
                t_check, report = best(partial(check_xml, text, runtime), repeat)
                print(
                    f"{fab:<9} {coll:<15} {rt:<15} {len(text) / 1024:>6.0f} "
                    f"{report.threadblocks:>4} {report.max_steps:>6} {t_export:>9.3f} {t_check:>8.3f}"
                )


def real(repeat: int) -> None:
    print()
    print(
        f"{'RCCL file':<38} {'collective':<11} {'ranks':>5} {'steps':>6} {'verdict':<14} {'check s':>8}"
    )
    for path in sorted((ROOT / "tests" / "data" / "real" / "msccl").glob("*.xml")):
        try:
            t, report = best(partial(check_file, path, runtime_named("rccl")), repeat)
            verdict = f"ok, {len(report.notes)} warn" if report.notes else "ok"
            coll, ranks, steps = report.collective, report.ngpus, report.steps_executed
        except MscclError as exc:
            t, verdict, coll, ranks, steps = float("nan"), "FAIL", "?", 0, 0
            print(f"  {exc}", file=sys.stderr)
        print(f"{path.name:<38} {coll:<11} {ranks:>5} {steps:>6} {verdict:<14} {t:>8.2f}")


def rail(boxes: list[int]) -> None:
    import resource

    print()
    print(
        f"{'fabric':<10} {'collective':<15} {'runtime':<15} {'MB':>5} {'tbs':>6} {'steps':>7} "
        f"{'scan s':>7} {'check s':>8} {'peak MB':>8}  result"
    )
    for n in boxes:
        topo = T.dgx_h100_rail(n)
        for coll in COLLECTIVES:
            schedule = solve(topo, collective=coll, max_trees_per_root=1)
            for rt in RUNTIMES:
                name = f"{n}xh100"
                runtime = runtime_named(rt)
                try:
                    program = build_program(schedule, ExportOptions(runtime))
                except MscclError as exc:
                    print(
                        f"{name:<10} {coll:<15} {rt:<15} {'-':>5} {'-':>6} {'-':>7} {'-':>7} "
                        f"{'-':>8} {'-':>8}  refused: {str(exc)[:90]}"
                    )
                    continue
                text = to_xml(program)
                t_scan, _ = best(partial(scan, text), 1)
                before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                try:
                    t_check, report = best(partial(check_xml, text, runtime), 1)
                    result = "ok"
                except MscclError as exc:
                    t_check, result = float("nan"), f"refused: {str(exc)[:90]}"
                grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
                tbs = sum(len(g.tbs) for g in program.gpus)
                print(
                    f"{name:<10} {coll:<15} {rt:<15} {len(text) / 2**20:>5.1f} {tbs:>6} "
                    f"{program.num_steps():>7} {t_scan:>7.2f} {t_check:>8.2f} {grown:>8.0f}  {result}"
                )


def mi300x_rail(n: int):
    """``n`` MI300X-like boxes: 8 GPUs fully connected (64 GB/s per direction per link), GPU j's
    own NIC (50 GB/s) on rail switch j."""
    from fractions import Fraction

    from solver.model.topology import Link, Node, Topology, validate

    nodes, links = [], []
    for b in range(n):
        for j in range(8):
            nodes += [
                Node(f"b{b}.gpu{j}", "compute", "gpu", group=f"b{b}"),
                Node(f"b{b}.nic{j}", "switch", "nic", group=f"b{b}"),
            ]
            links.append(Link(f"b{b}.gpu{j}", f"b{b}.nic{j}", Fraction(50)))
            links += [Link(f"b{b}.gpu{j}", f"b{b}.gpu{i}", Fraction(64)) for i in range(j)]
    nodes += [Node(f"rail{j}", "switch", "ib", group="network") for j in range(8)]
    links += [Link(f"b{b}.nic{j}", f"rail{j}", Fraction(50)) for b in range(n) for j in range(8)]
    return validate(Topology(f"{n}x MI300X-like rail", tuple(nodes), tuple(links)))


SCALE_FABRICS = {
    "rail16": lambda: T.dgx_h100_rail(16),
    "rail128": lambda: T.dgx_h100_rail(128),
    "mi300x16": lambda: mi300x_rail(16),
    "mi300x128": lambda: mi300x_rail(128),
}


def scale_row(case: str) -> None:
    """One --scale case, run in this process; prints one tab-separated line."""
    from solver.msccl import PeersLimit, shape

    fab, coll, rt = case.split(":")
    runtime = runtime_named(rt)
    topo = SCALE_FABRICS[fab]()
    start = time.perf_counter()
    schedule = solve(topo, collective=coll, max_trees_per_root=1)
    t_solve = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    note = ""
    try:
        program = build_program(schedule, ExportOptions(runtime))
    except PeersLimit:
        partners = runtime.max_threadblocks // 8  # export's default --shape-partners
        shaped = shape(schedule, partners)
        note = (
            f"shaped P={partners}: {shaped.schedule.algbw_exact} vs {shaped.unconstrained} GB/s "
            f"({float(shaped.cost) * 100:.3g}% less)"
        )
        program = build_program(shaped.schedule, ExportOptions(runtime))
    text = to_xml(program)
    steps, tbs = program.num_steps(), sum(len(g.tbs) for g in program.gpus)
    del program
    t_gen = f"{time.perf_counter() - start:.1f} ({time.process_time() - cpu:.1f})"
    start, cpu = time.perf_counter(), time.process_time()
    check_xml(text, runtime)
    t_check = f"{time.perf_counter() - start:.1f} ({time.process_time() - cpu:.1f})"
    print(
        "\t".join(
            map(
                str,
                (
                    fab,
                    len(topo.compute_ids),
                    coll,
                    rt,
                    steps,
                    tbs,
                    f"{len(text) / 2**20:.1f}",
                    f"{t_solve:.1f}",
                    t_gen,
                    t_check,
                    note,
                ),
            )
        ),
        flush=True,
    )


def scale(cases: list[str]) -> None:
    import os
    import subprocess

    print()
    print(
        f"{'fabric':<10} {'GPUs':>5} {'collective':<15} {'runtime':<15} {'steps':>8} {'tbs':>7} "
        f"{'XML MB':>7} {'solve s':>8} {'gen s (CPU)':>13} {'check s (CPU)':>14} {'peak MB':>8}  note"
    )
    for case in cases:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--scale-row", case],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        out, err = proc.stdout.read(), proc.stderr.read()
        if status or not out.strip():
            print(f"{case}: failed: {(err.strip().splitlines() or ['?'])[-1][:150]}")
            continue
        fab, n, coll, rt, steps, tbs, mb, ts, tg, tc, note = out.strip("\n").split("\t")
        print(
            f"{fab:<10} {n:>5} {coll:<15} {rt:<15} {steps:>8} {tbs:>7} {mb:>7} {ts:>8} {tg:>13} {tc:>14} "
            f"{usage.ru_maxrss / 1024:>8.0f}  {note}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fabrics", default="2xa100,2xmi250")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-real", action="store_true", help="skip the RCCL files")
    ap.add_argument("--rail-boxes", default="", help="e.g. 16,128: DGX H100 rail fabrics to check")
    ap.add_argument("--scale", default="", help="fabric:collective:runtime cases (see part 4)")
    ap.add_argument("--scale-row", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.scale_row:
        scale_row(args.scale_row)
        return 0
    if args.scale:
        scale([c for c in args.scale.split(",") if c])
        return 0
    ours([f for f in args.fabrics.split(",") if f], args.repeat)
    if not args.no_real:
        real(max(1, args.repeat // 3))
    if args.rail_boxes:
        rail([int(b) for b in args.rail_boxes.split(",") if b])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
