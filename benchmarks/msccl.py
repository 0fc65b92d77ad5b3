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
from solver.msccl import MscclError, build_program, check_file, check_xml, export_xml, to_xml  # noqa: E402
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
    print(f"{'fabric':<9} {'collective':<15} {'runtime':<15} {'KB':>6} {'tbs':>4} {'steps':>6} "
          f"{'export s':>9} {'check s':>8}")
    for fab in fabrics:
        topo = FABRICS[fab]()
        for coll in COLLECTIVES:
            schedule = solve(topo, collective=coll, max_trees_per_root=1)
            for rt in RUNTIMES:
                t_export, text = best(partial(export_xml, schedule, rt, check=False), repeat)
                t_check, report = best(partial(check_xml, text, rt), repeat)
                print(f"{fab:<9} {coll:<15} {rt:<15} {len(text) / 1024:>6.0f} "
                      f"{report.threadblocks:>4} {report.max_steps:>6} {t_export:>9.3f} {t_check:>8.3f}")


def real(repeat: int) -> None:
    print()
    print(f"{'RCCL file':<38} {'collective':<11} {'ranks':>5} {'steps':>6} {'verdict':<14} {'check s':>8}")
    for path in sorted((ROOT / "tests" / "data" / "real" / "msccl").glob("*.xml")):
        try:
            t, report = best(partial(check_file, path, "rccl"), repeat)
            verdict = f"ok, {len(report.notes)} warn" if report.notes else "ok"
            coll, ranks, steps = report.collective, report.ngpus, report.steps_executed
        except MscclError as exc:
            t, verdict, coll, ranks, steps = float("nan"), "FAIL", "?", 0, 0
            print(f"  {exc}", file=sys.stderr)
        print(f"{path.name:<38} {coll:<11} {ranks:>5} {steps:>6} {verdict:<14} {t:>8.2f}")


def rail(boxes: list[int]) -> None:
    import resource

    print()
    print(f"{'fabric':<10} {'collective':<15} {'runtime':<15} {'MB':>5} {'tbs':>6} {'steps':>7} "
          f"{'scan s':>7} {'check s':>8} {'peak MB':>8}  result")
    for n in boxes:
        topo = T.dgx_h100_rail(n)
        for coll in COLLECTIVES:
            schedule = solve(topo, collective=coll, max_trees_per_root=1)
            for rt in RUNTIMES:
                name = f"{n}xh100"
                try:
                    program = build_program(schedule, rt)
                except MscclError as exc:
                    print(f"{name:<10} {coll:<15} {rt:<15} {'-':>5} {'-':>6} {'-':>7} {'-':>7} "
                          f"{'-':>8} {'-':>8}  refused: {str(exc)[:90]}")
                    continue
                text = to_xml(program)
                t_scan, _ = best(partial(scan, text), 1)
                before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                try:
                    t_check, report = best(partial(check_xml, text, rt), 1)
                    result = "ok"
                except MscclError as exc:
                    t_check, result = float("nan"), f"refused: {str(exc)[:90]}"
                grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
                tbs = sum(len(g.tbs) for g in program.gpus)
                print(f"{name:<10} {coll:<15} {rt:<15} {len(text) / 2**20:>5.1f} {tbs:>6} "
                      f"{program.num_steps():>7} {t_scan:>7.2f} {t_check:>8.2f} {grown:>8.0f}  {result}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fabrics", default="2xa100,2xmi250")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-real", action="store_true", help="skip the RCCL files")
    ap.add_argument("--rail-boxes", default="", help="e.g. 16,128: DGX H100 rail fabrics to check")
    args = ap.parse_args()
    ours([f for f in args.fabrics.split(",") if f], args.repeat)
    if not args.no_real:
        real(max(1, args.repeat // 3))
    if args.rail_boxes:
        rail([int(b) for b in args.rail_boxes.split(",") if b])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
