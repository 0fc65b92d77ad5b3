"""1 -> N core speedup of ``solve`` and ``verify_schedule``, phase by phase, as a table.

Each fabric runs in fresh child processes of ``benchmarks/solve.py`` (one to fill the JIT cache,
then one per worker count, alternating ``--rounds`` times; the best warm solve of each count is
kept). Workers are threads for the independent max-flows (one per orbit of sinks in the optimum,
the spare-capacity trim and the splitting invariant; the Dinic kernel releases the GIL) and
forked processes for verification of schedules with >= 1M tree edges. Plan splitting, orbit
packing and routing run in one Python thread whatever the count.

Usage::

    python benchmarks/speedup.py                          # 128x H100 rail and the 1024-GPU fat tree
    python benchmarks/speedup.py --only fattree4096 --workers 1,2 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from solve import LARGE, PHASES, fmt, run_child


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        default="128xH100rail,fattree1024",
        help="comma-separated fabric names of benchmarks/solve.py --large",
    )
    parser.add_argument("--workers", default="1,2", help="worker counts to compare, e.g. 1,2")
    parser.add_argument(
        "--rounds", type=int, default=2, help="alternating runs per worker count (best kept)"
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per child")
    args = parser.parse_args(argv)
    names = args.only.split(",")
    unknown = [n for n in names if n not in LARGE]
    if unknown:
        parser.error(f"unknown fabric {unknown[0]} (choose from {', '.join(LARGE)})")
    counts = [int(c) for c in args.workers.split(",")]
    if not counts or min(counts) < 1:
        parser.error("--workers needs positive counts, e.g. 1,2")
    print(f"{os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f} at start")
    header = "| fabric | phase | " + " | ".join(f"{c} worker{'s' * (c > 1)}" for c in counts)
    header += " | speedup |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name in names:
        best: dict[int, dict] = {}
        with tempfile.TemporaryDirectory(prefix="fc-numba-cache-") as cache:
            child = argparse.Namespace(
                collective="allgather",
                max_trees_per_root=None,
                timeout=args.timeout,
                workers=counts[0],
            )
            warmup = run_child(name, child, cache, repeat=0)
            if "error" in warmup:
                print(f"| {name} | error: {warmup['error']} |")
                continue
            for _ in range(args.rounds):
                for c in counts:
                    child.workers = c
                    got = run_child(name, child, cache, repeat=1)
                    if "error" in got:
                        print(f"| {name} | error: {got['error']} |")
                        return 1
                    if c not in best or got["warm"] < best[c]["warm"]:
                        best[c] = got
        rows = [(p, {c: best[c]["phases"].get(p) for c in counts}) for p in PHASES]
        rows.append(("solve total", {c: best[c]["warm"] for c in counts}))
        rows.append(("verify", {c: best[c]["verify"] for c in counts}))
        rows.append(("solve + verify", {c: best[c]["warm"] + best[c]["verify"] for c in counts}))
        for phase, values in rows:
            first, last = values[counts[0]], values[counts[-1]]
            ratio = f"{first / last:.2f}×" if first and last else "-"
            print(
                f"| {name} | {phase} | "
                + " | ".join(fmt(values[c]) for c in counts)
                + f" | {ratio} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
