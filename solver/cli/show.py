"""``forestcoll show``: summarise a results file (fabric, schedules, result tables)."""

from __future__ import annotations

import argparse

from solver.model.errors import ForestCollError
from solver.cli._common import add_command


def register(subparsers) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        "show",
        "summarise a results file (.h5)",
        "Summarise an HDF5 results file: its schema version and creator, the fabric, every stored\n"
        "schedule (collective, k, algbw and the exact optimum, number of trees) and every result\n"
        "table (source, algorithm, sizes, how many rows are measured). --trees NAME lists the\n"
        "trees of one schedule (root, multiplicity, weight, height, edges).",
        "forestcoll show results.h5 --trees allgather_k1",
    )
    parser.add_argument("results", metavar="RESULTS.h5", help="results file")
    parser.add_argument("--trees", metavar="NAME", help="also list the trees of this schedule")
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    from solver.io.results_h5 import read_schedules, summarize

    print(summarize(args.results))
    if args.trees:
        schedules = read_schedules(args.results)
        if args.trees not in schedules:
            raise ForestCollError(
                f"{args.results}: no schedule {args.trees!r} (it has: {', '.join(schedules) or 'none'})"
            )
        s = schedules[args.trees]
        print(f"trees of {args.trees}:")
        for phase, t in s.all_trees():
            edges = " ".join(f"{e.src}->{e.dst}" for e in t.edges)
            label = f"[{phase}] " if s.phases else ""
            print(
                f"  {label}root {t.root} x{t.multiplicity} weight {t.weight} height {t.height}: {edges}"
            )
    return 0
